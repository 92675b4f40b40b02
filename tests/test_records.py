"""Match records: a board written is the board read back, whatever its tables hold, and a
record stopped halfway is read as far as it goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.players.arena import BoardResult, BoardTimes, TableResult
from belote_p2p.players.records import (
    RecordError,
    append_rows,
    board_row,
    read_matches,
    read_record,
    read_tournament,
)

MATCH = (("mybot:depth=2", "expert"), "three-handed", 7)

tables = st.builds(
    TableResult,
    st.integers(0, 600).map(float),
    st.integers(0, 1200).map(lambda x: x / 2),  # the mean of two seats' scores, at three
    st.integers(1, 16),
    st.sampled_from([True, False, None]),
)
seconds = st.lists(  # as a record keeps them: three significant digits
    st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(0, 999), st.integers(-9, 0)),
    max_size=5,
)
boards = st.lists(
    st.tuples(st.integers(0, 10_000), st.lists(tables, min_size=2, max_size=3),
              st.none() | st.tuples(seconds, seconds)),
    min_size=1, max_size=20, unique_by=lambda b: b[0],
)  # fmt: skip


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=boards)
def test_a_record_gives_back_the_boards_written_to_it(
    tmp_path: Path, drawn: list[tuple[int, list[TableResult], BoardTimes | None]]
) -> None:
    path = tmp_path / "r.jsonl"
    path.unlink(missing_ok=True)
    written = [BoardResult(board, tuple(ts), times) for board, ts, times in drawn]
    append_rows(path, (board_row(MATCH, b) for b in written))
    append_rows(path, [board_row(MATCH, written[0])])  # a board twice counts once
    match = read_record(path, *MATCH)
    in_order = sorted(written, key=lambda b: b.board)
    assert match.boards == in_order
    assert [b.times for b in match.boards] == [b.times for b in in_order]  # each board's own
    assert match.decision_seconds == tuple(
        [x for b in in_order if b.times for x in b.times[side]] for side in (0, 1)
    )
    assert (match.bots, match.variant, match.seed) == MATCH
    assert read_record(path).boards == match.boards  # the match read from the file itself


def test_a_record_cut_mid_line_loses_that_board_only(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first = BoardResult(3, (TableResult(100, 62, 1, True), TableResult(62, 100, 1, False)))
    second = BoardResult(4, (TableResult(0, 162, 2, None), TableResult(90, 72, 1, True)))
    append_rows(path, [board_row(MATCH, first)])
    path.write_text(path.read_text() + '{"bots": ["mybot:depth=2", "exp')  # the machine stopped
    assert read_record(path, *MATCH).boards == [first]
    append_rows(path, [board_row(MATCH, second)])  # the cut line dropped, not glued to
    assert read_record(path, *MATCH).boards == [first, second]
    assert path.read_text().count("\n") == 2


def test_a_record_with_a_line_that_is_not_a_board_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"bots": ["a", "b"]}\n')
    with pytest.raises(RecordError, match="line 1: not a board of a match"):
        read_record(path, *MATCH)
    row = board_row(MATCH, BoardResult(0, (TableResult(81, 81, 1, True),) * 2))
    for spent in ([[0.1]], 3, [["x"], []]):  # decision times that are not two lists of numbers
        path.write_text(json.dumps({**row, "times": spent}) + "\n")
        with pytest.raises(RecordError, match="line 1: not a board of a match"):
            read_record(path, *MATCH)
    with pytest.raises(RecordError, match=r"no record at .*none\.jsonl"):
        read_record(tmp_path / "none.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordError, match=r"empty\.jsonl records no board"):
        read_record(tmp_path / "empty.jsonl")
    assert read_record(tmp_path / "none.jsonl", *MATCH).boards == []


def test_a_tournament_record_holds_a_match_a_pair(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    other = (("expert", "pimc"), "three-handed", 7)
    first, second = (BoardResult(b, (TableResult(81, 80, 1, True),) * 3) for b in (0, 1))
    append_rows(path, [board_row(MATCH, first), board_row(other, second)])
    append_rows(path, [board_row(MATCH, second), board_row(other, second)])
    matches = read_matches(path)
    assert list(matches) == [MATCH, other]  # in the order of their first lines
    assert [b.board for b in matches[MATCH].boards] == [0, 1]
    assert [b.board for b in matches[other].boards] == [1]  # a board twice counts once
    assert read_tournament(path, "three-handed", 7) == {m[0]: r for m, r in matches.items()}
    with pytest.raises(RecordError, match=r"t\.jsonl records 2 matches, as a tournament.s"):
        read_record(path, *MATCH)  # a match's record holds that match only
    with pytest.raises(RecordError, match="records another match: mybot:depth=2,expert"):
        read_tournament(path, "classic", 7)
    assert read_tournament(tmp_path / "none.jsonl", "classic", 0) == {}
