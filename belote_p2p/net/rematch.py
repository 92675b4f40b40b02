"""A rematch: the same players (four, three or two), the same seats, a new game, the deal
passed on.

After a game played out, each joiner dials the host's port again (the one it reached the
lobby at) and says whether it wants another game (``{"type": "again", "table": old table
id, "key", "port": its new mesh port or 0, "again": bool}``, one frame of canonical msgpack,
as in the lobby, ``PROTOCOL.md`` §6.0), then proves its key as a joiner does in the lobby:
the host's challenge (the old table id, a fresh nonce), its ``again-proof`` (a signature of
the answer as sent, the nonce and the table id). An answer whose signature does not verify
counts for nothing: nobody says no, or moves a seat's address, in another player's name.
The host answers every joiner at once when everyone
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
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.game.rules import RuleSet
from belote_p2p.protocol.identity import Identity, fingerprint, verify
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import FrameTooLarge, decode, encode

from .address import format_address
from .lobby import (
    MAX_LOBBY_FRAME,
    NONCE_SIZE,
    REQUEST_TIMEOUT,
    JoinChallenge,
    JoinRefused,
    JoinRequest,
    KeyNotProven,
    Lobby,
    LobbyAnswer,
    LobbyError,
    _accept_loop,
    _decode_or_refuse,
    _socket_ips,
    answer_statement,
    error_message,
    parse_answer,
    parse_challenge,
    parse_proof,
    proof_frame,
    table_message,
)
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

REMATCH_WAIT = 120.0
"""Seconds the host waits for every player's answer."""
DIAL_FOR = 60.0
"""Seconds a joiner keeps dialling a host that does not gather answers yet (it finishes
its game, or its person is still on the game's page in the browser)."""
AGAIN_PROOF_LABEL = b"belote-p2p/again-proof/v1\x00"
"""Domain separation of a joiner's proof of key in a rematch (PROTOCOL.md §6.0)."""


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


def again_statement(data: bytes, challenge: JoinChallenge) -> bytes:
    """The bytes a joiner signs for its rematch answer ``data`` (one canonical map, as
    sent): :func:`~.lobby.answer_statement` under the rematch's label."""
    message = decode(data)
    assert isinstance(message, dict)
    return answer_statement(AGAIN_PROOF_LABEL, "again", message, challenge)


def prove_again(identity: Identity, data: bytes, challenge: JoinChallenge) -> bytes:
    """Our ``again-proof`` frame for our answer ``data``."""
    return proof_frame("again-proof", identity.sign(again_statement(data, challenge)))


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
            lobby = Lobby(host, passed_on(old), hints=old.hints)
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
                    challenge = JoinChallenge(old.table_id, secrets.token_bytes(NONCE_SIZE))
                    await conn.send(encode(challenge.to_wire()))
                    proof = _decode_or_refuse(await conn.receive(), "a rematch proof")
                key = old.seats[seat].key
                if not verify(
                    key, parse_proof(proof, "again-proof"), again_statement(data, challenge)
                ):
                    raise KeyNotProven(
                        f"the rematch answer is not signed by the key it names "
                        f"({fingerprint(key)}) over this host's challenge"
                    )
            except (JoinRefused, trio.TooSlowError, ConnectionClosed, FrameTooLarge) as exc:
                logger.warning("rematch: refused %s: %s", ip, exc)
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
    identity: Identity,
    mesh_port: int,
    again: bool,
    *,
    dial_for: float = DIAL_FOR,
    wait: float = REMATCH_WAIT,
) -> LobbyAnswer:
    """Tell the host at ``host:port`` our answer (``mesh_port`` 0: we do not listen),
    proven with ``identity``'s key; the new table, our seat, the host's proposal and the
    relay it names, or :class:`NoRematch`. A host that does not gather answers yet (it is
    still finishing the game) is dialled again for ``dial_for`` seconds; a port that refuses
    the connection is a host gone, said at once."""
    key = identity.public_key_bytes
    message = again_message(old, key, mesh_port, again)
    gone = NoRematch(f"the host ({format_address(host, port)}) offers no other game")
    give_up = trio.current_time() + dial_for
    while True:
        try:
            answer = await _ask(host, port, old, identity, message, wait)
            break
        except ConnectionRefusedError:
            raise gone from None  # nothing listens there any more: the host's program ended
        except (OSError, ConnectionClosed, FrameTooLarge):
            if trio.current_time() >= give_up:
                raise gone from None
            await trio.sleep(0.5)
    try:
        reply = parse_answer(answer, key, mesh_port)
    except JoinRefused as exc:
        raise NoRematch(str(exc)) from None
    check_rematch(old, reply.definition)
    if reply.definition.seats[reply.seat].key != old.seats[reply.seat].key:
        raise LobbyError("the rematch moves us to another seat")
    return reply


async def _ask(
    host: str, port: int, old: TableDefinition, identity: Identity, message: bytes, wait: float
) -> bytes:
    """One try: our answer sent and proven, the host's reply (:class:`NoRematch` if it
    refuses our answer or takes longer than ``wait``)."""
    try:
        with trio.fail_after(REQUEST_TIMEOUT):
            stream = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise OSError("no connection") from None
    except OSError as exc:
        if _refused(exc):
            raise ConnectionRefusedError(str(exc)) from exc
        raise
    async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
        try:
            with trio.fail_after(REQUEST_TIMEOUT):
                await conn.send(message)
                try:
                    challenge = parse_challenge(await conn.receive())
                except JoinRefused as exc:
                    raise NoRematch(exc.reason) from None
                if challenge.table_id != old.table_id:
                    raise LobbyError("the host's challenge names another table")
                await conn.send(prove_again(identity, message, challenge))
            with trio.fail_after(wait + REQUEST_TIMEOUT):
                return await conn.receive()
        except trio.TooSlowError:
            raise NoRematch("the host did not say whether there is another game") from None


def _refused(exc: OSError) -> bool:
    """Every address refused the connection (trio gathers each attempt's error under one
    ``OSError``): nothing listens there."""
    cause = exc.__cause__
    tries = cause.exceptions if isinstance(cause, BaseExceptionGroup) else [exc]
    return all(isinstance(e, ConnectionRefusedError) for e in tries)
