"""Four table sessions play whole games over in-memory message passing."""

from __future__ import annotations

import random

import pytest
from helpers import HoldingNet, Net, make_table, table_sessions

from belote_p2p.game.rules import RULE_SETS
from belote_p2p.protocol.bodies import encode_sync, fault_body
from belote_p2p.protocol.events import (
    DecisionNeeded,
    GameAbandoned,
    GameOver,
    PeerFault,
    RoundAudited,
)
from belote_p2p.protocol.secretstore import MemorySecrets
from belote_p2p.protocol.session import SessionError, TableSession
from belote_p2p.protocol.wire import ZERO_HASH, Envelope

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


# Four-seat rule sets: the deck protocol and the session for two and three seats are the
# few-deck branch's.
@pytest.mark.parametrize("variant", sorted(n for n, r in RULE_SETS.items() if r.seats == 4))
def test_four_sessions_play_a_whole_game(variant: str) -> None:
    definition, ids = make_table(variant, target=301)
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(7))
    net.run()
    assert all(s.fault is None for s in sessions)
    final = [s.state for s in sessions]
    assert all(f.is_over for f in final)
    assert len({f.scores for f in final}) == 1
    # Every peer saw the same rounds, with the same scores.
    assert len(sessions) == definition.rules.seats
    for seat in range(len(sessions)):
        audits = [e for e in net.events[seat] if isinstance(e, RoundAudited)]
        assert audits and all(a.report.clean for a in audits)
        assert any(isinstance(e, GameOver) for e in net.events[seat])
    histories = [[(r.number, r.score) for r in f.history] for f in final]
    assert all(h == histories[0] for h in histories)
    # The transcripts hold the same envelopes (in each peer's own arrival order).
    sets = [{e.hash for e in s.transcript} for s in sessions]
    assert all(x == sets[0] for x in sets)
    assert not any(isinstance(e, PeerFault) for evs in net.events for e in evs)


def play_with_crash(
    crash_at: int | None, variant: str = "classic", crashed: int = 2
) -> tuple[list[TableSession], Net]:
    definition, ids = make_table(variant, target=201)
    sessions = table_sessions(definition, ids, deal_seed=5)
    others = [s for s in range(len(sessions)) if s != crashed]
    stores = [s.secrets for s in sessions]
    net = Net(sessions, random.Random(3))
    net.start()
    steps = 0
    while not all(s.finished for s in sessions):
        if steps == crash_at:
            # A seat dies: what was in flight to it is lost; it restarts from its own record.
            recorded = [e.encode() for e in sessions[crashed].transcript]
            for other in others:
                net.queues[other, crashed].clear()
            sessions[crashed] = TableSession.resume(
                definition, crashed, ids[crashed], recorded, stores[crashed]
            )
            net.sessions = sessions
            net.flush(crashed)
            # On reconnection the others send what they have; duplicates are ignored.
            for other in others:
                for e in sessions[other].transcript:
                    net.queues[other, crashed].append(e.encode())
        busy = net.in_flight()
        assert busy, "deadlock"
        a, b = net.rng.choice(busy)
        net.deliver(a, b)
        steps += 1
    assert crash_at is None or steps > crash_at, "the game ended before the crash"
    return sessions, net


@pytest.mark.parametrize("crash_at", [40, 300, 340])
def test_a_crashed_peer_resumes_and_the_game_ends_as_without_the_crash(crash_at: int) -> None:
    clean, _ = play_with_crash(None)
    crashed, _ = play_with_crash(crash_at)
    assert all(s.fault is None for s in crashed)
    assert [s.state.scores for s in crashed] == [clean[0].state.scores] * 4
    moves = [[r.actions for r in s.state.history] for s in (clean[0], crashed[2])]
    assert moves[0] == moves[1]


@pytest.mark.parametrize(("variant", "crashed"), [("three-handed", 2), ("two-handed", 1)])
@pytest.mark.parametrize("crash_at", [30, 100])
def test_a_crashed_peer_of_three_or_two_resumes_as_without_the_crash(
    variant: str, crashed: int, crash_at: int
) -> None:
    clean, _ = play_with_crash(None, variant, crashed)
    again, _ = play_with_crash(crash_at, variant, crashed)
    assert all(s.fault is None and s.completed for s in again)
    assert [s.state.scores for s in again] == [clean[0].state.scores] * len(again)
    moves = [[r.actions for r in s.state.history] for s in (clean[0], again[crashed])]
    assert moves[0] == moves[1]


def test_resume_refuses_a_transcript_it_did_not_write() -> None:
    definition, ids = make_table("classic")
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(1))
    net.start()
    for _ in range(60):
        net.step()
    recorded = [e.encode() for e in sessions[1].transcript]
    with pytest.raises(SessionError, match="cannot resume"):
        TableSession.resume(definition, 1, ids[1], recorded, MemorySecrets())


