"""The coach's hindsight where the exact search stops: what its stand-in loses there, and
what the exact search would cost.

    python benchmarks/hindsight.py [--positions N] [--seed N] [--installed]

With every hand seen, the coach values a card exactly from 6 tricks left (four seats), 5
(three-handed) or 9 of 16 (two-handed); earlier, at four seats by the solver's search of
the next 3 tricks and its greedy double-dummy playout, at three and two by the card followed
by a playout of the rest (:mod:`belote_p2p.players.hindsight`). This measures that stand-in
a little earlier than the exact search reaches, where the exact value can still be had:
positions with 6 and 7 tricks left (four seats, classic), 6 (three-handed) and 12
(two-handed), each a deal bid by the ``rules`` bot and played by the careful policy up to a
random seat's turn of that trick. For each position it finds the card the exact search
values best, the card each of two stand-ins values best (at four seats the search of 2 and
of 3 tricks, :data:`SEARCHES`; at three and two seats two playouts: the greedy policy, the
hindsight's, and the careful one, the ``expert`` bot's), and the exact value that card
loses against the best: the report gives how often each finds the best card, its mean
loss, and the difference of the two losses with its 95% interval; at four seats also the
CPU time a decision of the exact values of every legal card and of each search.
Deterministic given ``--seed`` (but the times). Prints a readable report and ends with one
JSON line of its figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if "--installed" not in sys.argv[1:]:  # this checkout's source, pure Python
    for extra in (ROOT, ROOT / "plugins"):
        if str(extra) not in sys.path:
            sys.path.insert(0, str(extra))

from belote_bots.rules_bot import RulesBot
from playout import bid

from belote_p2p.game.build import build
from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import Action, State
from belote_p2p.game.fastplay import FastState
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.players.hindsight import Hindsight, Method, side_net

TRICKS_LEFT = {"three-handed": 6, "two-handed": 12}
"""Tricks left at the positions measured: one more than the hindsight's exact search
reaches at three seats, three more at two (where it searches 9 of 16)."""
FOUR_SEATS_LEFT = (6, 7)
"""Four seats (classic): where the hindsight's exact search starts, and one trick before."""
SEARCHES = (2, 3)
"""Four seats: the tricks searched exactly before the greedy double-dummy playout, by the
stand-ins compared (the hindsight's is :data:`~belote_p2p.players.hindsight.SEARCH_TRICKS`)."""


def position(variant: str, left: int, rng: random.Random) -> State:
    """A position of ``variant`` with ``left`` tricks left, at a random seat's turn, with
    more than one card worth considering."""
    rules = RULE_SETS[variant]
    while True:
        state = bid(rules, rng)
        played = (rules.tricks_per_round - left) * rules.seats + rng.randrange(rules.seats)
        for _ in range(played):
            state = state.apply(CARDS[FastState.from_state(state).careful_card()])
        if len(set(exact_values(state).values())) > 1:
            return state


def exact_values(state: State) -> dict[Action, float]:
    found = Hindsight(RulesBot(), exact=8, few_exact={3: 8, 2: 16}).values(state, random.Random(0))
    assert found is not None and found.method is Method.EXACT
    return found.values


def search_values(state: State, tricks: int) -> dict[Action, float]:
    found = Hindsight(RulesBot(), exact=0, search=tricks).values(state, random.Random(0))
    assert found is not None and found.method is Method.SEARCH
    return found.values


def greedy_values(state: State) -> dict[Action, float]:
    found = Hindsight(RulesBot(), few_exact={3: 0, 2: 0}).values(state, random.Random(0))
    assert found is not None and found.method is Method.GREEDY
    return found.values


def careful_values(state: State) -> dict[Action, float]:
    out: dict[Action, float] = {}
    for card in state.legal_actions():
        f = FastState.from_state(state.apply(card))
        f.play_careful()
        out[card] = side_net(f.score(), state.to_act, state.seats)
    return out


def interval(xs: list[float]) -> tuple[float, float]:
    """The mean of ``xs`` and the half-width of its 95% interval."""
    return statistics.fmean(xs), 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))


def best_card(values: dict[Action, float]) -> Action:
    """The card ``values`` rates best, ties going to the first card by name (the same way
    for every stand-in)."""
    return max(sorted(values, key=str), key=lambda c: values[c])


