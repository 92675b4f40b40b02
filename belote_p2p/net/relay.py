"""The relay over trio: a thin shell around :class:`~belote_p2p.protocol.relay.RelayServer`,
and the client side, :func:`open_relay_link`, which a mesh uses as its fallback (and a seat
as its watch feed, the offer of its table to one watcher: :mod:`.watch`).

:class:`RelayService` reads each connection's bytes into the sans-io server and carries out
what it answers: frames to queue for a connection, connections to close. Each connection
has one bounded send queue and one sender task: a relayed peer that does not read loses its
connection (and its partner's), never anybody else's time, and what was queued for it is
counted as dropped. A watcher is the one exception: the relay reads its feed (the seat that
serves it) no faster than the watcher reads (:data:`WATCH_RELAY_QUEUE`), so that one that
stops reading fills the seat's queue for it, and the seat drops it; nobody else waits.
``belote-p2p relay`` runs one alone; ``belote-p2p host`` runs one on
its lobby port (:class:`HostPort`), so that a table needs no other machine.

:class:`HostPort` is the host's one TCP port: it reads each new connection's first frame and
hands the connection, that frame included, to the lobby (a ``join``, or after a game an
``again``: :mod:`.rematch`), to the mesh (a ``hello``), to the table's watchers (a
``watch``: :mod:`.watch`) or to the relay (a ``relay-hello``).
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import (
    MAX_CONTROL_FRAME,
    PAIRED,
    Action,
    Close,
    RelayError,
    RelayLimits,
    RelayPhase,
    RelayServer,
    Send,
    check_paired,
    hello_message,
    join_message,
    source_of,
)
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import (
    DEFAULT_MAX_FRAME,
    HELLO_FRAMES,
    FrameDecoder,
    FrameTooLarge,
    decode,
)

from .address import format_address
from .serve import MAX_UNPROVEN_PER_SOURCE, Gate, Ticket, serve_listeners
from .transport import AnyListener, ConnectionClosed, FramedStream, Link, mesh_link

logger = logging.getLogger(__name__)

RELAY_CONNECT_TIMEOUT = 10.0
"""Seconds to open a TCP connection to the relay and pass its challenge."""
SEND_QUEUE_BYTES = 8 << 20
"""Bytes queued for one relay connection before it is cut (its peer does not read)."""
SEND_TIMEOUT = 30.0
"""Seconds one queued chunk may take to leave before its connection is cut."""
COALESCE_BYTES = 1 << 18
"""Bytes of queued frames a relay connection sends in one write, at most."""
NOT_READING = "did not read"
"""The cause the relay counts for a connection cut because a chunk to it did not leave in
:data:`SEND_TIMEOUT` (a watcher that stopped reading, say)."""
WATCH_RELAY_QUEUE = 1 << 13
"""Bytes queued for a watcher before the relay stops reading its feed until they leave; the
size of the kernel buffers of a watch pair too (at the relay, and the feed's at its seat)."""
FIRST_FRAME_TIMEOUT = 10.0
"""Seconds a connection to the host's port has to send its first frame."""
MAX_FIRST_FRAME = 1 << 14


class RelayLink(FramedStream):
    """A :class:`~belote_p2p.net.transport.Link` through a relay (the mesh runs its
    handshake end to end over it). Its first frames are the relay's challenge and its
    answer to our join, then the peer's hello and proof: each is capped to its size."""

    relayed = True

    def __init__(self, stream: trio.abc.Stream, *, relay: str, max_frame: int) -> None:
        opening = (MAX_CONTROL_FRAME, MAX_CONTROL_FRAME, *HELLO_FRAMES)
        super().__init__(stream, max_frame=max_frame, opening=opening)
        self.relay = relay


async def open_relay_link(
    address: tuple[str, int],
    identity: Identity,
    definition: TableDefinition,
    proposal: bytes,
    seat: int,
    peer: int | None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
    connect_timeout: float = RELAY_CONNECT_TIMEOUT,
) -> RelayLink:
    """A link to ``peer`` through the relay at ``address``, once the relay has paired us
    (``peer`` None: a watch feed, paired with a watcher, whose ``watch`` hello comes next
    on the link's ``stream``).

    Proves our seat to the relay (the signed challenge), then waits (as long as the relay
    holds us, or until cancelled) for ``peer``'s own join. Raises :class:`RelayError` when
    the relay refuses us and :class:`ConnectionClosed` or ``OSError`` when it is gone."""
    stream = await connect(address, "the relay", connect_timeout)
    shown = format_address(*address)
    link = RelayLink(stream, relay=shown, max_frame=max_frame)
    try:
        with trio.fail_after(connect_timeout):
            await link.send(hello_message())
            challenge = await link.receive()
            await link.send(join_message(challenge, identity, definition, proposal, seat, peer))
        if peer is None:
            await _paired_exactly(stream)
        else:
            check_paired(await link.receive())
    except trio.TooSlowError:
        await trio.aclose_forcefully(link)
        raise ConnectionClosed(f"the relay at {shown} did not answer") from None
    except (ConnectionClosed, FrameTooLarge) as exc:
        await trio.aclose_forcefully(link)
        raise ConnectionClosed(f"the relay at {shown}: {exc}") from None
    except RelayError as exc:
        await trio.aclose_forcefully(link)
        raise RelayError(f"the relay at {shown}: {exc}") from None
    except BaseException:
        await trio.aclose_forcefully(link)
        raise
    return link


async def _paired_exactly(stream: trio.abc.Stream) -> None:
    """Read the relay's ``relay-paired`` frame to its last byte and no further (a feed's
    watcher may send its hello at once: those bytes are the seat's hub's to read); raise
    :class:`RelayError` for anything else (the relay's error)."""
    read = b""
    decoder = FrameDecoder(MAX_CONTROL_FRAME)
    while True:
        wanted = len(PAIRED) - len(read) if PAIRED.startswith(read) else 1 << 14
        data = await stream.receive_some(max(wanted, 1))
        if not data:
            raise ConnectionClosed("the relay closed the connection")
        read += data
        if read == PAIRED:
            return
        frames = decoder.feed(data)
        if frames:
            check_paired(frames[0])
            raise RelayError("the relay sent more than relay-paired")


async def connect(
    address: tuple[str, int], who: str, timeout: float = RELAY_CONNECT_TIMEOUT
) -> trio.SocketStream:
    """A TCP connection to ``who`` at ``address``; :class:`ConnectionClosed` saying why
    not."""
    host, port = address
    try:
        with trio.fail_after(timeout):
            return await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        why = "no answer" if isinstance(exc, trio.TooSlowError) else _reason(exc)
        shown = format_address(host, port)
        raise ConnectionClosed(f"{who} at {shown} cannot be reached ({why})") from None


def _reason(exc: OSError) -> str:
    """An ``OSError`` of a connection attempt in words (trio's own names the address and
    keeps each attempt's error in a group as its cause)."""
    cause = exc.__cause__
    while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
        cause = cause.exceptions[0]
    for error in (exc, cause):
        if isinstance(error, OSError) and error.errno:
            return os.strerror(error.errno).lower()
    return str(exc)


def relay_fallback(
    address: tuple[str, int],
    identity: Identity,
    definition: TableDefinition,
    proposal: bytes,
    seat: int,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Callable[[int], Awaitable[Link]]:
    """The mesh's fallback (:meth:`~belote_p2p.net.transport.Mesh.run`) through one relay."""

    async def fallback(peer: int) -> Link:
        return await open_relay_link(
            address, identity, definition, proposal, seat, peer, max_frame=max_frame
        )

    return fallback


# -- the relay itself -------------------------------------------------------------------------


@dataclass
class _Out:
    """One relay connection's send side."""

    stream: trio.abc.Stream
    send: trio.MemorySendChannel[bytes]
    receive: trio.MemoryReceiveChannel[bytes]
    cancel: trio.CancelScope = field(default_factory=trio.CancelScope)
    queued: int = 0
    closing: bool = False
    small: bool = False
    """Its kernel buffers are a watcher's (:meth:`RelayService._room`)."""
    left: trio.Event = field(default_factory=trio.Event)
    """Set when queued bytes leave (or the connection closes); then replaced."""

    def moved(self) -> None:
        self.left.set()
        self.left = trio.Event()


class RelayService:
    """A relay: accept connections and run each through one :class:`RelayServer`."""

    def __init__(
        self, limits: RelayLimits | None = None, *, server: RelayServer | None = None
    ) -> None:
        self.server = server if server is not None else RelayServer(limits)
        self._outs: dict[int, _Out] = {}
        self._numbers = itertools.count(1)
        self._wake = trio.Event()
        # The server bounds its unjoined connections itself, per source and with eviction
        # (PROTOCOL.md §8.2): a gate as narrow as the mesh's would let two addresses that
        # open a few dozen bare connections each turn every real table away. Its limit is
        # only a backstop, above the server's own cap.
        self.gate = Gate("relay", limit=2 * self.server.limits.max_connections)
        """The connections accepted and not yet joined, and those refused (:meth:`serve`)."""

    @property
    def stats(self) -> dict[str, Any]:
        return self.server.stats.to_dict()

    async def serve(
        self,
        listeners: Sequence[AnyListener],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Accept relay connections on ``listeners`` until cancelled."""
        await _serve(listeners, self._accepted, self.run_clock, self.gate, task_status)

    async def _accepted(self, stream: trio.abc.Stream, ticket: Ticket) -> None:
        await self.handle(stream, ticket=ticket)

    async def run_clock(self) -> None:
        """Apply the server's deadlines (joins, pairing); run it beside :meth:`handle`."""
        while True:
            deadline = self.server.next_deadline()
            with trio.move_on_at(deadline if deadline is not None else trio.current_time() + 60):
                await self._wake.wait()
                self._wake = trio.Event()
            self._apply(self.server.tick(trio.current_time()))

    async def handle(
        self, stream: trio.abc.Stream, first: bytes = b"", *, ticket: Ticket | None = None
    ) -> None:
        """Run one connection (``first``: bytes already read from it) until it ends;
        ``ticket`` (its place among the unproven, :mod:`.serve`) is released once it has
        joined (proved a seat of a signed table).

        Never raises for anything the connection sent: the server answers bad input with
        a :class:`~belote_p2p.protocol.relay.Close`, and a typed error out of it (a bug)
        closes this connection only (:meth:`_step`)."""
        number = next(self._numbers)
        send, receive = trio.open_memory_channel[bytes](1 << 16)
        out = _Out(stream, send, receive)
        self._outs[number] = out
        source = source_of(peer_host(stream))
        try:
            self._step(number, lambda: self.server.connected(number, trio.current_time(), source))
            self._wake.set()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._send_loop, number, out, nursery.cancel_scope)
                with out.cancel:
                    data = first
                    while True:
                        if data:
                            now = trio.current_time()
                            before = self.server.phase(number)
                            self._step(
                                number, partial(self.server.data_received, number, data, now)
                            )
                            if self.server.phase(number) is not before:
                                # A new phase may bring a nearer deadline; a forwarded frame
                                # or another query of a lister never does.
                                self._wake.set()
                            if ticket is not None and self.server.phase(number) in _JOINED:
                                ticket.release()
                        if out.closing:
                            break
                        await self._room(number)
                        try:
                            data = bytes(await stream.receive_some(1 << 16))
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            break
                        if not data:
                            break
                if not out.closing:
                    self._step(number, partial(self.server.closed, number))
                out.send.close()  # the sender sends what is queued, then ends
        finally:
            self._outs.pop(number, None)
            self._step(number, partial(self.server.closed, number))
            await trio.aclose_forcefully(stream)

    async def _room(self, number: int) -> None:
        """Before reading more of a feed: wait until its watcher has taken what was queued
        for it (the watcher's pace is the feed's; a mesh link is never held back). The
        kernel's buffers of the pair are made small too, so that the wait reaches the seat
        that serves the watcher: it drops a watcher that does not keep up."""
        watcher = self.server.watcher_of(number)
        out = self._outs.get(watcher) if watcher is not None else None
        if out is None:
            return
        if not out.small:
            out.small = True
            set_buffer(out.stream, socket.SO_SNDBUF, WATCH_RELAY_QUEUE)
            feed = self._outs.get(number)
            if feed is not None:
                set_buffer(feed.stream, socket.SO_RCVBUF, WATCH_RELAY_QUEUE)
        while not out.closing and out.queued > WATCH_RELAY_QUEUE:
            await out.left.wait()

    async def _send_loop(self, number: int, out: _Out, scope: trio.CancelScope) -> None:
        """Send what is queued for ``number``, whatever is waiting at once in one write (a
        busy relay makes one system call for several frames), each write within
        :data:`SEND_TIMEOUT` (one cancel scope for the connection's life: making one per
        frame costs more than the frame)."""
        deadline = trio.CancelScope()
        with deadline:
            async for data in out.receive:
                chunks = [data]
                size = len(data)
                while size < COALESCE_BYTES:
                    try:
                        chunks.append(out.receive.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    size += len(chunks[-1])
                deadline.deadline = trio.current_time() + SEND_TIMEOUT
                try:
                    await out.stream.send_all(chunks[0] if len(chunks) == 1 else b"".join(chunks))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                deadline.deadline = math.inf
                out.queued -= size
                out.moved()
            else:
                return
        if deadline.cancelled_caught:
            self.server.stats.refuse(NOT_READING)
        out.cancel.cancel()
        self._step(number, partial(self.server.closed, number))
        out.moved()

    def _step(self, number: int, event: Callable[[], Sequence[Action]]) -> None:
        """Feed the server one event of connection ``number`` and carry out its answer. A
        typed error out of the server closes that connection, and only it."""
        try:
            actions = event()
        except BeloteError as exc:
            logger.error("relay: connection %d: %r; closing it", number, exc)
            self.server.stats.refuse("relay error")
            out = self._outs.get(number)
            if out is not None and not out.closing:
                self._apply([Close(number, f"relay error: {exc}")])
            with suppress(BeloteError):
                self._apply(self.server.closed(number))
            return
        self._apply(actions)

    def _apply(self, actions: Sequence[Action]) -> None:
        for action in actions:
            out = self._outs.get(action.conn)
            if out is None or out.closing:
                if isinstance(action, Send):
                    self.server.count_dropped(1, len(action.data))
                continue
            if isinstance(action, Close):
                logger.info("relay: closing connection %d: %s", action.conn, action.reason)
                out.closing = True
                out.cancel.cancel()
                out.send.close()
                out.moved()
                continue
            if out.queued + len(action.data) > SEND_QUEUE_BYTES:
                self.server.count_dropped(1, len(action.data))
                logger.warning("relay: connection %d does not read; cutting it", action.conn)
                self.server.stats.refuse("not reading")
                self._apply(self.server.closed(action.conn))
                continue
            try:
                out.send.send_nowait(action.data)
            except (trio.WouldBlock, trio.ClosedResourceError):
                self.server.count_dropped(1, len(action.data))
                self._apply(self.server.closed(action.conn))
                continue
            out.queued += len(action.data)


_JOINED = (RelayPhase.WAITING, RelayPhase.PAIRED, RelayPhase.FEED, RelayPhase.ADVERTISING)


def socket_stream(stream: trio.abc.Stream) -> trio.SocketStream | None:
    """The socket under ``stream`` (through the streams wrapped around it), if any."""
    inner: object = stream
    while not isinstance(inner, trio.SocketStream):
        inner = getattr(inner, "transport_stream", None)
        if inner is None:
            return None
    return inner


def set_buffer(stream: trio.abc.Stream, option: int, size: int) -> None:
    """Set a kernel buffer (``socket.SO_SNDBUF``, ``SO_RCVBUF``) of the socket under
    ``stream``, if any: a watcher's bytes wait in a bounded queue of ours, not there."""
    inner = socket_stream(stream)
    if inner is not None:
        with suppress(OSError):
            inner.setsockopt(socket.SOL_SOCKET, option, size)


def peer_host(stream: trio.abc.Stream) -> str:
    """The address of the far end of ``stream`` (through the streams wrapped around a
    socket), or "" when it has none (an in-memory stream, a socket already reset)."""
    inner = socket_stream(stream)
    if inner is None:
        return ""
    try:
        address = inner.socket.getpeername()
    except OSError:
        return ""
    return str(address[0]) if isinstance(address, tuple) else ""


async def _serve(
    listeners: Sequence[AnyListener],
    handle: Callable[[trio.abc.Stream, Ticket], Awaitable[None]],
    clock: Callable[[], Awaitable[None]],
    gate: Gate,
    task_status: trio.TaskStatus[None],
) -> None:
    """Run ``clock`` and ``handle`` every connection accepted on ``listeners``."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(clock)
        await nursery.start(serve_listeners, listeners, handle, gate)
        task_status.started()


# -- the host's one port ----------------------------------------------------------------------


class PrefixedStream(trio.abc.Stream):
    """A stream whose first bytes were already read: they are received again first."""

    def __init__(self, stream: trio.abc.Stream, prefix: bytes) -> None:
        self.transport_stream = stream
        self._prefix = prefix

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.transport_stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.transport_stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._prefix:
            size = len(self._prefix) if max_bytes is None else max_bytes
            data, self._prefix = self._prefix[:size], self._prefix[size:]
            return data
        return bytes(await self.transport_stream.receive_some(max_bytes))

    async def aclose(self) -> None:
        await self.transport_stream.aclose()


class PortError(BeloteError):
    """A connection to the host's port sent nothing the port serves."""


Handler = Callable[[trio.abc.Stream], Awaitable[None]]


class HostPort:
    """The host's one TCP port: lobby, mesh and relay (see the module docstring).

    :attr:`lobby` takes ``join`` (and ``again``) connections while the lobby is open;
    :attr:`mesh` the mesh's ``hello`` connections (they wait until it is set); the relay
    takes the rest."""

    def __init__(self, relay: RelayService | None = None) -> None:
        self.relay = relay if relay is not None else RelayService()
        self.lobby: Handler | None = None
        self.watch: Handler | None = None
        """Serves ``watch`` connections (:meth:`~.watch.WatchHub.handle`; None: closed)."""
        self.gate = Gate("host port", per_source=MAX_UNPROVEN_PER_SOURCE)
        """The connections that have not yet said what they are, and those refused."""
        self._mesh: Callable[[Link], None] | None = None
        self._waiting: list[Link] = []

    def set_mesh(self, incoming: Callable[[Link], None] | None) -> None:
        """Where the mesh's connections go (``Mesh.incoming``); those that came before it
        was set are handed over now."""
        self._mesh = incoming
        if incoming is not None:
            waiting, self._waiting = self._waiting, []
            for link in waiting:
                incoming(link)

    async def serve(
        self,
        listeners: Sequence[AnyListener],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Accept connections on ``listeners`` and hand each over, until cancelled."""
        await _serve(listeners, self._dispatch, self.relay.run_clock, self.gate, task_status)

    async def _dispatch(self, stream: trio.abc.Stream, ticket: Ticket) -> None:
        try:
            kind, read = await self._first_frame(stream)
        except (PortError, trio.TooSlowError, trio.BrokenResourceError) as exc:
            logger.info("host port: a connection sent nothing we serve: %r", exc)
            await trio.aclose_forcefully(stream)
            return
        replay = PrefixedStream(stream, read)
        if kind == "relay":
            await self.relay.handle(stream, read, ticket=ticket)
            return
        # What comes next counts its strangers itself: the mesh its handshakes (its own
        # gate), the lobby a request already read.
        ticket.release()
        if kind in ("join", "again") and self.lobby is not None:
            await self.lobby(replay)
        elif kind == "watch" and self.watch is not None:
            await self.watch(replay)
        elif kind == "hello":
            link = mesh_link(replay)
            if self._mesh is not None:
                self._mesh(link)
            elif len(self._waiting) < 16:
                self._waiting.append(link)
            else:
                await trio.aclose_forcefully(stream)
        else:
            await trio.aclose_forcefully(stream)  # a join, and the lobby is closed

    @staticmethod
    async def _first_frame(stream: trio.abc.Stream) -> tuple[str, bytes]:
        """The ``type`` of the first frame and every byte read so far; the relay's frames
        go as they are (the relay checks them)."""
        decoder = FrameDecoder(MAX_FIRST_FRAME)
        read = b""
        with trio.fail_after(FIRST_FRAME_TIMEOUT):
            while True:
                data = await stream.receive_some(1 << 14)
                if not data:
                    raise PortError("closed before a frame")
                read += data
                try:
                    frames = decoder.feed(data)
                except FrameTooLarge:
                    return "relay", read  # the relay refuses it and counts it
                if frames:
                    break
        try:
            msg = decode(frames[0])
        except RemoteProtocolError:
            return "relay", read
        kind = msg.get("type") if isinstance(msg, dict) else None
        return (kind if kind in ("join", "again", "hello", "watch") else "relay"), read
