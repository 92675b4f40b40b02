"""The trio transport: length-prefixed frames over a stream, and the full TCP mesh.

Thin on purpose: framing and the hello handshake are the sans-io code of
:mod:`belote_p2p.protocol.wire`; this module only moves their bytes. The mesh carries opaque
payloads between authenticated seats; decoding envelopes is the table session's job.

Each pair of seats shares exactly one TCP connection, dialled by the higher seat to
the lower seat's listener; seat 0 only listens and the last seat only dials.

Links. The mesh runs each seat's connection over a :class:`Link`: whole frames in both
directions. A direct TCP stream is a :class:`FramedStream`; :meth:`Mesh.attach` takes any
other link (a relayed one, say) through the same handshake and the same life.

Sending never waits on a peer. Every connection has its own bounded queue and its own sender
task: :meth:`Mesh.send` and :meth:`Mesh.broadcast` only queue. A peer that does not read
fills its queue (:attr:`MeshConfig.send_queue_bytes`, :attr:`MeshConfig.send_queue_frames`)
or leaves a frame unsent past :attr:`MeshConfig.send_timeout`; either way its connection is
dropped, and the others never notice. Frames to one seat leave in the order queued.

Relayed links. A seat that cannot be reached directly (it does not listen, ``--no-listen``,
or a NAT or firewall stands between) is reached through a relay
(:mod:`belote_p2p.net.relay`): given a *fallback* (a coroutine that opens a relayed link to
a seat), the mesh opens one to every seat that stays unconnected for
:attr:`MeshConfig.fallback_after` seconds (at once when a direct connection cannot exist) and
runs it through the same handshake. Direct connections are still tried (the higher seat
keeps dialling, more slowly, while the link is relayed) and one that succeeds replaces the
relayed link, as any new connection replaces the old one; what either switch loses in flight
is the session's sync's to fill, and a frame that arrives twice is a harmless duplicate. A
relay that is down, full, slow to pair or hangs up is tried again, with backoff, for as long
as the mesh runs, each failed try said in one line (the table waits for its host's port to
come back: it is also its relay).

Strangers. Every listener accepts through :mod:`belote_p2p.net.serve` (each connection
isolated; out of descriptors, accepting only pauses; at most :attr:`MeshConfig.max_unproven`
connections in their handshake at once), and until a peer proved its seat its frames are
handshake-sized (:func:`mesh_link`): a stranger costs a few hundred bytes, never a frame of
:attr:`MeshConfig.max_frame`.

Reconnection. A connection that breaks is dialled again by the higher seat, with backoff,
for as long as the mesh runs; the lower seat keeps accepting. A new connection passes the
same authenticated handshake as the first and replaces whatever connection the seat had (a
restarted peer may reach us before we notice that its old connection is dead). The mesh
reports :class:`PeerConnected` for every authenticated connection and :class:`PeerLost`
when one ends; what was lost in between (the frames still queued included) is the table
session's business (its sync requests).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeAlias

import trio

from belote_p2p.errors import BeloteError, LocalProtocolError
from belote_p2p.i18n import _, format_ordinal
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.wire import (
    DEFAULT_MAX_FRAME,
    FRAME_HEADER_SIZE,
    HELLO_FRAMES,
    MIN_SEATS,
    SEATS,
    FrameDecoder,
    FrameTooLarge,
    Handshake,
    HandshakeError,
    frame,
)

from .serve import Gate, Ticket, serve_listeners

logger = logging.getLogger(__name__)

Address: TypeAlias = tuple[str, int]
AnyListener: TypeAlias = trio.abc.Listener[trio.abc.Stream]


class TransportError(BeloteError):
    """Base of the errors of this module."""


class ConnectionClosed(TransportError):
    """The connection (or the whole mesh) is closed or broken.

    ``clean`` is False when the peer vanished in the middle of a frame or the
    connection broke rather than ended.
    """

    def __init__(self, message: str, *, seat: int | None = None, clean: bool = True) -> None:
        super().__init__(message)
        self.seat = seat
        self.clean = clean


class DialFailed(TransportError):
    """A lower seat's listener could not be reached within the allowed attempts."""

    def __init__(self, message: str, *, seat: int) -> None:
        super().__init__(message)
        self.seat = seat


