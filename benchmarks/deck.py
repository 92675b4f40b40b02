"""CPU cost of the deck protocol: the proof of shuffle, and whole deals for four peers.

    python benchmarks/deck.py [--runs N] [--coinche]

First the proof of shuffle alone, on the decks of a real round (32 cards): making one,
checking one, parsing one, its size; from the trivial deck (the first shuffle) and from a
shuffled one (the others). Then a classic round (keys, key splits, four shuffles with their
proofs, the deal with the turned card, the completion, 32 plays, reveals and the audit) ``N``
times with fresh secrets, timing each peer's own calls with ``time.process_time``. Prints a readable
report, the cost of the group operations on this machine (to compare figures across
machines), and ends with one line of JSON. Figures are medians.

A call is charged to the step of the message it consumed or the local action it was,
except the work of producing one's own shuffle and its proof and one's own deal shares,
which is timed inside the peer and charged to "shuffle+proof" and "deal"/"completion".
Receiving a shuffle (checking its proof) is "verify shuffles"; making one's split and checking
the others' (a holder decrypts its piece) is "split". Then ``N`` rounds where a seat leaves after
the deal: "release" is making and checking the releases of its dealt cards (the completion's
are made inside "completion"); its partner's plays for it are "play". One more round, untimed,
counts the group operations of each step (every peer's calls of ``mul``, ``base_mul``, ``add`` and
``sub``, and ``is_valid_point``), so that a step's time can be read against what it does. Last,
``N`` deals replayed with one clock per peer (each call's CPU on its peer's clock, a message
arriving when the call that made it ends): the deal's critical path, with each shuffle checked
before the next is made and with the overlap of DECK.md §4 (``DeckPeer(overlap=True)``).
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import itertools
import json
import os
import statistics
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from belote_p2p.game.rules import CLASSIC, COINCHE, RuleSet
from belote_p2p.protocol import deck, group, shuffle, wire
from belote_p2p.protocol.deck import (
    TRIVIAL_DECK,
    DeckMessage,
    DeckPeer,
    DeckPhase,
    KeyMessage,
    PlayMessage,
    ReleaseMessage,
    RevealMessage,
    SharesMessage,
    ShuffleMessage,
    SplitMessage,
    partner_of,
    shuffle_masks,
    shuffle_permutation,
    shuffle_proof_context,
)
from belote_p2p.protocol.shuffle import ShuffleProof, prove_shuffle, verify_shuffle

TABLE_ID = b"benchmark-table!"
STEPS = (
    "keys",
    "split",
    "shuffle+proof",
    "verify shuffles",
    "deal",
    "completion",
    "release",
    "play",
    "reveal",
    "audit",
)
LABELS: dict[type, str] = {
    KeyMessage: "keys",
    SplitMessage: "split",
    ReleaseMessage: "release",
    ShuffleMessage: "verify shuffles",
    SharesMessage: "deal",
    PlayMessage: "play",
    RevealMessage: "reveal",
}


_ROUNDS: dict[int, Round] = {}
_STEP: list[str] = []
"""The step being run (innermost last), for the operation counts."""
OPS = ("mul", "base_mul", "add", "sub", "is_valid_point")


def _timed(method: Callable[..., object], step_of: Callable[..., str]) -> Callable[..., object]:
    """Wrap a DeckPeer method so that its CPU goes to its own step."""

    def wrapper(peer: DeckPeer, *args: object) -> object:
        r = _ROUNDS[id(peer)]
        _STEP.append(step_of(*args))
        t0 = time.process_time()
        try:
            return method(peer, *args)
        finally:
            spent = time.process_time() - t0
            r.cpu[peer.seat][_STEP.pop()] += spent
            r.charged[peer.seat] += spent

    return wrapper


def _counted(
    counts: Counter[tuple[str, str]], name: str, fn: Callable[..., object]
) -> Callable[..., object]:
    def wrapper(*args: object) -> object:
        counts[_STEP[-1] if _STEP else "other", name] += 1
        return fn(*args)

    return wrapper


@contextlib.contextmanager
def _counting() -> Iterator[Counter[tuple[str, str]]]:
    """(step, operation) -> calls of the group operations made meanwhile. They are wrapped
    only then, so that the timed runs pay no wrapper (every module that calls them holds its
    own reference to them)."""
    counts: Counter[tuple[str, str]] = Counter()
    saved = [(m, n, getattr(m, n)) for m in (group, shuffle, deck) for n in OPS if hasattr(m, n)]
    for module, name, fn in saved:
        setattr(module, name, _counted(counts, name, fn))
    try:
        yield counts
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)


DeckPeer._shuffle = _timed(  # type: ignore[method-assign,assignment]
    DeckPeer._shuffle, lambda: "shuffle+proof"
)
DeckPeer._split_own = _timed(  # type: ignore[method-assign,assignment]
    DeckPeer._split_own, lambda: "split"
)
DeckPeer._deal_step = _timed(  # type: ignore[method-assign,assignment]
    DeckPeer._deal_step, lambda step: "deal" if step == 0 else "completion"
)


class Round:
    """Four peers and a FIFO broadcast, with per-peer, per-step CPU accounts."""

    def __init__(self, rules: RuleSet, dealer: int, number: int, *, overlap: bool = False) -> None:
        self.peers = [
            DeckPeer(
                rules,
                seat=s,
                dealer=dealer,
                table_id=TABLE_ID,
                round_number=number,
                overlap=overlap,
            )
            for s in range(4)
        ]
        self.cpu = [dict.fromkeys(STEPS, 0.0) for _ in range(4)]
        self.charged = [0.0] * 4
        self.queue: deque[DeckMessage] = deque()
        for p in self.peers:
            _ROUNDS[id(p)] = self

    def call(self, seat: int, step: str, fn: Callable[[], object]) -> object:
        self.charged[seat] = 0.0
        _STEP.append(step)
        t0 = time.process_time()
        result = fn()
        produced = self.peers[seat].next_messages()
        spent = time.process_time() - t0
        _STEP.pop()
        self.cpu[seat][step] += spent - self.charged[seat]
        self.queue.extend(produced)
        return result

    def local(self, seat: int, step: str, fn: Callable[[], DeckMessage]) -> None:
        msg = self.call(seat, step, fn)
        assert isinstance(
            msg, KeyMessage | SharesMessage | PlayMessage | RevealMessage | ReleaseMessage
        )
        self.queue.append(msg)

    def pump(self, step: str | None = None, gone: int | None = None) -> None:
        while self.queue:
            msg = self.queue.popleft()
            label = LABELS[type(msg)] if step is None or type(msg) is ReleaseMessage else step
            for peer in self.peers:
                if peer.seat not in (msg.seat, gone):
                    self.call(peer.seat, label, lambda p=peer, m=msg: p.receive(m))  # type: ignore[misc]

    def run(self, taker: int, gone: int | None = None) -> tuple[object, ...]:
        """A whole round; with ``gone``, that seat leaves after the deal (before the
        completion) and the others release its cards, its partner playing them."""
        peers = self.peers
        for p in peers:
            self.local(p.seat, "keys", p.start)
        self.pump()
        live = [p for p in peers if p.seat != gone]
        if gone is not None:
            for p in live:
                self.local(p.seat, "release", lambda p=p: p.release(gone))  # type: ignore[misc]
            self.pump(gone=gone)
        if not peers[0].rules.is_coinche:
            for p in live:
                self.local(p.seat, "completion", lambda p=p: p.set_taker(taker))  # type: ignore[misc]
            self.pump("completion", gone)
        for pos in range(32):
            owner = live[0].owner_of(pos)
            assert owner is not None
            if owner == gone:
                player = peers[partner_of(owner)]
                self.local(player.seat, "play", lambda a=player, q=pos: a.play_for(gone, q))  # type: ignore[misc]
            else:
                self.local(owner, "play", lambda o=owner, q=pos: peers[o].play(q))  # type: ignore[misc]
            self.pump(gone=gone)
        for p in live:
            self.local(p.seat, "reveal", p.reveal)
        self.pump(gone=gone)
        decks = [self.call(p.seat, "audit", p.audit) for p in live]
        assert all(d == decks[0] for d in decks)
        return tuple(decks)


def deal_critical_path(rules: RuleSet, dealer: int, number: int, *, overlap: bool) -> float:
    """Seconds from the start to the last peer holding its cards, with one machine per peer
    and no network delay: each peer's calls take their CPU on its own clock, a message
    arrives when the call that made it ends, each peer takes its messages in arrival order
    and, with ``overlap``, does its work put off while no message waits (as its driver)."""
    peers = Round(rules, dealer, number, overlap=overlap).peers
    clock = [0.0] * len(peers)
    inbox: list[list[tuple[float, int, DeckMessage]]] = [[] for _ in peers]
    dealt: dict[int, float] = {}
    order = itertools.count()

    def run(seat: int, start: float, call: Callable[[], object]) -> None:
        t0 = time.process_time()
        made = call()
        out = ([made] if made is not None else []) + peers[seat].next_messages()
        clock[seat] = start + time.process_time() - t0
        for msg in out:
            stamp = (clock[seat], next(order), msg)
            for other in range(len(peers)):
                if other != seat:
                    heapq.heappush(inbox[other], stamp)
        if peers[seat].phase not in (DeckPhase.KEYS, DeckPhase.SHUFFLE, DeckPhase.DEAL):
            dealt.setdefault(seat, clock[seat])

    for p in peers:
        run(p.seat, 0.0, p.start)
    while len(dealt) < len(peers):
        events: list[tuple[float, int, bool]] = []  # (start, seat, a message rather than work)
        for p in peers:
            waiting = inbox[p.seat]
            if waiting:
                events.append((max(clock[p.seat], waiting[0][0]), p.seat, True))
            if p.has_work and (not waiting or waiting[0][0] > clock[p.seat]):
                events.append((clock[p.seat], p.seat, False))
        start, seat, message = min(events)
        peer = peers[seat]
        run(
            seat,
            start,
            partial(peer.receive, heapq.heappop(inbox[seat])[2]) if message else peer.work,
        )
    return max(dealt.values())


def _split_message(r: Round) -> SplitMessage:
    """Seat 0's split of a round (every split has three pieces)."""
    split = r.peers[1]._splits[0]
    assert isinstance(split, SplitMessage)
    return split


