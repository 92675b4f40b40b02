"""A rematch: the same four players, the same seats, a new game, the deal passed on.

After a game played out, each joiner dials the host's lobby port again and says whether it
wants another game (``{"type": "again", "table": old table id, "key", "port": its new mesh
port, "again": bool}``, one frame of canonical msgpack, as in the lobby, ``PROTOCOL.md``
§6.0). The host answers every joiner at once when everyone has answered: the new table (the
lobby's ``{"type": "table", "definition", "proposal"}``: a new table id, the same rules with
the next first dealer, the same names, keys and seats, the new mesh ports) if all four want
it, else an error naming who did not. Each joiner checks that the new table is the old one
but for its id, its first dealer and its addresses (:func:`check_rematch`) before signing
it, as every peer signs every table; from there the game is a new game like any other.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import trio

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import FrameTooLarge, decode, encode

from .address import format_address
from .lobby import (
    MAX_LOBBY_FRAME,
    REQUEST_TIMEOUT,
    JoinRefused,
    JoinRequest,
    Lobby,
    LobbyError,
    _socket_ips,
    error_message,
    parse_answer,
    table_message,
)
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

REMATCH_WAIT = 120.0
"""Seconds the host waits for every player's answer."""
DIAL_FOR = 15.0
"""Seconds a joiner keeps dialling a host that has not reopened its lobby yet."""


class NoRematch(LobbyError):
    """No new game: someone did not want one (or did not answer), or the host is gone."""


@dataclass(frozen=True, slots=True)
class RematchAnswer:
    seat: int
    again: bool


def check_rematch(old: TableDefinition, new: TableDefinition) -> None:
    """``new`` is the rematch of ``old``: another table id, the same rules but the next
    first dealer, the same names and keys in the same seats. Raises :class:`LobbyError`."""
    if new.table_id == old.table_id:
        raise LobbyError("the rematch reuses the old table id")
    expected = old.rules.with_(first_dealer=(old.rules.first_dealer + 1) % 4)
    if new.rules != expected:
        raise LobbyError("the rematch changes the rules")
    if [(s.name, s.key) for s in new.seats] != [(s.name, s.key) for s in old.seats]:
        raise LobbyError("the rematch changes the players or their seats")


def again_message(old: TableDefinition, key: bytes, port: int, again: bool) -> bytes:
    return encode(
        {"type": "again", "table": old.table_id, "key": key, "port": port, "again": again}
    )


def parse_again(data: bytes, old: TableDefinition) -> tuple[int, int, bool]:
    """(seat, mesh port, answer) of a joiner's rematch request; :class:`JoinRefused`."""
    try:
        msg = decode(data)
    except RemoteProtocolError:
        raise JoinRefused("a rematch answer is one canonical msgpack map") from None
    if (
        not isinstance(msg, dict)
        or msg.get("type") != "again"
        or set(msg) != {"type", "table", "key", "port", "again"}
        or msg["table"] != old.table_id
        or type(msg["port"]) is not int
        or not 0 < msg["port"] < 65536
        or type(msg["again"]) is not bool
    ):
        raise JoinRefused("not a rematch answer for this table")
    seats = [i for i, s in enumerate(old.seats) if s.key == msg["key"] and i != 0]
    if not seats:
        raise JoinRefused("that key did not play at this table")
    return seats[0], msg["port"], msg["again"]


