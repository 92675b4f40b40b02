"""A seat played in the browser: what ``host``, ``join`` and ``resume`` do with ``--web``.

:func:`web_seat` serves the table page (or joins the lobby's server), opens it, hands the
peer its :class:`~.table.WebPlayer` and callbacks, and after the game keeps the page until
the person leaves it (or :attr:`~.options.WebOptions.linger` runs out).
"""

from __future__ import annotations

import contextlib
import tempfile
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from belote_p2p.net.peer import PeerControl, PeerResult
from belote_p2p.net.transport import Mesh
from belote_p2p.players.player import Player
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import TableDefinition

from ..tui import TableView
from .options import RematchVote, WebOptions
from .server import WebServer
from .table import WebPlayer, WebTable

if TYPE_CHECKING:
    from ..seat import SeatOptions


@contextlib.asynccontextmanager
async def page_opened(server: WebServer, options: WebOptions) -> AsyncIterator[None]:
    """Print the page's URL and, unless told not to, open it in the default browser.

    The browser is given a private file that sends it on to the URL, never the URL itself:
    a command line (the browser's, ``xdg-open``'s) can be read by the other users of the
    machine, and the URL carries the token. The file is removed on exit."""
    print(f"Table page: {server.url}", flush=True)
    with tempfile.TemporaryDirectory(prefix="belote-p2p-") as private:
        if options.open_browser:
            link = Path(private) / "open.html"
            link.write_text(
                f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={server.url}">'
                f'<a href="{server.url}">Open the table</a>\n'
            )
            link.chmod(0o600)
            opened = await trio.to_thread.run_sync(webbrowser.open, link.as_uri())
            if not opened:
                print("No browser could be opened: open the URL above.", flush=True)
        yield


@contextlib.asynccontextmanager
async def serving(options: WebOptions) -> AsyncIterator[WebServer]:
    """A running server: the lobby's, or a new one for this seat (closed on exit)."""
    if options.server is not None:
        yield options.server
        return
    server = WebServer(port=options.port)
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
    definition: TableDefinition, seat: int, options: SeatOptions, web: WebOptions
) -> AsyncIterator[WebTable]:
    """The seat's table on a served page; on exit (the game over), the page stays until
    the person leaves it or ``web.linger`` runs out."""
    config = options.peer_config(seat)
    async with serving(web) as server:
        table = WebTable(
            TableView.from_definition(definition, seat),
            server.hub,
            config_deadline=config.decision_deadline,
            table_id=definition.table_id.hex(),
        )
        server.table = table
        if options.offers_rematch(True):
            offer_rematch(table, web.vote)
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


def offer_rematch(table: WebTable, vote: RematchVote) -> None:
    """The page's Rematch button, once the game is over: the person wants another game
    and leaves this one's page (``host`` or ``join`` then asks the others)."""

    async def again() -> None:
        vote.wanted = True
        table.left.set()
        table.hub.bump()

    table.rematch = again


def web_player(table: WebTable, options: SeatOptions) -> Player:
    """The person in the browser, with the terminal's stand-in for a turn whose time runs
    out (``--autoplay``)."""
    return options.with_standin(
        WebPlayer(table, turn_seconds=options.person_deadline), table.autoplayed
    )


async def play_in_browser(
    play: Callable[..., Awaitable[PeerResult]],
    definition: TableDefinition,
    seat: int,
    identity: Identity,
    listeners: Sequence[trio.SocketListener],
    options: SeatOptions,
    web: WebOptions,
    *,
    transcript: Path | None,
    proposal: bytes | None,
    relay: tuple[str, int] | None,
    on_mesh: Callable[[Mesh], None] | None,
    host_address: tuple[str, int] | None,
) -> PeerResult:
    """:func:`~belote_p2p.app.seat.play_seat` (``play``) with the seat in the browser."""
    control = PeerControl()
    async with web_seat(definition, seat, options, web) as table:
        table.send_chat = control.chat
        result = await play(
            definition, seat, identity, web_player(table, options), listeners,
            replace(options, web=None), transcript=transcript, proposal=proposal,
            watch=(table.on_event, table.on_status), relay=relay, on_mesh=on_mesh,
            host_address=host_address, control=control,
        )  # fmt: skip
        table.game_over(outcome_text(result, definition.rules.seats))
    return result


def outcome_text(result: PeerResult, seats: int) -> str:
    """One line on how the game ended for this seat (at a table of ``seats``), for the
    page."""
    if result.resigned:
        text = "You resigned: the game ends, abandoned by your seat."
    elif result.error:
        text = f"The game stopped: {result.error}"
    elif result.finished:
        peers = {2: "both peers", 3: "all three peers"}.get(seats, "all four peers")
        text = f"The game is over and verified by {peers}."
    else:
        text = "The game is over."
    return f"{text} Transcript: {result.transcript}"
