"""``belote-p2p web``: the lobby page. Host a table (variant, target, bots), join one by its
address or among the tables heard on the local network, resume an unfinished game, and see
one's profile, the ranking and the past games; the game itself is then played on the same
page (the seat's table joins the lobby's server, :mod:`.seat`), and the lobby comes back
when the person leaves the table.

Tables are joined by address: invitation codes are not in this version. A table is watched
by the watch code its host printed (the Watch entry: :mod:`belote_p2p.app.watch`), through
the host's port or, when that does not answer, the relay the code names.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import trio

from belote_p2p.app.argtypes import port, positive_seconds, seconds
from belote_p2p.errors import BeloteError
from belote_p2p.game.rules import RULE_SETS, rule_set
from belote_p2p.net.discovery import DEFAULT_LISTEN, TableAd, discover_all
from belote_p2p.net.invite import Invitation, InvitationError
from belote_p2p.net.lobby import DEFAULT_PORT, check_name
from belote_p2p.net.watch import read_watch_code
from belote_p2p.protocol.transcript import Transcript

from ..home import Home, unfinished_games
from ..lan import DEFAULT_BEACON_ADDRESSES, BeaconAddress, beacon_address, beacon_text
from ..profile import (
    SCORE_COLUMNS,
    ProfileError,
    all_players,
    find_players,
    open_db,
    rank_players,
    row_scores,
)
from ..seat import SeatOptions
from .options import WebOptions
from .seat import page_opened
from .server import WebServer
from .viewmodel import JSON

GAMES_SHOWN = 20
PAST_GAMES = f"""
SELECT g.date, g.variant, g.target, g.result,
       (SELECT group_concat(s.name, ', ') FROM game_seats s WHERE s.game = g.id),
       {SCORE_COLUMNS}
