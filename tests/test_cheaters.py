"""One cheat per test: detected, blamed on its seat with signed evidence, the same verdict on
every honest peer, and the same verdict again from each honest peer's transcript.

The in-memory tests are deterministic (seeded delivery, seeded deals, no clock); two cheats
are also played over loopback TCP with :func:`~belote_p2p.net.peer.run_peer`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cheaters import (
    BadShuffle,
    Cheat,
    CutFrame,
    Equivocate,
    FalseClaim,
    ForeignCard,
    ForgedSignature,
    Garbage,
    Outcome,
    OutOfTurn,
    OversizedFrame,
    Replay,
    Revoke,
    Silence,
    WrongReveal,
    assert_finished_cleanly,
    assert_same_verdict,
    play,
    signed_by,
    vote_out,
)
from helpers import identities, play_table

import belote_p2p.net.peer as peer_module
import belote_p2p.protocol.session as session_module
from belote_p2p.errors import RemoteProtocolError
from belote_p2p.net.peer import PeerConfig, PeerResult
from belote_p2p.protocol.deck import DeckPeer, RevealMessage
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import BadSignature, Envelope, MalformedMessage, WrongTable

CHEATER = 3


# -- signed cheats: a PeerFault with the cheater's own envelopes as evidence ------------------

SIGNED_CHEATS: dict[str, Callable[[], Cheat]] = {
    "bid out of turn": OutOfTurn,
    "old body signed again at a new seq": lambda: Replay(resign_body=True),
    "two envelopes at one seq to different peers": Equivocate,
    "a card dealt to another seat": lambda: ForeignCard(forge_share=False),
    "a forged decryption share": lambda: ForeignCard(forge_share=True),
    "a reveal that does not match the commitment": WrongReveal,
    "a shuffle not derived from its seed": BadShuffle,
}
OUT_OF_TURN = "out of turn|state digest|without knowing the last action"
REASONS = {
    "bid out of turn": OUT_OF_TURN,
    "old body signed again at a new seq": OUT_OF_TURN,
    "two envelopes at one seq to different peers": "equivocation",
    "a card dealt to another seat": "belongs to seat|not a card of seat",
    "a forged decryption share": "share proof",
    "a reveal that does not match the commitment": "commitment",
    "a shuffle not derived from its seed": "does not match the seed",
}


@pytest.mark.parametrize("name", SIGNED_CHEATS)
def test_a_signed_cheat_is_blamed_on_its_seat_by_every_peer(name: str, tmp_path: Path) -> None:
    t = play(SIGNED_CHEATS[name]())
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert fault.seat == CHEATER
        assert re.search(REASONS[name], fault.reason), fault.reason
    assert not t.rejections


@pytest.mark.parametrize(
    "name", [n for n in SIGNED_CHEATS if n != "a shuffle not derived from its seed"]
)
def test_the_evidence_is_the_cheaters_own_signature(name: str) -> None:
    t = play(SIGNED_CHEATS[name]())
    for seat in t.honest:
        (fault,) = t.faults(seat)
        proof = signed_by(fault.evidence, t.ids[CHEATER])
        assert proof and len(proof) == len(fault.evidence)


def test_an_equivocation_is_proven_by_two_envelopes_at_one_seq() -> None:
    cheat = Equivocate(victim=0)
    t = play(cheat)
    assert cheat.pair is not None
    for seat in t.honest:
        (fault,) = t.faults(seat)
        pieces = [Envelope.decode(e) for e in fault.evidence]
        assert len(pieces) == 2 and pieces[0] != pieces[1]
        assert pieces[0].seq == pieces[1].seq and pieces[0].sender == pieces[1].sender


def test_a_bad_shuffle_is_proven_by_its_shuffle_and_reveal() -> None:
    t = play(BadShuffle())
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert len(signed_by(fault.evidence, t.ids[CHEATER])) >= 2


# -- bytes that are no envelope: refused, cost the connection, the game goes on ---------------


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_forged_signature_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    t = play(ForgedSignature(at=6))
    for seat in t.honest:
        assert t.rejected(seat) == [0, 0, 0, 1]
    assert all(isinstance(r.error, BadSignature) for r in t.rejections)
    forged = {r.error.evidence[0] for r in t.rejections}
    assert len(forged) == 1
    assert not any(e.encode() in forged for s in range(4) for e in t.sessions[s].transcript)
    assert_finished_cleanly(t, tmp_path)


@pytest.mark.usefixtures("proofs_checked_once")
def test_malformed_frames_are_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    cheat = Garbage(at=6)
    t = play(cheat)
    for seat in t.honest:
        # The first bad frame costs the connection, with the rest of what it carried; the
        # envelope behind them comes back through sync.
        assert t.rejected(seat) == [0, 0, 0, 1]
        assert any(r == seat and s == CHEATER and "refused" in why for r, s, why in t.lost)
    kinds = {type(r.error) for r in t.rejections}
    assert kinds <= {MalformedMessage, WrongTable}
    assert all(isinstance(r.error, RemoteProtocolError) for r in t.rejections)
    assert_finished_cleanly(t, tmp_path)


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_replayed_envelope_is_ignored(tmp_path: Path) -> None:
    cheat = Replay(resign_body=False)
    t = play(cheat)
    assert len(cheat.replayed) == 3
    assert not t.rejections
    assert_finished_cleanly(t, tmp_path)
    for seat in t.honest:
        hashes = [e.hash for e in t.sessions[seat].transcript]
        assert len(hashes) == len(set(hashes))


@pytest.mark.usefixtures("proofs_checked_once")
def test_an_oversized_frame_costs_the_connection_and_the_game_goes_on(tmp_path: Path) -> None:
    """The cheat stops sending envelopes after its oversized frame, but its session still
    answers sync requests: the envelopes come through the reconnections' syncs."""
    t = play(OversizedFrame(at=8))
    assert {(r, s) for r, s, why in t.lost if "exceeds" in why} == {(0, 3), (1, 3), (2, 3)}
    for seat in t.honest:
        assert t.rejected(seat) == [0, 0, 0, 1]
    assert_same_verdict(t, tmp_path, Outcome("finished", None))
    records = [{e.hash for e in t.sessions[s].transcript} for s in t.honest]
    assert all(r == records[0] for r in records)


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_frame_cut_short_loses_the_connection_and_the_seat(tmp_path: Path) -> None:
    t = play(CutFrame(at=8))
    assert {(r, s) for r, s, why in t.lost if "inside a frame" in why} == {(0, 3), (1, 3), (2, 3)}
    assert_same_verdict(t, tmp_path, Outcome("left", CHEATER))


