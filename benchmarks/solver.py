"""Double-dummy solver speed: exact positions solved per second at 8, 6 and 4 tricks left.

    python benchmarks/solver.py [--seconds S] [--seed N]
        [--variant classic|coinche|three-handed|two-handed] [--installed]

A position is a random deal with a random trump suit and taker, played at random (uniform
legal cards on the fast path) to a trick boundary with 8, 6 or 4 tricks left; the solver
then finds the exact value of the rest of the round (team 0's card points minus team 1's)
from scratch, with a fresh transposition table. Also timed: every legal card valued
exactly (what a determinized search needs per sample), and the search bounded to one and
two tricks (then a greedy playout). Times are CPU seconds of this process (one core).
Prints a readable report and ends with one JSON line of its figures.

At three and two seats (every seat for itself) the search is the fast path's
:meth:`~belote_p2p.game.fastplay.FewFastState.search`, the seat to act against the others,
what the ``expert`` bot solves in each world from ``exact`` tricks left: positions are
random rounds of the checked engine (a random contract, random cards) at a trick boundary
with 6, 5 or 4 tricks left (two-handed: 8, 6 or 4 of its 16 tricks of two, every
face-down card known), the value of the seat to act and every legal card's value (the
cards' searches sharing one table of the positions searched, as the bot's do).

It measures this checkout's source (pure Python), or with ``--installed`` the installed
package (compiled with mypyc where ``pip install`` could).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

if "--installed" not in sys.argv[1:]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's source

from belote_p2p.game.build import build
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.fastplay import FastState, FewFastState, equivalent_groups, random_deck
from belote_p2p.game.rules import RULE_SETS, RuleSet
from belote_p2p.game.solver import Solver

_INF = float("inf")
P = TypeVar("P")


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


def timed(pool: Sequence[P], seconds: float, solve: Callable[[P], object]) -> list[float]:
    """``solve`` each position of ``pool`` until ``seconds`` of CPU time have passed (at
    least 3 positions): the CPU time of each."""
    times = []
    start = time.process_time()
    for f in pool:
        t = time.process_time()
        solve(f)
        times.append(time.process_time() - t)
        if time.process_time() - start >= seconds and len(times) >= 3:
            break
    return times


def summary(times: list[float]) -> dict[str, float]:
    total = sum(times)
    return {
        "positions": len(times),
        "per_s": round(len(times) / total, 2),
        "median_ms": round(1000 * statistics.median(times), 2),
        "p90_ms": round(1000 * sorted(times)[int(0.9 * len(times))], 2),
        "max_ms": round(1000 * max(times), 1),
    }


def measure(
    rules: RuleSet, left: int, seconds: float, seed: int, what: str, tricks: int = 0
) -> dict[str, float]:
    """Solve fresh four-seat positions for ``seconds`` of CPU time (:func:`timed`)."""
    nodes = []

    def solve(f: FastState) -> None:
        solver = Solver(f, tricks)
        if what == "value":
            solver.value()
        else:
            solver.move_values()
        nodes.append(solver.nodes)

    times = timed(positions(rules, left, 400, seed), seconds, solve)
    return summary(times) | {"nodes": round(sum(nodes) / len(nodes))}


def few_positions(rules: RuleSet, left: int, count: int, seed: int) -> list[FewFastState]:
    """Random three- or two-handed rounds of the checked engine at a trick boundary with
    ``left`` tricks left, every hand known."""
    rng = random.Random(f"few-solver-bench:{seed}:{left}")
    out: list[FewFastState] = []
    cards = list(rules.deck_cards)
    while len(out) < count:
        state = State.new_game(rules.with_(first_dealer=rng.randrange(rules.seats)))
        while state.phase is not Phase.GAME_OVER and len(out) < count:
            if state.phase is Phase.DEAL:
                rng.shuffle(cards)
                state = state.deal(cards)
            elif (
                state.phase is Phase.PLAY
                and not state.trick
                and (rules.tricks_per_round - len(state.tricks) == left)
            ):
                out.append(FewFastState.few_from_state(state))
                break
            else:
                state = state.apply(rng.choice(state.legal_actions()))
    return out


def few_measure(
    rules: RuleSet, left: int, seconds: float, seed: int, what: str
) -> dict[str, float]:
    """Search fresh three- or two-seat positions for ``seconds`` of CPU time (:func:`timed`)."""

    def solve(f: FewFastState) -> None:
        me = f.to_act
        if what == "value":
            f.search(me, -_INF, _INF)
            return
        table: dict[int, tuple[float, int]] = {}  # one a decision, as the expert bot's
        for group in equivalent_groups(f):
            f.push(group[0])
            f.search(me, -_INF, _INF, table)
            f.pop()

    return summary(timed(few_positions(rules, left, 200, seed), seconds, solve))


def report(left: int, r: dict[str, float]) -> None:
    nodes = f"{r['nodes']:>7} nodes, " if "nodes" in r else ""
    print(
        f"    {left} tricks left: {r['per_s']:>9.2f} positions/s  "
        f"(median {r['median_ms']:8.2f} ms, 90th pct {r['p90_ms']:8.2f} ms, "
        f"max {r['max_ms']:8.1f} ms, {nodes}{r['positions']} positions)",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="classic", choices=sorted(RULE_SETS))
    ap.add_argument("--installed", action="store_true", help="the installed package")
    args = ap.parse_args()
    rules = RULE_SETS[args.variant]
    figures: dict[str, object] = {"variant": args.variant, "seed": args.seed, "build": build()}
    print(
        f"belote-p2p double-dummy solver, {args.variant} (CPython {sys.version.split()[0]}, "
        f"{build()} build, one core, CPU time)"
    )
    if rules.seats < 4:
        for what, label in (("value", "exact value"), ("moves", "every legal card, exact")):
            print(f"  {label}:")
            for left in (6, 5, 4) if rules.seats == 3 else (8, 6, 4):
                r = few_measure(rules, left, args.seconds, args.seed, what)
                figures[f"{what}_{left}_left"] = r
                report(left, r)
        print(json.dumps(figures))
        return
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
            report(left, r)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
