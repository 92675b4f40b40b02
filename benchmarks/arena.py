"""Arena throughput and the bars of the built-in ladder.

    python benchmarks/arena.py [--boards N] [--pimc-boards M] [--expert-boards K]
                               [--only-expert] [--expert SPEC] [--pimc SPEC]
                               [--jobs J] [--seed S] [--variant V]
    python benchmarks/arena.py --match A,B --record FILE [--boards N] [--seed S] [--variant V]

Measures boards per second with random bots, rules against random over N boards, and pimc
against rules over M boards (default N // 5) with pimc's decision times; with
``--expert-boards K``, expert against pimc and expert against rules over K boards each,
with every bot's decision times (wall: median, mean, 99th percentile, largest;
``belote-p2p arena`` prints the same rows) (``--only-expert``: those two
matches alone; ``--expert`` and ``--pimc`` set their options, e.g. an equal time budget).
Prints a readable report and, as its last line, one JSON object with every figure.

``--match A,B --record FILE`` plays one match board after board in this process and
appends each board to ``FILE`` (JSON lines) as it ends, skipping the boards already there:
a long match on a shared machine can stop at any time (a deadline fixed in advance, never
the figures so far) and go on later, and ``--boards 0`` reports the boards recorded. The
boards are the ones ``belote-p2p arena`` plays with the same seed and variant;
``--first-board B`` starts at board B (a second process on other boards, its own record:
records are JSON lines, to be joined with ``cat``); each board's row holds the CPU time of
every decision (``"cpu"``), and the report gives each bot's median, 99th percentile and
largest. ``--compare OTHER`` also prints this
match's board scores minus those of another record on the same boards. ``--cpu-boards N``
instead measures each bot's CPU time a decision (its cost on an idle core, which wall
times on a loaded machine overstate) over the first N boards.

It runs this checkout's source (pure Python), or with ``--installed`` the installed package
(the engine and the fast path compiled by mypyc where ``pip install`` could, ``setup.py``):
the same results (every budget is a count), in less time; the JSON line's ``"build"`` says
which ran.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if "--installed" not in sys.argv[1:]:  # this checkout's source, pure Python
    for extra in (ROOT, ROOT / "plugins"):
        if str(extra) not in sys.path:
            sys.path.insert(0, str(extra))

from belote_p2p.app.botcmds import ProgressBar, format_summary
from belote_p2p.game.build import build
from belote_p2p.game.rules import rule_set
from belote_p2p.players.arena import (
    BoardTimes,
    MatchResult,
    play_board,
    run_match,
    time_figures,
)
from belote_p2p.players.bots import FallbackCounts, load_bots, split_specs
from belote_p2p.players.records import RecordError, append_rows, board_row, read_record
from belote_p2p.players.records import compare as compare_records


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
    print(flush=True)
    return summary


def recorded(
    path: Path, specs: tuple[str, str] | None, variant: str | None, seed: int | None
) -> MatchResult:
    """The match a record file holds (``records.read_record``), its errors as an exit."""
    try:
        return read_record(path, specs, variant, seed)
    except RecordError as exc:
        raise SystemExit(str(exc)) from exc


def print_time_rows(rows: dict[str, Any], what: str, boards: int) -> None:
    """Each bot's decision times (:func:`time_figures`), one line a bot."""
    for name, row in rows.items():
        print(
            f"  {what} a decision {name}: median {1000 * row['median']:.1f} ms, mean "
            f"{1000 * row['mean']:.1f} ms, 99th percentile {1000 * row['p99']:.0f} ms, "
            f"max {1000 * row['max']:.0f} ms ({row['decisions']} decisions, {boards} boards)",
            flush=True,
        )


def cpu_times(specs: tuple[str, str], boards: int, variant: str, seed: int) -> dict[str, Any]:
    """Each bot's CPU seconds a decision over the first ``boards`` boards (the arena's
    deals and generators, at any table size): the cost of a decision on an idle core,
    which wall-clock times on a loaded machine overstate."""
    bots = load_bots()
    rules = rule_set(variant)
    times: tuple[list[float], list[float]] = ([], [])
    for board in range(boards):
        play_board(specs, rules, seed, board, bots, times=times, clock=time.thread_time)
    rows = {name: time_figures(ts) for name, ts in zip(specs, times, strict=True) if ts}
    print_time_rows(rows, "CPU", boards)
    return {"boards": boards, **rows}


def compare(match: MatchResult, other: MatchResult) -> dict[str, Any]:
    """This match's board scores minus another's on the boards both played (the same seed
    and variant: the same deals), with a 95% interval: what changing A's spec is worth,
    each deal's luck taken out once more."""
    try:
        out = compare_records(match, other)
    except RecordError as exc:
        raise SystemExit(str(exc)) from exc
    lo, hi = out["ci95"]
    print(
        f"  minus {other.bots[0]} vs {other.bots[1]} on the same {out['boards']} boards: "
        f"{out['difference']:+.1f} 95% CI [{lo:+.1f}, {hi:+.1f}] (sd {out['sd']:.1f})",
        flush=True,
    )
    return out


