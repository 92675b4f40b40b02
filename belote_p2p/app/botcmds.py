"""The bot commands: ``bots`` lists the installed bots, ``arena`` plays two of them against
each other on duplicate boards, ``tournament`` plays every pair and rates them (the matches
are :mod:`belote_p2p.players.arena`'s, the ratings :mod:`belote_p2p.players.tournament`'s).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from belote_p2p.game.rules import RULE_SETS
from belote_p2p.players.arena import BOT_DEADLINE, open_cluster, run_match
from belote_p2p.players.bots import BotError, load_bots, make_bot, split_specs
from belote_p2p.players.tournament import (
    fallback_lines,
    format_tournament,
    run_tournament,
    tournament_html,
)


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


def _match_arguments(p: argparse.ArgumentParser) -> None:
    """What the arena and the tournament both take: boards, variant, jobs, cluster..."""
    p.add_argument("--boards", type=int, default=200, help="boards per match (default 200)")
    p.add_argument("--variant", default="classic", choices=sorted(RULE_SETS))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the boards on a Dask scheduler (tcp://host:8786), or 'local': a LocalCluster "
        "of --jobs workers (pip install 'belote-p2p[cluster]')",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the boards and bots")
    p.add_argument(
        "--bot-deadline", type=float, default=BOT_DEADLINE, metavar="S",
        help=f"seconds a decision of an exec bot ({BOT_DEADLINE:g}); in-process bots are "
        "bounded by their own options",
    )  # fmt: skip
    p.add_argument(
        "--no-progress", action="store_true",
        help="no progress bar (there is none when standard error is not a terminal)",
    )  # fmt: skip


def register(subparsers: Any) -> None:
    _register_bots(subparsers)
    p = subparsers.add_parser(
        "arena",
        help="play bots against each other on duplicate boards",
        description="Duplicate-board match between two bots (or a ladder of several: "
        "the tournament's ratings).",
    )
    p.add_argument(
        "--bots", required=True,
        help="A,B (specs name[:key=value...], a value in quotes may hold : and ,); "
        "more with --ladder",
    )  # fmt: skip
    _match_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--ladder", action="store_true", help="every bot against every other")
    p.set_defaults(func=_cmd_arena)
    t = subparsers.add_parser(
        "tournament",
        help="rate bots: every pair on the same duplicate boards",
        description="A round robin: every pair of bots plays the same duplicate boards; "
        "prints a ratings table (Bradley-Terry, in Elo, with 95% bootstrap intervals) and "
        "each pair's points per board, then one JSON line.",
    )
    t.add_argument("--bots", required=True, help="A,B,C... (two or more bot specs)")
    _match_arguments(t)
    t.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML report")
    t.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap draws of the boards (1000)"
    )
    t.set_defaults(func=_cmd_tournament)


def _prepare(args: argparse.Namespace, least: int) -> tuple[list[str], Any] | int:
    """The bot specs (checked: a bad name or option fails before any match) and the
    progress bar; or the exit status of a bad command line."""
    try:
        specs = split_specs(args.bots)
    except BotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.boards <= 0 or args.jobs <= 0 or args.bot_deadline <= 0:
        print("error: --boards, --jobs and --bot-deadline must be positive", file=sys.stderr)
        return 2
    if len(specs) < least:
        print(f"error: --bots takes {least} or more bots", file=sys.stderr)
        return 2
    try:
        known = load_bots()
        for spec in specs:
            make_bot(spec, known)
    except (BotError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    progress = None if args.no_progress or not sys.stderr.isatty() else ProgressBar()
    return specs, progress


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[Any]:
    """The Dask client of ``--cluster``, or None to play on ``--jobs`` processes."""
    if not args.cluster:
        yield None
        return
    with open_cluster(args.cluster, args.jobs) as client:
        yield client


def _how(args: argparse.Namespace, progress: Any, cluster: Any) -> dict[str, Any]:
    return {
        "boards": args.boards,
        "variant": args.variant,
        "seed": args.seed,
        "jobs": args.jobs,
        "progress": progress,
        "cluster": cluster,
        "deadline": args.bot_deadline,
    }


def _cmd_arena(args: argparse.Namespace) -> int:
    prepared = _prepare(args, 2)
    if isinstance(prepared, int):
        return prepared
    specs, progress = prepared
    if len(specs) != 2 and not args.ladder:
        print("error: --bots takes two bots (or two or more with --ladder)", file=sys.stderr)
        return 2
    try:
        with _cluster(args) as cluster:
            if args.ladder:
                out = run_tournament(specs, **_how(args, progress, cluster)).summary()
                print(json.dumps(out) if args.json else format_tournament(out))
                return 0
            match = run_match((specs[0], specs[1]), **_how(args, progress, cluster))
    except (BotError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = match.summary()
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    prepared = _prepare(args, 2)
    if isinstance(prepared, int):
        return prepared
    specs, progress = prepared
    if args.resamples < 0:
        print("error: --resamples must not be negative", file=sys.stderr)
        return 2
    try:
        with _cluster(args) as cluster:
            result = run_tournament(specs, **_how(args, progress, cluster))
        summary = result.summary(args.resamples)
        if args.html is not None:
            args.html.write_text(tournament_html(summary), encoding="utf-8")
    except (BotError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_tournament(summary))
    if args.html is not None:
        print(f"report: {args.html}")
    print(json.dumps(summary))
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
    lines += fallback_lines(s)
    return "\n".join(lines)
