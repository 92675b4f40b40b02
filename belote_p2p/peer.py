"""One seat of a live game: a :class:`~belote_p2p.session.TableSession` driven over the mesh.

:func:`run_peer` opens the TCP mesh to the three other seats, feeds every frame they send to
the session, broadcasts every envelope the session emits, records every envelope the session
accepted in the transcript (its own included, in acceptance order), and answers the
session's "your turn" through a :class:`Player`: a bot in a worker thread under a deadline
(:class:`BotPlayer`) or a person at the terminal (:class:`TerminalPlayer`).

Failure policy. Bytes that are not a valid envelope of this table
(:class:`~belote_p2p.wire.RemoteProtocolError`) are logged, counted and dropped: the mesh is
authenticated, so they come from a seated peer, and dropping them never lets them into the
record; more than :attr:`PeerConfig.max_rejected` of them from one peer ends the game for this
seat with :attr:`PeerResult.error`. A seat whose connection is lost, or that stays silent past
:attr:`PeerConfig.peer_timeout` while the game waits on it, is signed as gone (the session's
``abandon``); the game ends, abandoned by that seat, when the three others have signed it, and
with :attr:`PeerResult.error` if they do not within another timeout. If our own player fails
(a closed terminal) we resign. A rule broken by a valid envelope ends the game with
:attr:`PeerResult.fault` (the session's :class:`~belote_p2p.session.PeerFault`). The
transcript keeps everything accepted up to the end.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Protocol, TypeAlias

import trio

from .bots import FallbackCounts, SafePlayer, make_bot
from .cards import Card, format_cards
from .engine import Action, Bid, Phase, State
from .identity import Identity
from .lobby import parse_address
from .observation import Observation, observe
from .rules import RuleSet
from .session import (
    DecisionNeeded,
    Event,
    PeerFault,
    RoundAudited,
    RoundDealt,
    SessionError,
    TableDefinition,
    TableSession,
)
from .tables import trump_letter
from .transcript import TranscriptWriter
from .transport import AnyListener, ConnectionClosed, Mesh, MeshConfig, PeerLost, Received
from .wire import SEATS, RemoteProtocolError

logger = logging.getLogger(__name__)


class PeerError(Exception):
    """The game could not start: the mesh did not open (see ``__cause__``)."""


# -- players ------------------------------------------------------------------------------


class Player(Protocol):
    """Who answers this seat's turns."""

    def start(self, rules: RuleSet, seat: int) -> None:
        """The game begins."""

    def round_dealt(self, observation: Observation) -> None:
        """A round was dealt; ``observation`` shows the new hand."""

    async def decide(self, observation: Observation) -> Action:
        """One of ``observation.legal``."""
        ...


class BotPlayer:
    """A bot (``name[:key=value...]``), called in a worker thread under a deadline.

    An illegal answer, an exception or a timeout becomes a seeded random legal action
    (:func:`belote_p2p.bots.call_bot`), counted in :attr:`counts`.
    """

    def __init__(self, spec: str, *, deadline: float = 10.0, seed: int | None = None) -> None:
        self.spec = spec
        self.deadline = deadline
        self.rng = random.Random(seed if seed is not None else random.SystemRandom().random())
        self._fallback = random.Random(self.rng.random())
        self.safe = SafePlayer(
            make_bot(spec), name=spec, deadline_s=deadline, fallback=self._fallback
        )

    @property
    def counts(self) -> FallbackCounts:
        return self.safe.counts

    def start(self, rules: RuleSet, seat: int) -> None:
        self.safe.new_game(rules, seat)

    def round_dealt(self, observation: Observation) -> None:
        if self.safe.wants_new_round:
            self.safe.new_round(observation)

    async def decide(self, observation: Observation) -> Action:
        decide = partial(self.safe.decide, observation, self.rng)
        # call_bot enforces the deadline itself; the outer one only guards against a hang
        # in the thread machinery, and then plays what call_bot would have.
        with trio.move_on_after(self.deadline + 5.0):
            return await trio.to_thread.run_sync(decide, abandon_on_cancel=True)
        self.safe.counts.timeouts += 1
        return self._fallback.choice(observation.legal)


