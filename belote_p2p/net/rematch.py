"""A rematch: the same players (four, three or two), the same seats, a new game, the deal
passed on.

After a game played out, each joiner dials the host's port again (the one it reached the
lobby at) and says whether it wants another game (``{"type": "again", "table": old table
id, "key", "port": its new mesh port or 0, "again": bool}``, one frame of canonical msgpack,
as in the lobby, ``PROTOCOL.md`` §6.0). The host answers every joiner at once when everyone
has answered: the new table (the lobby's ``{"type": "table", "definition", "proposal"}``,
with the ``relay`` it names if any: a new table id, the same rules with
the next first dealer, the same names, keys and seats, the new mesh ports) if every seat
wants it, else an error naming who did not. Each joiner checks that the new table is the old one
but for its id, its first dealer and its addresses (:func:`check_rematch`) before signing
it, as every peer signs every table; from there the game is a new game like any other.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.game.rules import RuleSet
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
    LobbyAnswer,
    LobbyError,
    _accept_loop,
    _socket_ips,
    error_message,
    parse_answer,
    table_message,
)
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

REMATCH_WAIT = 120.0
"""Seconds the host waits for every player's answer."""
DIAL_FOR = 60.0
"""Seconds a joiner keeps dialling a host that does not gather answers yet (it finishes
its game, or its person is still on the game's page in the browser)."""


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
    if new.rules != passed_on(old):
        raise LobbyError("the rematch changes the rules")
    if [(s.name, s.key) for s in new.seats] != [(s.name, s.key) for s in old.seats]:
        raise LobbyError("the rematch changes the players or their seats")


def passed_on(old: TableDefinition) -> RuleSet:
    """The rules of ``old``'s rematch: the same, the deal passed on to the next of its seats."""
    return old.rules.with_(first_dealer=(old.rules.first_dealer + 1) % len(old.seats))


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
        or not 0 <= msg["port"] < 65536
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
    listeners: Sequence[trio.abc.Listener[Any]],
    mesh_port: int,
    host_again: Callable[[], Awaitable[bool]],
    *,
    on_answer: Callable[[RematchAnswer], None] | None = None,
    wait: float = REMATCH_WAIT,
    hand_over: Callable[[Callable[[trio.abc.Stream], Awaitable[None]] | None], None] | None = None,
    relay: str | None = None,
) -> tuple[TableDefinition, bytes]:
    """Gather the answers to ``host_again()`` (ours) and every joiner's; the new table
    and our proposal of it, or :class:`NoRematch` (every joiner connected is told why).
    ``mesh_port``: ours in the new table (0: we do not listen). The answers come on
    ``listeners`` and through ``hand_over`` (the host's port, as for
    :func:`~.lobby.host_lobby`); ``relay``: the relay the new table names, if not the
    host's port. Closes the listeners before returning."""
    answers: dict[int, bool] = {}
    conns: dict[int, tuple[FramedStream, JoinRequest, str, str]] = {}
    decided = trio.Event()
    everyone = trio.Event()
    outcome: list[tuple[TableDefinition, bytes] | str] = []
    names = [s.name for s in old.seats]
    seats = len(old.seats)

    def answered(seat: int, again: bool) -> None:
        answers[seat] = again
        if on_answer is not None:
            on_answer(RematchAnswer(seat, again))
        if not again:
            decide(f"{names[seat]} does not want to play again")
        elif len(answers) == seats and all(answers.values()):
            decide(None)

    def decide(refusal: str | None) -> None:
        if decided.is_set():
            return
        if refusal is not None:
            outcome.append(refusal)
        else:
            host = JoinRequest(old.seats[0].name, identity.public_key_bytes, mesh_port)
            lobby = Lobby(host, passed_on(old))
            for seat in range(1, seats):
                _, request, ip, local_ip = conns[seat]
                lobby.admit(request, ip, local_ip)
            definition = lobby.definition()
            outcome.append((definition, definition.propose(identity)))
        decided.set()

    async def handle(stream: trio.abc.Stream) -> None:
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
            request = JoinRequest(old.seats[seat].name, old.seats[seat].key, port, seat)
            conns[seat] = (conn, request, ip, local_ip)
            if len(conns) == seats - 1:
                everyone.set()
            if seat not in answers:
                answered(seat, again)
            await decided.wait()
            result = outcome[0]
            if isinstance(result, str):
                payload = error_message(result)
            else:
                payload = table_message(*result, relay)
            with contextlib.suppress(ConnectionClosed, trio.TooSlowError):
                with trio.fail_after(REQUEST_TIMEOUT):
                    await conn.send(payload)

    async def ours() -> None:
        answered(0, await host_again())

    try:
        async with trio.open_nursery() as handlers, trio.open_nursery() as acceptors:
            for listener in listeners:
                acceptors.start_soon(_accept_loop, listener, handlers, handle)
            if hand_over is not None:
                hand_over(handle)
            acceptors.start_soon(ours)
            with trio.move_on_after(wait):
                await decided.wait()
            if not decided.is_set():
                late = [names[s] for s in range(seats) if s not in answers]
                decide(f"no answer from {' and '.join(late)}")
            # A joiner still on its way hears the outcome too.
            with trio.move_on_after(REQUEST_TIMEOUT):
                await everyone.wait()
            acceptors.cancel_scope.cancel()
            # Each joiner connected hears the outcome (within a bounded time), then we stop.
    finally:
        if hand_over is not None:
            hand_over(None)
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
) -> LobbyAnswer:
    """Tell the host at ``host:port`` our answer (``mesh_port`` 0: we do not listen); the
    new table, our seat, the host's proposal and the relay it names, or :class:`NoRematch`.
    A host that does not gather answers yet (it is still finishing the game) is dialled
    again for ``dial_for`` seconds."""
    message = again_message(old, key, mesh_port, again)
    give_up = trio.current_time() + dial_for
    while True:
        try:
            answer = await _ask(host, port, message, wait)
            break
        except (OSError, ConnectionClosed, FrameTooLarge):
            if trio.current_time() >= give_up:
                raise NoRematch(
                    f"the host ({format_address(host, port)}) offers no other game"
                ) from None
            await trio.sleep(0.5)
    try:
        reply = parse_answer(answer, key, mesh_port)
    except JoinRefused as exc:
        raise NoRematch(str(exc)) from None
    check_rematch(old, reply.definition)
    if reply.definition.seats[reply.seat].key != old.seats[reply.seat].key:
        raise LobbyError("the rematch moves us to another seat")
    return reply


async def _ask(host: str, port: int, message: bytes, wait: float) -> bytes:
    """One try: our answer sent, the host's reply (:class:`NoRematch` if it takes longer
    than ``wait``)."""
    try:
        with trio.fail_after(REQUEST_TIMEOUT):
            stream = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise OSError("no connection") from None
    async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
        try:
            with trio.fail_after(REQUEST_TIMEOUT):
                await conn.send(message)
            with trio.fail_after(wait + REQUEST_TIMEOUT):
                return await conn.receive()
        except trio.TooSlowError:
            raise NoRematch("the host did not say whether there is another game") from None
