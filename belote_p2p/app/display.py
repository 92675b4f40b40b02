"""Plain-text accounts of rounds and games, shared by every command that prints a game."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from belote_p2p.game.audit import AuditFault, FaultKind
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import BidKind, Phase, RoundRecord, State, Trick
from belote_p2p.game.scoring import Outcome
from belote_p2p.i18n import N_, _, pgettext
from belote_p2p.protocol.names import MAX_NAME_CELLS, cells, safe_text
from belote_p2p.protocol.table import TableDefinition

from .wording import (
    announcement_text,
    bid_text,
    card_text,
    coinche_text,
    side_names,
    sweep_text,
    team_name,
    trump_text,
)
from .wording import (
    contract_text as contract_value_text,
)

OUTCOME_WORDS = {
    Outcome.MADE: N_("made"),
    Outcome.FAILED: N_("failed"),
    Outcome.LITIGE: N_("litige"),
    Outcome.NO_CONTRACT: N_("no contract"),
}
"""How a contract ended, as a person reads it (the outcome's own value is what programs
read)."""
FAULT_LINES = {
    FaultKind.ILLEGAL_PLAY: N_("Audit: {name} played a card the rules forbade ({action})."),
    FaultKind.ILLEGAL_BID: N_("Audit: {name} made a bid the rules forbade ({action})."),
    FaultKind.FALSE_BELOTE: N_(
        "Audit: {name} announced a belote without the king and queen of trump ({action})."
    ),
    FaultKind.FALSE_ANNOUNCEMENT: N_(
        "Audit: {name} announced what their hand did not hold ({action})."
    ),
}
"""What the audit found, as a person reads it (the fault's own reason, in English, stays in
the transcript and the log)."""


def fault_text(fault: AuditFault, name: str) -> str:
    """What a round's audit found, ``name`` being the faulty seat's (:data:`FAULT_LINES`),
    a card as the reader writes it."""
    action = fault.action
    with contextlib.suppress(ValueError):
        action = card_text(Card.parse(action))
    return _(FAULT_LINES[fault.kind]).format(name=name, action=action)


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


def with_coinche(bid: str, multiplier: int) -> str:
    """A contract said (``Bob bids 90 ♥``) with its coinche, if any: ``Bob bids 90 ♥,
    coinched``."""
    coinched = coinche_text(multiplier)
    if not coinched:
        return bid
    return _("{bid}, {coinched}").format(bid=bid, coinched=coinched)


CONTRACT_SENTENCES = {
    # (bid, took the turned card, ours): the sentence, its {name} the taker's.
    (True, False, False): N_("{name} bids {contract} {trump}"),
    (True, False, True): N_("You bid {contract} {trump}"),
    (False, True, False): N_("{name} takes {trump}"),
    (False, True, True): N_("You take {trump}"),
    (False, False, False): N_("{name} chooses {trump}"),
    (False, False, True): N_("You choose {trump}"),
}


def contract_text(record: RoundRecord, who: str, *, mine: bool = False) -> str:
    """``Bob takes ♥ (turned J♥)``, ``Bob chooses ♠ (turned J♥)``, ``Bob bids 90 ♥,
    coinched``, ``who`` being the taker's name (``mine``: the taker is the reader, ``You
    take``); two-handed, where nobody takes: ``trump ♥ (the last card dealt)``."""
    trump = trump_text(record.trump)
    if record.taker < 0:
        return _("trump {trump} (the last card dealt)").format(trump=trump)
    took = any(b.kind is BidKind.TAKE for _s, b in record.bids)
    said = _(CONTRACT_SENTENCES[bool(record.contract), took and not record.contract, mine])
    text = said.format(name=who, contract=contract_value_text(record.contract), trump=trump)
    if record.contract:
        return with_coinche(text, record.multiplier)
    if record.turned is not None:
        return _("{contract} (turned {card})").format(contract=text, card=card_text(record.turned))
    return text


def _labels(names: Sequence[str] | None) -> Callable[[int], str]:
    if names:
        return lambda s: names[s]
    return lambda s: _("seat {number}").format(number=s)


def _round_head(r: RoundRecord | State, label: Callable[[int], str], unfinished: bool) -> list[str]:
    """``Round 2, dealer Bob, turned J♥`` and the bids' line, if any."""
    fields = {"number": r.number + 1, "dealer": label(r.dealer)}
    if r.turned is not None:
        fields["card"] = card_text(r.turned)
        if unfinished:
            head = _("Round {number} (not finished), dealer {dealer}, turned {card}")
        else:
            head = _("Round {number}, dealer {dealer}, turned {card}")
    elif unfinished:
        head = _("Round {number} (not finished), dealer {dealer}")
    else:
        head = _("Round {number}, dealer {dealer}")
    lines = [head.format(**fields)]
    if r.bids:
        bids = ", ".join(f"{label(s)} {bid_text(b)}" for s, b in r.bids)
        lines.append("  " + _("bids: {bids}").format(bids=bids))
    return lines


def trick_lines(tricks: Sequence[Trick], label: Callable[[int], str]) -> list[str]:
    """``  trick 3: Bob leads 7♥ A♥ 8♥ 9♥ -> Cid (11)``, a line a trick."""
    lines = []
    for i, t in enumerate(tricks):
        plays = " ".join(card_text(c) for c in t.cards)
        line = _("trick {number}: {leader} leads {cards} -> {winner} ({points})").format(
            number=i + 1,
            leader=label(t.leader),
            cards=plays,
            winner=label(t.winner),
            points=t.points,
        )
        lines.append("  " + line)
    return lines


