"""The cheats of ``test_cheaters.py`` at tables of three seats (``three-handed``) and two
(``two-handed``), and two peers colluding against the third at a table of three.

The same harness (:mod:`cheaters`) plays them: a cheat sits at the table's last seat (2, or
1 with two seats). Each signed cheat is blamed on its seat by every honest peer, with the
cheater's own signed envelopes as evidence, and each honest peer's transcript verifies to
the same verdict; an honest peer is never the one named. Where a cheat has no moment in a
variant it is adapted: two-handed has no bidding, so a bid cheat becomes a card cheat, and
its plays carry no decryption share, so the forged share is one of the deal or of a card a
trick turned up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cheaters import (
    LAST,
    BadShuffle,
    Cheat,
    Equivocate,
    FalseClaim,
    FalseReport,
    FalseScore,
    ForeignCard,
    ForgedOpen,
    ForgedSignature,
    Garbage,
    HiddenCard,
    Outcome,
    OutOfTurn,
    Replay,
    Silence,
    Table,
    WrongReveal,
    WrongShare,
    assert_finished_cleanly,
    assert_same_verdict,
    play,
    signed_by,
    verdict_outcome,
    vote_out,
)

from belote_p2p.game.rules import RULE_SETS
from belote_p2p.protocol.wire import BadSignature, Envelope, MalformedMessage, WrongTable

VARIANTS = ["three-handed", "two-handed"]


def cheater_of(variant: str) -> int:
    """The seat a cheat takes by default: the table's last."""
    return LAST % RULE_SETS[variant].seats


def assert_never_named(t: Table, tmp_path: Path) -> None:
    """No honest peer names an honest seat: not in a fault it saw, not in its outcome, not
    in the verdict of its transcript."""
    honest = set(t.honest)
    for seat in t.honest:
        assert not {f.seat for f in t.faults(seat)} & honest, t.faults(seat)
        assert not {f.seat for f in t.audit_faults(seat)} & honest
        assert t.outcome(seat).seat not in honest, (seat, t.outcome(seat))
        assert t.sessions[seat].abandoned not in honest
    for seat, verdict in t.verdicts(tmp_path).items():
        assert verdict_outcome(verdict).seat not in honest, (seat, verdict.summary())


# -- signed cheats: a PeerFault with the cheater's own envelopes as evidence ------------------

SIGNED_CHEATS: dict[str, Callable[[], Cheat]] = {
    # A bid while another seat is to bid (three-handed); a card while the other seat is to
    # play (two-handed, which has no bidding).
    "out of turn": OutOfTurn,
    # Its first bid's body (two-handed: its first card's) signed again at a new seq.
    "old body signed again at a new seq": lambda: Replay(resign_body=True),
    "two envelopes at one seq": Equivocate,
    # A position dealt to another seat (two-handed: one of the other player's piles).
    "a card dealt to another seat": lambda: ForeignCard(forge_share=False),
    # Its share of a card of seat 0 at the deal is not its share.
    "a forged deal share": lambda: WrongShare(owner=0),
    "a reveal that does not match the commitment": WrongReveal,
    "a shuffle not derived from its seed": BadShuffle,
}
OUT_OF_TURN = "out of turn|state digest|without knowing the last action"
REASONS = {
    "out of turn": OUT_OF_TURN,
    "old body signed again at a new seq": OUT_OF_TURN,
    "two envelopes at one seq": "equivocation",
    "a card dealt to another seat": "belongs to seat|not a card of seat",
    "a forged deal share": "share proof",
    "a reveal that does not match the commitment": "commitment",
    "a shuffle not derived from its seed": "does not match the seed",
    "a forged share of a card played": "share proof",
    "a forged share of a card turned up": "share proof",
    "a face-down card not yet turned up": "did not open",
}
# Cheats that only one of the variants has a moment for.
THREE_HANDED_ONLY: dict[str, Callable[[], Cheat]] = {
    # A play's own share is the share of another of its cards (a two-handed play carries
    # no share: its forged shares are those of the deal and of the turn-ups).
    "a forged share of a card played": lambda: ForeignCard(forge_share=True),
}
TWO_HANDED_ONLY: dict[str, Callable[[], Cheat]] = {
    "a forged share of a card turned up": ForgedOpen,
    "a face-down card not yet turned up": HiddenCard,
}
CASES = [
    *[(v, name) for v in VARIANTS for name in SIGNED_CHEATS],
    *[("three-handed", name) for name in THREE_HANDED_ONLY],
    *[("two-handed", name) for name in TWO_HANDED_ONLY],
]


