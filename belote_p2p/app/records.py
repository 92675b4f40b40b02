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
from belote_p2p.i18n import _, format_date, format_number, ngettext, pgettext
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
    winner_first,
)
from .home import PROFILE_FILE_NAME, Home
from .profile import (
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
    import_text,
    level_curve,
    open_db,
    players_text,
    progress_text,
    rank_players,
    record_game,
    recorded_games,
    result_text,
    verified_digests,
)
from .wording import fault_kind_text, game_text, team_name, variant_name


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
        if files:
            listed = _("belote-p2p games lists {first} to {last}").format(
                first=min(files), last=max(files)
            )
        else:
            listed = _("belote-p2p games lists none yet")
        raise GameNotFound(
            _("no game {number} in {folder} ({listed})").format(
                number=number, folder=home.games, listed=listed
            )
        )
    return files[number]


def verdict_text(verdict: Verdict) -> str:
    """What a record proves, in the reader's words, the teams named by their players: the
    verdict line of :meth:`~belote_p2p.protocol.verify.Verdict.summary` (which stays
    English, for the programs that read ``verify``), said for a person (``replay``,
    ``games``). A reason the protocol gives (a fault's, a damaged record's) is quoted as it
    gives it."""
    definition = verdict.definition
    state = verdict.state
    names = seat_names(definition)
    keys = [f"{names[s]} [{fingerprint(seat.key)}]" for s, seat in enumerate(definition.seats)]
    score = "-".join(str(x) for x in state.scores)
    if verdict.corrupt is not None:
        return _("INVALID: {reason}").format(reason=verdict.corrupt)
    if verdict.fault is not None:
        seat = verdict.fault.seat
        who = keys[seat] if 0 <= seat < len(keys) else _("an unknown seat")
        return _("FAULT by seat {seat} ({who}): {reason}").format(
            seat=seat, who=who, reason=verdict.fault.reason
        )
    if verdict.disputed is not None:
        return _("NO GAME: the seats did not sign the same table ({reason})").format(
            reason=verdict.disputed.reason
        )
    if verdict.abandoned is not None:
        return _("ABANDONED by seat {seat} ({who}) in round {round} at {score}").format(
            seat=verdict.abandoned, who=keys[verdict.abandoned], round=state.number + 1,
            score=score,
        )  # fmt: skip
    left = verdict.left
    if left is not None and verdict.left_here:
        return _(
            "LEFT: seat {seat} ({who}) left in round {round} at {score}; its partner plays "
            "its open hand, and this record ends there"
        ).format(
            seat=left.seat, who=keys[left.seat], round=left.round + 1,
            score="-".join(str(x) for x in left.state.scores),
        )  # fmt: skip
    if not verdict.finished:
        if verdict.truncated:
            return _(
                "INCOMPLETE: the record stops in round {round} at {score} (the file ends in "
                "a cut record)"
            ).format(round=state.number + 1, score=score)
        return _("INCOMPLETE: the record stops in round {round} at {score}").format(
            round=state.number + 1, score=score
        )
    line = _ok_text(verdict, names, score)
    if left is not None:
        line += " " + _("({name} left in round {round}; {partner} played the open hand)").format(
            name=names[left.seat], round=left.round + 1, partner=names[left.by]
        )
    return line


def _ok_text(verdict: Verdict, names: tuple[str, ...], score: str) -> str:
    """``OK: the team Ana & Cy wins 520-310 after 9 rounds`` (the winner's score first)."""
    rounds = len(verdict.rounds)
    won = verdict.state.winner
    if won is not None:
        score = winner_first(verdict.state.scores, won)
    if won is None:
        text = ngettext(
            "OK: the game ends at {score} after {rounds} round",
            "OK: the game ends at {score} after {rounds} rounds",
            rounds,
        )
        return text.format(score=score, rounds=rounds)
    if verdict.definition.rules.has_teams:
        text = ngettext(
            "OK: the team {team} wins {score} after {rounds} round",
            "OK: the team {team} wins {score} after {rounds} rounds",
            rounds,
        )
        return text.format(team=team_name(names, won), score=score, rounds=rounds)
    text = ngettext(
        "OK: {name} wins {score} after {rounds} round",
        "OK: {name} wins {score} after {rounds} rounds",
        rounds,
    )
    return text.format(name=names[won], score=score, rounds=rounds)


