"""The lobby: how four peers agree on a table definition before the mesh opens.

One peer hosts. It listens on a TCP port (7777 unless told otherwise); each other peer
connects, sends one join request and waits for the table. Every message is one frame of the
wire's frame format (4-byte big-endian length, then canonical msgpack):

* joiner -> host: ``{type: "join", name, key, port}``: the player's name (1..32
  characters), its Ed25519 public key (32 bytes) and the TCP port its mesh listener is
  already open on;
* host -> joiner: ``{type: "table", definition, proposal}`` (:meth:`TableDefinition.to_wire`
  and the host's signature of it, :meth:`TableDefinition.propose`) once three joiners are
  in, or ``{type: "error", reason}`` and the connection closes.

The host takes seat 0 and the joiners the following seats in arrival order. A seat's address
is the IP the host saw the joiner's connection come from, with the port the joiner announced;
the host's own is the local IP of the accepted connections with its mesh port.

Nothing here is trusted for long: the lobby only proposes a definition, signed by the host.
Every peer signs the definition's digest in its first envelope, with the host's signature of
it, and the mesh handshake makes each peer prove its key: a host that proposed different
definitions to different peers is caught with two of its own signatures, and a joiner that
announced a key it does not hold cannot pass the handshake, before a card is dealt.

:class:`Lobby` is the host's sans-io bookkeeping; :func:`host_lobby` and :func:`join_table`
move its bytes over trio.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.game.rules import RuleSet
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.table import MAX_NAME, Seat, TableDefinition
from belote_p2p.protocol.wire import KEY_SIZE, SEATS, TABLE_ID_SIZE, FrameTooLarge, decode, encode

from .address import format_address, is_loopback, parse_address
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

DEFAULT_PORT = 7777
MAX_LOBBY_FRAME = 1 << 14
"""A join request or a table definition is far below 16 KiB."""
REQUEST_TIMEOUT = 10.0
"""Seconds a joiner has, once connected, to send its request."""
DEFAULT_WAIT = 900.0
"""Seconds the host waits for the table to fill, and a joiner for the table."""
JOIN_KEYS = frozenset({"type", "name", "key", "port"})


class LobbyError(BeloteError):
    """The lobby failed: a refusal from the host, a bad answer, a timeout."""


class JoinRefused(LobbyError):
    """The host (or, on the host side, the lobby) refused a join request; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class JoinRequest:
    name: str
    key: bytes
    port: int

    def to_wire(self) -> dict[str, Any]:
        return {"type": "join", "name": self.name, "key": self.key, "port": self.port}

    @classmethod
    def from_wire(cls, data: object) -> JoinRequest:
        """Parse strictly; :class:`JoinRefused` says what is wrong."""
        if not isinstance(data, dict) or data.get("type") != "join":
            raise JoinRefused("expected a join request")
        if set(data) != JOIN_KEYS:
            raise JoinRefused(f"a join request has exactly the keys {sorted(JOIN_KEYS)}")
        name, key, port = data["name"], data["key"], data["port"]
        check_name(name)
        if type(key) is not bytes or len(key) != KEY_SIZE:
            raise JoinRefused(f"key must be {KEY_SIZE} bytes")
        if type(port) is not int or not 0 < port < 65536:
            raise JoinRefused("port must be an int in 1..65535")
        return cls(name, key, port)


def check_name(name: object) -> str:
    if type(name) is not str or not 0 < len(name) <= MAX_NAME or not name.isprintable():
        raise JoinRefused(f"a name is 1..{MAX_NAME} printable characters")
    return name


@dataclass(frozen=True, slots=True)
class _Joined:
    request: JoinRequest
    ip: str
    """The address the host saw the connection come from."""
    local_ip: str
    """The host's own address on that connection."""


