"""``belote-p2p web``: the lobby page. Host a table (variant, target, bots), join one by its
address or among the tables heard on the local network, resume an unfinished game, and see
one's profile, the ranking and the past games; the game itself is then played on the same
page (the seat's table joins the lobby's server, :mod:`.seat`), and the lobby comes back
when the person leaves the table.

Tables are joined by the host's invitation code or its address (what ``join`` takes:
:func:`~belote_p2p.app.join.read_entry`); an entry that is neither is said under the field,
in the reader's words. A table hosted from the page can be closed while it waits for its
players (Stop hosting: its joiners are told, its port closes). A table is watched
by the watch code its host printed (the Watch entry: :mod:`belote_p2p.app.watch`), through
the host's port or, when that does not answer, the relay the code names.

What the lobby reads from the home (the profile, the ranking, the past and unfinished games)
is kept as facts and said when the page is drawn, in its reader's language: numbers and
dates as that language writes them (Babel), a game's date in the local time.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import trio
from babel.dates import format_date, format_time
from babel.numbers import format_decimal

from belote_p2p.app.argtypes import port, positive_seconds, seconds
from belote_p2p.errors import BeloteError
from belote_p2p.game.rules import RULE_SETS, rule_set
from belote_p2p.i18n import _, current, ngettext, using
from belote_p2p.net.discovery import DEFAULT_LISTEN, TableAd, discover_all
from belote_p2p.net.invite import Invitation, InvitationError
from belote_p2p.net.lobby import DEFAULT_PORT, check_name
from belote_p2p.net.watch import read_watch_code
from belote_p2p.protocol.directory import Advertisement
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.private import private_directory
from belote_p2p.protocol.transcript import Transcript, TranscriptError
from belote_p2p.protocol.verify import verify_transcript

from ..home import Home, unfinished_games
from ..join import entry_problem
from ..lan import DEFAULT_BEACON_ADDRESSES, BeaconAddress, beacon_address, beacon_text
from ..profile import (
    SCORE_COLUMNS,
    PlayerStats,
    ProfileError,
    all_players,
    analysed_losses,
    find_players,
    open_db,
    progress_text,
    rank_players,
    record_analysis,
    result_text,
    row_scores,
)
from ..seat import SeatOptions
from .options import WebOptions
from .seat import page_opened
from .server import WebServer
from .viewmodel import JSON, variant_text

GAMES_SHOWN = 20
REPLAYS = "replays"
"""The folder of the home that keeps the replay pages made (``<table id>.<lang>.html``)."""
logger = logging.getLogger(__name__)
PAST_GAMES = f"""
SELECT g.id, g.table_id, g.date, g.variant, g.target, g.winner, g.abandoned_by, {SCORE_COLUMNS}
FROM games g ORDER BY g.date DESC LIMIT ?
"""
"""The past games, with every side's score."""
GAME_SEATS = "SELECT game, name FROM game_seats WHERE game IN ({marks}) ORDER BY game, seat"
"""The players of some games, in seat order."""


@dataclass(frozen=True, slots=True)
class PastGame:
    table_id: str
    """Hex: the address of its replay page (``replay/<table id>``)."""
    date: str
    """When it was recorded, UTC ISO 8601 (as the profile keeps it)."""
    variant: str
    target: int
    names: tuple[str, ...]
    scores: tuple[int, ...]
    winner: int | None
    abandoned_by: int | None


def number_text(n: int) -> str:
    """``12,345``, ``12 345``, ``12.345``: a number as the reader's language writes it."""
    return format_decimal(n, locale=current())


def date_text(iso: str) -> str:
    """A UTC ISO 8601 instant in the local time, as the reader's language writes a date and
    a time (``Jun 1, 2024, 2:03 PM``, ``1 juin 2024, 14:03``, ``1 jun 2024, 14:03``); the
    text as it was if it is no such instant."""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return iso
    locale = current()
    from babel import Locale

    glue = str(Locale.parse(locale).datetime_formats["medium"])
    day = format_date(when, "medium", locale=locale)
    return glue.replace("{1}", day).replace("{0}", format_time(when, "short", locale=locale))


def game_result_text(g: PastGame) -> str:
    """How a past game ended (``Ana & Cy won 252-112``), or its score alone if the profile
    lacks some of its players."""
    try:
        return result_text(g.names, g.scores, g.winner, g.abandoned_by)
    except (IndexError, ValueError):
        return "-".join(map(str, g.scores))