def _verify_one(name: str, home: Home) -> tuple[int, str]:
    """The exit status of ``verify name`` and its line: the verdict line of PROTOCOL.md
    §7.2, which others parse (English, whatever the reader's language), or (status 2) why
    ``name`` is no transcript."""
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
    print(
        _("Table {table}: {variant} to {target}").format(
            table=verdict.definition.table_id.hex(),
            variant=variant_name(rules.name),
            target=rules.target,
        )
    )
    seats = verdict.definition.seats
    keyed = [f"{names[s]} [{fingerprint(seat.key)[:9]}]" for s, seat in enumerate(seats)]
    if not rules.has_teams:
        for seat, who in enumerate(keyed):
            print("  " + _("seat {seat}: {name}").format(seat=seat, name=who))
    for team in (0, 1) if rules.has_teams else ():
        print(f"  {keyed[team]} & {keyed[team + 2]}")
    chats = list(verdict.chats)

    def say_chat() -> None:
        chat = chats.pop(0)
        print(
            "  " + _("{name} says: {text}").format(name=names[chat.seat], text=safe_text(chat.text))
        )

    for audited in verdict.rounds:
        while chats and chats[0].round <= audited.record.number:
            say_chat()
        print(format_round(audited.record, names))
        if audited.report.fault is not None:
            f = audited.report.fault
            print(
                "  "
                + _("audit: {fault} by {name} ({reason}); round rescored").format(
                    fault=fault_kind_text(f.kind), name=names[f.seat], reason=f.reason
                )
            )
    unfinished = format_unfinished(verdict.state, names)
    if unfinished is not None:
        print(unfinished)
    while chats:
        say_chat()
    print(format_sheet(verdict.state, names))
    print(verdict_text(verdict))
    return 0 if verdict.ok else 1


def _games_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    files = game_files(home)
    if not files:
        print(_("No game in {folder} yet.").format(folder=home.games))
        return 0
    recorded: dict[str, RecordedGame] = {}
    verified: set[str] = set()
    try:
        with open_db(home.profile_db) as conn:
            recorded = recorded_games(conn)
            verified = verified_digests(conn)
    except (sqlite3.Error, ProfileError):
        pass
    rows = [
        (
            "#",
            pgettext("column", "date"),
            pgettext("column", "players"),
            pgettext("column", "variant"),
            pgettext("column", "result"),
            pgettext("column", "record"),
        )
    ]
    for number, path in files:
        date = format_date(datetime.fromtimestamp(path.stat().st_mtime))
        try:
            transcript = read_transcript(path)
            digest = file_digest(path)
        except (OSError, TranscriptError):
            rows.append((str(number), date, safe_text(path.name), "", "", _("not a transcript")))
            continue
        definition = transcript.definition
        names = seat_names(definition)
        players = players_text(names)
        variant = game_text(definition.rules.name, definition.rules.target)
        # The game of a recorded table id, but only if this very file verified at import: a
        # forged file may carry a real table's id.
        known = recorded.get(definition.table_id.hex()) if digest in verified else None
        if known is not None:
            result = result_text(names, known.scores, known.winner, known.abandoned_by)
            checked = _("verified")
        elif args.verify:
            verdict = verify_record(definition, transcript.envelopes, transcript.truncated)
            result = verdict_text(verdict)
            checked = _("verified") if verdict.ok else _("does not verify")
        else:
            result = "?"
            checked = _("not checked (--verify)")
        rows.append((str(number), date, players, variant, result, checked))
    print(format_columns(rows))
    print(_("replay N, verify N and import N take a game by its number."))
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
        print(safe_text(_("{file}: {outcome}").format(file=name, outcome=import_text(outcome))))
        if outcome.status is ImportStatus.IMPORTED and outcome.result is not None:
            for player, record in zip(outcome.result.players, outcome.result.seats, strict=True):
                earned = _("{name} [{fingerprint}]: +{xp} XP").format(
                    name=shown_name(player.name), fingerprint=player.fingerprint,
                    xp=format_number(record.xp),
                )  # fmt: skip
                print(f"  {earned}")
            for fp, challenge in outcome.awards:
                print(
                    "  "
                    + _("challenge for [{fingerprint}]: {title} (+{xp} XP)").format(
                        fingerprint=fp, title=_(challenge.title), xp=format_number(challenge.xp)
                    )
                )
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
        print(
            "belote-p2p profile: " + _("no identity in {home}; name a player").format(home=home),
            file=sys.stderr,
        )
        return 2
    try:
        with open_db(home.profile_db) as conn:
            found = find_players(conn, who)
            losses = analysed_losses(conn, found[0].fingerprint) if len(found) == 1 else []
    except (sqlite3.Error, ProfileError) as exc:
        print(f"belote-p2p profile: {exc}", file=sys.stderr)
        return 2
    if not found:
        print(
            _("No player {who!r} in {database}: no game with them is recorded.").format(
                who=who, database=home.profile_db
            )
        )
        return 1
    if len(found) > 1:
        print(
            ngettext(
                "{count} player matches {who!r}; name one by fingerprint:",
                "{count} players match {who!r}; name one by fingerprint:",
                len(found),
            ).format(count=len(found), who=who)
        )
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
        print(_("No game of yours recorded in {database} yet.").format(database=home.profile_db))
        return 0
    print(format_ranking(rank_players(players)))
    if owner is None:
        print(_("(No identity in {home}: every recorded game counts.)").format(home=home))
    return 0


