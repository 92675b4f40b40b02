"""A seat that leaves at four seats plays on, open, decided by its partner (PROTOCOL.md §6.7).

Four sessions over in-memory message passing (:class:`helpers.Net`): a resignation, a seat
signed gone by the three others' votes, a leave during the deal, a late card racing the
votes; every remaining record verifies alike, the leaver's own ends as left.
"""

from __future__ import annotations

import random

import pytest
from helpers import Net, make_table, table_sessions

from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Phase
from belote_p2p.protocol.bodies import play_body
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    GameAbandoned,
    PeerFault,
    SeatLeft,
)
from belote_p2p.protocol.session import SessionPhase, TableSession
from belote_p2p.protocol.verify import Verdict, verify_record

LEAVER = 1
PARTNER = 3


class LeavingNet(Net):
    """A net whose seat ``held`` stops answering at its ``after``-th decision (until told,
    :meth:`release`), and records who was asked for which seat."""

    def __init__(self, sessions: list[TableSession], rng: random.Random, held: int, after: int):
        super().__init__(sessions, rng)
        self.held, self.after = held, after
        self.asked = 0
        self.pending: DecisionNeeded | None = None
        self.asked_for: list[tuple[int, int]] = []
        """(seat asked, seat whose decision it is)."""
        self.wrong_card: Card | None = None
        """If set, the partner's next dummy card is replaced by this one (signed as is)."""

    def decide(self, seat: int, event: DecisionNeeded) -> None:
        self.asked_for.append((seat, event.observation.seat))
        if seat == self.held:
            self.asked += 1
            if self.asked >= self.after:
                self.pending = event
                return
        super().decide(seat, event)

    def release(self) -> None:
        assert self.pending is not None
        event, self.pending = self.pending, None
        Net.decide(self, self.held, event)

    def deliver(self, a: int, b: int) -> None:
        """As :meth:`Net.deliver`, but a seat that left is gone: it stops at the leave (its
        peer stops there), and what comes to it is lost."""
        if self.sessions[b].left is not None and self.sessions[b].dummy == b:
            self.queues[a, b].popleft()
            return
        super().deliver(a, b)

    def sync(self) -> None:
        super().sync()
        if self.sessions[self.held].dummy == self.held:
            for other in range(self.n):
                if other != self.held:
                    self.queues[self.held, other].clear()  # nor does it ask

    def run_out(self, limit: int = 400_000) -> None:
        """Deliver (syncing when nothing moves) until every session but the leaver's is
        closed (the leaver's stops at the leave)."""
        steps, synced = 0, False
        while not all(s.closed for s in self.sessions):
            busy = self.in_flight()
            if not busy:
                assert not synced, "deadlock: nothing in flight even after a sync"
                self.sync()
                synced = True
                continue
            synced = False
            self.deliver(*self.rng.choice(busy))
            steps += 1
            assert steps < limit


def _table(variant: str = "classic", seed: int = 3, after: int = 6) -> LeavingNet:
    # Random coinche bids run high: a target that lasts a few rounds all the same.
    target = 4001 if variant == "coinche" else 501
    definition, ids = make_table(variant, target=target, seed=seed)
    net = LeavingNet(table_sessions(definition, ids), random.Random(seed), LEAVER, after)
    net.start()
    while net.pending is None:
        net.step()
    return net


def _records(net: LeavingNet) -> dict[int, Verdict]:
    return {
        s.seat: verify_record(s.definition, [e.encode() for e in s.transcript], writer=s.seat)
        for s in net.sessions
        if s.seat is not None
    }


def _check_played_out(net: LeavingNet) -> None:
    sessions = net.sessions
    live = [s for s in sessions if s.seat != LEAVER]
    assert all(s.fault is None for s in sessions), [s.fault for s in sessions]
    assert all(s.dummy == LEAVER and s.abandoned is None for s in sessions)
    assert all(s.completed and s.state.is_over for s in live)
    assert len({s.state.scores for s in live}) == 1
    assert len({tuple((r.number, r.score) for r in s.state.history) for s in live}) == 1
    leaver = sessions[LEAVER]
    assert leaver.finished and not leaver.completed
    # The partner was asked for the dummy's decisions, from the dummy's observation.
    assert (PARTNER, LEAVER) in net.asked_for
    assert all(
        seat == PARTNER for seat, whose in net.asked_for if whose == LEAVER and seat != LEAVER
    )
    # The dummy's actions are reported as the dummy's, by every live seat.
    for seat in (0, 2, 3):
        assert any(isinstance(e, SeatLeft) and e.seat == LEAVER for e in net.events[seat])
        assert not any(isinstance(e, (GameAbandoned, PeerFault)) for e in net.events[seat])
    verdicts = _records(net)
    summaries = {verdicts[s].summary() for s in (0, 2, 3)}
    assert len(summaries) == 1, summaries
    summary = summaries.pop()
    assert summary.startswith("OK: ") and f"seat {LEAVER} (" in summary, summary
    assert all(verdicts[s].ok and verdicts[s].finished for s in (0, 2, 3))
    own = verdicts[LEAVER]
    assert own.ok and own.left_here and own.summary().startswith(f"LEFT: seat {LEAVER} ")


@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_a_resignation_leaves_a_dummy_and_the_game_goes_on(variant: str) -> None:
    net = _table(variant, after=12)  # in round 2 or later
    sessions = net.sessions
    assert sessions[0].state.number >= 1
    sessions[LEAVER].abandon(LEAVER)  # resigns instead of deciding
    net.pending = None
    net.flush(LEAVER)
    net.run_out()
    _check_played_out(net)