def parse_action(text: str, legal: Sequence[Action]) -> Action:
    """What a person typed, as one of ``legal``: its number in the list (from 1), a card
    (``JH``, ``jh``, ``10h``) or a bid (``pass``, ``take``, ``H``, ``90 H``, ``coinche``).
    Raises ``ValueError`` saying why it is not a legal action."""
    text = text.strip()
    if not text:
        raise ValueError("type an action")
    if text.isdigit():
        index = int(text)
        if 1 <= index <= len(legal):
            return legal[index - 1]
        raise ValueError(f"choose a number from 1 to {len(legal)}")
    candidates: list[Action] = []
    with contextlib.suppress(ValueError):
        candidates.append(Card.parse(text))
    with contextlib.suppress(ValueError):
        candidates.append(Bid.parse(text))
    if not candidates:
        raise ValueError(f"{text!r} is neither a card nor a bid")
    for action in candidates:
        for option in legal:
            if type(option) is type(action) and option == action:
                return option
    raise ValueError(f"{text!r} is not legal now")


def describe_choice(observation: Observation) -> str:
    """The prompt for a person: the hand and the numbered legal actions."""
    o = observation
    lines = [f"Your hand: {format_cards(sorted(o.hand, key=int))}"]
    if o.phase is Phase.PLAY:
        contract = f" at {o.contract}" if o.contract else ""
        lines.append(f"Trump: {trump_letter(o.trump)}{contract}, taken by seat {o.taker}")
    if o.trick:
        lines.append(f"On the table: {format_cards(o.trick)}")
    options = "  ".join(f"{i}) {a}" for i, a in enumerate(o.legal, 1))
    lines.append(f"Legal: {options}")
    return "\n".join(lines)


class TerminalPlayer:
    """A person at this terminal: a plain line prompt for each decision."""

    def __init__(
        self,
        *,
        read_line: Callable[[], str] | None = None,
        write: Callable[[str], None] | None = None,
    ) -> None:
        self._read_line = read_line or sys.stdin.readline
        self._write = write or partial(print, flush=True)

    def start(self, rules: RuleSet, seat: int) -> None:
        self._write(f"You play seat {seat} ({rules.name} to {rules.target}).")

    def round_dealt(self, observation: Observation) -> None:
        pass

    async def decide(self, observation: Observation) -> Action:
        self._write(describe_choice(observation))
        while True:
            self._write("Your choice> ")
            line = await trio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
            if not line:
                raise EOFError("the terminal closed")
            try:
                return parse_action(line, observation.legal)
            except ValueError as exc:
                self._write(f"  {exc}")


# -- the driver ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PeerConfig:
    connect_timeout: float = 60.0
    """Seconds for the three peers to be connected and authenticated."""
    peer_timeout: float = 600.0
    """Seconds a peer the game waits on may stay silent (people think; bots do not)."""
    flush_timeout: float = 10.0
    """Seconds to hand our last envelopes to the peers before closing."""
    max_rejected: int = 16
    """Invalid frames tolerated from one peer before giving up on the game."""


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
    """Invalid frames received, by seat."""

    @property
    def ok(self) -> bool:
        return self.finished


@dataclass(frozen=True, slots=True)
class _Decided:
    observation: Observation
    action: Action


@dataclass(frozen=True, slots=True)
class _PlayerFailed:
    error: BaseException


_Input: TypeAlias = Received | PeerLost | _Decided | _PlayerFailed


@dataclass
class _Counters:
    sent: int = 0
    sent_bytes: int = 0
    rejected: list[int] = field(default_factory=lambda: [0] * SEATS)


