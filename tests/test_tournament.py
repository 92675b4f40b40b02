"""Tournaments: every pair on the same boards, ratings with bootstrap intervals that do not
depend on how the boards were spread over processes, the report and the command."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from belote_p2p.app.cli import main
from belote_p2p.i18n import format_milliseconds, set_language
from belote_p2p.players import records as records_module
from belote_p2p.players.arena import MatchResult, open_cluster
from belote_p2p.players.tournament import (
    TournamentResult,
    bradley_terry,
    ratings_svg,
    run_tournament,
    tournament_html,
)

HEURISTIC = Path(__file__).resolve().parent.parent / "examples" / "bots" / "heuristic.py"
PROGRAM = json.dumps(f"{shlex.quote(sys.executable)} {shlex.quote(str(HEURISTIC))}")
FOUR = ["random", "rules", f"exec:cmd={PROGRAM}", f"exec:cmd={PROGRAM}:style=first"]


def test_four_bots_rate_the_same_on_one_process_two_or_a_cluster() -> None:
    pytest.importorskip("distributed")
    how = {"boards": 6, "variant": "classic", "seed": 4}
    one = run_tournament(FOUR, jobs=1, **how).summary(resamples=200)
    two = run_tournament(FOUR, jobs=2, **how).summary(resamples=200)
    with open_cluster("local", 2) as client:
        dask = run_tournament(FOUR, cluster=client, **how).summary(resamples=200)
    for other in (two, dask):
        assert other["ratings"] == one["ratings"]
        for a, b in zip(one["pairs"], other["pairs"], strict=True):
            for key in ("points_per_board", "ci95", "board_win_rate", "fallbacks"):
                assert a[key] == b[key]
    assert len(one["pairs"]) == 6 and {r["bot"] for r in one["ratings"]} == set(FOUR)
    for r in one["ratings"]:
        lo, hi = r["elo_ci95"]
        assert lo <= r["elo"] <= hi
    assert abs(sum(r["elo"] for r in one["ratings"])) < 1e-6 * 4 + 0.5  # mean 0
    for bot in FOUR:  # every decision of each bot timed, over its three matches
        played = sum(p["fallbacks"][bot]["decisions"] for p in one["pairs"] if bot in p["bots"])
        assert one["decision_s"][bot]["decisions"] == played > 0


def test_milliseconds_keep_the_places_that_read() -> None:
    cases = [(0.000004, "0.004"), (0.00031, "0.31"), (0.0116, "11.6"), (1.0234, "1,023")]
    assert [format_milliseconds(s) for s, _ in cases] == [text for _, text in cases]
    set_language("fr")
    assert format_milliseconds(0.0116) == "11,6"
    assert format_milliseconds(1.0234) == "1\u202f023"


def test_bradley_terry_follows_the_wins() -> None:
    wins = {("a", "b"): 60.0, ("b", "a"): 40.0, ("b", "c"): 70.0, ("c", "b"): 30.0}
    ratings = bradley_terry(["a", "b", "c"], wins)
    assert ratings["a"] > ratings["b"] > ratings["c"]
    assert sum(ratings.values()) == pytest.approx(0, abs=1e-6)
    alone = bradley_terry(["a", "b"], {("a", "b"): 10.0, ("b", "a"): 0.0})
    assert 0 < alone["a"] < 800  # the prior keeps a clean sweep finite


def test_the_report_stands_alone() -> None:
    summary = run_tournament(["random", "rules"], boards=3, seed=1).summary(resamples=50)
    page = tournament_html(summary)
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<script" not in page
    svg = ratings_svg([{"bot": "<b>&", "elo": 10.0, "elo_ci95": [-5.0, 20.0]}])
    assert "&lt;b&gt;&amp;" in svg and "<b>" not in svg


def test_tournament_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.html"
    argv = ["tournament", "--bots", "random,rules,random:x=1", "--boards", "2", "--jobs", "1"]
    assert main([*argv, "--no-progress"]) == 2  # a bad option, before any match
    assert "error:" in capsys.readouterr().err
    argv = ["tournament", "--bots", "random,rules", "--boards", "3", "--jobs", "1"]
    assert main([*argv, "--no-progress", "--html", str(report), "--resamples", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Elo" in lines[1] and "95% CI" in lines[1]
    assert lines[1].endswith("ms a decision (median / p99)")
    last = json.loads(lines[-1])
    assert {r["bot"] for r in last["ratings"]} == {"rules", "random"}
    page = report.read_text()
    assert page.count("<svg") == 1
    for rank, bot in enumerate((r["bot"] for r in last["ratings"]), 1):
        t = last["decision_s"][bot]
        cell = f"{format_milliseconds(t['median'])} / {format_milliseconds(t['p99'])}"
        assert lines[1 + rank].split()[1] == bot and lines[1 + rank].endswith(cell)
        assert f"<td>{cell}</td></tr>" in page


def _figures(result: TournamentResult) -> object:
    """What a tournament says that does not depend on time: the ratings, each pair's points."""
    summary = result.summary(50)
    pairs = [(p["bots"], p["points_per_board"], p["ci95"]) for p in summary["pairs"]]
    return summary["ratings"], pairs


