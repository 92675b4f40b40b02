"""Four table sessions play whole games over in-memory message passing."""

from __future__ import annotations

import random
from collections import deque

import pytest

from belote_p2p.identity import Identity
from belote_p2p.rules import RULE_SETS
from belote_p2p.session import (
    DecisionNeeded,
    GameOver,
    PeerFault,
    RoundAudited,
    Seat,
    TableDefinition,
    TableSession,
)


def make_table(
    variant: str, target: int = 501, seed: int = 0
) -> tuple[TableDefinition, list[Identity]]:
    ids = [Identity.from_seed(bytes([seed, i]) * 16) for i in range(4)]
    seats = tuple(Seat(f"p{i}", ids[i].public_key_bytes, f"127.0.0.1:{7000 + i}") for i in range(4))
    rules = RULE_SETS[variant].with_(target=target)
    return TableDefinition(bytes(range(16)), rules, seats), ids


class Net:
    """Per-pair FIFO queues, delivered in a seeded random interleaving."""

    def __init__(self, sessions: list[TableSession], rng: random.Random) -> None:
        self.sessions = sessions
        self.rng = rng
        self.queues = {(a, b): deque[bytes]() for a in range(4) for b in range(4) if a != b}
        self.bots = [random.Random(rng.random()) for _ in range(4)]
        self.events: list[list[object]] = [[] for _ in range(4)]

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        for data in s.take_outbox():
            for other in range(4):
                if other != seat:
                    self.queues[seat, other].append(data)
        for event in s.take_events():
            self.events[seat].append(event)
            if isinstance(event, DecisionNeeded):
                s.act(self.bots[seat].choice(event.observation.legal))
                self.flush(seat)

    def run(self, limit: int = 200_000) -> None:
        for seat in range(4):
            self.sessions[seat].start()
            self.flush(seat)
        steps = 0
        while not all(s.finished for s in self.sessions):
            busy = [k for k, q in self.queues.items() if q]
            assert busy, "deadlock: nothing in flight and the game is not over"
            a, b = self.rng.choice(busy)
            self.sessions[b].receive(self.queues[a, b].popleft())
            self.flush(b)
            steps += 1
            assert steps < limit


@pytest.mark.parametrize("variant", sorted(RULE_SETS))
def test_four_sessions_play_a_whole_game(variant: str) -> None:
    definition, ids = make_table(variant, target=301)
    sessions = [TableSession(definition, i, ids[i]) for i in range(4)]
    net = Net(sessions, random.Random(7))
    net.run()
    assert all(s.fault is None for s in sessions)
    final = [s.state for s in sessions]
    assert all(f.is_over for f in final)
    assert len({f.scores for f in final}) == 1
    # Every peer saw the same rounds, with the same scores.
    for seat in range(4):
        audits = [e for e in net.events[seat] if isinstance(e, RoundAudited)]
        assert audits and all(a.report.clean for a in audits)
        assert any(isinstance(e, GameOver) for e in net.events[seat])
    histories = [[(r.number, r.score) for r in f.history] for f in final]
    assert all(h == histories[0] for h in histories)
    # The transcripts hold the same envelopes (in each peer's own arrival order).
    sets = [{e.hash for e in s.transcript} for s in sessions]
    assert all(x == sets[0] for x in sets)
    assert not any(isinstance(e, PeerFault) for evs in net.events for e in evs)
