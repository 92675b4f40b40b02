"""A match's boards kept in a record file, and two matches compared on the same boards.

A record is JSON lines, one board a line, appended as the boards end: a long match can stop
at any moment and go on later from the boards it has, and a record of a bot's match is what
a change to the bot is measured against. A tournament's record holds the boards of every
pair, each a match of its own; a match's record is the record of a tournament of its two bots.
Each row says its match (``bots``, ``variant``,
``seed``), its board and its tables (``[score_a, score_b, deals, a_took]`` each), and may
hold the board's seconds and each side's decision times (``"times"``: wall time, as the
arena and the tournament record them; ``"cpu"``: the CPU time of the deciding thread, as
``benchmarks/arena.py`` records it), so that a match read back from its record has the
decision times of all its boards.

Two matches of the same variant and seed were dealt the same boards, whatever their bots:
the difference of their scores board by board, A's spec changed (``expert:samples=96``
against ``expert``), takes each deal's luck out once more than either match alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from belote_p2p.errors import BeloteError
from belote_p2p.i18n import _

from .arena import (
    BoardResult,
    BoardTimes,
    MatchResult,
    TableResult,
    decision_times,
    mean_interval,
    run_match,
)


class RecordError(BeloteError, ValueError):
    """A record that cannot be read, or that is not of the match it is read for."""


EXTREMES = 3
"""Boards named under a match's summary: those the first bot lost most, and those a
comparison changed most."""


def board_row(
    match: tuple[tuple[str, str], str, int],
    result: BoardResult,
    seconds: float | None = None,
    *,
    cpu: bool = False,
) -> dict[str, Any]:
    """A board's line of a record: ``match`` is ``(bots, variant, seed)``; the board's
    decision times, where it has them, are kept as ``"cpu"`` when ``cpu`` says they are CPU
    times, else as ``"times"``."""
    bots, variant, seed = match
    row: dict[str, Any] = {
        "bots": list(bots),
        "variant": variant,
        "seed": seed,
        "board": result.board,
        "tables": [[t.score_a, t.score_b, t.deals, t.a_took] for t in result.tables],
    }
    if seconds is not None:
        row["seconds"] = round(seconds, 4)
    if result.times is not None:
        # three significant digits: a fast bot's microseconds as well as a slow one's seconds
        row["cpu" if cpu else "times"] = [
            [float(f"{x:.3g}") for x in side] for side in result.times
        ]
    return row


def append_rows(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Add board lines to the record at ``path`` (made if missing), each line whole. A last
    line cut short (the process stopped while writing it) is dropped first: its board was
    not recorded, and is played again."""
    text = "".join(json.dumps(row) + "\n" for row in rows)
    with path.open("ab") as out:
        end = out.tell()
        if end:
            with path.open("rb") as read:
                read.seek(end - 1)
                if read.read(1) != b"\n":
                    read.seek(0)
                    out.truncate(read.read().rfind(b"\n") + 1)  # appended after what is kept
        out.write(text.encode("utf-8"))


Match = tuple[tuple[str, str], str, int]
"""A match's key: its bots (A, B), variant and seed."""


def read_matches(path: Path) -> dict[Match, MatchResult]:
    """Every match whose boards ``path`` records, in the order of their first lines (none
    if the file does not exist): a record of a match holds one, a tournament's one a pair. A
    line that is not a board's is a :class:`RecordError`; a board recorded twice counts once,
    and a last line cut short (with no end of line) is none. The decision times are those
    the rows hold."""
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        why = _("cannot read the record {path}: {why}").format(path=path, why=exc)
        raise RecordError(why) from exc
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()  # cut short while it was written: its board was not recorded
    found: dict[Match, dict[int, BoardResult]] = {}
    seconds: dict[Match, float] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            bots = tuple(str(bot) for bot in row["bots"])
            if len(bots) != 2:
                raise ValueError(f"{len(bots)} bots")
            match: Match = ((bots[0], bots[1]), str(row["variant"]), int(row["seed"]))
            tables = tuple(TableResult(*t) for t in row["tables"])
            board = int(row["board"])
            spent = row.get("cpu", row.get("times"))
            board_times = None if spent is None else _board_times(spent)
            took = float(row.get("seconds", 0.0))
        except (ValueError, KeyError, TypeError) as exc:
            raise RecordError(
                _("{path}, line {line}: not a board of a match ({why})").format(
                    path=path, line=number, why=exc
                )
            ) from exc
        boards = found.setdefault(match, {})
        seconds[match] = seconds.get(match, 0.0) + took
        boards.setdefault(board, BoardResult(board, tables, board_times))
    out: dict[Match, MatchResult] = {}
    for match, boards in found.items():
        ordered = [boards[b] for b in sorted(boards)]
        out[match] = MatchResult(
            *match, ordered, seconds[match], decision_seconds=decision_times(ordered)
        )
    return out


def _board_times(spent: Any) -> BoardTimes:
    """A row's decision times, A's then B's (a ``ValueError`` or ``TypeError`` if they are
    not two lists of numbers)."""
    mine, theirs = spent
    return [float(x) for x in mine], [float(x) for x in theirs]


