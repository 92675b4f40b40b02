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
from typing import IO, cast

import trio

from belote_p2p.app.argtypes import port, positive_seconds
from belote_p2p.i18n import _, format_number, pgettext
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

from .wording import listed, variant_name

BeaconAddress = tuple[str, int]
GIVE_UP_WORDS = frozenset({"", "q", "quit", "quitter", "s", "salir"})
"""What gives up choosing a table, in any language (nothing, or quit)."""


DEFAULT_BEACON_ADDRESS: BeaconAddress = (DEFAULT_GROUP, DEFAULT_BEACON_PORT)
DEFAULT_BEACON_ADDRESSES: tuple[BeaconAddress, ...] = DEFAULT_ADDRESSES


async def send_last_beacon(beacon: Beacon, address: BeaconAddress) -> None:
    """One beacon (the table is full: ``free`` 0, so that listeners forget the table);
    a failure is ignored, as every beacon's."""
    with contextlib.suppress(OSError):
        sock = beacon_socket(address[0])
        with sock:
            await send_beacon(sock, encode_beacon(beacon), address)


def beacon_addresses(
    beacon: BeaconAddress | Sequence[BeaconAddress] | None,
) -> list[BeaconAddress]:
    """One beacon address or several (or None: none), as a list. One address is a pair of
    an IP and a port; the default, :data:`DEFAULT_BEACON_ADDRESSES`, is a tuple of them."""
    if beacon is None:
        return []
    if len(beacon) == 2 and isinstance(beacon[0], str):
        return [cast(BeaconAddress, beacon)]
    return list(cast(Sequence[BeaconAddress], beacon))


def beacon_address(text: str) -> BeaconAddress:
    """``IP[:PORT]`` (an IPv4 broadcast, multicast or unicast address, or an IPv6 multicast
    or unicast one in brackets; port 7778)."""
    host, port = parse_address(text, DEFAULT_BEACON_PORT)
    ipaddress.ip_address(host)  # ValueError if not
    return host, port


def beacon_text() -> str:
    """The default beacon addresses as a help text lists them, in the reader's language."""
    return listed([format_address(*a) for a in DEFAULT_BEACON_ADDRESSES])


def format_ads(ads: Sequence[TableAd]) -> str:
    """A numbered table of ads, one line each."""
    rows = [
        (
            "#",
            pgettext("column", "host"),
            pgettext("column", "variant"),
            pgettext("column", "target"),
            pgettext("column", "free"),
            pgettext("column", "address"),
        )
    ]
    rows += [
        (str(i), ad.beacon.name, variant_name(ad.beacon.variant), str(ad.beacon.target),
         str(ad.beacon.free), ad.address)
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
        print(_("No open table was heard on the network."), file=out)
        return None
    print(format_ads(ads), file=out, flush=True)
    while True:
        try:
            answer = ask(_("Table to join (1-{n}, Enter to give up): ").format(n=len(ads))).strip()
        except EOFError:
            return None
        if answer.lower() in GIVE_UP_WORDS:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(ads):
            return ads[int(answer) - 1]
        print(_("Answer a number from 1 to {n}.").format(n=len(ads)), file=out, flush=True)


def _tables_command(args: argparse.Namespace) -> int:
    try:
        addresses = [beacon_address(a) for a in args.beacon_address or ()]
        if args.group:  # the older option names
            port = args.port if args.port is not None else DEFAULT_BEACON_PORT
            addresses += [beacon_address(format_address(g, port)) for g in args.group]
    except ValueError as exc:
        print(
            "belote-p2p tables: " + _("not an IP[:PORT] to listen on: {error}").format(error=exc),
            file=sys.stderr,
        )
        return 2
    if not addresses:
        port = args.port if args.port is not None else DEFAULT_BEACON_PORT
        addresses = [(group, port) for group, _ in DEFAULT_BEACON_ADDRESSES]
    listen = args.seconds if args.seconds is not None else args.listen
    if not all(0 < port < 65536 for _, port in addresses) or listen <= 0:
        print(
            "belote-p2p tables: " + _("the port is 1..65535 and --listen positive"),
            file=sys.stderr,
        )
        return 2
    shown = ", ".join(format_address(*a) for a in addresses)
    try:
        ads = trio.run(_discover_for, addresses, listen)
    except OSError as exc:
        print(
            "belote-p2p tables: "
            + _("cannot listen on {addresses}: {error}").format(
                addresses=shown, error=exc.strerror or exc
            ),
            file=sys.stderr,
        )
        return 2
    if not ads:
        print(
            _("No open table heard on {addresses} in {seconds} s.").format(
                addresses=shown, seconds=format_number(listen, 3, trailing_zeros=False)
            )
        )
        return 1
    print(format_ads(ads))
    return 0


async def _discover_for(addresses: Sequence[tuple[str, int]], duration: float) -> list[TableAd]:
    return await discover_all(addresses, duration=duration)


def listen_help() -> str:
    """The help of ``--listen``, the option ``tables`` shares with ``join``."""
    return _("seconds to listen for tables ({seconds})").format(seconds=f"{DEFAULT_LISTEN:g}")


def beacon_listen_help() -> str:
    """The help of ``--beacon-address`` where tables are listened for (``tables``, ``join``)."""
    return _("where to listen for tables; may be repeated ({addresses})").format(
        addresses=beacon_text()
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tables",
        help=_("list the open tables on the local network"),
        description=_(
            "Listen for the beacons that hosts with free seats send on the local network "
            "and list their tables (host, variant, free seats, lobby address). By default "
            "beacons are UDP broadcasts to {group} and IPv6 link-local multicasts to "
            "{ipv6}, port {port} (and to this machine itself); give --beacon-address "
            "{multicast} (or another) where the hosts use an IPv4 multicast group. Exit "
            "status 0 if a table was heard, 1 if none, 2 on a usage or socket error."
        ).format(
            group=DEFAULT_GROUP, ipv6=IPV6_GROUP, port=DEFAULT_BEACON_PORT,
            multicast=MULTICAST_GROUP,
        ),
    )  # fmt: skip
    # The same option names as ``join`` (which lists the same tables to choose from).
    p.add_argument(
        "--listen", type=positive_seconds, default=DEFAULT_LISTEN, metavar=_("S"),
        help=listen_help(),
    )  # fmt: skip
    p.add_argument(
        "--beacon-address", action="append", metavar=_("IP[:PORT]"), help=beacon_listen_help()
    )
    # The names this command had before; kept working, no longer shown.
    p.add_argument("--seconds", type=positive_seconds, help=argparse.SUPPRESS)
    p.add_argument("--port", type=port, help=argparse.SUPPRESS)
    p.add_argument("--group", action="append", help=argparse.SUPPRESS)
    p.set_defaults(func=_tables_command)
