"""Double-dummy solver speed: exact positions solved per second at 8, 6 and 4 tricks left.

    python benchmarks/solver.py [--seconds S] [--seed N] [--variant classic|coinche]

A position is a random deal with a random trump suit and taker, played at random (uniform
legal cards on the fast path) to a trick boundary with 8, 6 or 4 tricks left; the solver
then finds the exact value of the rest of the round (team 0's card points minus team 1's)
from scratch, with a fresh transposition table. Also timed: every legal card valued
exactly (what a determinized search needs per sample), and the search bounded to one and
two tricks (then a greedy playout). Times are CPU seconds of this process (one core).
Prints a readable report and ends with one JSON line of its figures.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from belote_p2p.game.fastplay import FastState, random_deck
from belote_p2p.game.rules import RULE_SETS, RuleSet
from belote_p2p.game.solver import Solver


def positions(rules: RuleSet, left: int, count: int, seed: int) -> list[FastState]:
    rng = random.Random(f"solver-bench:{seed}:{left}")
    out = []
    for _ in range(count):
        deck = random_deck(rng)
        hands = [sum(1 << c for c in deck[8 * s : 8 * s + 8]) for s in range(4)]
        f = FastState.new(rules, hands, rng.randrange(4), rng.randrange(4), rng.randrange(4))
        for _ in range(4 * (8 - left)):
            m = f.legal_mask()
            for _ in range(rng.randrange(m.bit_count())):
                m &= m - 1
            f.play((m & -m).bit_length() - 1)
        out.append(f)
    return out


def measure(
    rules: RuleSet, left: int, seconds: float, seed: int, what: str, tricks: int = 0
) -> dict[str, float]:
    """Solve fresh positions until ``seconds`` of CPU time have passed (at least 3)."""
    pool = positions(rules, left, 400, seed)
    times = []
    nodes = 0
    start = time.process_time()
    for f in pool:
        t = time.process_time()
        solver = Solver(f, tricks)
        if what == "value":
            solver.value()
        else:
            solver.move_values()
        times.append(time.process_time() - t)
        nodes += solver.nodes
        if time.process_time() - start >= seconds and len(times) >= 3:
            break
    total = sum(times)
    return {
        "positions": len(times),
        "per_s": round(len(times) / total, 2),
        "median_ms": round(1000 * statistics.median(times), 2),
        "max_ms": round(1000 * max(times), 1),
        "nodes": round(nodes / len(times)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="classic")
    args = ap.parse_args()
    rules = RULE_SETS[args.variant]
    figures: dict[str, object] = {"variant": args.variant, "seed": args.seed}
    print(f"belote-p2p double-dummy solver (CPython {sys.version.split()[0]}, one core, CPU time)")
    rows = [
        ("value", 0, "exact value"),
        ("moves", 0, "every legal card, exact"),
        ("moves", 1, "every legal card, 1 trick + playout"),
        ("moves", 2, "every legal card, 2 tricks + playout"),
    ]
    for what, tricks, label in rows:
        print(f"  {label}:")
        for left in (8, 6, 4):
            if tricks and tricks >= left:
                continue
            r = measure(rules, left, args.seconds, args.seed, what, tricks)
            key = f"{what}{'_t' + str(tricks) if tricks else ''}_{left}_left"
            figures[key] = r
            print(
                f"    {left} tricks left: {r['per_s']:>9.2f} positions/s  "
                f"(median {r['median_ms']:8.2f} ms, max {r['max_ms']:8.1f} ms, "
                f"{r['nodes']:>7} nodes, {r['positions']} positions)",
                flush=True,
            )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
