"""Playing one seat of a table, the job ``host``, ``join`` and ``resume`` share.

The seat is played by a person at the terminal (the table of :mod:`belote_p2p.app.tui`;
``--plain`` for plain lines) or by a bot (``--bot NAME``); after the game the peer records
the experience it earned in its profile and prints its ``RESULT`` line. The command-line
options every seat takes (deadlines, home, bind address...) are defined here once.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from belote_p2p.errors import BeloteError
from belote_p2p.net.address import ALL_ADDRESSES
from belote_p2p.net.lobby import (
    check_name,
)
from belote_p2p.net.peer import PeerConfig, PeerResult, PeerStatus, run_peer
from belote_p2p.net.transport import Mesh
from belote_p2p.players.bots import BotError
from belote_p2p.players.player import BotPlayer, Player
from belote_p2p.protocol.events import ActionTaken, Event
from belote_p2p.protocol.identity import Identity, IdentityError, fingerprint
from belote_p2p.protocol.table import TableDefinition

from .home import Home
from .output import Printer, TimingLog, both, print_roster, result_line
from .profile import ImportStatus, ProfileError, level_for_xp, open_db, record_game
from .tui import TableView, TerminalUI, TuiPlayer
from .web.options import WebOptions


@dataclass(frozen=True)
class SeatOptions:
    name: str
    home: Home
    bot: str | None
    seed: int | None
    bind: str
    quiet: bool
    timing_log: Path | None
    bot_deadline: float
    person_deadline: float = 60.0
    grace: float = 120.0
    plain: bool = False
    """A person's seat in plain lines, without the frame or colours."""
    web: WebOptions | None = None
    """A person's seat in the browser (``--web``; :mod:`belote_p2p.app.web`)."""
    listen: bool = True
    """Accept direct connections from the other peers (``--no-listen``: only a relay
    reaches us, as behind a NAT)."""
    relay: str | None = None
    """``--relay HOST:PORT``: the relay to use (host: the table's; join, resume: instead of
    the one the host names)."""

    def peer_config(self, seat: int) -> PeerConfig:
        bots = frozenset({seat}) if self.bot is not None else frozenset()
        return PeerConfig(
            person_deadline=self.person_deadline,
            bot_deadline=self.bot_deadline,
            bot_seats=bots,
            grace=self.grace,
        )


PERSON_SEATS = 4
"""The seats the terminal and browser tables lay out: a person plays four-seat tables only."""


class TableNotShown(BeloteError, ValueError):
    """A person would sit at a table the terminal (or browser) table cannot lay out yet: two
    or three seats. Bots play those tables (``--bot NAME``)."""


def check_person_table(seats: int) -> None:
    """Refuse, with a clear message, a person at a table of other than four seats."""
    if seats != PERSON_SEATS:
        raise TableNotShown(
            f"the terminal and browser tables show four seats only: a person cannot sit at "
            f"this {seats}-seat table yet; play it with a bot (--bot rules)"
        )


def make_player(options: SeatOptions) -> Player | None:
    """The seat's bot (``--bot``), or None for a person at the terminal (whose player is
    made once the table is known: :func:`terminal_player`). Raises ``BotError`` early for
    an unknown bot."""
    if options.bot is None:
        return None
    return BotPlayer(options.bot, deadline=options.bot_deadline, seed=options.seed)


class Countdown:
    """``on_status`` for the terminal table: the deadline of the seat being waited on, as a
    ``time.monotonic()`` instant in the view (drawn as a countdown with the next frame),
    and one line when a seat becomes overdue."""

    def __init__(self, ui: TerminalUI, seat: int, config: PeerConfig) -> None:
        self.ui = ui
        self.seat = seat
        self.config = config
        self._overdue: set[int] = set()

    def on_event(self, event: Event) -> None:
        if isinstance(event, ActionTaken):
            # The next seat's wait starts now: a fresh countdown for the frame drawn next.
            nxt = event.state.to_act
            if nxt != self.seat and 0 <= nxt < 4 and not event.state.is_over:
                deadline = time.monotonic() + self.config.decision_deadline(nxt)
                self.ui.view.set_deadline(nxt, deadline)
        self.ui.on_event(event)

    def on_status(self, status: PeerStatus) -> None:
        now = time.monotonic()
        for wait in status.waiting_for:
            if wait.seat == self.seat or not wait.decision:
                continue
            left = wait.deadline_in if wait.deadline_in > 0 else wait.abandon_in
            self.ui.view.set_deadline(wait.seat, now + left)
        overdue = {w.seat for w in status.overdue if w.seat != self.seat}
        for wait in status.overdue:
            if wait.seat in overdue - self._overdue:
                self.ui.say(wait.describe())
        self._overdue = overdue


