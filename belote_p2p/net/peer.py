"""One seat of a live game: a :class:`~belote_p2p.protocol.session.TableSession` driven over
the mesh.

:func:`run_peer` opens the TCP mesh to the other seats (three, or two or one), feeds every
frame they send to the session, broadcasts every envelope the session emits, records every
envelope the session accepted in the transcript (its own included, in acceptance order), and
answers the session's "your turn" through a :class:`Player`: a bot in a worker thread under
a deadline (:class:`BotPlayer`) or a person at the terminal
(:class:`~belote_p2p.app.tui.TuiPlayer`).

Failure policy. Unsigned bytes prove nothing against anyone. A frame the session refuses
(:class:`~belote_p2p.errors.RemoteProtocolError`: not a valid envelope of this table, a
malformed sync request) costs the connection that delivered it: it is logged, counted in
:attr:`PeerResult.rejected`, and that connection is dropped (the mesh drops one that sends an
oversized frame itself). The higher seat dials again and both sides sync, as after any lost
connection; the game goes on, and what the peer's connection did not bring comes through the
other peers' sync answers (they carry every seat's envelopes). Nothing of this ever ends the
game or counts against a seat: the only vote against a seat is for its silence past its
deadline and grace, as this peer's own clock measures them (below). A rule broken by a valid
envelope ends the game with :attr:`PeerResult.fault` (the session's
:class:`~belote_p2p.protocol.events.PeerFault`). If our own player fails (a closed terminal)
we resign, with :attr:`PeerResult.error`; a person who chose to leave (the terminal UI's
:class:`~belote_p2p.app.tui.Resigned`) resigns too, but that is no error:
:attr:`PeerResult.resigned`.

Sending never waits on a peer: the mesh gives each connection its own bounded queue and
drops a connection whose peer stops reading (:class:`~belote_p2p.net.transport.Mesh`), so a
slow or stuck peer does not slow the game between the others.

Time. Every seat that owes the next message has a deadline (:class:`PeerConfig`: a decision,
a protocol step); past it, the wait is reported (a log line, and :class:`PeerStatus` to
``on_status`` with the seconds left), and after a further grace period we sign the seat gone
(the session's ``abandon``): once all the others have signed it for the same point of its
chain, the seat is gone. At four seats its partner then plays its open hand (the session
asks us for the dummy's decisions when we are that partner: the same :class:`Player`
answers them, from the dummy's observation); otherwise, or once a second seat goes, the
game ends, abandoned by that seat. A deadline restarts only when the seat
delivers what it owes (``TableSession.progress``), never for filler. A vote the others do
not join (they heard from the seat meanwhile) is simply kept: this peer never stops itself
for it, it goes on syncing and playing, and votes again if the seat stalls again. A lost
connection is not a departure: the mesh reconnects (the higher seat dials
again), both sides send a sync request (``TableSession.sync_request``) and answer the
other's, and only silence past the deadline and grace counts. When the game makes no
progress for :attr:`PeerConfig.sync_interval`, we ask every peer for what we may lack.

Crash and resume. Each round's deck secrets are kept on disk before their first use
(:class:`~belote_p2p.protocol.secretstore.FileSecrets`; in a worker thread while the round
before is played, so that the round's start does not wait for the disk), and each envelope
is in the transcript (of our own, fsynced) before it leaves. A peer restarted on a
transcript that holds envelopes resumes the game from it (``TableSession.resume``): it
listens again at its address, the mesh reconnects, it sends its envelopes again and asks
for what it missed. It plays on as soon as one other seat is connected, not all of them: a
seat that left for good, or is down at the same time, may never come back (the deadlines
count its silence, as before the crash).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeAlias

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.game.engine import Action, Phase, State
from belote_p2p.game.observation import Observation, observe
from belote_p2p.i18n import _
from belote_p2p.players.player import Player, Resigned
from belote_p2p.protocol.bodies import parse_sync
from belote_p2p.protocol.budget import ByteBudget
from belote_p2p.protocol.events import DecisionNeeded, Event, PeerFault, RoundAudited, RoundDealt
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.secretstore import SecretStore
from belote_p2p.protocol.session import SessionError, TableSession, fresh_secrets
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import TranscriptError, TranscriptWriter, read_transcript
from belote_p2p.protocol.wire import Envelope

from .address import parse_address
from .relay import relay_fallback
from .transport import (
    AnyListener,
    ConnectionClosed,
    Mesh,
    MeshConfig,
    PeerConnected,
    PeerLost,
    Received,
)

logger = logging.getLogger(__name__)


_INPUT_BUFFER = 64
"""Inputs (frames, connection changes, decisions) held for the driver."""


class PeerError(BeloteError):
    """The game could not start: the mesh did not open (see ``__cause__``)."""


# -- the driver ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PeerConfig:
    connect_timeout: float = 60.0
    """Seconds for the other peers to be connected and authenticated (one of them, when the
    game is resumed)."""
    person_deadline: float = 60.0
    """Seconds a seat has for a decision (a bid or a card)."""
    bot_deadline: float = 10.0
    """The decision deadline of the seats in :attr:`bot_seats`."""
    bot_seats: frozenset[int] = frozenset()
    """Seats known to be bots. The table definition does not say which seats are bots, so
    every peer gives every seat :attr:`person_deadline` unless told otherwise."""
    step_deadline: float = 10.0
    """Seconds a seat has for a protocol step that needs no decision (its deck messages,
    its signature of the table, its final ``done``)."""
    grace: float = 120.0
    """Seconds after its deadline before the others sign a silent seat gone."""
    sync_interval: float = 2.0
    """Seconds without progress before we ask the peers for what we may lack."""
    sync_answer_interval: float = 0.5
    """Seconds between two sync requests of one peer that we answer on one connection: an
    answer can be the whole transcript, so a peer that keeps asking gets the rest ignored."""
    sync_answer_rate: float = 64 * 1024
    """Bytes per second of sync answers one seat may have from us, sustained, over all its
    connections (one that reconnects to ask again is answered within the same budget)."""
    sync_answer_burst: float = 2 * 1024 * 1024
    """Bytes of sync answers one seat may have at once above the rate (a whole transcript,
    for a peer that lost everything, is about half of it)."""
    status_interval: float = 1.0
    """Seconds between two :class:`PeerStatus` reports while the game waits."""
    report_interval: float = 10.0
    """Seconds between two log lines about the same overdue seat."""
    peer_timeout: float = 600.0
    """Seconds without progress, while nobody owes us anything, before giving up."""
    flush_timeout: float = 10.0
    """Seconds to hand our last envelopes to the peers before closing."""
    linger: float = 60.0
    """Seconds a finished peer keeps answering (reconnections, sync requests) while a peer
    has not yet said ``bye``, i.e. may still miss our ``done``."""
    durable: bool = True
    """fsync the transcript before any envelope of ours leaves (a power cut must not make
    us sign, after a resume, something other than what the peers already have)."""

    def decision_deadline(self, seat: int) -> float:
        return self.bot_deadline if seat in self.bot_seats else self.person_deadline


@dataclass(frozen=True, slots=True)
class SeatWait:
    """One seat the game waits on, as this peer sees it."""

    seat: int
    name: str
    decision: bool
    """It owes a decision (a bid or a card), rather than a protocol step."""
    connected: bool
    waited: float
    """Seconds since it owes the message."""
    deadline_in: float
    """Seconds left before its deadline (negative once past)."""
    abandon_in: float
    """Seconds left before the other seats sign it gone (its deadline plus the grace)."""

    @property
    def overdue(self) -> bool:
        return self.deadline_in <= 0

    def describe(self) -> str:
        """What we wait for from this seat, in the reader's language."""
        left = max(0, math.ceil(self.abandon_in))
        if self.connected:
            who = self.name
        else:
            who = _("{name}, disconnected").format(name=self.name)
        if self.overdue and self.abandon_in <= 0:
            # Our vote is signed; the game ends once every other seat signed it too.
            text = _(
                "waiting for seat {seat} ({who}): signed that it left, waiting for the other "
                "seats to sign it too"
            )
        elif self.overdue:
            text = _("waiting for seat {seat} ({who}): {left} s left")
        elif self.decision:
            text = _("waiting for seat {seat} ({who}): a decision")
        else:
            text = _("waiting for seat {seat} ({who}): a protocol step")
        return text.format(seat=self.seat, who=who, left=left)


