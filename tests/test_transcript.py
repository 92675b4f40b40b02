from __future__ import annotations

from pathlib import Path

import pytest
from helpers import make_table

from belote_p2p.protocol.transcript import TranscriptError, TranscriptWriter, read_transcript


def test_write_read_and_truncated_tail(tmp_path: Path) -> None:
    definition, _ = make_table("classic")
    path = tmp_path / "game.transcript"
    with TranscriptWriter(path, definition, 2) as w:
        w.append(b"first")
        w.append(b"second")
    t = read_transcript(path)
    assert t.definition == definition and t.seat == 2
    assert t.envelopes == (b"first", b"second") and not t.truncated
    # A power cut in the middle of the last frame.
    data = path.read_bytes()
    path.write_bytes(data[:-3])
    t = read_transcript(path)
    assert t.envelopes == (b"first",) and t.truncated
    # Reopening drops the broken tail and appends after the last whole frame.
    with TranscriptWriter(path, definition, 2) as w:
        w.append(b"third")
    t = read_transcript(path)
    assert t.envelopes == (b"first", b"third") and not t.truncated


def test_not_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"\x00\x00\x00\x02hi")
    with pytest.raises(TranscriptError):
        read_transcript(path)
    path.write_bytes(b"\xff\xff\xff\xff")
    with pytest.raises(TranscriptError):
        read_transcript(path)


def test_another_table_is_refused(tmp_path: Path) -> None:
    definition, _ = make_table("classic")
    other, _ = make_table("coinche")
    path = tmp_path / "t"
    TranscriptWriter(path, definition, 0).close()
    with pytest.raises(TranscriptError, match="another table"):
        TranscriptWriter(path, other, 0)
