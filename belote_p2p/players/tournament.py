"""Tournaments: every pair of bots on the same duplicate boards (a round robin), rated.

Each pair plays the arena's match (:func:`belote_p2p.players.arena.run_match`) on boards
``0..N-1`` of one seed: every pair meets the same deals. The ratings are a Bradley–Terry
fit on the board wins of every pair (a board won counts 1, a tie ½), in Elo points with a
mean of 0; each rating's 95% interval comes from a bootstrap over the boards: boards drawn
with replacement (the same draw for every pair, since a board is the same deal for all),
the fit done again, the 2.5th and 97.5th percentiles kept. The draws come from a
``random.Random`` seeded from the tournament's seed, so the same seed gives the same
ratings, whatever ``--jobs`` or ``--cluster``.
"""

from __future__ import annotations

import html
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from belote_p2p.i18n import _, current, format_milliseconds, format_number, format_percent

from .arena import BOT_DEADLINE, MatchResult, Progress, run_match, time_figures
from .records import append_rows, play_on, read_tournament

RESAMPLES = 1000


def bradley_terry(names: Sequence[str], wins: dict[tuple[str, str], float]) -> dict[str, float]:
    """Elo ratings (mean 0) fitted to pairwise wins (``wins[a, b]``: a's wins over b).

    Each pair gets half a win each way as a prior, so that a bot that won every board
    still has a finite rating."""
    strength = dict.fromkeys(names, 1.0)
    for _step in range(500):
        new = {}
        for a in names:
            won = sum(wins.get((a, b), 0.0) for b in names if b != a) + 0.5
            denom = 0.0
            for b in names:
                if b == a:
                    continue
                games = wins.get((a, b), 0.0) + wins.get((b, a), 0.0) + 1.0
                denom += games / (strength[a] + strength[b])
            new[a] = won / denom if denom else strength[a]
        mean_log = sum(math.log(v) for v in new.values()) / len(new)
        new = {k: v / math.exp(mean_log) for k, v in new.items()}
        change = max(abs(math.log(new[k] / strength[k])) for k in names)
        strength = new
        if change < 1e-10:
            break
    return {k: 400 * math.log10(v) for k, v in strength.items()}


def _wins(matches: Sequence[MatchResult], boards: Sequence[int]) -> dict[tuple[str, str], float]:
    wins: dict[tuple[str, str], float] = {}
    for m in matches:
        a, b = m.bots
        won = 0.0
        for i in boards:
            x = m.boards[i].score
            won += 1.0 if x > 0 else 0.5 if x == 0 else 0.0
        wins[a, b] = won
        wins[b, a] = len(boards) - won
    return wins


def _percentile(ordered: Sequence[float], q: float) -> float:
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass
class TournamentResult:
    """Every pair's match, in the order ``bots`` lists them (A before B)."""

    bots: tuple[str, ...]
    variant: str
    seed: int
    boards: int
    matches: list[MatchResult]

    def ratings(self, resamples: int = RESAMPLES) -> dict[str, tuple[float, float, float]]:
        """Each bot's Elo rating and its 95% bootstrap interval: ``(elo, low, high)``."""
        names = list(self.bots)
        everything = range(self.boards)
        fitted = bradley_terry(names, _wins(self.matches, everything))
        rng = random.Random(f"belote-tournament:{self.seed}:{self.boards}")
        draws: dict[str, list[float]] = {n: [] for n in names}
        for _draw in range(resamples):
            sample = [rng.randrange(self.boards) for _board in everything]
            for name, value in bradley_terry(names, _wins(self.matches, sample)).items():
                draws[name].append(value)
        out = {}
        for name in names:
            ordered = sorted(draws[name]) or [fitted[name]]
            low, high = _percentile(ordered, 0.025), _percentile(ordered, 0.975)
            out[name] = (fitted[name], low, high)
        return out

    def summary(self, resamples: int = RESAMPLES) -> dict[str, Any]:
        ratings = self.ratings(resamples)
        points: dict[str, list[float]] = {b: [] for b in self.bots}
        times: dict[str, list[float]] = {b: [] for b in self.bots}
        pairs = []
        for m in self.matches:
            s = m.summary()
            a, b = m.bots
            points[a].append(s["points_per_board"])
            points[b].append(-s["points_per_board"])
            if m.decision_seconds is not None:
                times[a].extend(m.decision_seconds[0])
                times[b].extend(m.decision_seconds[1])
            pairs.append(s)
        table = [
            {
                "bot": name,
                "elo": round(ratings[name][0], 1),
                "elo_ci95": [round(ratings[name][1], 1), round(ratings[name][2], 1)],
                "points_per_board": round(sum(points[name]) / max(len(points[name]), 1), 2),
            }
            for name in sorted(self.bots, key=lambda n: (-ratings[n][0], n))
        ]
        tournament: dict[str, Any] = {
            "bots": list(self.bots),
            "variant": self.variant,
            "seed": self.seed,
            "boards": self.boards,
            "resamples": resamples,
        }
        played = [m.played for m in self.matches if m.played is not None]
        if played:  # a record's: the boards of every pair this run played
            tournament["played"] = sum(played)
        return {
            "tournament": tournament,
            "ratings": table,
            "pairs": pairs,
            # Wall times, which the machine's load changes: apart from the ratings, which
            # only the seed and the bots do.
            "decision_s": {name: time_figures(ts) for name, ts in times.items() if ts},
        }