async def run_peer(
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    player: Player,
    *,
    transcript: Path,
    listeners: Sequence[AnyListener] | None = None,
    on_event: Callable[[Event], None] | None = None,
    mesh_config: MeshConfig | None = None,
    config: PeerConfig | None = None,
) -> PeerResult:
    """Play ``seat`` of the table ``definition`` to the end; see the module docstring.

    ``listeners`` are our mesh listeners when already open (the lobby opens them first, to
    announce their port); otherwise we listen at our seat's address. ``on_event`` sees
    every session event as it happens (for printing). Raises :class:`PeerError` if the mesh
    does not open; every later failure is in the result.
    """
    config = config or PeerConfig()
    session = TableSession(definition, seat, identity)
    addresses = {s: parse_address(definition.seats[s].address) for s in range(SEATS)}
    if seat == SEATS - 1 and listeners:
        # The last seat only dials; the listener the lobby made it open is not needed.
        for listener in listeners:
            await listener.aclose()
        listeners = None
    mesh = Mesh(identity, definition.table_id, seat, definition.roster, mesh_config)
    failure: BaseException | None = None
    with TranscriptWriter(transcript, definition, seat) as writer:
        driver = _Driver(session, seat, player, writer, config, on_event)
        async with trio.open_nursery() as nursery:
            try:
                with trio.fail_after(config.connect_timeout):
                    await nursery.start(partial(mesh.run, addresses, listeners=listeners))
            except Exception as exc:  # a timeout, DialFailed, a failed handshake, OSError...
                failure = exc
                mesh.close()
            else:
                try:
                    await driver.play(mesh)
                finally:
                    mesh.close()
    if failure is not None:
        raise PeerError(f"seat {seat}: the mesh did not open: {_explain(failure)}") from failure
    c = driver.counters
    return PeerResult(
        seat=seat,
        state=session.state,
        finished=session.finished
        and session.fault is None
        and session.abandoned is None
        and driver.error is None,
        fault=session.fault,
        abandoned=session.abandoned,
        error=driver.error,
        transcript=transcript,
        envelopes=driver.written,
        sent=c.sent,
        sent_bytes=c.sent_bytes,
        rejected=tuple(c.rejected),
    )


