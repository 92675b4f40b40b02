"""Playing one seat of a table, the job ``host``, ``join`` and ``resume`` share.

The seat is played by a person at the terminal (the table of :mod:`belote_p2p.app.tui`;
``--plain`` for plain lines) or by a bot (``--bot NAME``); after the game the peer records
the experience it earned in its profile and prints its ``RESULT`` line. The command-line
options every seat takes (deadlines, home, bind address...) are defined here once.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import getpass
import logging
import os
import signal
import socket
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from belote_p2p.app.argtypes import port, positive_seconds, seconds, seed
from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation
from belote_p2p.i18n import _, format_number
from belote_p2p.net.address import ALL_ADDRESSES
from belote_p2p.net.lobby import check_name
from belote_p2p.net.peer import (
    PeerConfig,
    PeerControl,
    PeerError,
    PeerResult,
    PeerStatus,
    run_peer,
)
from belote_p2p.net.transport import Mesh
from belote_p2p.players.autoplay import Autoplay
from belote_p2p.players.bots import BotError, fallback_text, make_bot
from belote_p2p.players.player import BotPlayer, Player
from belote_p2p.protocol.events import Event
from belote_p2p.protocol.identity import Identity, IdentityError, fingerprint
from belote_p2p.protocol.names import MAX_NAME, safe_text
from belote_p2p.protocol.private import private_directory, private_fd
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import Envelope

from .coach import TableCoach
from .home import Home
from .output import Printer, TimingLog, both, print_roster, result_line
from .profile import (
    ImportStatus,
    ProfileError,
    import_reason,
    level_for_xp,
    open_db,
    record_game,
    total_xp,
)
from .seatview import RESIGNED_OPEN, SIGNED_OUT, SIGNED_OUT_OPEN
from .tui import Control, TableView, TerminalUI, TuiPlayer, detach_output
from .web.options import WebOptions
from .wording import error_text, listed

if TYPE_CHECKING:
    from .web.table import WebTable


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
    connect_timeout: float = 60.0
    """Seconds the mesh has to open: every other peer connected at the start, one at a
    resume."""
    step_deadline: float = 10.0
    """Seconds a seat has for a protocol step that needs no decision (a deck message, its
    signature of the table, its ``done``) before it is reported late."""
    plain: bool = False
    """A person's seat in plain lines, without the frame or colours."""
    autoplay: str | None = "rules"
    """The bot that plays a person's turn when their time runs out (None: nobody)."""
    json: bool = False
    """Print the ``RESULT`` line (it is printed anyway when stdout is not a terminal)."""
    rematch: bool | None = None
    """Another game after this one: None, a person is asked and a bot says no; True, a bot
    says yes too; False, nobody is asked."""

    def with_standin(
        self, person: Player, on_autoplay: Callable[[Observation, Action], None]
    ) -> Autoplay:
        """A person's seat with its stand-in bot for the turns whose time runs out (the
        terminal's and the browser's alike)."""
        return Autoplay.for_person(
            person, self.autoplay, self.person_deadline, on_autoplay,
            bot_deadline=self.bot_deadline, seed=self.seed,
        )  # fmt: skip

    def offers_rematch(self, person: bool) -> bool:
        """Whether this seat takes part in the question of another game."""
        return self.rematch is not False and (person or self.rematch is True)

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
            connect_timeout=self.connect_timeout,
            step_deadline=self.step_deadline,
        )

    @property
    def machine_output(self) -> bool:
        """Print the ``RESULT`` line: asked for, or stdout is not a person's terminal."""
        return self.json or not sys.stdout.isatty()


def make_player(options: SeatOptions) -> Player | None:
    """The seat's bot (``--bot``), or None for a person at the terminal (whose player is
    made once the table is known: :func:`terminal_player`). Raises ``BotError`` early for
    an unknown bot, or an unknown ``--autoplay`` bot."""
    if options.bot is None:
        if options.autoplay is not None:
            make_bot(options.autoplay)
        return None
    return BotPlayer(options.bot, deadline=options.bot_deadline, seed=options.seed)


def terminal_player(
    definition: TableDefinition, seat: int, options: SeatOptions, control: PeerControl
) -> tuple[Player, TerminalUI]:
    """A person at this terminal: the table view's player (with its stand-in bot for the
    turns whose time runs out) and its user interface."""
    config = options.peer_config(seat)
    coach = TableCoach() if definition.hints else None
    ui = TerminalUI(
        TableView.from_definition(definition, seat),
        plain=options.plain,
        control=control,
        deadline_for=config.decision_deadline,
        standin=options.autoplay,
        hints=coach.hint if coach is not None else None,
    )
    person = TuiPlayer(ui, turn_seconds=options.person_deadline)
    return options.with_standin(person, ui.autoplayed), ui


