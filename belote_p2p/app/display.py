"""Plain-text accounts of rounds and games, shared by every command that prints a game."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from belote_p2p.game.engine import BidKind, Phase, RoundRecord, State, Trick
from belote_p2p.protocol.names import MAX_NAME_CELLS, cells, safe_text
from belote_p2p.protocol.table import TableDefinition

from .wording import (
    announcement_text,
    bid_contract_text,
    bid_text,
    card_text,
    side_names,
    sweep_text,
    team_name,
    trump_text,
)


def shown_name(name: str) -> str:
    """A player's name as a terminal may be given it (a record or a peer may hold any
    text: :func:`~belote_p2p.protocol.names.safe_text`), at most a name's width."""
    return safe_text(name, MAX_NAME_CELLS)


def seat_names(definition: TableDefinition) -> tuple[str, ...]:
    """The names of a table's seats, in seat order, as :func:`shown_name` shows them."""
    return tuple(shown_name(s.name) for s in definition.seats)


def format_columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as aligned columns, two spaces apart, widths counted in terminal cells
    (a wide character takes two)."""
    widths = [max(cells(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell + " " * (w - cells(cell)) for cell, w in zip(row, widths, strict=True)
        ).rstrip()
        for row in rows
    )


def dashed(values: tuple[int, ...]) -> str:
    """``82-80`` (two sides), ``60-52-50`` (three players)."""
    return "-".join(str(v) for v in values)


def winner_first(scores: Sequence[int], winner: int) -> str:
    """A result's score, the winner's first, then the other sides in order: ``638-302``."""
    order = [winner, *(t for t in range(len(scores)) if t != winner)]
    return "-".join(str(scores[t]) for t in order)


def contract_text(record: RoundRecord, who: str) -> str:
    """``Bob takes ♥ (turned J♥)``, ``Bob chooses ♠ (turned J♥)``, ``Bob bids 90 ♥,
    coinched``, ``who`` being the taker's name (``You take``, ``You bid`` for ``You``);
    two-handed, where nobody takes: ``trump ♥ (the last card dealt)``."""
    trump = trump_text(record.trump)
    if record.taker < 0:
        return f"trump {trump} (the last card dealt)"
    you = who == "You"
    if record.contract:
        bids = f"{who} {'bid' if you else 'bids'}"
        return bid_contract_text(bids, record.contract, trump, record.multiplier, sep=", ")
    took = any(b.kind is BidKind.TAKE for _, b in record.bids)
    verb = ("take" if took else "choose") + ("" if you else "s")
    turned = f" (turned {card_text(record.turned)})" if record.turned is not None else ""
    return f"{who} {verb} {trump}{turned}"


def _labels(names: Sequence[str] | None) -> Callable[[int], str]:
    return (lambda s: names[s]) if names else (lambda s: f"seat {s}")


def _round_head(r: RoundRecord | State, label: Callable[[int], str], note: str = "") -> list[str]:
    """``Round 2, dealer Bob, turned J♥`` and the bids' line, if any."""
    head = f"Round {r.number + 1}{note}, dealer {label(r.dealer)}"
    if r.turned is not None:
        head += f", turned {card_text(r.turned)}"
    lines = [head]
    if r.bids:
        lines.append("  bids: " + ", ".join(f"{label(s)} {bid_text(b)}" for s, b in r.bids))
    return lines


def trick_lines(tricks: Sequence[Trick], label: Callable[[int], str]) -> list[str]:
    """``  trick 3: Bob leads 7♥ A♥ 8♥ 9♥ -> Cid (11)``, a line a trick."""
    lines = []
    for i, t in enumerate(tricks):
        plays = " ".join(card_text(c) for c in t.cards)
        lines.append(
            f"  trick {i + 1}: {label(t.leader)} leads {plays} -> {label(t.winner)} ({t.points})"
        )
    return lines


