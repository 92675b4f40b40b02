"""Arena throughput and the bars of the built-in ladder.

    python benchmarks/arena.py [--boards N] [--pimc-boards M] [--jobs J] [--seed S]

Measures boards per second with random bots, rules against random over N boards, and pimc
against rules over M boards (default N // 5) with pimc's median decision time. Prints a
readable report and, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from belote_p2p.app.botcmds import ProgressBar, format_summary
from belote_p2p.players.arena import run_match


def measure(
    specs: tuple[str, str], boards: int, variant: str, seed: int, jobs: int, timed: bool = False
) -> dict[str, Any]:
    match = run_match(
        specs,
        boards=boards,
        variant=variant,
        seed=seed,
        jobs=jobs,
        progress=ProgressBar(),
        timed=timed,
    )
    summary = match.summary()
    print(format_summary(summary), flush=True)
    if "decision_median_s" in summary:
        for name, median in summary["decision_median_s"].items():
            print(f"  median decision time {name}: {1000 * median:.1f} ms", flush=True)
    print(flush=True)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=1000, help="rules vs random boards")
    parser.add_argument("--pimc-boards", type=int, default=0, help="default: boards // 5")
    parser.add_argument("--throughput-boards", type=int, default=0, help="default: 4 × boards")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--variant", default="classic")
    args = parser.parse_args()
    pimc_boards = args.pimc_boards or max(args.boards // 5, 1)
    throughput_boards = args.throughput_boards or 4 * args.boards

    print(f"== throughput: random vs random, {throughput_boards} boards, {args.jobs} jobs")
    rnd = measure(("random", "random"), throughput_boards, args.variant, args.seed, args.jobs)
    print(f"== rules vs random, {args.boards} boards ({args.variant})")
    rules = measure(("rules", "random"), args.boards, args.variant, args.seed, args.jobs)
    print(f"== pimc vs rules, {pimc_boards} boards ({args.variant})")
    pimc = measure(("pimc", "rules"), pimc_boards, args.variant, args.seed, args.jobs, True)

    figures = {
        "variant": args.variant,
        "jobs": args.jobs,
        "seed": args.seed,
        "throughput_boards_per_s": rnd["boards_per_second"],
        "throughput_boards": rnd["boards"],
        "rules_vs_random": {
            k: rules[k] for k in ("boards", "points_per_board", "ci95", "sd", "elo")
        },
        "pimc_vs_rules": {
            k: pimc[k] for k in ("boards", "points_per_board", "ci95", "sd", "elo", "seconds")
        },
        "pimc_decision_median_s": pimc.get("decision_median_s", {}).get("pimc"),
        "bars": {
            "throughput_2000": rnd["boards_per_second"] >= 2000,
            "rules_beats_random_by_40": rules["points_per_board"] >= 40,
            "pimc_beats_rules_ci_above_0": pimc["ci95"][0] > 0,
        },
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