def target_text(variant: str, target: int) -> str:
    """``classic to 501``, ``classique en 501``."""
    return _("{variant} to {target}").format(
        variant=variant_text(variant), target=number_text(target)
    )


def table_text(ad: TableAd) -> str:
    """A table heard on the network: ``Ana · classic to 501 · 2 free · 192.168.1.20:7777``."""
    free = ngettext("{n} seat free", "{n} seats free", ad.beacon.free).format(n=ad.beacon.free)
    where = target_text(ad.beacon.variant, ad.beacon.target)
    return f"{ad.beacon.name} · {where} · {free} · {ad.address}"


def public_text(ad: Advertisement, games: int) -> str:
    """A public table as the lobby lists it: who hosts what, the free seats, the languages,
    the host's level as its claim beside the games our records hold with its key."""
    from ..public import claim_text

    seats = ngettext("{n} seat free", "{n} seats free", ad.free).format(n=ad.free)
    return _("{host} [{fingerprint}]: {game}, {seats}, {langs}; {claims}").format(
        host=ad.name, fingerprint=fingerprint(ad.host_key), game=target_text(ad.variant, ad.target),
        seats=seats, langs=" ".join(ad.langs) or "-", claims=claim_text(ad.level, games),
    )  # fmt: skip


def profile_text(fingerprint: str, p: PlayerStats | None) -> str:
    """The person's profile in one line: ``[fp] level 3, 1,200 XP; 10 games, 4 won;
    contracts: 7 made, 2 failed``."""
    if p is None:
        return _("[{fingerprint}] no game recorded yet").format(fingerprint=fingerprint)
    return "; ".join(
        (
            _("[{fingerprint}] level {level}, {xp} XP").format(
                fingerprint=fingerprint, level=p.level, xp=number_text(p.xp)
            ),
            ngettext("{n} game, {won} won", "{n} games, {won} won", p.games).format(
                n=number_text(p.games), won=number_text(p.wins)
            ),
            _("contracts: {made} made, {failed} failed").format(
                made=number_text(p.contracts_made), failed=number_text(p.contracts_failed)
            ),
        )
    )


