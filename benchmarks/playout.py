"""The playout policies measured against each other: the careful one against the greedy one.

    python benchmarks/playout.py [--deals N] [--seed N] [--installed]

The ``expert`` bot values a card by playouts in which every seat plays one policy on the
fast path (:meth:`~belote_p2p.game.fastplay.FastState.careful_card`, or with
``expert:playout=greedy`` :meth:`~belote_p2p.game.fastplay.FastState.greedy_card`, the
``pimc`` bot's). This plays the two policies against each other on duplicate deals, as the
arena plays bots: each deal is bid by the ``rules`` bot on the checked engine (redealt when
every seat passes), then its card play is played out on the fast path twice, the careful
policy holding one side's seats and then the other's (at three and two seats, each seat in
turn against the greedy policy at the others, minus the same seat's score when every seat
plays greedily). A deal's score is the careful policy's net round score minus the greedy
one's; the report gives its mean with a 95% interval, for each variant. Deterministic given
``--seed``. Prints a readable report and ends with one JSON line of its figures.
"""

from __future__ import annotations

import argparse
import json
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

from belote_p2p.game.build import build
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.fastplay import FastState, FewFastState
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RULE_SETS, RuleSet

VARIANTS = ("classic", "coinche", "three-handed", "two-handed")


def bid(rules: RuleSet, rng: random.Random) -> State:
    """A deal bid by the ``rules`` bot at every seat, at its first card."""
    bot = RulesBot()
    state = State.new_game(rules.with_(target=10**9, first_dealer=rng.randrange(rules.seats)))
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.DEAL:
            deck = list(rules.deck_cards)
            rng.shuffle(deck)
            state = state.deal(deck)
        else:
            state = state.apply(bot.decide(observe(state, state.to_act), rng))
    return state


def play(state: State, careful: list[bool]) -> tuple[int, ...]:
    """The round score with seat ``s`` played by the careful policy when ``careful[s]``."""
    f = FastState.from_state(state) if state.seats == 4 else FewFastState.few_from_state(state)
    while f.tricks < f.length:
        f.play(f.careful_card() if careful[f.to_act] else f.greedy_card())
    return f.score()


def deal_score(state: State) -> float:
    """The careful policy's net score minus the greedy one's on one deal (see the module)."""
    n = state.seats
    if n == 4:
        a = play(state, [True, False, True, False])
        b = play(state, [False, True, False, True])
        return (a[0] - a[1]) + (b[1] - b[0])
    total = 0.0
    greedy = play(state, [False] * n)
    for seat in range(n):
        mine = play(state, [s == seat for s in range(n)])
        total += mine[seat] - (sum(mine) - mine[seat]) / (n - 1)
        total -= greedy[seat] - (sum(greedy) - greedy[seat]) / (n - 1)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20000, help="deals a variant")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--installed", action="store_true", help="the installed package")
    args = parser.parse_args()
    print(f"careful - greedy playout policy, {args.deals} duplicate deals a variant, "
          f"seed {args.seed}, {build()} build")  # fmt: skip
    figures: dict[str, object] = {"deals": args.deals, "seed": args.seed}
    for name in VARIANTS:
        rules = RULE_SETS[name]
        rng = random.Random(f"playout-bench:{args.seed}:{name}")
        start = time.process_time()
        scores = [deal_score(bid(rules, rng)) for _ in range(args.deals)]
        seconds = time.process_time() - start
        mean = statistics.fmean(scores)
        half = 1.96 * statistics.stdev(scores) / len(scores) ** 0.5
        print(f"  {name:13} {mean:+7.2f} points a deal, 95% CI [{mean - half:+.2f}, "
              f"{mean + half:+.2f}]  ({seconds:.1f} s CPU)")  # fmt: skip
        figures[name] = round(mean, 2)
        figures[f"{name}_ci95"] = [round(mean - half, 2), round(mean + half, 2)]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
