"""A seat that leaves at any point of a round, in any delivery order (PROTOCOL.md §6.7).

A seeded sweep over four sessions in memory (:class:`helpers.Net`): seat 1 leaves after
its ``point``-th envelope, by resigning there or by falling silent (a crash); a silent
seat's next envelope is late, delivered to each other seat at its own random moment once
the first vote against it is signed, racing the votes. Nothing runs a clock: when nothing
is in flight (after a sync), one live seat's deadline fires, and it votes the silent seat
gone at the point it saw it stop. Whatever the point and the order:

* the game finishes: no live seat is ever stuck on another live seat, and no deadline fires
  but against the leaver (a seat that took the late envelope in before it knew of the
  vote says so at once, PROTOCOL.md §6.7, instead of leaving the others holding it);
* every live seat reaches the same outcome (the leaver the dummy, the same rounds, the same
  final scores);
* ``verify`` says the same of every live record (a resigned seat's own record: ``LEFT``).

Each case plays a short game (target 1: one scored round ends it, a redeal deals again).
The default cases leave in each part of a round (the deal, the play, the last card, after
the reveal), classic and coinche; ``BELOTE_LEAVE_SWEEP=N`` plays every point of the game,
each kind, ``N`` delivery orders each (``N=1``: 76 games, about 1.2 s of CPU each).
"""

from __future__ import annotations

import os
import random

import pytest
from helpers import Net, make_table, table_sessions

from belote_p2p.protocol.events import DecisionNeeded
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.verify import verify_record

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")
LEAVER = 1
TARGET = 1
"""One scored round ends the game (a redeal deals again): the leave's round is its last, or
close to it, so every point of it is played to the end cheaply."""
ORDERS = int(os.environ.get("BELOTE_LEAVE_SWEEP", "0"))
"""Delivery orders per point when set (else :data:`DEFAULT_CASES`)."""


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

    @property
    def frozen(self) -> bool:
        """The leaver takes nothing in any more: it stopped at its resignation, or it
        crashed once its late envelope was signed."""
        return self.gone and (self.kind == "resign" or self.late is not None)

    def send(self, data: bytes) -> None:
        for other in range(self.n):
            if other != LEAVER:
                self.queues[LEAVER, other].append(data)

    def flush(self, seat: int) -> None:
        if seat != LEAVER:
            super().flush(seat)
            return
        session = self.sessions[seat]
        for data in session.take_outbox():
            if not self.gone or self.kind == "resign":
                self.send(data)  # (a resignation follows the whole batch)
                self.sent += 1
                self.gone = self.gone or self.sent >= self.point
            elif self.late is None:
                self.late = data  # signed and on its way, but late; nothing more comes
        events = session.take_events()
        self.events[seat].extend(events)
        if self.gone and self.kind == "resign":
            if session.dummy != seat:
                session.abandon(seat)
                for data in session.take_outbox():
                    self.send(data)
            return
        for event in events:
            if not self.frozen and isinstance(event, DecisionNeeded):
                self.decide(seat, event)

    def deliver(self, a: int, b: int) -> None:
        if b != LEAVER or not self.gone:
            super().deliver(a, b)
            return
        data = self.queues[a, b].popleft()
        if not self.frozen:
            self.sessions[b].receive(data)  # what it answers a sync is withheld too
            self.flush(b)

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
    definition, ids = make_table(variant, target=TARGET, seed=seed)
    sessions = table_sessions(definition, ids, deal_seed=seed)
    net = LeaveNet(sessions, random.Random(seed), point, kind)
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


DEFAULT_CASES = [
    # (The leaver's envelopes of a classic game to 1: the table, its key, split, shuffle and
    # deal shares, its bids, the completion shares, eight cards, its reveal, done and bye;
    # where a point falls depends on the bids and on what is sent together.)
    ("classic", "resign", 3, 0),  # in the deal
    ("classic", "resign", 15, 0),  # around its last card, racing the round's last card
    ("classic", "silent", 15, 2),  # around its last card, its next envelope late
    ("classic", "silent", 16, 0),  # around its reveal, its next envelope late
    ("coinche", "silent", 10, 0),  # in the play, its next card late
    ("coinche", "silent", 14, 2),  # its last cards, its next envelope late
]
"""A leave in each part of a round; ``BELOTE_LEAVE_SWEEP`` plays every point."""


def cases() -> list[tuple[str, str, int, int]]:
    """(variant, kind, point, seed): with ``BELOTE_LEAVE_SWEEP=N``, every point of a game
    of each variant (a point past the leaver's last envelope is a game without a leave),
    each kind, ``N`` delivery orders; else :data:`DEFAULT_CASES`."""
    if not ORDERS:
        return DEFAULT_CASES
    return [
        (variant, kind, point, seed)
        for variant in ("classic", "coinche")
        for kind in ("resign", "silent")
        for point in range(1, 20)
        for seed in range(ORDERS)
    ]


@pytest.mark.parametrize(("variant", "kind", "point", "seed"), cases())
def test_a_leave_at_any_point_finishes_the_game_alike_for_every_live_seat(
    variant: str, kind: str, point: int, seed: int
) -> None:
    net = play_leave(variant, kind, point, seed)
    check_outcome(net)
