"""Experience, levels, challenges and the ranking of the players this peer has met.

Everything here is computed from **verified** transcripts only (:mod:`belote_p2p.protocol.verify`):
a record that does not verify to its end is refused, so nobody earns experience for a game
the transcript does not prove.

Experience (RULES.md §11), per seat and game:

* 15 XP for playing the game to its end, 25 more for winning it;
* 2 XP per round won: the seat's team made its contract, or beat the takers' contract (a
  litige is nobody's round, a redeal is no round);
* 1 XP per trick the seat took itself (the partner's tricks are the partner's).

With three players (RULES.md §12) a round is won by the taker whose contract is made, or by
both other players when it fails; with two (§13) by the player who scored more (nobody at
equal points). The game is won by a seat, not a team.

An unfinished game gives nothing. A game *abandoned by seat S* (see
:func:`score_game`'s ``abandoned_by``, the hook the session's abandonment record feeds)
gives seat S nothing and the other seats their XP for the rounds and tricks played, plus
the 15 for staying to the end, once a round was scored: a game abandoned before its first
round ended gives nobody anything.

Levels follow a published curve: level *n* needs ``25·n·(n+1)`` XP in all (that is
``50·n·(n+1)/2``: 50 XP for level 1, 150 for level 2, 300 for level 3, 500 for level 4...;
going from level *n* to *n+1* costs ``50·(n+1)``). A newcomer is level 0.

Challenges ("retos") award extra XP and coins, once per player (:data:`CHALLENGES`): make a
capot, win a game holding belote in its last round, win three games in a row, make a
coinche contract of 140 or more. Coins come only from challenges.

The database is ``<home>/profile.sqlite3`` (``--home``, by default ``$XDG_DATA_HOME/belote-p2p``,
i.e. ``~/.local/share/belote-p2p``), with the tables ``players`` (fingerprint, public key,
last name seen), ``games`` (table id, date, variant, result, each side's score: a team's with
four seats, a player's with two or three; transcript path), ``game_seats``
(each seat's player, statistics and XP in a game), ``xp`` (every award, with its reason)
and ``challenges`` (who completed which, in which game). Importing is idempotent by table
id: the transcripts of one game (one per seat) count once.

The pure part (:func:`score_game`, :func:`game_result`, :func:`level_for_xp`,
:func:`challenges_in_game`, :func:`rank_players`) knows nothing of SQLite; the rest
stores and reads its results.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Protocol

from belote_p2p.errors import BeloteError
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Trick
from belote_p2p.game.scoring import Outcome, RoundScore
from belote_p2p.i18n import N_, _, format_date, format_number, format_percent, ngettext, pgettext
from belote_p2p.i18n import using as using_language
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.private import private_directory, private_fd
from belote_p2p.protocol.transcript import TranscriptError
from belote_p2p.protocol.verify import Verdict, verify_transcript

from .display import format_columns, shown_name
from .wording import team_name

SCHEMA_VERSION = 4
"""1: two scores per game (``score0``, ``score1``); 2: one per side, up to four; 3: the
verified files and the games' numbers; 4: the coach's analyses (``analyses``)."""

XP_GAME_FINISHED = 15
XP_GAME_WON = 25
XP_ROUND_WON = 2
XP_TRICK_WON = 1

BIG_COINCHE = 140
"""The smallest coinche contract that counts for the coinche challenge."""

LEVEL_STEP = 50
"""Level n needs ``LEVEL_STEP * n * (n + 1) / 2`` XP."""


def level_curve() -> str:
    """The published curve, in the reader's words: ``level n needs 50·n·(n+1)/2 XP: 1: 50,
    2: 150, ...``."""
    levels = ", ".join(f"{n}: {format_number(xp_for_level(n))}" for n in range(1, 6))
    return _("level n needs {step}·n·(n+1)/2 XP: {levels}...").format(
        step=LEVEL_STEP, levels=levels
    )


# -- levels ---------------------------------------------------------------------------------


def xp_for_level(level: int) -> int:
    """The XP a player needs in all to be ``level``."""
    if level < 0:
        raise ValueError(f"no level {level}")
    return LEVEL_STEP * level * (level + 1) // 2


def level_for_xp(xp: int) -> int:
    """The level ``xp`` reaches: the largest n with ``xp_for_level(n) <= xp``."""
    if xp <= 0:
        return 0
    # Solve 25·n·(n+1) <= xp, then correct the integer square root's rounding.
    n = (math.isqrt(1 + 8 * xp // LEVEL_STEP) - 1) // 2
    while xp_for_level(n + 1) <= xp:
        n += 1
    while n > 0 and xp_for_level(n) > xp:
        n -= 1
    return n


# -- challenges -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Challenge:
    """A feat that awards ``xp`` and ``coins`` the first time a player achieves it."""

    id: str
    title: str
    """In English (marked for the catalogs): ``_(challenge.title)`` where it is shown."""
    xp: int
    coins: int


CAPOT = Challenge("capot", N_("Make a capot (you, or your team, take every trick)"), 50, 20)
BELOTE_FINISH = Challenge(
    "belote-finish", N_("Win a game holding belote in its last round"), 30, 10
)
THREE_WINS = Challenge("three-wins", N_("Win three games in a row"), 75, 30)
COINCHE_140 = Challenge("coinche-140", N_("Make a coinche contract of 140 or more"), 40, 15)
CHALLENGES: dict[str, Challenge] = {
    c.id: c for c in (CAPOT, BELOTE_FINISH, THREE_WINS, COINCHE_140)
}
STREAK = 3


# -- scoring a game -------------------------------------------------------------------------


class PlayedRound(Protocol):
    """What XP needs of a round: :class:`belote_p2p.game.engine.RoundRecord` is one."""

    @property
    def taker(self) -> int: ...
    @property
    def contract(self) -> int: ...
    @property
    def tricks(self) -> tuple[Trick, ...]: ...
    @property
    def belote(self) -> tuple[tuple[int, Card], ...]: ...
    @property
    def score(self) -> RoundScore | None: ...


def round_winner(played: PlayedRound) -> int | None:
    """The team that won the round: the takers if they made it, the defence if they failed;
    None for a litige or a redeal."""
    score = played.score
    if score is None or score.outcome is Outcome.LITIGE:
        return None
    takers = played.taker % 2
    return takers if score.outcome is Outcome.MADE else 1 - takers


def round_won_by(played: PlayedRound, seat: int, seats: int = 4) -> bool:
    """Whether ``seat`` won the round (RULES.md §11-13): its team with four seats (see
    :func:`round_winner`); with three, the taker of a made contract or each other player
    of a failed one; with two, the player who scored more."""
    score = played.score
    if seats == 4:
        return round_winner(played) == seat % 2
    if score is None:
        return False
    if seats == 2:
        return score.score[seat] > score.score[1 - seat]
    return (seat == played.taker) == (score.outcome is Outcome.MADE)


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat's part in one game, and the XP it earned."""

    seat: int
    finished: bool
    """The seat played the game to its end (it did not abandon it)."""
    won: bool
    rounds_won: int
    tricks_won: int
    contracts_made: int
    """Rounds this seat took and made."""
    contracts_failed: int
    """Rounds this seat took and failed (a litige is neither made nor failed)."""
    capots: int
    """Rounds in which this seat (its team, with four seats) took every trick."""
    belotes: int
    """Belotes this seat declared."""
    belote_in_last_round: bool
    big_coinche: int
    """Coinche contracts of 140 or more this seat took and made."""
    abandoned: bool = False

    @property
    def xp_awards(self) -> tuple[tuple[str, int], ...]:
        """The XP earned, by reason (``finished``, ``won``, ``rounds``, ``tricks``)."""
        if self.abandoned or not self.finished:
            return ()
        awards = [
            ("finished", XP_GAME_FINISHED),
            ("won", XP_GAME_WON if self.won else 0),
            ("rounds", XP_ROUND_WON * self.rounds_won),
            ("tricks", XP_TRICK_WON * self.tricks_won),
        ]
        return tuple((reason, xp) for reason, xp in awards if xp)

    @property
    def xp(self) -> int:
        return sum(xp for _, xp in self.xp_awards)