def make_cheat(name: str) -> Cheat:
    return {**SIGNED_CHEATS, **THREE_HANDED_ONLY, **TWO_HANDED_ONLY}[name]()


@pytest.mark.parametrize(("variant", "name"), CASES)
def test_a_signed_cheat_is_blamed_on_its_seat_by_every_peer(
    variant: str, name: str, tmp_path: Path
) -> None:
    t = play(make_cheat(name), variant=variant)
    cheater = cheater_of(variant)
    assert len(t.honest) == t.seats - 1 == RULE_SETS[variant].seats - 1
    assert_same_verdict(t, tmp_path, Outcome("fault", cheater))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert fault.seat == cheater
        assert re.search(REASONS[name], fault.reason), fault.reason
        # The evidence is the cheater's own signature, every piece of it.
        proof = signed_by(fault.evidence, t.ids[cheater])
        assert proof and len(proof) == len(fault.evidence)
    assert not t.rejections
    assert_never_named(t, tmp_path)


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_equivocation_is_proven_by_two_envelopes_at_one_seq(variant: str) -> None:
    """Three seats: one bid to seat 0, another to seat 1; each finds two envelopes at one
    seq, or the next envelope chained to the version it does not hold. Two seats: the only
    other peer is the victim, so it gets both (the second right after the first, as a seat
    would show it on a reconnection hoping to rewrite its history): it holds two signatures
    at one seq, which is what an equivocation is whoever sees them."""
    cheat = Equivocate(victim=0)
    t = play(cheat, variant=variant)
    assert cheat.pair is not None
    assert cheat.pair[0].type == ("bid" if variant == "three-handed" else "play")
    key = t.ids[cheater_of(variant)].public_key_bytes
    for seat in t.honest:
        (fault,) = t.faults(seat)
        pieces = sorted((Envelope.decode(e) for e in fault.evidence), key=lambda e: e.seq)
        assert len(pieces) == 2 and all(p.sender == key for p in pieces)
        first, second = pieces
        if first.seq == second.seq:
            assert first != second
            assert {first.hash, second.hash} == {e.hash for e in cheat.pair}
        else:
            # A peer that accepted one version first sees the next envelope of the cheater
            # chained to the other: it does not follow the one held.
            assert second.seq == first.seq + 1 and second.prev != first.hash
            assert first.hash in {e.hash for e in cheat.pair}


def test_a_face_down_card_played_is_the_one_not_turned_up(tmp_path: Path) -> None:
    cheat = HiddenCard()
    t = play(cheat, variant="two-handed")
    (fault,) = t.faults(0)
    assert f"position {cheat.position} did not open" in fault.reason
    assert t.sessions[0].deck is not None
    assert t.sessions[0].deck.card_at(cheat.position or 0) is None


# -- bytes that are no envelope: refused, cost the connection, the game goes on ---------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_forged_signature_is_refused_and_the_game_goes_on(variant: str, tmp_path: Path) -> None:
    t = play(ForgedSignature(at=6), variant=variant)
    cheater = cheater_of(variant)
    for seat in t.honest:
        assert t.rejected(seat) == [int(s == cheater) for s in range(t.seats)]
    assert t.rejections and all(isinstance(r.error, BadSignature) for r in t.rejections)
    forged = {r.error.evidence[0] for r in t.rejections}
    assert len(forged) == 1
    assert not any(e.encode() in forged for s in range(t.seats) for e in t.sessions[s].transcript)
    assert_finished_cleanly(t, tmp_path)