def test_a_recorded_tournament_goes_on_and_a_bot_added_plays_its_own_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "t.jsonl"
    played: list[int] = []  # the boards each match was asked to play
    real = records_module.run_match

    def counted(specs: tuple[str, str], **how: Any) -> MatchResult:
        played.append(len(set(range(how["boards"])) - set(how["skip"])))
        return real(specs, **how)

    monkeypatch.setattr(records_module, "run_match", counted)
    two, three = ["random", "rules"], ["random", "rules", "pimc:iterations=2"]
    how: dict[str, Any] = {"variant": "coinche", "seed": 6}

    first = run_tournament(two, boards=3, record=record, **how)
    assert first.summary(50)["tournament"]["played"] == 3
    # More boards: only the fourth is played; the figures are a fresh tournament's.
    again = run_tournament(two, boards=4, record=record, **how)
    assert again.summary(50)["tournament"]["played"] == 1
    assert _figures(again) == _figures(run_tournament(two, boards=4, **how))
    # A bot added: its two pairs are played, the recorded pair is not.
    played.clear()
    added = run_tournament(three, boards=4, record=record, **how)
    assert added.summary(50)["tournament"]["played"] == 8 and played == [0, 4, 4]
    lines = record.read_text().splitlines()
    assert len(lines) == len(set(lines)) == 12  # every pair's boards, each once
    # Once more: nothing is played, and the figures are those of a tournament played whole,
    # every bot's decision times too: the record keeps them with each board.
    last = run_tournament(three, boards=4, record=record, **how)
    assert last.summary(50)["tournament"]["played"] == 0
    whole = run_tournament(three, boards=4, **how)
    assert _figures(last) == _figures(whole)
    decisions = {b: t["decisions"] for b, t in last.summary(50)["decision_s"].items()}
    assert decisions == {b: t["decisions"] for b, t in whole.summary(50)["decision_s"].items()}
    assert sorted(decisions) == sorted(three) and min(decisions.values()) > 0
    assert record.read_text().splitlines() == lines


def test_a_tournament_record_of_other_boards_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "t.jsonl"
    argv = ["tournament", "--bots", "random,rules", "--boards", "2", "--jobs", "1",
            "--resamples", "20", "--record", str(record)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "from the record" not in out  # every board played now
    assert json.loads(out.splitlines()[-1])["tournament"]["played"] == 2
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "record: 2 boards from the record, 0 played now" in out
    assert " ? " not in out.splitlines()[2]  # the first bot's decision times, from the record
    before = record.read_bytes()
    assert main([*argv, "--seed", "5"]) == 2
    err = capsys.readouterr().err
    assert "t.jsonl records another match: random,rules, classic, seed 0" in err
    assert record.read_bytes() == before
    # The arena's ladder keeps its record the same way; a match's record is a pair's.
    ladder = ["arena", "--ladder", "--bots", "random,rules", "--boards", "3", "--jobs", "1",
              "--json", "--record", str(record)]  # fmt: skip
    assert main(ladder) == 0
    assert json.loads(capsys.readouterr().out)["tournament"]["played"] == 1
    pair = ["arena", "--bots", "random,rules", "--boards", "3", "--jobs", "1", "--json",
            "--record", str(record)]  # fmt: skip
    assert main(pair) == 0
    assert json.loads(capsys.readouterr().out)["played"] == 0
