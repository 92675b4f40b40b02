"""The game records: ``verify`` and ``replay`` a transcript, ``import`` it into the profile,
and show a ``profile`` or the ``ranking`` of the players met.

What a transcript proves is decided in :mod:`belote_p2p.protocol.verify`; the XP and the
profile database are :mod:`belote_p2p.app.profile`'s. This module is what a person sees.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from belote_p2p.protocol.identity import IdentityError, fingerprint
from belote_p2p.protocol.transcript import TranscriptError
from belote_p2p.protocol.verify import verify_transcript

from .display import format_round, format_sheet
from .home import PROFILE_FILE_NAME, Home
from .profile import (
    LEVEL_CURVE,
    XP_GAME_FINISHED,
    XP_GAME_WON,
    XP_ROUND_WON,
    XP_TRICK_WON,
    ImportStatus,
    ProfileError,
    all_players,
    find_players,
    format_profile,
    format_ranking,
    open_db,
    rank_players,
    record_game,
)


def _verify_command(args: argparse.Namespace) -> int:
    try:
        verdict = verify_transcript(Path(args.file))
    except (OSError, TranscriptError) as exc:
        print(f"belote-p2p verify: {exc}", file=sys.stderr)
        return 2
    print(verdict.summary())
    return 0 if verdict.ok else 1


def _replay_command(args: argparse.Namespace) -> int:
    try:
        verdict = verify_transcript(Path(args.file))
    except (OSError, TranscriptError) as exc:
        print(f"belote-p2p replay: {exc}", file=sys.stderr)
        return 2
    names = tuple(f"{s.name} [{fingerprint(s.key)[:9]}]" for s in verdict.definition.seats)
    rules = verdict.definition.rules
    print(f"Table {verdict.definition.table_id.hex()}: {rules.name} to {rules.target}")
    for seat, name in enumerate(names):
        print(f"  seat {seat}: {name}")
    for audited in verdict.rounds:
        print(format_round(audited.record, names))
        if audited.report.fault is not None:
            f = audited.report.fault
            print(f"  audit: {f.kind.value} by {names[f.seat]} ({f.reason}); round rescored")
    print(format_sheet(verdict.state))
    print(verdict.summary())
    return 0 if verdict.ok else 1


def _import_command(args: argparse.Namespace) -> int:
    db = Home.at(args.home).profile_db
    status = 0
    for name in args.files:
        try:
            outcome = record_game(db, Path(name))
        except (sqlite3.Error, ProfileError) as exc:
            print(f"belote-p2p import: {db}: {exc}", file=sys.stderr)
            return 2
        print(f"{name}: {outcome.status.value}: {outcome.reason}")
        if outcome.status is ImportStatus.IMPORTED and outcome.result is not None:
            for player, record in zip(outcome.result.players, outcome.result.seats, strict=True):
                print(f"  {player.name} [{player.fingerprint}]: +{record.xp} XP")
            for fp, challenge in outcome.awards:
                print(f"  challenge for [{fp}]: {challenge.title} (+{challenge.xp} XP)")
        if not outcome.ok:
            status = 1
    return status


def _own_fingerprint(home: Home) -> str | None:
    return home.identity().fingerprint if home.has_identity() else None


def _profile_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    try:
        who = args.who if args.who is not None else _own_fingerprint(home)
    except (OSError, IdentityError) as exc:
        print(f"belote-p2p profile: {exc}", file=sys.stderr)
        return 2
    if who is None:
        print(f"belote-p2p profile: no identity in {home}; name a player", file=sys.stderr)
        return 2
    try:
        with open_db(home.profile_db) as conn:
            found = find_players(conn, who)
    except (sqlite3.Error, ProfileError) as exc:
        print(f"belote-p2p profile: {exc}", file=sys.stderr)
        return 2
    if not found:
        print(f"No player {who!r} in {home.profile_db}: no game with them is recorded.")
        return 1
    if len(found) > 1:
        print(f"{len(found)} players match {who!r}; name one by fingerprint:")
        for p in found:
            print(f"  {p.name} [{p.fingerprint}]")
        return 1
    print(format_profile(found[0]))
    return 0


def _ranking_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    try:
        with open_db(home.profile_db) as conn:
            players = all_players(conn)
    except (sqlite3.Error, ProfileError) as exc:
        print(f"belote-p2p ranking: {exc}", file=sys.stderr)
        return 2
    if not players:
        print(f"No game recorded in {home.profile_db} yet.")
        return 0
    print(format_ranking(rank_players(players)))
    return 0


def _register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="check a game transcript offline",
        description="Check every signature, hash chain, deck protocol proof, shuffle and "
        "play of a game transcript; print the final score or the first fault and its seat. "
        "Exit status 0 if the game verifies to its end, 1 if not, 2 if FILE is no transcript.",
    )
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=_verify_command)
    p = sub.add_parser("replay", help="show a recorded game trick by trick")
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=_replay_command)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_verify(sub)
    xp_rules = (
        f"XP from verified games only: {XP_GAME_FINISHED} for playing a game to its end, "
        f"{XP_GAME_WON} for winning it, {XP_ROUND_WON} per round your team wins (made its "
        f"contract or beat the takers'; with three players: you made your contract, or the "
        f"taker failed; with two: you scored more), {XP_TRICK_WON} per trick you take; "
        f"challenges award extra XP and coins once. Levels: {LEVEL_CURVE}"
    )
    home_help = f"data directory ({Home.default()}); the database is <home>/{PROFILE_FILE_NAME}"

    p = sub.add_parser(
        "import",
        help="verify game transcripts and record their XP",
        description="Verify each transcript and record its game: XP, statistics and "
        "challenges for every player (four, three or two). A transcript that does not "
        "verify to the end of the game is refused with the reason. A game is recorded "
        "once, whichever seat's transcript brings it. Exit status 0 if every file was "
        "recorded (or was already), "
        f"1 if one was refused. {xp_rules}",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_import_command)

    p = sub.add_parser(
        "profile",
        help="a player's level, XP, games and challenges",
        description="Show a player's level, XP, games, wins, contracts made and failed, "
        "capots, belotes, challenges and coins. WHO is a name or a fingerprint (or its "
        f"start); without it, this peer's own identity. {xp_rules}",
    )
    p.add_argument("who", nargs="?", metavar="NAME|FINGERPRINT")
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_profile_command)

    p = sub.add_parser(
        "ranking",
        help="the leaderboard of the players met",
        description="Rank every player this peer has played with or imported, by XP "
        f"(then wins and win rate). {xp_rules}",
    )
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_ranking_command)
