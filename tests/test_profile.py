"""Experience, levels, challenges and ranking: the XP rules on hand-built rounds, the
database on hand-built verdicts, and real transcripts of four in-memory sessions."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import ROOT, Net, make_table, table_sessions, write_transcript

from belote_p2p.app import cli
from belote_p2p.app.home import Home
from belote_p2p.app.profile import (
    BELOTE_FINISH,
    CAPOT,
    COINCHE_140,
    SCHEMA_VERSION,
    THREE_WINS,
    GameResult,
    ImportStatus,
    NotVerified,
    PlayerStats,
    all_players,
    challenges_in_game,
    find_players,
    game_result,
    has_streak,
    level_for_xp,
    open_db,
    rank_players,
    record_game,
    record_verdict,
    score_game,
    xp_for_level,
)
from belote_p2p.game.cards import parse_cards
from belote_p2p.game.engine import Trick
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.game.scoring import Outcome, RoundScore
from belote_p2p.protocol import deck as deck_module
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.verify import Verdict, verify_transcript

KING_OF_HEARTS = parse_cards(["KH"])[0]

# -- hand-built rounds -----------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    taker: int
    contract: int
    tricks: tuple[Trick, ...]
    belote: tuple[tuple[int, object], ...]
    score: RoundScore | None


def played(
    taker: int,
    outcome: Outcome | None,
    winners: list[int],
    *,
    contract: int = 80,
    belote: tuple[int, ...] = (),
) -> Round:
    """A round ``taker`` took, scored ``outcome`` (None: a redeal), tricks won by ``winners``."""
    tricks = tuple(Trick(w, (), w, 10) for w in winners)
    teams = {w % 2 for w in winners}
    capot = teams.pop() if len(winners) == 8 and len(teams) == 1 else None
    score = (
        None
        if outcome is None
        else RoundScore((0, 0), (0, 0), (0, 0), (0, 0), outcome, (0, 0), 0, capot)
    )
    return Round(taker, contract, tricks, tuple((s, KING_OF_HEARTS) for s in belote), score)


def test_a_made_contract_wins_the_round_for_the_takers() -> None:
    # Seat 1 takes and makes it; seat 3 (its partner) and seat 0 take tricks too.
    r = played(1, Outcome.MADE, [1, 1, 3, 0, 1, 3, 2, 1])
    seats = score_game([r], coinche=False, winner=1)
    assert [s.rounds_won for s in seats] == [0, 1, 0, 1]
    assert [s.tricks_won for s in seats] == [1, 4, 1, 2]
    assert [(s.contracts_made, s.contracts_failed) for s in seats] == [
        (0, 0),
        (1, 0),
        (0, 0),
        (0, 0),
    ]
    # 15 for the end, 25 for the win, 2 for the round, 1 per own trick.
    assert [s.xp for s in seats] == [15 + 1, 15 + 25 + 2 + 4, 15 + 1, 15 + 25 + 2 + 2]


def test_a_failed_contract_is_the_defences_round() -> None:
    r = played(2, Outcome.FAILED, [0, 1, 1, 3, 2, 1, 3, 0])
    seats = score_game([r], coinche=False, winner=None)
    assert [s.rounds_won for s in seats] == [0, 1, 0, 1]
    assert seats[2].contracts_failed == 1 and seats[2].contracts_made == 0
    assert [s.xp for s in seats] == [15 + 2, 15 + 2 + 3, 15 + 1, 15 + 2 + 2]


def test_a_litige_is_nobodys_round_and_a_redeal_no_round() -> None:
    litige = played(0, Outcome.LITIGE, [0, 1, 2, 3, 0, 1, 2, 3])
    redeal = played(3, None, [])
    seats = score_game([redeal, litige, redeal], coinche=False, winner=None)
    assert [s.rounds_won for s in seats] == [0, 0, 0, 0]
    assert [s.tricks_won for s in seats] == [2, 2, 2, 2]
    assert [s.contracts_made + s.contracts_failed for s in seats] == [0, 0, 0, 0]
    assert all(s.xp == 15 + 2 for s in seats)


def test_a_capot_counts_for_the_team_and_completes_the_challenge() -> None:
    capot = played(0, Outcome.MADE, [0, 2, 0, 0, 2, 2, 0, 0])
    seats = score_game([capot], coinche=False, winner=0)
    assert [s.capots for s in seats] == [1, 0, 1, 0]
    assert [s.tricks_won for s in seats] == [5, 0, 3, 0]
    assert seats[0].xp == 15 + 25 + 2 + 5
    assert challenges_in_game(seats[0]) == (CAPOT,)
    assert challenges_in_game(seats[2]) == (CAPOT,)
    assert challenges_in_game(seats[1]) == ()


def test_belote_in_the_last_round_and_a_big_coinche() -> None:
    first = played(1, Outcome.MADE, [1] * 4 + [0] * 4, contract=160, belote=(1,))
    last = played(2, Outcome.MADE, [2] * 5 + [1] * 3, contract=100, belote=(2,))
    seats = score_game([first, last], coinche=True, winner=0)
    assert [s.belotes for s in seats] == [0, 1, 1, 0]
    assert [s.belote_in_last_round for s in seats] == [False, False, True, False]
    assert [s.big_coinche for s in seats] == [0, 1, 0, 0]
    assert challenges_in_game(seats[2]) == (BELOTE_FINISH,)
    # Seat 1 made a 160 but its belote was not in the last round, and it lost the game.
    assert challenges_in_game(seats[1]) == (COINCHE_140,)
    # In classic the same contract values mean nothing.
    classic = score_game([first, last], coinche=False, winner=0)
    assert challenges_in_game(classic[1]) == ()


def test_an_abandoning_seat_earns_nothing_and_the_others_their_xp() -> None:
    r = played(0, Outcome.MADE, [0, 1, 2, 3, 0, 0, 2, 1])
    seats = score_game([r], coinche=False, winner=None, abandoned_by=1)
    assert seats[1].xp == 0 and seats[1].xp_awards == () and seats[1].abandoned
    assert [s.xp for s in seats] == [15 + 2 + 3, 0, 15 + 2 + 2, 15 + 1]
    with pytest.raises(ValueError):
        score_game([r], coinche=False, winner=None, abandoned_by=4)


def test_a_game_abandoned_before_its_first_round_ended_gives_nobody_anything() -> None:
    one_trick = played(0, None, [2])  # the round abandoned after a trick: never scored
    seats = score_game([one_trick], coinche=False, winner=None, abandoned_by=1)
    assert [s.xp for s in seats] == [0, 0, 0, 0]
    assert [s.xp for s in score_game([], coinche=False, winner=None, abandoned_by=3)] == [0] * 4


def test_the_level_curve() -> None:
    assert [xp_for_level(n) for n in range(6)] == [0, 50, 150, 300, 500, 750]
    assert [level_for_xp(x) for x in (0, 1, 49, 50, 149, 150, 299, 300, 500)] == [
        0, 0, 0, 1, 1, 2, 2, 3, 4,
    ]  # fmt: skip
    for n in range(1, 300):
        assert level_for_xp(xp_for_level(n)) == n
        assert level_for_xp(xp_for_level(n) - 1) == n - 1


def test_three_wins_in_a_row() -> None:
    assert has_streak([True, True, True])
    assert has_streak([False, True, True, False, True, True, True])
    assert not has_streak([True, True, False, True, True])
    assert not has_streak([])


# -- hand-built verdicts in the database -----------------------------------------------------

IDS = [Identity.from_seed(bytes([40 + i]) * 32) for i in range(4)]
NAMES = ["Ana", "Bo", "Cy", "Di"]


def verdict(
    table: int,
    rounds: list[Round],
    winner: int | None,
    *,
    variant: str = "classic",
    ok: bool = True,
    over: bool = True,
    names: list[str] = NAMES,
) -> Verdict:
    seats = tuple(Seat(names[i], IDS[i].public_key_bytes, f"10.0.0.{i}:7000") for i in range(4))
    definition = TableDefinition(bytes([table]) * 16, RULE_SETS[variant], seats)
    scores = (501, 200) if winner == 0 else (200, 501)
    state = SimpleNamespace(history=tuple(rounds), winner=winner, scores=scores, is_over=over)
    return Verdict(definition, state, (), None, None if ok else "record 3 is damaged", ok, False)  # type: ignore[arg-type]


def won_by(team: int, capot: bool = False) -> list[Round]:
    winners = [team] * 8 if capot else [team, team + 2, 1 - team, team, team, 3 - team, 0, 1]
    return [played(team, Outcome.MADE, winners)]


def record(db: Path, v: Verdict, date: str) -> object:
    return record_verdict(db, v, transcript=Path(f"/games/{date}.transcript"), date=date)


def stats(db: Path) -> dict[str, PlayerStats]:
    with open_db(db) as conn:
        return {p.name: p for p in all_players(conn)}


def test_game_result_refuses_what_does_not_verify() -> None:
    with pytest.raises(NotVerified, match="damaged"):
        game_result(verdict(1, won_by(0), 0, ok=False))
    with pytest.raises(NotVerified, match="did not reach its end"):
        game_result(verdict(1, won_by(0), None, over=False))
    result = game_result(verdict(1, won_by(0), None, over=False), abandoned_by=3)
    assert result.abandoned_by == 3 and result.seats[3].xp == 0
    assert result.description.startswith(f"abandoned by {result.players[3].name} at ")


def test_import_is_idempotent_by_table_id(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    first = record_verdict(db, verdict(1, won_by(0), 0), transcript=Path("a"), date="2026-01-01")
    assert first.status is ImportStatus.IMPORTED and first.ok
    before = stats(db)
    # The same game again, from another seat's file: nothing changes.
    again = record_verdict(db, verdict(1, won_by(0), 0), transcript=Path("b"), date="2026-01-02")
    assert again.status is ImportStatus.ALREADY and again.ok
    assert stats(db) == before
    assert before["Ana"].games == 1 and before["Ana"].wins == 1
    assert before["Ana"].xp == first.result.seats[0].xp  # type: ignore[union-attr]
    with open_db(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (1,)
        assert conn.execute("SELECT transcript FROM games").fetchone() == ("a",)


def test_a_refused_verdict_records_nothing(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    outcome = record_verdict(db, verdict(1, won_by(0), 0, ok=False), transcript=Path("a"), date="x")
    assert outcome.status is ImportStatus.REFUSED and not outcome.ok
    assert "damaged" in outcome.reason
    assert not db.exists() or stats(db) == {}


def test_challenges_are_awarded_once(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    capot = record_verdict(db, verdict(1, won_by(0, capot=True), 0), transcript=Path("a"), date="1")
    assert sorted((fp, c.id) for fp, c in capot.awards) == sorted(
        [(IDS[0].fingerprint, "capot"), (IDS[2].fingerprint, "capot")]
    )
    after_first = stats(db)["Ana"]
    assert after_first.coins == CAPOT.coins
    assert after_first.xp == capot.result.seats[0].xp + CAPOT.xp  # type: ignore[union-attr]
    # A second capot earns the game's XP, and no second award.
    second = record_verdict(
        db, verdict(2, won_by(0, capot=True), 0), transcript=Path("b"), date="2"
    )
    assert second.awards == ()
    ana = stats(db)["Ana"]
    assert ana.coins == CAPOT.coins
    assert ana.xp == after_first.xp + second.result.seats[0].xp  # type: ignore[union-attr]
    assert [c for c, _ in ana.challenges] == ["capot"]
    assert ana.capots == 2


def test_three_wins_in_a_row_is_awarded_on_the_third(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    results = [0, 0, 1, 0, 0, 0, 0]  # the winning team of each game
    awards = []
    for i, team in enumerate(results):
        outcome = record(db, verdict(10 + i, won_by(team), team), f"2026-02-0{i + 1}")
        awards.append(sorted(c.id for _, c in outcome.awards))  # type: ignore[attr-defined]
    assert awards == [[], [], [], [], [], ["three-wins", "three-wins"], []]
    ana, bo = stats(db)["Ana"], stats(db)["Bo"]
    assert [c for c, _ in ana.challenges] == ["three-wins"]
    assert ana.coins == THREE_WINS.coins and bo.coins == 0
    assert (ana.games, ana.wins, bo.wins) == (7, 6, 1)


def test_players_keep_their_latest_name_and_are_found_by_name_or_fingerprint(
    tmp_path: Path,
) -> None:
    db = tmp_path / "profile.sqlite3"
    record(db, verdict(1, won_by(0), 0, names=["Ana", "Bo", "Cy", "Di"]), "2026-03-02")
    record(db, verdict(2, won_by(0), 0, names=["Old", "Bo", "Cy", "Di"]), "2026-03-01")
    record(db, verdict(3, won_by(0), 0, names=["Anna", "Bo", "Cy", "Di"]), "2026-03-03")
    with open_db(db) as conn:
        [anna] = find_players(conn, "anna")
        assert anna.fingerprint == IDS[0].fingerprint and anna.games == 3
        assert find_players(conn, IDS[0].fingerprint) == [anna]
        assert find_players(conn, IDS[0].fingerprint[:9]) == [anna]
        assert find_players(conn, "Old") == []


# -- ranking ---------------------------------------------------------------------------------


def player(name: str, xp: int, games: int, wins: int) -> PlayerStats:
    return PlayerStats(f"fp-{name}", name, xp, 0, games, wins, 0, 0, 0, 0)


def test_the_ranking_order() -> None:
    ranked = rank_players(
        [
            player("low", 10, 1, 0),
            player("tie-b", 300, 6, 3),
            player("top", 900, 20, 12),
            player("tie-a", 300, 4, 3),
            player("fewer-wins", 300, 3, 2),
            player("new", 0, 0, 0),
        ]
    )
    assert [(rank, p.name) for rank, p in ranked] == [
        (1, "top"),
        (2, "tie-a"),  # same XP and wins as tie-b, a better win rate: same rank, listed first
        (2, "tie-b"),
        (4, "fewer-wins"),
        (5, "low"),
        (6, "new"),
    ]


def test_the_ranking_from_the_database(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    for i, team in enumerate([0, 0, 1]):
        record(db, verdict(20 + i, won_by(team), team), f"2026-04-0{i + 1}")
    with open_db(db) as conn:
        ranked = rank_players(all_players(conn))
    names = [p.name for _, p in ranked]
    assert set(names[:2]) == {"Ana", "Cy"} and set(names[2:]) == {"Bo", "Di"}
    xps = [p.xp for _, p in ranked]
    assert xps == sorted(xps, reverse=True)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(Exception, match="schema version 99"), open_db(db):
        pass


# -- real transcripts ------------------------------------------------------------------------

needs_observer = pytest.mark.skipif(
    not hasattr(deck_module, "DeckObserver"),
    reason="verifying a transcript needs belote_p2p.protocol.deck.DeckObserver",
)


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    definition, ids = make_table("coinche", target=301, seed=5)
    sessions = table_sessions(definition, ids)
    Net(sessions, random.Random(11)).run()
    folder = tmp_path_factory.mktemp("games")
    return [write_transcript(folder / f"seat{s.seat}.transcript", s) for s in sessions]


@needs_observer
def test_a_real_game_imports_once(transcripts: list[Path], tmp_path: Path) -> None:
    db = tmp_path / "profile.sqlite3"
    first = record_game(db, transcripts[0])
    assert first.status is ImportStatus.IMPORTED, first.reason
    assert first.result is not None
    assert sum(s.won for s in first.result.seats) == 2
    assert all(s.xp >= 15 for s in first.result.seats)
    assert sum(s.tricks_won for s in first.result.seats) == 8 * first.result.rounds
    for path in transcripts:
        assert record_game(db, path).status is ImportStatus.ALREADY
    assert sum(p.games for p in stats(db).values()) == 4


@needs_observer
def test_a_tampered_transcript_is_refused(transcripts: list[Path], tmp_path: Path) -> None:
    data = bytearray(transcripts[2].read_bytes())
    data[-5] ^= 0x01  # inside the last envelope
    bad = tmp_path / "tampered.transcript"
    bad.write_bytes(bytes(data))
    verdict = verify_transcript(bad)
    assert not verdict.ok
    db = tmp_path / "profile.sqlite3"
    outcome = record_game(db, bad)
    assert outcome.status is ImportStatus.REFUSED
    assert outcome.reason == verdict.summary()
    assert not db.exists() or stats(db) == {}


def test_a_file_that_is_no_transcript_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.transcript"
    junk.write_bytes(b"\x00\x00\x00\x02hi")
    assert record_game(tmp_path / "db", junk).status is ImportStatus.REFUSED
    assert record_game(tmp_path / "db", tmp_path / "missing").status is ImportStatus.REFUSED


# -- the commands ----------------------------------------------------------------------------


@needs_observer
def test_import_profile_and_ranking_commands(
    transcripts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    assert cli.main(["import", "--home", home, str(transcripts[0]), str(transcripts[1])]) == 0
    out = capsys.readouterr().out
    assert "imported" in out and "already imported" in out
    assert cli.main(["ranking", "--home", home]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["rank", "name", "fingerprint"] and len(table) == 6
    assert table[-1].startswith("(No identity in")
    assert cli.main(["profile", "--home", home, "p0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("p0 [") and "level" in out and "challenges:" in out
    assert cli.main(["profile", "--home", home, "nobody"]) == 1
    capsys.readouterr()
    bad = tmp_path / "bad.transcript"
    data = transcripts[0].read_bytes()
    bad.write_bytes(data[: len(data) // 2])  # a power cut in the middle of the game
    assert cli.main(["import", "--home", home, str(bad)]) == 1
    assert "refused: INCOMPLETE" in capsys.readouterr().out


def test_profile_without_a_name_is_this_peers_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert cli.main(["profile", "--home", str(home)]) == 2
    me = Identity.load_or_create(home)
    assert cli.main(["ranking", "--home", str(home)]) == 0
    assert "No game of yours recorded" in capsys.readouterr().out
    db = home / "profile.sqlite3"
    ids = [me, *IDS[1:]]
    seats = tuple(Seat(NAMES[i], ids[i].public_key_bytes, "h:1") for i in range(4))
    v = verdict(1, won_by(0), 0)
    v = Verdict(TableDefinition(v.definition.table_id, v.definition.rules, seats), *(
        v.state, v.rounds, v.fault, v.corrupt, v.finished, v.truncated
    ))  # fmt: skip
    record_verdict(db, v, transcript=Path("t"), date="2026-05-01")
    assert cli.main(["profile", "--home", str(home)]) == 0
    assert capsys.readouterr().out.startswith(f"Ana [{me.fingerprint}]")


def test_an_abandoned_game_gives_the_leaver_nothing(tmp_path: Path) -> None:
    from belote_p2p.app.profile import _verdict_abandoned_by

    db = tmp_path / "profile.sqlite3"
    v = verdict(7, won_by(0), None, over=False)
    assert _verdict_abandoned_by(v) is None  # until a Verdict names the seat that left
    assert record(db, v, "2026-06-01").status is ImportStatus.REFUSED  # type: ignore[attr-defined]
    outcome = record_verdict(db, v, transcript=Path("t"), date="2026-06-01", abandoned_by=3)
    assert outcome.status is ImportStatus.IMPORTED
    players = stats(db)
    assert players["Di"].xp == 0 and players["Di"].games == 1 and players["Di"].wins == 0
    assert all(players[n].xp >= 15 for n in ("Ana", "Bo", "Cy"))
    with open_db(db) as conn:
        assert conn.execute("SELECT abandoned_by, winner FROM games").fetchone() == (3, None)


# -- the schema: three and two players, and a database of the first version ------------------

VECTORS = ROOT / "protocol" / "vectors"

SCHEMA_1 = """
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
    winner INTEGER,                  -- team 0 or 1, NULL if none
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
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
CREATE INDEX IF NOT EXISTS game_seats_player ON game_seats(player);
CREATE INDEX IF NOT EXISTS xp_player ON xp(player);
"""


def write_schema_1(db: Path, result: GameResult, transcript: Path, date: str) -> None:
    """Record ``result`` as the first version of the profile did: its schema, its inserts
    (two scores per game), and its version number."""
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA_1 + "PRAGMA user_version = 1;")
    cur = conn.execute(
        "INSERT INTO games (table_id, date, variant, target, result, winner, score0, score1,"
        " rounds, abandoned_by, transcript, imported) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            result.table_id.hex(), date, result.variant, result.target, result.description,
            result.winner, result.scores[0], result.scores[1], result.rounds,
            result.abandoned_by, str(transcript), date,
        ),
    )  # fmt: skip
    for player, seat in zip(result.players, result.seats, strict=True):
        conn.execute(
            "INSERT OR IGNORE INTO players VALUES (?,?,?,?)",
            (player.fingerprint, player.key, player.name, date),
        )
        conn.execute(
            "INSERT INTO game_seats VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                cur.lastrowid, seat.seat, player.fingerprint, player.name, seat.xp,
                seat.finished, seat.won, seat.rounds_won, seat.tricks_won, seat.contracts_made,
                seat.contracts_failed, seat.capots, seat.belotes,
            ),
        )  # fmt: skip
        for reason, xp in seat.xp_awards:
            conn.execute(
                "INSERT INTO xp (player, game, reason, xp, date) VALUES (?,?,?,?,?)",
                (player.fingerprint, cur.lastrowid, reason, xp, date),
            )
    conn.commit()
    conn.close()


def home_with(folder: Path, vector: str) -> tuple[Home, Path]:
    """A home whose games folder holds a copy of the recorded game ``vector``."""
    home = Home.at(str(folder))
    home.games.mkdir(parents=True, exist_ok=True)
    path = home.games / vector
    shutil.copy2(VECTORS / vector, path)
    return home, path


def games_lines(home: Home, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert cli.main(["games", "--home", str(home.root)]) == 0
    return capsys.readouterr().out.splitlines()


@needs_observer
def test_a_database_of_the_first_schema_opens_keeps_its_rows_and_shows_them_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, old_file = home_with(tmp_path / "old", "game-classic.transcript")
    result = game_result(verify_transcript(old_file))
    write_schema_1(old.profile_db, result, old_file, "2026-01-01T00:00:00Z")
    # The same game recorded by this version, in another home.
    new, new_file = home_with(tmp_path / "new", "game-classic.transcript")
    assert record_game(new.profile_db, new_file).status is ImportStatus.IMPORTED
    # The first schema kept no file's digest: its game is not said verified until imported
    # again.
    assert re.search(r"\?\s+not checked", games_lines(old, capsys)[1])
    assert record_game(old.profile_db, old_file).status is ImportStatus.ALREADY
    shown = games_lines(old, capsys)
    assert re.search(r"p[0-3] & p[0-3] v p[0-3] & p[0-3] .* p[13] & p[13] won 106-420\s+verified",
                     shown[1]), shown  # fmt: skip
    assert shown == games_lines(new, capsys)
    with open_db(old.profile_db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute(
            "SELECT score0, score1, score2, score3, result FROM games"
        ).fetchall() == [(106, 420, None, None, result.description)]
        migrated = all_players(conn)
    with open_db(new.profile_db) as conn:
        assert migrated == all_players(conn)
    assert sorted(p.games for p in migrated) == [1, 1, 1, 1]
    # Opening it again changes nothing; the game is not imported twice.
    assert record_game(old.profile_db, old_file).status is ImportStatus.ALREADY
    assert stats(old.profile_db) == {p.name: p for p in migrated}


@needs_observer
@pytest.mark.parametrize(
    ("vector", "winner", "scores", "rounds_won", "tricks", "shown"),
    [
        # Round 0 redealt, then two rounds scored (8 tricks each); p2 wins the game.
        ("game-three-handed.transcript", 2, (137, 28, 218), [1, 0, 2], 8 * 2,
         r"p0 v p1 v p2 .* p2 won: p0 137, p1 28, p2 218\s+verified"),
        # Three rounds (16 tricks each), one won by p0, two by p1; p1 wins the game.
        ("game-two-handed.transcript", 1, (239, 287), [1, 2], 16 * 3,
         r"p0 v p1 .* p1 won: p0 239, p1 287\s+verified"),
    ],
)  # fmt: skip
def test_a_game_without_teams_is_recorded_per_player(
    vector: str,
    winner: int,
    scores: tuple[int, ...],
    rounds_won: list[int],
    tricks: int,
    shown: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home, path = home_with(tmp_path, vector)
    assert cli.main(["import", "--home", str(home.root), str(path)]) == 0
    out = capsys.readouterr().out
    assert f"imported: p{winner} won: " in out
    with open_db(home.profile_db) as conn:
        (row,) = conn.execute("SELECT winner, score0, score1, score2, score3 FROM games")
        seats = conn.execute(
            "SELECT seat, won, rounds_won, tricks_won, xp FROM game_seats ORDER BY seat"
        ).fetchall()
    assert row == (winner, *scores, *[None] * (4 - len(scores)))
    assert [won for _, won, *_ in seats] == [s == winner for s in range(len(scores))]
    assert [r for _, _, r, *_ in seats] == rounds_won
    assert sum(t for *_, t, _ in seats) == tricks
    for seat, won, won_rounds, tricks_won, xp in seats:
        assert xp == 15 + 25 * won + 2 * won_rounds + tricks_won, seat
    lines = games_lines(home, capsys)
    assert re.search(shown, lines[1]), lines
    assert cli.main(["profile", "--home", str(home.root), f"p{winner}"]) == 0
    assert "games 1, won 1 (100%)" in capsys.readouterr().out


@needs_observer
def test_games_says_verified_only_of_a_file_that_verified(
    transcripts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home.at(str(tmp_path / "home"))
    home.games.mkdir(parents=True)
    real = home.games / "real.transcript"
    shutil.copy2(transcripts[0], real)
    assert record_game(home.profile_db, real).status is ImportStatus.IMPORTED
    forged = home.games / "forged.transcript"
    data = bytearray(real.read_bytes())
    data[-40] ^= 1  # the last envelope's signature: the same table id, a record that fails
    forged.write_bytes(bytes(data))
    os.utime(forged, (real.stat().st_mtime + 10,) * 2)
    assert cli.main(["verify", "--home", str(home.root), str(forged)]) == 1
    capsys.readouterr()
    lines = games_lines(home, capsys)
    assert "forged" not in lines[1] and lines[1].rstrip().endswith("not checked (--verify)")
    assert lines[2].rstrip().endswith("verified")
    assert cli.main(["games", "--verify", "--home", str(home.root)]) == 0
    assert capsys.readouterr().out.splitlines()[1].rstrip().endswith("does not verify")


def test_game_numbers_stay_as_games_are_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home, first = home_with(tmp_path, "game-classic.transcript")
    os.utime(first, (1_000_000,) * 2)
    assert [line.split()[0] for line in games_lines(home, capsys)[1:-1]] == ["1"]
    later = home.games / "game-coinche.transcript"
    shutil.copy2(VECTORS / later.name, later)
    os.utime(later, (2_000_000,) * 2)
    lines = games_lines(home, capsys)
    assert [line.split()[0] for line in lines[1:-1]] == ["2", "1"]
    assert cli.main(["verify", "--home", str(home.root), "1"]) == 0
    assert "106-420" in capsys.readouterr().out  # still the classic game
    older = home.games / "game-two-handed.transcript"
    shutil.copy2(VECTORS / older.name, older)
    os.utime(older, (500_000,) * 2)  # found later, however old: the next number
    assert [line.split()[0] for line in games_lines(home, capsys)[1:-1]] == ["2", "1", "3"]


@needs_observer
def test_the_ranking_holds_the_players_of_the_owners_games_only(
    transcripts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home.at(str(tmp_path / "home"))
    home.root.mkdir()
    owner_seed = bytes([5, 0]) * 16  # seat 0 of the transcripts' table (make_table seed 5)
    fd = os.open(home.identity_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, owner_seed)
    os.close(fd)
    assert record_game(home.profile_db, transcripts[0]).status is ImportStatus.IMPORTED
    # Four keys that only played one another: a game as valid as any, and nothing to rank.
    definition, ids = make_table("classic", target=1, seed=9)
    definition = dataclasses.replace(definition, table_id=bytes(range(16, 32)))
    sessions = table_sessions(definition, ids)
    Net(sessions, random.Random(3)).run()
    sybil = write_transcript(tmp_path / "sybil.transcript", sessions[0])
    outcome = record_game(home.profile_db, sybil)
    assert outcome.status is ImportStatus.IMPORTED
    assert outcome.result is not None and all(s.xp > 0 for s in outcome.result.seats)
    assert cli.main(["ranking", "--home", str(home.root)]) == 0
    table = capsys.readouterr().out.splitlines()
    with open_db(home.profile_db) as conn:
        everyone = all_players(conn)
        ours = all_players(conn, home.identity().fingerprint)
    assert len(everyone) == 8 and len(ours) == 4 and len(table) == 5
    sybils = {i.fingerprint for i in ids}
    assert not sybils & {p.fingerprint for p in ours}
    assert not any(fp in line for line in table for fp in sybils)
