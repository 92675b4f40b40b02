"""The lobby: how the peers (four, or three or two as the rules seat) agree on a table
definition before the mesh opens.

One peer hosts. It listens on a TCP port (7777 unless told otherwise); each other peer
connects, sends one join request and waits for the table. Every message is one frame of the
wire's frame format (4-byte big-endian length, then canonical msgpack):

* joiner -> host: ``{type: "join", name, key, port}``: the player's name (1..32
  characters), its Ed25519 public key (32 bytes) and the TCP port its mesh listener is
  already open on (0: it accepts no connection, ``--no-listen``); optionally ``seat`` (the
  seat it asks for, 1..3) and ``partner`` (the name of the player it wants to sit with);
* host -> joiner: ``{type: "table", definition, proposal}`` (:meth:`TableDefinition.to_wire`
  and the host's signature of it, :meth:`TableDefinition.propose`) once every joiner is in
  (three; two at a three-handed table, one at a two-handed one), with ``relay``
  (``host:port``) when the table uses another relay than the host's port; or ``{type:
  "error", reason}`` and the connection closes.

The host takes seat 0 and the joiners the other seats in arrival order, as far as their
requests allow: a requested seat is refused at once when another joiner holds it, a partner
request puts the two at seats 1 and 3 (or the joiner at seat 2, the host's partner; a table
without teams refuses partner requests and seats beyond its own), and the
host may reorder the seats before it signs the table (:meth:`Lobby.reorder`). A seat's
address is the IP the host saw the joiner's connection come from, with the port the joiner
announced (empty for port 0: only a relay reaches it); the host's own is the local IP of the
accepted connections with its port.

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
import ipaddress
import itertools
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.game.rules import RuleSet
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.names import name_problem, safe_text
from belote_p2p.protocol.table import Seat, TableDefinition
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
JOIN_OPTIONAL = frozenset({"seat", "partner"})


class LobbyError(BeloteError):
    """The lobby failed: a refusal from the host, a bad answer, a timeout."""


class HostUnreachable(LobbyError):
    """No TCP connection to the host's lobby could be opened."""


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
    """The joiner's mesh port; 0 if it accepts no connection (a relay reaches it)."""
    seat: int | None = None
    """The seat it asks for (1..3)."""
    partner: str | None = None
    """The name of the player it wants as its partner."""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": "join", "name": self.name, "key": self.key}
        wire["port"] = self.port
        if self.seat is not None:
            wire["seat"] = self.seat
        if self.partner is not None:
            wire["partner"] = self.partner
        return wire

    @classmethod
    def from_wire(cls, data: object) -> JoinRequest:
        """Parse strictly; :class:`JoinRefused` says what is wrong."""
        if not isinstance(data, dict) or data.get("type") != "join":
            raise JoinRefused("expected a join request")
        if not JOIN_KEYS <= set(data) <= JOIN_KEYS | JOIN_OPTIONAL:
            raise JoinRefused(
                f"a join request has the keys {sorted(JOIN_KEYS)}, and may have "
                f"{sorted(JOIN_OPTIONAL)}"
            )
        name, key, port = data["name"], data["key"], data["port"]
        check_name(name)
        if type(key) is not bytes or len(key) != KEY_SIZE:
            raise JoinRefused(f"key must be {KEY_SIZE} bytes")
        if type(port) is not int or not 0 <= port < 65536:
            raise JoinRefused("port must be an int in 0..65535")
        seat = data.get("seat")
        if seat is not None and (type(seat) is not int or not 1 <= seat < SEATS):
            raise JoinRefused("a joiner asks for seat 1, 2 or 3 (seat 0 is the host's)")
        partner = data.get("partner")
        if partner is not None:
            check_name(partner)
        return cls(name, key, port, seat, partner)


def check_name(name: object) -> str:
    """``name`` if a seat may carry it (PROTOCOL.md §6.1), else :class:`JoinRefused`."""
    problem = name_problem(name)
    if problem is not None:
        raise JoinRefused(problem)
    assert isinstance(name, str)
    return name


@dataclass(frozen=True, slots=True)
class _Joined:
    request: JoinRequest
    ip: str
    """The address the host saw the connection come from."""
    local_ip: str
    """The host's own address on that connection."""