def run_tournament(
    specs: Sequence[str],
    *,
    boards: int,
    variant: str = "classic",
    seed: int = 0,
    jobs: int = 1,
    progress: Progress | None = None,
    cluster: Any = None,
    deadline: float = BOT_DEADLINE,
    record: Path | None = None,
) -> TournamentResult:
    """Every pair of ``specs`` on boards ``0..boards-1`` of ``seed`` (a round robin). With
    ``record``, a tournament's record (``records.py``): the boards it holds are not played
    again, and those it lacks are added to it as they end, so that a tournament stopped
    goes on from there and a bot added to it plays its own pairs only. A pair is recorded
    in the order ``specs`` lists its bots (B against A is another match)."""
    if len(set(specs)) != len(specs) or len(specs) < 2:
        raise ValueError(_("a tournament takes two or more different bots"))
    how: dict[str, Any] = {
        "boards": boards, "variant": variant, "seed": seed, "jobs": jobs,
        "progress": progress, "cluster": cluster, "deadline": deadline,
    }  # fmt: skip
    recorded = {}
    if record is not None:
        recorded = read_tournament(record, variant, seed)
        append_rows(record, [])  # a record that cannot be written fails before any match
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]]
    matches = [
        run_match(pair, timed=True, **how)
        if record is None
        else play_on(record, pair, recorded[pair].boards if pair in recorded else (), **how)
        for pair in pairs
    ]
    return TournamentResult(tuple(specs), variant, seed, boards, matches)


# -- the report ---------------------------------------------------------------------------


def ratings_svg(ratings: Sequence[dict[str, Any]], width: int = 720) -> str:
    """Each bot's rating as a dot on its 95% interval, one row a bot, as inline SVG."""
    row, left, right, top = 28, 250, 30, 30
    height = top + row * len(ratings) + 30
    values: list[float] = [float(v) for r in ratings for v in (r["elo"], *r["elo_ci95"])]
    low, high = min(values + [0.0]), max(values + [0.0])
    if high - low < 1:
        low, high = low - 50, high + 50
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad

    def x(v: float) -> float:
        return left + (v - low) / (high - low) * (width - left - right)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{height - 25}" '
        'stroke="#999" stroke-dasharray="4 3"/>',
    ]
    step = 10 ** max(0, int(math.log10(max(high - low, 1))))
    tick = math.ceil(low / step) * step
    while tick <= high:
        parts.append(
            f'<text x="{x(tick):.1f}" y="{height - 8}" text-anchor="middle" fill="#555">'
            f"{format_number(tick, sign=True)}</text>"
        )
        tick += step
    for i, r in enumerate(ratings):
        y = top + row * i + row / 2
        lo, hi = r["elo_ci95"]
        name = html.escape(r["bot"] if len(r["bot"]) <= 32 else r["bot"][:31] + "…")
        parts += [
            f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{name}</text>',
            f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" '
            'stroke="#36c" stroke-width="2"/>',
            f'<circle cx="{x(r["elo"]):.1f}" cy="{y:.1f}" r="5" fill="#36c">'
            f"<title>{name}: {_signed(r['elo'], 0)} {interval_text((lo, hi), 0)}</title></circle>",
        ]
    parts.append("</svg>")
    return "\n".join(parts)


def _signed(x: float, decimals: int = 1) -> str:
    return format_number(x, decimals, sign=True)


