"""The host's bot processes: whether their results agree with the host's at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from belote_p2p.app.botprocs import check_agreement
from belote_p2p.game.engine import State
from belote_p2p.game.rules import CLASSIC
from belote_p2p.net.peer import PeerResult


def host_result(left: int | None) -> PeerResult:
    state = State.new_game(CLASSIC, scores=(512, 340))
    return PeerResult(
        seat=0, state=state, finished=True, fault=None, abandoned=None, error=None,
        transcript=Path("host.transcript"), envelopes=0, sent=0, sent_bytes=0, left=left,
    )  # fmt: skip


AGREED: dict[str, Any] = {"scores": [512, 340], "ok": True}


def test_the_seat_that_left_owes_no_result_and_the_live_peers_agree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Seat 1's process was killed: its partner played its open hand to the end.
    assert check_agreement(host_result(left=1), {1: None, 2: AGREED, 3: AGREED}, False) == 0
    out = capsys.readouterr().out
    assert "All 3 live peers agree: final scores 512-340 (seat 1 left" in out


def test_a_missing_result_of_a_seat_that_did_not_leave_is_a_disagreement(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert check_agreement(host_result(left=None), {1: None, 2: AGREED, 3: AGREED}, False) == 1
    assert check_agreement(host_result(left=3), {1: None, 2: AGREED, 3: AGREED}, False) == 1
    assert "final scores differ" in capsys.readouterr().err