def format_round(record: RoundRecord, names: Sequence[str] | None = None) -> str:
    """A few lines on one round, written as the table writes it (``10♦``): the bidding,
    the contract, announcements, every trick and the score."""
    label = _labels(names)
    lines = _round_head(record, label)
    if record.score is None:
        lines.append("  everybody passed: the next dealer deals again")
        return "\n".join(lines)
    lines.append(f"  contract: {contract_text(record, label(record.taker))}")
    teams = record.start.seats == 4
    for seat, anns in enumerate(record.declared):
        if anns:
            side = seat % 2 if teams else seat
            scored = " (scores)" if record.announcements_team == side else ""
            shown = ", ".join(announcement_text(a) for a in anns)
            lines.append(f"  {label(seat)} announces {shown}{scored}")
    for seat, card in record.belote:
        lines.append(f"  {label(seat)}: belote and rebelote ({card_text(card)})")
    lines += trick_lines(record.tricks, label)
    sc = record.score
    if teams:
        team_label = (lambda t: team_name(names, t)) if names else (lambda t: f"team {t}")
        extra = sweep_text(sc, label, team_label)
    else:
        extra = sweep_text(sc, label, label)
    lines.append(
        f"  card points {dashed(sc.card_points)}, totals {dashed(sc.totals)}: "
        f"{sc.outcome.value}{extra}"
    )
    pot = f", litige pot {sc.pending}" if sc.pending else ""
    lines.append(f"  round score {dashed(sc.score)}, game {dashed(record.scores_after)}{pot}")
    return "\n".join(lines)


def format_unfinished(state: State, names: Sequence[str] | None = None) -> str | None:
    """The round a game stopped in (abandoned, stopped by a fault), as far as it went: its
    bids, its contract, its tricks and the cards on the table; None if no round was under
    way (between rounds, or over)."""
    if state.phase not in (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY):
        return None
    label = _labels(names)
    lines = _round_head(state, label, " (not finished)")
    if state.phase is Phase.PLAY:
        if state.taker >= 0:
            taker = label(state.taker)
            trump = trump_text(state.trump)
            lines.append(f"  contract: {taker}, trump {trump}")
        else:
            lines.append(f"  trump {trump_text(state.trump)} (the last card dealt)")
        lines += trick_lines(state.tricks, label)
        if state.trick:
            plays = " ".join(card_text(c) for c in state.trick)
            lines.append(f"  trick {len(state.tricks) + 1}: {label(state.leader)} leads {plays}")
    else:
        lines.append("  the bidding was not over")
    return "\n".join(lines)


def format_sheet(state: State, names: Sequence[str] | None = None) -> str:
    """The score sheet of a game: one line a round, then the result; the teams (or, with
    two or three seats, the players) are named by their players (``Alice & Carol``) when
    ``names`` are given."""
    has_teams = state.rules.has_teams
    if names:
        sides = list(side_names(names))
    else:
        sides = (
            [f"team {t}" for t in (0, 1)]
            if has_teams
            else [f"seat {s}" for s in range(state.rules.seats)]
        )
    if not state.history:
        return "Score sheet: no round was scored."
    w = max(7, *(len(t) for t in sides))
    head = "".join(f"  {side:>{w}}" for side in sides)
    lines = ["Score sheet", f"  {'round':>5}{head}  {'total':>11}"]
    for r in state.history:
        if r.score is None:
            lines.append(f"  {r.number + 1:>5}  {'redeal':>{w}}")
            continue
        cells = "".join(f"  {x:>{w}}" for x in r.score.score)
        after = r.scores_after
        total = f"{after[0]:>5}-{after[1]:<5}" if has_teams else f"{dashed(after):>11}"
        lines.append(f"  {r.number + 1:>5}{cells}  {total}")
    if state.winner is not None:
        if has_teams:
            verb = "win" if names else "wins"
            lines.append(f"{sides[state.winner]} {verb} {winner_first(state.scores, state.winner)}")
        else:
            who = names[state.winner] if names else f"Seat {state.winner}"
            won = winner_first(state.scores, state.winner)
            lines.append(f"{who} {'win' if who == 'You' else 'wins'} {won}")
    return "\n".join(lines)
