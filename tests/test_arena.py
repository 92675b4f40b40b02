"""The arena: duplicate boards, determinism whatever the job count, summaries and the CLI."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import random
import re
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from belote_p2p.app.botcmds import ProgressBar
from belote_p2p.app.cli import main
from belote_p2p.game.engine import PASS, Action, State
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import CLASSIC, COINCHE, THREE_HANDED, TWO_HANDED, RuleSet
from belote_p2p.i18n import using
from belote_p2p.players import arena, records
from belote_p2p.players.arena import board_decks, elo, play_board, run_match
from belote_p2p.players.bots import BotError, FallbackCounts, collect_bots, make_plugin_manager
from belote_p2p.players.hookspecs import BotInfo
from belote_p2p.players.tournament import bradley_terry


class Recorder:
    """A random bot that writes down the hand its seat is dealt at each round."""

    log: ClassVar[list[tuple[int, int, int]]] = []  # (bot id, seat, hand)

    def __init__(self, ident: int) -> None:
        self.ident = ident

    def new_round(self, observation: Observation) -> None:
        Recorder.log.append((self.ident, observation.seat, observation.hand_mask))

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        return rng.choice(observation.legal)


class Passer:
    def decide(self, observation: Observation, rng: random.Random) -> Action:
        return PASS if PASS in observation.legal else observation.legal[0]


def test_boards_are_duplicated_with_both_orientations() -> None:
    bots = collect_bots(make_plugin_manager(entry_points=False))
    bots["rec-a"] = BotInfo("rec-a", lambda: Recorder(0))
    bots["rec-b"] = BotInfo("rec-b", lambda: Recorder(1))
    Recorder.log.clear()
    result = play_board(("rec-a", "rec-b"), CLASSIC, seed=3, board=5, bots=bots)
    first: dict[tuple[int, int], int] = {}
    for ident, seat, hand in Recorder.log:
        first.setdefault((ident, seat), hand)
    # Bot A held seats 0 and 2 at the first table, 1 and 3 at the second; every seat saw
    # the same cards at both tables (the first round's deck).
    seats_a = {seat for ident, seat in first if ident == 0}
    seats_b = {seat for ident, seat in first if ident == 1}
    assert seats_a == seats_b == {0, 1, 2, 3}
    for seat in range(4):
        assert first[0, seat] == first[1, seat]
    a, b = result.tables
    assert result.score == a.net + b.net
    assert a.deals >= 1 and b.deals >= 1


def test_a_board_where_everybody_passes_redeals_then_scores_zero() -> None:
    bots = {"pass": BotInfo("pass", Passer)}
    result = play_board(("pass", "pass"), CLASSIC, seed=0, board=0, bots=bots)
    assert [t.deals for t in result.tables] == [arena.MAX_DEALS] * 2
    assert result.score == 0 and all(t.a_took is None for t in result.tables)


def test_board_decks_derive_from_seed_and_board() -> None:
    d1, next1 = board_decks(1, 2)
    d2, next2 = board_decks(1, 2)
    assert d1 == d2 and next1() == next2() and next1() == next2()
    _, other = board_decks(1, 3)
    _, first = board_decks(1, 2)
    assert other() != first()


class FirstHands(Recorder):
    """A random bot that writes down its first hand, one entry per bot (so per table)."""

    firsts: ClassVar[list[tuple[int, int]]] = []  # (bot id, hand)

    def new_round(self, observation: Observation) -> None:
        if not getattr(self, "seen", False):
            self.seen = True
            FirstHands.firsts.append((self.ident, observation.hand_mask))


@pytest.mark.parametrize("rules", [THREE_HANDED, TWO_HANDED])
def test_few_seat_boards_rotate_the_deal_through_every_seat(rules: RuleSet) -> None:
    bots = {
        "rec-a": BotInfo("rec-a", lambda: FirstHands(0)),
        "rec-b": BotInfo("rec-b", lambda: FirstHands(1)),
    }
    FirstHands.firsts.clear()
    result = play_board(("rec-a", "rec-b"), rules, seed=4, board=2, bots=bots)
    n = rules.seats
    assert len(result.tables) == n
    assert result.score == sum(t.net for t in result.tables)
    # A (on seat 0) was dealt, at table t, the hand of the board's first deck with the
    # dealer moved on by t seats: every hand of the deal once.
    dealer, next_deck = board_decks(4, 2, rules)
    deck = next_deck()
    expected = [
        State.new_game(rules.with_(first_dealer=(dealer + t) % n)).deal(deck).hands[0]
        for t in range(n)
    ]
    got = [hand for ident, hand in FirstHands.firsts if ident == 0]
    assert got == expected and len(set(got)) == n


@pytest.mark.parametrize("variant", ["classic", "coinche", "three-handed", "two-handed"])
def test_results_do_not_depend_on_the_job_count(variant: str) -> None:
    one = run_match(("rules", "random"), boards=6, variant=variant, seed=11, jobs=1)
    two = run_match(("rules", "random"), boards=6, variant=variant, seed=11, jobs=2)
    assert [b.board for b in one.boards] == list(range(6))
    assert one.boards == two.boards
    s1, s2 = one.summary(), two.summary()
    for key in ("points_per_board", "ci95", "round_win_rate", "elo"):
        assert s1[key] == s2[key]


# A chunk of boards that ends at once, empty (the first one to start), or waits for a
# release that the test below never gives: only a worker ended by its parent stops waiting
# before the timeout, after which the chunk leaves a mark. It imports nothing and loads no
# bot (a child forked beside the suite's other threads could block on a lock one of them
# held). Module-level: the workers find it by name, forked.
_FIRST = multiprocessing.Semaphore(1)
_RELEASE = multiprocessing.Event()
_OUTLIVED: list[Path] = []


def _first_chunk_ends(*args: Any, **how: Any) -> Any:
    if not _FIRST.acquire(block=False) and not _RELEASE.wait(timeout=30):
        _OUTLIVED[0].touch()  # this worker was left to run: a stopped match did not stop it
    return [], (FallbackCounts(), FallbackCounts())


@pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="the workers share the test's semaphore and event by being forked",
)
def test_a_match_stopped_ends_its_processes_and_their_chunks_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena, "_play_chunk", _first_chunk_ends)
    monkeypatch.setattr(sys.modules[__name__], "_OUTLIVED", [tmp_path / "outlived"])

    def interrupted(done: list[arena.BoardResult]) -> None:
        raise KeyboardInterrupt  # Ctrl-C, heard by this process as the first chunk comes in

    with pytest.raises(KeyboardInterrupt):
        run_match(("random", "rules"), boards=64, jobs=2, on_boards=interrupted)
    # Both workers were ended with the match (one in a waiting chunk, one in a chunk or
    # waiting for the next), not left to play the chunks they had been given.
    assert multiprocessing.active_children() == []
    assert not (tmp_path / "outlived").exists()


def _ends_its_process(*args: Any, **how: Any) -> Any:
    os._exit(3)  # as a bot's plugin might, or a crash in compiled code


@pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="the workers find the test's chunk function by being forked",
)
def test_a_process_that_dies_fails_the_match_with_its_boards_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(arena, "_play_chunk", _ends_its_process)
    with pytest.raises(BotError, match=r"a process playing boards \d+ to \d+ ended abruptly"):
        run_match(("random", "rules"), boards=8, jobs=2)
    assert multiprocessing.active_children() == []
    assert main(["arena", "--bots", "random,rules", "--boards", "8", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "ended abruptly: a bot that ends its process" in err and "Traceback" not in err


def test_summary_statistics() -> None:
    match = run_match(("rules", "random"), boards=8, variant="classic", seed=2, jobs=1)
    s = match.summary()
    assert s["boards"] == 8
    lo, hi = s["ci95"]
    assert lo <= s["points_per_board"] <= hi
    assert 0.0 <= s["round_win_rate"] <= 1.0
    assert s["fallbacks"]["rules"]["decisions"] > 0
    assert s["fallbacks"]["rules"]["illegal"] == 0


def test_summary_splits_the_points_by_how_the_boards_were_bid() -> None:
    """A board is bid alike when the same hands took at both tables (A at one, B at the
    other, on the same deal); the two shares add up to the points a board."""
    t = arena.TableResult
    alike = arena.BoardResult(0, (t(100, 62, 1, True), t(20, 142, 1, False)))
    other_hands = arena.BoardResult(1, (t(100, 62, 1, True), t(142, 20, 1, True)))
    redealt = arena.BoardResult(2, (t(0, 162, 2, False), t(90, 72, 1, True)))
    assert alike.bid_alike
    assert not other_hands.bid_alike and not redealt.bid_alike
    match = arena.MatchResult(("a", "b"), "classic", 1, [alike, other_hands, redealt])
    s = match.summary()
    assert s["bid_alike"] == {"boards": 1, "points_per_board": round(alike.score / 3, 3)}
    assert s["bid_differently"]["boards"] == 2
    total = s["bid_alike"]["points_per_board"] + s["bid_differently"]["points_per_board"]
    assert total == pytest.approx(s["points_per_board"], abs=0.002)
    three = run_match(("rules", "random"), boards=2, variant="three-handed", seed=2, jobs=1)
    assert "bid_alike" not in three.summary()  # the deal rotates: no two tables to set side by side


def test_arena_command_says_where_the_points_came_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["arena", "--bots", "rules,random", "--boards", "4", "--jobs", "1", "--no-progress"]
    assert main([*argv, "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "bid alike (the same hands took):" in out and "bid differently:" in out


def test_the_progress_bar_says_the_time_left_on_one_line_of_the_terminal() -> None:
    now = [0.0]
    out = io.StringIO()

    def shown(columns: int, label: str, done: int) -> str:
        """The bar's line after ``done`` of 100 boards in 10 s, ``columns`` wide."""
        bar = ProgressBar(10, out=out, clock=lambda: now[0], columns=lambda: columns)
        now[0] = 0.0
        bar(label, 0, 100)
        now[0] = 10.0
        bar(label, done, 100)
        return out.getvalue().split("\r")[-1]

    # 2.5 boards a second: the 75 left in 30 s.
    assert shown(200, "rules vs random", 25) == (
        "rules vs random [##........] 25/100 boards 2/s (about 30 sec left)\x1b[K"
    )
    with using("fr"):
        assert "(encore 10\u202fs environ)" in shown(200, "rules vs random", 50)
    # A narrow terminal: the bar gives way first, then the end of the line (never wraps).
    assert shown(64, "rules vs random", 50) == (
        "rules vs random [###....] 50/100 boards 5/s (about 10 sec left)\x1b[K"
    )
    assert shown(20, "a long, long label of a bot's spec", 50) == "a long, long label \x1b[K"
    assert shown(200, "rules vs random", 100).endswith("100/100 boards 10/s\x1b[K\n")  # done


