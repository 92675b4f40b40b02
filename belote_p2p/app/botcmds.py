"""The bot commands: ``bots`` lists the installed bots, ``arena`` plays two of them against
each other on duplicate boards, ``tournament`` plays every pair and rates them (the matches
are :mod:`belote_p2p.players.arena`'s, the ratings :mod:`belote_p2p.players.tournament`'s).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from belote_p2p.app.argtypes import board_number, positive_int, positive_seconds, seed
from belote_p2p.game.engine import RoundRecord
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.i18n import (
    _,
    format_duration,
    format_milliseconds,
    format_number,
    format_percent,
    ngettext,
    pgettext,
)
from belote_p2p.players.arena import (
    BOT_DEADLINE,
    BoardResult,
    MatchResult,
    PlayedTable,
    board_tables,
    open_cluster,
    run_match,
)
from belote_p2p.players.bots import (
    BotError,
    FallbackCounts,
    failed,
    fallback_text,
    load_bots,
    make_bot,
    split_specs,
)
from belote_p2p.players.records import (
    append_rows,
    check_comparable,
    compare,
    lost_most,
    play_on,
    read_record,
)
from belote_p2p.players.tournament import (
    decision_cell,
    interval_text,
    run_tournament,
    tournament_html,
)

from .display import format_columns, format_round
from .seatview import display_hand, played_cards
from .wording import card_text, error_text, variant_name


def _cmd_bots(args: argparse.Namespace) -> int:
    try:
        bots = load_bots()
    except BotError as exc:
        print(error_text(exc))
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
    heads = {
        "name": pgettext("column", "NAME"),
        "version": pgettext("column", "VERSION"),
        "package": pgettext("column", "PACKAGE"),
    }
    widths = {k: max([len(heads[k]), *(len(r[k]) for r in rows)]) for k in heads}
    header = "  ".join(heads[k].ljust(widths[k]) for k in widths)
    print(header + "  " + pgettext("column", "DESCRIPTION"))
    for r in rows:
        print("  ".join(r[k].ljust(widths[k]) for k in widths) + "  " + r["description"])
    return 0


def _register_bots(subparsers: Any) -> None:
    parser = subparsers.add_parser("bots", help=_("list the installed bots"))
    parser.add_argument("--json", action="store_true", help=_("print a JSON list"))
    parser.set_defaults(func=_cmd_bots)


class ProgressBar:
    """A one-line progress bar on standard error, one per match (the arena's ``progress``):
    the boards done, their speed and about how long the rest will take, cut to the
    terminal's width (a longer line would wrap, and each redraw leave a line behind)."""

    def __init__(
        self,
        width: int = 30,
        *,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
        columns: Callable[[], int] = lambda: shutil.get_terminal_size().columns,
    ) -> None:
        self.width = width
        self.out = out
        self.clock = clock
        self.columns = columns
        self.start = clock()

    def __call__(self, label: str, done: int, total: int) -> None:
        now = self.clock()
        if done == 0:
            self.start = now
        rate = done / max(now - self.start, 1e-9)
        left = ""
        if 0 < done < total:
            left = " " + _("(about {time} left)").format(
                time=format_duration((total - done) / rate)
            )

        def line(width: int) -> str:
            filled = width * done // max(total, 1)
            bar = "#" * filled + "." * (width - filled)
            text = _("{label} [{bar}] {done}/{total} boards {rate}/s").format(
                label=label, bar=bar, done=done, total=total, rate=format_number(rate)
            )
            return text + left

        room = max(self.columns() - 1, 1)
        shown = line(self.width)
        if len(shown) > room:  # the bar gives way first, then the end of the line
            shown = line(max(self.width - (len(shown) - room), 5))[:room]
        out = self.out or sys.stderr
        out.write("\r" + shown + "\x1b[K")
        if done >= total:
            out.write("\n")
        out.flush()


def _match_arguments(p: argparse.ArgumentParser) -> None:
    """What the arena and the tournament both take: boards, variant, jobs, cluster..."""
    p.add_argument(
        "--boards", type=positive_int, default=200, metavar="N", help=_("boards per match")
    )
    p.add_argument("--variant", default="classic", choices=sorted(RULE_SETS),
                   help=_("the rules the boards are dealt and played under"))  # fmt: skip
    p.add_argument(
        "--jobs", type=positive_int, default=os.cpu_count() or 1, metavar="N",
        help=_("processes"),
    )  # fmt: skip
    p.add_argument(
        "--cluster",
        metavar=_("ADDRESS"),
        help=_(
            "run the boards on a Dask scheduler (tcp://host:8786), or 'local': a "
            "LocalCluster of --jobs workers (pip install 'belote-p2p[cluster]')"
        ),
    )
    p.add_argument(
        "--seed", type=seed, default=0, metavar=_("SEED"), help=_("seed of the boards and bots")
    )
    p.add_argument(
        "--bot-deadline", type=positive_seconds, default=BOT_DEADLINE, metavar=_("S"),
        help=_(
            "seconds a decision of an exec bot ({seconds}); in-process bots are bounded by "
            "their own options"
        ).format(seconds=f"{BOT_DEADLINE:g}"),
    )  # fmt: skip
    p.add_argument(
        "--no-progress", action="store_true",
        help=_("no progress bar (there is none when standard error is not a terminal)"),
    )  # fmt: skip


def register(subparsers: Any) -> None:
    _register_bots(subparsers)
    p = subparsers.add_parser(
        "arena",
        help=_("play bots against each other on duplicate boards"),
        description=_(
            "Duplicate-board match between two bots (or a ladder of several: the "
            "tournament's ratings)."
        ),
    )
    p.add_argument(
        "--bots", required=True, metavar=_("BOTS"),
        help=_(
            "A,B (specs name[:key=value...], a value in quotes may hold : and ,); more "
            "with --ladder"
        ),
    )  # fmt: skip
    _match_arguments(p)
    p.add_argument("--json", action="store_true", help=_("print one JSON object"))
    p.add_argument("--ladder", action="store_true", help=_("every bot against every other"))
    p.add_argument(
        "--record", type=Path, metavar=_("FILE"),
        help=_(
            "keep every board in FILE (JSON lines) as it ends, and play only the boards it "
            "lacks: a match stopped goes on from there (with --ladder, every pair's boards)"
        ),
    )  # fmt: skip
    p.add_argument(
        "--compare", type=Path, action="append", default=[], metavar=_("FILE"),
        help=_(
            "another match's record (same variant and seed): this match's boards minus "
            "its boards, with a 95%% CI (repeatable)"
        ),
    )  # fmt: skip
    p.add_argument(
        "--show", type=board_number, action="append", default=[], metavar="N",
        help=_(
            "play board N again and show its tables card by card, rather than play a match "
            "(repeatable)"
        ),
    )  # fmt: skip
    p.set_defaults(func=_cmd_arena)
    t = subparsers.add_parser(
        "tournament",
        help=_("rate bots: every pair on the same duplicate boards"),
        description=_(
            "A round robin: every pair of bots plays the same duplicate boards; prints a "
            "ratings table (Bradley-Terry, in Elo, with 95% bootstrap intervals) and each "
            "pair's points per board, then one JSON line."
        ),
    )
    t.add_argument(
        "--bots", required=True, metavar=_("BOTS"), help=_("A,B,C... (two or more bot specs)")
    )
    _match_arguments(t)
    t.add_argument("--html", type=Path, metavar=_("FILE"), help=_("also write an HTML report"))
    t.add_argument(
        "--record", type=Path, metavar=_("FILE"),
        help=_(
            "keep every pair's boards in FILE (JSON lines) as they end, and play only the "
            "boards it lacks: a tournament stopped goes on from there, and a bot added to it "
            "plays its own pairs only"
        ),
    )  # fmt: skip
    t.add_argument(
        "--resamples", type=positive_int, default=1000, metavar="N",
        help=_("bootstrap draws of the boards (1000)"),
    )  # fmt: skip
    t.set_defaults(func=_cmd_tournament)


def _prepare(args: argparse.Namespace, least: int) -> tuple[list[str], Any] | int:
    """The bot specs (checked: a bad name or option fails before any match) and the
    progress bar; or the exit status of a bad command line."""
    try:
        specs = split_specs(args.bots)
    except BotError as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    if len(specs) < least:
        print(
            error_text(_("--bots takes {least} or more bots").format(least=least)), file=sys.stderr
        )
        return 2
    try:
        known = load_bots()
        for spec in specs:
            make_bot(spec, known)
    except (BotError, ValueError, OSError) as exc:
        print(error_text(exc), file=sys.stderr)
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
        print(
            error_text(_("--bots takes two bots (or two or more with --ladder)")), file=sys.stderr
        )
        return 2
    if args.ladder and args.compare:
        print(error_text(_("--compare is for a match of two bots")), file=sys.stderr)
        return 2
    if args.show:
        if args.ladder or args.json or args.record is not None or args.compare:
            print(
                error_text(_("--show takes no --ladder, --json, --record or --compare")),
                file=sys.stderr,
            )
            return 2
        return _show_boards((specs[0], specs[1]), args)
    try:
        with _cluster(args) as cluster:
            if args.ladder:
                how = _how(args, progress, cluster)
                out = run_tournament(specs, record=args.record, **how).summary()
                print(json.dumps(out) if args.json else format_tournament(out))
                return 0
            others = [read_record(path) for path in args.compare]  # bad ones before the match
            for other in others:
                check_comparable(other, args.variant, args.seed)
            match = _recorded_match((specs[0], specs[1]), args, progress, cluster)
            summary = match.summary()
            summary["lost_most"] = lost_most(match)
            if others:
                summary["compared"] = [compare(match, other) for other in others]
    except (BotError, ValueError, OSError) as exc:  # a RecordError is a ValueError
        print(error_text(exc), file=sys.stderr)
        return 2
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def _recorded_match(
    specs: tuple[str, str], args: argparse.Namespace, progress: Any, cluster: Any
) -> MatchResult:
    """The match of ``--bots``; with ``--record``, of every board of the record, the boards
    it lacked played and added to it as they end (the time and the speed: this run's; the
    decision times: every board's that the record kept them for)."""
    how = _how(args, progress, cluster)
    if args.record is None:
        return run_match(specs, timed=True, **how)
    kept = read_record(args.record, specs, args.variant, args.seed).boards
    append_rows(args.record, [])  # a record that cannot be written fails before the match
    return play_on(args.record, specs, kept, **how)


def _show_boards(specs: tuple[str, str], args: argparse.Namespace) -> int:
    """``arena --show N``: the boards played again, each table's rounds card by card."""
    rules = rule_set(args.variant)
    counts = (FallbackCounts(), FallbackCounts())
    try:
        known = load_bots()
        for board in args.show:
            tables = board_tables(specs, rules, args.seed, board, known, counts,
                                  deadline=args.bot_deadline)  # fmt: skip
            print(format_board(specs, rules, args.seed, board, tables))
    except (BotError, ValueError, OSError) as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    summary = {"fallbacks": {name: c.to_json() for name, c in zip(specs, counts, strict=True)}}
    for line in fallback_lines(summary):
        print(line)
    return 0


def format_board(
    specs: tuple[str, str], rules: RuleSet, seed: int, board: int, tables: list[PlayedTable]
) -> str:
    """A board for a terminal: its score, then each table's seats, hands and rounds."""
    result = BoardResult(board, tuple(t.result() for t in tables))
    lines = [
        _("Board {board}: {a} vs {b}, {variant}, seed {seed}: {score} for {a}").format(
            board=board, a=specs[0], b=specs[1], variant=variant_name(rules.name), seed=seed,
            score=format_number(result.score, 1, sign=True, trailing_zeros=False),
        )
    ]  # fmt: skip
    for number, (table, scored) in enumerate(zip(tables, result.tables, strict=True), 1):
        names = [
            _("{bot} {seat}").format(bot=specs[side], seat=seat)
            for seat, side in enumerate(table.sides)
        ]
        net = format_number(scored.net, 1, sign=True, trailing_zeros=False)
        lines += ["", _("Table {number}: {net} for {a}").format(number=number, a=specs[0], net=net)]
        if table.state is None:
            lines.append("  " + _("no contract in {deals} deals").format(deals=table.deals))
            continue
        for record in table.state.history:
            if record.score is not None:
                lines += ["  " + line for line in _hand_lines(record, names)]
            lines.append(format_round(record, names))
    return "\n".join(lines)


def _hand_lines(record: RoundRecord, names: list[str]) -> list[str]:
    """Each seat's cards in a round, as played (every card it held in the play)."""
    n = len(names)
    rows = []
    for s in range(n):
        held = display_hand(played_cards(record.tricks, s, n), record.trump)
        rows.append((_("{name}:").format(name=names[s]), " ".join(card_text(c) for c in held)))
    return format_columns(rows).splitlines()


def _cmd_tournament(args: argparse.Namespace) -> int:
    prepared = _prepare(args, 2)
    if isinstance(prepared, int):
        return prepared
    specs, progress = prepared
    if args.resamples < 0:
        print(error_text(_("--resamples must not be negative")), file=sys.stderr)
        return 2
    try:
        with _cluster(args) as cluster:
            result = run_tournament(specs, record=args.record, **_how(args, progress, cluster))
        summary = result.summary(args.resamples)
        if args.html is not None:
            page = tournament_html(summary, variant_name(args.variant))
            args.html.write_text(page, encoding="utf-8")
    except (BotError, ValueError, OSError) as exc:
        print(error_text(exc), file=sys.stderr)
        return 2
    print(format_tournament(summary))
    if args.html is not None:
        print(_("report: {file}").format(file=args.html))
    print(json.dumps(summary))
    return 0


def format_summary(s: dict[str, Any]) -> str:
    """A match's summary for a terminal, in the reader's language and number forms."""
    a, b = s["bots"]
    lo, hi = s["ci95"]
    elo_lo, elo_hi = s["elo_ci95"]

    def signed(x: float, decimals: int = 1) -> str:
        return format_number(x, decimals, sign=True)

    speed = s["boards_per_second"]
    head = _("{a} vs {b}, {variant}, {boards} duplicate boards, seed {seed}").format(
        a=a, b=b, variant=variant_name(s["variant"]), boards=s["boards"], seed=s["seed"]
    )
    rows = [
        (
            _("points per board ({bot}):").format(bot=a),
            _("{mean}  95% CI {interval}  (sd {sd})").format(
                mean=signed(s["points_per_board"]), interval=interval_text((lo, hi)),
                sd=format_number(s["sd"], 1),
            ),
        ),
        (_("round win rate:"), format_percent(s["round_win_rate"], 1)),
        (_("board win rate:"), format_percent(s["board_win_rate"], 1)),
        (
            _("Elo difference:"),
            f"{signed(s['elo'], 0)}  {interval_text((elo_lo, elo_hi), 0)}",
        ),
        (
            _("time:"),
            _("{seconds} s ({speed} boards/s)").format(
                seconds=format_number(s["seconds"], 2),
                speed=format_number(speed, 1) if speed is not None else "?",
            ),
        ),
    ]  # fmt: skip
    total = signed(s["points_per_board"])
    for key, label in (
        ("bid_alike", _("bid alike (the same hands took):")),
        ("bid_differently", _("bid differently:")),
    ):
        if key in s:
            n, share = s[key]["boards"], signed(s[key]["points_per_board"])
            text = ngettext(
                "{n} board: {share} of the {total} a board",
                "{n} boards: {share} of the {total} a board",
                n,
            )
            rows.append((label, text.format(n=n, share=share, total=total)))
    for name, t in s.get("decision_s", {}).items():
        rows.append(
            (
                _("decision time ({bot}):").format(bot=name),
                ngettext(
                    "median {median}, 99th percentile {p99}, max {max} ({n} decision)",
                    "median {median}, 99th percentile {p99}, max {max} ({n} decisions)",
                    t["decisions"],
                ).format(
                    median=duration_text(t["median"]), p99=duration_text(t["p99"]),
                    max=duration_text(t["max"]), n=format_number(t["decisions"], 0),
                ),
            )
        )  # fmt: skip
    if "played" in s and s["played"] != s["boards"]:
        rows.append((_("record:"), _record_text(s["boards"], s["played"])))
    if s.get("lost_most"):
        rows.append((_("boards lost most ({bot}):").format(bot=a), _boards_text(s["lost_most"])))
    for c in s.get("compared", []):
        a2, b2 = c["against"]
        rows.append(
            (
                _("minus {a} vs {b}:").format(a=a2, b=b2),
                _("{mean}  95% CI {interval}  (sd {sd}) on the same {boards} boards").format(
                    mean=signed(c["difference"]), interval=interval_text(c["ci95"]),
                    sd=format_number(c["sd"], 1), boards=format_number(c["boards"]),
                ),
            )
        )  # fmt: skip
        if c["most_changed"]:
            rows.append((_("  boards changed most:"), _boards_text(c["most_changed"])))
    lines = [head, *("  " + line for line in format_columns(rows).splitlines())]
    lines += fallback_lines(s)
    changed = (b for c in s.get("compared", []) for b in c["most_changed"])
    named = [*s.get("lost_most", []), *changed]
    if named:
        board = int(named[0][0])
        words = ["belote-p2p", "arena", "--bots", f"{a},{b}"]
        words += ["--variant", s["variant"]] if s["variant"] != "classic" else []
        words += ["--seed", str(s["seed"])] if s["seed"] else []
        command = shlex.join([*words, "--show", str(board)])
        lines.append("  " + _("board {board} card by card: {command}").format(
            board=board, command=command))  # fmt: skip
    return "\n".join(lines)


def _boards_text(boards: list[list[float]]) -> str:
    """``17 (-182), 5 (-160)``: boards and their points."""
    return ", ".join(
        _("{board} ({points})").format(
            board=int(board), points=format_number(points, 1, sign=True, trailing_zeros=False)
        )
        for board, points in boards
    )


def format_tournament(summary: dict[str, Any]) -> str:
    """The ratings table and each pair's points per board, for a terminal."""
    t = summary["tournament"]

    def signed(x: float, decimals: int = 1) -> str:
        return format_number(x, decimals, sign=True)

    head = _("{bots} bots, {variant}, {boards} duplicate boards per pair, seed {seed}").format(
        bots=len(t["bots"]), variant=variant_name(t["variant"]), boards=t["boards"],
        seed=t["seed"],
    )  # fmt: skip
    rows = [
        ("#", _("bot"), _("Elo"), _("95% CI"), _("pts/board"), _("ms a decision (median / p99)"))
    ]
    for rank, r in enumerate(summary["ratings"], 1):
        lo, hi = r["elo_ci95"]
        ci = interval_text((lo, hi), 0)
        rows.append(
            (str(rank), r["bot"], signed(r["elo"], 0), ci, signed(r["points_per_board"]),
             decision_cell(summary, r["bot"]))
        )  # fmt: skip
    lines = [head, format_columns(rows), ""]
    every = t["boards"] * len(summary["pairs"])
    if t.get("played", every) != every:
        lines += [_("record:") + " " + _record_text(every, t["played"]), ""]
    lines.append(_("points per board of the first bot of each pair, 95% CI:"))
    for s in summary["pairs"]:
        a, b = s["bots"]
        lo, hi = s["ci95"]
        pair = _("{a} vs {b}: {mean} {interval}, boards won {rate}").format(
            a=a, b=b, mean=signed(s["points_per_board"]), interval=interval_text((lo, hi)),
            rate=format_percent(s["board_win_rate"]),
        )  # fmt: skip
        lines.append(f"  {pair}")
        lines += [f"  {line}" for line in fallback_lines(s)]
    return "\n".join(lines)


def _record_text(boards: int, played: int) -> str:
    """How many of ``boards`` a record held and how many this run played."""
    return _("{kept} boards from the record, {played} played now").format(
        kept=format_number(boards - played), played=format_number(played)
    )


def duration_text(seconds: float) -> str:
    """A decision's time in milliseconds, as the reader writes numbers: ``11.6 ms``."""
    return _("{ms} ms").format(ms=format_milliseconds(seconds))


def fallback_lines(summary: dict[str, Any]) -> list[str]:
    """A line for each bot of a match's summary that failed some decisions."""
    return [
        "  " + _("fallbacks {bot}: {counts}").format(bot=name, counts=fallback_text(c))
        for name, c in summary["fallbacks"].items()
        if failed(c)
    ]
