"""A recorded game in ``protocol/vectors/``: it verifies, and the code still writes it.

Regenerate with ``PYTHONPATH=. python tests/test_game_vector.py --write`` after a deliberate
change to the wire or deck protocol (and say so in the commit).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from helpers import Net, make_table, table_sessions, write_transcript

from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript

VECTOR = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "game-classic.transcript"


def record(path: Path) -> None:
    """Four seeded peers play a short classic game; seat 0's transcript goes to ``path``."""
    definition, ids = make_table("classic", target=151, seed=42)
    sessions = table_sessions(definition, ids, deal_seed=42)
    Net(sessions, random.Random(42)).run()
    path.unlink(missing_ok=True)
    write_transcript(path, sessions[0])


def test_the_recorded_game_verifies() -> None:
    verdict = verify_transcript(VECTOR)
    assert verdict.ok, verdict.summary()
    assert verdict.state.is_over and len(verdict.rounds) >= 1


def test_the_code_still_writes_the_recorded_game_byte_for_byte(tmp_path: Path) -> None:
    fresh = tmp_path / "game.transcript"
    record(fresh)
    expected = read_transcript(VECTOR)
    got = read_transcript(fresh)
    assert got.definition == expected.definition
    assert len(got.envelopes) == len(expected.envelopes)
    assert fresh.read_bytes() == VECTOR.read_bytes()


if __name__ == "__main__" and "--write" in sys.argv:
    record(VECTOR)
    print(f"wrote {VECTOR} ({VECTOR.stat().st_size} bytes)")