def same_name(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


class Lobby:
    """The host's side of the lobby, without I/O: who asked to join, where they sit, and the
    definition."""

    def __init__(
        self,
        host: JoinRequest,
        rules: RuleSet,
        *,
        table_id: bytes | None = None,
    ) -> None:
        self.host = host
        self.rules = rules
        self.seats = rules.seats
        """The table's seats: the host and ``seats - 1`` joiners (4, or 3 or 2)."""
        self.table_id = secrets.token_bytes(TABLE_ID_SIZE) if table_id is None else table_id
        if len(self.table_id) != TABLE_ID_SIZE:
            raise ValueError(f"a table id is {TABLE_ID_SIZE} bytes")
        self._joined: list[_Joined] = []
        self._order: list[bytes] | None = None
        """The host's own order of the joiners' keys for seats 1..3, once it chose one."""

    @property
    def full(self) -> bool:
        return len(self._joined) == self.seats - 1

    @property
    def joined(self) -> tuple[JoinRequest, ...]:
        return tuple(j.request for j in self._joined)

    def join(self, request: JoinRequest, ip: str, local_ip: str) -> int:
        """Take a join request that came from ``ip``; return the seat it will have.

        Raises :class:`JoinRefused` when the table is full or the key is already seated.
        """
        if self.full:
            raise JoinRefused("the table is full")
        if request.seat is not None and request.seat >= self.seats:
            raise JoinRefused(f"this table has seats 1 to {self.seats - 1} for joiners")
        if request.partner is not None and not self.rules.has_teams:
            raise JoinRefused(f"{self.rules.name} has no partners: every player is for himself")
        keys = {self.host.key, *(j.request.key for j in self._joined)}
        if request.key in keys:
            raise JoinRefused(
                f"the key {fingerprint(request.key)} is already at the table (two players "
                "on one machine: give each its own --home DIR, hence its own key)"
            )
        joined = [*self._joined, _Joined(request, ip, local_ip)]
        seats = self._assign([j.request for j in joined])
        if seats is None:
            raise JoinRefused(self._why_not(request))
        self._joined = joined
        self._order = None
        return seats[-1]

    def seating(self) -> list[tuple[int, JoinRequest]]:
        """The joiners' seats as they stand now (each request honoured), by seat."""
        requests = [j.request for j in self._joined]
        if self._order is not None:
            by_key = {r.key: r for r in requests}
            return [(i + 1, by_key[key]) for i, key in enumerate(self._order)]
        seats = self._assign(requests)
        assert seats is not None, "every join was checked"
        return sorted(zip(seats, requests, strict=True), key=lambda pair: pair[0])

    def reorder(self, names: Sequence[str]) -> None:
        """The host seats the three joiners itself: ``names`` for seats 1, 2 and 3 (their
        requests no longer count). :class:`JoinRefused` if the names are not the joiners'."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        left = list(self._joined)
        order = []
        for name in names:
            found = next((j for j in left if same_name(j.request.name, name)), None)
            if found is None:
                raise JoinRefused(f"{name!r} is not a joiner left to seat")
            left.remove(found)
            order.append(found.request.key)
        if left or len(order) != self.seats - 1:
            raise JoinRefused(f"name the {self.seats - 1} joiners, for seats 1 to {self.seats - 1}")
        self._order = order

    def swap(self, a: int, b: int) -> None:
        """The host swaps the joiners at seats ``a`` and ``b`` (1..seats-1)."""
        if not {a, b} <= set(range(1, self.seats)):
            raise JoinRefused(f"the joiners sit at seats 1 to {self.seats - 1}")
        names = [r.name for _, r in self.seating()]
        names[a - 1], names[b - 1] = names[b - 1], names[a - 1]
        self.reorder(names)

    def _assign(self, requests: Sequence[JoinRequest]) -> list[int] | None:
        """A seat for each request (in arrival order where the requests leave a choice), or
        None if no seating honours them all. A partner not at the table yet keeps a seat
        free for itself; once the table is full, an absent partner is not waited for."""
        full = len(requests) == self.seats - 1
        for seats in itertools.permutations(range(1, self.seats), len(requests)):
            pairs = zip(requests, seats, strict=True)
            if all(self._fits(r, s, requests, seats, full) for r, s in pairs):
                return list(seats)
        return None

    def _fits(
        self,
        request: JoinRequest,
        seat: int,
        requests: Sequence[JoinRequest],
        seats: Sequence[int],
        full: bool,
    ) -> bool:
        if request.seat is not None and request.seat != seat:
            return False
        partner = request.partner
        if partner is None:
            return True
        if same_name(partner, self.host.name):
            return seat == 2
        where = [
            s
            for r, s in zip(requests, seats, strict=True)
            if r is not request and same_name(r.name, partner)
        ]
        if where:
            return {seat, where[0]} == {1, 3}
        # The partner has not come yet: keep it the seat opposite.
        return full or (seat in (1, 3) and (4 - seat) not in seats)

    def _why_not(self, request: JoinRequest) -> str:
        """Why ``request`` cannot be seated with the joiners already in."""
        others = [j.request for j in self._joined]
        if request.seat is not None:
            for other in others:
                if other.seat == request.seat:
                    return f"seat {request.seat} is taken: {other.name} asked for it first"
            if request.seat == 2 and any(
                o.partner and same_name(o.partner, self.host.name) for o in others
            ):
                return "seat 2 is taken: another joiner is the host's partner"
            return f"seat {request.seat} is taken: the other joiners' requests hold it"
        if request.partner is not None:
            return (
                f"no seat is left opposite {request.partner}: the other joiners' requests hold them"
            )
        return "the seats left are held by the other joiners' requests"

    def leave(self, key: bytes) -> None:
        """A joiner hung up before the table filled: free its place."""
        if self.full:
            raise JoinRefused("the table is already complete")
        self._joined = [j for j in self._joined if j.request.key != key]
        self._order = None

    def definition(self) -> TableDefinition:
        """The table, once every joiner is in (``seats - 1`` of them)."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        remote = [j for j in self._joined if not is_loopback(j.ip)]
        # A joiner on the host's machine came in over loopback; peers elsewhere reach it, as
        # they reach the host, at the host's address on their own connections.
        lan_ip = remote[0].local_ip if remote else None
        host_ip = lan_ip or self._joined[0].local_ip

        def address(ip: str, port: int) -> str:
            if not port:
                return ""  # it does not listen: a relay reaches it
            if lan_ip is not None and is_loopback(ip):
                ip = lan_ip
            return format_address(plain_ip(ip), port)

        by_key = {j.request.key: j for j in self._joined}
        seats = [Seat(self.host.name, self.host.key, address(host_ip, self.host.port))]
        for _, request in self.seating():
            joined = by_key[request.key]
            seats.append(Seat(request.name, request.key, address(joined.ip, request.port)))
        return TableDefinition(self.table_id, self.rules, tuple(seats))


def plain_ip(ip: str) -> str:
    """An IPv4-mapped IPv6 address as the IPv4 address it is; any other as it is."""
    try:
        mapped = ipaddress.ip_address(ip.partition("%")[0])
    except ValueError:
        return ip
    if isinstance(mapped, ipaddress.IPv6Address) and mapped.ipv4_mapped is not None:
        return str(mapped.ipv4_mapped)
    return ip


def table_message(definition: TableDefinition, proposal: bytes, relay: str | None = None) -> bytes:
    message = {"type": "table", "definition": definition.to_wire(), "proposal": proposal}
    if relay is not None:
        message["relay"] = relay
    return encode(message)


class LobbyAnswer(NamedTuple):
    """What a joiner gets from the host's lobby."""

    definition: TableDefinition
    seat: int
    proposal: bytes
    """The host's signature of the definition."""
    relay: str | None
    """The relay the host names (``host:port``), if not the host's own port."""


def error_message(reason: str) -> bytes:
    return encode({"type": "error", "reason": reason})


def parse_answer(data: bytes, key: bytes, port: int, name: str | None = None) -> LobbyAnswer:
    """A joiner reads the host's answer: the definition, its seat, the host's signature of
    the definition and the relay it names, or :class:`LobbyError`. Our seat must carry our
    ``key`` and ``port``, and the ``name`` we asked for (a rematch, which asks for no name,
    checks that the names did not change)."""
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
        or not {"type", "definition", "proposal"}
        <= set(msg)
        <= {"type", "definition", "proposal", "relay"}
    ):
        raise LobbyError("the host sent neither a table nor an error")
    relay = msg.get("relay")
    if relay is not None:
        try:
            parse_address(relay if isinstance(relay, str) else "")
        except ValueError:
            raise LobbyError(f"the host named a bad relay: {relay!r}") from None
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
    if name is not None and definition.seats[seat].name != name:
        raise LobbyError(
            f"the host renamed us: our seat carries the name "
            f"{safe_text(definition.seats[seat].name)!r}, we asked for {name!r}"
        )
    ours = definition.seats[seat].address
    if not port:
        if ours:
            raise LobbyError(f"the host gave us the address {ours}, we do not listen")
        return LobbyAnswer(definition, seat, proposal, relay)
    try:
        _, seat_port = parse_address(ours)
    except ValueError as exc:
        raise LobbyError(f"the host gave us a bad address: {exc}") from None
    if seat_port != port:
        raise LobbyError(f"the host gave us port {seat_port}, we announced {port}")
    return LobbyAnswer(definition, seat, proposal, relay)