@pytest.mark.parametrize("variant", VARIANTS)
def test_malformed_frames_are_refused_and_the_game_goes_on(variant: str, tmp_path: Path) -> None:
    t = play(Garbage(at=6), variant=variant)
    cheater = cheater_of(variant)
    for seat in t.honest:
        assert t.rejected(seat) == [int(s == cheater) for s in range(t.seats)]
        assert any(r == seat and s == cheater and "refused" in why for r, s, why in t.lost)
    assert {type(r.error) for r in t.rejections} <= {MalformedMessage, WrongTable}
    assert_finished_cleanly(t, tmp_path)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_replayed_envelope_is_ignored(variant: str, tmp_path: Path) -> None:
    cheat = Replay(resign_body=False)
    t = play(cheat, variant=variant)
    assert len(cheat.replayed) == 3
    assert not t.rejections
    assert_finished_cleanly(t, tmp_path)
    for seat in t.honest:
        hashes = [e.hash for e in t.sessions[seat].transcript]
        assert len(hashes) == len(set(hashes))


# -- silence: the others see whom they wait on, sign it gone, the game ends abandoned ---------


@pytest.mark.usefixtures("proofs_checked_once")
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("at", [3, 9, None])
def test_a_silent_seat_is_abandoned_and_no_honest_one(
    variant: str, at: int | None, tmp_path: Path
) -> None:
    """Silent from its ``at``-th envelope on (None: from its first reveal). With three seats
    both honest peers sign it gone; with two the one other peer's signature is enough."""
    t = play(Silence(at=at), variant=variant, target=501)
    cheater = cheater_of(variant)
    assert t.outcomes() == [Outcome("stalled", None)] * len(t.honest)
    vote_out(t, cheater)
    assert_same_verdict(t, tmp_path, Outcome("abandoned", cheater))
    assert_never_named(t, tmp_path)


# -- two peers collude against the third (three seats) ----------------------------------------

HONEST = 0
COLLUDERS = (1, 2)


def test_colluders_signing_a_false_final_score_are_named_not_the_third(tmp_path: Path) -> None:
    """Both sign the final score with 100 more points for seat 1 (they agree with each
    other): the honest peer names one of them, and so does its transcript."""
    lies = FalseScore(favoured=1, seat=1), FalseScore(favoured=1)
    # A deal (of deck v5) whose game lets both false scores reach the honest peer's record.
    t = Table(lies[0], variant="three-handed", accomplices=lies[1:], deal_seed=9)
    t.run()
    while t.deliver_one():  # the other colluder's score, once the honest peer has stopped
        pass
    assert all(lie.done for lie in lies)
    assert t.honest == [HONEST]
    lie = list(t.sessions[HONEST].state.scores)
    lie[1] += 100
    dones = [e for e in t.sessions[HONEST].transcript if e.type == "done"]
    assert {e.sender for e in dones} == {t.ids[s].public_key_bytes for s in (HONEST, *COLLUDERS)}
    assert all(e.body["scores"] == lie for e in dones if e.sender != t.ids[HONEST].public_key_bytes)
    outcome = t.outcome(HONEST)
    assert outcome.kind == "fault" and outcome.seat in COLLUDERS
    (fault,) = t.faults(HONEST)
    assert "ends the game with scores" in fault.reason
    assert signed_by(fault.evidence, t.ids[fault.seat])
    (verdict,) = t.verdicts(tmp_path).values()
    assert verdict_outcome(verdict) == outcome
    assert_never_named(t, tmp_path)


def test_colluders_reporting_a_false_fault_of_the_third_prove_nothing(tmp_path: Path) -> None:
    """Both sign a fault report naming the honest seat, with its genuine envelopes (and one
    altered) as evidence: the report's seat is the accuser's word, the evidence is checked
    and proves nothing, and the game goes on to its end."""
    reports = FalseReport(victim=HONEST, seat=1), FalseReport(victim=HONEST)
    t = play(*reports, variant="three-handed")
    assert all(r.report is not None and r.report.body["seat"] == HONEST for r in reports)
    held = {e.hash for e in t.sessions[HONEST].transcript}
    assert all(r.report is not None and r.report.hash in held for r in reports)
    assert_finished_cleanly(t, tmp_path)
    assert t.sessions[HONEST].fault is None
    assert_never_named(t, tmp_path)