@dataclass(frozen=True, slots=True)
class PeerStatus:
    """What the game waits on, for a countdown in the user interface (``on_status``)."""

    waiting_for: tuple[SeatWait, ...]
    """The seats owing the next message, ours included while our player decides."""
    disconnected: frozenset[int]
    """Seats whose connection is down (the mesh is reconnecting)."""

    @property
    def overdue(self) -> tuple[SeatWait, ...]:
        return tuple(w for w in self.waiting_for if w.overdue)


@dataclass(frozen=True, slots=True)
class PeerResult:
    seat: int
    state: State
    """This seat's final view of the game."""
    finished: bool
    """The game was played out and all four peers ended it with the same scores."""
    fault: PeerFault | None
    abandoned: int | None
    """The seat that left the game (resigned, vanished or went silent), if one did."""
    error: str | None
    """Why the game stopped early, when no peer broke a rule (timeout, lost peer...)."""
    transcript: Path
    envelopes: int
    """Envelopes in the transcript."""
    sent: int
    """Envelopes we sent (each to the three peers)."""
    sent_bytes: int
    """Their bytes (each counted once)."""
    rejected: tuple[int, ...] = (0, 0, 0, 0)
    """Invalid frames received, by the seat whose connection delivered them (one count per
    seat of the table; each cost that connection; none ends the game)."""
    resumed: bool = False
    """The game went on from a transcript written before (a restart after a crash)."""
    reconnections: int = 0
    """Connections that came back after being lost."""
    sync_ignored: int = 0
    """Sync requests ignored because the same peer asked again too soon, or answered short
    because it had used up its byte budget (:attr:`PeerConfig.sync_answer_burst`)."""
    resigned: bool = False
    """Our player chose to leave the game (the game is abandoned by our seat; not an
    error)."""
    relayed: int = 0
    """Connections that went through a relay."""
    left: int | None = None
    """The seat that left while the game went on, its partner playing its open hand (ours:
    our game ended there, the others played on)."""

    @property
    def ok(self) -> bool:
        return self.finished