async def watch_signals(
    control: Control,
    ui: TerminalUI | None,
    say: Callable[[str], None],
    *,
    stopped: trio.Event | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Ctrl-C asks whether to resign (a second one resigns); a closed terminal (SIGHUP) or
    SIGTERM resigns at once, and sets ``stopped`` (the page then does not linger after the
    game: the process is asked to end). Never a traceback."""
    signals = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGHUP"):
        signals.append(signal.SIGHUP)
    interrupted = False
    with trio.open_signal_receiver(*signals) as received:
        task_status.started()
        async for signum in received:
            if signum == signal.SIGINT:
                if ui is not None:
                    ui.interrupt()
                elif not interrupted:
                    interrupted = True
                    say(_("Ctrl-C: press Ctrl-C again to resign this seat."))
                else:
                    control.resign()
            else:
                if stopped is not None:
                    stopped.set()
                if ui is not None and signum == signal.SIGTERM:
                    ui._resign()
                elif ui is not None:
                    ui.hangup()
                else:
                    detach_output()
                control.resign()


@contextlib.contextmanager
def log_to_file(path: Path) -> Iterator[None]:
    """The peer's log lines go to ``path`` instead of the terminal, where the table is."""
    logger = logging.getLogger("belote_p2p")
    private_directory(path.parent)
    os.close(private_fd(path, os.O_WRONLY | os.O_CREAT))
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
        handler.close()


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
            return None, _("No experience recorded: {reason}").format(reason=outcome.reason)
        if outcome.status is ImportStatus.ALREADY or outcome.result is None:
            return None, _("Experience: {reason}").format(reason=import_reason(outcome))
        me = fingerprint(key)
        xp = outcome.result.seats[result.seat].xp
        xp += sum(challenge.xp for who, challenge in outcome.awards if who == me)
        with open_db(db) as conn:
            total = total_xp(conn, me)
    except (sqlite3.Error, ProfileError, OSError) as exc:
        return None, _("No experience recorded: {reason}").format(reason=f"{db}: {exc}")
    return xp, _("+{xp} XP, level {level}").format(
        xp=format_number(xp), level=level_for_xp(int(total))
    )


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
    control: PeerControl | None = None,
    stopped: trio.Event | None = None,
    on_step: Callable[[Sequence[Envelope]], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> PeerResult:
    """Play ``seat`` with ``player`` (None: a person, through the terminal table, or the
    browser's with ``options.web``), record the experience, and print the ``RESULT`` line.
    ``proposal`` is the host's signature of the definition (none when resuming: the
    transcript holds it); ``watch``: more ``on_event`` and ``on_status`` callbacks;
    ``relay`` the relay that reaches the seats we cannot connect to directly; ``on_mesh``
    sees the mesh before it runs (the host's port hands it its connections);
    ``host_address`` where we reached the host's port (the mesh dials seat 0 there);
    ``control`` resigns or chats for a user interface other than the terminal's; ``stopped``
    is set when a signal ends the seat (:func:`watch_signals`); ``on_step`` sees the
    envelopes each step of the session accepted (the host's watchers, :mod:`.watch`);
    ``notice`` shows a line to the person where the terminal does not (the browser's table)."""
    if player is None and options.web is not None:
        return await play_in_browser(
            definition, seat, identity, listeners, options, options.web,
            transcript=transcript, proposal=proposal, relay=relay, on_mesh=on_mesh,
            host_address=host_address, on_step=on_step,
        )  # fmt: skip
    if not options.quiet:
        print_roster(definition, seat)
    control = control if control is not None else PeerControl()
    on_event: Callable[[Event], None]
    on_status: Callable[[PeerStatus], None] | None
    ui: TerminalUI | None = None
    if player is None:
        player, ui = terminal_player(definition, seat, options, control)
        on_event, on_status = ui.on_event, ui.on_status
    else:
        printer = Printer(definition, seat, quiet=options.quiet)
        on_event, on_status = printer, None if options.quiet else printer.status
    if watch is not None:
        on_event = both(on_event, watch[0])
        on_status = _both_status(on_status, watch[1])
    timing = TimingLog(options.timing_log, seat) if options.timing_log else None
    callback = both(on_event, timing) if timing else on_event
    steps = [f for f in (on_step, timing.step if timing is not None else None) if f is not None]

    def say(text: str) -> None:
        try:
            print(text, flush=True)
        except OSError:  # the terminal is gone (closed with the game)
            detach_output()

    def tell(text: str) -> None:
        """A line for the person: in the terminal's frame, or printed, and on the page."""
        if ui is not None:
            ui.say(text)
        elif not options.quiet:
            say(text)
        if notice is not None:
            notice(text)

    names = {s.key: s.name for s in definition.seats}
    config = options.peer_config(seat)
    logs = log_to_file(options.home.log) if ui is not None else contextlib.nullcontext()
    failed: PeerError | None = None
    try:
        with logs:
            async with trio.open_nursery() as nursery:
                await nursery.start(partial(watch_signals, control, ui, say, stopped=stopped))
                if ui is not None:
                    await nursery.start(ui.run)

                def opening(mesh: Mesh) -> None:
                    # Whoever we wait for, said once if the mesh is slow to open.
                    if on_mesh is not None:
                        on_mesh(mesh)
                    timeout = config.connect_timeout
                    nursery.start_soon(say_whom_we_wait_for, mesh, names, timeout, tell)

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
                        config=config,
                        secrets=options.home.secrets(definition, seat),
                        proposal=proposal,
                        control=control,
                        relay=relay,
                        on_mesh=opening,
                        host_address=host_address,
                        on_step=both(*steps) if steps else None,
                    )
                except PeerError as exc:
                    # Raised here, not wrapped in this nursery's exception group: the
                    # commands say it in one line.
                    failed = exc
                nursery.cancel_scope.cancel()
            if failed is not None:
                raise failed
    finally:
        if timing is not None:
            timing.close()
        if ui is not None:
            ui.finish()
    if not options.quiet:
        if result.left == result.seat:
            say(_(RESIGNED_OPEN if result.resigned else SIGNED_OUT_OPEN))
        elif result.resigned and result.abandoned is None:
            say(_("You left before the game began."))
        elif result.resigned:
            say(_("You resigned: the game ends, abandoned by your seat."))
        elif result.abandoned == result.seat:
            say(_(SIGNED_OUT))
        elif result.error:
            say(_("The game stopped: {error}").format(error=result.error))
        say(_("Transcript: {file}").format(file=result.transcript))
    xp: int | None = None
    if result.finished or result.abandoned is not None or result.left == result.seat:
        xp, line = await trio.to_thread.run_sync(
            record_experience, options.home, result, identity.public_key_bytes
        )
        if not options.quiet:
            say(line)
    fallbacks = player.counts if isinstance(player, BotPlayer) else None
    if fallbacks is not None and fallbacks.fallbacks and not options.quiet:
        say(
            _("Bot fallbacks: {counts} (a random legal action instead)").format(
                counts=fallback_text(fallbacks.to_json())
            )
        )
    if options.machine_output:
        counts = None if fallbacks is None else fallbacks.to_json()
        say(result_line(result, definition, xp=xp, fallbacks=counts))
    return result


MESH_PATIENCE = 5.0
"""Seconds a seat waits for the other peers' connections before it says it waits."""


async def say_whom_we_wait_for(
    mesh: Mesh, names: Mapping[bytes, str], timeout: float, say: Callable[[str], None]
) -> None:
    """Once, if the other peers have not all connected within :data:`MESH_PATIENCE`
    seconds: who we still wait for, and how long we wait (the mesh's own deadline ends it).
    Returns once they all have."""
    waited = 0.0
    told = False
    while True:
        absent = sorted(mesh.never_connected)
        if not absent:
            return
        if waited >= MESH_PATIENCE and not told:
            who = listed(
                [
                    _("{name} (seat {seat})").format(name=names.get(mesh.roster[s], "?"), seat=s)
                    for s in absent
                ]
            )
            say(
                _("Waiting for {who} to connect to the table (up to {seconds} s)...").format(
                    who=who, seconds=format_number(timeout, 3, trailing_zeros=False)
                )
            )
            told = True
        await trio.sleep(0.5)
        waited += 0.5


async def play_in_browser(
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    listeners: Sequence[trio.SocketListener],
    options: SeatOptions,
    web: WebOptions,
    *,
    transcript: Path | None,
    proposal: bytes | None,
    relay: tuple[str, int] | None,
    on_mesh: Callable[[Mesh], None] | None,
    host_address: tuple[str, int] | None,
    on_step: Callable[[Sequence[Envelope]], None] | None = None,
) -> PeerResult:
    """:func:`play_seat` with the seat rendered in the browser (:mod:`.web.seat`)."""
    from .web.seat import outcome_text, web_seat  # the web server loads only when asked for

    control = PeerControl()
    deadlines = options.peer_config(seat).decision_deadline
    rematch = options.offers_rematch(True)
    failed: PeerError | None = None
    async with web_seat(
        definition, seat, web, decision_deadline=deadlines, rematch=rematch
    ) as table:
        table.send_chat = control.chat
        try:
            result = await play_seat(
                definition, seat, identity, web_player(table, options), listeners,
                replace(options, web=None), transcript=transcript, proposal=proposal,
                watch=(table.on_event, table.on_status), relay=relay, on_mesh=on_mesh,
                host_address=host_address, control=control, stopped=table.left,
                on_step=on_step, notice=table.note,
            )  # fmt: skip
        except PeerError as exc:
            # Said on the page, which stays until the person leaves it (not a page gone
            # with its process, nor one waiting for the peers for ever).
            failed = exc
            text = _("The game could not go on: {error}.").format(error=exc)
            table.game_over(text)
            if web.tell is not None:
                web.tell(text)
        else:
            table.game_over(outcome_text(result, definition.rules.seats))
    if failed is not None:
        raise failed
    return result


def web_player(table: WebTable, options: SeatOptions) -> Player:
    """The person in the browser, with the terminal's stand-in for a turn whose time runs
    out (``--autoplay``)."""
    from .web.table import WebPlayer

    return options.with_standin(
        WebPlayer(table, turn_seconds=options.person_deadline), table.autoplayed
    )


def player_name(args: argparse.Namespace, home: Home) -> str:
    """``--name``, else the last name used in ``home``, else the login name (``resume``
    takes the table's: empty here). A name given is kept in the home for next time."""
    given = getattr(args, "name", None)
    if given is not None:
        name = check_name(given)
        home.save_name(name)
        return name
    if not hasattr(args, "name"):
        return ""
    return home.saved_name() or login_name()


def login_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    name = safe_text(name, MAX_NAME)[:MAX_NAME]
    return name or "Player"


def exit_status(result: PeerResult) -> int:
    """0 for a game played out, or left by our own choice (a resignation); else 1."""
    return 0 if result.ok or result.resigned else 1


def seat_options(args: argparse.Namespace, home: Home | None = None) -> SeatOptions:
    home = home or Home.at(args.home)
    return SeatOptions(
        name=player_name(args, home),
        home=home,
        bot=args.bot,
        seed=args.seed,
        bind=args.bind,
        quiet=args.quiet,
        timing_log=Path(args.timing_log) if args.timing_log else None,
        bot_deadline=args.bot_deadline,
        person_deadline=args.person_deadline,
        grace=args.grace,
        connect_timeout=args.connect_timeout,
        step_deadline=args.step_deadline,
        plain=args.plain,
        autoplay=None if args.autoplay == "none" else args.autoplay,
        json=args.json,
        rematch=getattr(args, "rematch", None),
        web=WebOptions(
            port=args.web_port, open_browser=args.browser, token=home.web_token(), home=home.root
        )
        if args.web
        else None,
        listen=args.listen,
        relay=args.relay,
    )


def run_main(main: Callable[[], Awaitable[int]]) -> int:
    """Run a trio main, turning the usual set-up errors into a message and status 2, and
    Ctrl-C outside a game (in the lobby) into a clean stop (status 130): a game handles its
    own Ctrl-C (:func:`watch_signals`)."""

    async def guarded() -> int:
        outcome: list[int] = []
        with trio.open_signal_receiver(signal.SIGINT) as interrupts:
            async with trio.open_nursery() as nursery:

                async def body() -> None:
                    outcome.append(await main())
                    nursery.cancel_scope.cancel()

                nursery.start_soon(body)
                async for _signal in interrupts:
                    if outcome:
                        break  # a Ctrl-C the game left unread: the command is done
                    print("\n" + _("Interrupted: you left the table."), file=sys.stderr, flush=True)
                    nursery.cancel_scope.cancel()
                    return 130
        return outcome[0] if outcome else 130

    try:
        status: int = trio.run(guarded)
    except (BotError, IdentityError, ValueError) as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    except OSError as exc:
        print(error_text(explain_os_error(exc)), file=sys.stderr)
        return 1
    return status


def explain_os_error(exc: OSError) -> str:
    """An operating system error as a person reads it: no errno, no Python names."""
    if isinstance(exc, socket.gaierror):
        return _("that host name cannot be found (check the address, or give an IP address)")
    if exc.errno == errno.EADDRINUSE:
        return _("an address this command listens on is in use; choose another port")
    if exc.errno == errno.EADDRNOTAVAIL:
        return _("that address is not one of this machine's (see --bind)")
    if exc.errno == errno.ECONNREFUSED:
        return _("nobody answers at that address (is the table still open?)")
    if exc.errno in (errno.EACCES, errno.EPERM) and exc.filename is None:
        return _("not allowed to listen there (ports below 1024 need privileges)")
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def add_seat_arguments(p: argparse.ArgumentParser, *, seat: bool = True, name: bool = True) -> None:
    p.add_argument("--bot", metavar=_("NAME"), help=_("play with this bot (NAME[:key=value...])"))
    p.add_argument(
        "--seed", type=seed, metavar=_("SEED"),
        help=_("seed of the bots' choices (the deal stays secret)"),
    )  # fmt: skip
    p.add_argument(
        "--bot-deadline",
        type=positive_seconds,
        default=10.0,
        metavar=_("S"),
        help=_("seconds per bot decision"),
    )
    p.add_argument(
        "--person-deadline", type=positive_seconds, default=60.0, metavar=_("S"),
        help=_("seconds a seat has for a decision before it is reported late (60)"),
    )  # fmt: skip
    p.add_argument(
        "--step-deadline", type=positive_seconds, default=10.0, metavar=_("S"),
        help=_("seconds a seat has for a protocol step (a deck message, its signature of the "
               "table) before it is reported late (10)"),
    )  # fmt: skip
    p.add_argument(
        "--grace", type=seconds, default=120.0, metavar=_("S"),
        help=_("seconds after its deadline before a silent seat is signed gone (120)"),
    )  # fmt: skip
    p.add_argument(
        "--connect-timeout", type=positive_seconds, default=60.0, metavar=_("S"),
        help=_("seconds for every other peer to connect when the game opens (for one of "
               "them when it resumes) (60)"),
    )  # fmt: skip
    if not seat:
        return
    if name:
        p.add_argument(
            "--name", metavar=_("NAME"),
            help=_(
                "the name shown to the other players (the last one used in --home, else "
                "your login name)"
            ),
        )  # fmt: skip
    p.add_argument(
        "--home", metavar=_("DIR"),
        help=_("identity and transcripts ({home})").format(home=Home.default()),
    )  # fmt: skip
    p.add_argument(
        "--bind", default=ALL_ADDRESSES, metavar=_("IP"),
        help=_("address to listen on (all addresses, IPv4 and IPv6)"),
    )  # fmt: skip
    p.add_argument(
        "--no-listen", dest="listen", action="store_false",
        help=_(
            "accept no direct connection from the other peers: they reach this one through "
            "the relay (what a peer behind a home router amounts to; listening is the "
            "default)"
        ),
    )  # fmt: skip
    p.add_argument(
        "--relay", metavar=_("HOST:PORT"),
        help=_("the relay for the peers that cannot connect directly (the host's port)"),
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help=_("print only the RESULT line"))
    p.add_argument(
        "--json", action="store_true",
        help=_("end with a RESULT line of JSON (always, when stdout is not a terminal)"),
    )  # fmt: skip
    p.add_argument(
        "--autoplay", default="rules", metavar=_("BOT"),
        help=_(
            "the bot that plays your turn when your time runs out; you play on at your next "
            "turn (none: nobody does, and the others sign you gone after --grace)"
        ),
    )  # fmt: skip
    p.add_argument(
        "--plain", action="store_true", help=_("plain lines, no colour (screen readers, logs)")
    )
    p.add_argument("--timing-log", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument(
        "--rematch", action=argparse.BooleanOptionalAction, default=None,
        help=_(
            "after a game played out, another with the same players: a person is asked, a "
            "bot says no unless --rematch; --no-rematch: nobody is asked"
        ),
    )  # fmt: skip
    add_web_arguments(p, _("play in the browser (a page on 127.0.0.1)"))


def add_web_arguments(p: argparse.ArgumentParser, web_help: str) -> None:
    """``--web`` (its help, ``web_help``, says what is done in the browser: play, watch),
    ``--web-port`` and ``--browser``."""
    p.add_argument("--web", action="store_true", help=web_help)
    p.add_argument("--web-port", type=port, default=0, metavar=_("PORT"),
                   help=_("the page's port with --web (0: any free port)"))  # fmt: skip
    p.add_argument(
        "--browser", action=argparse.BooleanOptionalAction, default=True,
        help=_("open the page in the default browser with --web (--no-browser: print its URL "
               "only)"),
    )  # fmt: skip
