"""The trio transport: length-prefixed frames over a stream, and the full TCP mesh.

Thin on purpose: framing and the hello handshake are the sans-io code of
:mod:`belote_p2p.protocol.wire`; this module only moves their bytes. The mesh carries opaque
payloads between authenticated seats; decoding envelopes is the table session's job.

Each pair of seats shares exactly one TCP connection, dialled by the higher seat to
the lower seat's listener; seat 0 only listens and seat 3 only dials.

Reconnection. A connection that breaks is dialled again by the higher seat, with backoff,
for as long as the mesh runs; the lower seat keeps accepting. A new connection passes the
same authenticated handshake as the first and replaces whatever connection the seat had (a
restarted peer may reach us before we notice that its old connection is dead). The mesh
reports :class:`PeerConnected` for every authenticated connection and :class:`PeerLost`
when one ends; what was lost in between is the table session's business (its sync
requests).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import TypeAlias

import trio

from belote_p2p.errors import BeloteError, LocalProtocolError
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.wire import (
    DEFAULT_MAX_FRAME,
    SEATS,
    FrameDecoder,
    FrameTooLarge,
    Handshake,
    HandshakeError,
    frame,
)

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


class FramedStream(trio.abc.AsyncResource):
    """Whole frames over a byte stream. Sends may come from many tasks; receive from one."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_frame: int = DEFAULT_MAX_FRAME,
        receive_size: int = 1 << 16,
    ) -> None:
        self.stream = stream
        self.max_frame = max_frame
        self._receive_size = receive_size
        self._decoder = FrameDecoder(max_frame)
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