class PeerControl:
    """What a user interface asks of a running peer besides its decisions: to resign at
    any moment (:meth:`resign`), to say a line of chat (:meth:`chat`). Hand it to
    :func:`run_peer`; it may be made, and called, before the peer runs (the requests wait)."""

    def __init__(self) -> None:
        self._requests: list[tuple[str, str]] = []
        self._wake: Callable[[], None] | None = None

    def resign(self) -> None:
        """Leave the game: the seat signs its own departure (before the table is signed,
        the peer just stops)."""
        self._request("resign", "")

    def chat(self, text: str) -> None:
        """Say ``text`` to the table (see ``TableSession.chat``; refused lines are logged)."""
        self._request("chat", text)

    def _request(self, kind: str, text: str) -> None:
        self._requests.append((kind, text))
        if self._wake is not None:
            self._wake()

    def _take(self) -> list[tuple[str, str]]:
        out, self._requests = self._requests, []
        return out


@dataclass(frozen=True, slots=True)
class _Poke:
    """The control has requests waiting."""


@dataclass(frozen=True, slots=True)
class _Decided:
    observation: Observation
    action: Action


@dataclass(frozen=True, slots=True)
class _PlayerFailed:
    error: BaseException


_Input: TypeAlias = Received | PeerLost | PeerConnected | _Decided | _PlayerFailed | _Poke


@dataclass
class _Counters:
    sent: int = 0
    sent_bytes: int = 0
    rejected: list[int] = field(default_factory=list)
    """One count per seat of the table."""
    reconnections: int = 0
    sync_ignored: int = 0
    relayed: int = 0


class _SecretsAhead:
    """The seat's secret store, each round's secrets kept ahead of their round.

    A save waits for the disk (:class:`~belote_p2p.protocol.secretstore.FileSecrets` fsyncs
    a file and its directory): made when the round starts, it held our key of every round,
    and with it the round's first shuffle, after the audit. The driver keeps the next
    round's secrets in a worker thread while this one is played (:meth:`keep`); the lock
    makes the session's own load or save wait for a save in flight, never race it."""

    def __init__(self, store: SecretStore) -> None:
        self.store = store
        self._lock = threading.Lock()

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        with self._lock:
            return self.store.load(round_number)

    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None:
        with self._lock:
            self.store.save(round_number, secret_key, shuffle_seed)

    def keep(self, round_number: int) -> None:
        """Keep fresh secrets for ``round_number``, unless some are kept already (a round
        that is never played keeps them unused)."""
        with self._lock:
            if self.store.load(round_number) is None:
                self.store.save(round_number, *fresh_secrets())


def open_session(
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    transcript: Path,
    secrets: SecretStore,
    proposal: bytes | None = None,
) -> tuple[TableSession, tuple[bytes, ...]]:
    """The seat's session and the envelopes already in ``transcript``: a new session (which
    signs the table with the host's ``proposal``), or, if the transcript holds envelopes of
    this table and seat, the one they and ``secrets`` rebuild (a resume after a crash).

    Raises :class:`PeerError` if the transcript is another table's or cannot be resumed, or
    if a new session of a joiner has no valid proposal.
    """

    def new() -> TableSession:
        try:
            return TableSession(definition, seat, identity, secrets=secrets, proposal=proposal)
        except SessionError as exc:
            raise PeerError(f"seat {seat}: {exc}") from exc

    def overlapping(session: TableSession) -> TableSession:
        session.overlap = True  # the driver does the session's work when no input waits
        return session

    if not (transcript.exists() and transcript.stat().st_size > 0):
        return overlapping(new()), ()
    try:
        record = read_transcript(transcript)
    except TranscriptError as exc:
        raise PeerError(f"cannot resume from {transcript}: {exc}") from exc
    if record.definition != definition or record.seat != seat:
        raise PeerError(f"{transcript} is the transcript of another table or seat")
    if not record.envelopes:
        return overlapping(new()), ()
    try:
        session = TableSession.resume(definition, seat, identity, record.envelopes, secrets)
    except (SessionError, RemoteProtocolError) as exc:
        raise PeerError(f"cannot resume from {transcript}: {exc}") from exc
    return overlapping(session), record.envelopes


