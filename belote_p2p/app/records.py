"""The game records: ``verify`` and ``replay`` a transcript, ``import`` it into the profile,
and show a ``profile`` or the ``ranking`` of the players met.

What a transcript proves is decided in :mod:`belote_p2p.protocol.verify`; the XP and the
profile database are :mod:`belote_p2p.app.profile`'s. This module is what a person sees.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

from belote_p2p.errors import BeloteError
from belote_p2p.i18n import _
from belote_p2p.protocol.identity import IdentityError, fingerprint
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.transcript import TranscriptError, read_transcript
from belote_p2p.protocol.verify import Verdict, verify_record, verify_transcript

from .display import (
    format_columns,
    format_round,
    format_sheet,
    format_unfinished,
    seat_names,
    shown_name,
)
from .home import PROFILE_FILE_NAME, Home
from .profile import (
    LEVEL_CURVE,
    XP_GAME_FINISHED,
    XP_GAME_WON,
    XP_ROUND_WON,
    XP_TRICK_WON,
    ImportStatus,
    ProfileError,
    RecordedGame,
    all_players,
    analysed_losses,
    file_digest,
    find_players,
    format_profile,
    format_ranking,
    game_numbers,
    open_db,
    players_text,
    progress_text,
    rank_players,
    record_game,
    recorded_games,
    result_text,
    verified_digests,
)
from .wording import team_name


def game_files(home: Home) -> list[tuple[int, Path]]:
    """The transcripts of ``home``, newest first, each with its number in ``games``: given
    once and kept in the profile (:func:`~.profile.game_numbers`), so that a game keeps its
    number as others are added (where the profile cannot be written: by position, from 1
    for the oldest)."""
    try:
        files = [p for p in home.games.glob("*.transcript") if p.is_file()]
        files.sort(key=lambda p: (p.stat().st_mtime, p.name))
    except OSError:
        return []
    try:
        with open_db(home.profile_db) as conn:
            numbers = game_numbers(conn, [p.name for p in files])
    except (OSError, sqlite3.Error, ProfileError):
        numbers = {p.name: i for i, p in enumerate(files, 1)}
    return [(numbers[p.name], p) for p in reversed(files)]


class GameNotFound(BeloteError, ValueError):
    """A game named by a number that ``games`` does not list."""


def game_path(name: str, home: Home) -> Path:
    """``name`` as a transcript: a file, or the number ``belote-p2p games`` gives it."""
    path = Path(name)
    if path.exists() or not name.isdigit():
        return path
    files = dict(game_files(home))
    number = int(name)
    if number not in files:
        listed = f"{min(files)} to {max(files)}" if files else "none yet"
        raise GameNotFound(f"no game {number} in {home.games} (belote-p2p games lists {listed})")
    return files[number]


def verdict_text(verdict: Verdict) -> str:
    """What a record proves, with the teams named by their players."""
    rules = verdict.definition.rules
    if verdict.ok and verdict.finished and verdict.state.winner is not None and rules.has_teams:
        names = seat_names(verdict.definition)
        a, b = verdict.state.scores
        team = team_name(names, verdict.state.winner)
        return f"OK: the team {team} wins {a}-{b} after {len(verdict.rounds)} rounds"
    return verdict.summary()


def _verify_one(name: str, home: Home) -> tuple[int, str]:
    """The exit status of ``verify name`` and its line: the verdict line of PROTOCOL.md
    §7.2, which others parse, or (status 2) why ``name`` is no transcript."""
    try:
        verdict = verify_transcript(game_path(name, home))
    except (OSError, TranscriptError, GameNotFound) as exc:
        return 2, f"belote-p2p verify: {exc}"
    return (0 if verdict.ok else 1), verdict.summary()


def _verify_command(args: argparse.Namespace) -> int:
    """One file: its verdict line (or, on standard error, why it is no transcript) and its
    status. Several (the conformance kit's ``--batch``): one line per file, in order, its
    status then its line; the status is the highest of theirs."""
    home = Home.at(args.home)
    if len(args.file) == 1:
        status, line = _verify_one(args.file[0], home)
        print(line, file=sys.stderr if status == 2 else sys.stdout)
        return status
    worst = 0
    for name in args.file:
        status, line = _verify_one(name, home)
        print(f"{status} {line}", flush=True)
        worst = max(worst, status)
    return worst


def _replay_command(args: argparse.Namespace) -> int:
    try:
        verdict = verify_transcript(game_path(args.file, Home.at(args.home)))
    except (OSError, TranscriptError, GameNotFound) as exc:
        print(f"belote-p2p replay: {exc}", file=sys.stderr)
        return 2
    names = seat_names(verdict.definition)
    rules = verdict.definition.rules
    print(f"Table {verdict.definition.table_id.hex()}: {rules.name} to {rules.target}")
    seats = verdict.definition.seats
    if not rules.has_teams:
        for seat, s in enumerate(seats):
            print(f"  seat {seat}: {names[seat]} [{fingerprint(s.key)[:9]}]")
    for team in (0, 1) if rules.has_teams else ():
        shown = " & ".join(f"{names[s]} [{fingerprint(seats[s].key)[:9]}]"
                           for s in (team, team + 2))  # fmt: skip
        print(f"  {shown}")
    chats = list(verdict.chats)
    for audited in verdict.rounds:
        while chats and chats[0].round <= audited.record.number:
            chat = chats.pop(0)
            print(f"  {names[chat.seat]} says: {safe_text(chat.text)}")
        print(format_round(audited.record, names))
        if audited.report.fault is not None:
            f = audited.report.fault
            print(f"  audit: {f.kind.value} by {names[f.seat]} ({f.reason}); round rescored")
    unfinished = format_unfinished(verdict.state, names)
    if unfinished is not None:
        print(unfinished)
    for chat in chats:
        print(f"  {names[chat.seat]} says: {safe_text(chat.text)}")
    print(format_sheet(verdict.state, names))
    print(verdict_text(verdict))
    return 0 if verdict.ok else 1


def _games_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    files = game_files(home)
    if not files:
        print(f"No game in {home.games} yet.")
        return 0
    recorded: dict[str, RecordedGame] = {}
    verified: set[str] = set()
    try:
        with open_db(home.profile_db) as conn:
            recorded = recorded_games(conn)
            verified = verified_digests(conn)
    except (sqlite3.Error, ProfileError):
        pass
    rows = [("#", "date", "players", "variant", "result", "record")]
    for number, path in files:
        date = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
        try:
            transcript = read_transcript(path)
            digest = file_digest(path)
        except (OSError, TranscriptError):
            rows.append((str(number), date, safe_text(path.name), "", "", "not a transcript"))
            continue
        definition = transcript.definition
        names = seat_names(definition)
        players = players_text(names)
        variant = f"{definition.rules.name} to {definition.rules.target}"
        # The game of a recorded table id, but only if this very file verified at import: a
        # forged file may carry a real table's id.
        known = recorded.get(definition.table_id.hex()) if digest in verified else None
        if known is not None:
            result = result_text(names, known.scores, known.winner, known.abandoned_by)
            checked = "verified"
        elif args.verify:
            verdict = verify_record(definition, transcript.envelopes, transcript.truncated)
            result = verdict_text(verdict)
            checked = "verified" if verdict.ok else "does not verify"
        else:
            result = "?"
            checked = "not checked (--verify)"
        rows.append((str(number), date, players, variant, result, checked))
    print(format_columns(rows))
    print("replay N, verify N and import N take a game by its number.")
    return 0


def _import_command(args: argparse.Namespace) -> int:
    db = Home.at(args.home).profile_db
    status = 0
    for name in args.files:
        try:
            outcome = record_game(db, game_path(name, Home.at(args.home)))
        except GameNotFound as exc:
            print(f"belote-p2p import: {exc}", file=sys.stderr)
            return 2
        except (sqlite3.Error, ProfileError) as exc:
            print(f"belote-p2p import: {db}: {exc}", file=sys.stderr)
            return 2
        print(safe_text(f"{name}: {outcome.status.value}: {outcome.reason}"))
        if outcome.status is ImportStatus.IMPORTED and outcome.result is not None:
            for player, record in zip(outcome.result.players, outcome.result.seats, strict=True):
                print(f"  {shown_name(player.name)} [{player.fingerprint}]: +{record.xp} XP")
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
            losses = analysed_losses(conn, found[0].fingerprint) if len(found) == 1 else []
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
    progress = progress_text(losses) or _("no game analysed yet (belote-p2p analyse N)")
    print("  " + progress)
    return 0


def _ranking_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    try:
        owner = _own_fingerprint(home)
        with open_db(home.profile_db) as conn:
            players = all_players(conn, owner)
    except (OSError, IdentityError, sqlite3.Error, ProfileError) as exc:
        print(f"belote-p2p ranking: {exc}", file=sys.stderr)
        return 2
    if not players:
        print(f"No game of yours recorded in {home.profile_db} yet.")
        return 0
    print(format_ranking(rank_players(players)))
    if owner is None:
        print(f"(No identity in {home}: every recorded game counts.)")
    return 0


def _register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="check a game transcript offline",
        description="Check every signature, hash chain, deck protocol proof, shuffle and "
        "play of a game transcript; print the final score or the first fault and its seat. "
        "Exit status 0 if the game verifies to its end, 1 if not, 2 if FILE is no transcript. "
        "With several files, one line per file, in order: that status, a space and the line "
        "(as belote-p2p conformance --batch reads it); the exit status is the highest.",
    )
    game_help = "a transcript file, or a game's number in belote-p2p games"
    home_help = f"data directory with the games numbered by belote-p2p games ({Home.default()})"
    p.add_argument(
        "file",
        nargs="+",
        metavar="FILE|N",
        help=f"{game_help}; with several, one line each: its exit status, a space, its verdict",
    )
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_verify_command)
    p = sub.add_parser(
        "replay",
        help="show a recorded game round by round",
        description="Check a game record, then show it: each round's bidding, contract, "
        "announcements and tricks (cards as the table writes them, 10♦), the chat, the score "
        "sheet and what the record proves.",
    )
    p.add_argument("file", metavar="FILE|N", help=game_help)
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_replay_command)
    p = sub.add_parser(
        "games",
        help="the games in your home, numbered",
        description="List the games kept in the data directory, newest first: date, players, "
        "variant, result and whether the record was verified (a game recorded in the profile "
        "was). replay N, verify N and import N take a game by its number here.",
    )
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.add_argument(
        "--verify", action="store_true",
        help="check each game not yet recorded (slower: every proof is checked)",
    )  # fmt: skip
    p.set_defaults(func=_games_command)


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
    p.add_argument("files", nargs="+", metavar="FILE|N",
                   help="transcript files, or games' numbers in belote-p2p games")  # fmt: skip
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
        description="Rank the players of the games this peer's identity played (its own and "
        "those imported in which it sat), by the XP they earned in those games (then wins and "
        "win rate): keys that only played one another are not ranked, whatever was imported. "
        f"{xp_rules}",
    )
    p.add_argument("--home", metavar="DIR", help=home_help)
    p.set_defaults(func=_ranking_command)
