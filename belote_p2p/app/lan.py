"""The local network: ``belote-p2p tables``, the list of tables a person chooses from, and
the beacon address options of ``host`` and ``join``.

Beacons themselves (their format, sending and hearing them) are the network layer's
(:mod:`belote_p2p.net.discovery`); this module is what a person sees of them.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import socket
import sys
from collections.abc import Callable, Sequence
from typing import IO

import trio

from belote_p2p.net.address import format_address, parse_address
from belote_p2p.net.discovery import (
    DEFAULT_BEACON_PORT,
    DEFAULT_GROUP,
    DEFAULT_LISTEN,
    MULTICAST_GROUP,
    Beacon,
    TableAd,
    discover,
    encode_beacon,
)

BeaconAddress = tuple[str, int]


DEFAULT_BEACON_ADDRESS: BeaconAddress = (DEFAULT_GROUP, DEFAULT_BEACON_PORT)


async def send_last_beacon(beacon: Beacon, address: BeaconAddress) -> None:
    """One beacon (the table is full: ``free`` 0, so that listeners forget the table);
    a failure is ignored, as every beacon's."""
    with contextlib.suppress(OSError):
        sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            await sock.sendto(encode_beacon(beacon), address)


def beacon_address(text: str) -> BeaconAddress:
    """``IP[:PORT]`` (an IPv4 broadcast, multicast or unicast address; port 7778)."""
    host, port = parse_address(text, DEFAULT_BEACON_PORT)
    ipaddress.IPv4Address(host)  # ValueError if not
    return host, port


DEFAULT_BEACON_TEXT = format_address(*DEFAULT_BEACON_ADDRESS)


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
    try:
        group, port = beacon_address(args.beacon_address)
    except ValueError:
        print(f"belote-p2p tables: --beacon-address {args.beacon_address!r} is not IP[:PORT] "
              "of IPv4", file=sys.stderr)  # fmt: skip
        return 2
    group = args.group if args.group is not None else group  # the older option names
    port = args.port if args.port is not None else port
    listen = args.seconds if args.seconds is not None else args.listen
    try:
        ipaddress.IPv4Address(group)
    except ValueError:
        print(f"belote-p2p tables: {group!r} is not an IPv4 address", file=sys.stderr)
        return 2
    if not 0 < port < 65536 or listen <= 0:
        print("belote-p2p tables: the port is 1..65535 and --listen positive", file=sys.stderr)
        return 2
    address = (group, port)
    try:
        ads = trio.run(_discover_for, address, listen)
    except OSError as exc:
        print(f"belote-p2p tables: cannot listen on {format_address(group, port)}: "
              f"{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
        return 2
    if not ads:
        print(f"No open table heard on {format_address(group, port)} in {listen:g} s.")
        return 1
    print(format_ads(ads))
    return 0


async def _discover_for(address: tuple[str, int], duration: float) -> list[TableAd]:
    return await discover(address=address, duration=duration)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tables",
        help="list the open tables on the local network",
        description="Listen for the beacons that hosts with free seats send on the local "
        f"network and list their tables (host, variant, free seats, lobby address). By default "
        f"beacons are UDP broadcasts to {DEFAULT_GROUP} port {DEFAULT_BEACON_PORT} (and to this "
        f"machine itself); give --beacon-address {MULTICAST_GROUP} (or another) where the hosts "
        "use multicast. Exit status 0 "
        "if a table was heard, 1 if none, 2 on a usage or socket error.",
    )
    # The same option names as ``join`` (which lists the same tables to choose from).
    p.add_argument(
        "--listen", type=float, default=DEFAULT_LISTEN, metavar="S",
        help=f"seconds to listen for tables ({DEFAULT_LISTEN:g})",
    )  # fmt: skip
    p.add_argument(
        "--beacon-address", default=DEFAULT_BEACON_TEXT, metavar="IP[:PORT]",
        help=f"where to listen for tables: broadcast or multicast address and UDP port "
        f"({DEFAULT_BEACON_TEXT})",
    )  # fmt: skip
    # The names this command had before; kept working, no longer shown.
    p.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--group", help=argparse.SUPPRESS)
    p.set_defaults(func=_tables_command)