def test_a_second_leave_ends_the_game() -> None:
    """At four seats the first seat gone is a dummy (test_session_dummy.py); the second one
    ends the game, abandoned by it."""
    definition, ids = make_table("coinche")
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(2))
    net.start()
    sessions[3].abandon(3)  # seat 3 resigns: its partner plays its open hand
    net.flush(3)
    while not all(s.dummy == 3 for s in sessions):
        net.step()
    assert all(s.abandoned is None for s in sessions)
    assert not sessions[0].abandon(3)  # nobody votes against a dummy
    sessions[0].abandon(0)  # and seat 0 resigns too
    net.flush(0)
    while not all(s.finished for s in sessions if s.seat != 3):
        net.step()
    assert all(s.abandoned == 0 for s in sessions if s.seat != 3)
    assert all(any(isinstance(e, GameAbandoned) for e in net.events[s]) for s in (0, 1, 2))
    # The others must be three to declare a silent seat gone.
    sessions = table_sessions(definition, ids)
    for s in sessions:
        s.start()
    outs = {i: sessions[i].take_outbox() for i in range(4)}
    for i in range(4):
        for j in range(4):
            if i != j:
                for data in outs[j]:
                    sessions[i].receive(data)
    sessions[0].abandon(1)
    sessions[2].abandon(1)
    votes = sessions[0].take_outbox() + sessions[2].take_outbox()
    for data in votes:
        sessions[3].receive(data)
    assert sessions[3].abandoned is None
    sessions[3].abandon(1)
    assert sessions[3].dummy == 1 and sessions[3].abandoned is None


def test_equivocation_is_caught_through_sync_with_the_same_verdict_everywhere() -> None:
    """Seat 3 signs two different envelopes at one seq, one for seats 0-1, one for seat 2."""
    definition, ids = make_table("classic")
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(5))
    cheat = {"done": False}
    original_flush = net.flush

    def flush(seat: int) -> None:
        if seat != 3 or cheat["done"]:
            original_flush(seat)
            return
        s = sessions[3]
        out = s.take_outbox()
        for data in out:
            e = Envelope.decode(data)
            if e.type == "deck" and e.seq >= 3 and not cheat["done"]:
                # The same body with the seen of its previous envelope: an envelope that
                # differs, and whose seen does not go back (which is a fault of its own).
                before = next(x for x in s.transcript if x.hash == e.prev)
                seen = [e.prev if i == 3 else before.seen[i] for i in range(4)]
                twin = Envelope.create(ids[3], definition.table_id, e.seq, e.prev, seen, e.body)
                assert twin.hash != e.hash
                net.queues[3, 0].append(data)
                net.queues[3, 1].append(data)
                net.queues[3, 2].append(twin.encode())
                cheat["done"] = True
            else:
                for other in range(3):
                    net.queues[3, other].append(data)
        for event in s.take_events():
            net.events[3].append(event)
            if isinstance(event, DecisionNeeded):
                s.act(net.bots[3].choice(event.observation.legal))
                flush(3)

    net.flush = flush  # type: ignore[method-assign]
    net.run(honest=(0, 1, 2))
    assert cheat["done"]
    for seat in range(3):
        fault = sessions[seat].fault
        assert fault is not None and fault.seat == 3, fault
        assert "equivocation" in fault.reason and len(fault.evidence) == 2


def test_a_sync_request_gets_each_envelope_once() -> None:
    """Issue 22: a request that lists one hash 64 times (2 kB) fetched 64 copies of its
    envelope; the answer holds each envelope once, also when ``have`` already brings it."""
    definition, ids = make_table("classic")
    sessions = table_sessions(definition, ids)
    for s in sessions:
        s.start()
    tables = [s.take_outbox()[0] for s in sessions]
    for data in tables[1:]:
        sessions[0].receive(data)
    held = sessions[0].transcript
    assert len(held) > 4  # the tables, and seat 0's first deck message
    wanted = Envelope.decode(tables[2]).hash
    have = [sessions[0].tracker.next_seq(s) for s in range(4)]
    answer = sessions[0].receive(encode_sync(have, [wanted] * 64))
    assert answer == [tables[2]]
    answer = sessions[0].receive(encode_sync([0, 0, 0, 0], [wanted] * 64 + [ZERO_HASH]))
    assert sorted(answer) == sorted(e.encode() for e in held)


# -- liveness: votes that a seat is gone (PROTOCOL.md §6.6) ---------------------------------


class DrainingNet(HoldingNet):
    """A :class:`helpers.HoldingNet` that delivers until the leave is known everywhere."""

    def drain(self) -> None:
        """Deliver until nothing is in flight, or until every seat holds the abandonment
        (the game is over then: what the bots would still play proves nothing more)."""
        while self.in_flight() and not all(
            s.abandoned is not None or s.dummy is not None for s in self.sessions
        ):
            self.step()