def record_match(
    specs: tuple[str, str], boards: int, variant: str, seed: int, path: Path, first: int = 0
) -> dict[str, Any]:
    """Play boards ``first..boards-1`` missing from the record at ``path``, appending each
    as it ends; the summary of every board recorded."""
    done = {b.board for b in recorded(path, specs, variant, seed).boards}
    bots = load_bots()
    rules = rule_set(variant)
    counts = (FallbackCounts(), FallbackCounts())
    for board in range(first, boards):
        if board in done:
            continue
        times: BoardTimes = ([], [])
        start = time.perf_counter()
        result = play_board(specs, rules, seed, board, bots, counts, times, clock=time.thread_time)
        seconds = time.perf_counter() - start
        row = board_row((specs, variant, seed), replace(result, times=times), seconds, cpu=True)
        append_rows(path, [row])
    match = recorded(path, specs, variant, seed)
    summary = match.summary()
    print(format_summary(summary), flush=True)
    # Each decision's CPU time (its thread's): what it costs whatever the machine's load.
    print("  (decision times: the CPU time of the deciding thread)", flush=True)
    summary["decision_clock"] = "cpu"
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=1000, help="rules vs random boards")
    parser.add_argument("--pimc-boards", type=int, default=0, help="default: boards // 5")
    parser.add_argument("--throughput-boards", type=int, default=0, help="default: 4 × boards")
    parser.add_argument("--expert-boards", type=int, default=0, help="expert vs pimc, rules")
    parser.add_argument("--only-expert", action="store_true", help="the expert matches alone")
    parser.add_argument("--expert", default="expert", help="the expert's spec")
    parser.add_argument("--pimc", default="pimc", help="the pimc spec the expert meets")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--match", help="A,B: one match, recorded board by board (--record)")
    parser.add_argument("--record", type=Path, help="the JSON-lines record of --match")
    parser.add_argument(
        "--cpu-boards",
        type=int,
        default=0,
        help="--match: CPU time a decision of each bot over this many boards, then stop",
    )
    parser.add_argument(
        "--first-board", type=int, default=0, help="--match plays boards from this one on"
    )
    parser.add_argument(
        "--installed",
        action="store_true",
        help="the installed package (compiled with mypyc where pip could), not this checkout",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        action="append",
        default=[],
        help="another match's record: this match's boards minus its boards (repeatable)",
    )
    args = parser.parse_args()
    if args.match:
        if args.record is None and not args.cpu_boards:
            parser.error("--match needs --record FILE")
        a, b = split_specs(args.match)
        if args.cpu_boards:
            times = cpu_times((a, b), args.cpu_boards, args.variant, args.seed)
            print(
                json.dumps({"build": build(), "variant": args.variant, "seed": args.seed, **times})
            )
            return 0
        summary = record_match(
            (a, b), args.boards, args.variant, args.seed, args.record, args.first_board
        )
        match = recorded(args.record, (a, b), args.variant, args.seed)
        summary["compared"] = [
            compare(match, recorded(other, None, args.variant, None)) for other in args.compare
        ]
        summary["build"] = build()
        print(json.dumps(summary))
        return 0
    pimc_boards = args.pimc_boards or max(args.boards // 5, 1)
    throughput_boards = args.throughput_boards or 4 * args.boards
    figures: dict[str, Any] = {
        "build": build(),
        "variant": args.variant,
        "jobs": args.jobs,
        "seed": args.seed,
    }
    keys = ("boards", "points_per_board", "ci95", "sd", "elo", "elo_ci95", "seconds")

    if not args.only_expert:
        print(f"== throughput: random vs random, {throughput_boards} boards, {args.jobs} jobs")
        rnd = measure(("random", "random"), throughput_boards, args.variant, args.seed, args.jobs)
        print(f"== rules vs random, {args.boards} boards ({args.variant})")
        rules = measure(("rules", "random"), args.boards, args.variant, args.seed, args.jobs)
        print(f"== pimc vs rules, {pimc_boards} boards ({args.variant})")
        pimc = measure(("pimc", "rules"), pimc_boards, args.variant, args.seed, args.jobs, True)
        figures.update(
            {
                "throughput_boards_per_s": rnd["boards_per_second"],
                "throughput_boards": rnd["boards"],
                "rules_vs_random": {k: rules[k] for k in keys if k in rules},
                "pimc_vs_rules": {k: pimc[k] for k in keys if k in pimc},
                "pimc_decision_s": pimc.get("decision_s", {}).get("pimc"),
                "bars": {
                    "throughput_2000": rnd["boards_per_second"] >= 2000,
                    "rules_beats_random_by_40": rules["points_per_board"] >= 40,
                    "pimc_beats_rules_ci_above_0": pimc["ci95"][0] > 0,
                },
            }
        )
    if args.expert_boards:
        for key, other in (("pimc", args.pimc), ("rules", "rules")):
            specs = (args.expert, other)
            print(f"== {specs[0]} vs {other}, {args.expert_boards} boards ({args.variant})")
            m = measure(specs, args.expert_boards, args.variant, args.seed, args.jobs, True)
            figures[f"expert_vs_{key}"] = {
                "bots": list(specs),
                **{k: m[k] for k in keys if k in m},
                "decision_s": m.get("decision_s", {}),
                "ci_above_0": m["ci95"][0] > 0,
            }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
