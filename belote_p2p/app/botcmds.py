"""The bot commands: ``bots`` lists the installed bots, ``arena`` plays them against each
other on duplicate boards (the matches themselves are :mod:`belote_p2p.players.arena`'s).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import ExitStack
from typing import Any

from belote_p2p.app.argtypes import positive_int, seed
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.players.arena import open_cluster, run_ladder, run_match
from belote_p2p.players.bots import BotError, load_bots, make_bot


def _cmd_bots(args: argparse.Namespace) -> int:
    try:
        bots = load_bots()
    except BotError as exc:
        print(f"error: {exc}")
        return 1
    rows = [
        {
            "name": b.name,
            "version": b.version,
            "package": b.package,
            "description": b.description.strip().splitlines()[0] if b.description.strip() else "",
        }
        for b in sorted(bots.values(), key=lambda b: b.name)
    ]
    if args.json:
        print(json.dumps(rows))
        return 0
    widths = {k: max([len(k), *(len(r[k]) for r in rows)]) for k in ("name", "version", "package")}
    header = "  ".join(k.upper().ljust(widths[k]) for k in widths) + "  DESCRIPTION"
    print(header)
    for r in rows:
        print("  ".join(r[k].ljust(widths[k]) for k in widths) + "  " + r["description"])
    return 0


def _register_bots(subparsers: Any) -> None:
    parser = subparsers.add_parser("bots", help="list the installed bots")
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.set_defaults(func=_cmd_bots)


class ProgressBar:
    """A one-line progress bar on standard error, one per match (the arena's ``progress``)."""

    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.start = time.perf_counter()

    def __call__(self, label: str, done: int, total: int) -> None:
        if done == 0:
            self.start = time.perf_counter()
        filled = self.width * done // max(total, 1)
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        sys.stderr.write(
            f"\r{label} [{'#' * filled}{'.' * (self.width - filled)}] "
            f"{done}/{total} boards {rate:.0f}/s"
        )
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def register(subparsers: Any) -> None:
    _register_bots(subparsers)
    p = subparsers.add_parser(
        "arena",
        help="play bots against each other on duplicate boards",
        description="Duplicate-board match between two bots (or a ladder of several).",
    )
    p.add_argument(
        "--bots", required=True, help="A,B (specs name[:key=value...]); more with --ladder"
    )
    p.add_argument(
        "--boards", type=positive_int, default=200, help="boards per match (default 200)"
    )
    p.add_argument("--variant", default="classic", choices=sorted(RULE_SETS),
                   help="the rules the boards are dealt and played under")  # fmt: skip
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1, help="processes")
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the boards on a Dask scheduler (tcp://host:8786), or 'local': a LocalCluster "
        "of --jobs workers (pip install 'belote-p2p[cluster]')",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the boards and bots")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--ladder", action="store_true", help="every bot against every other")
    p.add_argument(
        "--no-progress", action="store_true",
        help="no progress bar (there is none when standard error is not a terminal)",
    )  # fmt: skip
    p.set_defaults(func=_cmd_arena)


def _cmd_arena(args: argparse.Namespace) -> int:
    specs = [s.strip() for s in args.bots.split(",") if s.strip()]
    if len(specs) != 2 and not (args.ladder and len(specs) >= 2):
        print("error: --bots takes two bots (or two or more with --ladder)", file=sys.stderr)
        return 2
    progress = None if args.no_progress or not sys.stderr.isatty() else ProgressBar()
    try:
        known = load_bots()
        for spec in specs:
            make_bot(spec, known)  # a bad name or option, before any cluster or match starts
        with ExitStack() as stack:
            cluster = None
            if args.cluster:
                cluster = stack.enter_context(open_cluster(args.cluster, args.jobs))
            how: dict[str, Any] = {
                "boards": args.boards,
                "variant": args.variant,
                "seed": args.seed,
                "jobs": args.jobs,
                "progress": progress,
                "cluster": cluster,
            }
            if args.ladder:
                out = run_ladder(specs, **how)
                print(json.dumps(out) if args.json else format_ladder(out))
                return 0
            match = run_match((specs[0], specs[1]), **how)
    except (BotError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = match.summary()
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def format_summary(s: dict[str, Any]) -> str:
    a, b = s["bots"]
    lo, hi = s["ci95"]
    elo_lo, elo_hi = s["elo_ci95"]
    lines = [
        f"{a} vs {b}, {s['variant']}, {s['boards']} duplicate boards, seed {s['seed']}",
        f"  points per board ({a}):  {s['points_per_board']:+.1f}  95% CI [{lo:+.1f}, {hi:+.1f}]"
        f"  (sd {s['sd']:.1f})",
        f"  round win rate:        {100 * s['round_win_rate']:.1f}%",
        f"  board win rate:        {100 * s['board_win_rate']:.1f}%",
        f"  Elo difference:        {s['elo']:+.0f}  [{elo_lo:+.0f}, {elo_hi:+.0f}]",
        f"  time:                  {s['seconds']:.2f} s ({s['boards_per_second']} boards/s)",
    ]
    for name, c in s["fallbacks"].items():
        if c["illegal"] or c["errors"] or c["timeouts"]:
            lines.append(
                f"  fallbacks {name}: {c['illegal']} illegal, {c['errors']} errors, "
                f"{c['timeouts']} timeouts of {c['decisions']}"
            )
    return "\n".join(lines)


def format_ladder(out: dict[str, Any]) -> str:
    lines = [f"{'bot':<24} {'Elo':>7} {'pts/board':>10}"]
    for row in out["ladder"]:
        lines.append(f"{row['bot']:<24} {row['elo']:>+7.0f} {row['points_per_board']:>+10.1f}")
    lines.append("")
    lines.extend(format_summary(m) for m in out["matches"])
    return "\n".join(lines)
