"""Another game, the same table: what ``host`` and ``join`` do after a game played out.

The agreement itself is the network layer's (:mod:`belote_p2p.net.rematch`: every player
answers, the host proposes a new table only if every seat wants it, each joiner checks it is
the same table with the deal passed on). This module asks the person (or lets a bot say
yes), says what happens in plain words, and opens a joiner's new mesh listeners (the host's
port serves the new table as it served the first); the browser table can call the same
functions with its own ``ask``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import trio

from belote_p2p.i18n import N_, _
from belote_p2p.net.address import listener_port, open_listeners
from belote_p2p.net.lobby import LobbyAnswer, LobbyError
from belote_p2p.net.rematch import NoRematch, RematchAnswer, host_rematch, join_rematch
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import TableDefinition

from .web.options import WebOptions
from .wording import is_yes, listed

QUESTION = N_("Play again, same players and seats, the deal passed on? [y/N] ")
"""Asked at the terminal after a game played out (in the reader's language: ``[o/N]``)."""


def wants_again(answer: str) -> bool:
    """Yes, in any language (:func:`~belote_p2p.app.wording.is_yes`)."""
    return is_yes(answer)


async def ask_person(question: str = QUESTION) -> bool:
    """The person's answer, typed at the terminal (no answer, or the end of input: no)."""
    asked = _(question)

    def ask() -> bool:
        try:
            return wants_again(input(asked))
        except (EOFError, OSError):
            return False

    return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)


async def say_yes() -> bool:
    """A bot's answer to another game."""
    return True


def asker(person: bool, web: WebOptions | None) -> Callable[[], Awaitable[bool]]:
    """Who answers the question of another game: a bot says yes; a person in the browser
    answered on the page already (its Rematch button); a person at the terminal is asked."""
    if not person:
        return say_yes
    if web is None:
        return ask_person
    vote = web.vote

    async def on_the_page() -> bool:
        return vote.take()

    return on_the_page


def answer_text(definition: TableDefinition, answer: RematchAnswer) -> str:
    name = definition.seats[answer.seat].name
    if answer.again:
        return _("{name} wants another game.").format(name=name)
    return _("{name} does not.").format(name=name)


def next_dealer_text(definition: TableDefinition) -> str:
    return new_game_text(definition.seats[definition.rules.first_dealer].name)


def new_game_text(dealer: str) -> str:
    """``A new game: Bob deals first.``"""
    return _("A new game: {name} deals first.").format(name=dealer)


def print_line(text: str) -> None:
    with contextlib.suppress(OSError):  # the terminal may be gone
        print(text, flush=True)


def speaker(web: WebOptions | None) -> Callable[[str], None]:
    """Where what happens to a rematch is said: the terminal, and the page's lobby line
    when the browser is the seat's (:attr:`~.web.options.WebOptions.tell`), so that a page
    never shows a stale step while the others answer, nor misses a refusal."""
    tell = web.tell if web is not None else None
    if tell is None:
        return print_line

    def both(text: str) -> None:
        print_line(text)
        tell(text)

    return both


async def host_again(
    old: TableDefinition,
    identity: Identity,
    mesh_port: int,
    ask: Callable[[], Awaitable[bool]],
    hand_over: Callable[[Callable[[trio.abc.Stream], Awaitable[None]] | None], None],
    relay: str | None,
    say: Callable[[str], None] = print_line,
) -> tuple[TableDefinition, bytes] | None:
    """The host's side, on the host's port (``hand_over``, as for the lobby): the new table
    and our proposal of it, or None (after saying why, with ``say``)."""
    others = listed([s.name for s in old.seats[1:]])
    say(_("Asking {names} whether they want another game...").format(names=others))
    try:
        definition, proposal = await host_rematch(
            old, identity, [], mesh_port, ask, hand_over=hand_over, relay=relay,
            on_answer=lambda a: say(answer_text(old, a)),
        )  # fmt: skip
    except (NoRematch, LobbyError) as exc:
        say(_("No other game: {reason}.").format(reason=exc))
        return None
    say(next_dealer_text(definition))
    return definition, proposal


async def join_again(
    old: TableDefinition,
    identity: Identity,
    bind: str,
    listen: bool,
    host: tuple[str, int],
    ask: Callable[[], Awaitable[bool]],
    say: Callable[[str], None] = print_line,
) -> tuple[LobbyAnswer, list[trio.SocketListener]] | None:
    """A joiner's side: the host's answer (the new table, our seat, its proposal) and our
    new mesh listeners (none if we do not ``listen``), or None (after saying why, with
    ``say``)."""
    again = await ask()
    host_name = old.seats[0].name
    if again:
        say(
            _("Asking {name} (the host) for another game: every player answers...").format(
                name=host_name
            )
        )
    else:
        say(_("Telling {name} (the host) that you want no other game...").format(name=host_name))
    listeners = await open_listeners(bind, 0) if listen and again else []
    port = listener_port(listeners[0]) if listeners else 0
    try:
        answer = await join_rematch(*host, old, identity, port, again)
    except (NoRematch, LobbyError) as exc:
        for listener in listeners:
            await listener.aclose()
        if again:
            say(_("No other game: {reason}.").format(reason=exc))
        return None
    if not again:
        return None
    say(next_dealer_text(answer.definition))
    return answer, listeners