async def run_peer(
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    player: Player,
    *,
    transcript: Path,
    listeners: Sequence[AnyListener] | None = None,
    on_event: Callable[[Event], None] | None = None,
    on_status: Callable[[PeerStatus], None] | None = None,
    mesh_config: MeshConfig | None = None,
    secrets: SecretStore,
    proposal: bytes | None = None,
    config: PeerConfig | None = None,
    control: PeerControl | None = None,
    relay: tuple[str, int] | None = None,
    on_mesh: Callable[[Mesh], None] | None = None,
    host_address: tuple[str, int] | None = None,
    on_step: Callable[[Sequence[Envelope]], None] | None = None,
) -> PeerResult:
    """Play ``seat`` of the table ``definition`` to the end; see the module docstring.

    If ``transcript`` already holds envelopes of this table and seat, the game is resumed
    from them (and from ``secrets``): our envelopes are sent again and the peers asked for
    what we missed. ``secrets`` keeps each round's deck secrets before their first use (a
    :class:`~belote_p2p.protocol.secretstore.FileSecrets`, so that a crash loses none).
    ``proposal`` is the host's signature of the definition (from the lobby), which a new
    seat repeats when it signs the table; the host (seat 0) makes its own.

    ``listeners`` are our mesh listeners when already open (the lobby opens them first, to
    announce their port; ``[]``: we accept no direct connection); otherwise we listen at our
    seat's address (none if it is empty: a seat that does not listen). ``relay`` is the
    relay (``host, port``) through which the seats that cannot connect directly are
    reached (:mod:`belote_p2p.net.relay`); ``on_mesh`` sees the mesh before it runs (the
    host's port hands it the connections it accepts). ``host_address`` is where we reached
    the host's port (its lobby): the mesh dials seat 0 there rather than at the address the
    host saw itself at (behind a router, its own private address). ``on_event`` sees
    every session event as it happens (for printing), ``on_status`` what the game waits
    on, about every second while it waits; ``control`` lets a user interface resign or
    chat at any moment. ``on_step`` sees, after each step of the session (a frame received,
    an action, a timer), the envelopes it accepted, ours included (``benchmarks/p2p_game.py``
    derives each step's CPU and dependencies from them). Raises :class:`PeerError` if the
    mesh does not open or the transcript cannot be resumed; every later failure is in the
    result.
    """
    config = config or PeerConfig()
    ahead = _SecretsAhead(secrets)
    session, recorded = open_session(definition, seat, identity, transcript, ahead, proposal)
    resumed = bool(recorded)
    seats = len(definition.seats)
    addresses = {s: seat_address(definition, s) for s in range(seats)}
    if host_address is not None and addresses[0] is not None:
        addresses[0] = host_address
    if seat == seats - 1 and listeners:
        # The last seat only dials; the listener the lobby made it open is not needed.
        for listener in listeners:
            await listener.aclose()
        listeners = None
    # The mesh hands its events straight to the driver's inputs (no task in between).
    inputs = trio.open_memory_channel[_Input](_INPUT_BUFFER)
    mesh = Mesh(
        identity, definition.table_id, seat, definition.roster, mesh_config,
        events=inputs[0].clone(),
    )  # fmt: skip
    fallback = None
    if relay is not None and session.proposal is not None:
        fallback = relay_fallback(
            relay, identity, definition, session.proposal, seat, max_frame=mesh.config.max_frame
        )
    if on_mesh is not None:
        on_mesh(mesh)
    failure: BaseException | None = None
    with TranscriptWriter(transcript, definition, seat) as writer:
        driver = _Driver(
            session, seat, player, writer, config, on_event, on_status, recorded, control,
            on_step, inputs=inputs, secrets=ahead,
        )  # fmt: skip
        async with trio.open_nursery() as nursery:
            try:
                # A new game waits for every seat; a resumed one plays on once one other
                # seat is there: a seat gone for good (or down at the same time as us)
                # never connects, and waiting for it would end our seat too. What the
                # absent seats owe, the deadlines count, as for any silent seat.
                opens_with = 1 if resumed else None
                with trio.fail_after(config.connect_timeout):
                    await nursery.start(
                        partial(
                            mesh.run, addresses, listeners=listeners, fallback=fallback,
                            opens_with=opens_with,
                        )
                    )  # fmt: skip
            except Exception as exc:  # a timeout, DialFailed, a failed handshake, OSError...
                failure = exc
                mesh.close()
            else:
                try:
                    await driver.play(mesh)
                finally:
                    mesh.close()
    if failure is not None:
        absent = sorted(mesh.never_connected)
        late = f"{_seats_named(definition, absent)} did not connect in {config.connect_timeout:g} s"
        why = _explain(failure, late)
        raise PeerError(f"seat {seat}: the mesh did not open: {why}") from failure
    c = driver.counters
    return PeerResult(
        seat=seat,
        state=session.state,
        finished=session.completed and driver.error is None,
        fault=session.fault,
        abandoned=session.abandoned,
        error=driver.error or (session.disputed.reason if session.disputed else None),
        transcript=transcript,
        envelopes=driver.written,
        sent=c.sent,
        sent_bytes=c.sent_bytes,
        rejected=tuple(c.rejected),
        resumed=resumed,
        reconnections=c.reconnections,
        sync_ignored=c.sync_ignored,
        resigned=driver.resigned,
        relayed=c.relayed,
        left=session.dummy,
    )


