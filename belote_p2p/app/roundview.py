"""A finished round, taken apart for a person: what each side (a team of two with four
seats, a player with two or three) scored and why.

:func:`round_breakdown` turns a :class:`~belote_p2p.game.engine.RoundRecord` (as audited) and
the players' names into a :class:`RoundBreakdown`: plain data that the terminal table draws
as its round screen and the browser table can send as JSON (:meth:`RoundBreakdown.to_json`).
Nothing here draws anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from belote_p2p.game.engine import RoundRecord, Trick
from belote_p2p.game.scoring import Outcome
from belote_p2p.i18n import _

from .display import contract_text
from .wording import announcement_text, side_names

DIX_DE_DER = 10


@dataclass(frozen=True, slots=True)
class SideRound:
    """One side's part of a round: a team's with four seats, a player's with two or three."""

    name: str
    """``Alice & Carol`` (a team), ``Alice`` (a player)."""
    takers: bool
    tricks: int
    card_points: int
    """Points of the cards it took, dix de der included (250 or 500 for a capot or a
    générale, as scored)."""
    dix_de_der: int
    announcements: int
    """Announcement points it scores (only one side scores them)."""
    belote: int
    total: int
    """What the contract is judged on."""
    score: int
    """What it adds to its game score this round."""
    game: int
    """Its game score after the round."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "takers": self.takers,
            "tricks": self.tricks,
            "card_points": self.card_points,
            "dix_de_der": self.dix_de_der,
            "announcements": self.announcements,
            "belote": self.belote,
            "total": self.total,
            "score": self.score,
            "game": self.game,
        }


@dataclass(frozen=True, slots=True)
class RoundBreakdown:
    """A finished round as a person reads it (see the module docstring)."""

    number: int
    """Counted from 1."""
    dealer: str
    contract: str
    """``Bob takes ♥ (turned J♥)``, ``Bob bids 90 ♥, coinched``; empty for a redeal."""
    outcome: str
    """``made``, ``failed``, ``litige`` or ``redeal`` (everybody passed)."""
    verdict: str
    """One sentence: who made or failed what, or where the litige points went."""
    sweep: str
    """``capot by Alice & Carol`` or ``générale by Bob``; empty otherwise."""
    sides: tuple[SideRound, ...]
    """Team 0 (seats 0 and 2), then team 1; with two or three seats, each seat in order."""
    pot: int
    """The litige pot after the round."""
    declared: tuple[str, ...]
    """``Bob: tierce 7♥ 8♥ 9♥ (20)``, ``Dee: belote``, each scored or not."""
    tricks: tuple[Trick, ...]
    target: int
    audit: str = ""
    """What the round's audit found and rescored, if anything."""

    @property
    def last_trick(self) -> Trick | None:
        return self.tricks[-1] if self.tricks else None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "dealer": self.dealer,
            "contract": self.contract,
            "outcome": self.outcome,
            "verdict": self.verdict,
            "sweep": self.sweep,
            "sides": [t.to_json() for t in self.sides],
            "pot": self.pot,
            "declared": list(self.declared),
            "tricks": [t.to_json() for t in self.tricks],
            "target": self.target,
            "audit": self.audit,
        }


def round_breakdown(
    record: RoundRecord,
    names: Sequence[str],
    target: int,
    audit: str = "",
    *,
    me: int | None = None,
) -> RoundBreakdown:
    """``record`` taken apart, with the seats' ``names`` (``You`` for one's own, if wanted:
    ``me`` is then that seat, so that its sentences say ``You take``); four names make two
    teams, two or three make as many sides. Its sentences are in the language in use."""
    sides_names = side_names(names)
    teams = len(names) == 4

    def side(seat: int) -> int:
        return seat % 2 if teams else seat

    head = (record.number + 1, names[record.dealer])
    sc = record.score
    n = len(sides_names)
    if sc is None:
        empty = tuple(
            SideRound(sides_names[t], False, 0, 0, 0, 0, 0, 0, 0, record.scores_after[t])
            for t in range(n)
        )
        return RoundBreakdown(
            *head, "", "redeal", _("Everybody passed: the next dealer deals again."), "",
            empty, 0, (), (), target, audit,
        )  # fmt: skip
    taker_side = side(record.taker) if record.taker >= 0 else -1
    tricks_won = [0] * n
    for t in record.tricks:
        tricks_won[side(t.winner)] += 1
    dix = [0] * n
    if record.tricks:
        dix[side(record.tricks[-1].winner)] = DIX_DE_DER
    sides = tuple(
        SideRound(
            sides_names[t],
            t == taker_side,
            tricks_won[t],
            sc.card_points[t],
            dix[t],
            sc.announcements[t],
            sc.belote[t],
            sc.totals[t],
            sc.score[t],
            record.scores_after[t],
        )
        for t in range(n)
    )
    mine = me is not None and record.taker == me
    verdict = _verdict(sc.outcome, sides_names, taker_side, sc.pending, teams, mine)
    if sc.generale is not None:
        sweep = _("générale by {name}").format(name=names[sc.generale])
    elif sc.capot is not None:
        sweep = _("capot by {side}").format(side=sides_names[sc.capot])
    else:
        sweep = ""
    declared: list[str] = []
    for seat, anns in enumerate(record.declared):
        for a in anns:
            if record.announcements_team == side(seat):
                said = _("{name}: {announcement}")
            else:
                said = _("{name}: {announcement}, not scored")
            declared.append(said.format(name=names[seat], announcement=announcement_text(a)))
    for seat, _card in record.belote:
        declared.append(_("{name}: belote and rebelote (20)").format(name=names[seat]))
    taker = names[record.taker] if record.taker >= 0 else ""
    return RoundBreakdown(
        *head, contract_text(record, taker, mine=mine), sc.outcome.value, verdict, sweep,
        sides, sc.pending, tuple(declared), record.tricks, target, audit,
    )  # fmt: skip


def _verdict(
    outcome: Outcome, sides: Sequence[str], taker: int, pending: int, teams: bool, mine: bool
) -> str:
    """One sentence on how the contract ended (RULES.md §9, §12, §13); ``mine``: the reader
    took."""
    if outcome is Outcome.NO_CONTRACT:
        return _("Nobody takes in two-handed: each player scores its own points.")
    takers = sides[taker]
    if outcome is Outcome.MADE:
        return _("{takers} made the contract.").format(takers=takers)
    if outcome is Outcome.LITIGE:
        return _(
            "Litige: {others} score their points; those of {takers} wait in the pot ({pot})."
        ).format(others=sides[1 - taker], takers=takers, pot=pending)
    if teams:
        return _("{takers} failed the contract: {others} score the round.").format(
            takers=takers, others=sides[1 - taker]
        )
    if mine:
        return _("You fail: the others score their points and half of the taker's.")
    return _("{name} fails: the others score their points and half of the taker's.").format(
        name=takers
    )
