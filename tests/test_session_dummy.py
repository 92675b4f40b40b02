"""A seat that leaves at four seats plays on, open, decided by its partner (PROTOCOL.md §6.7).

Four sessions over in-memory message passing (:class:`helpers.Net`): a resignation, a seat
signed gone by the three others' votes, a leave during the deal, a late card racing the
votes; every remaining record verifies alike, the leaver's own ends as left.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from helpers import HoldingNet, Net, make_table, table_sessions

from belote_p2p.game.engine import Claim, Phase
from belote_p2p.protocol.bodies import abandon_body, deck_body, play_body
from belote_p2p.protocol.deck import DeckPeer, PlayMessage, ReleaseMessage
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    GameAbandoned,
    PeerFault,
    SeatLeft,
)
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.verify import Verdict, verify_record
from belote_p2p.protocol.wire import Envelope

LEAVER = 1
PARTNER = 3

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


class LeavingNet(HoldingNet):
    """A :class:`helpers.HoldingNet` whose held seat may leave (:meth:`resign`), and that
    records who was asked for which seat."""

    def __init__(self, sessions: list[TableSession], rng: random.Random, held: int, after: int):
        super().__init__(sessions, rng, held, after)
        self.asked_for: list[tuple[int, int]] = []
        """(seat asked, seat whose decision it is)."""

    def decide(self, seat: int, event: DecisionNeeded) -> None:
        self.asked_for.append((seat, event.observation.seat))
        super().decide(seat, event)

    def resign(self) -> None:
        """The held seat resigns instead of answering."""
        self.sessions[self.held].abandon(self.held)
        self.pending = None
        self.flush(self.held)

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

    def run_out(self) -> None:
        """Deliver until every session is closed (the leaver's at the leave)."""
        self.deliver_until(lambda: all(s.closed for s in self.sessions), 400_000)


def _table(variant: str = "classic", seed: int = 3, after: int = 6) -> LeavingNet:
    """Seeded deals and delivery: each test plays one known game (the lone-vote test
    depends on who plays after the late move: a voter that leads next waits for the
    others' deadlines, which no test clock runs here)."""
    # Random coinche bids run high: a target that lasts a few rounds all the same.
    target = 4001 if variant == "coinche" else 501
    definition, ids = make_table(variant, target=target, seed=seed)
    net = LeavingNet(
        table_sessions(definition, ids, deal_seed=seed), random.Random(seed), LEAVER, after
    )
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
    net.resign()  # instead of deciding
    net.run_out()
    _check_played_out(net)
    # The partner's record resumes: its own plays for the dummy are derived again.
    partner = sessions[PARTNER]
    again = TableSession.resume(
        partner.definition, PARTNER, partner.identity,  # type: ignore[arg-type]
        [e.encode() for e in partner.transcript], partner.secrets,
    )  # fmt: skip
    assert again.completed and again.dummy == LEAVER and again.state.scores == partner.state.scores


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


def test_a_lone_vote_holds_the_late_move_only_until_a_seat_shows_it_went_on() -> None:
    """Seat 0 signs the seat gone alone; the late move reaches seats 2 and 3 before the vote
    does: they take it in and play on, and seat 0, which held it, takes it in once an
    envelope of theirs shows they went on past its vote's point (the vote can never gather).
    (Had they known the vote first, they would hold the move too, and their own deadlines
    would sign the seat gone: PROTOCOL.md §6.7.)"""
    net = _table(after=8)
    sessions = net.sessions
    assert sessions[0].abandon(LEAVER)  # alone, and not sent yet
    vote = sessions[0].take_outbox()
    before = (sessions[0].state.number, len(sessions[0].state.actions))
    net.after = 1 << 30  # it answers from now on
    net.release()
    while net.queues[LEAVER, 0]:
        net.deliver(LEAVER, 0)
    # Seat 0 signed a vote at the point the move passes: it holds the move for now.
    assert (sessions[0].state.number, len(sessions[0].state.actions)) == before
    for seat in (2, 3):
        start = sessions[seat].progress(LEAVER)
        while sessions[seat].progress(LEAVER) == start:
            net.deliver(*next((a, b) for a, b in net.in_flight() if b == seat))
    for other in (1, 2, 3):
        net.queues[0, other].extend(vote)
    net.run_out()
    assert all(s.dummy is None and s.completed and s.fault is None for s in sessions)


def test_a_leave_in_a_losing_round_does_not_save_it() -> None:
    """The round in progress is played to its end with the open hand and scored as played."""
    net = _table(after=10)
    sessions = net.sessions
    number = sessions[0].state.number
    net.resign()
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


def _partner_asked(net: Net, wanted: Callable[[DecisionNeeded], bool]) -> DecisionNeeded:
    """Deliver, the seats deciding as usual, until the partner is asked a decision that is
    ``wanted`` (left unanswered: the test's cheat answers it)."""
    cheat: DecisionNeeded | None = None

    def decide(seat: int, event: DecisionNeeded) -> None:
        nonlocal cheat
        if seat == PARTNER and cheat is None and wanted(event):
            cheat = event
            return
        Net.decide(net, seat, event)

    net.decide = decide  # type: ignore[method-assign]
    net.deliver_until(lambda: cheat is not None)
    assert cheat is not None
    return cheat


def test_the_partner_s_wrong_card_names_the_partner() -> None:
    net = _table(after=6)
    sessions = net.sessions
    net.resign()
    partner = sessions[PARTNER]

    def dummy_can_revoke(event: DecisionNeeded) -> bool:
        # The partner is asked to play a card of the dummy's, which holds an illegal one.
        o = event.observation
        return o.seat == LEAVER and o.phase is Phase.PLAY and any(c not in o.legal for c in o.hand)

    o = _partner_asked(net, dummy_can_revoke).observation
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
    net = LeavingNet(
        table_sessions(definition, ids, deal_seed=5), random.Random(5), LEAVER, 1 << 30
    )
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


def test_the_seat_views_show_the_open_hand_and_who_plays_it() -> None:
    """The seat view (terminal and page alike) of every live seat names the leave and shows
    the dummy's cards face up; the partner's turn for it is headed with the dummy's name."""
    from belote_p2p.app.tui import TableView

    net = _table(after=6)
    net.resign()
    asked: list[DecisionNeeded] = []
    original = net.decide

    def decide(seat: int, event: DecisionNeeded) -> None:
        if seat == PARTNER and event.observation.seat == LEAVER and not asked:
            asked.append(event)
            return
        original(seat, event)

    net.decide = decide  # type: ignore[method-assign]
    net.deliver_until(lambda: bool(asked))
    for seat, line in ((0, "p1 left; p3 plays p1's open hand"), (PARTNER, None)):
        view = TableView.from_definition(net.sessions[seat].definition, seat)
        for event in net.events[seat]:
            view.apply(event)  # type: ignore[arg-type]
        if line is not None:
            assert view.dummy_line == line
            assert set(view.open_hand()) == set(net.sessions[seat].state.hand(LEAVER))
            assert any(text.startswith("p1's open hand: ") for text in view.plain_lines())
    assert view.dummy_line == "p1 left; you play p1's open hand"
    assert view.my_turn() and view.deciding_for() == LEAVER
    assert view.turn_line().startswith("▶ Your turn for p1 (open hand)")
    assert set(view.shown_hand()) == set(asked[0].observation.hand)
    assert any(text.startswith("p1's open hand: ") for text in view.plain_lines())


# -- the leave rules, each against a cheater (PROTOCOL.md §5.1, §6.3, §6.6, §6.7) ----------


def _signed(session: TableSession, body: dict[str, object], **seen: bytes) -> Envelope:
    """``session``'s next envelope with ``body``, its ``seen`` as the session would sign it
    but for the entries given (``seat_N=hash``): a lie about its causal past. Kept in the
    session's chain and outbox, as if it had signed it."""
    me = session.seat
    assert me is not None and session.identity is not None
    tracker = session.tracker
    names = [tracker.last_hash(me) if s == me else session._last_processed[s] for s in range(4)]
    for key, value in seen.items():
        names[int(key.removeprefix("seat_"))] = value
    envelope = Envelope.create(
        session.identity, session.definition.table_id, tracker.next_seq(me),
        tracker.last_hash(me), names, body,
    )  # fmt: skip
    session._keep_own(envelope)
    return envelope


def _faulted(net: Net, culprit: int, reason: str, honest: tuple[int, ...]) -> None:
    """Every honest session, and the verification of every honest record, name ``culprit``
    (and, on a session, for ``reason``)."""
    original = net.decide

    def decide(seat: int, event: DecisionNeeded) -> None:
        if net.sessions[seat].fault is None:  # (the culprit's own session stopped itself)
            original(seat, event)

    net.decide = decide  # type: ignore[method-assign]
    net.deliver_until(lambda: all(net.sessions[s].fault is not None for s in honest), 400_000)
    for seat in honest:
        fault = net.sessions[seat].fault
        assert fault is not None and fault.seat == culprit, (seat, fault)
        assert reason in fault.reason, fault.reason
        session = net.sessions[seat]
        verdict = verify_record(
            session.definition, [e.encode() for e in session.transcript], writer=seat
        )
        assert verdict.fault is not None and verdict.fault.seat == culprit, verdict.summary()
        assert verdict.summary().startswith(f"FAULT by seat {culprit} ")


def test_a_vote_whose_seen_goes_back_is_its_signer_s_fault_and_holds_nothing_for_ever() -> None:
    """Seat 3 took the late move in and said so (a chat naming it), then signs a vote that
    names the seat's chain before that move, to join the two others' votes there: were it
    counted at that point, the peers that hold the move would wait for ever (the vote
    cannot be processed before the move, which it holds), and a peer that took the move in
    would have played it while the others play the open hand. Its seen goes back: every
    other seat names seat 3, and so does every record."""
    net = _table(after=8)
    sessions = net.sessions
    for seat in (0, 2):
        assert sessions[seat].abandon(LEAVER)
    before = sessions[3]._last_processed[LEAVER]
    net.release()
    while net.queues[LEAVER, 3]:
        net.deliver(LEAVER, 3)
    assert sessions[3]._last_processed[LEAVER] != before  # it took the move in
    sessions[3].chat("here")
    _signed(sessions[3], abandon_body(LEAVER), seat_1=before)
    for seat in (0, 2, 3):
        net.flush(seat)
    _faulted(net, 3, "seen goes back", (0, 1, 2))


def test_a_release_of_a_seat_that_is_not_gone_is_its_sender_s_fault() -> None:
    """No seat left: seat 2 releases seat 0's cards (a release that lists no position, as
    one made before its sender's deal shares does, is harmless to the deck). It does not
    know any leave: the release is refused, naming seat 2, at every peer and in every
    record."""
    definition, ids = make_table("classic", target=501, seed=3)
    sessions = table_sessions(definition, ids, deal_seed=3)
    net = Net(sessions, random.Random(3))
    net.start()
    net.deliver_until(lambda: sessions[2].deck is not None)
    release = ReleaseMessage(2, 0, (), ())
    _signed(sessions[2], deck_body(sessions[2].deck.round_number, release))  # type: ignore[union-attr]
    net.flush(2)
    _faulted(net, 2, "not gone", (0, 1, 3))


def test_a_resignation_racing_the_votes_is_one_leave_everywhere() -> None:
    """Seats 0 and 2 sign seat 1 gone while it resigns: seat 3 takes the resignation in
    before any vote, seats 0 and 2 after their own. A resignation moves the seat's progress
    (it is a decision): seats 0 and 2 hold it behind their votes until seat 3's next
    envelope shows it went on past them, and then every seat has the same leave, decided by
    the same envelope, cut at the same point."""
    net = _table(after=8)
    sessions = net.sessions
    for seat in (0, 2):
        assert sessions[seat].abandon(LEAVER)
    net.resign()
    while net.queues[LEAVER, 3]:
        net.deliver(LEAVER, 3)
    assert sessions[3].dummy == LEAVER
    for seat in (0, 2, 3):
        net.flush(seat)
    net.run_out()
    _check_played_out(net)
    leaves = {tuple(e.hash for e in s._leave) for s in sessions if s.seat != LEAVER}
    assert len(leaves) == 1
    (deciding,) = leaves
    resignation = sessions[3]._leave[0]
    assert deciding == (resignation.hash,) and resignation.type == "abandon"
    assert len({s.left.round for s in sessions if s.left is not None}) == 1


def test_the_partner_playing_a_dummy_s_card_on_its_own_turn_is_its_fault() -> None:
    """After the leave the deck lets the partner play the dummy's cards; on its own turn
    it must play its own (a dummy's card there would leave the dummy a card short): its
    fault at every peer, on receipt, not at the audit."""
    net = _table(after=6)
    net.resign()
    partner = net.sessions[PARTNER]

    def own_turn_with_a_dummy_card_open(event: DecisionNeeded) -> bool:
        o, deck = event.observation, partner.deck
        return (
            o.seat == PARTNER and o.phase is Phase.PLAY and deck is not None
            and any(deck.card_at(p) for p in deck.positions_of(LEAVER) if p not in deck.played())
        )  # fmt: skip

    _partner_asked(net, own_turn_with_a_dummy_card_open)
    deck = partner.deck
    assert isinstance(deck, DeckPeer)
    position = next(
        p for p in deck.positions_of(LEAVER) if deck.card_at(p) and p not in deck.played()
    )
    card = deck.card_at(position)
    assert card is not None
    play = deck.play_for(LEAVER, position)
    _signed(partner, play_body(partner.state.number, play, partner.state.claim_for(card),
                               partner._digest))  # fmt: skip
    net.flush(PARTNER)
    _faulted(net, PARTNER, "not a card of seat 3", (0, 2))


def test_votes_signed_before_a_first_leave_count_after_it_alike_everywhere() -> None:
    """Seats 0 and 2 sign seat 3 gone; then seat 1 resigns. Once seat 1 is gone, seat 3's
    others are seats 0 and 2: seat 0 processes their votes before the resignation, seat 2
    after. Both find seat 3 gone at those votes (the second leave ends the game), cut at the
    same envelope."""
    net = _table(after=8)
    sessions = net.sessions
    for seat in (0, 2):
        assert sessions[seat].abandon(PARTNER)
    votes = {seat: sessions[seat].take_outbox() for seat in (0, 2)}
    net.resign()
    resignation = [net.queues[LEAVER, other] for other in range(4) if other != LEAVER]
    assert all(resignation)
    # Seat 0: seat 2's vote first, then the resignation. Seat 2: the other way round.
    for data in votes[2]:
        sessions[0].receive(data)
    while net.queues[LEAVER, 0]:
        net.deliver(LEAVER, 0)
    while net.queues[LEAVER, 2]:
        net.deliver(LEAVER, 2)
    for data in votes[0]:
        sessions[2].receive(data)
    for seat in (0, 2):
        session = sessions[seat]
        assert session.dummy == LEAVER and session.abandoned == PARTNER, seat
    cuts = [sessions[s].abandoned_state for s in (0, 2)]
    assert len({(c.number, c.actions, c.scores) for c in cuts if c is not None}) == 1
    for seat in (0, 2):
        session = sessions[seat]
        verdict = verify_record(
            session.definition, [e.encode() for e in session.transcript], writer=seat
        )
        assert verdict.abandoned == PARTNER and verdict.summary().startswith(
            f"ABANDONED by seat {PARTNER} "
        )


def test_a_dummy_s_action_that_does_not_know_the_leave_is_out_of_turn() -> None:
    """The partner acts for the dummy only once it knows the leave: every deciding
    envelope in its causal past (PROTOCOL.md §6.7, settled point 4). A card of the dummy's
    that it signs before it processed the resignation is out of turn, at a peer that
    processed the resignation first as at one that did not (where the dummy's turn is
    still the leaver's own)."""
    net = _table(after=6)
    partner = net.sessions[PARTNER]
    assert net.pending is not None and net.pending.observation.phase is Phase.PLAY
    net.resign()  # on its way: the partner has not processed it
    assert partner.dummy is None
    deck = partner.deck
    assert deck is not None
    position = next(p for p in deck.positions_of(LEAVER) if p not in deck.played())
    play = PlayMessage(PARTNER, position, None)
    _signed(partner, play_body(partner.state.number, play, Claim(), partner._digest))
    net.flush(PARTNER)
    _faulted(net, PARTNER, "acted out of turn", (0, 2))
