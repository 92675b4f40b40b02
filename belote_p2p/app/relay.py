"""``belote-p2p relay``: a relay anyone can run on a public machine for the tables whose
peers cannot reach each other (``host --relay HOST:PORT`` names it).

It forwards frames only between seats that proved their key of a host-signed table to it
(and between a watcher and one such seat's watch feed), keeps no game state and writes
nothing to disk (:mod:`belote_p2p.protocol.relay`). It prints
what it counted (connections, pairs, bytes forwarded, what it dropped or refused) every
``--report`` seconds and when it stops.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

import trio

from belote_p2p.app.argtypes import port, positive_int, positive_number, positive_seconds
from belote_p2p.i18n import N_, _
from belote_p2p.net.address import ALL_ADDRESSES, listener_port, local_addresses, open_listeners
from belote_p2p.net.relay import RelayService
from belote_p2p.protocol.relay import DEFAULT_RELAY_PORT, RelayLimits

from .wording import error_text

STATS_PREFIX = "RELAY "
COUNT_FLAGS = (
    ("--max-tables", "max_tables", N_("tables served at once")),
    ("--max-tables-per-address", "max_tables_per_source",
     N_("tables one address (an IPv4 address, an IPv6 /64) holds connections of")),
    ("--max-connections", "max_connections",
     N_("connections open at once (when full, connections that proved no seat and tables "
        "that never paired make room first)")),
    ("--max-per-address", "max_per_source",
     N_("connections open at once from one address (an IPv4 address, an IPv6 /64)")),
    ("--max-watchers", "max_watchers_per_table",
     N_("watchers of one table at once, each served by one of its seats' feeds")),
    ("--max-watchers-per-address", "max_watchers_per_source",
     N_("watchers from one address at once")),
)  # fmt: skip
"""The relay's caps that are counts: flag, :class:`RelayLimits` field, what it caps (in
English: looked up where the help is written)."""


async def run_relay(bind: str, port: int, limits: RelayLimits, report: float) -> None:
    listeners = await open_listeners(bind, port)
    chosen = listener_port(listeners[0])
    relay = RelayService(limits)
    shown = ", ".join(f"{ip}:{chosen}" if ":" not in ip else f"[{ip}]:{chosen}"
                      for ip in local_addresses(bind))  # fmt: skip
    print(
        _("Relay listening on {addresses} (port {port})").format(addresses=shown, port=chosen),
        flush=True,
    )
    host = _("HOST")
    print(
        _("Tables use it with:  {command}").format(
            command=f"belote-p2p host --relay {host}:{chosen} ..."
        ),
        flush=True,
    )
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve, listeners)
            while True:
                await trio.sleep(report)
                print(STATS_PREFIX + json.dumps(relay.stats), flush=True)
    finally:
        print(STATS_PREFIX + json.dumps(relay.stats), flush=True)


def cmd_relay(args: argparse.Namespace) -> int:
    defaults = RelayLimits()
    try:
        limits = RelayLimits(
            **{cap: getattr(args, cap) for _, cap, _ in COUNT_FLAGS},
            max_frame=defaults.max_frame,
            rate=args.rate * 1024,
            burst=max(args.burst * 1024, defaults.max_frame + 4),
            pair_timeout=args.pair_timeout,
        )
    except ValueError as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        trio.run(run_relay, args.bind, args.port, limits, args.report)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(error_text(exc), file=sys.stderr)
        return 1
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    defaults = RelayLimits()
    p = sub.add_parser(
        "relay",
        help=_("forward the frames of tables whose peers cannot connect directly"),
        description=_(
            "Run a relay for belote-p2p tables (on a machine the players can all reach; a "
            "host names it with `host --relay HOST:PORT`). It forwards frames only between "
            "seats that prove their key of a table signed by its host (and between a watcher "
            "and one such seat's watch feed), sees nothing but signed messages and the deck "
            "protocol's ciphertexts, keeps no game state and writes nothing to disk. Stop it "
            "with Ctrl-C."
        ),
    )
    p.add_argument(
        "--port", type=port, default=DEFAULT_RELAY_PORT, metavar=_("PORT"),
        help=_("TCP port ({port}; 0: any)").format(port=DEFAULT_RELAY_PORT),
    )  # fmt: skip
    p.add_argument(
        "--bind", default=ALL_ADDRESSES, metavar=_("IP"),
        help=_("address to listen on (all addresses, IPv4 and IPv6)"),
    )  # fmt: skip
    for flag, cap, what in COUNT_FLAGS:
        default = getattr(defaults, cap)
        p.add_argument(flag, type=positive_int, default=default, metavar="N", dest=cap,
                       help=f"{_(what)} ({default})")  # fmt: skip
    p.add_argument(
        "--pair-timeout", type=positive_seconds, default=defaults.pair_timeout, metavar=_("S"),
        help=_(
            "seconds a table has from its first join to pair two of its seats, or lose its "
            "slot ({seconds})"
        ).format(seconds=f"{defaults.pair_timeout:g}"),
    )  # fmt: skip
    p.add_argument(
        "--rate", type=positive_number, default=defaults.rate / 1024, metavar=_("KIB"),
        help=_(
            "KiB per second one link (a pair of seats, both ways) may carry, sustained "
            "({kib})"
        ).format(kib=f"{defaults.rate / 1024:g}"),
    )  # fmt: skip
    p.add_argument(
        "--burst", type=positive_number, default=defaults.burst / 1024, metavar=_("KIB"),
        help=_("KiB one link may carry at once above the rate ({kib})").format(
            kib=f"{defaults.burst / 1024:g}"
        ),
    )  # fmt: skip
    p.add_argument(
        "--report", type=positive_seconds, default=600.0, metavar=_("S"),
        help=_("seconds between two lines of counts (600)"),
    )  # fmt: skip
    p.set_defaults(func=cmd_relay)