def _register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help=_("check a game transcript offline"),
        description=_(
            "Check every signature, hash chain, deck protocol proof, shuffle and play of a "
            "game transcript; print the final score or the first fault and its seat (the "
            "verdict line, in English: programs read it). Exit status 0 if the game verifies "
            "to its end, 1 if not, 2 if FILE is no transcript. With several files, one line "
            "per file, in order: that status, a space and the line (as belote-p2p conformance "
            "--batch reads it); the exit status is the highest."
        ),
    )
    game_help = _("a transcript file, or a game's number in belote-p2p games")
    home_help = _("data directory with the games numbered by belote-p2p games ({home})").format(
        home=Home.default()
    )
    p.add_argument(
        "file",
        nargs="+",
        metavar=_("FILE|N"),
        help=_(
            "a transcript file, or a game's number in belote-p2p games; with several, one "
            "line each: its exit status, a space, its verdict"
        ),
    )
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.set_defaults(func=_verify_command)
    p = sub.add_parser(
        "replay",
        help=_("show a recorded game round by round"),
        description=_(
            "Check a game record, then show it: each round's bidding, contract, "
            "announcements and tricks (cards as the table writes them, 10♦), the chat, the "
            "score sheet and what the record proves."
        ),
    )
    p.add_argument("file", metavar=_("FILE|N"), help=game_help)
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.set_defaults(func=_replay_command)
    p = sub.add_parser(
        "games",
        help=_("the games in your home, numbered"),
        description=_(
            "List the games kept in the data directory, newest first: date, players, "
            "variant, result and whether the record was verified (a game recorded in the "
            "profile was). replay N, verify N and import N take a game by its number here."
        ),
    )
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.add_argument(
        "--verify", action="store_true",
        help=_("check each game not yet recorded (slower: every proof is checked)"),
    )  # fmt: skip
    p.set_defaults(func=_games_command)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_verify(sub)
    xp_rules = _(
        "XP from verified games only: {finished} for playing a game to its end, {won} for "
        "winning it, {round} per round your team wins (made its contract or beat the "
        "takers'; with three players: you made your contract, or the taker failed; with "
        "two: you scored more), {trick} per trick you take; challenges award extra XP and "
        "coins once. Levels: {curve}"
    ).format(
        finished=XP_GAME_FINISHED, won=XP_GAME_WON, round=XP_ROUND_WON, trick=XP_TRICK_WON,
        curve=level_curve(),
    )  # fmt: skip
    home_help = _("data directory ({home}); the database is <home>/{file}").format(
        home=Home.default(), file=PROFILE_FILE_NAME
    )

    p = sub.add_parser(
        "import",
        help=_("verify game transcripts and record their XP"),
        description=_(
            "Verify each transcript and record its game: XP, statistics and challenges for "
            "every player (four, three or two). A transcript that does not verify to the end "
            "of the game is refused with the reason. A game is recorded once, whichever "
            "seat's transcript brings it. Exit status 0 if every file was recorded (or was "
            "already), 1 if one was refused."
        )
        + " "
        + xp_rules,
    )
    p.add_argument(
        "files", nargs="+", metavar=_("FILE|N"),
        help=_("transcript files, or games' numbers in belote-p2p games"),
    )  # fmt: skip
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.set_defaults(func=_import_command)

    p = sub.add_parser(
        "profile",
        help=_("a player's level, XP, games and challenges"),
        description=_(
            "Show a player's level, XP, games, wins, contracts made and failed, capots, "
            "belotes, challenges and coins. WHO is a name or a fingerprint (or its start); "
            "without it, this peer's own identity."
        )
        + " "
        + xp_rules,
    )
    p.add_argument("who", nargs="?", metavar=_("NAME|FINGERPRINT"))
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.set_defaults(func=_profile_command)

    p = sub.add_parser(
        "ranking",
        help=_("the leaderboard of the players met"),
        description=_(
            "Rank the players of the games this peer's identity played (its own and those "
            "imported in which it sat), by the XP they earned in those games (then wins and "
            "win rate): keys that only played one another are not ranked, whatever was "
            "imported."
        )
        + " "
        + xp_rules,
    )
    p.add_argument("--home", metavar=_("DIR"), help=home_help)
    p.set_defaults(func=_ranking_command)
