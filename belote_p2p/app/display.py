"""Plain-text accounts of rounds and games, shared by every command that prints a game."""

from __future__ import annotations

from belote_p2p.game.cards import format_cards
from belote_p2p.game.engine import BidKind, RoundRecord, State
from belote_p2p.game.tables import trump_letter

from .wording import bid_contract_text, sweep_text

TEAM_NAMES = ("Team 0 (seats 0+2)", "Team 1 (seats 1+3)")


def dashed(values: tuple[int, ...]) -> str:
    """``82-80`` (two sides), ``60-52-50`` (three players)."""
    return "-".join(str(v) for v in values)


def contract_text(record: RoundRecord, taker: str | None = None) -> str:
    trump = trump_letter(record.trump)
    if record.taker < 0:  # two-handed: no bidding, trump from the last card dealt
        return f"trump {trump} (the last card dealt)"
    who = taker or f"seat {record.taker}"
    if record.contract:
        return bid_contract_text(f"{who} bids", record.contract, trump, record.multiplier)
    how = "takes" if any(b.kind is BidKind.TAKE for _, b in record.bids) else "chooses"
    return f"{who} {how} {trump} (turned {record.turned})"


def format_round(record: RoundRecord, names: tuple[str, ...] | None = None) -> str:
    """A few lines on one round: contract, announcements, tricks and score."""
    label = (lambda s: names[s]) if names else (lambda s: f"seat {s}")
    lines = [f"Round {record.number + 1}, dealer {label(record.dealer)}"]
    if record.score is None:
        lines.append("  everybody passed: the next dealer deals again")
        return "\n".join(lines)
    lines.append(f"  contract: {contract_text(record, label(record.taker))}")
    teams = len(record.declared) == 4
    for seat, anns in enumerate(record.declared):
        if anns:
            side = seat % 2 if teams else seat
            scored = " (scores)" if record.announcements_team == side else ""
            shown = ", ".join(str(a) for a in anns)
            lines.append(f"  {label(seat)} announces {shown}{scored}")
    for seat, card in record.belote:
        lines.append(f"  {label(seat)}: belote and rebelote ({card})")
    for i, t in enumerate(record.tricks):
        lines.append(
            f"  trick {i + 1}: {label(t.leader)} leads {format_cards(t.cards)} "
            f"-> {label(t.winner)} ({t.points})"
        )
    sc = record.score
    extra = sweep_text(sc, label, (lambda team: f"team {team}") if teams else label)
    lines.append(
        f"  card points {dashed(sc.card_points)}, totals {dashed(sc.totals)}: "
        f"{sc.outcome.value}{extra}"
    )
    pot = f", litige pot {sc.pending}" if sc.pending else ""
    lines.append(f"  round score {dashed(sc.score)}, game {dashed(record.scores_after)}{pot}")
    return "\n".join(lines)


def format_sheet(state: State) -> str:
    """The score sheet of a game: one line a round, then the result."""
    teams = state.rules.has_teams
    sides = ("team 0", "team 1") if teams else tuple(f"seat {s}" for s in range(state.rules.seats))
    head = "".join(f"  {side:>7}" for side in sides)
    lines = ["Score sheet", f"  {'round':>5}{head}  {'total':>11}"]
    for r in state.history:
        if r.score is None:
            lines.append(f"  {r.number + 1:>5}  {'redeal':>7}")
            continue
        cells = "".join(f"  {x:>7}" for x in r.score.score)
        after = r.scores_after
        total = f"{after[0]:>5}-{after[1]:<5}" if teams else f"{dashed(after):>11}"
        lines.append(f"  {r.number + 1:>5}{cells}  {total}")
    if state.winner is not None:
        who = TEAM_NAMES[state.winner] if teams else f"Seat {state.winner}"
        lines.append(f"{who} wins {dashed(state.scores)}")
    return "\n".join(lines)