def score_game(
    rounds: Sequence[PlayedRound],
    *,
    coinche: bool,
    winner: int | None,
    abandoned_by: int | None = None,
    seats: int = 4,
) -> tuple[SeatRecord, ...]:
    """Each seat's record of a game that ended: ``winner`` is the winning team (with four
    ``seats``) or seat (with two or three), or None.

    ``abandoned_by`` is the hook for abandonments: that seat earns nothing, the others
    earn their XP as if the game had ended there (the winner, if any, is the caller's
    decision); a game abandoned before its first round was scored gives nobody anything (a
    joiner that resigns after a trick must not hand the others the 15 of a game).
    """
    if abandoned_by is not None and not 0 <= abandoned_by < seats:
        raise ValueError(f"no seat {abandoned_by}")
    scored = [r for r in rounds if r.score is not None]
    last = scored[-1] if scored else None
    out = []
    for seat in range(seats):
        team = seat % 2 if seats == 4 else seat
        took = [r for r in scored if r.taker == seat]
        made = [r for r in took if round_won_by(r, seat, seats)]
        # A litige is neither made nor failed: the takers' points wait in the pot.
        failed = [r for r in took if r.score is not None and r.score.outcome is Outcome.FAILED]
        out.append(
            SeatRecord(
                seat=seat,
                finished=abandoned_by is None or (abandoned_by != seat and bool(scored)),
                won=winner == team and abandoned_by != seat,
                rounds_won=sum(round_won_by(r, seat, seats) for r in scored),
                tricks_won=sum(t.winner == seat for r in scored for t in r.tricks),
                contracts_made=len(made),
                contracts_failed=len(failed),
                capots=sum(r.score is not None and r.score.capot == team for r in scored),
                belotes=sum(s == seat for r in scored for s, _ in r.belote),
                belote_in_last_round=last is not None and any(s == seat for s, _ in last.belote),
                big_coinche=sum(coinche and r.contract >= BIG_COINCHE for r in made),
                abandoned=abandoned_by == seat,
            )
        )
    return tuple(out)


