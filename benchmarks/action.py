"""CPU of one action (a bid or a card) at one peer's session, in memory: the part of
``benchmarks/p2p_game.py``'s critical path that is not the deal, without sockets or trio.

    python benchmarks/action.py [--reps N] [--seed S]

Four sessions play a classic round in memory (the tests' ``Net``, seeded: the same game on
every run). Seat 1's session is copied just before each card and bid it receives from
another seat, and before each it makes; each copy then takes that one step ``N`` times
afresh (a new copy each time) and the fastest is kept, so that other work on the machine
weighs little: receiving (decode, signature check, chain, the deck protocol's share proof,
the engine, the state digest) and acting (the deck's share and proof, the envelope signed,
the outbox). Also the envelope alone (``Envelope.create`` and ``Envelope.decode``), the
Python function calls of each step (a count, the same on any machine: it moves only
when the code does), and a live peer's bot decision before each of seat 1's cards (the
``random`` bot through ``BotPlayer.decide``, in trio's worker thread: what the thread hops
cost, as CPU of the process and as wall time). Figures are medians over the steps of the
round.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins", ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from helpers import Net, make_table, table_sessions

from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.wire import Envelope

SEAT = 1

Step = tuple[TableSession, Any]


def record(seed: int) -> tuple[dict[str, list[Step]], list[Envelope]]:
    """Seat :data:`SEAT`'s session before each step of the first round, by kind, and the
    bids and cards of the round."""
    definition, ids = make_table("classic", target=301, seed=seed)
    sessions = table_sessions(definition, ids, deal_seed=seed)
    steps: dict[str, list[Step]] = {"receive a card": [], "receive a bid": [], "play": []}
    receive, act = TableSession.receive, TableSession.act

    def receiving(self: TableSession, data: bytes) -> list[bytes]:
        if self.seat == SEAT and self.state.number == 0 and data[:1] != b"\x83":  # no sync
            kind = Envelope.decode(data).type
            if kind in ("play", "bid"):
                steps[f"receive a {'card' if kind == 'play' else 'bid'}"].append(
                    (copy.deepcopy(self), data)
                )
        return receive(self, data)

    def acting(self: TableSession, action: Any) -> None:
        if self.seat == SEAT and self.state.number == 0:
            kind = "play" if self.state.phase.name == "PLAY" else "bid"
            steps.setdefault(kind, []).append((copy.deepcopy(self), action))
        act(self, action)

    TableSession.receive, TableSession.act = receiving, acting  # type: ignore[method-assign]
    try:
        Net(sessions, random.Random(seed)).run()
    finally:
        TableSession.receive, TableSession.act = receive, act  # type: ignore[method-assign]
    actions = [e for e in sessions[0].transcript if e.type in ("play", "bid")]
    return steps, actions


def run(session: TableSession, arg: Any) -> None:
    if isinstance(arg, bytes):
        session.receive(arg)
    else:
        session.act(arg)
    session.take_outbox()


def fresh(session: TableSession, arg: Any) -> Callable[[], None]:
    """The step on a new copy of ``session``."""
    return partial(run, copy.deepcopy(session), arg)


def fastest(make: Callable[[], Callable[[], object]], reps: int) -> float:
    """Microseconds of CPU of the call ``make()`` returns (made outside the clock: a fresh
    copy of a session), the fastest of ``reps``."""
    best = float("inf")
    for _ in range(reps):
        call = make()
        start = time.process_time_ns()
        call()
        best = min(best, time.process_time_ns() - start)
    return best / 1000


def calls(session: TableSession, arg: Any) -> int:
    profile = cProfile.Profile()
    copied = copy.deepcopy(session)
    profile.enable()
    run(copied, arg)
    profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


def decisions(recorded: list[Step], reps: int) -> tuple[float, float]:
    """Microseconds of CPU (every thread of the process) and of wall time of a ``random``
    bot's decision through :class:`BotPlayer` in trio, before each recorded play: the
    fastest of ``reps``, median over the plays."""
    import trio

    from belote_p2p.game.observation import observe
    from belote_p2p.players.player import BotPlayer

    player = BotPlayer("random", seed=1)
    cpus, walls = [], []

    async def ask() -> None:
        for session, _ in recorded:
            observation = observe(session.state, SEAT)
            cpu = wall = float("inf")
            for _ in range(reps):
                start, started = time.process_time_ns(), time.perf_counter_ns()
                await player.decide(observation)
                cpu = min(cpu, time.process_time_ns() - start)
                wall = min(wall, time.perf_counter_ns() - started)
            cpus.append(cpu / 1000)
            walls.append(wall / 1000)

    trio.run(ask)
    return statistics.median(cpus), statistics.median(walls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    steps, actions = record(args.seed)
    figures: dict[str, Any] = {"reps": args.reps, "seed": args.seed}
    print(f"== one action at seat {SEAT}'s session, in memory (fastest of {args.reps})")
    for kind, recorded in steps.items():
        if not recorded:
            continue
        times = [fastest(partial(fresh, s, a), args.reps) for s, a in recorded]
        counts = [calls(s, a) for s, a in recorded]
        cpu, n = statistics.median(times), statistics.median(counts)
        figures[kind.replace(" ", "_")] = {"us": round(cpu, 1), "calls": n, "steps": len(times)}
        print(f"  {kind:15} {cpu:7.0f} us of CPU, {n:5.0f} function calls ({len(times)} steps)")
    identity = make_table("classic", target=301, seed=args.seed)[1][0]
    raws = [e.raw for e in actions]
    decode = statistics.median(
        fastest(partial(partial, Envelope.decode, r), args.reps) for r in raws
    )

    def creating(e: Envelope) -> Callable[[], object]:
        return partial(Envelope.create, identity, e.table, e.seq, e.prev, e.seen, e.body)

    create = statistics.median(fastest(partial(creating, e), args.reps) for e in actions)
    figures["envelope"] = {"decode_us": round(decode, 1), "create_us": round(create, 1)}
    print(f"  envelope alone: decode and check {decode:.0f} us, create and sign {create:.0f} us "
          f"(median of {len(raws)} bids and cards)")  # fmt: skip
    cpu, wall = decisions(steps["play"], args.reps)
    figures["decision"] = {"cpu_us": round(cpu, 1), "wall_us": round(wall, 1)}
    print(f"  a live peer's bot decision (random, in a worker thread): {cpu:.0f} us of CPU, "
          f"{wall:.0f} us of wall time (median of {len(steps['play'])} plays)")  # fmt: skip
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
