"""Another game, the same table: what ``host`` and ``join`` do after a game played out.

The agreement itself is the network layer's (:mod:`belote_p2p.net.rematch`: every player
answers, the host proposes a new table only if all four want it, each joiner checks it is
the same table with the deal passed on). This module asks the person (or lets a bot say
yes), says what happens in plain words, and opens the new mesh listener; the browser table
can call the same functions with its own ``ask``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable

import trio

from belote_p2p.net.address import listener_port, open_listener
from belote_p2p.net.lobby import LobbyError
from belote_p2p.net.rematch import NoRematch, RematchAnswer, host_rematch, join_rematch
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import TableDefinition

QUESTION = "Play again, same players and seats, the deal passed on? [y/N] "


def wants_again(answer: str) -> bool:
    return answer.strip().lower() in ("y", "yes", "o", "oui")


async def ask_person(question: str = QUESTION) -> bool:
    """The person's answer, typed at the terminal (no answer, or the end of input: no)."""

    def ask() -> bool:
        try:
            return wants_again(input(question))
        except (EOFError, OSError):
            return False

    return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)


async def say_yes() -> bool:
    """A bot's answer to another game."""
    return True


def answer_text(definition: TableDefinition, answer: RematchAnswer) -> str:
    name = definition.seats[answer.seat].name
    return f"{name} wants another game." if answer.again else f"{name} does not."


def next_dealer_text(definition: TableDefinition) -> str:
    dealer = definition.rules.first_dealer
    return f"A new game: {definition.seats[dealer].name} deals first."


def say(text: str) -> None:
    with contextlib.suppress(OSError):  # the terminal may be gone
        print(text, flush=True)


async def host_again(
    old: TableDefinition,
    identity: Identity,
    bind: str,
    lobby_port: int,
    ask: Callable[[], Awaitable[bool]],
) -> tuple[TableDefinition, bytes, trio.SocketListener] | None:
    """The host's side: the new table, our proposal of it and our new mesh listener, or
    None (after saying why)."""
    mesh = await open_listener(bind, 0)
    try:
        lobby = await open_listener(bind, lobby_port)
    except OSError as exc:
        await mesh.aclose()
        say(f"No other game: the lobby port {lobby_port} cannot be opened again ({exc}).")
        return None
    try:
        definition, proposal = await host_rematch(
            old, identity, [lobby], listener_port(mesh), ask,
            on_answer=lambda a: say(answer_text(old, a)),
        )  # fmt: skip
    except (NoRematch, LobbyError) as exc:
        await mesh.aclose()
        say(f"No other game: {exc}.")
        return None
    say(next_dealer_text(definition))
    return definition, proposal, mesh


async def join_again(
    old: TableDefinition,
    identity: Identity,
    bind: str,
    host: str,
    port: int,
    ask: Callable[[], Awaitable[bool]],
) -> tuple[TableDefinition, int, bytes, trio.SocketListener] | None:
    """A joiner's side: the new table, our seat, the host's proposal and our new mesh
    listener, or None (after saying why)."""
    again = await ask()
    mesh = await open_listener(bind, 0)
    try:
        definition, seat, proposal = await join_rematch(
            host, port, old, identity.public_key_bytes, listener_port(mesh), again
        )
    except (NoRematch, LobbyError) as exc:
        await mesh.aclose()
        if again:
            say(f"No other game: {exc}.")
        return None
    if not again:
        await mesh.aclose()
        return None
    say(next_dealer_text(definition))
    return definition, seat, proposal, mesh


def warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