def test_a_seat_signed_gone_by_votes_becomes_the_dummy() -> None:
    net = _table(after=8)
    sessions = net.sessions
    for seat in (0, 2, 3):
        assert sessions[seat].abandon(LEAVER)
        net.flush(seat)
    assert not sessions[0].abandon(LEAVER) and not sessions[0].abandon(LEAVER)
    net.run_out()
    _check_played_out(net)
    # Nobody votes against a dummy; the leaver's own session stopped at the leave.
    assert not sessions[0].abandon(LEAVER)
    assert sessions[LEAVER].left is not None


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_late_move_racing_the_votes_is_no_move(seed: int) -> None:
    """Every other seat signed the seat gone while its move was on the way, and seat 0 got
    the move before the last vote: it holds it (its own vote could still gather), so every
    seat plays the open hand from where the votes saw the game."""
    net = _table(after=8, seed=seed)
    sessions = net.sessions
    for seat in (0, 2, 3):
        sessions[seat].abandon(LEAVER)
    waiting = [len(s.state.actions) for s in sessions]
    net.release()  # the leaver's move, queued to everyone, behind nothing
    net.deliver(LEAVER, 0)  # seat 0 has it before the votes
    assert len(sessions[0].state.actions) == waiting[0]  # held, not played on
    for seat in (0, 2, 3):
        net.flush(seat)
    net.run_out()
    _check_played_out(net)


def test_a_vote_nobody_joins_holds_the_late_move_only_until_a_seat_shows_it_went_on() -> None:
    net = _table(after=8)
    sessions = net.sessions
    assert sessions[0].abandon(LEAVER)  # alone
    net.flush(0)
    before = (sessions[0].state.number, len(sessions[0].state.actions))
    net.after = 1 << 30  # it answers from now on
    net.release()
    net.deliver(LEAVER, 0)
    # Seat 0 signed a vote at the point the move passes: it holds the move for now.
    assert (sessions[0].state.number, len(sessions[0].state.actions)) == before
    net.run_out()
    # The next seat took the move in and played on: the vote can never gather.
    assert all(s.dummy is None and s.completed and s.fault is None for s in sessions)


def test_a_leave_in_a_losing_round_does_not_save_it() -> None:
    """The round in progress is played to its end with the open hand and scored as played."""
    net = _table(after=10)
    sessions = net.sessions
    number = sessions[0].state.number
    sessions[LEAVER].abandon(LEAVER)
    net.pending = None
    net.flush(LEAVER)
    net.run_out()
    _check_played_out(net)
    record = next(r for r in sessions[0].state.history if r.number == number)
    assert record.score is not None or all(b.kind.value == "pass" for _, b in record.bids)
    # Every card of the round was played: the leaver's hand too, by its partner.
    if record.score is not None:
        assert len(record.tricks) == 8
        dummy_plays = [
            e
            for e in net.events[0]
            if isinstance(e, ActionTaken) and e.seat == LEAVER and e.state.number == number
        ]
        assert dummy_plays or record.tricks


def test_the_partner_s_wrong_card_names_the_partner() -> None:
    net = _table(after=6)
    sessions = net.sessions
    sessions[LEAVER].abandon(LEAVER)
    net.pending = None
    net.flush(LEAVER)
    partner = sessions[PARTNER]
    # Deliver until the partner is asked to play a card of the dummy's.
    cheat: DecisionNeeded | None = None

    def decide(seat: int, event: DecisionNeeded) -> None:
        nonlocal cheat
        o = event.observation
        if seat == PARTNER and o.seat == LEAVER and o.phase is Phase.PLAY and cheat is None:
            illegal = [c for c in o.hand if c not in o.legal]
            if illegal:
                cheat = event
                return
        Net.decide(net, seat, event)

    net.decide = decide  # type: ignore[method-assign]
    while cheat is None:
        assert net.in_flight() or any(s.phase is not SessionPhase.CLOSED for s in sessions), (
            "no chance to cheat"
        )
        if not net.in_flight():
            net.sync()
        net.step()
    o = cheat.observation
    card = next(c for c in o.hand if c not in o.legal)
    deck = partner.deck
    assert deck is not None
    position = next(p for p in deck.positions_of(LEAVER) if deck.card_at(p) == card)
    play = deck.play_for(LEAVER, position)  # type: ignore[attr-defined]
    partner._send(play_body(o.number, play, partner.state.claim_for(card), partner._digest))
    net.flush(PARTNER)
    while net.in_flight():
        net.step()
    for seat in (0, 2):
        fault = sessions[seat].fault
        assert fault is not None and fault.seat == PARTNER, fault
        assert "illegal play" in fault.reason


def test_a_leave_before_the_leaver_s_shuffle_deals_the_round_again_face_up() -> None:
    definition, ids = make_table("classic", target=301, seed=5)
    net = LeavingNet(table_sessions(definition, ids), random.Random(5), LEAVER, 1 << 30)
    net.start()
    sessions = net.sessions
    while not sessions[LEAVER].ready:
        net.step()
    sessions[LEAVER].abandon(LEAVER)  # its key may be out, its split and shuffle are not
    net.flush(LEAVER)
    net.run_out()
    _check_played_out(net)
    # Each live seat sent two keys in round 0: the deal given up, and the deal again.
    for s in sessions:
        if s.seat != LEAVER:
            keys = [
                e
                for e in s.tracker.chain(s.seat)
                if e.type == "deck" and e.body["round"] == 0 and e.body["msg"]["type"] == "deck.key"
            ]
            assert len(keys) == 2