def test_decision_times_are_summed_up_by_rank() -> None:
    figures = arena.time_figures([x / 1000 for x in range(100, 0, -1)])  # 1..100 ms
    assert figures == {"decisions": 100, "median": 0.051, "mean": 0.0505, "p99": 0.1, "max": 0.1}
    assert arena.time_figures([0.25])["p99"] == 0.25  # never above the largest
    with pytest.raises(ValueError):
        arena.time_figures([])


def test_arena_command_times_every_decision_of_each_bot(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["arena", "--bots", "pimc:iterations=4,rules", "--boards", "2", "--jobs", "1"]
    assert main([*argv, "--seed", "3", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    for bot in ("pimc:iterations=4", "rules"):
        t = s["decision_s"][bot]
        assert t["decisions"] == s["fallbacks"][bot]["decisions"] > 0
        assert 0 <= t["median"] <= t["p99"] <= t["max"]
    assert main([*argv, "--seed", "3", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if "decision time (" in line]
    assert [row.split("(")[1].split(")")[0] for row in rows] == ["pimc:iterations=4", "rules"]
    for row, bot in zip(rows, ("pimc:iterations=4", "rules"), strict=True):
        count = s["fallbacks"][bot]["decisions"]
        assert "median " in row and "99th percentile " in row
        assert row.endswith(f"({count:,} decisions)")


def test_a_recorded_match_goes_on_from_its_record_to_the_match_of_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "rules.jsonl"
    argv = ["arena", "--bots", "rules,random", "--seed", "6", "--jobs", "1", "--json"]
    assert main([*argv, "--boards", "3", "--record", str(record)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["boards"] == first["played"] == 3
    assert main([*argv, "--boards", "7", "--record", str(record)]) == 0  # stopped, then on
    resumed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--boards", "7"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert resumed["played"] == 4 and resumed["boards"] == 7
    for key in ("points_per_board", "ci95", "sd", "board_win_rate", "bid_alike"):
        assert resumed[key] == alone[key]
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert sorted(r["board"] for r in rows) == list(range(7))
    assert records.read_record(record).summary()["points_per_board"] == alone["points_per_board"]
    with pytest.raises(records.RecordError, match="another match"):
        records.read_record(record, ("rules", "pimc"), "classic", 6)


def test_the_arena_compares_a_match_with_a_record_of_the_same_boards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "rules.jsonl"
    argv = ["arena", "--seed", "8", "--boards", "5", "--jobs", "1"]
    assert main([*argv, "--bots", "rules,random", "--record", str(base), "--json"]) == 0
    capsys.readouterr()
    other = tmp_path / "pimc.jsonl"
    assert main([*argv, "--bots", "pimc:iterations=4,random", "--record", str(other),
                 "--compare", str(base), "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    theirs = {b.board: b.score for b in records.read_record(base).boards}
    diffs = [b.score - theirs[b.board] for b in records.read_record(other).boards]
    (c,) = out["compared"]
    assert c["against"] == ["rules", "random"] and c["boards"] == 5
    assert c["difference"] == pytest.approx(sum(diffs) / 5, abs=1e-3)
    assert records.compare(records.read_record(base), records.read_record(base))["sd"] == 0
    assert main([*argv, "--bots", "rules,random", "--compare", str(base), "--no-progress"]) == 0
    shown = capsys.readouterr().out
    assert "minus rules vs random:" in shown and "on the same 5 boards" in shown


def test_a_record_of_other_boards_or_of_no_match_stops_the_arena_before_it_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "rules.jsonl"
    argv = ["arena", "--bots", "rules,random", "--boards", "2", "--jobs", "1"]
    assert main([*argv, "--record", str(base), "--json"]) == 0
    capsys.readouterr()
    fresh = tmp_path / "fresh.jsonl"
    assert (
        main([*argv, "--variant", "coinche", "--record", str(fresh), "--compare", str(base)]) == 2
    )
    assert "a comparison needs the same boards, coinche, seed 0" in capsys.readouterr().err
    assert not fresh.exists()  # refused before a board was played
    broken = tmp_path / "broken.jsonl"
    broken.write_text(base.read_text() + "{not json\n")
    before = broken.read_bytes()
    assert main([*argv, "--record", str(broken)]) == 2
    assert "broken.jsonl, line 3: not a board of a match" in capsys.readouterr().err
    assert broken.read_bytes() == before  # the record is left as it was
    assert main([*argv, "--record", str(tmp_path / "no such folder" / "r.jsonl")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    assert main([*argv, "--ladder", "--compare", str(base)]) == 2
    assert "for a match of two bots" in capsys.readouterr().err


@pytest.mark.parametrize("variant", ["classic", "coinche", "three-handed", "two-handed"])
def test_a_board_shown_is_the_board_the_match_played(
    variant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    match = run_match(("rules", "random"), boards=4, variant=variant, seed=8, jobs=1)
    argv = ["arena", "--bots", "rules,random", "--variant", variant, "--seed", "8"]
    assert main([*argv, "--show", "3", "--show", "1"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if line.startswith("Board ")]
    for head, board in zip(heads, (3, 1), strict=True):
        score = match.boards[board].score
        assert head.startswith(f"Board {board}: rules vs random, ")
        assert head.endswith(f": {score:+,g} for rules")
    rules = {"classic": CLASSIC, "coinche": COINCHE, "three-handed": THREE_HANDED,
             "two-handed": TWO_HANDED}[variant]  # fmt: skip
    tables = arena.board_tables(("rules", "random"), rules, 8, 3)
    shown = out.split("Board 1:")[0]
    nets = [line for line in shown.splitlines() if line.startswith("Table ")]
    assert [line.split(": ")[1] for line in nets] == [
        f"{t.result().net:+,g} for rules" for t in tables
    ]
    tricks = [line for line in shown.splitlines() if line.startswith("  trick ")]
    played = [t for table in tables if table.state for r in table.state.history for t in r.tricks]
    assert len(tricks) == len(played) > 0
    seat = re.compile(r"  (rules|random) \d: ")
    hands = [line.split(":")[1] for line in shown.splitlines() if seat.match(line)]
    rounds = [r for table in tables if table.state for r in table.state.history if r.tricks]
    assert len(hands) == rules.seats * len(rounds)  # a seat's cards: one a trick
    assert all(len(hand.split()) == len(rounds[0].tricks) for hand in hands)


def test_the_arena_names_the_boards_to_look_at_and_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "rules.jsonl"
    argv = ["arena", "--seed", "4", "--boards", "12", "--jobs", "1"]
    assert main([*argv, "--bots", "rules,random", "--record", str(base), "--json"]) == 0
    lost = json.loads(capsys.readouterr().out)["lost_most"]
    scores = {b.board: b.score for b in records.read_record(base).boards}
    worst = sorted((s, b) for b, s in scores.items() if s < 0)[: records.EXTREMES]
    assert lost == [[b, s] for s, b in worst]
    assert main([*argv, "--bots", "random,rules", "--compare", str(base), "--json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["compared"]
    changed = c["most_changed"]
    assert 0 < len(changed) <= records.EXTREMES
    rest = [abs(d) for _b, d in changed]
    assert rest == sorted(rest, reverse=True)
    theirs = run_match(("random", "rules"), boards=12, seed=4, jobs=1)
    diffs = {b.board: b.score - scores[b.board] for b in theirs.boards}
    assert all(diffs[b] == d for b, d in changed)
    assert min(rest) >= max(abs(d) for b, d in diffs.items() if [b, d] not in changed)
    assert main([*argv, "--bots", "random,rules", "--compare", str(base), "--no-progress"]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    board, command = hint.strip().split(" card by card: ")
    words = shlex.split(command)
    assert words[:2] == ["belote-p2p", "arena"] and board == f"board {words[-1]}"
    assert main(words[1:]) == 0
    assert capsys.readouterr().out.startswith(f"{board.title()}: random vs rules, classic, seed 4")


def test_show_refuses_what_it_does_not_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["arena", "--bots", "rules,random", "--show", "0"]
    for extra in (["--json"], ["--ladder"], ["--record", str(tmp_path / "r.jsonl")]):
        assert main([*argv, *extra]) == 2
        assert "--show takes no --ladder, --json, --record or --compare" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()
    with pytest.raises(SystemExit):
        main(["arena", "--bots", "rules,random", "--show", "-1"])
    assert "a board is a whole number, 0 or more, not -1" in capsys.readouterr().err
    assert main([*argv[:3], "--compare", str(tmp_path / "none.jsonl")]) == 2
    assert f"no record at {tmp_path / 'none.jsonl'}" in capsys.readouterr().err


def test_elo_and_bradley_terry() -> None:
    assert elo(0.5) == 0
    assert elo(0.6) == pytest.approx(70.4, abs=0.1)
    assert elo(1.0) == 800
    ratings = bradley_terry(["a", "b"], {("a", "b"): 60.0, ("b", "a"): 40.0})
    assert ratings["a"] > 0 > ratings["b"]
    assert ratings["a"] - ratings["b"] == pytest.approx(elo(60.5 / 101), abs=2)


def test_arena_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--bots", "random,random", "--boards", "3", "--jobs", "1", "--json"]
    assert main([*argv, "--seed", "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("boards", "points_per_board", "ci95", "round_win_rate", "elo", "seconds"):
        assert key in out
    assert out["boards"] == 3
    assert main(["arena", "--bots", "random,nobody", "--boards", "1", "--no-progress"]) == 2


def test_ladder_command(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--ladder", "--bots", "random,rules,random:x=1", "--boards", "2"]
    assert main([*argv, "--jobs", "1", "--no-progress"]) == 2  # a bad option is refused
    capsys.readouterr()
    assert main(["arena", "--ladder", "--bots", "random,rules", "--boards", "2", "--jobs", "1",
                 "--no-progress", "--variant", COINCHE.name]) == 0  # fmt: skip
    assert "Elo" in capsys.readouterr().out


def test_a_bad_bot_option_is_refused_before_any_match(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    played: list[int] = []
    monkeypatch.setattr(arena, "play_board", lambda *a, **k: played.append(1))
    for bots in (
        "expert:seconds=abc,rules",
        "rules,pimc:nothing=1",
        "rules,random,expert:exact=99",
    ):
        argv = ["arena", "--bots", bots, "--boards", "2", "--jobs", "1", "--no-progress"]
        assert main([*argv, "--ladder"]) == 2
        assert "error:" in capsys.readouterr().err
    assert main(["arena", "--bots", "expert:seconds=abc,rules", "--cluster", "local"]) == 2
    assert played == []


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[Any]:
    pytest.importorskip("distributed")
    with arena.open_cluster("local", 2, processes=False) as client:
        yield client


@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_cluster_results_are_those_of_one_process(local_cluster: Any, variant: str) -> None:
    seen: list[tuple[int, int]] = []
    one = run_match(("rules", "random"), boards=7, variant=variant, seed=5, jobs=1)
    two = run_match(("rules", "random"), boards=7, variant=variant, seed=5, jobs=2)
    dask = run_match(
        ("rules", "random"),
        boards=7,
        variant=variant,
        seed=5,
        cluster=local_cluster,
        progress=lambda label, done, total: seen.append((done, total)),
    )
    assert one.boards == two.boards == dask.boards
    assert [b.board for b in dask.boards] == list(range(7))
    assert dask.fallbacks == one.fallbacks
    # The progress follows the chunks as they come back, up to every board.
    assert seen[0] == (0, 7) and seen[-1] == (7, 7) and len(seen) > 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_arena_command_on_a_cluster_address(
    local_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["arena", "--bots", "rules,random", "--boards", "5", "--seed", "9", "--json"]
    assert main([*argv, "--jobs", "1"]) == 0
    alone = json.loads(capsys.readouterr().out)
    address = local_cluster.scheduler.address
    assert main([*argv, "--cluster", address, "--no-progress"]) == 0
    on_cluster = json.loads(capsys.readouterr().out)
    for key in ("points_per_board", "ci95", "sd", "round_win_rate", "elo", "fallbacks"):
        assert alone[key] == on_cluster[key]


class LosesItsWorker:
    """Plays as ``random``; the first decision after the test arms it closes the worker
    it runs on, then waits until the test lets it go (its answer comes too late)."""

    armed = threading.Event()
    release = threading.Event()
    closed: ClassVar[list[str]] = []

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        if LosesItsWorker.armed.is_set():
            LosesItsWorker.armed.clear()
            distributed = pytest.importorskip("distributed")
            worker = distributed.get_worker()
            LosesItsWorker.closed.append(worker.address)
            worker.loop.add_callback(worker.close, executor_wait=False, nanny=False)
            LosesItsWorker.release.wait(timeout=60)
        return rng.choice(observation.legal)


def test_a_lost_worker_costs_only_its_boards(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    known = {**arena.load_bots(), "victim": BotInfo("victim", LosesItsWorker)}
    monkeypatch.setattr(arena, "load_bots", lambda: known)
    alone = run_match(("victim", "rules"), boards=6, seed=8, jobs=1)
    with arena.open_cluster("local", 2, processes=False) as client:
        LosesItsWorker.armed.set()
        try:
            lost = run_match(
                ("victim", "rules"), boards=6, variant="classic", seed=8, cluster=client
            )
        finally:
            LosesItsWorker.release.set()
        assert len(LosesItsWorker.closed) == 1
        assert LosesItsWorker.closed[0] not in client.nthreads()  # that worker is gone
    assert lost.boards == alone.boards
