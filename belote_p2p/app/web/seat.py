"""A seat rendered in the browser: what ``host``, ``join`` and ``resume`` use with ``--web``.

:func:`web_seat` serves the table page (or joins the lobby's server), opens it, gives the
seat's :class:`~.table.WebTable` (the seat's model, :class:`~belote_p2p.app.seatview.SeatView`,
with the page's decisions), and after the game keeps the page until the person leaves it
(or :attr:`~.options.WebOptions.linger` runs out). The seat's job
(:func:`~belote_p2p.app.seat.play_seat`) picks this renderer or the terminal's; nothing
here imports it back.
"""

from __future__ import annotations

import contextlib
import html
import tempfile
import webbrowser
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path

import trio

from belote_p2p.i18n import _
from belote_p2p.net.peer import PeerResult
from belote_p2p.net.rematch import passed_on
from belote_p2p.protocol.table import TableDefinition

from ..coach import TableCoach
from ..seatview import RESIGNED_OPEN, SIGNED_OUT, SIGNED_OUT_OPEN, SeatView
from ..wording import game_text, listed
from .options import RematchVote, WebOptions
from .server import WebServer
from .table import WebTable


@contextlib.asynccontextmanager
async def page_opened(server: WebServer, options: WebOptions) -> AsyncIterator[None]:
    """Print the page's URL and, unless told not to, open it in the default browser.

    The browser is given a private file that sends it on to the URL, never the URL itself:
    a command line (the browser's, ``xdg-open``'s) can be read by the other users of the
    machine, and the URL carries the token. The file is removed on exit."""
    print(_("Table page: {url}").format(url=server.url), flush=True)
    with tempfile.TemporaryDirectory(prefix="belote-p2p-") as private:
        if options.open_browser:
            link = Path(private) / "open.html"
            link.write_text(
                f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={server.url}">'
                f'<a href="{server.url}">{html.escape(_("Open the table"))}</a>\n'
            )
            link.chmod(0o600)
            opened = await trio.to_thread.run_sync(webbrowser.open, link.as_uri())
            if not opened:
                print(_("No browser could be opened: open the URL above."), flush=True)
        yield


@contextlib.asynccontextmanager
async def serving(options: WebOptions) -> AsyncIterator[WebServer]:
    """A running server: the lobby's, or a new one for this seat (closed on exit)."""
    if options.server is not None:
        yield options.server
        return
    server = WebServer(port=options.port, token=options.token, home=options.home)
    server.check_port()  # a taken port is a plain error, before any task starts
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        try:
            async with page_opened(server, options):
                yield server
        finally:
            server.close()


@contextlib.asynccontextmanager
async def web_seat(
    definition: TableDefinition,
    seat: int,
    web: WebOptions,
    *,
    decision_deadline: Callable[[int], float] | None = None,
    rematch: bool = False,
    watching: bool = False,
) -> AsyncIterator[WebTable]:
    """The seat's table on a served page (``decision_deadline``: a seat's deadline in
    seconds, for the countdowns; ``rematch``: the page offers another game; ``watching``:
    a watcher's page, seen from ``seat``'s place); on exit (the game over), the page stays
    until the person leaves it or ``web.linger`` runs out."""
    async with serving(web) as server:
        table = WebTable(
            SeatView.from_definition(definition, seat, watching=watching),
            server.hub,
            config_deadline=decision_deadline,
            table_id=definition.table_id.hex(),
        )
        if definition.hints and not watching:
            table.hints = TableCoach().hint  # the table's rule: our own peer's expert advises
        server.table = table
        if web.tell is not None:
            web.tell("")  # the lobby's line of before the game is stale once it begins
        if rematch:
            offer_rematch(table, web.vote, definition)
        server.hub.bump()
        try:
            yield table
            if not table.finished.is_set():
                table.game_over(None)
            with trio.move_on_after(web.linger):
                await table.left.wait()
        finally:
            if server.table is table:
                server.table = None
                server.hub.bump()


def offer_rematch(table: WebTable, vote: RematchVote, definition: TableDefinition) -> None:
    """The page's question of another game, once the game is over (who hosts it, its
    rules, who deals first: :func:`rematch_question`): the person's answer (Play again, or
    No) is the one the terminal's question gets, given as the page is left (``host`` or
    ``join`` then tells it to the others at once)."""

    async def answer(again: bool) -> None:
        vote.wanted = again
        table.left.set()
        table.hub.bump()

    table.rematch = answer
    table.rematch_question = partial(rematch_question, definition, table.seat)


def rematch_question(definition: TableDefinition, seat: int) -> str:
    """The page's question of another game at ``definition``'s table, for ``seat``: the
    host offers it to the others, a joiner is offered it by the host."""
    rules = passed_on(definition)
    table = game_text(rules.name, rules.target)
    dealer = definition.seats[rules.first_dealer].name
    if seat == 0:
        return _(
            "Offer another game to {names}? {table}, the same seats; {dealer} deals first."
        ).format(names=listed([s.name for s in definition.seats[1:]]), table=table, dealer=dealer)
    return _(
        "{host} (the host) offers another game: {table}, the same players and seats; "
        "{dealer} deals first. Play again?"
    ).format(host=definition.seats[0].name, table=table, dealer=dealer)


def outcome_text(result: PeerResult, seats: int) -> str:
    """One line on how the game ended for this seat (at a table of ``seats``), for the
    page."""
    if result.left == result.seat:
        text = _(RESIGNED_OPEN if result.resigned else SIGNED_OUT_OPEN)
    elif result.resigned:
        text = _("You resigned: the game ends, abandoned by your seat.")
    elif result.abandoned == result.seat:
        text = _(SIGNED_OUT)
    elif result.error:
        text = _("The game stopped: {error}").format(error=result.error)
    elif result.finished and seats == 2:
        text = _("The game is over and verified by both peers.")
    elif result.finished and seats == 3:
        text = _("The game is over and verified by all three peers.")
    elif result.finished:
        text = _("The game is over and verified by all four peers.")
    else:
        text = _("The game is over.")
    return _("{outcome} Transcript: {path}").format(outcome=text, path=result.transcript)