class Lobby:
    """The host's side of the lobby, without I/O: who asked to join, and the definition."""

    def __init__(
        self,
        host: JoinRequest,
        rules: RuleSet,
        *,
        table_id: bytes | None = None,
    ) -> None:
        self.host = host
        self.rules = rules
        self.table_id = secrets.token_bytes(TABLE_ID_SIZE) if table_id is None else table_id
        if len(self.table_id) != TABLE_ID_SIZE:
            raise ValueError(f"a table id is {TABLE_ID_SIZE} bytes")
        self._joined: list[_Joined] = []

    @property
    def full(self) -> bool:
        return len(self._joined) == SEATS - 1

    @property
    def joined(self) -> tuple[JoinRequest, ...]:
        return tuple(j.request for j in self._joined)

    def join(self, request: JoinRequest, ip: str, local_ip: str) -> int:
        """Take a join request that came from ``ip``; return the seat it will have.

        Raises :class:`JoinRefused` when the table is full or the key is already seated.
        """
        if self.full:
            raise JoinRefused("the table is full")
        keys = {self.host.key, *(j.request.key for j in self._joined)}
        if request.key in keys:
            raise JoinRefused(f"the key {fingerprint(request.key)} is already at the table")
        self._joined.append(_Joined(request, ip, local_ip))
        return len(self._joined)

    def leave(self, key: bytes) -> None:
        """A joiner hung up before the table filled: free its place."""
        if self.full:
            raise JoinRefused("the table is already complete")
        self._joined = [j for j in self._joined if j.request.key != key]

    def definition(self) -> TableDefinition:
        """The table, once three joiners are in."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        remote = [j for j in self._joined if not is_loopback(j.ip)]
        # A joiner on the host's machine came in over loopback; peers elsewhere reach it, as
        # they reach the host, at the host's address on their own connections.
        lan_ip = remote[0].local_ip if remote else None
        host_ip = lan_ip or self._joined[0].local_ip

        def address(ip: str, port: int) -> str:
            if lan_ip is not None and is_loopback(ip):
                ip = lan_ip
            return format_address(ip, port)

        seats = [Seat(self.host.name, self.host.key, format_address(host_ip, self.host.port))]
        seats += [
            Seat(j.request.name, j.request.key, address(j.ip, j.request.port)) for j in self._joined
        ]
        return TableDefinition(self.table_id, self.rules, tuple(seats))


def table_message(definition: TableDefinition, proposal: bytes) -> bytes:
    return encode({"type": "table", "definition": definition.to_wire(), "proposal": proposal})


def error_message(reason: str) -> bytes:
    return encode({"type": "error", "reason": reason})


def parse_answer(data: bytes, key: bytes, port: int) -> tuple[TableDefinition, int, bytes]:
    """A joiner reads the host's answer: the definition, its seat and the host's signature of
    the definition, or :class:`LobbyError`."""
    try:
        msg = decode(data)
    except RemoteProtocolError as exc:
        raise LobbyError(f"the host sent something that is not canonical msgpack: {exc}") from None
    if isinstance(msg, dict) and msg.get("type") == "error":
        reason = msg.get("reason")
        raise JoinRefused(reason if isinstance(reason, str) else "refused")
    if (
        not isinstance(msg, dict)
        or msg.get("type") != "table"
        or set(msg) != {"type", "definition", "proposal"}
    ):
        raise LobbyError("the host sent neither a table nor an error")
    try:
        definition = TableDefinition.from_wire(msg["definition"])
    except ValueError as exc:
        raise LobbyError(f"the host sent a bad table definition: {exc}") from None
    proposal = msg["proposal"]
    if not definition.proposed_by_host(proposal):
        raise LobbyError("the host's signature of the table does not verify")
    seats = [i for i, s in enumerate(definition.seats) if s.key == key]
    if len(seats) != 1:
        raise LobbyError("the table the host sent does not seat our key")
    seat = seats[0]
    if seat == 0:
        raise LobbyError("the table the host sent gives our key the host's seat")
    try:
        _, seat_port = parse_address(definition.seats[seat].address)
    except ValueError as exc:
        raise LobbyError(f"the host gave us a bad address: {exc}") from None
    if seat_port != port:
        raise LobbyError(f"the host gave us port {seat_port}, we announced {port}")
    return definition, seat, proposal


# -- trio ---------------------------------------------------------------------------------


def _socket_ips(stream: trio.abc.Stream) -> tuple[str, str]:
    """(remote IP, local IP) of a TCP stream."""
    if not isinstance(stream, trio.SocketStream):
        return "127.0.0.1", "127.0.0.1"
    peer: Any = stream.socket.getpeername()
    local: Any = stream.socket.getsockname()
    return str(peer[0]), str(local[0])


async def host_lobby(
    lobby: Lobby,
    listeners: Sequence[trio.SocketListener],
    host: Identity,
    *,
    wait: float = DEFAULT_WAIT,
    request_timeout: float = REQUEST_TIMEOUT,
    on_join: Callable[[int, JoinRequest], None] | None = None,
) -> tuple[TableDefinition, bytes]:
    """Accept joiners on ``listeners`` until the table is full; send them the definition.

    ``host`` signs the definition (the proposal every seat repeats when it signs the table);
    the definition and that signature are returned.
    ``on_join(seat, request)`` (if given) is called as each joiner is accepted. Refused
    requests get an error frame. Raises :class:`LobbyError` if the table does not fill
    within ``wait`` seconds. Closes the listeners before returning.
    """
    complete = trio.Event()
    sent = trio.Event()
    holders: dict[bytes, FramedStream] = {}

    async def handle(stream: trio.SocketStream) -> None:
        ip, local_ip = _socket_ips(stream)
        async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
            try:
                with trio.fail_after(request_timeout):
                    data = await conn.receive()
                request = JoinRequest.from_wire(_decode_or_refuse(data))
                seat = lobby.join(request, ip, local_ip)
            except JoinRefused as exc:
                logger.warning("lobby: refused %s: %s", ip, exc.reason)
                await _send_quietly(conn, error_message(exc.reason))
                return
            except (trio.TooSlowError, ConnectionClosed, FrameTooLarge) as exc:
                logger.info("lobby: a connection from %s ended without a request: %r", ip, exc)
                await _send_quietly(conn, error_message("no valid join request"))
                return
            holders[request.key] = conn
            if on_join is not None:
                on_join(seat, request)
            if lobby.full:
                complete.set()
            async with trio.open_nursery() as watch:
                watch.start_soon(_watch_hangup, conn, lobby, request, complete, watch.cancel_scope)
                await sent.wait()
                watch.cancel_scope.cancel()
            holders.pop(request.key, None)

    definition: TableDefinition | None = None
    proposal = b""
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept_loop, listener, nursery, handle)
        with trio.move_on_after(wait):
            await complete.wait()
            definition = lobby.definition()
            proposal = definition.propose(host)
            message = table_message(definition, proposal)
            for conn in list(holders.values()):
                await _send_quietly(conn, message)
        sent.set()
        for listener in listeners:
            await listener.aclose()
        # The handlers close their connections once ``sent`` is set; then the nursery ends.
        nursery.cancel_scope.deadline = trio.current_time() + request_timeout
    if definition is None:
        raise LobbyError(f"the table did not fill within {wait:.0f} s")
    return definition, proposal


def _decode_or_refuse(data: bytes) -> object:
    try:
        return decode(data)
    except RemoteProtocolError:
        raise JoinRefused("a join request is one canonical msgpack map") from None


async def _watch_hangup(
    conn: FramedStream,
    lobby: Lobby,
    request: JoinRequest,
    complete: trio.Event,
    scope: trio.CancelScope,
) -> None:
    """A joiner says nothing more; if it hangs up before the table fills, free its place."""
    with contextlib.suppress(ConnectionClosed, FrameTooLarge):
        await conn.receive()
    if not complete.is_set():
        logger.info("lobby: %s left before the table filled", request.name)
        lobby.leave(request.key)
        scope.cancel()


async def _accept_loop(
    listener: trio.SocketListener,
    nursery: trio.Nursery,
    handle: Callable[[trio.SocketStream], Awaitable[None]],
) -> None:
    while True:
        try:
            stream = await listener.accept()
        except trio.ClosedResourceError:
            return
        nursery.start_soon(handle, stream)


async def _send_quietly(conn: FramedStream, payload: bytes) -> None:
    try:
        with trio.move_on_after(REQUEST_TIMEOUT):
            await conn.send(payload)
    except ConnectionClosed:
        pass


def _unreachable(exc: BaseException) -> str:
    """Why a host cannot be reached, in words (no Python names, no errno)."""
    if isinstance(exc, trio.TooSlowError):
        return "no answer (is the address right, and the port open?)"
    if isinstance(exc, socket.gaierror):
        return "no such host name"
    if isinstance(exc, ConnectionRefusedError):
        return "nobody listens there (is the table still open?)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


async def join_table(
    host: str,
    port: int,
    name: str,
    key: bytes,
    mesh_port: int,
    *,
    connect_timeout: float = 10.0,
    wait: float = DEFAULT_WAIT,
) -> tuple[TableDefinition, int, bytes]:
    """Join the table hosted at ``host:port``; return the definition, our seat and the
    host's signature of the definition.

    Raises :class:`JoinRefused` when the host refuses us and :class:`LobbyError` for every
    other failure (no connection, a bad answer, no answer within ``wait`` seconds).
    """
    request = JoinRequest(check_name(name), key, mesh_port)
    try:
        with trio.fail_after(connect_timeout):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        raise LobbyError(
            f"cannot reach the host at {format_address(host, port)}: {_unreachable(exc)}"
        ) from None
    async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
        try:
            with trio.fail_after(connect_timeout):
                await conn.send(encode(request.to_wire()))
            with trio.fail_after(wait):
                answer = await conn.receive()
        except trio.TooSlowError:
            raise LobbyError(f"no table from the host within {wait:.0f} s") from None
        except (ConnectionClosed, FrameTooLarge) as exc:
            raise LobbyError(f"the host closed the lobby: {exc}") from None
    return parse_answer(answer, key, mesh_port)
