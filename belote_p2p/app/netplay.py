"""``belote-p2p host``, ``join`` and ``demo``: whole games between peer processes over TCP.

``host`` opens a table (the lobby, :mod:`belote_p2p.net.lobby`) and plays seat 0; ``join``
takes the next free seat of a table; either seat is played by a person at the terminal
(the table of :mod:`belote_p2p.app.tui`; ``--plain`` for plain lines without colour, for screen
readers and logs) or by a bot (``--bot NAME``). ``host --bots N`` starts N local bot peers,
each its own process with its own identity. ``demo`` is a whole game between four bot
processes on this machine, with nothing to set up.

LAN discovery (:mod:`belote_p2p.net.discovery`): while its lobby has seats free for others,
``host`` sends a UDP beacon every second (``--no-beacon`` to stay unannounced,
``--beacon-address`` to send elsewhere than the broadcast default); ``join`` without an
address listens for beacons for a few seconds and offers the tables it heard.

Experience: after a game that finished, or ended abandoned, each peer (the bots of
``host --bots`` included, in their own homes) records it in its profile database,
``<home>/profile.sqlite3`` (:func:`belote_p2p.app.profile.record_game`), and prints one line:
the XP it gave and the level reached, or why the record was refused.

Each peer keeps its identity, its transcripts and its deck secrets in its home directory
(``--home``, by default ``$XDG_DATA_HOME/belote-p2p``, i.e. ``~/.local/share/belote-p2p``):
``identity.key``, ``games/<table id>-seat<k>.transcript`` and
``secrets/<table id>-seat<k>.secrets``.

``resume [TRANSCRIPT]`` continues a game after a crash: it reads the table and our seat from
the transcript (by default the one unfinished game of this identity in its home), listens
again at our seat's address, reconnects to the others and plays on. ``host`` and ``join``
only mention an unfinished game; they never resume one by themselves.

Deadlines (``--person-deadline``, ``--grace``) are each peer's own policy; every peer starts
with the same defaults, and ``host --bots`` gives its bot processes its own values.

Every peer ends its output with one line ``RESULT {json}`` (seat, table id, final scores,
whether the game finished cleanly, whether our seat resigned, the XP recorded), which is
what ``host --bots`` and ``demo`` read from their bot processes. A person who resigns
(``quit``, then ``yes``) ends the game abandoned by their seat; that is not a failure: the
exit status is 0 and the RESULT line says ``"resigned": true``.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import trio

from belote_p2p.game.cards import Card
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.net.address import (
    format_address,
    guess_lan_ip,
    listener_port,
    open_listener,
    parse_address,
)
from belote_p2p.net.discovery import (
    DEFAULT_BEACON_PORT,
    DEFAULT_GROUP,
    DEFAULT_LISTEN,
    Beacon,
    TableAd,
    choose_table,
    discover,
    encode_beacon,
    send_beacons,
)
from belote_p2p.net.lobby import (
    DEFAULT_PORT,
    DEFAULT_WAIT,
    JoinRequest,
    Lobby,
    LobbyError,
    check_name,
    host_lobby,
    join_table,
)
from belote_p2p.net.peer import (
    BotPlayer,
    PeerConfig,
    PeerError,
    PeerResult,
    PeerStatus,
    Player,
    run_peer,
)
from belote_p2p.players.bots import BotError
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    PeerFault,
    RoundAudited,
    TableReady,
)
from belote_p2p.protocol.identity import Identity, IdentityError, fingerprint
from belote_p2p.protocol.secretstore import FileSecrets, SecretStoreError
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import Transcript, TranscriptError, read_transcript
from belote_p2p.protocol.wire import WireError, decode

from .display import format_round, format_sheet
from .profile import ImportStatus, ProfileError, db_path, level_for_xp, open_db, record_game
from .tui import TableView, TerminalUI, TuiPlayer

APP_NAME = "belote-p2p"
RESULT_PREFIX = "RESULT "
BOT_PROCESS_GRACE = 60.0
"""Seconds the host waits for its bot processes once its own game is over."""


def default_home() -> Path:
    """``$XDG_DATA_HOME/belote-p2p``, else ``~/.local/share/belote-p2p``."""
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base else Path.home() / ".local" / "share"
    return root / APP_NAME


def transcript_path(home: Path, definition: TableDefinition, seat: int) -> Path:
    return home / "games" / f"{definition.table_id.hex()}-seat{seat}.transcript"


def secret_store(home: Path, definition: TableDefinition, seat: int) -> FileSecrets:
    return FileSecrets(home / "secrets", definition.table_id, seat)


def game_ended(envelopes: Sequence[bytes], roster: Sequence[bytes]) -> bool:
    """The record ends the game: four ``done``, a fault report, a resignation, or three
    seats signing that a fourth left. (A quick look at the bodies, not a verification.)"""
    done: set[bytes] = set()
    votes: dict[int, set[bytes]] = {}
    for data in envelopes:
        try:
            envelope: Any = decode(data)
        except (WireError, ValueError):
            continue
        body = envelope.get("body") if isinstance(envelope, dict) else None
        sender = envelope.get("sender") if isinstance(envelope, dict) else None
        if not isinstance(body, dict) or not isinstance(sender, bytes):
            continue
        kind, gone = body.get("type"), body.get("seat")
        if kind == "done":
            done.add(sender)
        elif kind == "fault":
            return True
        elif kind == "abandon" and type(gone) is int and 0 <= gone < len(roster):
            if sender == roster[gone]:
                return True  # a resignation
            votes.setdefault(gone, set()).add(sender)
    return len(done) == 4 or any(len(v) >= 3 for v in votes.values())


def unfinished_games(home: Path, identity: Identity) -> list[Transcript]:
    """Transcripts in ``home`` of games of this identity that did not end."""
    found = []
    for path in sorted((home / "games").glob("*.transcript")):
        try:
            transcript = read_transcript(path)
        except (OSError, TranscriptError):
            continue
        key = transcript.definition.seats[transcript.seat].key
        ended = game_ended(transcript.envelopes, transcript.definition.roster)
        if key == identity.public_key_bytes and not ended:
            found.append(transcript)
    return found


def mention_unfinished(home: Path, identity: Identity) -> None:
    for transcript in unfinished_games(home, identity):
        table = transcript.definition.table_id.hex()
        note = f"note: the game at table {table} (seat {transcript.seat}) did not end; "
        print(note + f"`belote-p2p resume --home {home}` continues it", file=sys.stderr)


# -- output -------------------------------------------------------------------------------


@dataclass
class Printer:
    """Prints a bot seat's game as it goes: rounds after their audit, the sheet at the end
    (a person's seat has the terminal UI, :mod:`belote_p2p.app.tui`)."""

    definition: TableDefinition
    seat: int
    quiet: bool = False
    out: IO[str] = sys.stdout
    _shown: dict[int, float] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.definition.seats)

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.out, flush=True)

    def __call__(self, event: Event) -> None:
        names = self.names
        if isinstance(event, TableReady):
            self.say("All four peers signed the table. Dealing.")
        elif isinstance(event, RoundAudited):
            self.say(format_round(event.record, names))
            if event.report.fault is not None:
                f = event.report.fault
                self.say(f"  audit: {names[f.seat]} {f.kind.value}: {f.reason} ({f.action})")
        elif isinstance(event, GameOver):
            self.say(format_sheet(event.state))
        elif isinstance(event, GameAbandoned):
            self.say(f"The game is abandoned: {names[event.seat]} (seat {event.seat}) left it.")
            self.say(format_sheet(event.state))
        elif isinstance(event, PeerFault):
            who = names[event.seat] if 0 <= event.seat < 4 else "?"
            self.say(f"Seat {event.seat} ({who}) broke the protocol: {event.reason}")
        elif isinstance(event, DecisionNeeded):
            pass

    def status(self, status: PeerStatus, *, every: float = 10.0) -> None:
        """A countdown line for each overdue seat: when it becomes overdue, then every
        ``every`` seconds."""
        shown = self._shown
        for wait in status.overdue:
            last = shown.get(wait.seat)
            if wait.seat != self.seat and (last is None or last - wait.abandon_in >= every):
                shown[wait.seat] = wait.abandon_in
                self.say(wait.describe())
        for seat in list(shown):
            if seat not in {w.seat for w in status.overdue}:
                del shown[seat]


