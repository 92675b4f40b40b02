"""``belote-p2p host``: open a table (the lobby, :mod:`belote_p2p.net.lobby`) and play seat 0.

``--bots N`` starts N local bot peer processes (``--bots N:NAME`` or ``--fill NAME``: which
bot; ``rules`` by default). While its lobby has seats free for others,
the host sends a UDP beacon every second (``--no-beacon`` to stay unannounced,
``--beacon-address`` to send elsewhere than the broadcast default).
"""

from __future__ import annotations

import argparse
import errno
import sys

import trio

from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.net.address import (
    format_address,
    guess_lan_ip,
    listener_port,
    open_listener,
)
from belote_p2p.net.discovery import (
    Beacon,
    send_beacons,
)
from belote_p2p.net.lobby import (
    DEFAULT_PORT,
    JoinRequest,
    Lobby,
    LobbyError,
    host_lobby,
)
from belote_p2p.net.peer import PeerError, PeerResult
from belote_p2p.players.bots import make_bot
from belote_p2p.protocol.identity import fingerprint

from .botprocs import (
    BOT_PROCESS_GRACE,
    BotProcess,
    bot_command,
    check_agreement,
    run_bot_process,
)
from .home import mention_unfinished
from .lan import DEFAULT_BEACON_TEXT, BeaconAddress, beacon_address, send_last_beacon
from .rematch import ask_person, host_again
from .seat import (
    SeatOptions,
    add_seat_arguments,
    exit_status,
    make_player,
    play_seat,
    run_main,
    seat_options,
)


