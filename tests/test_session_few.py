"""Three and two table sessions play whole games in memory; their records verify alike.

Two-handed: no peer learns a face-down card before the engine turns it up. A peer that
forges or withholds its share of a card is named, never an honest one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import Net, check_turn_ups, make_table, table_sessions, write_transcript

from belote_p2p.game.engine import Claim, public_positions, under_position
from belote_p2p.protocol.bodies import play_body
from belote_p2p.protocol.deck import DeckPeer, DecryptionShare, OpenMessage, PlayMessage
from belote_p2p.protocol.events import DecisionNeeded, GameAbandoned, PeerFault, RoundAudited
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.verify import verify_record, verify_transcript
from belote_p2p.protocol.wire import Envelope


def play(variant: str, seed: int = 7, target: int = 301) -> tuple[list[TableSession], Net]:
    definition, ids = make_table(variant, target=target)
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(seed))
    net.run()
    return sessions, net


@pytest.mark.parametrize(("variant", "seats"), [("three-handed", 3), ("two-handed", 2)])
def test_a_whole_game_verifies_alike_from_every_seats_record(
    variant: str, seats: int, tmp_path: Path
) -> None:
    sessions, net = play(variant)
    assert len(sessions) == seats
    assert all(s.fault is None and s.completed for s in sessions)
    assert len({s.state.scores for s in sessions}) == 1
    assert len(sessions[0].state.scores) == seats  # one score per player: no teams
    assert max(sessions[0].state.scores) >= 301
    for seat in range(seats):
        audits = [e for e in net.events[seat] if isinstance(e, RoundAudited)]
        assert audits and all(a.report.clean for a in audits)
    verdicts = [
        verify_transcript(write_transcript(tmp_path / f"seat{s.seat}.transcript", s))
        for s in sessions
    ]
    assert all(v.ok and v.finished for v in verdicts)
    assert len({v.summary() for v in verdicts}) == 1
    summary = verdicts[0].summary()
    winner = sessions[0].state.winner
    assert winner is not None
    assert summary.startswith(f"OK: seat {winner} (p{winner} ")
    assert "-".join(str(x) for x in sessions[0].state.scores) in summary
    assert [r.record.score for r in verdicts[0].rounds] == [
        r.score for r in sessions[0].state.history
    ]


class Watched(Net):
    """Checks after every delivery that no peer knows a face-down card the engine has not
    turned up (two-handed)."""

    checks = 0

    def deliver(self, a: int, b: int) -> None:
        super().deliver(a, b)
        for session in self.sessions:
            deck = session.deck
            if not isinstance(deck, DeckPeer):
                continue
            public = set(public_positions(deck.rules, deck.dealer))
            turned_up = turned_up_positions(session)
            for p, card in enumerate(deck.known_cards()):
                if card is not None and p not in public:
                    assert p in turned_up, (session.seat, p)
                    self.checks += 1
            assert deck.requested() <= turned_up


def turned_up_positions(session: TableSession) -> set[int]:
    """The face-down positions the engine turned up so far in the current round: those
    under the face-up cards of every finished trick."""
    state = session.state
    deck = session.deck
    assert deck is not None
    if state.number != deck.round_number:  # the round is over: every card was turned up
        return set(range(32))
    played = {c: p for p, c in enumerate(state.deck) if c is not None}
    out: set[int] = set()
    for trick in state.tricks:
        for card in trick.cards:
            under = under_position(state.rules, state.dealer, played[card])
            if under is not None:
                out.add(under)
    return out


def test_no_peer_learns_a_face_down_card_before_it_is_turned_up() -> None:
    definition, ids = make_table("two-handed", target=301)
    sessions = table_sessions(definition, ids)
    net = Watched(sessions, random.Random(3))
    net.run()
    assert all(s.completed for s in sessions)
    assert net.checks > 100
    # In each record: the shares of a face-down position come only after the trick that
    # turned it up, from both seats.
    for session in sessions:
        assert check_turn_ups(definition, list(session.transcript)) > 16


def patch_deck(session: TableSession, change: Callable[[DeckPeer], None]) -> None:
    """Apply ``change`` to each round's deck of ``session`` as it is created."""
    original = session._new_deck

    def new_deck(state: Any) -> Any:
        deck = original(state)
        assert isinstance(deck, DeckPeer)
        change(deck)
        return deck

    session._new_deck = new_deck  # type: ignore[method-assign]


def forge_open(deck: DeckPeer) -> None:
    real = deck.open

    def forged(positions: Any) -> OpenMessage:
        msg = real(positions)
        bad = DecryptionShare(deck.public_key, msg.shares[0].proof)
        return OpenMessage(msg.seat, msg.positions, (bad, *msg.shares[1:]))

    deck.open = forged  # type: ignore[method-assign]


@pytest.mark.parametrize("cheater", [0, 1])
def test_a_forged_turn_up_share_is_named_and_the_honest_peer_is_not(
    cheater: int, tmp_path: Path
) -> None:
    definition, ids = make_table("two-handed", target=301)
    sessions = table_sessions(definition, ids)
    patch_deck(sessions[cheater], forge_open)
    honest = 1 - cheater
    net = Net(sessions, random.Random(5))
    net.run(honest=(honest,))
    fault = sessions[honest].fault
    assert fault is not None and fault.seat == cheater
    assert "share proof" in fault.reason
    faults = [e for e in net.events[honest] if isinstance(e, PeerFault)]
    assert [f.seat for f in faults] == [cheater]
    verdict = verify_transcript(write_transcript(tmp_path / "honest", sessions[honest]))
    assert verdict.fault is not None and verdict.fault.seat == cheater
    # The evidence alone (the cheater's signed envelopes) proves it.
    assert all(Envelope.decode(e).sender == ids[cheater].public_key_bytes for e in fault.evidence)


