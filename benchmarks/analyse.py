"""The coach's speed: a whole game to 501 analysed, and the round just played.

    python benchmarks/analyse.py [--variant classic] [--target 501] [--seed N] [--games G]
        [--installed]

A game is played in this process, seat 0 by the ``random`` bot and the others by the
``expert`` at its table budget (the issue's ``host --bots 3:expert --bot random``, without
the network), then analysed as ``belote-p2p analyse`` does (both views, every seat, the
coach's evaluator ``expert:samples=128:bid_samples=96``), and its last round as the coach
line after a round does (one seat, both views). Times are CPU seconds of this process (one
core). Also shown: each seat's mean loss a decision in both views (the random seat's should
be the largest). Targets: the whole game 15 s, a round 2 s. Prints a readable report and
ends with one JSON line of its figures.

It measures this checkout's source (pure Python), or with ``--installed`` the installed
package (compiled with mypyc where ``pip install`` could: what ``belote-p2p analyse`` runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if "--installed" not in sys.argv[1:]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's source

from belote_p2p.app.coach import make_coach
from belote_p2p.game.build import build
from belote_p2p.game.rules import rule_set
from belote_p2p.players.arena import play_game


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="classic")
    ap.add_argument("--target", type=int, default=501)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument(
        "--installed", action="store_true", help="the installed package, not this checkout"
    )
    args = ap.parse_args()
    print(
        f"belote-p2p coach analysis, {args.variant} to {args.target} "
        f"({build()} build, CPU seconds, one core)"
    )
    games = []
    for g in range(args.games):
        seed = args.seed + g
        rules = rule_set(args.variant, target=args.target)
        state = play_game(rules, ["random"] + ["expert"] * (rules.seats - 1), seed)
        rounds = [(r, None) for r in state.history]
        coach = make_coach()
        start = time.process_time()
        analysis = coach.analyse_game(state.rules, rounds)
        whole = time.process_time() - start
        start = time.process_time()
        make_coach().analyse_round(state.history[-1], None, {0})
        last = time.process_time() - start
        summaries = analysis.summaries()
        decisions = sum(s.decisions for s in summaries)
        ordered = all(summaries[0].mean_loss > s.mean_loss for s in summaries[1:])
        games.append(
            {
                "seed": seed,
                "rounds": len(rounds),
                "decisions": decisions,
                "game_cpu_s": round(whole, 2),
                "round_cpu_s": round(last, 3),
                "per_round_cpu_s": round(whole / len(rounds), 3),
                "mean_loss": [round(s.mean_loss, 2) for s in summaries],
                "hindsight_mean_loss": [round(s.hindsight_mean_loss, 2) for s in summaries],
                "random_loses_most": ordered,
            }
        )
        r = games[-1]
        print(
            f"  game {seed}: {r['rounds']} rounds, {decisions} decisions, whole game "
            f"{whole:.2f} s ({r['per_round_cpu_s']:.2f} s a round), last round for one seat "
            f"{last:.3f} s; mean loss a decision {r['mean_loss']} (hindsight "
            f"{r['hindsight_mean_loss']}); the random seat loses most: {ordered}",
            flush=True,
        )
    figures = {
        "build": build(),
        "variant": args.variant,
        "target": args.target,
        "games": games,
        "max_game_cpu_s": max(g["game_cpu_s"] for g in games),
        "max_round_cpu_s": max(g["round_cpu_s"] for g in games),
        "random_loses_most": all(g["random_loses_most"] for g in games),
    }
    print(
        f"  worst: whole game {figures['max_game_cpu_s']} s (target 15), round "
        f"{figures['max_round_cpu_s']} s (target 2)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