def challenges_in_game(record: SeatRecord) -> tuple[Challenge, ...]:
    """The challenges one game completes for a seat (three wins in a row needs the
    player's history: :func:`has_streak`)."""
    if record.abandoned or not record.finished:
        return ()
    done = []
    if record.capots:
        done.append(CAPOT)
    if record.won and record.belote_in_last_round:
        done.append(BELOTE_FINISH)
    if record.big_coinche:
        done.append(COINCHE_140)
    return tuple(done)


def has_streak(results: Sequence[bool], length: int = STREAK) -> bool:
    """Whether ``results`` (won or not, in the order played) hold ``length`` wins in a row."""
    run = 0
    for won in results:
        run = run + 1 if won else 0
        if run >= length:
            return True
    return False


class NotVerified(BeloteError, ValueError):
    """The transcript does not prove a whole game; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PlayerId:
    """A player as the profile knows them: a key, and the name they last played under."""

    key: bytes
    name: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)


@dataclass(frozen=True, slots=True)
class GameResult:
    """What a verified game gives each seat."""

    table_id: bytes
    variant: str
    target: int
    scores: tuple[int, ...]
    """Per team with four seats, per seat otherwise."""
    winner: int | None
    """The winning team (four seats) or seat (two or three)."""
    rounds: int
    """Rounds played and scored (redeals are not rounds)."""
    players: tuple[PlayerId, ...]
    seats: tuple[SeatRecord, ...]
    abandoned_by: int | None = None

    @property
    def description(self) -> str:
        """How the game ended, in English: what the database keeps (:func:`result_text`
        says it in the reader's language from the same scores)."""
        with using_language("en"):
            return self.result_text()

    def result_text(self) -> str:
        """How the game ended, in the reader's language."""
        names = [p.name for p in self.players]
        return result_text(names, self.scores, self.winner, self.abandoned_by)


def players_text(names: Sequence[str]) -> str:
    """The players of a table: ``Ana & Cy v Bo & Di`` (teams), ``Ana v Bo v Cy`` (none);
    ``contre`` in French, ``contra`` in Spanish."""
    sides = [team_name(names, 0), team_name(names, 1)] if len(names) == 4 else list(names)
    text = sides[0]
    for side in sides[1:]:
        text = _("{players} v {others}").format(players=text, others=side)
    return text


def scores_text(names: Sequence[str], scores: Sequence[int]) -> str:
    """The scores of a game: ``112-252`` by team with four seats, each named by its player
    without teams (``Ana 120, Bo 510, Cy 300``)."""
    if len(names) == 4:
        return "-".join(str(x) for x in scores)
    return ", ".join(f"{name} {score}" for name, score in zip(names, scores, strict=True))


def result_text(
    names: Sequence[str], scores: Sequence[int], winner: int | None, abandoned_by: int | None
) -> str:
    """How a recorded game ended, with its players' ``names`` (four, three or two):
    ``Ana & Cy won 252-112``, ``Bo won: Ana 120, Bo 510, Cy 300``, ``abandoned by Di at
    ...``, ``ended at ...``. What ``import`` prints and ``games`` shows."""
    score = scores_text(names, scores)
    if abandoned_by is not None:
        return _("abandoned by {name} at {score}").format(name=names[abandoned_by], score=score)
    if winner is None:
        return _("ended at {score}").format(score=score)
    if len(names) == 4:
        return _("{team} won {score}").format(team=team_name(names, winner), score=score)
    return _("{name} won: {score}").format(name=names[winner], score=score)


def game_result(verdict: Verdict, *, abandoned_by: int | None = None) -> GameResult:
    """Score a verified game; raise :class:`NotVerified` unless the transcript proves a
    whole game (or, with ``abandoned_by``, a game that seat abandoned)."""
    if not verdict.ok:
        raise NotVerified(verdict.summary())
    state = verdict.state
    if abandoned_by is None and not state.is_over:
        raise NotVerified(_("the game did not reach its end"))
    definition = verdict.definition
    rules = definition.rules
    # A seat that left while the game went on (its partner played its open hand) scores
    # nothing; the others score the game as it was played.
    left = verdict.left.seat if verdict.left is not None else None
    return GameResult(
        table_id=definition.table_id,
        variant=rules.name,
        target=rules.target,
        scores=state.scores,
        winner=state.winner,
        rounds=sum(r.score is not None for r in state.history),
        players=tuple(PlayerId(s.key, s.name) for s in definition.seats),
        seats=score_game(
            state.history,
            coinche=rules.is_coinche,
            winner=state.winner,
            abandoned_by=abandoned_by if abandoned_by is not None else left,
            seats=rules.seats,
        ),
        abandoned_by=abandoned_by,
    )


def _verdict_abandoned_by(verdict: Verdict) -> int | None:
    # The seat that abandoned the game, if the verdict names one: it earns nothing and the
    # others their XP.
    seat = verdict.abandoned
    if verdict.left_here:
        seat = verdict.writer  # the leaver's own record: the game stops there for it
    return seat if type(seat) is int and 0 <= seat < len(verdict.definition.seats) else None


# -- statistics and ranking -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's profile as this peer knows it."""

    fingerprint: str
    name: str
    xp: int
    coins: int
    games: int
    wins: int
    contracts_made: int
    contracts_failed: int
    """Rounds this seat took and failed (a litige is neither made nor failed)."""
    capots: int
    belotes: int
    challenges: tuple[tuple[str, str], ...] = ()
    """(challenge id, date) of each challenge completed."""

    @property
    def level(self) -> int:
        return level_for_xp(self.xp)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


def rank_players(players: Sequence[PlayerStats]) -> list[tuple[int, PlayerStats]]:
    """The leaderboard: by XP, then wins, then win rate; equal XP and wins share a rank."""
    order = sorted(
        players, key=lambda p: (-p.xp, -p.wins, -p.win_rate, p.name.casefold(), p.fingerprint)
    )
    out: list[tuple[int, PlayerStats]] = []
    for i, p in enumerate(order):
        tied = out and (out[-1][1].xp, out[-1][1].wins) == (p.xp, p.wins)
        out.append((out[-1][0] if tied else i + 1, p))
    return out


# -- the database ---------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
    fingerprint TEXT PRIMARY KEY,
    public_key BLOB NOT NULL UNIQUE,
    name TEXT NOT NULL,          -- the last name seen
    last_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL UNIQUE,   -- hex
    date TEXT NOT NULL,              -- when the transcript was last written, UTC ISO 8601
    variant TEXT NOT NULL,
    target INTEGER NOT NULL,
    result TEXT NOT NULL,
    winner INTEGER,                  -- the team (four seats) or seat (two, three), NULL if none
    score0 INTEGER NOT NULL,         -- scores in side order: teams 0 and 1 with four seats,
    score1 INTEGER NOT NULL,         -- seats 0, 1 (and 2) with two or three
    score2 INTEGER,                  -- NULL where the game has fewer sides
    score3 INTEGER,
    rounds INTEGER NOT NULL,
    abandoned_by INTEGER,
    transcript TEXT NOT NULL,
    imported TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS game_seats (
    game INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    player TEXT NOT NULL REFERENCES players(fingerprint),
    name TEXT NOT NULL,
    xp INTEGER NOT NULL,
    finished INTEGER NOT NULL,
    won INTEGER NOT NULL,
    rounds_won INTEGER NOT NULL,
    tricks_won INTEGER NOT NULL,
    contracts_made INTEGER NOT NULL,
    contracts_failed INTEGER NOT NULL,
    capots INTEGER NOT NULL,
    belotes INTEGER NOT NULL,
    PRIMARY KEY (game, seat)
);
CREATE TABLE IF NOT EXISTS xp (
    id INTEGER PRIMARY KEY,
    player TEXT NOT NULL REFERENCES players(fingerprint),
    game INTEGER REFERENCES games(id),
    reason TEXT NOT NULL,            -- finished, won, rounds, tricks, challenge:<id>
    xp INTEGER NOT NULL,
    coins INTEGER NOT NULL DEFAULT 0,
    date TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS challenges (
    player TEXT NOT NULL REFERENCES players(fingerprint),
    challenge TEXT NOT NULL,
    game INTEGER NOT NULL REFERENCES games(id),
    date TEXT NOT NULL,
    PRIMARY KEY (player, challenge)
);
CREATE TABLE IF NOT EXISTS verified_files (
    sha256 TEXT PRIMARY KEY,         -- hex digest of a transcript file that verified
    table_id TEXT NOT NULL,          -- hex
    date TEXT NOT NULL               -- when it was verified, UTC ISO 8601
);
CREATE TABLE IF NOT EXISTS game_numbers (
    file TEXT PRIMARY KEY,           -- a transcript's file name in <home>/games
    number INTEGER NOT NULL UNIQUE   -- its number in belote-p2p games, kept for good
);
CREATE TABLE IF NOT EXISTS analyses (
    table_id TEXT NOT NULL,          -- hex: the game analysed (recorded in games or not)
    seat INTEGER NOT NULL,
    player TEXT NOT NULL,            -- the seat's key fingerprint
    date TEXT NOT NULL,              -- when the game was played (its transcript), UTC ISO 8601
    decisions INTEGER NOT NULL,      -- the seat's decisions (more than one legal choice)
    valued INTEGER NOT NULL,         -- of those, valued as the player knew it
    points_lost REAL NOT NULL,       -- over the valued ones, as the player knew it
    hindsight_valued INTEGER NOT NULL,
    hindsight_points_lost REAL NOT NULL,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX IF NOT EXISTS game_seats_player ON game_seats(player);
CREATE INDEX IF NOT EXISTS xp_player ON xp(player);
CREATE INDEX IF NOT EXISTS analyses_player ON analyses(player);
"""


_MIGRATIONS: dict[int, str] = {
    1: """
ALTER TABLE games ADD COLUMN score2 INTEGER;
ALTER TABLE games ADD COLUMN score3 INTEGER;
""",
    2: """
CREATE TABLE verified_files (sha256 TEXT PRIMARY KEY, table_id TEXT NOT NULL, date TEXT NOT NULL);
CREATE TABLE game_numbers (file TEXT PRIMARY KEY, number INTEGER NOT NULL UNIQUE);
""",
    3: """
CREATE TABLE analyses (table_id TEXT NOT NULL, seat INTEGER NOT NULL, player TEXT NOT NULL,
    date TEXT NOT NULL, decisions INTEGER NOT NULL, valued INTEGER NOT NULL,
    points_lost REAL NOT NULL, hindsight_valued INTEGER NOT NULL,
    hindsight_points_lost REAL NOT NULL, PRIMARY KEY (table_id, seat));
CREATE INDEX analyses_player ON analyses(player);
""",
}
"""The statements that bring a database of version ``v`` to version ``v + 1``."""

MAX_SIDES = 4
"""The scores a game row holds: ``score0`` to ``score3``."""


def _statements(script: str) -> list[str]:
    # The schema's comments hold no semicolon.
    return [s.strip() for s in script.split(";") if s.strip()]


class ProfileError(BeloteError):
    """The profile database is not one this version can read."""


@contextlib.contextmanager
def open_db(path: Path) -> Iterator[sqlite3.Connection]:
    """The profile database at ``path``, created on first use, brought up to this version's
    schema (an older database keeps its rows); closed on exit."""
    private_directory(path.parent)
    os.close(private_fd(path, os.O_RDWR | os.O_CREAT))  # sqlite would make it 0644
    # Autocommit mode: transactions are opened explicitly (BEGIN IMMEDIATE), so that two
    # imports of one game (the peer's and a manual one) cannot both insert it.
    conn = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            _upgrade(conn, path)
        yield conn
    finally:
        conn.close()


def _upgrade(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema, or migrate an older one, in one transaction (two peers opening
    the same old database: the second finds it done)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if not 0 <= version <= SCHEMA_VERSION:
            raise ProfileError(
                _("{file}: schema version {version}, expected {expected}").format(
                    file=path, version=version, expected=SCHEMA_VERSION
                )
            )
        if version == 0:
            script = _SCHEMA
        else:
            script = "".join(_MIGRATIONS[v] for v in range(version, SCHEMA_VERSION))
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class ImportStatus(Enum):
    """What importing a transcript did (its value is the English word: :func:`import_text`
    says it in the reader's language)."""

    IMPORTED = "imported"
    """A new game: its XP and challenges are recorded."""
    ALREADY = "already imported"
    """This table's game is in the database already (from this or another seat's file)."""
    REFUSED = "refused"
    """The transcript does not prove a whole game: nothing is recorded."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    status: ImportStatus
    reason: str
    """Why it was refused, or a one-line description of the game."""
    result: GameResult | None = None
    awards: tuple[tuple[str, Challenge], ...] = ()
    """(player fingerprint, challenge) completed by this game."""

    @property
    def ok(self) -> bool:
        return self.status is not ImportStatus.REFUSED


IMPORT_WORDS = {
    ImportStatus.IMPORTED: N_("imported"),
    ImportStatus.ALREADY: N_("already imported"),
    ImportStatus.REFUSED: N_("refused"),
}


def import_reason(outcome: ImportResult) -> str:
    """Why a game was refused, or how it ended, in the reader's language (a verdict the
    verifier gave stays as it gives it: programs read it)."""
    if outcome.result is None:
        return outcome.reason
    if outcome.status is ImportStatus.ALREADY:
        return _("table {table} is already recorded").format(table=outcome.result.table_id.hex())
    return outcome.result.result_text()


def import_text(outcome: ImportResult) -> str:
    """``imported: Ana & Cy won 520-310``, ``refused: INCOMPLETE: ...``, as ``import`` and a
    seat after its game print it."""
    return _("{status}: {reason}").format(
        status=_(IMPORT_WORDS[outcome.status]), reason=import_reason(outcome)
    )


def record_game(db: Path, transcript: Path) -> ImportResult:
    """Verify ``transcript`` and record its game in the database ``db``.

    The peer calls this after each game; ``belote-p2p import`` calls it for a file.
    Never raises for a bad transcript (it is REFUSED, with the verifier's reason).
    """
    try:
        digest = file_digest(transcript)
        verdict = verify_transcript(transcript)
        mtime = transcript.stat().st_mtime
    except (OSError, TranscriptError) as exc:
        return ImportResult(ImportStatus.REFUSED, str(exc))
    date = datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return record_verdict(
        db,
        verdict,
        transcript=transcript,
        date=date,
        abandoned_by=_verdict_abandoned_by(verdict),
        digest=digest,
    )


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes (hex): what :func:`verified_digests` keeps of a
    transcript that verified, so that ``games`` says *verified* of that file only."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def record_verdict(
    db: Path,
    verdict: Verdict,
    *,
    transcript: Path,
    date: str,
    abandoned_by: int | None = None,
    digest: str | None = None,
) -> ImportResult:
    """Record the game ``verdict`` proves (played on ``date``, UTC ISO 8601); ``digest``
    is the transcript file's (:func:`file_digest`), kept as verified whether the game was
    new or already recorded."""
    try:
        result = game_result(verdict, abandoned_by=abandoned_by)
    except NotVerified as exc:
        return ImportResult(ImportStatus.REFUSED, exc.reason)
    with open_db(db) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            outcome = _insert_game(conn, result, str(transcript), date)
            if digest is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO verified_files VALUES (?,?,?)",
                    (digest, result.table_id.hex(), _now()),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return outcome


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _insert_game(
    conn: sqlite3.Connection, result: GameResult, transcript: str, date: str
) -> ImportResult:
    table_hex = result.table_id.hex()
    if conn.execute("SELECT 1 FROM games WHERE table_id = ?", (table_hex,)).fetchone():
        return ImportResult(ImportStatus.ALREADY, f"table {table_hex} is already recorded", result)
    scores = [*result.scores, *[None] * (MAX_SIDES - len(result.scores))]
    cur = conn.execute(
        "INSERT INTO games (table_id, date, variant, target, result, winner, score0, score1,"
        " score2, score3, rounds, abandoned_by, transcript, imported)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            table_hex, date, result.variant, result.target, result.description, result.winner,
            *scores, result.rounds, result.abandoned_by, transcript, _now(),
        ),
    )  # fmt: skip
    game = cur.lastrowid
    awards: list[tuple[str, Challenge]] = []
    for player, record in zip(result.players, result.seats, strict=True):
        fp = player.fingerprint
        conn.execute(
            "INSERT INTO players (fingerprint, public_key, name, last_seen) VALUES (?,?,?,?)"
            " ON CONFLICT (fingerprint) DO UPDATE SET name = excluded.name,"
            " last_seen = excluded.last_seen WHERE excluded.last_seen >= players.last_seen",
            (fp, player.key, player.name, date),
        )
        conn.execute(
            "INSERT INTO game_seats VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                game, record.seat, fp, player.name, record.xp, record.finished, record.won,
                record.rounds_won, record.tricks_won, record.contracts_made,
                record.contracts_failed, record.capots, record.belotes,
            ),
        )  # fmt: skip
        for reason, xp in record.xp_awards:
            conn.execute(
                "INSERT INTO xp (player, game, reason, xp, date) VALUES (?,?,?,?,?)",
                (fp, game, reason, xp, date),
            )
        done = list(challenges_in_game(record))
        if not record.abandoned and record.finished and _has_streak(conn, fp):
            done.append(THREE_WINS)
        for challenge in done:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO challenges (player, challenge, game, date) VALUES (?,?,?,?)",
                (fp, challenge.id, game, date),
            ).rowcount
            if inserted:
                conn.execute(
                    "INSERT INTO xp (player, game, reason, xp, coins, date) VALUES (?,?,?,?,?,?)",
                    (fp, game, f"challenge:{challenge.id}", challenge.xp, challenge.coins, date),
                )
                awards.append((fp, challenge))
    return ImportResult(ImportStatus.IMPORTED, result.description, result, tuple(awards))


@dataclass(frozen=True, slots=True)
class RecordedGame:
    """How a recorded game ended, as the ``games`` table keeps it."""

    winner: int | None
    scores: tuple[int, ...]
    """One per side: two teams, or each of the two or three players."""
    abandoned_by: int | None


SCORE_COLUMNS = ", ".join(f"score{i}" for i in range(MAX_SIDES))
"""The score columns of ``games``, in side order (for a ``SELECT``: :func:`row_scores`)."""


def row_scores(row: Sequence[int | None]) -> tuple[int, ...]:
    """The scores of a game from its :data:`SCORE_COLUMNS` (those of absent sides are NULL)."""
    return tuple(x for x in row if x is not None)


def recorded_games(conn: sqlite3.Connection) -> dict[str, RecordedGame]:
    """Every recorded game, by table id (hex)."""
    rows = conn.execute(f"SELECT table_id, winner, abandoned_by, {SCORE_COLUMNS} FROM games")
    return {
        table: RecordedGame(winner, row_scores(scores), gone)
        for table, winner, gone, *scores in rows
    }


def verified_digests(conn: sqlite3.Connection) -> set[str]:
    """The digests of every transcript file that verified when it was imported."""
    return {digest for (digest,) in conn.execute("SELECT sha256 FROM verified_files")}


def game_numbers(conn: sqlite3.Connection, files: Sequence[str]) -> dict[str, int]:
    """Each of ``files`` (names in ``<home>/games``, oldest first) with its number in
    ``belote-p2p games``: a number once given stays with its file, a new file takes the next
    one, so that the numbers do not shift as games are added."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        known = dict(conn.execute("SELECT file, number FROM game_numbers").fetchall())
        last = max(known.values(), default=0)
        for name in files:
            if name not in known:
                last += 1
                known[name] = last
                conn.execute("INSERT INTO game_numbers VALUES (?,?)", (name, last))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return {name: known[name] for name in files}


def _has_streak(conn: sqlite3.Connection, fp: str) -> bool:
    rows = conn.execute(
        "SELECT gs.won FROM game_seats gs JOIN games g ON g.id = gs.game"
        " WHERE gs.player = ? ORDER BY g.date, g.id",
        (fp,),
    ).fetchall()
    return has_streak([bool(won) for (won,) in rows])


_IN_GAMES = "IN (SELECT game FROM game_seats WHERE player = :owner OR :owner IS NULL)"
"""The games counted: those ``owner`` sat at (every game when ``owner`` is NULL)."""
_STATS_QUERY = f"""
SELECT p.fingerprint, p.name,
       COALESCE((SELECT SUM(xp) FROM xp WHERE xp.player = p.fingerprint
                 AND (xp.game {_IN_GAMES} OR :owner IS NULL)), 0),
       COALESCE((SELECT SUM(coins) FROM xp WHERE xp.player = p.fingerprint
                 AND (xp.game {_IN_GAMES} OR :owner IS NULL)), 0),
       COUNT(gs.game), COALESCE(SUM(gs.won), 0),
       COALESCE(SUM(gs.contracts_made), 0), COALESCE(SUM(gs.contracts_failed), 0),
       COALESCE(SUM(gs.capots), 0), COALESCE(SUM(gs.belotes), 0)
FROM players p LEFT JOIN game_seats gs ON gs.player = p.fingerprint AND gs.game {_IN_GAMES}
GROUP BY p.fingerprint
HAVING :owner IS NULL OR COUNT(gs.game) > 0
"""


def all_players(conn: sqlite3.Connection, owner: str | None = None) -> list[PlayerStats]:
    """Every player in the database, with their totals; with ``owner`` (a fingerprint),
    only the players of the games ``owner`` sat at, with what they earned in those games.

    That is the ranking's view: anyone can make keys, have them play one another and hand
    the transcripts round, and an ``import`` verifies such games as it verifies any (they
    are games), but their players earned nothing at a table the profile's owner saw.
    """
    rows = conn.execute(_STATS_QUERY, {"owner": owner}).fetchall()
    done: dict[str, list[tuple[str, str]]] = {}
    for fp, challenge, date in conn.execute(
        f"SELECT player, challenge, date FROM challenges WHERE game {_IN_GAMES}"
        " ORDER BY date, challenge",
        {"owner": owner},
    ):
        done.setdefault(fp, []).append((challenge, date))
    return [
        PlayerStats(
            fingerprint=fp, name=shown_name(name), xp=xp, coins=coins, games=games, wins=wins,
            contracts_made=made, contracts_failed=failed, capots=capots, belotes=belotes,
            challenges=tuple(done.get(fp, ())),
        )
        for fp, name, xp, coins, games, wins, made, failed, capots, belotes in rows
    ]  # fmt: skip


def find_players(conn: sqlite3.Connection, who: str) -> list[PlayerStats]:
    """The players ``who`` names: a fingerprint (or its start, dashes optional), else a
    name (case-insensitive)."""
    players = all_players(conn)
    wanted = who.strip().lower().replace("-", "")
    if len(wanted) >= 4 and all(c in "0123456789abcdef" for c in wanted):
        by_print = [p for p in players if p.fingerprint.replace("-", "").startswith(wanted)]
        if by_print:
            return by_print
    return [p for p in players if p.name.casefold() == who.strip().casefold()]


@dataclass(frozen=True, slots=True)
class AnalysedSeat:
    """One seat of an analysed game, as ``analyses`` keeps it (the coach's figures:
    :class:`~belote_p2p.players.analysis.SeatSummary`)."""

    seat: int
    player: str
    """The seat's key fingerprint."""
    decisions: int
    valued: int
    points_lost: float
    hindsight_valued: int
    hindsight_points_lost: float


def record_analysis(db: Path, table_id: bytes, date: str, seats: Sequence[AnalysedSeat]) -> None:
    """Keep the coach's figures of a game (played on ``date``, UTC ISO 8601), a seat a row;
    a game analysed again replaces its rows."""
    with open_db(db) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for a in seats:
                conn.execute(
                    "INSERT OR REPLACE INTO analyses VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        table_id.hex(), a.seat, a.player, date, a.decisions, a.valued,
                        a.points_lost, a.hindsight_valued, a.hindsight_points_lost,
                    ),
                )  # fmt: skip
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def analysed_losses(conn: sqlite3.Connection, player: str) -> list[float]:
    """``player``'s mean loss a decision (as they knew it) in each game analysed, oldest
    game first."""
    rows = conn.execute(
        "SELECT points_lost, valued FROM analyses WHERE player = ? AND valued > 0"
        " ORDER BY date, table_id",
        (player,),
    ).fetchall()
    return [lost / valued for lost, valued in rows]


def analysed_tables(conn: sqlite3.Connection) -> set[str]:
    """The table ids (hex) of every game analysed."""
    return {t for (t,) in conn.execute("SELECT DISTINCT table_id FROM analyses")}


# -- progress -------------------------------------------------------------------------------

SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float]) -> str:
    """``▆▅▅▃▂``: each value a bar, the highest of them full."""
    if not values:
        return ""
    top = max(values)
    if top <= 0:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[min(len(SPARKS) - 1, math.floor(v / top * len(SPARKS)))] for v in values)