def proof_costs(runs: int) -> list[dict[str, object]]:
    """Make, check and parse the proofs of a real round's first and second shuffles."""
    r = Round(CLASSIC, 0, 99)
    r.run(taker=1)
    return [_proof_figures(r, k, runs) for k in (0, 1)]


def _proof_figures(r: Round, k: int, runs: int) -> dict[str, object]:
    peer = r.peers[0]
    joint = peer.joint_key
    assert joint is not None
    seat = peer.shuffle_order[k]
    seed = r.peers[seat]._seed
    inputs = TRIVIAL_DECK if k == 0 else peer._decks[k - 1]
    outputs, proof, commitment = peer._decks[k], peer._proofs[k], peer._commitments[seat]
    ctx = shuffle_proof_context(TABLE_ID, 99, seat, commitment)
    perm = shuffle_permutation(TABLE_ID, 99, seat, seed)
    masks = shuffle_masks(TABLE_ID, 99, seat, seed)
    raw = wire.encode(proof.to_wire())
    message = wire.encode(ShuffleMessage(seat, commitment, outputs, proof).to_wire())
    jobs: dict[str, Callable[[], object]] = {
        "make": lambda: prove_shuffle(joint, inputs, outputs, perm, masks, ctx, seed),
        "check": lambda: verify_shuffle(joint, inputs, outputs, proof, ctx),
        "parse": lambda: ShuffleProof.from_wire(wire.decode(raw), 32),
    }
    assert jobs["make"]() == proof and jobs["check"]() and jobs["parse"]() == proof
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(runs):
        for name, job in jobs.items():
            t0 = time.process_time()
            job()
            times[name].append(time.process_time() - t0)
    return {
        "input": "trivial deck" if k == 0 else "shuffled deck",
        **{f"{n}_ms": round(statistics.median(t) * 1000, 1) for n, t in times.items()},
        "proof_bytes": len(raw),
        "shuffle_message_bytes": len(message),
    }