# -- silence: the others see whom they wait on, vote, and its partner plays its open hand ----


@pytest.mark.usefixtures("proofs_checked_once")
@pytest.mark.parametrize("at", [3, 10, 25])
def test_a_silent_seat_is_voted_out(at: int, tmp_path: Path) -> None:
    t = play(Silence(at=at), target=2001)
    assert t.outcomes() == [Outcome("stalled", None)] * 3
    vote_out(t, CHEATER)
    assert_same_verdict(t, tmp_path, Outcome("left", CHEATER))


# A seat gone before its reveal, once every card of the round is played, has nothing to release:
# its key is rebuilt from the pieces the three reveals carry, the round is audited, and its
# partner plays its open hand in the later rounds (PROTOCOL.md §6.7, DECK.md §17.11).
@pytest.mark.usefixtures("proofs_checked_once")
def test_a_missing_reveal_is_waited_for_then_voted_out(tmp_path: Path) -> None:
    t = play(Silence(), target=2001)
    vote_out(t, CHEATER)
    assert_same_verdict(t, tmp_path, Outcome("left", CHEATER))


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_missing_reveal_in_the_last_round_is_waited_for(tmp_path: Path) -> None:
    t = play(Silence(), target=101)
    vote_out(t, CHEATER)
    assert_same_verdict(t, tmp_path, Outcome("left", CHEATER))