def progress_text(losses: Sequence[float]) -> str | None:
    """A player's average loss a decision over their analysed games, oldest first, as a
    line with a sparkline; None before any."""
    if not losses:
        return None
    mean = sum(losses) / len(losses)
    text = ngettext(
        "average loss a decision {mean} over {n} analysed game",
        "average loss a decision {mean} over {n} analysed games",
        len(losses),
    ).format(mean=format_number(mean, 1), n=format_number(len(losses)))
    if len(losses) > 1:
        text += " " + _("(oldest first: {bars}, last {last})").format(
            bars=sparkline(losses), last=format_number(losses[-1], 1)
        )
    return text


# -- the commands ---------------------------------------------------------------------------


def format_profile(p: PlayerStats) -> str:
    """A player's profile, in the reader's language, numbers and dates as it writes them."""
    level = p.level
    n = format_number
    lines = [
        f"{p.name} [{p.fingerprint}]",
        "  "
        + _("level {level}: {xp} XP (level {next} at {needed} XP)").format(
            level=level, xp=n(p.xp), next=level + 1, needed=n(xp_for_level(level + 1))
        ),
        "  "
        + _("games {games}, won {wins} ({rate})").format(
            games=n(p.games), wins=n(p.wins), rate=format_percent(p.win_rate)
        ),
        "  "
        + _("contracts made {made}, failed {failed}").format(
            made=n(p.contracts_made), failed=n(p.contracts_failed)
        ),
        "  "
        + _("capots {capots}, belotes {belotes}").format(capots=n(p.capots), belotes=n(p.belotes)),
        "  " + _("coins {coins}").format(coins=n(p.coins)),
        "  " + _("challenges:"),
    ]
    done = dict(p.challenges)
    for c in CHALLENGES.values():
        if c.id in done:
            mark = _("done {date}").format(date=_challenge_date(done[c.id]))
        else:
            mark = pgettext("challenge", "open")
        reward = ngettext("+{xp} XP, +{coins} coin", "+{xp} XP, +{coins} coins", c.coins).format(
            xp=n(c.xp), coins=n(c.coins)
        )
        lines.append(f"    [{mark}] {_(c.title)} ({reward})")
    return "\n".join(lines)


def _challenge_date(stored: str) -> str:
    """A date the database keeps (UTC ISO 8601) as the reader's language writes a day."""
    try:
        moment = datetime.fromisoformat(stored)
    except ValueError:
        return stored[:10]
    return format_date(moment, time=False)


def format_ranking(ranked: Sequence[tuple[int, PlayerStats]]) -> str:
    rows = [
        (
            pgettext("column", "rank"),
            pgettext("column", "name"),
            pgettext("column", "fingerprint"),
            pgettext("column", "level"),
            pgettext("column", "XP"),
            pgettext("column", "games"),
            pgettext("column", "win rate"),
        )
    ]
    rows += [
        (str(rank), p.name, p.fingerprint, str(p.level), format_number(p.xp),
         format_number(p.games), format_percent(p.win_rate))
        for rank, p in ranked
    ]  # fmt: skip
    return format_columns(rows)
