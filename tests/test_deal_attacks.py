"""Attacks on the deal and on blame: a cheater is named, an honest peer never is.

Each test plays four sessions in memory (seeded delivery, no clock) with one cheater, then
checks the verdict of every honest session and of every honest seat's transcript.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cheaters import (
    EarlyReveal,
    ForeignEnvelopes,
    HostImpostor,
    HostTwoTables,
    Outcome,
    SignedFlood,
    StackedDeck,
    Table,
    WrongShare,
    assert_finished_cleanly,
    assert_same_verdict,
    play,
    signed_by,
)

from belote_p2p.protocol.session import MAX_EARLY
from belote_p2p.protocol.wire import Envelope, UnknownSender, WrongTable

CHEATER = 3


# -- the deal ---------------------------------------------------------------------------------


def test_a_stacked_deck_is_refused_at_the_shuffle_by_every_peer(tmp_path: Path) -> None:
    """The last shuffler substitutes fresh encryptions in an order it chose: every honest
    peer refuses its shuffle message when it arrives, before any card is dealt."""
    t = play(StackedDeck())
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert "proof of shuffle" in fault.reason, fault.reason
        assert t.sessions[seat].state.phase.name == "DEAL"  # no card was dealt


@pytest.mark.parametrize("owner", [1, 2])
def test_a_wrong_share_for_another_seats_card_is_the_same_fault_everywhere(
    owner: int, tmp_path: Path
) -> None:
    """Seat 3 spoils a share of seat ``owner``'s card: all three honest peers check it on
    receipt and blame seat 3 at the same step (none votes anybody out)."""
    t = play(WrongShare(owner))
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert "share" in fault.reason, fault.reason
        assert not t.abandoned_events(seat)


# -- envelopes of another table ----------------------------------------------------------------


def test_foreign_envelopes_relayed_ahead_of_sequence_cost_only_the_relaying_connection(
    tmp_path: Path,
) -> None:
    cheat = ForeignEnvelopes(victim=0, named=1)
    t = play(cheat)
    assert cheat.foreign
    refused = [r for r in t.rejections if r.receiver == 0]
    # The first costs the connection; the others were lost with it.
    assert len(refused) == 1 and len(cheat.foreign) > 1
    assert all(isinstance(r.error, WrongTable) and r.connection == CHEATER for r in refused)
    assert t.rejected(0)[1] == 0  # nothing is counted against the seat the envelopes name
    assert all(not t.sessions[0]._early.get(s) for s in range(4))  # nothing of them is held
    assert_finished_cleanly(t, tmp_path)


# -- what the host proposes --------------------------------------------------------------------


def test_a_host_that_proposes_two_tables_is_named_with_both_of_its_signatures(
    tmp_path: Path,
) -> None:
    cheat = HostTwoTables(victim=2)
    t = play(cheat)
    expected = Outcome("fault", 0)
    assert t.outcomes() == [expected] * 3
    host = t.ids[0].public_key_bytes
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert "two different table definitions" in fault.reason
        pieces = [Envelope.decode(e) for e in fault.evidence]
        proposals = {p.body["proposal"] for p in pieces}
        digests = {p.body["digest"] for p in pieces}
        assert len(proposals) == 2 and len(digests) == 2
        for piece in pieces:
            definition = t.sessions[seat].definition
            assert definition.host_key == host
            assert definition.proposed_by_host(piece.body["proposal"], piece.body["digest"])
    verdicts = t.verdicts(tmp_path)
    for seat, verdict in verdicts.items():
        assert verdict.fault is not None and verdict.fault.seat == 0, (seat, verdict.summary())
    assert verdicts[2].definition.rules.target == 1001  # the framed joiner's own record


def test_a_table_signed_under_someone_posing_as_the_host_blames_nobody(tmp_path: Path) -> None:
    t = play(HostImpostor(victim=2))
    assert t.outcomes() == [Outcome("disputed", None)] * 3
    for seat in t.honest:
        session = t.sessions[seat]
        assert session.fault is None and session.disputed is not None
        assert session.closed and not session.completed
    # The victim refused the real host's envelopes (an unknown key), on the connection only.
    assert all(isinstance(r.error, UnknownSender) for r in t.rejections if r.receiver == 2)
    for verdict in t.verdicts(tmp_path).values():
        assert verdict.fault is None and verdict.disputed is not None and not verdict.ok
        assert verdict.summary().startswith("NO GAME")


# -- secrets out of turn ----------------------------------------------------------------------


def test_an_early_reveal_is_a_fault_and_is_answered_with_no_secret(tmp_path: Path) -> None:
    t = play(EarlyReveal())
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert "revealed its secrets before the round ended" in fault.reason
        (evidence,) = (Envelope.decode(e) for e in fault.evidence)
        assert evidence.body["msg"]["type"] == "deck.reveal"
        # Not one honest seat revealed anything: the cheater learns no other hand.
        for envelope in t.sessions[seat].transcript:
            sender = t.sessions[seat].tracker.seat_of(envelope.sender)
            if sender != CHEATER and envelope.type == "deck":
                assert envelope.body["msg"]["type"] != "deck.reveal"


# -- signed floods -----------------------------------------------------------------------------

FLOOD_REASONS = {
    "big": r"a bid envelope of \d+ bytes",
    "faults": "more than 2 fault messages in one game",
    "stuck": r"more than 16 deck messages in round 0",
    "ahead": "a message for round 5 out of turn",
}


@pytest.mark.parametrize("kind", sorted(FLOOD_REASONS))
def test_a_signed_flood_is_a_fault_of_the_flooder(kind: str, tmp_path: Path) -> None:
    cheat = SignedFlood(kind)
    t = play(cheat)
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert re.search(FLOOD_REASONS[kind], fault.reason), fault.reason
        assert signed_by(fault.evidence, t.ids[CHEATER])
        session = t.sessions[seat]
        # What waits in memory stays bounded: at most the caps of one round.
        assert len(session._pending) <= 24
        assert sum(len(held) for held in session._early.values()) <= MAX_EARLY


@pytest.mark.parametrize("kind", ["big", "stuck"])
def test_a_flood_sent_to_one_victim_reaches_the_same_verdict_everywhere(
    kind: str, tmp_path: Path
) -> None:
    """The flooder says nothing more to the others: they fetch its envelopes from the
    victim, which keeps answering after its fault until the others report theirs."""
    cheat = SignedFlood(kind, targets=(0,))
    t = Table(cheat)
    t.run(sync_rounds=5)
    assert cheat.done
    assert_same_verdict(t, tmp_path, Outcome("fault", CHEATER))
    assert all(t.sessions[s].closed for s in t.honest)