def operation_counts(rules: RuleSet) -> dict[str, dict[str, int]]:
    """Group operations per step of one round, all four peers together."""
    with _counting() as counts:
        Round(rules, 0, 0).run(taker=1)
    return {step: {op: counts[step, op] for op in OPS} for step in STEPS}


def primitive_costs() -> dict[str, float]:
    """Microseconds per group operation on this machine (best of three batches)."""
    x = group.random_scalar()
    p = group.base_mul(group.random_scalar())
    q = group.base_mul(group.random_scalar())
    ops: dict[str, Callable[[], object]] = {
        "base_mul": lambda: group.base_mul(x),
        "mul": lambda: group.mul(x, p),
        "add": lambda: group.add(p, q),
        "is_valid_point": lambda: group.is_valid_point(p),
    }
    costs = {}
    for name, fn in ops.items():
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            for _ in range(300):
                fn()
            best = min(best, (time.process_time() - t0) / 300)
        costs[name] = round(best * 1e6, 1)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--coinche", action="store_true", help="a coinche round instead")
    args = parser.parse_args()
    rules = COINCHE if args.coinche else CLASSIC
    # Other work on the machine slows the CPU too (caches, frequency): say how much there was.
    load_before = [round(x, 2) for x in os.getloadavg()]

    proofs = proof_costs(max(args.runs, 15))
    print(f"proof of shuffle, 32 cards, ms of CPU (median of {max(args.runs, 15)}):")
    print(
        f"{'input':<15}{'make':>8}{'check':>8}{'parse':>8}{'proof bytes':>13}{'message bytes':>15}"
    )
    for f in proofs:
        print(
            f"{f['input']:<15}{f['make_ms']:>8}{f['check_ms']:>8}{f['parse_ms']:>8}"
            f"{f['proof_bytes']:>13}{f['shuffle_message_bytes']:>15}"
        )
    print()

    Round(rules, 0, 0).run(taker=1)  # warm-up
    rounds = []
    for i in range(args.runs):
        r = Round(rules, dealer=i % 4, number=i + 1)
        r.run(taker=(i + 2) % 4)
        rounds.append(r)

    paths = {
        name: [deal_critical_path(rules, i % 4, 200 + i, overlap=overlap) for i in range(args.runs)]
        for name, overlap in (("in turn", False), ("overlapped", True))
    }

    left = []
    for i in range(args.runs):
        r = Round(rules, dealer=i % 4, number=100 + i)
        r.run(taker=(i + 2) % 4, gone=(i + 3) % 4)
        left.append(r)

    def ms(v: float) -> float:
        return round(v * 1000, 1)

    totals = [sum(sum(c.values()) for c in r.cpu) for r in rounds]
    slowest = [max(sum(c.values()) for c in r.cpu) for r in rounds]
    median_round = rounds[totals.index(statistics.median_low(totals))]

    print(f"whole deal with proofs, {rules.name} round, {args.runs} runs, four in-process peers")
    print(
        f"CPU per run, all peers: median {ms(statistics.median(totals))} ms, "
        f"min {ms(min(totals))} ms, max {ms(max(totals))} ms"
    )
    print(
        f"CPU per run, slowest peer: median {ms(statistics.median(slowest))} ms, "
        f"min {ms(min(slowest))} ms"
    )
    print()
    print("median run, ms of CPU by step and peer (seat 0 dealer in run 1, rotating):")
    counts = operation_counts(rules)
    heads = ("mul", "base", "add+sub", "valid")
    print(
        f"{'step':<16}"
        + "".join(f"{'seat ' + str(s):>10}" for s in range(4))
        + f"{'all':>10}   group operations, all peers: "
        + " ".join(f"{h:>7}" for h in heads)
    )
    for step in STEPS:
        row = [median_round.cpu[s][step] for s in range(4)]
        c = counts[step]
        ops = (c["mul"], c["base_mul"], c["add"] + c["sub"], c["is_valid_point"])
        print(
            f"{step:<16}"
            + "".join(f"{ms(v):>10}" for v in row)
            + f"{ms(sum(row)):>10}"
            + " " * 32
            + " ".join(f"{n:>7}" for n in ops)
        )
    peer_totals = [sum(c.values()) for c in median_round.cpu]
    print(
        f"{'total':<16}"
        + "".join(f"{ms(v):>10}" for v in peer_totals)
        + f"{ms(sum(peer_totals)):>10}"
    )
    split_ms = statistics.median(sum(c["split"] for c in r.cpu) for r in rounds)
    split_share = split_ms / statistics.median(totals)
    left_totals = [sum(sum(c.values()) for c in r.cpu) for r in left]
    release_ms = statistics.median(sum(c["release"] for c in r.cpu) for r in left)
    print()
    print(
        f"key splitting: {ms(split_ms)} ms of CPU per deal, all peers "
        f"({100 * split_share:.1f}% of the deal), each split message "
        f"{len(wire.encode(_split_message(rounds[0]).to_wire()))} bytes"
    )
    print(
        f"a seat released after the deal ({args.runs} runs): whole deal "
        f"{ms(statistics.median(left_totals))} ms of CPU for the three live peers, "
        f"of which release {ms(release_ms)} ms "
        "(making and checking the releases of the deal; the completion's go with it)"
    )
    print(
        "the deal's critical path (keys to every hand, one machine per peer, no network "
        "delay): "
        + ", ".join(f"{name} {ms(statistics.median(v))} ms" for name, v in paths.items())
        + " (each shuffle checked before the next is made, or after it is sent: DECK.md §4)"
    )
    print()
    costs = primitive_costs()
    print(
        "group operations on this machine (µs): " + ", ".join(f"{k} {v}" for k, v in costs.items())
    )
    load_after = [round(x, 2) for x in os.getloadavg()]
    print(
        f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} "
        f"on {os.cpu_count()} cores"
    )
    steps_all = {
        step: ms(statistics.median(sum(r.cpu[s][step] for s in range(4)) for r in rounds))
        for step in STEPS
    }
    print(
        json.dumps(
            {
                "rules": rules.name,
                "runs": args.runs,
                "deal_cpu_ms_all_peers": ms(statistics.median(totals)),
                "deal_cpu_ms_all_peers_min": ms(min(totals)),
                "deal_cpu_ms_slowest_peer": ms(statistics.median(slowest)),
                "deal_cpu_ms_slowest_peer_min": ms(min(slowest)),
                "step_cpu_ms_all_peers": steps_all,
                "step_group_ops_all_peers": counts,
                "split_cpu_ms_all_peers": ms(split_ms),
                "split_share_of_deal": round(split_share, 4),
                "deal_with_release_cpu_ms_all_peers": ms(statistics.median(left_totals)),
                "release_cpu_ms_all_peers": ms(release_ms),
                "deal_critical_path_ms": {n: ms(statistics.median(v)) for n, v in paths.items()},
                "shuffle_proof": proofs,
                "group_op_us": costs,
                "cpus": os.cpu_count(),
                "load_before": load_before,
                "load_after": load_after,
            }
        )
    )


if __name__ == "__main__":
    main()