class TimingLog:
    """``--timing-log DIR``: one JSON line per table event with its wall-clock time, for
    ``benchmarks/p2p_game.py`` (the clock is shared by processes on one machine)."""

    def __init__(self, directory: Path, seat: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._file = open(directory / f"seat{seat}.jsonl", "w")  # noqa: SIM115
        self._actions = 0

    def __call__(self, event: Event) -> None:
        now = time.time()
        row: dict[str, Any] | None = None
        if isinstance(event, TableReady):
            row = {"kind": "ready"}
        elif isinstance(event, ActionTaken):
            row = {
                "kind": "action",
                "index": self._actions,
                "seat": event.seat,
                "card": isinstance(event.action, Card),
            }
            self._actions += 1
        elif isinstance(event, RoundAudited):
            row = {"kind": "audited", "round": event.record.number}
        elif isinstance(event, GameOver):
            row = {"kind": "over"}
        if row is not None:
            row["t"] = now
            self._file.write(json.dumps(row) + "\n")

    def close(self) -> None:
        self._file.close()


def both(*callbacks: Callable[[Event], None]) -> Callable[[Event], None]:
    def call(event: Event) -> None:
        for callback in callbacks:
            callback(event)

    return call


def print_roster(definition: TableDefinition, seat: int) -> None:
    rules = definition.rules
    print(f"Table {definition.table_id.hex()}: {rules.name} to {rules.target}", flush=True)
    for i, s in enumerate(definition.seats):
        you = "  (you)" if i == seat else ""
        print(f"  seat {i}, team {i % 2}: {s.name} [{fingerprint(s.key)}] at {s.address}{you}")


def result_line(result: PeerResult, definition: TableDefinition, *, xp: int | None = None) -> str:
    data = {
        "seat": result.seat,
        "table": definition.table_id.hex(),
        "scores": list(result.state.scores),
        "ok": result.ok,
        "abandoned": result.abandoned,
        "resigned": result.resigned,
        "error": result.error
        or (result.fault and f"seat {result.fault.seat}: {result.fault.reason}"),
        "transcript": str(result.transcript),
        "xp": xp,
    }
    return RESULT_PREFIX + json.dumps(data)


def parse_result(output: str) -> dict[str, Any] | None:
    """The ``RESULT`` line of a peer's output, or None."""
    for line in reversed(output.splitlines()):
        if line.startswith(RESULT_PREFIX):
            try:
                data = json.loads(line[len(RESULT_PREFIX) :])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


# -- playing a seat -----------------------------------------------------------------------


@dataclass(frozen=True)
class SeatOptions:
    name: str
    home: Path
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

    def peer_config(self, seat: int) -> PeerConfig:
        bots = frozenset({seat}) if self.bot is not None else frozenset()
        return PeerConfig(
            person_deadline=self.person_deadline,
            bot_deadline=self.bot_deadline,
            bot_seats=bots,
            grace=self.grace,
        )


def make_bot(options: SeatOptions) -> Player | None:
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


def record_experience(home: Path, result: PeerResult, key: bytes) -> tuple[int | None, str]:
    """Record the game of ``result`` in ``<home>/profile.sqlite3``: the XP it gave our
    seat (None if nothing was recorded) and one line to print."""
    db = db_path(home)
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
) -> PeerResult:
    """Play ``seat`` with ``player`` (None: a person, through the terminal table), record
    the experience, and print the ``RESULT`` line."""
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
    timing = TimingLog(options.timing_log, seat) if options.timing_log else None
    callback = both(on_event, timing) if timing else on_event
    try:
        result = await run_peer(
            definition,
            seat,
            identity,
            player,
            transcript=transcript or transcript_path(options.home, definition, seat),
            listeners=listeners,
            on_event=callback,
            on_status=on_status,
            config=options.peer_config(seat),
            secrets=secret_store(options.home, definition, seat),
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


@dataclass
class BotProcess:
    number: int
    command: list[str]
    status: int | None = None
    output: str = ""
    hold_log: bool = False
    """Keep the process's log (stderr) off our terminal, where a person plays the
    terminal table; it is shown only if the process fails."""

    @property
    def result(self) -> dict[str, Any] | None:
        return parse_result(self.output)


async def run_bot_process(proc: BotProcess) -> None:
    completed = await trio.run_process(
        proc.command, capture_stdout=True, capture_stderr=proc.hold_log, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    proc.status = completed.returncode
    proc.output = completed.stdout.decode("utf-8", "replace")
    if proc.hold_log and completed.returncode != 0 and completed.stderr:
        tail = completed.stderr.decode("utf-8", "replace").splitlines()[-20:]
        print("\n".join(f"bot process {proc.number}: {line}" for line in tail), file=sys.stderr)


def bot_command(k: int, lobby: str, options: SeatOptions, bot: str) -> list[str]:
    cmd = [sys.executable, "-m", "belote_p2p", "join", lobby, "--bot", bot]
    cmd += ["--name", f"Bot{k}", "--home", str(options.home / "bots" / str(k))]
    cmd += ["--bind", options.bind, "--quiet", "--bot-deadline", str(options.bot_deadline)]
    cmd += ["--person-deadline", str(options.person_deadline), "--grace", str(options.grace)]
    if options.seed is not None:
        cmd += ["--seed", str(options.seed + k)]
    if options.timing_log is not None:
        cmd += ["--timing-log", str(options.timing_log)]
    return cmd


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


async def host_game(
    options: SeatOptions,
    rules: RuleSet,
    port: int,
    bots: int,
    *,
    beacon: BeaconAddress | None = None,
) -> int:
    """Host a table, optionally with ``bots`` local bot processes; the exit status.

    ``beacon``: where to announce the table (:func:`~belote_p2p.net.discovery.send_beacons`)
    while seats are free for others (None: not announced)."""
    identity = Identity.load_or_create(options.home)
    mention_unfinished(options.home, identity)
    player = make_bot(options)
    mesh_listener = await open_listener(options.bind, 0)
    lobby_listener = await open_listener(options.bind, port)
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
    bot = options.bot or "rules"
    procs = [
        BotProcess(
            k,
            bot_command(k, format_address(local, lobby_port), options, bot),
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
    async with trio.open_nursery() as nursery:
        for proc in procs:
            nursery.start_soon(run_bot_process, proc)
        if beacon is not None and bots < 3:
            say(f"Announcing the table on the local network ({format_address(*beacon)})")
            nursery.start_soon(announce, beacon)
        try:
            try:
                definition = await host_lobby(lobby, [lobby_listener], on_join=joined)
            finally:
                beacon_scope.cancel()
            last = table_beacon(0)
            if beacon is not None and bots < 3 and last is not None:
                await send_last_beacon(last, beacon)
            result = await play_seat(definition, 0, identity, player, [mesh_listener], options)
        except (LobbyError, PeerError) as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            nursery.cancel_scope.cancel()
        nursery.cancel_scope.deadline = trio.current_time() + BOT_PROCESS_GRACE
    if result is None:
        return 1
    status = exit_status(result)
    if result.resigned:
        return status  # the bots saw the game abandoned: nothing to compare
    for proc in procs:
        if proc.status != 0:
            print(f"error: bot process {proc.number} exited with {proc.status}", file=sys.stderr)
            status = 1
    if procs:
        status = max(status, check_agreement(result, [p.result for p in procs], options.quiet))
    return status


def check_agreement(
    result: PeerResult, others: Sequence[dict[str, Any] | None], quiet: bool
) -> int:
    """1 unless every bot process reported the host's final scores."""
    ours = list(result.state.scores)
    scores = [ours] + [r.get("scores") if r else None for r in others]
    if all(s == ours for s in scores) and all(r and r.get("ok") for r in others):
        if not quiet:
            print(f"All {len(scores)} peers agree: final scores {ours[0]}-{ours[1]}", flush=True)
        return 0
    print(f"error: the peers' final scores differ: {scores}", file=sys.stderr, flush=True)
    return 1


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
    player = make_bot(options)
    if address is None:
        address = await find_table(options, beacon, listen, ask)
        if address is None:
            return 2
    try:
        host, port = parse_address(address, DEFAULT_PORT)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    identity = Identity.load_or_create(options.home)
    mention_unfinished(options.home, identity)
    mesh_listener = await open_listener(options.bind, 0)
    if not options.quiet:
        print(f"Joining {format_address(host, port)} as {options.name} [{identity.fingerprint}]",
              flush=True)  # fmt: skip
    try:
        definition, seat = await join_table(
            host, port, options.name, identity.public_key_bytes, listener_port(mesh_listener),
            wait=DEFAULT_WAIT,
        )  # fmt: skip
        result = await play_seat(definition, seat, identity, player, [mesh_listener], options)
    except (LobbyError, PeerError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    return exit_status(result)


async def resume_game(options: SeatOptions, path: Path | None) -> int:
    """Go on with the game of ``path`` (default: the one unfinished game in the home)."""
    identity = Identity.load_or_create(options.home)
    if path is None:
        games = unfinished_games(options.home, identity)
        if not games:
            print(f"error: no unfinished game in {options.home / 'games'}", file=sys.stderr)
            return 2
        if len(games) > 1:
            print("error: several unfinished games; name one:", file=sys.stderr)
            for game in games:
                name = transcript_path(options.home, game.definition, game.seat)
                print(f"  belote-p2p resume {name}", file=sys.stderr)
            return 2
        game = games[0]
        path = transcript_path(options.home, game.definition, game.seat)
    else:
        try:
            game = read_transcript(path)
        except (OSError, TranscriptError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    definition, seat = game.definition, game.seat
    if definition.seats[seat].key != identity.public_key_bytes:
        print(f"error: {path} is seat {seat}'s, whose key is not {options.home}'s identity",
              file=sys.stderr)  # fmt: skip
        return 2
    if game_ended(game.envelopes, definition.roster):
        print(f"error: the game of {path} is over", file=sys.stderr)
        return 2
    if not options.quiet:
        print(f"Resuming table {definition.table_id.hex()}, seat {seat}, from {path} "
              f"({len(game.envelopes)} envelopes)", flush=True)  # fmt: skip
    player = make_bot(options)
    listeners = []
    if seat < 3:
        # The others know us at the address of the table definition: listen there again.
        _, port = parse_address(definition.seats[seat].address)
        listeners.append(await open_listener(options.bind, port))
    try:
        result = await play_seat(
            definition, seat, identity, player, listeners, options, transcript=path
        )
    except (PeerError, SecretStoreError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    return exit_status(result)


# -- the commands -------------------------------------------------------------------------


def _options(args: argparse.Namespace, home: Path | None = None) -> SeatOptions:
    return SeatOptions(
        name=check_name(args.name) if args.name is not None else "",  # resume: the table's
        home=home or (Path(args.home) if args.home else default_home()),
        bot=args.bot,
        seed=args.seed,
        bind=args.bind,
        quiet=args.quiet,
        timing_log=Path(args.timing_log) if args.timing_log else None,
        bot_deadline=args.bot_deadline,
        person_deadline=args.person_deadline,
        grace=args.grace,
        plain=args.plain,
    )


def beacon_address(text: str) -> BeaconAddress:
    """``IP[:PORT]`` (an IPv4 broadcast, multicast or unicast address; port 7778)."""
    host, port = parse_address(text, DEFAULT_BEACON_PORT)
    ipaddress.IPv4Address(host)  # ValueError if not
    return host, port


def _run(main: Callable[[], Any]) -> int:
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


def cmd_host(args: argparse.Namespace) -> int:
    try:
        options = _options(args)
        rules = rule_set(args.variant, target=args.target, first_dealer=args.first_dealer)
        beacon = beacon_address(args.beacon_address) if args.beacon else None
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not 0 <= args.bots <= 3:
        print("error: --bots is 0 to 3", file=sys.stderr)
        return 2
    return _run(lambda: host_game(options, rules, args.port, args.bots, beacon=beacon))


def cmd_join(args: argparse.Namespace) -> int:
    try:
        options = _options(args)
        beacon = beacon_address(args.beacon_address)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.listen <= 0:
        print("error: --listen is a positive number of seconds", file=sys.stderr)
        return 2
    return _run(lambda: join_game(options, args.address, beacon=beacon, listen=args.listen))


def cmd_resume(args: argparse.Namespace) -> int:
    try:
        options = _options(args)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = Path(args.transcript) if args.transcript else None
    return _run(lambda: resume_game(options, path))


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        rules = rule_set(args.variant, target=args.target)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="belote-p2p-demo-") as tmp:
        # Without --home the identities and transcripts go with the temporary directory.
        home = Path(args.home) if args.home else Path(tmp)
        options = SeatOptions(
            name="Bot0",
            home=home,
            bot=args.bot,
            seed=args.seed,
            bind="127.0.0.1",
            quiet=False,
            timing_log=None,
            bot_deadline=args.bot_deadline,
            person_deadline=args.person_deadline,
            grace=args.grace,
        )
        print(f"Demo: four {args.bot} bots, four processes, one table on 127.0.0.1", flush=True)
        status = _run(lambda: host_game(options, rules, 0, 3))
        if not args.home:
            print(
                "(The demo's identities, transcripts and profiles were in a temporary folder;"
                " run `belote-p2p demo --home DIR` to keep them.)",
                flush=True,
            )
        return status


def _common(p: argparse.ArgumentParser, *, seat: bool = True, name: bool = True) -> None:
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
    p.add_argument("--home", metavar="DIR", help=f"identity and transcripts ({default_home()})")
    p.add_argument("--bind", default="0.0.0.0", metavar="IP", help="address to listen on (0.0.0.0)")
    p.add_argument("--quiet", action="store_true", help="print only the RESULT line")
    p.add_argument(
        "--plain", action="store_true", help="plain lines, no colour (screen readers, logs)"
    )
    p.add_argument("--timing-log", metavar="DIR", help=argparse.SUPPRESS)


_DEFAULT_BEACON_TEXT = format_address(*DEFAULT_BEACON_ADDRESS)


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
    host.add_argument("--bots", type=int, default=0, metavar="N", help="start N bot peers")
    host.add_argument(
        "--first-dealer", type=int, default=0, choices=range(4), metavar="SEAT",
        help="the seat that deals the first round (0)",
    )  # fmt: skip
    host.add_argument(
        "--beacon", action=argparse.BooleanOptionalAction, default=True,
        help="announce the table on the local network while seats are free (on)",
    )  # fmt: skip
    host.add_argument("--beacon-address", default=_DEFAULT_BEACON_TEXT, metavar="IP[:PORT]",
                      help=f"where the beacons go ({_DEFAULT_BEACON_TEXT})")  # fmt: skip
    _common(host)
    host.set_defaults(func=cmd_host)

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
    join.add_argument("--beacon-address", default=_DEFAULT_BEACON_TEXT, metavar="IP[:PORT]",
                      help=f"where to listen for tables ({_DEFAULT_BEACON_TEXT})")  # fmt: skip
    join.add_argument(
        "--listen", type=float, default=DEFAULT_LISTEN, metavar="S",
        help=f"seconds to listen for tables ({DEFAULT_LISTEN:g})",
    )  # fmt: skip
    _common(join)
    join.set_defaults(func=cmd_join)

    resume = sub.add_parser(
        "resume",
        help="go on with a game after a crash",
        description="Resume this identity's unfinished game after a crash or a restart: the "
        "table and seat come from the transcript (default: the one unfinished game in "
        "--home), the peer listens again at its address, reconnects and plays on. Give the "
        "same --home and player (--bot) as before.",
    )
    resume.add_argument(
        "transcript", nargs="?", metavar="TRANSCRIPT", help="the game's transcript file"
    )
    _common(resume, name=False)
    resume.set_defaults(func=cmd_resume)

    demo = sub.add_parser(
        "demo",
        help="four bot processes play a game on this machine",
        description="Start four bot peers as four processes on 127.0.0.1, play a whole game "
        "over TCP and print it; exit 0 if every process did and the final scores agree.",
    )
    demo.add_argument("--variant", choices=variants, default="classic")
    demo.add_argument("--target", type=int, default=501, help="score that wins the game")
    demo.add_argument("--home", metavar="DIR", help="keep identities and transcripts here")
    _common(demo, seat=False)
    demo.set_defaults(func=cmd_demo, bot="rules")