class WebLobby:
    """The lobby's state and the person's requests (see the module docstring)."""

    def __init__(
        self,
        server: WebServer,
        home: Home,
        *,
        name: str = "",
        bind: str = "0.0.0.0",
        beacon: Sequence[BeaconAddress],
        person_deadline: float = 60.0,
        grace: float = 120.0,
        directory: str | None = None,
    ) -> None:
        self.server = server
        self.directory = directory
        """``HOST:PORT`` of a relay's public directory (``web --relay``), if any."""
        self.public: list[Advertisement] = []
        """The public tables it listed last (those we may sit at)."""
        self.public_games: dict[bytes, int] = {}
        self.home = home
        self.name = name
        self.bind = bind
        self.beacon = beacon
        self.person_deadline = person_deadline
        self.grace = grace
        self.status = ""
        self.busy = False
        self.tables: list[TableAd] = []
        self.fingerprint = ""
        self.me: PlayerStats | None = None
        self.profile_error: str | None = None
        """Why the profile could not be read, if it could not."""
        self.ranking: list[tuple[int, PlayerStats]] = []
        self.games: list[PastGame] = []
        self.progress: list[float] = []
        """The person's mean loss a decision in each game analysed, oldest first."""
        self._replaying = trio.Lock()
        self.unfinished: list[tuple[Path, Transcript]] = []
        self.told = ""
        """What the seat's job said last between games (a rematch's answers), kept past its end."""
        self.quit = trio.Event()
        self.nursery: trio.Nursery | None = None
        self.closing: trio.Event | None = None
        """Closes the table hosted from the page while it waits for players (Stop
        hosting); None once its game began, or when no table is hosted."""
        self.bad_entry: str | None = None
        """The join field's last entry, when it was neither a code nor an address (the page
        says why under the field, in its reader's words)."""

    # -- what the page shows ----------------------------------------------------------------

    def model(self) -> JSON:
        """What the page draws, in the language in use (see the module docstring)."""
        if self.profile_error is not None:
            profile = _("No profile: {error}").format(error=self.profile_error)
        else:
            profile = profile_text(self.fingerprint, self.me) if self.fingerprint else ""
        return {
            "kind": "lobby",
            "name": self.name,
            "variants": [
                {"name": v, "seats": RULE_SETS[v].seats, "text": variant_text(v)}
                for v in sorted(RULE_SETS)
            ],
            "status": self.status,
            "busy": self.busy,
            "stoppable": self.stoppable,
            "join_error": entry_problem(self.bad_entry) if self.bad_entry is not None else "",
            "profile": profile,
            "progress": {
                "losses": [round(x, 2) for x in self.progress],
                "text": progress_text(self.progress) or "",
            },
            "tables": [
                {
                    "name": ad.beacon.name,
                    "variant": ad.beacon.variant,
                    "target": ad.beacon.target,
                    "free": ad.beacon.free,
                    "address": ad.address,
                    "text": table_text(ad),
                }
                for ad in self.tables
            ],
            "directory": self.directory,
            "public": [
                {
                    "id": (ad.host_key + ad.table_id).hex(),
                    "text": public_text(ad, self.public_games.get(ad.host_key, 0)),
                }
                for ad in self.public
            ],
            "unfinished": [{"path": str(p), "text": _describe(t)} for p, t in self.unfinished],
            "ranking": [
                {
                    "rank": rank,
                    "name": p.name,
                    "fingerprint": p.fingerprint,
                    "level": p.level,
                    "xp": p.xp,
                    "games": p.games,
                    "won": p.wins,
                    "texts": [number_text(x) for x in (rank, p.level, p.xp, p.games, p.wins)],
                }
                for rank, p in self.ranking
            ],
            "games": [
                {
                    "date": g.date,
                    "variant": g.variant,
                    "target": g.target,
                    "score": "-".join(map(str, g.scores)),
                    "players": ", ".join(g.names),
                    "date_text": date_text(g.date),
                    "variant_text": target_text(g.variant, g.target),
                    "result": game_result_text(g),
                    "table_id": g.table_id,
                    "replay": _("Replay"),
                }
                for g in self.games
            ],
        }

    @property
    def stoppable(self) -> bool:
        """The table hosted from the page waits for players: Stop hosting closes it."""
        closing = self.closing
        return closing is not None and not closing.is_set() and self.server.table is None

    def _changed(self) -> None:
        self.server.hub.bump()

    async def refresh(self) -> None:
        """Read the profile, ranking, past and unfinished games again (in a thread: the
        unfinished games are replayed to tell whether they ended)."""
        await trio.to_thread.run_sync(self._read_home)
        self._changed()

    def _read_home(self) -> None:
        identity = self.home.identity()
        self.fingerprint = identity.fingerprint
        try:
            with open_db(self.home.profile_db) as conn:
                players = all_players(conn)
                mine = find_players(conn, self.fingerprint)
                progress = analysed_losses(conn, self.fingerprint)
                rows = conn.execute(PAST_GAMES, (GAMES_SHOWN,)).fetchall()
                marks = ", ".join("?" * len(rows))
                seats = conn.execute(GAME_SEATS.format(marks=marks), [r[0] for r in rows])
                names: dict[int, list[str]] = {}
                for game, name in seats.fetchall():
                    names.setdefault(game, []).append(name)
        except (sqlite3.Error, ProfileError, OSError) as exc:
            self.profile_error = str(exc)
            return
        self.profile_error = None
        self.me = mine[0] if mine else None
        self.progress = progress
        if self.me is not None:
            self.name = self.name or self.me.name
        self.ranking = rank_players(players)
        self.games = [
            PastGame(table, date, variant, target, tuple(names.get(game, ())),
                     row_scores(scores), winner, abandoned_by)
            for game, table, date, variant, target, winner, abandoned_by, *scores in rows
        ]  # fmt: skip
        self.unfinished = [
            (self.home.transcript(t.definition, t.seat), t)
            for t in unfinished_games(self.home, identity)
        ]

    # -- the person's requests ------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> str | None:
        kind = message.get("type")
        if kind == "scan":
            return self._start(self._scan)
        if kind == "public":
            return self._start(self._public)
        if kind == "take-seat":
            chosen = [
                a for a in self.public if (a.host_key + a.table_id).hex() == message.get("id")
            ]
            if not chosen:
                return _("That table is no longer listed: look for public tables again.")
            try:
                self.name = check_name(str(message.get("name", "")))
            except BeloteError as exc:
                return _("Name: {error}").format(error=exc)
            return self._start(lambda: self._take_seat(chosen[0]))
        if kind == "stop":
            return self._stop()
        if kind == "quit":
            if self.server.table is not None:
                return _("A game is on: finish it first.")
            self.quit.set()
            return None
        if kind == "watch":
            try:
                invitation = read_watch_code(str(message.get("code") or ""))
            except InvitationError as exc:
                return _("Watch code: {error}").format(error=exc)
            return self._start(lambda: self._watch(invitation))
        if kind not in ("host", "join", "resume"):
            return _("Unknown message {kind!r}.").format(kind=kind)
        if kind == "resume":
            path = message.get("path")
            if not isinstance(path, str) or path not in {str(p) for p, _t in self.unfinished}:
                return _("No such unfinished game.")
            return self._start(lambda: self._resume(Path(path)))
        try:
            self.name = check_name(str(message.get("name", "")))
        except BeloteError as exc:
            return _("Name: {error}").format(error=exc)
        if kind == "host":
            try:
                rules = rule_set(
                    str(message.get("variant")), target=int(message.get("target", 501))
                )
                bots = int(message.get("bots", 0))
                port = int(message.get("port", DEFAULT_PORT))
            except (TypeError, ValueError) as exc:
                return _("Cannot host: {error}").format(error=exc)
            hints = message.get("hints", False) is True
            if not 0 <= bots < rules.seats or not 0 <= port < 65536:
                return _("Bots are 0 to {most} at a {variant} table, a port 0 to 65535.").format(
                    most=rules.seats - 1, variant=variant_text(rules.name)
                )
            return self._start(lambda: self._host(rules.name, rules.target, bots, port, hints))
        address = message.get("address")
        if not isinstance(address, str) or not address.strip():
            return _("Give the host's address (HOST:PORT) or choose a table heard on the network.")
        return self._join_entry(address.strip())

    # -- the join field: an invitation code or an address --------------------------------

    def _join_entry(self, entry: str) -> str | None:
        """Join at ``entry`` if it is a code or an address; else the page says why under
        the field (no step starts)."""
        if entry_problem(entry) is not None:
            self.bad_entry = entry
            self._changed()
            return None
        self.bad_entry = None
        return self._start(lambda: self._join(entry))

    # -- Stop hosting -------------------------------------------------------------------

    def _stop(self) -> str | None:
        """The person closes the table it hosts from the page, before its game begins."""
        if self.closing is None or self.closing.is_set():
            return _("No table of yours waits for players.")
        if self.server.table is not None:
            return _("The game has begun: leave it from the table.")
        self.closing.set()
        self.status = _("Closing the table...")
        self._changed()
        return None

    async def _until_the_game(self) -> None:
        """Stop hosting goes once the hosted table's game begins (its page is served)."""
        hub = self.server.hub
        while self.server.table is None:
            await hub.wait_past(hub.version)
        self.closing = None
        self._changed()

    def _start(self, job: Callable[[], Awaitable[None]]) -> str | None:
        if self.busy:
            return _("Wait for the current step to end.")
        assert self.nursery is not None
        self.busy = True
        self.told = ""
        self._changed()

        async def run() -> None:
            try:
                await job()
            except (BeloteError, OSError, ValueError) as exc:
                self.status = _("Error: {error}").format(error=exc)
            finally:
                self.busy = False
                self._changed()

        # The step (a game, all its tasks) speaks the process's language, which a page's
        # switch changes, not the language of the page that asked for it.
        with using(None):
            self.nursery.start_soon(run)
        return None

    def _options(self) -> SeatOptions:
        return SeatOptions(
            name=self.name,
            home=self.home,
            bot=None,
            seed=None,
            bind=self.bind,
            quiet=False,
            timing_log=None,
            bot_deadline=10.0,
            person_deadline=self.person_deadline,
            grace=self.grace,
            web=WebOptions(server=self.server, tell=self._tell),
        )

    def _tell(self, text: str) -> None:
        """A line from the seat's job between games: the page shows it now (a reload too)."""
        self.status = self.told = text
        self._changed()

    async def _scan(self) -> None:
        self.status = _("Listening for tables on the local network ({seconds} s)...").format(
            seconds=f"{DEFAULT_LISTEN:g}"
        )
        self._changed()
        self.tables = await discover_all(self.beacon, duration=DEFAULT_LISTEN)
        heard = len(self.tables)
        self.status = (
            ngettext("{n} open table heard.", "{n} open tables heard.", heard).format(n=heard)
            if heard
            else _("No open table heard.")
        )

    async def _public(self) -> None:
        """The public tables of the directory that we may sit at (:mod:`..public`)."""
        from belote_p2p.net.directory import query_directory
        from belote_p2p.protocol.directory import DirectoryError, Query

        from ..blocklist import BlockList
        from ..public import directory_address, fitting, games_with

        assert self.directory is not None
        self.status = _("Asking the directory at {address}...").format(address=self.directory)
        self._changed()
        key = self.home.identity().public_key_bytes
        try:
            listing = await query_directory(directory_address(self.directory), Query())
        except (DirectoryError, ValueError) as exc:
            self.status = _("The directory cannot be read now: {error}").format(error=exc)
            return
        self.public = fitting(listing, Query(), BlockList.of(self.home), key)
        self.public_games = await trio.to_thread.run_sync(
            lambda: games_with(self.home, key, {a.host_key for a in self.public})
        )
        found = len(self.public)
        self.status = (
            ngettext("{n} public table has a free seat.", "{n} public tables have a free seat.",
                     found).format(n=found)
            if found
            else _("No public table has a free seat.")
        )  # fmt: skip

    async def _take_seat(self, ad: Advertisement) -> None:
        from ..join import join_advertised

        self.status = _(
            "Taking a seat at {name}'s table: the table opens here when the game begins."
        ).format(name=ad.name)
        self._changed()
        status = await join_advertised(self._options(), ad)
        await self._after(status)

    async def _host(
        self, variant: str, target: int, bots: int, port: int, hints: bool = False
    ) -> None:
        from ..host import CLOSED, host_game

        self.status = ngettext(
            "Hosting {table} with {n} bot...", "Hosting {table} with {n} bots...", bots
        ).format(table=target_text(variant, target), n=bots)
        self._changed()  # then the host says who joins (:attr:`WebOptions.tell`)
        rules = rule_set(variant, target=target)
        beacon = self.beacon if bots < rules.seats - 1 else None
        closing = self.closing = trio.Event()
        try:
            async with trio.open_nursery() as watching:
                watching.start_soon(self._until_the_game)
                status = await host_game(
                    self._options(), rules, port, bots, beacon=beacon, hints=hints,
                    closed=closing,
                )  # fmt: skip
                watching.cancel_scope.cancel()
        finally:
            self.closing = None
        if status == CLOSED:
            self.status = _("You closed the table: the players who had joined are told.")
            self.told = ""
            await self.refresh()
            return
        await self._after(status)

    async def _join(self, address: str) -> None:
        from ..join import join_game

        self.status = _(
            "Joining {address}: the host is arranging the seats; the table opens here "
            "when the game begins."
        ).format(address=address)
        self._changed()
        status = await join_game(self._options(), address)
        await self._after(status)

    async def _resume(self, path: Path) -> None:
        from ..resume import resume_game

        self.status = _("Resuming {name}...").format(name=path.name)
        self._changed()
        status = await resume_game(self._options(), path)
        await self._after(status)

    async def _watch(self, invitation: Invitation) -> None:
        from ..watch import watch_in_browser

        if invitation.relay:
            self.status = _(
                "Watching: the host's port (or its relay); the table opens here once its "
                "game begins."
            )
        else:
            self.status = _("Watching: the host's port; the table opens here once its game begins.")
        self._changed()
        status = await watch_in_browser(invitation, WebOptions(server=self.server), save=None)
        self.status = _("Done watching.") if status == 0 else _("The watch ended early.")
        await self.refresh()

    async def replay(self, table: str, language: str) -> bytes | None:
        """The replay page of the past game ``table`` (hex) in ``language``: made once (the
        analysis takes a few seconds, in a worker thread), then kept in the home; the
        game's figures go to the profile. None for a game the profile does not list, or
        whose record cannot be read."""
        async with self._replaying:
            page = await trio.to_thread.run_sync(self._replay_page, table, language)
        if page is not None:
            await self.refresh()  # the progress line counts the game now
        return page

    def _replay_page(self, table: str, language: str) -> bytes | None:
        from ..analyse import analyse_verdict, analysed_seats, game_date
        from .replay import replay_page

        cached = self.home.root / REPLAYS / f"{table}.{language}.html"
        with contextlib.suppress(OSError):
            return cached.read_bytes()
        try:
            with open_db(self.home.profile_db) as conn:
                row = conn.execute(
                    "SELECT transcript FROM games WHERE table_id = ?", (table,)
                ).fetchone()
            if row is None:
                return None
            path = Path(row[0])
            verdict = verify_transcript(path)
            analysis = analyse_verdict(verdict)
            page = replay_page(verdict, analysis, language).encode()
            record_analysis(
                self.home.profile_db, verdict.definition.table_id, game_date(path),
                analysed_seats(verdict, analysis),
            )  # fmt: skip
        except (OSError, TranscriptError, BeloteError, sqlite3.Error) as exc:
            logger.warning("no replay of %s: %s", table, exc)
            return None
        with contextlib.suppress(OSError):
            private_directory(cached.parent)
            cached.write_bytes(page)
        return page

    async def _after(self, status: int) -> None:
        over = (
            _("The game is over.")
            if status == 0
            else _("The game ended (status {status}).").format(status=status)
        )
        # The last word of a rematch (who did not want one) stays beside it; a step that
        # failed before any game (a table closed, a host unreachable) says only why.
        if self.told and status != 0:
            self.status = self.told
        else:
            self.status = f"{over} {self.told}" if self.told else over
        self.told = ""
        await self.refresh()