async def handshake(
    conn: FramedStream,
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


@dataclass(frozen=True, slots=True)
class PeerLost:
    """The connection to ``seat`` ended. The higher of the two seats dials again; a
    :class:`PeerConnected` follows if the peer comes back."""

    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class PeerConnected:
    """A connection to ``seat`` was authenticated (the first one, or a reconnection)."""

    seat: int
    reconnected: bool
    """The seat had been connected before."""


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
    send_timeout: float = 30.0
    """Seconds one frame may take to leave; a connection stuck longer is dropped (and, being
    lost, dialled again)."""
    event_buffer: int = 64
    """Events held for the consumer before the readers stop reading (backpressure)."""


class Mesh:
    """Seat ``seat``'s connections to the three other seats of a table.

    Start :meth:`run` with ``nursery.start`` (it returns once all three peers are
    connected and authenticated) or use :func:`open_mesh`. Then :meth:`receive` yields
    :class:`PeerConnected`, :class:`Received` and :class:`PeerLost` events from every peer
    in arrival order.
    """

    def __init__(
        self,
        identity: Identity,
        table: bytes,
        seat: int,
        roster: Sequence[bytes],
        config: MeshConfig | None = None,
    ) -> None:
        if len(roster) != SEATS or not 0 <= seat < SEATS:
            raise LocalProtocolError(f"a table has {SEATS} seats")
        if roster[seat] != identity.public_key_bytes:
            raise LocalProtocolError(f"this identity does not hold seat {seat}")
        self.identity = identity
        self.table = bytes(table)
        self.seat = seat
        self.roster = tuple(roster)
        self.config = config or MeshConfig()
        self._peers: dict[int, FramedStream] = {}
        self._ever: set[int] = set()
        self._all_connected = trio.Event()
        self._cancel_scope: trio.CancelScope | None = None
        self._closed = False
        self._event_in, self._event_out = trio.open_memory_channel[MeshEvent](
            self.config.event_buffer
        )

    @property
    def peers(self) -> frozenset[int]:
        """The seats connected right now."""
        return frozenset(self._peers)

    async def run(
        self,
        addresses: Mapping[int, Address],
        *,
        listeners: Sequence[AnyListener] | None = None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen (unless seat 3), dial the lower seats and run every connection.

        ``addresses`` maps seats to ``(host, port)``; those of the lower seats are
        dialled, and our own is where we listen unless ``listeners`` are given. Signals
        ``task_status`` once all three peers are authenticated, then runs until
        cancelled or :meth:`close`. Until a lower seat was first connected, a failed dial
        or handshake with it is raised; later ones are retried. A bad incoming connection
        is only refused.
        """
        try:
            async with trio.open_nursery() as nursery:
                self._cancel_scope = nursery.cancel_scope
                if self._closed:
                    nursery.cancel_scope.cancel()
                if self.seat < SEATS - 1:
                    if listeners is None:
                        host, port = addresses[self.seat]
                        listeners = await trio.open_tcp_listeners(port, host=host)
                    await nursery.start(self.serve, listeners)
                for peer in range(self.seat):
                    nursery.start_soon(self._dial, peer, addresses[peer])
                await self._all_connected.wait()
                task_status.started()
        finally:
            self._event_in.close()

    async def serve(
        self,
        listeners: Sequence[AnyListener],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Accept the higher seats' connections on ``listeners`` until cancelled."""
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)
            task_status.started()

    async def receive(self) -> MeshEvent:
        """The next event; raise :class:`ConnectionClosed` once the mesh has stopped."""
        try:
            return await self._event_out.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise ConnectionClosed("the mesh is closed") from None

    async def send(self, seat: int, payload: bytes) -> None:
        """Send one payload to ``seat``; raise :class:`ConnectionClosed` if it is gone.

        A send stuck past :attr:`MeshConfig.send_timeout` (a peer that stopped reading)
        drops the connection and raises :class:`ConnectionClosed`.
        """
        conn = self._peers.get(seat)
        if conn is None:
            raise ConnectionClosed(f"no connection to seat {seat}", seat=seat)
        try:
            with trio.move_on_after(self.config.send_timeout) as scope:
                await conn.send(payload)
        except ConnectionClosed as exc:
            exc.seat = seat
            raise
        if scope.cancelled_caught:
            await self._drop(seat, conn)
            raise ConnectionClosed(f"seat {seat} stopped reading", seat=seat, clean=False)

    async def drop(self, seat: int) -> None:
        """Close the connection to ``seat`` (its loss is reported as any other; the higher
        seat dials again)."""
        conn = self._peers.get(seat)
        if conn is not None:
            await self._drop(seat, conn)

    async def _drop(self, seat: int, conn: FramedStream) -> None:
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await conn.aclose()

    async def broadcast(self, payload: bytes) -> frozenset[int]:
        """Send ``payload`` to every other seat at once; return the seats not reached.

        A lost peer is not an error here: its reader reports :class:`PeerLost`.
        """
        missed: set[int] = set()

        async def send_one(seat: int) -> None:
            try:
                await self.send(seat, payload)
            except ConnectionClosed:
                missed.add(seat)

        async with trio.open_nursery() as nursery:
            for seat in range(SEATS):
                if seat != self.seat:
                    nursery.start_soon(send_one, seat)
        return frozenset(missed)

    def close(self) -> None:
        """Stop :meth:`run`: cancel every connection task; they close their streams."""
        self._closed = True
        if self._cancel_scope is not None:
            self._cancel_scope.cancel()

    async def _accept_loop(self, listener: AnyListener, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                stream = await listener.accept()
                nursery.start_soon(self._incoming, stream)

    async def _incoming(self, stream: trio.abc.Stream) -> None:
        try:
            await self._connection(stream, peer_seat=None)
        except HandshakeError as exc:
            logger.warning("seat %d refused a connection: %s", self.seat, exc)

    async def _dial(self, peer: int, address: Address) -> None:
        """Connect to the lower seat ``peer``, and connect again whenever it is lost."""
        host, port = address
        delay = self.config.dial_backoff
        failures = 0
        while True:
            try:
                stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
            except OSError as exc:
                failures += 1
                if peer not in self._ever and failures >= self.config.dial_attempts:
                    raise DialFailed(
                        f"seat {peer} at {host}:{port}: {failures} attempts, last: {exc}",
                        seat=peer,
                    ) from exc
                logger.info("seat %d: dialling seat %d failed (%s); retrying", self.seat, peer, exc)
            else:
                try:
                    await self._connection(stream, peer_seat=peer)
                except HandshakeError as exc:
                    if peer not in self._ever:
                        raise
                    failures += 1
                    logger.warning("seat %d: reconnecting to seat %d: %s", self.seat, peer, exc)
                else:
                    # The connection was up, and ended: dial again, from the shortest delay.
                    failures = 0
                    delay = self.config.dial_backoff
            await trio.sleep(delay)
            if failures:
                delay = min(delay * 2, self.config.dial_max_backoff)

    async def _connection(self, stream: trio.abc.Stream, *, peer_seat: int | None) -> None:
        """Authenticate a fresh connection, then read it until it ends."""
        async with FramedStream(stream, max_frame=self.config.max_frame) as conn:
            timeout = self.config.handshake_timeout
            try:
                with trio.fail_after(timeout):
                    seat = await handshake(
                        conn, self.identity, self.table, self.seat, self.roster, peer_seat=peer_seat
                    )
            except trio.TooSlowError:
                raise HandshakeError(f"no handshake within {timeout} s", seat=peer_seat) from None
            old = self._peers.get(seat)
            self._peers[seat] = conn  # before closing the old one: its reader must see this
            if old is not None:
                # Only the seat's key could pass the handshake: the peer came back before we
                # noticed that its old connection was dead. The new one wins.
                logger.info("seat %d: seat %d reconnected; closing its old connection",
                            self.seat, seat)  # fmt: skip
                await self._drop(seat, old)
            reconnected = seat in self._ever
            self._ever.add(seat)
            if len(self._peers) == SEATS - 1:
                self._all_connected.set()
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self._event_in.send(PeerConnected(seat, reconnected))
            try:
                reason = await self._read(seat, conn)
            finally:
                current = self._peers.get(seat) is conn
                if current:
                    del self._peers[seat]
        if not current:
            return  # replaced by a newer connection: the seat is not lost
        logger.info("seat %d lost seat %d: %s", self.seat, seat, reason)
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._event_in.send(PeerLost(seat, reason))

    async def _read(self, seat: int, conn: FramedStream) -> str:
        """Forward frames from ``seat`` until its connection ends; return why it ended."""
        while True:
            try:
                payload = await conn.receive()
            except (ConnectionClosed, FrameTooLarge) as exc:
                return str(exc)
            try:
                await self._event_in.send(Received(seat, payload))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return "nobody listens for events any more"


@asynccontextmanager
async def open_mesh(
    identity: Identity,
    table: bytes,
    seat: int,
    roster: Sequence[bytes],
    addresses: Mapping[int, Address],
    *,
    listeners: Sequence[AnyListener] | None = None,
    config: MeshConfig | None = None,
) -> AsyncIterator[Mesh]:
    """A :class:`Mesh` with all three peers connected; closed when the block ends."""
    mesh = Mesh(identity, table, seat, roster, config)
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(mesh.run, addresses, listeners=listeners))
        try:
            yield mesh
        finally:
            mesh.close()