def format_round(record: RoundRecord, names: Sequence[str] | None = None) -> str:
    """A few lines on one round, written as the table writes it (``10♦``): the bidding,
    the contract, announcements, every trick and the score."""
    label = _labels(names)
    lines = _round_head(record, label, unfinished=False)
    if record.score is None:
        lines.append("  " + _("everybody passed: the next dealer deals again"))
        return "\n".join(lines)
    contract = contract_text(record, label(record.taker))
    lines.append("  " + _("contract: {contract}").format(contract=contract))
    teams = record.start.seats == 4
    for seat, anns in enumerate(record.declared):
        if anns:
            side = seat % 2 if teams else seat
            shown = ", ".join(announcement_text(a) for a in anns)
            if record.announcements_team == side:
                said = _("{name} announces {announcements} (scores)")
            else:
                said = _("{name} announces {announcements}")
            lines.append("  " + said.format(name=label(seat), announcements=shown))
    for seat, card in record.belote:
        said = _("{name}: belote and rebelote ({card})").format(
            name=label(seat), card=card_text(card)
        )
        lines.append("  " + said)
    lines += trick_lines(record.tricks, label)
    sc = record.score
    if teams:
        team_label = (lambda t: team_name(names, t)) if names else team_number
        extra = sweep_text(sc, label, team_label)
    else:
        extra = sweep_text(sc, label, label)
    points = _("card points {points}, totals {totals}: {outcome}{sweep}").format(
        points=dashed(sc.card_points),
        totals=dashed(sc.totals),
        outcome=_(OUTCOME_WORDS[sc.outcome]),
        sweep=extra,
    )
    lines.append("  " + points)
    fields = {"score": dashed(sc.score), "game": dashed(record.scores_after), "pot": sc.pending}
    if sc.pending:
        score = _("round score {score}, game {game}, litige pot {pot}").format(**fields)
    else:
        score = _("round score {score}, game {game}").format(**fields)
    lines.append("  " + score)
    return "\n".join(lines)


def team_number(team: int) -> str:
    """A team without its players' names: ``team 0``."""
    return _("team {number}").format(number=team)


def format_unfinished(state: State, names: Sequence[str] | None = None) -> str | None:
    """The round a game stopped in (abandoned, stopped by a fault), as far as it went: its
    bids, its contract, its tricks and the cards on the table; None if no round was under
    way (between rounds, or over)."""
    if state.phase not in (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY):
        return None
    label = _labels(names)
    lines = _round_head(state, label, unfinished=True)
    trump = trump_text(state.trump)
    if state.phase is Phase.PLAY:
        if state.taker >= 0:
            said = _("contract: {name}, trump {trump}").format(name=label(state.taker), trump=trump)
        else:
            said = _("trump {trump} (the last card dealt)").format(trump=trump)
        lines.append("  " + said)
        lines += trick_lines(state.tricks, label)
        if state.trick:
            plays = " ".join(card_text(c) for c in state.trick)
            said = _("trick {number}: {leader} leads {cards}").format(
                number=len(state.tricks) + 1, leader=label(state.leader), cards=plays
            )
            lines.append("  " + said)
    else:
        lines.append("  " + _("the bidding was not over"))
    return "\n".join(lines)


def format_sheet(state: State, names: Sequence[str] | None = None, *, me: int | None = None) -> str:
    """The score sheet of a game: one line a round, then the result; the teams (or, with
    two or three seats, the players) are named by their players (``Alice & Carol``) when
    ``names`` are given; ``me``: the reader's seat (``You win``), if it is one of them."""
    has_teams = state.rules.has_teams
    if names:
        sides = list(side_names(names))
    elif has_teams:
        sides = [team_number(t) for t in (0, 1)]
    else:
        sides = [_("seat {number}").format(number=s) for s in range(state.rules.seats)]
    if not state.history:
        return _("Score sheet: no round was scored.")
    w = max(7, *(cells(t) for t in sides))
    head = "".join(f"  {right(side, w)}" for side in sides)
    # TRANSLATORS: the score sheet's column of round numbers (at most 5 columns wide).
    round_word = right(pgettext("sheet", "round"), 5)
    # TRANSLATORS: the score sheet's column of game totals (at most 11 columns wide).
    total_word = right(pgettext("sheet", "total"), 11)
    redeal = right(_("redeal"), w)
    lines = [_("Score sheet"), f"  {round_word}{head}  {total_word}"]
    for r in state.history:
        if r.score is None:
            lines.append(f"  {r.number + 1:>5}  {redeal}")
            continue
        row = "".join(f"  {x:>{w}}" for x in r.score.score)
        after = r.scores_after
        total = f"{after[0]:>5}-{after[1]:<5}" if has_teams else f"{dashed(after):>11}"
        lines.append(f"  {r.number + 1:>5}{row}  {total}")
    if state.winner is not None:
        won = winner_first(state.scores, state.winner)
        ours = me is not None and (me % 2 if has_teams else me) == state.winner and bool(names)
        if ours and not has_teams:
            lines.append(_("You win {score}").format(score=won))
        elif has_teams and names:
            lines.append(_("{side} win {score}").format(side=sides[state.winner], score=won))
        elif has_teams:
            lines.append(_("{team} wins {score}").format(team=sides[state.winner], score=won))
        else:
            who = names[state.winner] if names else _("Seat {number}").format(number=state.winner)
            lines.append(_("{name} wins {score}").format(name=who, score=won))
    return "\n".join(lines)


def right(text: str, width: int) -> str:
    """``text`` aligned right in ``width`` terminal cells."""
    return " " * max(0, width - cells(text)) + text