Fallback: TypeAlias = "Callable[[int], Awaitable[Link]]"
"""Opens a relayed link to a seat (waiting until the relay pairs it with that seat's own);
raises :class:`TransportError`, a :class:`~belote_p2p.errors.RemoteProtocolError` or an
``OSError`` when it cannot."""


class Link(Protocol):
    """Whole frames to and from one peer: what the mesh runs a seat's connection over.

    The mesh calls :meth:`send` from one task at a time (a connection's sender task), and
    :meth:`receive` from one task. :meth:`send` may take as long as the peer makes it (the
    mesh puts a deadline around it); it raises :class:`ConnectionClosed` once the link is
    gone. :meth:`receive` returns the next payload, raises :class:`ConnectionClosed` when the
    link ends and :class:`~belote_p2p.protocol.wire.FrameTooLarge` for an oversized frame.
    :meth:`aclose` may be cancelled (the mesh closes links forcefully)."""

    async def send(self, payload: bytes) -> None: ...

    async def receive(self) -> bytes: ...

    async def aclose(self) -> None: ...


class FramedStream(trio.abc.AsyncResource):
    """Whole frames over a byte stream (the :class:`Link` of a direct TCP connection).
    Sends may come from many tasks; receive from one. ``opening``: the caps of the first
    frames received (:class:`~belote_p2p.protocol.wire.FrameDecoder`)."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_frame: int = DEFAULT_MAX_FRAME,
        receive_size: int = 1 << 16,
        opening: Sequence[int] = (),
    ) -> None:
        self.stream = stream
        self.max_frame = max_frame
        self._receive_size = receive_size
        self._decoder = FrameDecoder(max_frame, opening=opening)
        self._pending: deque[bytes] = deque()
        self._send_lock = trio.Lock()

    async def send(self, payload: bytes) -> None:
        """Send one frame; raise :class:`ConnectionClosed` if the stream is gone."""
        data = frame(payload, self.max_frame)
        async with self._send_lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise ConnectionClosed(f"cannot send: {exc!r}", clean=False) from exc

    async def receive(self) -> bytes:
        """The next frame's payload.

        Raises :class:`ConnectionClosed` at end of stream, and
        :class:`~belote_p2p.protocol.wire.FrameTooLarge` when the peer announces an oversized frame.
        """
        while not self._pending:
            if self._decoder.error is not None:
                raise self._decoder.error
            try:
                data = await self.stream.receive_some(self._receive_size)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise ConnectionClosed(f"cannot receive: {exc!r}", clean=False) from exc
            if not data:
                clean = self._decoder.buffered == 0
                raise ConnectionClosed(
                    "peer closed the connection" + ("" if clean else " inside a frame"),
                    clean=clean,
                )
            self._pending.extend(self._decoder.feed(data))
        return self._pending.popleft()

    async def aclose(self) -> None:
        await self.stream.aclose()


def mesh_link(stream: trio.abc.Stream, max_frame: int = DEFAULT_MAX_FRAME) -> FramedStream:
    """A direct connection of the mesh, not yet authenticated: until the peer proved its
    seat, its frames are handshake-sized (:data:`~belote_p2p.protocol.wire.HELLO_FRAMES`)."""
    return FramedStream(stream, max_frame=max_frame, opening=HELLO_FRAMES)


async def handshake(
    conn: Link,
    identity: Identity,
    table: bytes,
    seat: int,
    roster: Sequence[bytes],
    *,
    peer_seat: int | None,
) -> int:
    """Run the hello handshake (see :class:`~belote_p2p.protocol.wire.Handshake`) on ``conn``.

    Returns the peer's authenticated seat; raises :class:`HandshakeError`, also when the
    peer hangs up half way. The caller puts a deadline around it.
    """
    hs = Handshake(identity, table, seat, roster, peer_seat=peer_seat)
    try:
        await conn.send(hs.hello())
        await conn.send(hs.receive_hello(await conn.receive()))
        return hs.receive_proof(await conn.receive())
    except (ConnectionClosed, FrameTooLarge) as exc:
        raise HandshakeError(f"handshake failed: {exc}", seat=hs.peer_seat) from exc


@dataclass(frozen=True, slots=True)
class Received:
    """A frame from an authenticated seat."""

    seat: int
    payload: bytes
    connection: int = field(default=0, compare=False, kw_only=True)
    """The number of the connection that delivered it (for :meth:`Mesh.disconnect`); not
    part of equality."""


@dataclass(frozen=True, slots=True)
class PeerLost:
    """The connection to ``seat`` ended. The higher of the two seats dials again; a
    :class:`PeerConnected` follows if the peer comes back."""

    seat: int
    reason: str
    connection: int = field(default=0, compare=False, kw_only=True)
    refused: bool = field(default=False, kw_only=True)
    """It ended because the peer sent what the mesh refuses (an oversized frame)."""


@dataclass(frozen=True, slots=True)
class PeerConnected:
    """A connection to ``seat`` was authenticated (the first one, or a reconnection)."""

    seat: int
    reconnected: bool
    """The seat had been connected before."""
    connection: int = field(default=0, compare=False, kw_only=True)
    relayed: bool = field(default=False, compare=False, kw_only=True)
    """The connection goes through a relay."""


MeshEvent: TypeAlias = Received | PeerLost | PeerConnected


@dataclass(frozen=True, slots=True)
class MeshConfig:
    max_frame: int = DEFAULT_MAX_FRAME
    handshake_timeout: float = 5.0
    """Seconds for the whole hello handshake of one connection."""
    dial_attempts: int = 10
    """Connection attempts per lower seat before :class:`DialFailed` (the first connection
    only: once connected, a lost seat is dialled again until the mesh closes)."""
    dial_backoff: float = 0.05
    """Seconds before the second attempt; doubles after each failure."""
    dial_max_backoff: float = 2.0
    dial_timeout: float = 10.0
    """Seconds one direct TCP connection attempt may take (a firewall that drops the
    packets never refuses)."""
    fallback_after: float = 3.0
    """Seconds a seat stays unconnected before a relayed link to it is opened (when the
    mesh has a fallback; at once when no direct connection can exist)."""
    direct_retry: float = 30.0
    """Longest wait between two direct connection attempts while a seat is relayed."""
    relay_retry: float = 10.0
    """Longest wait between two attempts to open a relayed link (the relay is down, full,
    or the other side hung up): the attempts go on, with backoff, as long as the mesh."""
    max_unproven: int = 64
    """Incoming connections not yet through the handshake at once; past it new ones are
    closed at once (:class:`~belote_p2p.net.serve.Gate`)."""
    send_timeout: float = 30.0
    """Seconds one frame may take to leave; a connection stuck longer is dropped (and, being
    lost, dialled again)."""
    send_queue_bytes: int = 8 << 20
    """Payload bytes queued for one connection before it is dropped (its peer does not
    read). At least :attr:`max_frame`: a whole transcript sent as a sync answer (a long
    game is about half a megabyte) must fit."""
    send_queue_frames: int = 8192
    """Frames queued for one connection before it is dropped (twice the longest sync
    answer a session gives)."""
    event_buffer: int = 64
    """Events held for the consumer before the readers stop reading (backpressure)."""


async def _close_now(link: Link) -> None:
    """Close ``link`` without waiting on its peer (as :func:`trio.aclose_forcefully`), and
    without letting an outer cancellation replace the exception being handled."""
    with trio.CancelScope(shield=True), trio.CancelScope() as scope:
        scope.cancel()
        await link.aclose()


class _Connection:
    """One authenticated link to a seat: its send queue and the tasks that run it."""

    def __init__(self, mesh: Mesh, seat: int, link: Link, number: int) -> None:
        self.mesh = mesh
        self.seat = seat
        self.link = link
        self.number = number
        self.relayed = bool(getattr(link, "relayed", False))
        config = mesh.config
        self._queue_in, self._queue_out = trio.open_memory_channel[bytes](config.send_queue_frames)
        self.queued_bytes = 0
        self.queued_frames = 0
        self.reason: str | None = None
        """Why the connection is closing, once it is."""
        self.refused = False
        """The peer sent an oversized frame."""
        self.cancel_scope = trio.CancelScope()
        self.ended = trio.Event()
        self._drained = trio.Event()
        self._drained.set()

    @property
    def closing(self) -> bool:
        return self.reason is not None

    def close(self, reason: str) -> None:
        """Stop the connection's tasks (its link is closed as they end); keep the first
        reason given."""
        if self.reason is None:
            self.reason = reason
        self.cancel_scope.cancel()
        self._drained.set()

    def enqueue(self, payload: bytes) -> None:
        """Queue ``payload``; if the queue is over budget, drop the connection and raise
        :class:`ConnectionClosed`."""
        if self.reason is not None:
            raise ConnectionClosed(f"seat {self.seat}: {self.reason}", seat=self.seat)
        config = self.mesh.config
        size = len(payload) + FRAME_HEADER_SIZE
        if self.queued_bytes + size > config.send_queue_bytes:
            full = f"{self.queued_bytes} bytes"
        else:
            try:
                self._queue_in.send_nowait(payload)
            except trio.WouldBlock:
                full = f"{self.queued_frames} frames"
            else:
                self.queued_bytes += size
                self.queued_frames += 1
                if self._drained.is_set():
                    self._drained = trio.Event()
                return
        reason = f"seat {self.seat} is not reading: {full} wait for it"
        logger.warning("seat %d: dropping the connection to %s", self.mesh.seat, reason)
        self.close(reason)
        raise ConnectionClosed(reason, seat=self.seat, clean=False)

    async def drained(self) -> None:
        """Until every frame queued so far has left (or the connection is closing)."""
        await self._drained.wait()

    async def run(self) -> str:
        """Send and receive until the link ends or :meth:`close`; return why it ended. The
        link is closed on return."""
        try:
            with self.cancel_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._send_loop)
                    self.close(await self._read_loop())
        finally:
            await self.shut("the mesh is closing")
        assert self.reason is not None
        return self.reason

    async def shut(self, reason: str) -> None:
        """Close the connection and its link at once (also under cancellation)."""
        self.close(reason)
        self._queue_in.close()
        if self.ended.is_set():
            return
        try:
            await _close_now(self.link)
        finally:
            self.ended.set()

    async def _send_loop(self) -> None:
        timeout = self.mesh.config.send_timeout
        async for payload in self._queue_out:
            try:
                with trio.move_on_after(timeout) as scope:
                    await self.link.send(payload)
            except ConnectionClosed as exc:
                self.close(str(exc))
                return
            if scope.cancelled_caught:
                reason = f"seat {self.seat} stopped reading: a frame waited {timeout:g} s"
                logger.warning("seat %d: dropping the connection: %s", self.mesh.seat, reason)
                self.close(reason)
                return
            self.queued_bytes -= len(payload) + FRAME_HEADER_SIZE
            self.queued_frames -= 1
            if not self.queued_frames:
                self._drained.set()

    async def _read_loop(self) -> str:
        """Forward frames until the link ends; return why it ended."""
        events = self.mesh._event_in
        while True:
            try:
                payload = await self.link.receive()
            except FrameTooLarge as exc:
                self.refused = True
                return str(exc)
            except ConnectionClosed as exc:
                return str(exc)
            try:
                await events.send(Received(self.seat, payload, connection=self.number))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return "nobody listens for events any more"


class Mesh:
    """Seat ``seat``'s connections to every other seat of a table (3, 2 or 1).

    Start :meth:`run` with ``nursery.start`` (it returns once every other peer is
    connected and authenticated) or use :func:`open_mesh`. Then :meth:`receive` yields
    :class:`PeerConnected`, :class:`Received` and :class:`PeerLost` events from every peer
    in arrival order, and :meth:`send` and :meth:`broadcast` queue frames without waiting.
    Given ``events``, the mesh sends its events there instead (a consumer that also waits
    for other inputs on that channel reads them with no task in between; the mesh closes
    the clone it was given when it stops) and :meth:`receive` is not used.
    """

    def __init__(
        self,
        identity: Identity,
        table: bytes,
        seat: int,
        roster: Sequence[bytes],
        config: MeshConfig | None = None,
        *,
        events: trio.MemorySendChannel[MeshEvent] | None = None,
    ) -> None:
        if not MIN_SEATS <= len(roster) <= SEATS or not 0 <= seat < len(roster):
            raise LocalProtocolError(f"a table has {MIN_SEATS} to {SEATS} seats")
        if roster[seat] != identity.public_key_bytes:
            raise LocalProtocolError(f"this identity does not hold seat {seat}")
        self.identity = identity
        self.table = bytes(table)
        self.seat = seat
        self.roster = tuple(roster)
        self.seats = len(self.roster)
        """The table's seats: one connection to each other one."""
        self.config = config or MeshConfig()
        if self.config.send_queue_bytes < self.config.max_frame + FRAME_HEADER_SIZE:
            raise LocalProtocolError("a send queue must hold at least one frame of max_frame")
        self._peers: dict[int, _Connection] = {}
        self._ever: set[int] = set()
        self._numbers = itertools.count(1)
        self._cancel_scope: trio.CancelScope | None = None
        self._closed = False
        self._event_out: trio.MemoryReceiveChannel[MeshEvent] | None = None
        if events is None:
            self._event_in, self._event_out = trio.open_memory_channel[MeshEvent](
                self.config.event_buffer
            )
        else:
            self._event_in = events
        self._changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._handed: list[tuple[Link, Ticket | None]] = []
        self.gate = Gate(f"seat {seat}'s mesh", self.config.max_unproven)
        """The incoming connections still in their handshake, and those refused."""

    @property
    def peers(self) -> frozenset[int]:
        """The seats connected right now."""
        return frozenset(s for s, conn in self._peers.items() if not conn.closing)

    @property
    def never_connected(self) -> frozenset[int]:
        """The other seats that were never connected (what a mesh that did not open
        waited for)."""
        return frozenset(range(self.seats)) - {self.seat} - self._ever

    @property
    def relayed(self) -> frozenset[int]:
        """The seats connected right now through a relay."""
        return frozenset(s for s, c in self._peers.items() if not c.closing and c.relayed)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def backlog(self, seat: int) -> int:
        """Bytes queued for ``seat`` and not yet sent (0 when it is not connected)."""
        conn = self._peers.get(seat)
        return conn.queued_bytes if conn is not None else 0

    async def run(
        self,
        addresses: Mapping[int, Address | None],
        *,
        listeners: Sequence[AnyListener] | None = None,
        fallback: Fallback | None = None,
        opens_with: int | None = None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen (unless the last seat), dial the lower seats and run every connection.

        ``addresses`` maps seats to ``(host, port)``, or None for a seat that does not
        listen; those of the lower seats are dialled, and our own is where we listen unless
        ``listeners`` are given (``[]``: we accept no direct connection, or someone else
        hands them to :meth:`incoming`). ``fallback`` opens relayed links (see the module
        docstring). Signals ``task_status`` once every other peer is authenticated (or
        ``opens_with`` of them: a resumed game's mesh, some of whose seats may never come
        back), then runs until cancelled or :meth:`close`. Without a fallback, until a lower
        seat was first connected, a failed dial or handshake with it is raised (after
        :attr:`MeshConfig.dial_attempts` when it refused us or closed before a word);
        later ones are retried. With one, nothing is raised: a relay that fails is tried
        again for as long as the mesh runs. A bad incoming connection is only refused.
        """
        try:
            async with trio.open_nursery() as nursery:
                self._cancel_scope = nursery.cancel_scope
                self._nursery = nursery
                if self._closed:
                    nursery.cancel_scope.cancel()
                own = addresses.get(self.seat)
                if self.seat < self.seats - 1:
                    if listeners is None:
                        listeners = []
                        if own is not None:
                            listeners = await trio.open_tcp_listeners(own[1], host=own[0] or None)
                    await nursery.start(self.serve, listeners)
                for link, ticket in self._handed:
                    nursery.start_soon(self._attach_incoming, link, ticket)
                self._handed.clear()
                for peer in range(self.seats):
                    if peer == self.seat:
                        continue
                    direct = addresses.get(peer) if peer < self.seat else own
                    if peer < self.seat:
                        address = addresses.get(peer)
                        if address is not None:
                            nursery.start_soon(self._dial, peer, address, fallback is not None)
                        elif fallback is None:
                            raise DialFailed(
                                f"seat {peer} does not listen and there is no relay", seat=peer
                            )
                    if fallback is not None:
                        wait = self.config.fallback_after if direct is not None else 0.0
                        nursery.start_soon(self._fallback_loop, peer, fallback, wait)
                wanted = self.seats - 1 if opens_with is None else min(opens_with, self.seats - 1)
                while len(self._peers) < wanted:
                    await self._changed.wait()
                task_status.started()
        finally:
            self._nursery = None
            for link, ticket in self._handed:
                if ticket is not None:
                    ticket.release()
                await _close_now(link)
            self._handed.clear()
            self._event_in.close()

    def incoming(self, link: Link) -> None:
        """Take a connection someone else accepted for us (the host's one port hands over
        the mesh's hellos): it is authenticated and run as any incoming connection, and
        counts against :attr:`gate` as ours do (past its limit it is closed at once).
        Before :meth:`run` has started it waits for it."""
        ticket = self.gate.enter()
        if self._nursery is not None:
            self._nursery.start_soon(self._attach_incoming, link, ticket)
        else:
            self._handed.append((link, ticket))  # no ticket: closed as soon as run starts

    async def serve(
        self,
        listeners: Sequence[AnyListener],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Accept the higher seats' connections on ``listeners`` until cancelled."""
        await serve_listeners(listeners, self._incoming, self.gate, task_status=task_status)

    async def receive(self) -> MeshEvent:
        """The next event; raise :class:`ConnectionClosed` once the mesh has stopped."""
        if self._event_out is None:
            raise LocalProtocolError("this mesh sends its events to the channel it was given")
        try:
            return await self._event_out.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise ConnectionClosed("the mesh is closed") from None

    def send(self, seat: int, payload: bytes) -> None:
        """Queue one payload for ``seat``; never waits.

        Raises :class:`ConnectionClosed` if the seat is not connected, or if this payload
        would overfill its queue (a peer that stopped reading): that connection is then
        dropped (the higher seat dials again).
        """
        if len(payload) > self.config.max_frame:
            raise LocalProtocolError(f"payload of {len(payload)} bytes exceeds the frame limit")
        conn = self._peers.get(seat)
        if conn is None:
            raise ConnectionClosed(f"no connection to seat {seat}", seat=seat)
        conn.enqueue(payload)

    def broadcast(self, payload: bytes) -> frozenset[int]:
        """Queue ``payload`` for every other seat; return the seats not reached (not
        connected, or dropped for a full queue). Never waits.

        A lost peer is not an error here: its connection reports :class:`PeerLost`.
        """
        missed: set[int] = set()
        for seat in range(self.seats):
            if seat != self.seat:
                try:
                    self.send(seat, payload)
                except ConnectionClosed:
                    missed.add(seat)
        return frozenset(missed)

    async def flush(self) -> None:
        """Until every frame queued so far has left, or its connection has ended."""
        for conn in list(self._peers.values()):
            await conn.drained()

    def disconnect(self, seat: int, reason: str, *, connection: int | None = None) -> bool:
        """Close the connection to ``seat`` (only if it is number ``connection``, when
        given); its loss is reported as any other, and the higher seat dials again.
        Returns whether a connection was closed."""
        conn = self._peers.get(seat)
        if conn is None or conn.closing:
            return False
        if connection is not None and conn.number != connection:
            return False
        conn.close(reason)
        return True

    async def drop(self, seat: int) -> None:
        """Close the connection to ``seat`` and wait until it is closed."""
        conn = self._peers.get(seat)
        if conn is not None:
            conn.close("dropped by this peer")
            await conn.ended.wait()

    def close(self) -> None:
        """Stop :meth:`run`: cancel every connection task; they close their links."""
        self._closed = True
        if self._cancel_scope is not None:
            self._cancel_scope.cancel()

    async def attach(
        self, link: Link, *, peer_seat: int | None, ticket: Ticket | None = None
    ) -> None:
        """Authenticate ``link`` (a connection we dialled to ``peer_seat``, or one we
        accepted, ``peer_seat=None``, whose ``ticket`` at :attr:`gate` is released once the
        peer proved its seat) and run it as that seat's connection until it ends.

        Raises :class:`HandshakeError` if the handshake fails or takes longer than
        :attr:`MeshConfig.handshake_timeout`. The link is closed on return.
        """
        try:
            timeout = self.config.handshake_timeout
            try:
                with trio.fail_after(timeout):
                    seat = await handshake(
                        link, self.identity, self.table, self.seat, self.roster, peer_seat=peer_seat
                    )
            except trio.TooSlowError:
                raise HandshakeError(f"no handshake within {timeout} s", seat=peer_seat) from None
        except BaseException:
            await _close_now(link)
            raise
        if ticket is not None:
            ticket.release()
        conn = _Connection(self, seat, link, next(self._numbers))
        old = self._peers.get(seat)
        self._peers[seat] = conn  # before closing the old one: its task must see this
        if old is not None:
            # Only the seat's key could pass the handshake: the peer came back before we
            # noticed that its old connection was dead. The new one wins.
            logger.info("seat %d: seat %d reconnected; closing its old connection",
                        self.seat, seat)  # fmt: skip
            old.close("replaced by a new connection")
        reconnected = seat in self._ever
        self._ever.add(seat)
        self._notify()
        if conn.relayed:
            logger.info("seat %d: connected to seat %d through the relay", self.seat, seat)
        try:
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self._event_in.send(
                    PeerConnected(seat, reconnected, connection=conn.number, relayed=conn.relayed)
                )
            reason = await conn.run()
        finally:
            current = self._peers.get(seat) is conn
            if current:
                del self._peers[seat]
                self._notify()
            await conn.shut("the mesh is closing")
        if not current:
            return  # replaced by a newer connection: the seat is not lost
        logger.info("seat %d lost seat %d: %s", self.seat, seat, reason)
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._event_in.send(
                PeerLost(seat, reason, connection=conn.number, refused=conn.refused)
            )

    async def _incoming(self, stream: trio.abc.Stream, ticket: Ticket) -> None:
        await self._attach_incoming(mesh_link(stream, self.config.max_frame), ticket)

    async def _attach_incoming(self, link: Link, ticket: Ticket | None) -> None:
        if ticket is None:
            await _close_now(link)  # too many strangers at once (counted at the gate)
            return
        try:
            await self.attach(link, peer_seat=None, ticket=ticket)
        except HandshakeError as exc:
            logger.warning("seat %d refused a connection: %s", self.seat, exc)
        except Exception as exc:  # whatever one connection does ends that one only
            self.gate.failed += 1
            logger.info("seat %d: an incoming connection failed: %r", self.seat, exc)
        finally:
            ticket.release()

    async def open_direct(self, host: str, port: int) -> trio.abc.Stream:
        """One direct TCP connection attempt (tests override it to cut a path)."""
        return await trio.open_tcp_stream(host, port)

    async def _wait_unconnected(self, peer: int, after: float) -> None:
        """Until ``peer`` has been without a connection for ``after`` seconds."""
        while True:
            while peer in self.peers:
                await self._changed.wait()
            with trio.move_on_after(after):
                while peer not in self.peers:
                    await self._changed.wait()
                continue  # it connected meanwhile
            return

    async def _fallback_loop(self, peer: int, fallback: Fallback, after: float) -> None:
        """Keep a relayed link to ``peer`` whenever it has no direct one, for as long as the
        mesh runs: a relay that is down, full, slow to pair or hung up on us is tried
        again, with backoff (up to :attr:`MeshConfig.relay_retry`): one warning line per
        change of state (a new reason, the relay answering again), the tries that fail for
        the same reason as the last only at the info level."""
        delay = self.config.dial_backoff
        tries = 0
        said: str | None = None
        while True:
            await self._wait_unconnected(peer, after)
            outcome = await self._open_relayed(peer, fallback)
            if outcome is None:
                continue  # the seat connected directly while we waited for the relay
            if isinstance(outcome, str):
                tries += 1
                level = logging.INFO if outcome == said else logging.WARNING
                said = outcome
                logger.log(
                    level,
                    _(
                        "seat {seat}: waiting for seat {other}: {reason}; {nth} try, trying again"
                    ).format(seat=self.seat, other=peer, reason=outcome, nth=format_ordinal(tries)),
                )
                await trio.sleep(delay)
                delay = min(delay * 2, self.config.relay_retry)
                continue
            if tries:
                logger.warning(
                    _("seat {seat}: the relay answers again (for seat {other})").format(
                        seat=self.seat, other=peer
                    )
                )
            tries = 0
            said = None
            try:
                await self.attach(outcome, peer_seat=peer if peer < self.seat else None)
            except HandshakeError as exc:
                logger.warning(
                    _("seat {seat}: relayed link to seat {other}: {error}").format(
                        seat=self.seat, other=peer, error=exc
                    )
                )
                await trio.sleep(delay)
                delay = min(delay * 2, self.config.relay_retry)
            else:
                delay = self.config.dial_backoff

    async def _open_relayed(self, peer: int, fallback: Fallback) -> Link | str | None:
        """A relayed link to ``peer``; None if the seat connected directly meanwhile; why
        not, in words, if the fallback failed. Nothing it raises leaves here: a relay's
        failure is never the mesh's."""
        result: list[Link | str] = []

        async def attempt(scope: trio.CancelScope) -> None:
            try:
                result.append(await fallback(peer))
            except Exception as exc:  # the relay is down, full, timed out, hung up...
                result.append(_failure(exc))
            scope.cancel()

        async with trio.open_nursery() as watch:
            watch.start_soon(attempt, watch.cancel_scope)
            while peer not in self.peers:
                await self._changed.wait()
            watch.cancel_scope.cancel()
        if not result:
            return None
        link = result[0]
        if not isinstance(link, str) and peer in self.peers:
            await _close_now(link)
            return None
        return link

    async def _dial(self, peer: int, address: Address, relayed: bool = False) -> None:
        """Connect to the lower seat ``peer``, and connect again whenever it is lost.

        With ``relayed`` (the mesh has a fallback) a failure is never final: the relay
        carries the seat meanwhile, and the attempts go on, at most every
        :attr:`MeshConfig.direct_retry` seconds while it does."""
        host, port = address
        delay = self.config.dial_backoff
        failures = 0
        while True:
            try:
                with trio.fail_after(self.config.dial_timeout):
                    stream: trio.abc.Stream = await self.open_direct(host, port)
            except (OSError, trio.TooSlowError) as exc:
                failures += 1
                if not relayed and peer not in self._ever and failures >= self.config.dial_attempts:
                    raise DialFailed(
                        f"seat {peer} at {host}:{port}: {failures} attempts, last: {exc}",
                        seat=peer,
                    ) from exc
                logger.info("seat %d: dialling seat %d failed (%s); retrying", self.seat, peer, exc)
            else:
                try:
                    await self.attach(mesh_link(stream, self.config.max_frame), peer_seat=peer)
                except HandshakeError as exc:
                    failures += 1
                    # Closed before a word (a listener full of strangers, or restarting)
                    # is retried as a refused connection; a failed proof is final.
                    closed = isinstance(exc.__cause__, ConnectionClosed)
                    first = peer not in self._ever and not relayed
                    if first and (not closed or failures >= self.config.dial_attempts):
                        raise
                    logger.warning(
                        _("seat {seat}: reconnecting to seat {other}: {error}").format(
                            seat=self.seat, other=peer, error=exc
                        )
                    )
                else:
                    # The connection was up, and ended: dial again, from the shortest delay.
                    failures = 0
                    delay = self.config.dial_backoff
            await trio.sleep(delay)
            if failures:
                cap = self.config.dial_max_backoff
                if relayed and (peer in self.relayed or failures >= self.config.dial_attempts):
                    cap = max(cap, self.config.direct_retry)
                delay = min(delay * 2, cap)


def _failure(exc: BaseException) -> str:
    """One line for a failed try (trio may wrap an error in groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_failure(e) for e in exc.exceptions)
    if isinstance(exc, trio.TooSlowError):
        return "no answer in time"
    return str(exc) or type(exc).__name__


@asynccontextmanager
async def open_mesh(
    identity: Identity,
    table: bytes,
    seat: int,
    roster: Sequence[bytes],
    addresses: Mapping[int, Address | None],
    *,
    listeners: Sequence[AnyListener] | None = None,
    config: MeshConfig | None = None,
    fallback: Fallback | None = None,
) -> AsyncIterator[Mesh]:
    """A :class:`Mesh` with every other peer connected; closed when the block ends."""
    mesh = Mesh(identity, table, seat, roster, config)
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(mesh.run, addresses, listeners=listeners, fallback=fallback))
        try:
            yield mesh
        finally:
            mesh.close()
