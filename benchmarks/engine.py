"""Engine throughput: random legal play of whole rounds, and the legal-moves call alone.

    python benchmarks/engine.py [--seconds S] [--variant classic|coinche|...]

A round is: deal a shuffled deck, bid until a contract (classic rounds where everybody
passes twice count as rounds too: they are redealt), play the 32 cards, score. Each action
is drawn uniformly from ``legal_actions()`` with a seeded ``random.Random`` and applied with
the checked ``State.apply``. Times are CPU seconds of this process (one core).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.rules import RULE_SETS


def rounds(variant: str, seconds: float, seed: int) -> tuple[int, int, float]:
    rng = random.Random(seed)
    start = State.new_game(RULE_SETS[variant].with_(target=10**9))
    deck = list(CARDS)
    n = actions = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        for _ in range(100):
            rng.shuffle(deck)
            s = start.deal(deck)
            while s.phase is not Phase.DEAL:
                s = s.apply(rng.choice(s.legal_actions()))
                actions += 1
            n += 1
        now = time.process_time()
        if now >= deadline:
            return n, actions, now - t0


def legal_moves(seconds: float, seed: int) -> tuple[int, float]:
    """Calls of ``legal_actions()`` on play positions sampled from random rounds."""
    rng = random.Random(seed)
    positions = []
    s = State.new_game(RULE_SETS["classic"].with_(target=10**9))
    while len(positions) < 2000:
        deck = list(CARDS)
        rng.shuffle(deck)
        s = s.deal(deck)
        while s.phase is not Phase.DEAL:
            if s.phase is Phase.PLAY:
                positions.append(s)
            s = s.apply(rng.choice(s.legal_actions()))
    n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for p in positions:
            p._cat_cache = None  # measure the computation, not the per-state cache
            p.legal_actions()
        n += len(positions)
    return n, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    figures: dict[str, float] = {}
    print(f"belote-p2p engine benchmark (CPython {sys.version.split()[0]}, one core, CPU time)")
    for variant in ("classic", "coinche"):
        n, actions, t = rounds(variant, args.seconds, args.seed)
        rate = n / t
        figures[f"{variant.replace('-', '_')}_rounds_per_s"] = round(rate)
        print(
            f"  {variant:<10} {n:>7} rounds in {t:5.2f} s: {rate:>8.0f} rounds/s, "
            f"{actions / n:4.1f} actions/round, {t / actions * 1e6:5.2f} µs/action"
        )
    n, t = legal_moves(args.seconds, args.seed)
    figures["legal_actions_per_s"] = round(n / t)
    print(f"  legal_actions() alone: {n / t:>10.0f} calls/s ({t / n * 1e6:.2f} µs/call)")
    figures["rounds_per_s"] = figures["classic_rounds_per_s"]
    target = 10_000
    verdict = "meets" if figures["rounds_per_s"] >= target else "misses"
    print(f"  target {target} classic rounds/s: {verdict}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