FROM games g ORDER BY g.date DESC LIMIT ?
"""
"""The past games, with every side's score."""


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
    ) -> None:
        self.server = server
        self.home = home
        self.name = name
        self.bind = bind
        self.beacon = beacon
        self.person_deadline = person_deadline
        self.grace = grace
        self.status = ""
        self.busy = False
        self.tables: list[TableAd] = []
        self.profile = ""
        self.ranking: list[JSON] = []
        self.games: list[JSON] = []
        self.unfinished: list[tuple[Path, str]] = []
        self.told = ""
        """What the seat's job said last between games (a rematch's answers), kept past its end."""
        self.quit = trio.Event()
        self.nursery: trio.Nursery | None = None

    # -- what the page shows ----------------------------------------------------------------

    def model(self) -> JSON:
        return {
            "kind": "lobby",
            "name": self.name,
            "variants": [{"name": v, "seats": RULE_SETS[v].seats} for v in sorted(RULE_SETS)],
            "status": self.status,
            "busy": self.busy,
            "profile": self.profile,
            "tables": [
                {
                    "name": ad.beacon.name,
                    "variant": ad.beacon.variant,
                    "target": ad.beacon.target,
                    "free": ad.beacon.free,
                    "address": ad.address,
                }
                for ad in self.tables
            ],
            "unfinished": [{"path": str(p), "text": text} for p, text in self.unfinished],
            "ranking": self.ranking,
            "games": self.games,
        }

    def _changed(self) -> None:
        self.server.hub.bump()

    async def refresh(self) -> None:
        """Read the profile, ranking, past and unfinished games again (in a thread: the
        unfinished games are replayed to tell whether they ended)."""
        await trio.to_thread.run_sync(self._read_home)
        self._changed()

    def _read_home(self) -> None:
        identity = self.home.identity()
        me = identity.fingerprint
        try:
            with open_db(self.home.profile_db) as conn:
                players = all_players(conn)
                mine = find_players(conn, me)
                rows = conn.execute(PAST_GAMES, (GAMES_SHOWN,)).fetchall()
        except (sqlite3.Error, ProfileError, OSError) as exc:
            self.profile = f"No profile: {exc}"
            return
        if mine:
            p = mine[0]
            self.name = self.name or p.name
            self.profile = (
                f"[{me}] level {p.level}, {p.xp} XP; {p.games} games, {p.wins} won; "
                f"contracts {p.contracts_made} made, {p.contracts_failed} failed"
            )
        else:
            self.profile = f"[{me}] no game recorded yet"
        self.ranking = [
            {"rank": rank, "name": p.name, "fingerprint": p.fingerprint, "level": p.level,
             "xp": p.xp, "games": p.games, "won": p.wins}
            for rank, p in rank_players(players)
        ]  # fmt: skip
        self.games = [
            {"date": date[:16].replace("T", " "), "variant": variant, "target": target,
             "score": "-".join(map(str, row_scores(scores))), "result": result,
             "players": names or ""}
            for date, variant, target, result, names, *scores in rows
        ]  # fmt: skip
        self.unfinished = [
            (self.home.transcript(t.definition, t.seat), _describe(t))
            for t in unfinished_games(self.home, identity)
        ]

    # -- the person's requests ------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> str | None:
        kind = message.get("type")
        if kind == "scan":
            return self._start(self._scan)
        if kind == "quit":
            if self.server.table is not None:
                return "A game is on: finish it first."
            self.quit.set()
            return None
        if kind == "watch":
            try:
                invitation = read_watch_code(str(message.get("code") or ""))
            except InvitationError as exc:
                return f"Watch code: {exc}"
            return self._start(lambda: self._watch(invitation))
        if kind not in ("host", "join", "resume"):
            return f"Unknown message {kind!r}."
        if kind == "resume":
            path = message.get("path")
            if not isinstance(path, str) or path not in {str(p) for p, _ in self.unfinished}:
                return "No such unfinished game."
            return self._start(lambda: self._resume(Path(path)))
        try:
            self.name = check_name(str(message.get("name", "")))
        except BeloteError as exc:
            return f"Name: {exc}"
        if kind == "host":
            try:
                rules = rule_set(
                    str(message.get("variant")), target=int(message.get("target", 501))
                )
                bots = int(message.get("bots", 0))
                port = int(message.get("port", DEFAULT_PORT))
            except (TypeError, ValueError) as exc:
                return f"Cannot host: {exc}"
            if not 0 <= bots < rules.seats or not 0 <= port < 65536:
                most = rules.seats - 1
                return f"Bots are 0 to {most} at a {rules.name} table, a port 0 to 65535."
            return self._start(lambda: self._host(rules.name, rules.target, bots, port))
        address = message.get("address")
        if not isinstance(address, str) or not address.strip():
            return "Give the host's address (HOST:PORT) or choose a table heard on the network."
        return self._start(lambda: self._join(address.strip()))

    def _start(self, job: Callable[[], Awaitable[None]]) -> str | None:
        if self.busy:
            return "Wait for the current step to end."
        assert self.nursery is not None
        self.busy = True
        self.told = ""
        self._changed()

        async def run() -> None:
            try:
                await job()
            except (BeloteError, OSError, ValueError) as exc:
                self.status = f"Error: {exc}"
            finally:
                self.busy = False
                self._changed()

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
        self.status = f"Listening for tables on the local network ({DEFAULT_LISTEN:g} s)..."
        self._changed()
        self.tables = await discover_all(self.beacon, duration=DEFAULT_LISTEN)
        self.status = f"{len(self.tables) or 'No'} open table(s) heard."

    async def _host(self, variant: str, target: int, bots: int, port: int) -> None:
        from ..host import host_game

        self.status = f"Hosting {variant} to {target} with {bots} bot(s)..."
        self._changed()  # then the host says who joins (:attr:`WebOptions.tell`)
        rules = rule_set(variant, target=target)
        beacon = self.beacon if bots < rules.seats - 1 else None
        status = await host_game(self._options(), rules, port, bots, beacon=beacon)
        await self._after(status)

    async def _join(self, address: str) -> None:
        from ..join import join_game

        self.status = (
            f"Joining {address}: the host is arranging the seats; the table opens here "
            "when the game begins."
        )
        self._changed()
        status = await join_game(self._options(), address)
        await self._after(status)

    async def _resume(self, path: Path) -> None:
        from ..resume import resume_game

        self.status = f"Resuming {path.name}..."
        self._changed()
        status = await resume_game(self._options(), path)
        await self._after(status)

    async def _watch(self, invitation: Invitation) -> None:
        from ..watch import watch_in_browser

        where = " (or its relay)" if invitation.relay else ""
        self.status = (
            f"Watching: the host's port{where}; the table opens here once its game begins."
        )
        self._changed()
        status = await watch_in_browser(invitation, WebOptions(server=self.server), save=None)
        self.status = "Done watching." if status == 0 else "The watch ended early."
        await self.refresh()

    async def _after(self, status: int) -> None:
        over = "The game is over." if status == 0 else f"The game ended (status {status})."
        # The last word of a rematch (who did not want one) stays beside it.
        self.status = f"{over} {self.told}" if self.told else over
        self.told = ""
        await self.refresh()


def _describe(t: Transcript) -> str:
    names = ", ".join(s.name for s in t.definition.seats)
    return f"{t.definition.rules.name} to {t.definition.rules.target}, seat {t.seat}: {names}"


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
        print(f"error: {exc}", file=sys.stderr)
        return 2
    web = WebOptions(port=args.web_port, open_browser=args.browser)
    server = WebServer(port=web.port)
    lobby = WebLobby(
        server, Home.at(args.home), name=name, bind=args.bind, beacon=beacon,
        person_deadline=args.person_deadline, grace=args.grace,
    )  # fmt: skip
    server.lobby = lobby
    try:
        server.check_port()
        return trio.run(run_lobby, lobby, web)
    except (BeloteError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
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
    p.add_argument("--person-deadline", type=positive_seconds, default=60.0, metavar=_("S"),
                   help=_("seconds a seat has for a decision (60)"))  # fmt: skip
    p.add_argument(
        "--grace", type=seconds, default=120.0, metavar=_("S"),
        help=_("seconds past its deadline before a seat is signed gone (120)"),
    )  # fmt: skip
    p.set_defaults(func=cmd_web)