def terminal_player(
    definition: TableDefinition, seat: int, options: SeatOptions
) -> tuple[Player, Countdown]:
    """A person at this terminal: the table view's player and its event/status callbacks."""
    ui = TerminalUI(TableView.from_definition(definition, seat), plain=options.plain)
    player = TuiPlayer(ui, turn_seconds=options.person_deadline)
    return player, Countdown(ui, seat, options.peer_config(seat))


def _both_status(
    first: Callable[[PeerStatus], None] | None, second: Callable[[PeerStatus], None]
) -> Callable[[PeerStatus], None]:
    def call(status: PeerStatus) -> None:
        if first is not None:
            first(status)
        second(status)

    return call


def record_experience(home: Home, result: PeerResult, key: bytes) -> tuple[int | None, str]:
    """Record the game of ``result`` in ``<home>/profile.sqlite3``: the XP it gave our
    seat (None if nothing was recorded) and one line to print."""
    db = home.profile_db
    try:
        outcome = record_game(db, result.transcript)
        if outcome.status is ImportStatus.REFUSED:
            return None, f"No experience recorded: {outcome.reason}"
        if outcome.status is ImportStatus.ALREADY or outcome.result is None:
            return None, f"Experience: {outcome.reason}"
        me = fingerprint(key)
        xp = outcome.result.seats[result.seat].xp
        xp += sum(challenge.xp for who, challenge in outcome.awards if who == me)
        with open_db(db) as conn:
            (total,) = conn.execute(
                "SELECT COALESCE(SUM(xp), 0) FROM xp WHERE player = ?", (me,)
            ).fetchone()
    except (sqlite3.Error, ProfileError, OSError) as exc:
        return None, f"No experience recorded: {db}: {exc}"
    return xp, f"+{xp} XP, level {level_for_xp(int(total))}"


async def play_seat(
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    player: Player | None,
    listeners: Sequence[trio.SocketListener],
    options: SeatOptions,
    *,
    transcript: Path | None = None,
    proposal: bytes | None = None,
    watch: tuple[Callable[[Event], None], Callable[[PeerStatus], None]] | None = None,
    relay: tuple[str, int] | None = None,
    on_mesh: Callable[[Mesh], None] | None = None,
    host_address: tuple[str, int] | None = None,
) -> PeerResult:
    """Play ``seat`` with ``player`` (None: a person, through the terminal table, or the
    browser's with ``options.web``), record the experience, and print the ``RESULT`` line.
    ``proposal`` is the host's signature of the definition (none when resuming: the
    transcript holds it); ``watch``: more ``on_event`` and ``on_status`` callbacks;
    ``relay`` the relay that reaches the seats we cannot connect to directly; ``on_mesh``
    sees the mesh before it runs (the host's port hands it its connections);
    ``host_address`` where we reached the host's port (the mesh dials seat 0 there)."""
    if player is None:
        check_person_table(len(definition.seats))
    if player is None and options.web is not None:
        from .web.seat import play_in_browser  # the web server loads only when asked for

        return await play_in_browser(
            play_seat, definition, seat, identity, listeners, options, options.web,
            transcript=transcript, proposal=proposal, relay=relay, on_mesh=on_mesh,
            host_address=host_address,
        )  # fmt: skip
    if not options.quiet:
        print_roster(definition, seat)
    on_event: Callable[[Event], None]
    on_status: Callable[[PeerStatus], None] | None
    if player is None:
        player, countdown = terminal_player(definition, seat, options)
        on_event, on_status = countdown.on_event, countdown.on_status
    else:
        printer = Printer(definition, seat, quiet=options.quiet)
        on_event, on_status = printer, None if options.quiet else printer.status
    if watch is not None:
        on_event = both(on_event, watch[0])
        on_status = _both_status(on_status, watch[1])
    timing = TimingLog(options.timing_log, seat) if options.timing_log else None
    callback = both(on_event, timing) if timing else on_event
    try:
        result = await run_peer(
            definition,
            seat,
            identity,
            player,
            transcript=transcript or options.home.transcript(definition, seat),
            listeners=listeners,
            on_event=callback,
            on_status=on_status,
            config=options.peer_config(seat),
            secrets=options.home.secrets(definition, seat),
            proposal=proposal,
            relay=relay,
            on_mesh=on_mesh,
            host_address=host_address,
        )
    finally:
        if timing is not None:
            timing.close()
    if not options.quiet:
        if result.resigned:
            print("You resigned: the game ends, abandoned by your seat.", flush=True)
        elif result.error:
            print(f"The game stopped: {result.error}", flush=True)
        print(f"Transcript: {result.transcript}", flush=True)
    xp: int | None = None
    if result.finished or result.abandoned is not None:
        xp, line = await trio.to_thread.run_sync(
            record_experience, options.home, result, identity.public_key_bytes
        )
        if not options.quiet:
            print(line, flush=True)
    print(result_line(result, definition, xp=xp), flush=True)
    return result