@pytest.mark.parametrize("at", [5, None])
def test_colluders_withholding_together_leave_the_third_waiting_unnamed(
    at: int | None, tmp_path: Path
) -> None:
    """Both fall silent (from their ``at``-th envelope, or from their first reveal). The
    honest peer waits on them; its signature that one is gone needs the other's too, so the
    game ends with nobody named (the peer gives up on its own clock, PROTOCOL.md §10). Its
    transcript verifies as an unfinished game, and names nobody."""
    t = play(Silence(at=at, seat=1), Silence(at=at), variant="three-handed", target=501)
    session = t.sessions[HONEST]
    assert session.waiting_for() and session.waiting_for() <= set(COLLUDERS)
    for seat in COLLUDERS:
        session.abandon(seat)
        t.flush(HONEST)
    t.run()
    assert session.abandoned is None and session.fault is None
    assert t.outcomes() == [Outcome("stalled", None)]
    (verdict,) = t.verdicts(tmp_path).values()
    assert verdict_outcome(verdict) == Outcome("stalled", None)
    assert_never_named(t, tmp_path)


@pytest.mark.usefixtures("proofs_checked_once")
def test_colluders_both_claiming_a_false_belote_are_named_by_the_audit(tmp_path: Path) -> None:
    """Both claim a belote they do not hold, where nobody can tell before the round's
    audit: the audit names one of them, the honest peer's game goes on, rescored, and its
    transcript names the same colluder."""
    claims = FalseClaim(belote=True, seat=1), FalseClaim(belote=True)
    t = play(*claims, variant="three-handed", target=501)
    outcome = t.outcome(HONEST)
    assert outcome.kind == "audit" and outcome.seat in COLLUDERS
    assert t.sessions[HONEST].finished and t.sessions[HONEST].fault is None
    (verdict,) = t.verdicts(tmp_path).values()
    assert verdict_outcome(verdict) == outcome
    assert_never_named(t, tmp_path)


# -- a two-handed play out of turn, while the trick's turned-up cards are awaited ---------------


class OutOfTurnThenSilent(OutOfTurn):
    """Two-handed: plays out of turn (:class:`OutOfTurn`), then sends nothing more, to
    nobody: not its share of the cards the trick turns up, not a sync answer."""

    last: int | None = None
    """The seq of the card out of turn: the last envelope it sends."""

    def poll(self, table: Table) -> None:
        seq = table.sessions[self.seat].tracker.next_seq(self.seat)
        super().poll(table)
        if self.done and self.last is None:
            self.last = seq

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        if self.last is not None and envelope.seq > self.last:
            return {}
        return super().route(table, envelope)

    def reply(self, table: Table, dst: int, frames: list[bytes]) -> list[bytes]:
        return [] if self.done else frames


def test_a_card_out_of_turn_is_named_even_while_turned_up_cards_are_awaited(
    tmp_path: Path,
) -> None:
    """The honest peer completes the trick with its own card, so it awaits the cheater's
    share of the cards the trick turned up before it can apply any play; the cheater never
    sends it. The out-of-turn card is judged all the same once its causal past is processed
    (PROTOCOL.md §6.4): its turn and digest do not depend on the cards turned up. (The
    session used to hold the card until those cards opened: the game stalled, and the
    cheater would only have been abandoned.)"""
    cheat = OutOfTurnThenSilent()
    t = play(cheat, variant="two-handed")
    assert cheat.last is not None
    session = t.sessions[HONEST]
    assert session.state.pending_openings  # stopped while the turned-up cards were awaited
    assert_same_verdict(t, tmp_path, Outcome("fault", 1))
    (fault,) = t.faults(HONEST)
    assert re.search(OUT_OF_TURN, fault.reason), fault.reason
    (evidence,) = (Envelope.decode(x) for x in fault.evidence)
    assert evidence.type == "play" and evidence.seq == cheat.last