def _explain(exc: BaseException) -> str:
    """The leaf errors of ``exc`` (trio wraps a task's failure in exception groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_explain(e) for e in exc.exceptions)
    if isinstance(exc, trio.TooSlowError):
        return "the other peers did not all connect in time"
    return str(exc) or repr(exc)


class _Driver:
    def __init__(
        self,
        session: TableSession,
        seat: int,
        player: Player,
        writer: TranscriptWriter,
        config: PeerConfig,
        on_event: Callable[[Event], None] | None,
    ) -> None:
        self.session = session
        self.seat = seat
        self.player = player
        self.writer = writer
        self.config = config
        self.on_event = on_event
        self.counters = _Counters()
        self.error: str | None = None
        self.written = 0
        self.done_from: set[int] = set()
        self.voted: set[int] = set()
        self.lost: set[int] = set()
        """Seats we signed as gone."""
        self._deciding = False
        self._inputs_in, self._inputs_out = trio.open_memory_channel[_Input](math.inf)
        self._send_in, self._send_out = trio.open_memory_channel[bytes](math.inf)
        self._nursery: trio.Nursery | None = None

    async def play(self, mesh: Mesh) -> None:
        session = self.session
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            sender_done = trio.Event()
            nursery.start_soon(self._sender, mesh, sender_done)
            nursery.start_soon(self._reader, mesh)
            self.player.start(session.definition.rules, self.seat)
            session.start()
            self._step()
            while not session.finished and self.error is None:
                waiting = session.waiting_for()
                # Only our own player may take its time (a person thinks): every other wait
                # is on the peers, and has a deadline.
                timeout = math.inf if self._deciding and not waiting else self.config.peer_timeout
                with trio.move_on_after(timeout):
                    item = await self._inputs_out.receive()
                    self._handle(item)
                    self._step()
                    continue
                silent = sorted(waiting - self.voted)
                if silent and session.ready:
                    # Sign that they left; the game ends when the three others have.
                    logger.warning(
                        "seat %d: seat(s) %s silent for %.0f s", self.seat, silent, timeout
                    )
                    for gone in silent:
                        self._vote(gone)
                    self._step()
                    continue
                seats = ", ".join(str(s) for s in sorted(waiting)) or "?"
                self.error = f"no message from seat {seats} for {timeout:.0f} s"
            # Our last envelopes (the ``done`` above all) must reach the peers before we close.
            self._send_in.close()
            with trio.move_on_after(self.config.flush_timeout):
                await sender_done.wait()
            nursery.cancel_scope.cancel()

    def _handle(self, item: _Input) -> None:
        session = self.session
        if isinstance(item, Received):
            try:
                session.receive(item.payload)
            except RemoteProtocolError as exc:
                self.counters.rejected[item.seat] += 1
                count = self.counters.rejected[item.seat]
                logger.warning(
                    "seat %d: dropped an invalid frame from seat %d (%d so far): %s",
                    self.seat, item.seat, count, exc,
                )  # fmt: skip
                if count > self.config.max_rejected:
                    self.error = f"seat {item.seat} sent {count} invalid frames"
        elif isinstance(item, PeerLost):
            if item.seat in self.done_from or session.finished:
                return
            logger.warning("seat %d lost seat %d: %s", self.seat, item.seat, item.reason)
            self.lost.add(item.seat)
            if not session.ready or len(self.lost) > 1:
                # Without the table signed, or with two seats gone, the game cannot end well.
                seats = ", ".join(str(s) for s in sorted(self.lost))
                self.error = f"lost the connection to seat {seats}: {item.reason}"
            else:
                # The mesh does not reconnect: the seat has left. The game ends as abandoned
                # by it once the other two seats sign the same (or times out if they do not).
                self._vote(item.seat)
        elif isinstance(item, _Decided):
            self._deciding = False
            try:
                session.act(item.action)
            except SessionError as exc:
                logger.warning("seat %d: our decision was not taken: %s", self.seat, exc)
        else:
            self._deciding = False
            self.error = f"the player failed: {item.error!r}"
            if session.ready:
                self._vote(self.seat)  # resign, so that the others need not wait for us

    def _vote(self, seat: int) -> None:
        if seat not in self.voted:
            self.voted.add(seat)
            self.session.abandon(seat)

    def _step(self) -> None:
        """Record, send and report whatever the session produced."""
        session = self.session
        transcript = session.transcript
        for envelope in transcript[self.written :]:
            self.writer.append(envelope.encode())
            if envelope.body.get("type") == "done":
                self.done_from.add(session.tracker.seat_of(envelope.sender))
        self.written = len(transcript)
        for payload in session.take_outbox():
            self._send_in.send_nowait(payload)
        for event in session.take_events():
            if isinstance(event, RoundAudited):
                self.writer.sync()
            if self.on_event is not None:
                self.on_event(event)
            if isinstance(event, RoundDealt):
                self.player.round_dealt(observe(session.state, self.seat))
            elif isinstance(event, DecisionNeeded):
                assert self._nursery is not None
                self._deciding = True
                self._nursery.start_soon(self._decide, event.observation)

    async def _decide(self, observation: Observation) -> None:
        try:
            action = await self.player.decide(observation)
        except Exception as exc:
            await self._inputs_in.send(_PlayerFailed(exc))
        else:
            await self._inputs_in.send(_Decided(observation, action))

    async def _reader(self, mesh: Mesh) -> None:
        while True:
            try:
                event = await mesh.receive()
            except ConnectionClosed:
                return
            await self._inputs_in.send(event)

    async def _sender(self, mesh: Mesh, done: trio.Event) -> None:
        async with self._send_out:
            async for payload in self._send_out:
                await mesh.broadcast(payload)
                self.counters.sent += 1
                self.counters.sent_bytes += len(payload)
        done.set()