def _another(path: Path, match: Match) -> RecordError:
    bots, variant, seed = match
    return RecordError(
        _("{path} records another match: {bots}, {variant}, seed {seed}").format(
            path=path, bots=",".join(bots), variant=variant, seed=seed
        )
    )


def read_record(
    path: Path,
    bots: tuple[str, str] | None = None,
    variant: str | None = None,
    seed: int | None = None,
) -> MatchResult:
    """The match whose boards ``path`` records (none if the file does not exist and the
    match is given), checked to be of ``bots``, ``variant`` and ``seed`` where given (else
    of its first line's): a row of another match is a :class:`RecordError`, and so is a
    record of several (a tournament's)."""
    matches = read_matches(path)
    if not matches:
        if bots is None or variant is None or seed is None:
            if not path.exists():
                raise RecordError(_("no record at {path}").format(path=path))
            raise RecordError(_("{path} records no board").format(path=path))
        return MatchResult(bots, variant, seed, [], decision_seconds=([], []))
    if len(matches) > 1:
        raise RecordError(
            _("{path} records {count} matches, as a tournament's record does: a match's "
              "record holds one").format(path=path, count=len(matches))
        )  # fmt: skip
    first_bots, first_variant, first_seed = next(iter(matches))
    wanted = (
        bots or first_bots,
        first_variant if variant is None else variant,
        first_seed if seed is None else seed,
    )
    (match,) = matches
    if match != wanted:
        raise _another(path, match)
    return matches[match]


def read_tournament(path: Path, variant: str, seed: int) -> dict[tuple[str, str], MatchResult]:
    """The matches a tournament's record at ``path`` holds, by pair (none if the file does
    not exist): every one of ``variant`` and ``seed``, else a :class:`RecordError`."""
    matches = read_matches(path)
    for match in matches:
        if match[1:] != (variant, seed):
            raise _another(path, match)
    return {bots: match for (bots, _variant, _seed), match in matches.items()}


def play_on(
    path: Path,
    specs: tuple[str, str],
    kept: Iterable[BoardResult],
    *,
    boards: int,
    variant: str,
    seed: int,
    **how: Any,
) -> MatchResult:
    """The match of ``specs`` on boards ``0..boards-1``: those of ``kept`` (a record's) and
    the others played now (:func:`~belote_p2p.players.arena.run_match`, given ``how``), each
    chunk added to the record at ``path`` as it ends, with its decision times. The seconds
    and the fallbacks are this run's (``played`` says how many boards); the decision times
    are those of every board that has them, the record's and this run's."""
    kept = [b for b in kept if b.board < boards]
    match = (specs, variant, seed)

    def keep(done: list[BoardResult]) -> None:
        append_rows(path, (board_row(match, b) for b in sorted(done, key=lambda b: b.board)))

    skip = {b.board for b in kept}
    played = run_match(specs, boards=boards, variant=variant, seed=seed, timed=True,
                       skip=skip, on_boards=keep, **how)  # fmt: skip
    every = sorted([*kept, *played.boards], key=lambda b: b.board)
    return replace(
        played, boards=every, played=len(played.boards), decision_seconds=decision_times(every)
    )


def check_comparable(other: MatchResult, variant: str, seed: int) -> None:
    """A :class:`RecordError` unless ``other`` was dealt the boards of ``variant`` and
    ``seed``."""
    if (other.variant, other.seed) != (variant, seed):
        raise RecordError(
            _(
                "{bots} was played in {other_variant}, seed {other_seed}: a comparison "
                "needs the same boards, {variant}, seed {seed}"
            ).format(
                bots=",".join(other.bots), other_variant=other.variant, other_seed=other.seed,
                variant=variant, seed=seed,
            )
        )  # fmt: skip


def lost_most(match: MatchResult, extremes: int = EXTREMES) -> list[list[Any]]:
    """The ``extremes`` boards the first bot lost most, with their scores, worst first."""
    lost = sorted((b for b in match.boards if b.score < 0), key=lambda b: (b.score, b.board))
    return [[b.board, b.score] for b in lost[:extremes]]


def compare(match: MatchResult, other: MatchResult, extremes: int = EXTREMES) -> dict[str, Any]:
    """``match``'s board scores minus ``other``'s on the boards both played, with the 95%
    interval of the mean difference: what changing a bot (or its options) is worth on the
    same deals; and the ``extremes`` boards whose scores differ most, with their
    differences (the boards to look at). Both must be of the same variant and seed
    (:class:`RecordError`)."""
    check_comparable(other, match.variant, match.seed)
    theirs = {b.board: b.score for b in other.boards}
    pairs = [(b.board, b.score - theirs[b.board]) for b in match.boards if b.board in theirs]
    diffs = [d for _b, d in pairs]
    mean, sd, half = mean_interval(diffs)
    changed = sorted((p for p in pairs if p[1]), key=lambda p: (-abs(p[1]), p[0]))
    return {
        "against": list(other.bots),
        "boards": len(diffs),
        "difference": round(mean, 3),
        "sd": round(sd, 3),
        "ci95": [round(mean - half, 3), round(mean + half, 3)],
        "most_changed": [[b, d] for b, d in changed[:extremes]],
    }