# -- cheats only the round audit can prove -------------------------------------------------


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_revoke_is_found_by_the_audit_and_the_game_goes_on(tmp_path: Path) -> None:
    t = play(Revoke(), target=3001)
    assert_same_verdict(t, tmp_path, Outcome("audit", CHEATER))
    for seat in t.honest:
        assert t.sessions[seat].finished and t.sessions[seat].fault is None
        assert len(t.sessions[seat].state.history) > 1


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_false_belote_gets_the_same_verdict_everywhere(tmp_path: Path) -> None:
    t = play(FalseClaim(belote=True), variant="coinche", target=1001, seed=15)
    assert t.outcomes() == [Outcome("audit", CHEATER)] * 3
    assert_same_verdict(t, tmp_path, Outcome("audit", CHEATER))


@pytest.mark.usefixtures("proofs_checked_once")
def test_a_false_announcement_gets_the_same_verdict_everywhere(tmp_path: Path) -> None:
    t = play(FalseClaim(belote=False), variant="classic", target=301, seed=3)
    assert t.outcomes() == [Outcome("audit", CHEATER)] * 3
    assert_same_verdict(t, tmp_path, Outcome("audit", CHEATER))


# -- over loopback TCP -----------------------------------------------------------------------


async def play_over_tcp(tmp_path: Path) -> list[PeerResult]:
    """The honest seats' results of a coinche table over loopback TCP. The cheater's own
    peer may wait on the others for a long grace period: it is cancelled once they are done
    (the test is about the honest seats)."""
    config = PeerConfig(peer_timeout=10)
    results, _ = await play_table("coinche", tmp_path, seed=31, config=config, until=CHEATER)
    return results


def assert_tcp_blame(results: list[PeerResult], reason: str) -> None:
    for r in results[:3]:
        assert r.fault is not None and r.fault.seat == CHEATER, (r.seat, r.fault, r.error)
        assert reason in r.fault.reason
        verdict = verify_transcript(r.transcript)
        assert verdict.fault is not None and verdict.fault.seat == CHEATER, verdict.summary()
        assert read_transcript(r.transcript).envelopes


async def test_an_equivocation_over_tcp_is_blamed_by_every_peer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mesh = peer_module.Mesh
    cheater_id = identities(31)[CHEATER]  # the seat's key at play_over_tcp's table

    class TwoFacedMesh(real_mesh):  # type: ignore[misc, valid-type]
        twin: Envelope | None = None

        def broadcast(self, payload: bytes) -> frozenset[int]:
            envelope = Envelope.decode(payload)
            if self.seat == CHEATER and envelope.type == "bid" and TwoFacedMesh.twin is None:
                body = dict(envelope.body)
                body["bid"] = "pass" if body["bid"] != "pass" else "80 H"
                twin = Envelope.create(
                    cheater_id, envelope.table, envelope.seq, envelope.prev, envelope.seen, body
                )
                TwoFacedMesh.twin = twin
                self.send(0, twin.encode())
                for seat in (1, 2):
                    self.send(seat, payload)
                return frozenset()
            result: frozenset[int] = super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", TwoFacedMesh)
    results = await play_over_tcp(tmp_path)
    assert TwoFacedMesh.twin is not None
    assert_tcp_blame(results, "equivocation")


async def test_a_wrong_reveal_over_tcp_is_blamed_by_every_peer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class LyingDeckPeer(DeckPeer):
        def reveal(self) -> RevealMessage:
            msg = super().reveal()
            if self.seat != CHEATER:
                return msg
            return RevealMessage(msg.seat, msg.secret_key, bytes(32))

    monkeypatch.setattr(session_module, "DeckPeer", LyingDeckPeer)
    results = await play_over_tcp(tmp_path)
    assert_tcp_blame(results, "commitment")
