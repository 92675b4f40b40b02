"""A seat that leaves at any point of a round, in any delivery order (PROTOCOL.md §6.7).

A seeded sweep over four sessions in memory (:class:`helpers.Net`): seat 1 leaves after
its ``point``-th envelope, by resigning there or by falling silent (a crash); a silent
seat's next envelope is late, delivered to each other seat at its own random moment once
the first vote against it is signed, racing the votes. Nothing runs a clock: when nothing
is in flight (after a sync), one live seat's deadline fires, and it votes the silent seat
gone at the point it saw it stop. Whatever the point and the order:

* the game finishes: no live seat is ever stuck on another live seat, and no deadline fires
  but against the leaver;
* every live seat reaches the same outcome (the leaver the dummy, the same rounds, the same
  final scores);
* ``verify`` says the same of every live record (a resigned seat's own record: ``LEFT``).

Each case plays a short game (a small target: the round the seat leaves, and the rounds
its partner plays its open hand in). The default cases cover every point of the round a
seat leaves in, a few delivery orders each, classic and coinche; set
``BELOTE_LEAVE_SWEEP=N`` to play ``N`` delivery orders of every point.
"""

from __future__ import annotations

import os
import random

import pytest
from helpers import Net, make_table, table_sessions

from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.verify import verify_record

LEAVER = 1
TARGETS = {"classic": 1, "coinche": 1}
"""One scored round ends the game (a redeal deals again): the leave's round is its last, or
close to it, so every point of it is played to the end cheaply."""
ORDERS = int(os.environ.get("BELOTE_LEAVE_SWEEP", "0"))
"""Delivery orders per point when set (the default plays a seeded sample of points)."""


class LeaveNet(Net):
    """Seat :data:`LEAVER` leaves after its ``point``-th envelope: ``resign`` signs its
    resignation there; ``silent`` withholds everything after it, its next envelope late."""

    def __init__(self, sessions: list[TableSession], rng: random.Random, point: int, kind: str):
        super().__init__(sessions, rng)
        self.point, self.kind = point, kind
        self.sent = 0
        self.gone = False
        self.late: bytes | None = None
        self.late_to: list[int] = []
        """The seats the late envelope is still on its way to (once a vote is out)."""
        self.deadlines = 0

    @property
    def live(self) -> list[TableSession]:
        return [s for s in self.sessions if s.seat != LEAVER]

    def flush(self, seat: int) -> None:
        if seat != LEAVER:
            super().flush(seat)
            return
        session = self.sessions[seat]
        for data in session.take_outbox():
            if self.gone:
                if self.kind == "silent" and self.late is None:
                    self.late = data  # signed, and on its way: it arrives late
                continue
            for other in range(self.n):
                if other != seat:
                    self.queues[seat, other].append(data)
            self.sent += 1
        events = session.take_events()
        self.events[seat].extend(events)
        if not self.gone and self.sent >= self.point:
            self.gone = True
            if self.kind == "resign":
                session.abandon(seat)
                for data in session.take_outbox():
                    for other in range(self.n):
                        if other != seat:
                            self.queues[seat, other].append(data)
                return
        for event in events:
            if not self.gone and type(event).__name__ == "DecisionNeeded":
                self.decide(seat, event)  # type: ignore[arg-type]

    def deliver(self, a: int, b: int) -> None:
        if b == LEAVER and self.gone and (self.kind == "silent" or self.sessions[b].closed):
            self.queues[a, b].popleft()  # it crashed, or it left and stopped
            return
        super().deliver(a, b)

    def deadline(self) -> bool:
        """Nothing moves: one live seat's deadline on the seat it waits for fires. Only the
        leaver may be waited for (anything else is a stall). True if a vote was signed."""
        waits = {s.seat: s.waiting_for() for s in self.live if not s.finished}
        assert all(w <= {LEAVER} for w in waits.values()), f"stalled on a live seat: {waits}"
        voters = [seat for seat, w in waits.items() if w]
        self.rng.shuffle(voters)
        for seat in voters:
            assert seat is not None
            if self.sessions[seat].abandon(LEAVER):
                self.deadlines += 1
                self.flush(seat)
                if self.late is not None and not self.late_to and self.deadlines == 1:
                    self.late_to = [s for s in range(self.n) if s != LEAVER]
                return True
        return False

    def sync(self) -> None:
        super().sync()
        if self.gone:
            for other in range(self.n):
                if other != LEAVER:
                    self.queues[LEAVER, other].clear()  # it asks nothing any more

    def moved(self) -> tuple[int, ...]:
        """What the sessions took in so far (a sync that changes it is progress)."""
        return tuple(len(s.transcript) + len(s._processed) for s in self.sessions)

    def play(self, limit: int = 100_000) -> None:
        self.start()
        synced: tuple[int, ...] | None = None
        for _ in range(limit):
            if all(s.finished for s in self.live) and not self.in_flight():
                return
            if self.late_to and self.rng.random() < 0.2:
                seat = self.late_to.pop(self.rng.randrange(len(self.late_to)))
                assert self.late is not None
                self.queues[LEAVER, seat].append(self.late)
            busy = self.in_flight()
            if busy:
                self.deliver(*self.rng.choice(busy))
                continue
            if self.late_to:
                continue  # the late envelope is still on its way
            if synced != self.moved():
                synced = self.moved()
                self.sync()
                continue
            assert self.deadline(), "stalled: nothing in flight, and no vote to sign"
        raise AssertionError("the game does not end")