def withhold_opens(deck: DeckPeer) -> None:
    def withheld(positions: Any) -> None:
        deck._request_open(positions)  # turned up for us, but our share never goes out

    deck.open = withheld  # type: ignore[method-assign, assignment]


def test_a_withheld_turn_up_share_is_waited_for_and_its_author_abandoned(
    tmp_path: Path,
) -> None:
    cheater, honest = 1, 0
    definition, ids = make_table("two-handed", target=301)
    sessions = table_sessions(definition, ids)
    patch_deck(sessions[cheater], withhold_opens)
    net = Net(sessions, random.Random(11))
    net.start()
    while net.in_flight():
        net.step()
    waiting = sessions[honest].waiting_for()
    assert waiting == frozenset({cheater})
    deck = sessions[honest].deck
    assert deck is not None and deck.requested()
    assert all(deck.card_at(p) is None for p in deck.requested())
    # Past its grace period, the honest peer signs that the cheater is gone: with two
    # seats that one signature ends the game.
    sessions[honest].abandon(cheater)
    net.flush(honest)
    assert sessions[honest].abandoned == cheater
    assert any(isinstance(e, GameAbandoned) for e in net.events[honest])
    verdict = verify_record(
        definition, [e.encode() for e in sessions[honest].transcript], truncated=False
    )
    assert verdict.abandoned == cheater and verdict.fault is None
    assert verdict.summary().startswith(f"ABANDONED by seat {cheater}")


def forge_turned_share(deck: DeckPeer) -> None:
    real = deck._prove_share

    def forged(position: int, share: bytes) -> bytes:
        return real(position - 1 if position == 15 else position, share)

    deck._prove_share = forged  # type: ignore[method-assign]


def test_a_forged_share_of_the_three_handed_turned_card_is_named_by_both_others(
    tmp_path: Path,
) -> None:
    cheater = 2
    definition, ids = make_table("three-handed", target=301)
    sessions = table_sessions(definition, ids)
    patch_deck(sessions[cheater], forge_turned_share)
    net = Net(sessions, random.Random(2))
    net.run(honest=(0, 1))
    for seat in (0, 1):
        fault = sessions[seat].fault
        assert fault is not None and fault.seat == cheater, (seat, fault)
        assert "position 15" in fault.reason
        verdict = verify_transcript(write_transcript(tmp_path / f"s{seat}", sessions[seat]))
        assert verdict.fault is not None and verdict.fault.seat == cheater


def test_three_handed_abandonment_takes_both_other_seats() -> None:
    definition, ids = make_table("three-handed", target=301)
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(4))
    net.start()
    for b in (0, 1):  # seat 2 signs the table, then falls silent
        while net.queues[2, b]:
            net.deliver(2, b)

    def deliver_all_but_seat_2() -> None:
        while busy := [(a, b) for a, b in net.in_flight() if a != 2]:
            net.deliver(*busy[0])

    deliver_all_but_seat_2()
    assert sessions[0].waiting_for() == frozenset({2})
    sessions[0].abandon(2)
    net.flush(0)
    deliver_all_but_seat_2()
    assert sessions[0].abandoned is None and sessions[1].abandoned is None  # one vote of two
    sessions[1].abandon(2)
    net.flush(1)
    deliver_all_but_seat_2()
    assert sessions[0].abandoned == sessions[1].abandoned == 2
    verdict = verify_record(definition, [e.encode() for e in sessions[0].transcript])
    assert verdict.abandoned == 2 and verdict.ok


class HiddenCardPlayer(Net):
    """Seat ``cheater``, at its first decision, plays one of its face-down cards that no
    trick has turned up: a signed play whose card nobody (the cheater included) can open."""

    cheater = 1
    cheated: int | None = None

    def decide(self, seat: int, event: DecisionNeeded) -> None:
        if seat != self.cheater or self.cheated is not None:
            super().decide(seat, event)
            return
        s = self.sessions[seat]
        deck = s.deck
        assert isinstance(deck, DeckPeer)
        hidden = next(p for p in range(32) if deck.owner_of(p) == seat and deck.card_at(p) is None)
        self.cheated = hidden
        play = PlayMessage(seat, hidden, None)
        s._send(play_body(s.state.number, play, Claim((), False), s._digest))
        self.flush(seat)


def test_a_play_of_a_card_not_turned_up_is_named() -> None:
    definition, ids = make_table("two-handed", target=301)
    sessions = table_sessions(definition, ids)
    net = HiddenCardPlayer(sessions, random.Random(8))
    net.run(honest=(0,))
    assert net.cheated is not None
    fault = sessions[0].fault
    assert fault is not None and fault.seat == 1, fault
    assert f"position {net.cheated} did not open" in fault.reason
    verdict = verify_record(definition, [e.encode() for e in sessions[0].transcript])
    assert verdict.fault is not None and verdict.fault.seat == 1