def _stalled_table(after: int, seed: int = 3, variant: str = "classic") -> DrainingNet:
    definition, ids = make_table(variant, target=1001, seed=seed)
    held = definition.rules.seats - 1
    # Seeded deals: what a seat owes after the held move (its turn, a trick it won) depends
    # on the cards, and the tests read it.
    sessions = table_sessions(definition, ids, deal_seed=seed)
    net = DrainingNet(sessions, random.Random(seed), held=held, after=after)
    net.start()
    while net.pending is None:
        net.step()
    net.drain()
    return net


def test_a_filler_envelope_is_no_progress() -> None:
    net = _stalled_table(after=6)
    s3, s0 = net.sessions[3], net.sessions[0]
    before = s0.progress(3)
    s3.chat("still thinking")
    s3.abandon(1)  # a vote for another seat is filler too
    s3._send(fault_body(1, []))  # and so is a fault report that proves nothing
    s3._pump()
    net.flush(3)
    net.drain()
    assert s0.progress(3) == before
    assert s0.abandoned is None
    net.release()
    net.after = net.asked + 1  # held again at its next decision
    net.drain()
    # Its card (and the deck messages that follow it, when it ends the round) count.
    assert s0.progress(3) > before


def test_a_vote_lapses_once_a_seat_shows_the_seat_delivered() -> None:
    """Two seats sign seat 3 gone; it then plays, and seat 2 takes the move in before it
    knows of the votes; later seat 2 signs it gone while it stalls again: the votes were for
    different points of its chain and do not add up. (Seats 0 and 1 hold the late move
    until an envelope of seat 2 shows it went on, which seat 2 signs at once when the votes
    reach it: PROTOCOL.md §6.7.)"""
    net = _stalled_table(after=6)
    sessions = net.sessions
    for seat in (0, 1):
        assert sessions[seat].abandon(3)
        assert not sessions[seat].abandon(3)  # one vote per point it stalled at
    votes = {seat: sessions[seat].take_outbox() for seat in (0, 1)}
    net.release()
    net.after = net.asked + 3
    net.deliver(3, 2)  # seat 2 has the move, and no vote yet
    assert sessions[2].progress(3) == sessions[0].progress(3) + 1
    for seat in (0, 1):
        for data in votes[seat]:
            for other in (1 - seat, 2, 3):
                net.queues[seat, other].append(data)
    held = sessions[0].progress(3)
    while net.pending is None:
        net.step()
    net.drain()
    # Seat 2 took the move in before it knew of the votes, and owed nothing: it said so at
    # once (a chat line, whose ``seen`` shows it), and seats 0 and 1 took the move in too.
    lines = [e.body["text"] for e in sessions[2].tracker.chain(2) if e.type == "chat"]
    assert lines and lines[-1].endswith("came in before the vote: playing on)")
    assert sessions[0].progress(3) > held
    assert sessions[2].abandon(3)
    net.flush(2)
    net.drain()
    assert all(s.abandoned is None and s.dummy is None for s in sessions)
    # The two vote again, at the new point: now every other seat signed the same.
    for seat in (0, 1):
        assert sessions[seat].abandon(3)
        net.flush(seat)
    net.drain()
    assert all(s.dummy == 3 for s in sessions)  # at four seats: the open hand plays on
    states = {(s.left.round, s.left.state.scores) for s in sessions if s.left is not None}
    assert len(states) == 1


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_late_move_racing_the_votes_changes_nobody_s_outcome(seed: int) -> None:
    """Three-handed (no dummy: the game ends), both other seats signed seat 2 gone while its
    move was on the way: seat 0 gets the move before the last vote and plays on; the
    abandonment still cuts the game where the votes saw it, at every seat, and every record
    verifies to the same verdict. (At four seats the move waits: test_session_dummy.py.)"""
    from belote_p2p.protocol.verify import verify_record

    net = _stalled_table(after=8, seed=seed, variant="three-handed")
    sessions = net.sessions
    for seat in (0, 1):
        sessions[seat].abandon(2)
    waiting = [s.state for s in sessions]  # each seat's own view of the same game
    known = len(sessions[0].transcript)
    net.release()  # seat 2's move, queued to everyone, behind nothing
    net.deliver(2, 0)  # seat 0 has it (and may play its own card at once)
    for seat in (0, 1):
        net.flush(seat)  # the votes leave
    net.drain()
    assert all(s.abandoned == 2 for s in sessions)
    assert [s.abandoned_state for s in sessions] == waiting
    # Seat 0 took seat 3's move in before the last vote, so it had to cut back to the votes.
    order = [(e.sender, e.type) for e in sessions[0].transcript]
    last_vote = max(i for i, (_, kind) in enumerate(order) if kind == "abandon")
    late = sessions[2].definition.seats[2].key
    assert any(who == late and kind in ("bid", "play") for who, kind in order[known:last_vote])
    summaries = {
        verify_record(s.definition, [e.encode() for e in s.transcript]).summary() for s in sessions
    }
    assert len(summaries) == 1 and summaries.pop().startswith("ABANDONED by seat 2")
