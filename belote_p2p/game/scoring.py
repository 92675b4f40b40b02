"""Scoring a round: capot, générale, made / failed / litige, coinche, and the litige pot.

Pure arithmetic on what a round produced (RULES.md §7, §9 and §10); the engine calls it
when the eighth trick is taken, the audit calls it again when a fault is found.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

CLASSIC_FAILED_POINTS = 162
COINCHE_FAILED_BASE = 160
CAPOT_POINTS = 250
GENERALE_POINTS = 500


class Outcome(Enum):
    """How a contract ended."""

    MADE = "made"
    """The takers won their contract."""
    FAILED = "failed"
    """The takers lost: the defence scores the round."""
    LITIGE = "litige"
    """Classic only: equal totals; the takers' points go to the pot."""


@dataclass(frozen=True, slots=True)
class RoundScore:
    """The scored outcome of one round, in team order (team 0 = seats 0 and 2)."""

    card_points: tuple[int, int]
    """Trick points plus dix de der, or 250/500 for the team that made capot/générale."""
    announcements: tuple[int, int]
    """Announcement points each team scores (only one team scores them)."""
    belote: tuple[int, int]
    totals: tuple[int, int]
    outcome: Outcome
    score: tuple[int, int]
    """What each team adds to its game score."""
    pending: int
    """The litige pot after this round."""
    capot: int | None = None
    """The team that took all eight tricks, if one did."""
    generale: int | None = None
    """The seat that took all eight tricks alone, if one did."""

    def to_json(self) -> dict[str, object]:
        return {
            "card_points": list(self.card_points),
            "totals": list(self.totals),
            "outcome": self.outcome.value,
            "score": list(self.score),
            "pending": self.pending,
        }


def _pair(a: int, b: int, team0: int) -> tuple[int, int]:
    """``(a, b)`` ordered so that ``a`` belongs to team ``team0``."""
    return (a, b) if team0 == 0 else (b, a)


def score_round(
    *,
    coinche: bool,
    taker: int,
    contract: int,
    multiplier: int,
    trick_points: tuple[int, int],
    trick_winners: tuple[int, ...],
    announcements: tuple[int, int],
    belote: tuple[int, int],
    pending: int,
    offender: int | None = None,
) -> RoundScore:
    """Score a finished round.

    ``trick_points`` are each team's card points with dix de der; ``trick_winners`` the
    seat that won each of the eight tricks. ``offender`` is the team found at fault by the
    audit (RULES.md §10): it loses the round whatever the cards said.
    """
    t = taker % 2
    d = 1 - t
    winners = set(trick_winners)
    capot = generale = None
    card_points = trick_points
    if len(trick_winners) == 8 and len({w % 2 for w in winners}) == 1:
        capot = trick_winners[0] % 2
        if len(winners) == 1:
            generale = trick_winners[0]
        bonus = GENERALE_POINTS if generale is not None else CAPOT_POINTS
        card_points = _pair(bonus, 0, capot)
    totals = (
        card_points[0] + announcements[0] + belote[0],
        card_points[1] + announcements[1] + belote[1],
    )
    all_announcements = announcements[0] + announcements[1]

    if offender is not None:
        outcome = Outcome.FAILED if offender == t else Outcome.MADE
    elif coinche:
        if contract == GENERALE_POINTS:
            made = generale == taker
        elif contract == CAPOT_POINTS:
            made = capot == t
        else:
            made = totals[t] >= contract and totals[t] > totals[d]
        outcome = Outcome.MADE if made else Outcome.FAILED
    elif totals[t] > totals[d]:
        outcome = Outcome.MADE
    elif totals[t] < totals[d]:
        outcome = Outcome.FAILED
    else:
        outcome = Outcome.LITIGE

    if outcome is Outcome.LITIGE:
        score = _pair(belote[t], totals[d], t)
        return RoundScore(
            card_points, announcements, belote, totals, outcome, score,
            pending + totals[t] - belote[t], capot, generale,
        )  # fmt: skip

    winner = t if outcome is Outcome.MADE else d
    loser = 1 - winner
    if coinche:
        if multiplier > 1 or offender is not None or outcome is Outcome.FAILED:
            won = COINCHE_FAILED_BASE + contract * multiplier + all_announcements + belote[winner]
            score = _pair(won, belote[loser], winner)
        else:
            score = _pair(contract + totals[t], totals[d], t)
    elif outcome is Outcome.MADE and offender is None:
        score = totals
    else:
        base = card_points[winner] if capot == winner else CLASSIC_FAILED_POINTS
        score = _pair(base + all_announcements + belote[winner], belote[loser], winner)
    if pending:
        score = _pair(score[winner] + pending, score[loser], winner)
    return RoundScore(
        card_points, announcements, belote, totals, outcome, score, 0, capot, generale
    )
