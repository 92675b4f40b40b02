"""The coach's hindsight with two or three players: which playout stands in best for the
exact value where the exact search is too long.

    python benchmarks/hindsight.py [--positions N] [--seed N] [--installed]

With every hand seen, the coach values a card exactly from 5 tricks left (three-handed) or
9 of 16 (two-handed); earlier, by the card followed by a playout of the rest
(:mod:`belote_p2p.players.hindsight`). This measures that stand-in a little earlier than
the exact search reaches, where the exact value can still be had: positions with 6 tricks
left (three-handed) and 12 (two-handed), each a deal bid by the ``rules`` bot and played by
the careful policy up to a random seat's turn of that trick. For each position it finds the
card the exact search values best, the card each playout (the greedy policy, the
hindsight's, and the careful one, the ``expert`` bot's) values best, and the exact value the
playout's card loses against the best: the report gives how often each playout finds the
best card and its mean loss, with the difference of the two losses and its 95% interval.
Deterministic given ``--seed``. Prints a readable report and ends with one JSON line of its
figures.
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


def position(variant: str, rng: random.Random) -> State:
    """A position of ``variant`` with :data:`TRICKS_LEFT` tricks left, at a random seat's
    turn, with more than one card worth considering."""
    rules = RULE_SETS[variant]
    while True:
        state = bid(rules, rng)
        played = (rules.tricks_per_round - TRICKS_LEFT[variant]) * rules.seats
        played += rng.randrange(rules.seats)
        for _ in range(played):
            state = state.apply(CARDS[FastState.from_state(state).careful_card()])
        if len(set(exact_values(state).values())) > 1:
            return state


def exact_values(state: State) -> dict[Action, float]:
    found = Hindsight(RulesBot(), few_exact={3: 8, 2: 16}).values(state, random.Random(0))
    assert found is not None and found.method is Method.EXACT
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=200, help="positions a variant")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--installed", action="store_true", help="the installed package")
    args = parser.parse_args()
    print(f"the coach's hindsight at two and three seats ({build()} build, seed {args.seed})")
    figures: dict[str, object] = {"build": build(), "seed": args.seed}
    for variant, left in TRICKS_LEFT.items():
        rng = random.Random(f"{args.seed}:{variant}")
        start = time.process_time()
        losses: dict[str, list[float]] = {"greedy": [], "careful": []}
        found = dict.fromkeys(losses, 0)
        for _ in range(args.positions):
            state = position(variant, rng)
            exact = exact_values(state)
            top = max(exact.values())
            for name, values in (("greedy", greedy_values), ("careful", careful_values)):
                guess = values(state)
                # Ties go the same way for both playouts (the first card by name).
                card = max(sorted(guess, key=str), key=lambda c: guess[c])
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