async def host_game(
    options: SeatOptions,
    rules: RuleSet,
    port: int,
    bots: int,
    *,
    beacon: BeaconAddress | None = None,
    fill: str = "rules",
) -> int:
    """Host a table, optionally with ``bots`` local bot processes; the exit status.

    ``beacon``: where to announce the table (:func:`~belote_p2p.net.discovery.send_beacons`)
    while seats are free for others (None: not announced); ``fill``: the bot of the bot
    processes."""
    identity = options.home.identity()
    mention_unfinished(options.home, identity)
    player = make_player(options)
    if bots:
        make_bot(fill)  # BotError now, not in three processes later
    mesh_listener = await open_listener(options.bind, 0)
    try:
        lobby_listener = await open_listener(options.bind, port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        print(f"error: port {port} is in use (another table?); choose another with --port",
              file=sys.stderr)  # fmt: skip
        return 1
    lobby_port = listener_port(lobby_listener)
    lobby = Lobby(
        JoinRequest(options.name, identity.public_key_bytes, listener_port(mesh_listener)), rules
    )
    any_address = options.bind in ("0.0.0.0", "::", "")
    shown_ip = guess_lan_ip() if any_address else options.bind
    shown = format_address(shown_ip, lobby_port)

    def say(text: str) -> None:
        if not options.quiet:
            print(text, flush=True)

    say(f"Hosting table {lobby.table_id.hex()} ({rules.name} to {rules.target}) as "
        f"{options.name} [{identity.fingerprint}]")  # fmt: skip
    say(f"Lobby listening on {shown}")
    say(f"Others join with:  belote-p2p join {shown} --name Bob")

    def joined(seat: int, request: JoinRequest) -> None:
        say(f"  {request.name} [{fingerprint(request.key)}] joined: seat {seat}")

    local = "127.0.0.1" if any_address else options.bind
    procs = [
        BotProcess(
            k,
            bot_command(
                k,
                format_address(local, lobby_port),
                options,
                fill,
                rematch=options.offers_rematch(player is None),
            ),
            options.home.bot(k),
            hold_log=player is None,
        )
        for k in range(1, bots + 1)
    ]

    def table_beacon(free: int) -> Beacon | None:
        try:
            return Beacon(options.name, rules.name, rules.target, free, lobby_port, lobby.table_id)
        except ValueError:  # a name a beacon cannot carry: the table is not announced
            return None

    def open_seats() -> Beacon | None:
        # Seats for others: the bot processes' seats are not (they may not have joined yet).
        free = min(3 - len(lobby.joined), 3 - bots)
        return table_beacon(free) if free > 0 else None

    beacon_scope = trio.CancelScope()

    async def announce(address: BeaconAddress) -> None:
        with beacon_scope:
            await send_beacons(open_seats, address=address)

    result: PeerResult | None = None
    seated = False
    async with trio.open_nursery() as nursery:
        for proc in procs:
            nursery.start_soon(run_bot_process, proc, fill)
        if beacon is not None and bots < 3:
            say(f"Announcing the table on the local network ({format_address(*beacon)})")
            nursery.start_soon(announce, beacon)
        try:
            try:
                definition, proposal = await host_lobby(
                    lobby, [lobby_listener], identity, on_join=joined
                )
            finally:
                beacon_scope.cancel()
            seated = True
            last = table_beacon(0)
            if beacon is not None and bots < 3 and last is not None:
                await send_last_beacon(last, beacon)
            result = await play_seat(
                definition, 0, identity, player, [mesh_listener], options, proposal=proposal
            )
            while result.finished and options.offers_rematch(player is None):
                again = await host_again(definition, identity, options.bind, lobby_port,
                                         ask_person)  # fmt: skip
                if again is None:
                    break
                definition, proposal, mesh = again
                result = await play_seat(
                    definition, 0, identity, player, [mesh], options, proposal=proposal
                )
        except (LobbyError, PeerError) as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            nursery.cancel_scope.cancel()
        finally:
            if not seated:
                # Leaving the lobby (an error, Ctrl-C): no game, no bot process to keep.
                for proc in procs:
                    proc.terminate()
        # A crash of ours never gets here: the bot processes play on, for a resume.
        with trio.move_on_after(BOT_PROCESS_GRACE):
            while any(p.status is None for p in procs):
                await trio.sleep(0.1)
        for proc in procs:
            proc.terminate()
        nursery.cancel_scope.cancel()
    if result is None:
        return 1
    status = exit_status(result)
    if not result.finished:
        return status  # abandoned or stopped: the bots saw it too, nothing to compare
    for proc in procs:
        if proc.status != 0:
            print(f"error: bot process {proc.number} exited with {proc.status}", file=sys.stderr)
            status = 1
    if procs:
        status = max(status, check_agreement(result, [p.result for p in procs], options.quiet))
    return status


def bots_option(text: str) -> tuple[int, str | None]:
    """``--bots N`` or ``--bots N:NAME[:key=value...]``: how many bot processes, which bot."""
    count, _, spec = text.partition(":")
    if not count.isdigit() or not 0 <= int(count) <= 3:
        raise argparse.ArgumentTypeError(f"{text!r}: N (0 to 3), or N:BOT like 3:pimc")
    return int(count), spec or None


def cmd_host(args: argparse.Namespace) -> int:
    try:
        options = seat_options(args)
        rules = rule_set(args.variant, target=args.target, first_dealer=args.first_dealer)
        beacon = beacon_address(args.beacon_address) if args.beacon else None
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bots, spec = args.bots
    if spec is not None and args.fill is not None and spec != args.fill:
        print("error: --bots N:BOT and --fill BOT name two bots", file=sys.stderr)
        return 2
    fill = spec or args.fill or "rules"
    return run_main(lambda: host_game(options, rules, args.port, bots, beacon=beacon, fill=fill))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    variants = sorted(RULE_SETS)
    host = sub.add_parser(
        "host",
        help="open a table and play seat 0",
        description="Open a table: wait for three players to join, then play seat 0 "
        "(at the terminal, or with --bot). --bots N starts N local bot peer processes.",
    )
    host.add_argument("--port", type=int, default=DEFAULT_PORT, help="lobby port (0: any)")
    host.add_argument("--variant", choices=variants, default="classic")
    host.add_argument("--target", type=int, default=501, help="score that wins the game")
    host.add_argument(
        "--bots", type=bots_option, default=(0, None), metavar="N[:BOT]",
        help="start N local bot peers, each its own process (3:pimc: of the pimc bot)",
    )  # fmt: skip
    host.add_argument(
        "--fill", metavar="BOT", help="the bot of the --bots peers, NAME[:key=value...] (rules)"
    )
    host.add_argument(
        "--first-dealer", type=int, default=0, choices=range(4), metavar="SEAT",
        help="the seat that deals the first round (0)",
    )  # fmt: skip
    host.add_argument(
        "--beacon", action=argparse.BooleanOptionalAction, default=True,
        help="announce the table on the local network while seats are free (on)",
    )  # fmt: skip
    host.add_argument("--beacon-address", default=DEFAULT_BEACON_TEXT, metavar="IP[:PORT]",
                      help=f"where the beacons go ({DEFAULT_BEACON_TEXT})")  # fmt: skip
    add_seat_arguments(host)
    host.set_defaults(func=cmd_host)