def play_leave(variant: str, kind: str, point: int, seed: int) -> LeaveNet:
    definition, ids = make_table(variant, target=TARGETS[variant], seed=seed)
    net = LeaveNet(table_sessions(definition, ids, deal_seed=seed), random.Random(seed), point, kind)
    net.play()
    return net


def check_outcome(net: LeaveNet) -> None:
    live = net.live
    assert all(s.fault is None for s in net.sessions), [s.fault for s in net.sessions]
    assert all(s.abandoned is None for s in live), [s.abandoned for s in live]
    assert all(s.completed and s.state.is_over for s in live)
    assert len({s.dummy for s in live}) == 1
    assert len({s.state.scores for s in live}) == 1
    assert len({tuple((r.number, r.score) for r in s.state.history) for s in live}) == 1
    verdicts = {
        s.seat: verify_record(s.definition, [e.encode() for e in s.transcript], writer=s.seat)
        for s in live
    }
    summaries = {v.summary() for v in verdicts.values()}
    assert len(summaries) == 1, summaries
    assert all(v.ok and v.finished for v in verdicts.values()), summaries
    if live[0].dummy is not None:
        assert f"seat {LEAVER} (" in summaries.pop()
    leaver = net.sessions[LEAVER]
    if net.kind == "resign" and leaver.dummy == LEAVER:
        own = verify_record(
            leaver.definition, [e.encode() for e in leaver.transcript], writer=LEAVER
        )
        assert own.ok and own.left_here, own.summary()


def envelopes_of_the_leaver(variant: str, seed: int) -> int:
    """How many envelopes the leaver signs in the whole game when nobody leaves (a
    point past them is never reached)."""
    definition, ids = make_table(variant, target=TARGETS[variant], seed=seed)
    net = Net(table_sessions(definition, ids, deal_seed=seed), random.Random(seed))
    net.run()
    return len(net.sessions[LEAVER].tracker.chain(LEAVER))


def cases() -> list[tuple[str, str, int, int]]:
    """(variant, kind, point, seed): every point of a game of each variant (its length
    measured once, seed 0), each kind; by default a seeded sample of them."""
    lengths = {"classic": 19, "coinche": 19}
    out = []
    for variant, length in lengths.items():
        for kind in ("resign", "silent"):
            for point in range(1, length + 1):
                seeds = range(ORDERS) if ORDERS else [point % 3]
                out.extend((variant, kind, point, seed) for seed in seeds)
    if ORDERS:
        return out
    return random.Random(24).sample(out, 14)


@pytest.mark.parametrize(("variant", "kind", "point", "seed"), cases())
def test_a_leave_at_any_point_finishes_the_game_alike_for_every_live_seat(
    variant: str, kind: str, point: int, seed: int
) -> None:
    net = play_leave(variant, kind, point, seed)
    check_outcome(net)