def _describe(t: Transcript) -> str:
    """An unfinished game: ``classic to 501, seat 2: Ana, Bo, Cy, Di``."""
    rules = t.definition.rules
    return _("{table}, seat {seat}: {names}").format(
        table=target_text(rules.name, rules.target),
        seat=t.seat,
        names=", ".join(s.name for s in t.definition.seats),
    )


async def run_lobby(lobby: WebLobby, web: WebOptions) -> int:
    server = lobby.server
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        async with trio.open_nursery() as steps:
            lobby.nursery = steps
            await lobby.refresh()
            async with page_opened(server, web):
                await lobby.quit.wait()
            # Quit always works: a step still running (a table waiting for players, a
            # rematch nobody answers) ends with the lobby (a game on refuses Quit).
            steps.cancel_scope.cancel()
        server.close()
    return 0


def cmd_web(args: argparse.Namespace) -> int:
    try:
        name = check_name(args.name) if args.name else ""
        chosen = [beacon_address(a) for a in args.beacon_address or ()]
        beacon = chosen or list(DEFAULT_BEACON_ADDRESSES)
    except (BeloteError, ValueError) as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 2
    web = WebOptions(port=args.web_port, open_browser=args.browser)
    home = Home.at(args.home)
    server = WebServer(port=web.port, home=home.root)
    lobby = WebLobby(
        server, home, name=name, bind=args.bind, beacon=beacon,
        person_deadline=args.person_deadline, grace=args.grace, directory=args.relay,
    )  # fmt: skip
    server.lobby = lobby
    server.replays = lobby.replay
    try:
        server.check_port()
        return trio.run(run_lobby, lobby, web)
    except (BeloteError, OSError) as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from belote_p2p.i18n import _

    p = sub.add_parser(
        "web",
        help=_("the lobby in the browser: host, join, profile, ranking"),
        description=_(
            "Open the lobby page (on 127.0.0.1): host a table, join one by its address or "
            "among the tables on the local network, resume an unfinished game, see your "
            "profile, the ranking and past games; the game is played on the same page."
        ),
    )
    p.add_argument("--name", metavar=_("NAME"), help=_("the name shown to the other players"))
    p.add_argument(
        "--home", metavar=_("DIR"),
        help=_("identity and transcripts ({home})").format(home=Home.default()),
    )  # fmt: skip
    p.add_argument(
        "--bind", default="0.0.0.0", metavar=_("IP"), help=_("address the game listens on")
    )
    p.add_argument("--web-port", type=port, default=0, metavar=_("PORT"),
                   help=_("the page's port (0: any free port)"))  # fmt: skip
    p.add_argument(
        "--browser", action=argparse.BooleanOptionalAction, default=True,
        help=_("open the page in the browser (--no-browser: print its URL)"),
    )  # fmt: skip
    p.add_argument(
        "--beacon-address", action="append", metavar=_("IP[:PORT]"),
        help=_("where tables are announced, repeatable ({addresses})").format(
            addresses=beacon_text()
        ),
    )  # fmt: skip
    p.add_argument(
        "--relay", metavar=_("HOST:PORT"),
        help=_("a relay with a public directory (`relay --directory`): the lobby lists its "
               "public tables, each with a button to take a seat"),
    )  # fmt: skip
    p.add_argument("--person-deadline", type=positive_seconds, default=60.0, metavar=_("S"),
                   help=_("seconds a seat has for a decision (60)"))  # fmt: skip
    p.add_argument(
        "--grace", type=seconds, default=120.0, metavar=_("S"),
        help=_("seconds past its deadline before a seat is signed gone (120)"),
    )  # fmt: skip
    p.set_defaults(func=cmd_web)
