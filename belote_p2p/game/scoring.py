"""Scoring a round: capot, générale, made / failed / litige, coinche, and the litige pot.

Pure arithmetic on what a round produced (RULES.md §7, §9 and §10); the engine calls it
when the eighth trick is taken, the audit calls it again when a fault is found.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

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
    NO_CONTRACT = "no-contract"
    """Two-handed: nobody takes; each player scores its own total (RULES.md §13)."""


class RoundScore(NamedTuple):
    """The scored outcome of one round: every tuple in team order (team 0 = seats 0 and 2)
    with four seats, in seat order with two or three (no teams).

    A named tuple rather than a frozen dataclass: one is made each round, and a frozen
    dataclass's constructor (a call per field) took 1.8 µs of a pure-Python round's ~108."""

    card_points: tuple[int, ...]
    """Trick points plus dix de der, or 250/500 for the side that made capot/générale."""
    announcements: tuple[int, ...]
    """Announcement points each side scores (only one side scores them)."""
    belote: tuple[int, ...]
    totals: tuple[int, ...]
    outcome: Outcome
    score: tuple[int, ...]
    """What each side adds to its game score."""
    pending: int
    """The litige pot after this round (always 0 with two or three seats)."""
    capot: int | None = None
    """The team (four seats) or the seat (two or three) that took every trick, if one did."""
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


# Module constants for the members: CPython 3.11 reads an attribute of an Enum class through
# a slow hook (``EnumType.__getattr__``), about 70 ns each, and a round's score reads several.
_MADE = Outcome.MADE
_FAILED = Outcome.FAILED
_LITIGE = Outcome.LITIGE
_NO_CONTRACT = Outcome.NO_CONTRACT


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
        outcome = _FAILED if offender == t else _MADE
    elif coinche:
        if contract == GENERALE_POINTS:
            made = generale == taker
        elif contract == CAPOT_POINTS:
            made = capot == t
        else:
            made = totals[t] >= contract and totals[t] > totals[d]
        outcome = _MADE if made else _FAILED
    elif totals[t] > totals[d]:
        outcome = _MADE
    elif totals[t] < totals[d]:
        outcome = _FAILED
    else:
        outcome = _LITIGE

    if outcome is _LITIGE:
        score = _pair(belote[t], totals[d], t)
        return RoundScore(
            card_points, announcements, belote, totals, outcome, score,
            pending + totals[t] - belote[t], capot, generale,
        )  # fmt: skip

    winner = t if outcome is _MADE else d
    loser = 1 - winner
    if coinche:
        if multiplier > 1 or offender is not None or outcome is _FAILED:
            won = COINCHE_FAILED_BASE + contract * multiplier + all_announcements + belote[winner]
            score = _pair(won, belote[loser], winner)
        else:
            score = _pair(contract + totals[t], totals[d], t)
    elif outcome is _MADE and offender is None:
        score = totals
    else:
        base = card_points[winner] if capot == winner else CLASSIC_FAILED_POINTS
        score = _pair(base + all_announcements + belote[winner], belote[loser], winner)
    if pending:
        score = _pair(score[winner] + pending, score[loser], winner)
    return RoundScore(
        card_points, announcements, belote, totals, outcome, score, 0, capot, generale
    )


def score_round_few(
    *,
    taker: int,
    trick_points: tuple[int, ...],
    trick_winners: tuple[int, ...],
    announcements: tuple[int, ...],
    belote: tuple[int, ...],
    offender: int | None = None,
) -> RoundScore:
    """Score a finished round of three-handed (RULES.md §12) or two-handed (§13).

    Every tuple has one entry per seat: ``trick_points`` with dix de der, ``announcements``
    as scored (only the seat with the best one has any), ``belote`` 20 or 0.
    ``trick_winners``: the seat that won each trick. ``taker`` is -1 in two-handed.

    A player who wins every trick has 250 card points, the others 0. Three-handed: made
    when the taker's total is strictly greater than each other's, and every player scores
    its total; failed otherwise: the taker scores its belote, every other player its total
    plus half (rounded down) of the taker's card points and scored announcements.
    Two-handed: each player scores its total.

    ``offender``: the seat the audit found at fault (RULES.md §10). It scores only its
    belote. If it is the taker, the contract failed as above; otherwise the taker (in
    two-handed: the other player) scores 162 (250 with a capot) plus every announcement
    scored plus its belote, and a third player its own total (choice, after §10).
    """
    n = len(trick_points)
    capot = None
    card_points = trick_points
    winners = set(trick_winners)
    if len(winners) == 1 and len(trick_winners) == (16 if n == 2 else 8):
        capot = trick_winners[0]
        card_points = tuple(CAPOT_POINTS if s == capot else 0 for s in range(n))
    totals = tuple(card_points[s] + announcements[s] + belote[s] for s in range(n))
    no_contract = taker < 0
    if offender is not None:
        winner = (1 - offender) if no_contract else taker
        if offender == taker:
            winner = -1
    else:
        winner = -1
    if offender is not None and winner >= 0:
        base = card_points[winner] if capot == winner else CLASSIC_FAILED_POINTS
        won = base + sum(announcements) + belote[winner]
        score = tuple(
            won if s == winner else belote[s] if s == offender else totals[s] for s in range(n)
        )
        outcome = _MADE
    elif no_contract:
        score = totals
        outcome = _NO_CONTRACT
    elif offender is None and all(totals[taker] > totals[s] for s in range(n) if s != taker):
        score = totals
        outcome = _MADE
    else:
        half = (card_points[taker] + announcements[taker]) // 2
        score = tuple(belote[s] if s == taker else totals[s] + half for s in range(n))
        outcome = _FAILED
    return RoundScore(card_points, announcements, belote, totals, outcome, score, 0, capot, None)