def exit_status(result: PeerResult) -> int:
    """0 for a game played out, or left by our own choice (a resignation); else 1."""
    return 0 if result.ok or result.resigned else 1


def seat_options(args: argparse.Namespace, home: Home | None = None) -> SeatOptions:
    return SeatOptions(
        name=check_name(args.name) if args.name is not None else "",  # resume: the table's
        home=home or Home.at(args.home),
        bot=args.bot,
        seed=args.seed,
        bind=args.bind,
        quiet=args.quiet,
        timing_log=Path(args.timing_log) if args.timing_log else None,
        bot_deadline=args.bot_deadline,
        person_deadline=args.person_deadline,
        grace=args.grace,
        plain=args.plain,
        web=WebOptions(port=args.web_port, open_browser=args.browser) if args.web else None,
        listen=args.listen,
        relay=args.relay,
    )


def run_main(main: Callable[[], Any]) -> int:
    """Run a trio main, turning the usual set-up errors into a message and status 2."""
    try:
        status: int = trio.run(main)
    except (BotError, IdentityError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return status


def add_seat_arguments(p: argparse.ArgumentParser, *, seat: bool = True, name: bool = True) -> None:
    p.add_argument("--bot", metavar="NAME", help="play with this bot (NAME[:key=value...])")
    p.add_argument("--seed", type=int, help="seed of the bots' choices (the deal stays secret)")
    p.add_argument(
        "--bot-deadline", type=float, default=10.0, metavar="S", help="seconds per bot decision"
    )
    p.add_argument(
        "--person-deadline", type=float, default=60.0, metavar="S",
        help="seconds a seat has for a decision before it is reported late (60)",
    )  # fmt: skip
    p.add_argument(
        "--grace", type=float, default=120.0, metavar="S",
        help="seconds after its deadline before a silent seat is signed gone (120)",
    )  # fmt: skip
    if not seat:
        return
    p.add_argument("--name", required=name, help="the name shown to the other players")
    p.add_argument("--home", metavar="DIR", help=f"identity and transcripts ({Home.default()})")
    p.add_argument(
        "--bind", default=ALL_ADDRESSES, metavar="IP",
        help="address to listen on (all addresses, IPv4 and IPv6)",
    )  # fmt: skip
    p.add_argument(
        "--no-listen", dest="listen", action="store_false",
        help="accept no direct connection from the other peers: they reach this one through "
        "the relay (what a peer behind a home router amounts to; listening is the default)",
    )  # fmt: skip
    p.add_argument(
        "--relay", metavar="HOST:PORT",
        help="the relay for the peers that cannot connect directly (default: the host's port)",
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="print only the RESULT line")
    p.add_argument(
        "--plain", action="store_true", help="plain lines, no colour (screen readers, logs)"
    )
    p.add_argument("--timing-log", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--web", action="store_true", help="play in the browser (a page on 127.0.0.1)")
    p.add_argument("--web-port", type=int, default=0, metavar="PORT",
                   help="the page's port with --web (0: any free port)")  # fmt: skip
    p.add_argument("--browser", action=argparse.BooleanOptionalAction, default=True,
                   help="open the page in the default browser with --web (--no-browser: "
                   "print its URL only)")  # fmt: skip