async def host_rematch(
    old: TableDefinition,
    identity: Identity,
    listeners: Sequence[trio.SocketListener],
    mesh_port: int,
    host_again: Callable[[], Awaitable[bool]],
    *,
    on_answer: Callable[[RematchAnswer], None] | None = None,
    wait: float = REMATCH_WAIT,
) -> tuple[TableDefinition, bytes]:
    """Gather the answers to ``host_again()`` (ours) and the three joiners'; the new table
    and our proposal of it, or :class:`NoRematch` (every joiner connected is told why).
    Closes the listeners before returning."""
    answers: dict[int, bool] = {}
    conns: dict[int, tuple[FramedStream, JoinRequest, str, str]] = {}
    decided = trio.Event()
    everyone = trio.Event()
    outcome: list[tuple[TableDefinition, bytes] | str] = []
    names = [s.name for s in old.seats]

    def answered(seat: int, again: bool) -> None:
        answers[seat] = again
        if on_answer is not None:
            on_answer(RematchAnswer(seat, again))
        if not again:
            decide(f"{names[seat]} does not want to play again")
        elif len(answers) == 4 and all(answers.values()):
            decide(None)

    def decide(refusal: str | None) -> None:
        if decided.is_set():
            return
        if refusal is not None:
            outcome.append(refusal)
        else:
            host = JoinRequest(old.seats[0].name, identity.public_key_bytes, mesh_port)
            rules = old.rules.with_(first_dealer=(old.rules.first_dealer + 1) % 4)
            lobby = Lobby(host, rules)
            for seat in (1, 2, 3):
                _, request, ip, local_ip = conns[seat]
                lobby.join(request, ip, local_ip)
            definition = lobby.definition()
            outcome.append((definition, definition.propose(identity)))
        decided.set()

    async def handle(stream: trio.SocketStream) -> None:
        ip, local_ip = _socket_ips(stream)
        async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
            try:
                with trio.fail_after(REQUEST_TIMEOUT):
                    data = await conn.receive()
                seat, port, again = parse_again(data, old)
            except (JoinRefused, trio.TooSlowError, ConnectionClosed, FrameTooLarge) as exc:
                with contextlib.suppress(ConnectionClosed, trio.TooSlowError):
                    with trio.fail_after(REQUEST_TIMEOUT):
                        await conn.send(error_message(str(exc) or "no answer"))
                return
            request = JoinRequest(old.seats[seat].name, old.seats[seat].key, port)
            conns[seat] = (conn, request, ip, local_ip)
            if len(conns) == 3:
                everyone.set()
            if seat not in answers:
                answered(seat, again)
            await decided.wait()
            result = outcome[0]
            payload = error_message(result) if isinstance(result, str) else table_message(*result)
            with contextlib.suppress(ConnectionClosed, trio.TooSlowError):
                with trio.fail_after(REQUEST_TIMEOUT):
                    await conn.send(payload)

    async def accept(listener: trio.SocketListener, handlers: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except trio.ClosedResourceError:
                return
            handlers.start_soon(handle, stream)

    async def ours() -> None:
        answered(0, await host_again())

    try:
        async with trio.open_nursery() as handlers, trio.open_nursery() as acceptors:
            for listener in listeners:
                acceptors.start_soon(accept, listener, handlers)
            acceptors.start_soon(ours)
            with trio.move_on_after(wait):
                await decided.wait()
            if not decided.is_set():
                late = [names[s] for s in range(4) if s not in answers]
                decide(f"no answer from {' and '.join(late)}")
            # A joiner still on its way hears the outcome too.
            with trio.move_on_after(REQUEST_TIMEOUT):
                await everyone.wait()
            acceptors.cancel_scope.cancel()
            # Each joiner connected hears the outcome (within a bounded time), then we stop.
    finally:
        for listener in listeners:
            await listener.aclose()
    result = outcome[0]
    if isinstance(result, str):
        raise NoRematch(result)
    return result


async def join_rematch(
    host: str,
    port: int,
    old: TableDefinition,
    key: bytes,
    mesh_port: int,
    again: bool,
    *,
    dial_for: float = DIAL_FOR,
    wait: float = REMATCH_WAIT,
) -> tuple[TableDefinition, int, bytes]:
    """Tell the host at ``host:port`` our answer; the new table, our seat and the host's
    proposal, or :class:`NoRematch`."""
    stream: trio.SocketStream | None = None
    with trio.move_on_after(dial_for):
        while stream is None:
            try:
                stream = await trio.open_tcp_stream(host, port)
            except OSError:
                await trio.sleep(0.5)
    if stream is None:
        raise NoRematch(f"the host ({format_address(host, port)}) offers no other game")
    async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
        try:
            with trio.fail_after(REQUEST_TIMEOUT):
                await conn.send(again_message(old, key, mesh_port, again))
            with trio.fail_after(wait + REQUEST_TIMEOUT):
                answer = await conn.receive()
        except trio.TooSlowError:
            raise NoRematch("the host did not say whether there is another game") from None
        except (ConnectionClosed, FrameTooLarge):
            raise NoRematch("the host offers no other game") from None
    try:
        definition, seat, proposal = parse_answer(answer, key, mesh_port)
    except JoinRefused as exc:
        raise NoRematch(str(exc)) from None
    check_rematch(old, definition)
    if definition.seats[seat].key != old.seats[seat].key:
        raise LobbyError("the rematch moves us to another seat")
    return definition, seat, proposal
