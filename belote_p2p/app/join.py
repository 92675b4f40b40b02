"""``belote-p2p join``: take the next free seat of a table, found by its address or among
the tables heard on the local network.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import trio

from belote_p2p.net.address import (
    format_address,
    listener_port,
    open_listener,
    parse_address,
)
from belote_p2p.net.discovery import (
    DEFAULT_LISTEN,
    TableAd,
    discover,
)
from belote_p2p.net.lobby import (
    DEFAULT_PORT,
    DEFAULT_WAIT,
    LobbyError,
    join_table,
)
from belote_p2p.net.peer import PeerError

from .home import mention_unfinished
from .lan import (
    DEFAULT_BEACON_ADDRESS,
    DEFAULT_BEACON_TEXT,
    BeaconAddress,
    beacon_address,
    choose_table,
)
from .rematch import ask_person, join_again, say_yes
from .seat import (
    SeatOptions,
    add_seat_arguments,
    exit_status,
    make_player,
    play_seat,
    run_main,
    seat_options,
)


async def find_table(
    options: SeatOptions,
    beacon: BeaconAddress,
    listen: float,
    ask: Callable[[str], str],
) -> str | None:
    """Listen for beacons for ``listen`` seconds and let the person choose a table: its
    lobby address, or None (after saying why)."""
    if not options.quiet:
        print(f"Listening for tables on the local network ({format_address(*beacon)}, "
              f"{listen:g} s)...", flush=True)  # fmt: skip
    try:
        ads = await discover(address=beacon, duration=listen)
    except OSError as exc:
        print(f"error: cannot listen for tables on {format_address(*beacon)}: {exc}",
              file=sys.stderr)  # fmt: skip
        return None
    if not ads:
        print(f"No open table was heard on the network in {listen:g} s; give the host's "
              "HOST:PORT.", file=sys.stderr)  # fmt: skip
        return None

    def choose() -> TableAd | None:
        return choose_table(ads, ask=ask)

    ad = await trio.to_thread.run_sync(choose, abandon_on_cancel=True)
    if ad is None:
        print("No table chosen.", file=sys.stderr)
        return None
    return ad.address


async def join_game(
    options: SeatOptions,
    address: str | None,
    *,
    beacon: BeaconAddress = DEFAULT_BEACON_ADDRESS,
    listen: float = DEFAULT_LISTEN,
    ask: Callable[[str], str] = input,
) -> int:
    """Join the table at ``address``, or (None) one heard on the network (beacons at
    ``beacon``, for ``listen`` seconds) that the person chooses (``ask``); the exit status."""
    player = make_player(options)
    if address is None:
        address = await find_table(options, beacon, listen, ask)
        if address is None:
            return 2
    try:
        host, port = parse_address(address, DEFAULT_PORT)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    identity = options.home.identity()
    mention_unfinished(options.home, identity)
    mesh_listener = await open_listener(options.bind, 0)
    if not options.quiet:
        print(f"Joining {format_address(host, port)} as {options.name} [{identity.fingerprint}]",
              flush=True)  # fmt: skip
    try:
        definition, seat, proposal = await join_table(
            host, port, options.name, identity.public_key_bytes, listener_port(mesh_listener),
            wait=DEFAULT_WAIT,
        )  # fmt: skip
        result = await play_seat(
            definition, seat, identity, player, [mesh_listener], options, proposal=proposal
        )
        while result.finished and options.offers_rematch(player is None):
            answer = ask_person if player is None else say_yes
            again = await join_again(definition, identity, options.bind, host, port, answer)
            if again is None:
                break
            definition, seat, proposal, mesh = again
            result = await play_seat(
                definition, seat, identity, player, [mesh], options, proposal=proposal
            )
    except (LobbyError, PeerError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    return exit_status(result)


def cmd_join(args: argparse.Namespace) -> int:
    try:
        options = seat_options(args)
        beacon = beacon_address(args.beacon_address)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.listen <= 0:
        print("error: --listen is a positive number of seconds", file=sys.stderr)
        return 2
    return run_main(lambda: join_game(options, args.address, beacon=beacon, listen=args.listen))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    join = sub.add_parser(
        "join",
        help="join a table",
        description="Join the table hosted at HOST:PORT and play the seat it gives "
        "(at the terminal, or with --bot). Without HOST:PORT, listen for the tables announced "
        "on the local network and choose one (exit status 2 if none is heard).",
    )
    join.add_argument(
        "address", nargs="?", metavar="HOST:PORT",
        help=f"the host's lobby (port {DEFAULT_PORT}); none: find a table on the network",
    )  # fmt: skip
    join.add_argument("--beacon-address", default=DEFAULT_BEACON_TEXT, metavar="IP[:PORT]",
                      help=f"where to listen for tables ({DEFAULT_BEACON_TEXT})")  # fmt: skip
    join.add_argument(
        "--listen", type=float, default=DEFAULT_LISTEN, metavar="S",
        help=f"seconds to listen for tables ({DEFAULT_LISTEN:g})",
    )  # fmt: skip
    add_seat_arguments(join)
    join.set_defaults(func=cmd_join)
