"""``verify``: a transcript checked alone, and every kind of damage named."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import Net, make_table, table_sessions, write_transcript

from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.transcript import TranscriptError, TranscriptWriter
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TableSession]]:
    definition, ids = make_table("classic", target=201, seed=9)
    sessions = table_sessions(definition, ids)
    Net(sessions, random.Random(4)).run()
    path = write_transcript(tmp_path_factory.mktemp("verify") / "game.transcript", sessions[1])
    return path, sessions


def test_an_honest_game_verifies(game: tuple[Path, list[TableSession]]) -> None:
    path, sessions = game
    verdict = verify_transcript(path)
    assert verdict.ok, verdict.summary()
    assert verdict.state.scores == sessions[0].state.scores
    assert len(verdict.rounds) == len(sessions[0].state.history)
    assert verdict.summary().startswith("OK")


def test_every_flipped_byte_is_named(game: tuple[Path, list[TableSession]], tmp_path: Path) -> None:
    path, _ = game
    data = path.read_bytes()
    rng = random.Random(0)
    for _ in range(12):
        damaged = bytearray(data)
        i = rng.randrange(len(damaged))
        damaged[i] ^= 1 << rng.randrange(8)
        bad = tmp_path / "bad.transcript"
        bad.write_bytes(bytes(damaged))
        try:
            verdict = verify_transcript(bad)
        except TranscriptError:
            continue  # the header or a frame length: not a transcript any more
        assert not verdict.ok
        assert verdict.corrupt or verdict.fault or not verdict.finished


def test_a_cut_transcript_is_incomplete(
    game: tuple[Path, list[TableSession]], tmp_path: Path
) -> None:
    path, _ = game
    cut = tmp_path / "cut.transcript"
    data = path.read_bytes()
    # A power cut in the middle of the game: one byte short of the end of the frame that
    # holds the file's middle (the middle itself may fall between two frames: the shuffle
    # secrets, so the record's bytes, differ at each run).
    ends, pos = [], 0
    while pos < len(data):
        pos += 4 + int.from_bytes(data[pos : pos + 4], "big")
        ends.append(pos)
    cut.write_bytes(data[: next(end for end in ends if end > len(data) // 2) - 1])
    verdict = verify_transcript(cut)
    assert not verdict.ok and verdict.truncated and not verdict.finished
    assert verdict.summary().startswith("INCOMPLETE")


def test_a_signed_lie_is_blamed_on_its_signer(
    game: tuple[Path, list[TableSession]], tmp_path: Path
) -> None:
    """A peer that signs a wrong final score is named, with its own signature as evidence."""
    _, sessions = game
    definition = sessions[0].definition
    liar = 3
    _, ids = make_table("classic", target=201, seed=9)
    transcript = [e.encode() for e in sessions[1].transcript]
    done = next(
        i
        for i, data in enumerate(transcript)
        if (e := Envelope.decode(data)).sender == ids[liar].public_key_bytes and e.type == "done"
    )
    original = Envelope.decode(transcript[done])
    forged = Envelope.create(
        ids[liar],
        definition.table_id,
        original.seq,
        original.prev,
        original.seen,
        {"type": "done", "scores": [0, 999]},
    )
    transcript[done] = forged.encode()
    bad = tmp_path / "lie.transcript"
    with TranscriptWriter(bad, definition, 1) as w:
        for data in transcript:
            w.append(data)
    verdict = verify_transcript(bad)
    assert verdict.fault is not None and verdict.fault.seat == liar
    assert forged.encode() in verdict.fault.evidence
    assert "FAULT by seat 3" in verdict.summary()