def seat_address(definition: TableDefinition, seat: int) -> tuple[str, int] | None:
    """Where ``seat`` listens for the mesh; None for a seat that does not listen (its
    address is empty: only a relay reaches it)."""
    text = definition.seats[seat].address
    return parse_address(text) if text else None


def _explain(exc: BaseException, late: str) -> str:
    """The leaf errors of ``exc`` (trio wraps a task's failure in exception groups); a
    timeout as ``late`` (who did not connect)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_explain(e, late) for e in exc.exceptions)
    if isinstance(exc, trio.TooSlowError):
        return late
    return str(exc) or repr(exc)


def _seats_named(definition: TableDefinition, seats: Sequence[int]) -> str:
    """``Bob (seat 1) and Carol (seat 3)``; ``the other peers`` for none."""
    named = [f"{definition.seats[s].name} (seat {s})" for s in seats]
    if not named:
        return "the other peers"
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


class _Driver:
    """Moves one seat's session: inputs in, envelopes out, and the clock (deadlines)."""

    def __init__(
        self,
        session: TableSession,
        seat: int,
        player: Player,
        writer: TranscriptWriter,
        config: PeerConfig,
        on_event: Callable[[Event], None] | None,
        on_status: Callable[[PeerStatus], None] | None = None,
        recorded: Sequence[bytes] = (),
        control: PeerControl | None = None,
        on_step: Callable[[Sequence[Envelope]], None] | None = None,
        *,
        inputs: tuple[trio.MemorySendChannel[_Input], trio.MemoryReceiveChannel[_Input]]
        | None = None,
        secrets: _SecretsAhead | None = None,
    ) -> None:
        self.session = session
        self.secrets = secrets
        """The session's store, when we keep each round's secrets ahead of it."""
        self.on_step = on_step
        """Sees the envelopes each step accepted (``run_peer``'s ``on_step``)."""
        self.control = control
        self.seat = seat
        self.player = player
        self.writer = writer
        self.config = config
        self.on_event = on_event
        self.on_status = on_status
        self.counters = _Counters(rejected=[0] * session.seats)
        self.error: str | None = None
        self.resigned = False
        """Our player resigned (a person's choice, not an error)."""
        self.done_from: set[int] = set()
        self.disconnected: set[int] = set()
        self._resuming = bool(recorded)
        # What is already in the transcript file (a resumed session accepts it all again).
        self._on_disk = {hashlib.sha256(data).digest() for data in recorded}
        self.written = len(recorded)
        self._synced = -1
        """:attr:`written` at our last fsync of the transcript (none yet: -1)."""
        self._index = 0
        self._deciding_since: float | None = None
        self._replies: list[tuple[int, bytes]] = []
        self._sync_answered: dict[int, tuple[int, float]] = {}
        """The connection on which we last answered each seat's sync request, and when."""
        self._sync_budgets: dict[int, ByteBudget] = {}
        """The bytes of sync answers each seat may still have (across its connections)."""
        # The clock: when each seat started owing its current message, and of what kind.
        self._owes: dict[int, tuple[bool, float]] = {}
        self._delivered = [0] * session.seats
        self._quit = False
        self._length = -1
        self._last_progress = 0.0
        self._last_sync = -math.inf
        self._last_status = -math.inf
        self._last_report: dict[int, float] = {}
        self._status_key: object = None
        # Bounded: a peer flooding us is read no faster than the session takes its frames.
        # The mesh sends its events here itself (``run_peer``), our player its decisions.
        self._inputs_in, self._inputs_out = inputs or trio.open_memory_channel[_Input](
            _INPUT_BUFFER
        )
        self._links: dict[int, int] = {}
        """The number of each seat's current connection."""
        self._nursery: trio.Nursery | None = None
        self._mesh: Mesh | None = None

    async def play(self, mesh: Mesh) -> None:
        session = self.session
        self._last_progress = trio.current_time()
        self._mesh = mesh
        if self.control is not None:
            self.control._wake = self._poke
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.player.new_game(session.definition.rules, self.seat)
            if not session.started:
                self._keep_secrets_ahead(session.state.number)  # while the table is signed
                session.start()
            self._step()
            self._controlled()
            while not session.finished and self.error is None and not self._quit:
                if session.has_work:
                    await trio.lowlevel.checkpoint()  # the connections hand over what came in
                    if not self._inputs_out.statistics().current_buffer_used:
                        # Idle: the checks put off so that our shuffle left first.
                        session.work()
                        self._step()
                        continue
                with trio.move_on_after(self._tick()):
                    item = await self._inputs_out.receive()
                    self._handle(item)
                    self._step()
                self._controlled()
                self._clock(trio.current_time())
                self._step()
            # Finished: stay reachable until every peer has said it holds the whole game, so
            # that one that lost our ``done`` on a dropped connection can still get it.
            with trio.move_on_after(0 if self._quit else self.config.linger):
                while not session.closed and self.error is None and not self._quit:
                    with trio.move_on_after(self.config.sync_interval) as idle:
                        item = await self._inputs_out.receive()
                        self._handle(item)
                    if idle.cancelled_caught:
                        # A ``bye`` may have been lost on the way (a relay may drop frames):
                        # ask for it, as during the game.
                        request = session.sync_request()
                        others = [s for s in range(session.seats) if s != self.seat]
                        self._replies += [(s, request) for s in others]
                    self._controlled()
                    self._step()
            # Our last envelopes (the ``done`` above all) must reach the peers before we close.
            with trio.move_on_after(self.config.flush_timeout):
                await mesh.flush()
            nursery.cancel_scope.cancel()

    def _poke(self) -> None:
        with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
            self._inputs_in.send_nowait(_Poke())

    def _controlled(self) -> None:
        """Take the control's requests (a resignation, chat lines)."""
        if self.control is None:
            return
        session = self.session
        for kind, text in self.control._take():
            if kind == "resign":
                if session.finished:
                    self._quit = True  # over already: stop lingering
                    continue
                self.resigned = True
                self._deciding_since = None
                if session.ready and not session.finished:
                    logger.info("seat %d: our player resigned", self.seat)
                    self.session.abandon(self.seat)
                elif not session.ready:
                    self._quit = True  # no game to leave yet
            elif kind == "chat":
                try:
                    session.chat(text)
                except SessionError as exc:
                    logger.warning("seat %d: chat not sent: %s", self.seat, exc)
        self._step()

    def _tick(self) -> float:
        return min(self.config.status_interval, self.config.sync_interval)

    # -- inputs ---------------------------------------------------------------------------

    def _handle(self, item: _Input) -> None:
        session = self.session
        if isinstance(item, Received):
            if self._too_soon_for_sync(item):
                self.counters.sync_ignored += 1
                return
            try:
                replies = session.receive(item.payload)
            except RemoteProtocolError as exc:
                self._reject(item, exc)
                return
            replies = self._within_sync_budget(item.seat, replies)
            self._replies += [(item.seat, reply) for reply in replies]
        elif isinstance(item, PeerConnected):
            self._links[item.seat] = item.connection
            if item.relayed:
                self.counters.relayed += 1
            if item.seat in self.disconnected or item.reconnected:
                self.counters.reconnections += 1
                logger.warning(
                    _("seat {seat}: seat {other} is back").format(seat=self.seat, other=item.seat)
                )
            self.disconnected.discard(item.seat)
            # Whatever either side missed meanwhile comes back through sync requests.
            self._replies.append((item.seat, session.sync_request()))
        elif isinstance(item, PeerLost):
            if item.refused:  # an oversized frame: the mesh dropped the connection itself
                self.counters.rejected[item.seat] += 1
            if self._links.get(item.seat, item.connection) != item.connection:
                return  # an older connection, already replaced
            if item.seat in self.done_from or session.finished:
                return
            self.disconnected.add(item.seat)
            logger.warning(
                _(
                    "seat {seat} lost the connection to seat {other} ({reason}); waiting for it "
                    "to reconnect"
                ).format(seat=self.seat, other=item.seat, reason=item.reason)
            )
        elif isinstance(item, _Poke):
            pass  # the control's requests are taken after every input
        elif isinstance(item, _Decided):
            self._deciding_since = None
            try:
                session.act(item.action)
            except SessionError as exc:
                logger.warning("seat %d: our decision was not taken: %s", self.seat, exc)
        else:
            self._deciding_since = None
            if isinstance(item.error, Resigned) and session.ready:
                logger.info("seat %d: our player resigned", self.seat)
                self.resigned = True
            else:
                self.error = f"the player failed: {item.error!r}"
            if session.ready:
                self.session.abandon(self.seat)  # resign, so that the others need not wait for us

    def _reject(self, item: Received, exc: RemoteProtocolError) -> None:
        """A frame the session refused: it costs the connection that delivered it, and
        nothing else (unsigned bytes prove nothing against anyone)."""
        self.counters.rejected[item.seat] += 1
        reason = f"it sent an invalid frame ({exc})"
        if self._mesh is not None and self._mesh.disconnect(
            item.seat, reason, connection=item.connection
        ):
            logger.warning(
                "seat %d: dropping the connection to seat %d: %s",
                self.seat, item.seat, reason,
            )  # fmt: skip
        else:
            logger.debug("seat %d: an invalid frame from seat %d: %s", self.seat, item.seat, exc)

    def _too_soon_for_sync(self, item: Received) -> bool:
        """A sync request from a peer we answered a moment ago on the same connection (a
        flood of them). The first one on a new connection is answered: the last answer may
        have been lost with the old one; a peer that reconnects to ask again is bounded by
        its byte budget instead (:meth:`_within_sync_budget`)."""
        try:
            is_sync = parse_sync(item.payload) is not None
        except RemoteProtocolError:
            return False  # malformed: ``receive`` refuses and counts it
        if not is_sync:
            return False
        now = trio.current_time()
        last = self._sync_answered.get(item.seat)
        if (
            last is not None
            and last[0] == item.connection
            and now - last[1] < self.config.sync_answer_interval
        ):
            return True
        self._sync_answered[item.seat] = (item.connection, now)
        return False

    def _within_sync_budget(self, seat: int, replies: list[bytes]) -> list[bytes]:
        """What of an answer to ``seat`` (only sync requests have one) its byte budget
        covers, across all its connections (PROTOCOL.md §6.4); the rest is dropped, and
        an honest peer asks again, later, for what it still lacks."""
        if not replies:
            return replies
        now = trio.current_time()
        budget = self._sync_budgets.get(seat)
        if budget is None:
            config = self.config
            budget = ByteBudget.full(config.sync_answer_rate, config.sync_answer_burst, now)
            self._sync_budgets[seat] = budget
        for k, reply in enumerate(replies):
            if not budget.spend(len(reply), now):
                self.counters.sync_ignored += 1
                return replies[:k]
        return replies

    # -- the clock ------------------------------------------------------------------------

    def _owed(self) -> dict[int, bool]:
        """The seats owing the next message (ours while our player decides), each with
        True if what it owes is a decision."""
        session = self.session
        waiting, decision = session.waits()
        # The dummy's decisions are its partner's (``waiting_for`` names the partner).
        actor = session.actor(session.state.to_act)
        owed = {s: decision and s == actor for s in waiting if s != self.seat}
        if self._deciding_since is not None:
            owed[self.seat] = True
        return owed

    def _clock(self, now: float) -> None:
        """Deadlines, sync requests and status reports, as of ``now``."""
        session = self.session
        if session.finished or self.error is not None:
            return
        config = self.config
        length = len(session.transcript)
        if length != self._length:
            self._length = length
            self._last_progress = now
        # What each seat delivered: its deadline restarts only when that grows (filler such
        # as chat, fault reports, votes or envelopes held for a later round restarts nothing).
        delivered = [session.progress(s) for s in range(session.seats)]
        owed = self._owed()
        for s in list(self._owes):
            if s not in owed:
                del self._owes[s]
        for s, decision in owed.items():
            kept = self._owes.get(s)
            if s == self.seat and self._deciding_since is not None:
                self._owes[s] = (True, self._deciding_since)
            elif kept is None or kept[0] != decision or delivered[s] != self._delivered[s]:
                # It owes something new (it sent a message, or the wait changed kind).
                self._owes[s] = (decision, now)
        self._delivered = delivered
        waits = []
        for s, (decision, since) in sorted(self._owes.items()):
            deadline = config.decision_deadline(s) if decision else config.step_deadline
            if s != self.seat and since > now - deadline and session.others_voted(s):
                # Another seat already signed it gone at this point: it waited out the
                # deadline on its own clock (ours may have started only now, on a resume),
                # so we wait for it at most the grace from here (PROTOCOL.md §6.6).
                since = now - deadline
                self._owes[s] = (decision, since)
            waits.append(
                SeatWait(
                    seat=s,
                    name=session.definition.seats[s].name,
                    decision=decision,
                    connected=s == self.seat or s not in self.disconnected,
                    waited=now - since,
                    deadline_in=since + deadline - now,
                    abandon_in=since + deadline + config.grace - now,
                )
            )
        self._report(now, waits)
        for wait in waits:
            if wait.seat == self.seat or wait.abandon_in > 0:
                continue
            if not session.ready:
                self.error = f"seat {wait.seat} did not sign the table in {wait.waited:.0f} s"
                return
            if self.session.abandon(wait.seat):
                # Kept if the others do not sign it too (they may have heard from the seat):
                # we never stop ourselves for it, we go on syncing and playing, and the vote
                # lapses once the seat delivers (PROTOCOL.md §6.6).
                logger.warning(
                    _("seat {seat}: seat {other} ({name}) silent for {seconds} s: signing that it "
                      "left").format(
                        seat=self.seat, other=wait.seat, name=wait.name, seconds=round(wait.waited)
                    )
                )  # fmt: skip
        stalled = now - self._last_progress
        if stalled >= config.sync_interval and now - self._last_sync >= config.sync_interval:
            # No progress for a while: ask every peer for what we may lack.
            self._last_sync = now
            request = session.sync_request()
            self._replies += [(s, request) for s in range(session.seats) if s != self.seat]
        if not waits and stalled >= config.peer_timeout:
            self.error = f"the game made no progress for {stalled:.0f} s"

    def _report(self, now: float, waits: list[SeatWait]) -> None:
        for wait in waits:
            if not wait.overdue or wait.seat == self.seat:
                self._last_report.pop(wait.seat, None)
                continue
            last = self._last_report.get(wait.seat)
            if last is None or now - last >= self.config.report_interval:
                self._last_report[wait.seat] = now
                logger.warning(
                    _("seat {seat}: {waiting}").format(seat=self.seat, waiting=wait.describe())
                )
        if self.on_status is None:
            return
        key = (tuple((w.seat, w.decision) for w in waits), frozenset(self.disconnected))
        if key != self._status_key or now - self._last_status >= self.config.status_interval:
            self._status_key = key
            self._last_status = now
            self.on_status(PeerStatus(tuple(waits), frozenset(self.disconnected)))

    # -- outputs --------------------------------------------------------------------------

    def _step(self) -> None:
        """Record, send and report whatever the session produced.

        Every envelope is in the transcript file (flushed, and fsynced if it is ours)
        before anything leaves for the peers."""
        session = self.session
        transcript = session.transcript
        if (
            self._index == len(transcript)
            and not self._replies
            and not session.has_output
            and not self._resuming
        ):
            # Nothing new (the loop steps after each input, control and clock): only say
            # so to ``on_step``, which charges this step's CPU to it, not to the next one.
            if self.on_step is not None:
                self.on_step(())
            return
        ours = False
        for envelope in transcript[self._index :]:
            sender = session.tracker.seat_of(envelope.sender)
            if envelope.body.get("type") == "done":
                self.done_from.add(sender)
            if envelope.hash in self._on_disk:
                continue
            self.writer.append(envelope.encode())
            self.written += 1
            ours = ours or sender == self.seat
        if self.on_step is not None:
            self.on_step(transcript[self._index :])
        self._index = len(transcript)
        if ours and self.config.durable:
            self._sync()
        self._send(session.take_outbox(), self._replies)
        self._replies.clear()
        dealt = False
        for event in session.take_events():
            if isinstance(event, RoundAudited) and self._synced != self.written:
                # The round is on disk (once: the step that audits usually sends our key of
                # the next round, fsynced already, and an fsync waits for the disk).
                self._sync()
            if self.on_event is not None:
                self.on_event(event)
            if isinstance(event, RoundDealt):
                dealt = True
                if not self._resuming:
                    self._keep_secrets_ahead(event.number + 1)
                    self.player.new_round(observe(session.state, self.seat))
            elif isinstance(event, DecisionNeeded):
                assert self._nursery is not None
                self._deciding_since = trio.current_time()
                self._nursery.start_soon(self._decide, event.observation)
        if self._resuming:
            # The replay of a resumed game dealt every round again: only the last matters.
            self._resuming = False
            if dealt and session.state.phase not in (Phase.DEAL, Phase.GAME_OVER):
                self._keep_secrets_ahead(session.state.number + 1)
                self.player.new_round(observe(session.state, self.seat))

    def _keep_secrets_ahead(self, round_number: int) -> None:
        if self.secrets is not None and self._nursery is not None:
            self._nursery.start_soon(self._keep_secrets, self.secrets, round_number)

    async def _keep_secrets(self, secrets: _SecretsAhead, round_number: int) -> None:
        try:
            # Not abandoned on cancel: a save in flight finishes (the file stays whole).
            await trio.to_thread.run_sync(secrets.keep, round_number)
        except Exception as exc:  # the session tries again itself when the round starts
            logger.warning(
                "seat %d: could not keep the secrets of round %d ahead: %s",
                self.seat, round_number + 1, exc,
            )  # fmt: skip

    def _sync(self) -> None:
        self.writer.sync()
        self._synced = self.written

    async def _decide(self, observation: Observation) -> None:
        try:
            action = await self.player.decide(observation)
        except Exception as exc:
            await self._inputs_in.send(_PlayerFailed(exc))
        else:
            await self._inputs_in.send(_Decided(observation, action))

    def _send(self, envelopes: Sequence[bytes], replies: Sequence[tuple[int, bytes]]) -> None:
        """Queue our envelopes for every peer and the replies for their seats (never waits:
        a peer that does not read loses its connection, not our time)."""
        mesh = self._mesh
        assert mesh is not None, "the driver sends only while it plays"
        for payload in envelopes:
            mesh.broadcast(payload)
            self.counters.sent += 1
            self.counters.sent_bytes += len(payload)
        for target, payload in replies:
            with contextlib.suppress(ConnectionClosed):
                mesh.send(target, payload)