def cost(times: list[float]) -> tuple[float, float, str]:
    """The median and 99th percentile of ``times`` in ms, and both with the max in words."""
    median = statistics.median(times) * 1e3
    p99 = statistics.quantiles(times, n=100, method="inclusive")[98] * 1e3  # never above the max
    return median, p99, f"{median:.1f} / {p99:.0f} / {max(times) * 1e3:.0f} ms"


def four_seats(positions: int, seed: int, figures: dict[str, object]) -> None:
    """The bounded searches against the exact value, and the costs of both, four seats."""
    for left in FOUR_SEATS_LEFT:
        rng = random.Random(f"{seed}:classic:{left}")
        losses: dict[int, list[float]] = {k: [] for k in SEARCHES}
        found = dict.fromkeys(SEARCHES, 0)
        exact_times: list[float] = []
        times: dict[int, list[float]] = {k: [] for k in SEARCHES}
        for _ in range(positions):
            state = position("classic", left, rng)
            start = time.process_time()
            exact = exact_values(state)
            exact_times.append(time.process_time() - start)
            top = max(exact.values())
            for k in SEARCHES:
                start = time.process_time()
                card = best_card(search_values(state, k))
                times[k].append(time.process_time() - start)
                losses[k].append(top - exact[card])
                found[k] += exact[card] == top
        median, p99, text = cost(exact_times)
        print(f"  classic, {positions} positions with {left} tricks left (CPU a decision: "
              f"median / 99th percentile / max):")  # fmt: skip
        print(f"    exact values of every card: {text}")
        figures[f"classic_{left}_exact_median_ms"] = round(median, 2)
        figures[f"classic_{left}_exact_p99_ms"] = round(p99, 1)
        for k in SEARCHES:
            median, p99, text = cost(times[k])
            mean, half = interval(losses[k])
            share = found[k] / positions
            print(f"    {k} tricks searched, then the greedy playout: best card {share:.1%}, "
                  f"mean loss {mean:.2f} ± {half:.2f}; {text}")  # fmt: skip
            figures[f"classic_{left}_search{k}_median_ms"] = round(median, 2)
            figures[f"classic_{left}_search{k}_p99_ms"] = round(p99, 1)
            figures[f"classic_{left}_search{k}_best"] = round(share, 4)
            figures[f"classic_{left}_search{k}_loss"] = round(mean, 3)
        diff = [a - b for a, b in zip(losses[SEARCHES[0]], losses[SEARCHES[1]], strict=True)]
        mean, half = interval(diff)
        print(f"    {SEARCHES[0]} − {SEARCHES[1]} tricks' loss: "
              f"{mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}]")  # fmt: skip
        figures[f"classic_{left}_search{SEARCHES[0]}_minus_search{SEARCHES[1]}"] = round(mean, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=200, help="positions a variant")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--installed", action="store_true", help="the installed package")
    args = parser.parse_args()
    print(f"the coach's hindsight where its exact search stops ({build()} build, seed {args.seed})")
    figures: dict[str, object] = {"build": build(), "seed": args.seed}
    four_seats(args.positions, args.seed, figures)
    for variant, left in TRICKS_LEFT.items():
        rng = random.Random(f"{args.seed}:{variant}")
        start = time.process_time()
        losses: dict[str, list[float]] = {"greedy": [], "careful": []}
        found = dict.fromkeys(losses, 0)
        for _ in range(args.positions):
            state = position(variant, left, rng)
            exact = exact_values(state)
            top = max(exact.values())
            for name, values in (("greedy", greedy_values), ("careful", careful_values)):
                card = best_card(values(state))
                losses[name].append(top - exact[card])
                found[name] += exact[card] == top
        n = args.positions
        print(f"  {variant}, {n} positions with {left} tricks left "
              f"({time.process_time() - start:.0f} s of CPU):")  # fmt: skip
        for name in losses:
            mean, half = interval(losses[name])
            print(f"    {name:8} playout: best card {found[name] / n:.1%}, "
                  f"mean loss {mean:.2f} ± {half:.2f}")  # fmt: skip
            figures[f"{variant}_{name}_best"] = round(found[name] / n, 4)
            figures[f"{variant}_{name}_loss"] = round(mean, 3)
        diff = [g - c for g, c in zip(losses["greedy"], losses["careful"], strict=True)]
        mean, half = interval(diff)
        print(f"    greedy − careful loss: {mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}]")
        figures[f"{variant}_greedy_minus_careful"] = round(mean, 3)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
