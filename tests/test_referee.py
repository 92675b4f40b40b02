"""The referee: golden rounds in protocol/vectors/ and the command's contract."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from belote_p2p.app import referee

VECTORS = Path(__file__).parent.parent / "protocol" / "vectors"


@pytest.mark.parametrize(
    ("name", "status"),
    [("rounds", 0), ("malformed", 2), ("few-rounds", 0), ("few-malformed", 2)],
)
def test_golden_vectors(name: str, status: int) -> None:
    out = io.StringIO()
    with open(VECTORS / f"referee-{name}.in.jsonl", encoding="utf-8") as f:
        assert referee.run(f, out) == status
    expected = (VECTORS / f"referee-{name}.out.jsonl").read_text(encoding="utf-8")
    assert out.getvalue() == expected


def test_every_answer_is_one_line_in_order() -> None:
    lines = (VECTORS / "referee-rounds.in.jsonl").read_text().splitlines()
    answers = (VECTORS / "referee-rounds.out.jsonl").read_text().splitlines()
    assert len(lines) == len(answers)
    for line, answer in zip(lines, answers, strict=True):
        data, result = json.loads(line), json.loads(answer)
        if "illegal" in result:
            assert result["illegal"]["index"] < len(data["plays"])
        elif len(data["plays"]) < 32:
            assert result["legal"] == sorted(result["legal"], key=_order)
            assert len(result["tricks"]) == len(data["plays"]) // 4
        else:
            assert len(result["tricks"]) == 8
            assert sum(t["points"] for t in result["tricks"]) == 162


def test_golden_rounds_of_two_and_three_players() -> None:
    lines = (VECTORS / "referee-few-rounds.in.jsonl").read_text().splitlines()
    answers = (VECTORS / "referee-few-rounds.out.jsonl").read_text().splitlines()
    assert len(lines) == len(answers)
    outcomes = set()
    for line, answer in zip(lines, answers, strict=True):
        data, result = json.loads(line), json.loads(answer)
        seats = 3 if data["variant"] == "three-handed" else 2
        if "illegal" in result:
            assert result["illegal"]["index"] == len(data["plays"]) - 1
            assert result["illegal"]["card"] not in result["illegal"]["legal"]
        elif len(data["plays"]) < (24 if seats == 3 else 32):
            assert result["legal"] == sorted(result["legal"], key=_order)
            assert len(result["tricks"]) == len(data["plays"]) // seats
        else:
            assert len(result["tricks"]) == (8 if seats == 3 else 16)
            assert all(len(t["cards"]) == seats for t in result["tricks"])
            assert sum(t["points"] for t in result["tricks"]) == 162
            assert len(result["score"]) == len(result["totals"]) == seats
            assert (
                sorted(result["card_points"]) in ([0, 0, 250], [0, 250])
                or sum(result["card_points"]) == 162
            )
            outcomes.add(result["outcome"])
    assert outcomes == {"made", "failed", "no-contract"}


def _order(text: str) -> tuple[int, int]:
    return "SHDC".index(text[1]), "789TJQKA".index(text[0])


def test_scores_add_up_in_golden_rounds() -> None:
    for answer in (VECTORS / "referee-rounds.out.jsonl").read_text().splitlines():
        r = json.loads(answer)
        if "totals" in r:
            assert r["totals"][0] >= r["card_points"][0]
            assert min(r["score"]) >= 0


def test_a_line_that_is_not_an_object() -> None:
    result, bad = referee.answer("[1, 2]")
    assert bad and "object" in result["error"]
    result, bad = referee.answer('{"variant": "classic", "dealer": 0, "typo": 1}')
    assert bad and "typo" in result["error"]


def test_command_line_status_and_stdin() -> None:
    src = (VECTORS / "referee-malformed.in.jsonl").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "belote_p2p", "referee"],
        input=src,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == (VECTORS / "referee-malformed.out.jsonl").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "belote_p2p", "referee", str(VECTORS / "referee-rounds.in.jsonl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == (VECTORS / "referee-rounds.out.jsonl").read_text()
