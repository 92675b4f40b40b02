"""The local network: ``belote-p2p tables``, the list of tables a person chooses from, and
the beacon address options of ``host`` and ``join``.

Beacons themselves (their format, sending and hearing them) are the network layer's
(:mod:`belote_p2p.net.discovery`); this module is what a person sees of them.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import sys
from collections.abc import Callable, Sequence
from typing import IO

import trio

from belote_p2p.net.address import format_address, parse_address
from belote_p2p.net.discovery import (
    DEFAULT_ADDRESSES,
    DEFAULT_BEACON_PORT,
    DEFAULT_GROUP,
    DEFAULT_LISTEN,
    IPV6_GROUP,
    MULTICAST_GROUP,
    Beacon,
    TableAd,
    beacon_socket,
    discover_all,
    encode_beacon,
    send_beacon,
)

BeaconAddress = tuple[str, int]


DEFAULT_BEACON_ADDRESS: BeaconAddress = (DEFAULT_GROUP, DEFAULT_BEACON_PORT)
DEFAULT_BEACON_ADDRESSES: tuple[BeaconAddress, ...] = DEFAULT_ADDRESSES


async def send_last_beacon(beacon: Beacon, address: BeaconAddress) -> None:
    """One beacon (the table is full: ``free`` 0, so that listeners forget the table);
    a failure is ignored, as every beacon's."""
    with contextlib.suppress(OSError):
        sock = beacon_socket(address[0])
        with sock:
            await send_beacon(sock, encode_beacon(beacon), address)


def beacon_address(text: str) -> BeaconAddress:
    """``IP[:PORT]`` (an IPv4 broadcast, multicast or unicast address, or an IPv6 multicast
    or unicast one in brackets; port 7778)."""
    host, port = parse_address(text, DEFAULT_BEACON_PORT)
    ipaddress.ip_address(host)  # ValueError if not
    return host, port


DEFAULT_BEACON_TEXT = " and ".join(format_address(*a) for a in DEFAULT_BEACON_ADDRESSES)


def format_ads(ads: Sequence[TableAd]) -> str:
    """A numbered table of ads, one line each."""
    rows = [("#", "host", "variant", "target", "free", "address")]
    rows += [
        (str(i), ad.beacon.name, ad.beacon.variant, str(ad.beacon.target), str(ad.beacon.free),
         ad.address)
        for i, ad in enumerate(ads, 1)
    ]  # fmt: skip
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def choose_table(
    ads: Sequence[TableAd],
    *,
    ask: Callable[[str], str] = input,
    out: IO[str] | None = None,
) -> TableAd | None:
    """Show ``ads`` as a numbered list and ask for one; None if there is none, or the
    person answers nothing (or ``q``, or closes the input)."""
    out = sys.stdout if out is None else out
    if not ads:
        print("No open table was heard on the network.", file=out)
        return None
    print(format_ads(ads), file=out, flush=True)
    while True:
        try:
            answer = ask(f"Table to join (1-{len(ads)}, Enter to give up): ").strip()
        except EOFError:
            return None
        if answer in ("", "q", "quit"):
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(ads):
            return ads[int(answer) - 1]
        print(f"Answer a number from 1 to {len(ads)}.", file=out, flush=True)


def _tables_command(args: argparse.Namespace) -> int:
    groups = args.group or [DEFAULT_GROUP, IPV6_GROUP]
    for group in groups:
        try:
            ipaddress.ip_address(group)
        except ValueError:
            print(f"belote-p2p tables: --group {group!r} is not an IP address", file=sys.stderr)
            return 2
    if not 0 < args.port < 65536 or args.seconds <= 0:
        print("belote-p2p tables: --port is 1..65535 and --seconds positive", file=sys.stderr)
        return 2
    addresses = [(group, args.port) for group in groups]
    shown = ", ".join(format_address(*a) for a in addresses)
    try:
        ads = trio.run(_discover_for, addresses, args.seconds)
    except OSError as exc:
        print(f"belote-p2p tables: cannot listen on {shown}: {exc}", file=sys.stderr)
        return 2
    if not ads:
        print(f"No open table heard on {shown} in {args.seconds:g} s.")
        return 1
    print(format_ads(ads))
    return 0


async def _discover_for(addresses: Sequence[tuple[str, int]], duration: float) -> list[TableAd]:
    return await discover_all(addresses, duration=duration)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tables",
        help="list the open tables on the local network",
        description="Listen for the beacons that hosts with free seats send on the local "
        f"network and list their tables (host, variant, free seats, lobby address). By default "
        f"beacons are UDP broadcasts to {DEFAULT_GROUP} and IPv6 link-local multicasts to "
        f"{IPV6_GROUP}, port {DEFAULT_BEACON_PORT}; give --group {MULTICAST_GROUP} (or "
        "another) where the hosts use an IPv4 multicast group. Exit status 0 if a table was "
        "heard, 1 if none, 2 on a usage or socket error.",
    )
    p.add_argument(
        "--seconds", type=float, default=DEFAULT_LISTEN, metavar="S",
        help=f"how long to listen ({DEFAULT_LISTEN:g})",
    )  # fmt: skip
    p.add_argument(
        "--port", type=int, default=DEFAULT_BEACON_PORT, metavar="P",
        help=f"UDP port of the beacons ({DEFAULT_BEACON_PORT})",
    )  # fmt: skip
    p.add_argument(
        "--group", action="append", metavar="G",
        help=f"broadcast, multicast or unicast address, IPv4 or IPv6; may be repeated "
        f"({DEFAULT_GROUP} and {IPV6_GROUP})",
    )  # fmt: skip
    p.set_defaults(func=_tables_command)
