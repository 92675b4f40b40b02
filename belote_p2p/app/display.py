"""Plain-text accounts of rounds and games, shared by every command that prints a game."""

from __future__ import annotations

from collections.abc import Sequence

from belote_p2p.game.engine import BidKind, RoundRecord, State

from .wording import (
    announcement_text,
    bid_contract_text,
    bid_text,
    card_text,
    sweep_text,
    team_name,
    trump_text,
)


def contract_text(record: RoundRecord, taker: str | None = None) -> str:
    trump = trump_text(record.trump)
    who = taker or f"seat {record.taker}"
    if record.contract:
        return bid_contract_text(f"{who} bids", record.contract, trump, record.multiplier)
    how = "takes" if any(b.kind is BidKind.TAKE for _, b in record.bids) else "chooses"
    turned = card_text(record.turned) if record.turned is not None else "?"
    return f"{who} {how} {trump} (turned {turned})"


def format_round(record: RoundRecord, names: Sequence[str] | None = None) -> str:
    """A few lines on one round, written as the table writes it (``10♦``): the bidding,
    the contract, announcements, every trick and the score."""
    label = (lambda s: names[s]) if names else (lambda s: f"seat {s}")
    head = f"Round {record.number + 1}, dealer {label(record.dealer)}"
    if record.turned is not None:
        head += f", turned {card_text(record.turned)}"
    lines = [head]
    if record.bids:
        lines.append("  bids: " + ", ".join(f"{label(s)} {bid_text(b)}" for s, b in record.bids))
    if record.score is None:
        lines.append("  everybody passed: the next dealer deals again")
        return "\n".join(lines)
    lines.append(f"  contract: {contract_text(record, label(record.taker))}")
    for seat, anns in enumerate(record.declared):
        if anns:
            scored = " (scores)" if record.announcements_team == seat % 2 else ""
            shown = ", ".join(announcement_text(a) for a in anns)
            lines.append(f"  {label(seat)} announces {shown}{scored}")
    for seat, card in record.belote:
        lines.append(f"  {label(seat)}: belote and rebelote ({card_text(card)})")
    for i, t in enumerate(record.tricks):
        plays = " ".join(card_text(c) for c in t.cards)
        lines.append(
            f"  trick {i + 1}: {label(t.leader)} leads {plays} -> {label(t.winner)} ({t.points})"
        )
    sc = record.score
    teams = (lambda t: team_name(names, t)) if names else (lambda t: f"team {t}")
    extra = sweep_text(sc, label, teams)
    lines.append(
        f"  card points {sc.card_points[0]}-{sc.card_points[1]}, totals "
        f"{sc.totals[0]}-{sc.totals[1]}: {sc.outcome.value}{extra}"
    )
    pot = f", litige pot {sc.pending}" if sc.pending else ""
    lines.append(
        f"  round score {sc.score[0]}-{sc.score[1]}, game {record.scores_after[0]}-"
        f"{record.scores_after[1]}{pot}"
    )
    return "\n".join(lines)


def format_sheet(state: State, names: Sequence[str] | None = None) -> str:
    """The score sheet of a game: one line a round, then the result; the teams are named
    by their players (``Alice & Carol``) when ``names`` are given."""
    teams = [team_name(names, t) if names else f"team {t}" for t in (0, 1)]
    w = max(7, *(len(t) for t in teams))
    lines = ["Score sheet", f"  {'round':>5}  {teams[0]:>{w}}  {teams[1]:>{w}}  {'total':>11}"]
    for r in state.history:
        if r.score is None:
            lines.append(f"  {r.number + 1:>5}  {'redeal':>{w}}")
            continue
        a, b = r.score.score
        lines.append(
            f"  {r.number + 1:>5}  {a:>{w}}  {b:>{w}}  "
            f"{r.scores_after[0]:>5}-{r.scores_after[1]:<5}"
        )
    if state.winner is not None:
        verb = "win" if names else "wins"
        lines.append(f"{teams[state.winner]} {verb} {state.scores[0]}-{state.scores[1]}")
    return "\n".join(lines)
