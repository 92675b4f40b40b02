"""``belote-p2p analyse GAME``: every decision of a recorded game valued, as the player knew
it and with every hand seen (:mod:`belote_p2p.players.analysis`), said in the reader's
language, ``--html FILE`` the replay page with every hand open (:mod:`.replay`), and a last
line of JSON. The figures of each seat are kept in the profile (:func:`.profile.
record_analysis`), so that ``profile`` shows a player's progress.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from belote_p2p.errors import BeloteError
from belote_p2p.i18n import _, current
from belote_p2p.players.analysis import GameAnalysis
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.transcript import TranscriptError
from belote_p2p.protocol.verify import Verdict, verify_transcript

from .argtypes import seat_number, seed
from .coach import COACH_BOT, make_coach, report_lines
from .display import seat_names
from .home import PROFILE_FILE_NAME, Home
from .profile import AnalysedSeat, ProfileError, players_text, record_analysis
from .records import GameNotFound, game_path
from .wording import variant_name


class NothingToAnalyse(BeloteError, ValueError):
    """A record with no round whose deck was revealed."""


def analyse_verdict(
    verdict: Verdict, *, seats: set[int] | None = None, spec: str = COACH_BOT, seed: int = 0
) -> GameAnalysis:
    """Every audited round of ``verdict`` analysed for ``seats`` (every seat)."""
    rounds = [(r.record, r.deck) for r in verdict.rounds if r.deck]
    if not rounds:
        raise NothingToAnalyse(_("No round of this record was played out and revealed."))
    coach = make_coach(spec, seed=seed)
    return coach.analyse_game(verdict.definition.rules, rounds, seats)


def analysed_seats(verdict: Verdict, analysis: GameAnalysis) -> list[AnalysedSeat]:
    """The rows :func:`~.profile.record_analysis` keeps of ``analysis``."""
    keys = verdict.definition.roster
    rows = []
    for s in analysis.summaries():
        player = fingerprint(keys[s.seat])
        found = (s.decisions, s.valued, s.points_lost, s.hindsight_valued, s.hindsight_points_lost)
        rows.append(AnalysedSeat(s.seat, player, *found))
    return rows


def title_text(verdict: Verdict) -> str:
    """``Analysis of a classic game to 501: Ana & Cy v Bo & Di, 7 rounds``."""
    rules = verdict.definition.rules
    names = seat_names(verdict.definition)
    return _("Analysis of a {variant} game to {target}: {players}, {rounds} rounds").format(
        variant=variant_name(rules.name),
        target=rules.target,
        players=players_text(names),
        rounds=len(verdict.rounds),
    )


def game_date(path: Path) -> str:
    """When a transcript was last written, UTC ISO 8601 (as the profile dates games)."""
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    try:
        path = game_path(args.game, home)
        verdict = verify_transcript(path)
    except (OSError, TranscriptError, GameNotFound) as exc:
        print(_("belote-p2p analyse: {error}").format(error=exc), file=sys.stderr)
        return 2
    seats = verdict.definition.rules.seats
    if args.seat is not None and not 0 <= args.seat < seats:
        print(
            _("belote-p2p analyse: --seat is 0 to {last} at this table").format(last=seats - 1),
            file=sys.stderr,
        )
        return 2
    chosen = {args.seat} if args.seat is not None else None
    try:
        analysis = analyse_verdict(verdict, seats=chosen, spec=args.coach_bot, seed=args.seed)
    except BeloteError as exc:
        print(_("belote-p2p analyse: {error}").format(error=exc), file=sys.stderr)
        return 2
    names = seat_names(verdict.definition)
    hints = verdict.definition.hints
    for line in report_lines(analysis, names, title=title_text(verdict), hints=hints):
        print(line)
    if args.html is not None:
        from .web.replay import replay_page

        page = replay_page(verdict, analysis, current())
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as exc:
            print(_("belote-p2p analyse: {error}").format(error=exc), file=sys.stderr)
            return 2
        print(_("The replay page: {path}").format(path=args.html))
    if verdict.ok:
        try:
            record_analysis(
                home.profile_db,
                verdict.definition.table_id,
                game_date(path),
                analysed_seats(verdict, analysis),
            )
        except (sqlite3.Error, ProfileError, OSError) as exc:
            print(_("(not kept in the profile: {error})").format(error=exc), file=sys.stderr)
    figures = analysis.to_json()
    figures["hints"] = hints
    print(json.dumps(figures))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyse",
        help=_("value every decision of a recorded game, as the player knew it and in hindsight"),
        description=_(
            "Check a game record, then value every bid and card of every seat twice: with "
            "only what that player knew (the expert bot's reckoning, the fair measure of a "
            "mistake) and with every hand seen (the double-dummy solver). For each seat: its "
            "decisions, the points its choices lost against the best in both views, and its "
            "costliest decisions with the position. The last line is JSON. The figures of a "
            "verified game are kept in the profile, which shows your progress."
        ),
    )
    p.add_argument(
        "game", metavar="FILE|N", help=_("a transcript file, or a game's number in games")
    )
    p.add_argument(
        "--seat", type=seat_number, metavar="N", help=_("only this seat's decisions (all)")
    )
    p.add_argument(
        "--html", metavar="FILE", help=_("also write the replay page, every hand open (none)")
    )
    p.add_argument(
        "--coach-bot",
        default=COACH_BOT,
        metavar="BOT",
        help=_("the bot that values the choices as the player knew them"),
    )
    p.add_argument("--seed", type=seed, default=0, help=_("seed of the analysis"))
    p.add_argument(
        "--home",
        metavar="DIR",
        help=_("data directory ({home}); the profile is <home>/{file}").format(
            home=Home.default(), file=PROFILE_FILE_NAME
        ),
    )
    p.set_defaults(func=_command)