def interval_text(bounds: Sequence[float], decimals: int = 1) -> str:
    """A confidence interval, ``[-12.5, +3.0]``: ``[-12,5 ; +3,0]`` in French, where the
    comma is the decimal one."""
    low, high = bounds
    return _("[{low}, {high}]").format(
        low=format_number(low, decimals, sign=True), high=format_number(high, decimals, sign=True)
    )


def decision_cell(summary: dict[str, Any], bot: str) -> str:
    """A bot's decision time over all its matches, in milliseconds: ``5.6 / 25.1`` (the
    median, then the 99th percentile); ``?`` for a summary without its times."""
    t = summary.get("decision_s", {}).get(bot)
    if t is None:
        return "?"
    return _("{median} / {p99}").format(
        median=format_milliseconds(t["median"]), p99=format_milliseconds(t["p99"])
    )


def tournament_html(summary: dict[str, Any], variant: str | None = None) -> str:
    """A page that stands alone (no script, no network): the ratings plot and tables, in
    the reader's language (``<html lang>`` says which) and its number forms; ``variant`` is
    the rules' name as the reader says it (the app's words: the summary's by default)."""
    t = summary["tournament"]
    esc = html.escape

    def words(text: str) -> str:
        """Text of the page's own, escaped for an element's content."""
        return html.escape(text, quote=False)

    rows = "\n".join(
        f"<tr><td>{rank}</td><td>{esc(r['bot'])}</td><td>{_signed(r['elo'], 0)}</td>"
        f"<td>{interval_text(r['elo_ci95'], 0)}</td>"
        f"<td>{_signed(r['points_per_board'])}</td>"
        f"<td>{esc(decision_cell(summary, r['bot']))}</td></tr>"
        for rank, r in enumerate(summary["ratings"], 1)
    )
    pairs = "\n".join(
        f"<tr><td>{esc(s['bots'][0])}</td><td>{esc(s['bots'][1])}</td>"
        f"<td>{_signed(s['points_per_board'])}</td>"
        f"<td>{interval_text(s['ci95'])}</td>"
        f"<td>{format_number(s['sd'], 1)}</td>"
        f"<td>{format_percent(s['board_win_rate'])}</td>"
        f"<td>{sum(c['illegal'] + c['errors'] + c['timeouts'] for c in s['fallbacks'].values())}"
        "</td></tr>"
        for s in summary["pairs"]
    )
    bots = len(t["bots"])
    title = esc(
        _("Tournament: {bots} bots, {variant}, {boards} boards").format(
            bots=bots, variant=variant or t["variant"], boards=t["boards"]
        )
    )
    about = words(
        _(
            "Seed {seed}. Every pair played the same {boards} duplicate boards: a board is "
            "one deal played at two tables, the bots swapping seats, and its score is the "
            "first bot's points minus the other's over both tables (with two or three seats, "
            "once per seat with the deal rotated). Ratings are a Bradley–Terry fit of the "
            "boards won, in Elo points (mean 0), with 95% intervals from {resamples} "
            "bootstrap draws of the boards."
        ).format(seed=t["seed"], boards=t["boards"], resamples=t["resamples"])
    )
    pairs_about = words(
        _(
            "Points per board of the first bot against the second, with the 95% interval of "
            "the mean (1.96 standard errors) and the spread of a board (sd)."
        )
    )

    def heads(*words: str) -> str:
        return "".join(f"<th>{esc(word)}</th>" for word in words)

    rating_heads = heads(
        "#", _("bot"), _("Elo"), _("95% CI"), _("points per board"),
        _("ms a decision: median / 99th percentile"),
    )  # fmt: skip
    pair_heads = heads(
        "A", "B", _("points per board"), _("95% CI"), _("sd"), _("boards won by A"),
        _("fallbacks"),
    )  # fmt: skip
    ratings_head, pairs_head = esc(_("Ratings")), esc(_("Pairs"))
    return f"""<!DOCTYPE html>
<html lang="{current()}"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: right; }}
td:nth-child(-n+2), th:nth-child(-n+2) {{ text-align: left; }}
td {{ white-space: nowrap; }}
</style></head><body>
<h1>{title}</h1>
<p>{about}</p>
<h2>{ratings_head}</h2>
{ratings_svg(summary["ratings"])}
<table><tr>{rating_heads}</tr>
{rows}
</table>
<h2>{pairs_head}</h2>
<p>{pairs_about}</p>
<table><tr>{pair_heads}</tr>
{pairs}
</table>
</body></html>
"""