# -- trio ---------------------------------------------------------------------------------


def _socket_ips(stream: trio.abc.Stream) -> tuple[str, str]:
    """(remote IP, local IP) of a TCP stream (or of the stream it wraps)."""
    while not isinstance(stream, trio.SocketStream) and hasattr(stream, "transport_stream"):
        stream = stream.transport_stream
    if not isinstance(stream, trio.SocketStream):
        return "127.0.0.1", "127.0.0.1"
    peer: Any = stream.socket.getpeername()
    local: Any = stream.socket.getsockname()
    return plain_ip(str(peer[0])), plain_ip(str(local[0]))


async def host_lobby(
    lobby: Lobby,
    listeners: Sequence[trio.abc.Listener[Any]],
    host: Identity,
    *,
    wait: float = DEFAULT_WAIT,
    request_timeout: float = REQUEST_TIMEOUT,
    on_join: Callable[[int, JoinRequest], None] | None = None,
    arrange: Callable[[Lobby], Awaitable[None]] | None = None,
    hand_over: Callable[[Callable[[trio.abc.Stream], Awaitable[None]] | None], None] | None = None,
    relay: str | None = None,
) -> tuple[TableDefinition, bytes]:
    """Accept joiners on ``listeners`` until the table is full; send them the definition.

    ``host`` signs the definition (the proposal every seat repeats when it signs the table);
    the definition and that signature are returned.
    ``on_join(seat, request)`` (if given) is called as each joiner is accepted; once the
    table is full, ``arrange(lobby)`` may reorder the seats (a prompt, the host's order)
    before the definition is made. ``hand_over(handler)`` registers the lobby's handler with
    whatever else accepts connections for it (the host's port, :class:`~.relay.HostPort`),
    and ``hand_over(None)`` withdraws it. ``relay`` is the relay the table uses if not the
    host's port. Refused requests get an error frame. Raises :class:`LobbyError` if the
    table does not fill within ``wait`` seconds. Closes the listeners before returning.
    """
    complete = trio.Event()
    sent = trio.Event()
    holders: dict[bytes, FramedStream] = {}

    async def handle(stream: trio.abc.Stream) -> None:
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
        if hand_over is not None:
            hand_over(handle)
        with trio.move_on_after(wait):
            await complete.wait()
            if hand_over is not None:
                hand_over(None)
            if arrange is not None:
                await arrange(lobby)
            definition = lobby.definition()
            proposal = definition.propose(host)
            message = table_message(definition, proposal, relay)
            for conn in list(holders.values()):
                await _send_quietly(conn, message)
        if hand_over is not None:
            hand_over(None)
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
    listener: trio.abc.Listener[Any],
    nursery: trio.Nursery,
    handle: Callable[[trio.abc.Stream], Awaitable[None]],
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
    seat: int | None = None,
    partner: str | None = None,
) -> LobbyAnswer:
    """Join the table hosted at ``host:port``, asking for ``seat`` or ``partner`` if given;
    return the definition, our seat, the host's signature of the definition and the relay
    it names. ``mesh_port`` 0: we accept no connection (a relay reaches us).

    Raises :class:`JoinRefused` when the host refuses us and :class:`LobbyError` for every
    other failure (no connection, a bad answer, no answer within ``wait`` seconds).
    """
    request = JoinRequest(check_name(name), key, mesh_port, seat, partner)
    try:
        with trio.fail_after(connect_timeout):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        raise HostUnreachable(
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
    return parse_answer(answer, key, mesh_port, request.name)
