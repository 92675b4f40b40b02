"""The coach: every decision of a game valued in two views, and what each choice lost.

A finished round is replayed from its deck and actions (as a verified record or a local
game gives them: :class:`~belote_p2p.game.engine.RoundRecord` and the whole deck), and at
every decision of the seats asked for, every legal choice is valued twice:

* **the information-set view** (``informed``): with only what that player knew then (its
  :class:`~belote_p2p.game.observation.Observation`), by an :class:`Evaluator`: a bot that
  values every legal action, by default the ``expert`` bot (:func:`evaluator`), which
  values them exactly as it decides (the same worlds drawn, the same playouts). Its best
  is what a strong player would have done in that seat: the fair measure of a mistake.
* **the hindsight view** (``hindsight``): with every hand known
  (:class:`~.hindsight.Hindsight`: the double-dummy solver, exact where it says so).

In each view the best is the highest value over the legal choices valued in the same call,
so a loss (best minus the value of the choice made) is never below zero, and the choice
named best is always legal. A choice the evaluator does not value (the ``expert`` values
every card and the bids it weighs: see its ``action_values``) has no loss in that view and
is counted apart.

Only decisions count: an action with no alternative (one legal choice) is skipped. Every
decision's randomness comes from ``seed``, the round's number and the action's index, so
that the same record analysed twice gives the same figures, and the coach line after a
round agrees with the analysis of the whole game.

Pure: no I/O, no clock. The ``analyse`` command, the replay page, the hints and the coach
line are shells over it (:mod:`belote_p2p.app.coach`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from belote_p2p.errors import BeloteError
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import PASS, Action, Bid, BidKind, Phase, RoundRecord, State
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import RuleSet
from belote_p2p.game.tables import POINTS, winning_index

from .hindsight import Hindsight, Method

log = logging.getLogger(__name__)

INFORMED_METHOD = "expert"
"""The information-set view's method, as :attr:`Valuation.method` names it."""
COSTLIEST = 3
"""Mistakes a seat's summary keeps, costliest first."""


class Evaluator(Protocol):
    """What values every legal action of a decision from one seat's view: the round score
    each leads to, that seat's side minus the other side's (with three seats, minus the
    mean of the two others')."""

    def action_values(self, observation: Observation, rng: random.Random) -> Mapping[Action, float]:
        """The value of every legal action it weighs (those it leaves out are not valued)."""
        ...


class NotAnEvaluator(BeloteError, TypeError):
    """A bot that cannot value every legal action (it has no ``action_values``)."""


def evaluator(bot: object) -> Evaluator:
    """``bot`` as an :class:`Evaluator`: the one place that knows how a bot gives its
    values (the ``expert`` bot's ``action_values``, the same call its ``decide`` makes).
    :class:`NotAnEvaluator` for a bot without it."""
    values = getattr(bot, "action_values", None)
    if not callable(values):
        name = type(bot).__name__
        raise NotAnEvaluator(f"the {name} bot cannot value every legal action (no action_values)")
    return bot  # type: ignore[return-value]


def decision_rng(seed: int, round_number: int, index: int, view: str) -> random.Random:
    """The randomness of one view of one decision: the same for the same record, whatever
    else is analysed."""
    return random.Random(f"belote-p2p/coach:{seed}:{round_number}:{index}:{view}")


# -- what an analysis holds ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Valuation:
    """One view of one decision: the value of each legal choice it valued, best first."""

    values: tuple[tuple[Action, float], ...]
    chosen: float | None
    """The value of the choice made (None: that choice was not valued)."""
    method: str
    """How: :data:`INFORMED_METHOD`, or a :class:`~.hindsight.Method`'s value."""

    @property
    def best(self) -> Action:
        return self.values[0][0]

    @property
    def best_value(self) -> float:
        return self.values[0][1]

    @property
    def loss(self) -> float | None:
        """What the choice made lost against the best (never below 0), or None."""
        if self.chosen is None:
            return None
        return self.best_value - self.chosen

    def value_of(self, action: Action) -> float | None:
        for a, v in self.values:
            if a == action:
                return v
        return None


def valuation(
    values: Mapping[Action, float], legal: Sequence[Action], made: Action, method: str
) -> Valuation | None:
    """The :class:`Valuation` of ``values`` (anything not legal left out), the choice made
    first among equals, so that a choice as good as the best loses nothing and is named
    best; None when no legal choice is valued."""
    order = {a: i for i, a in enumerate(legal)}
    kept = [(a, float(v)) for a, v in values.items() if a in order]
    if not kept:
        return None
    kept.sort(key=lambda av: (-av[1], av[0] != made, order[av[0]]))
    chosen = next((v for a, v in kept if a == made), None)
    return Valuation(tuple(kept), chosen, method)


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of one seat, valued."""

    round: int
    """The round's number in the game (:attr:`RoundRecord.number`: redeals count)."""
    index: int
    """The action's index among the round's actions (bids, then cards)."""
    seat: int
    action: Action
    observation: Observation
    """What the seat knew as it decided (its hand, the table, the legal choices)."""
    informed: Valuation | None
    hindsight: Valuation | None

    @property
    def phase(self) -> Phase:
        return self.observation.phase

    @property
    def legal(self) -> tuple[Action, ...]:
        return self.observation.legal

    @property
    def trick_number(self) -> int:
        """The trick it was played in, from 1 (0 for a bid)."""
        if self.observation.phase is not Phase.PLAY:
            return 0
        return len(self.observation.tricks) + 1

    def loss(self, view: str) -> float | None:
        """The loss in ``"informed"`` or ``"hindsight"``."""
        v = self.informed if view == "informed" else self.hindsight
        return None if v is None else v.loss


@dataclass(frozen=True, slots=True)
class RoundAnalysis:
    number: int
    dealer: int
    decisions: tuple[Decision, ...]
    stopped: str | None = None
    """Why the replay stopped before the round's end (a play the audit refused), if it did."""


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """A seat's decisions over an analysis, and what they lost in each view."""

    seat: int
    decisions: int
    """Decisions analysed (more than one legal choice)."""
    valued: int
    """Of those, the ones whose choice the information-set view valued."""
    points_lost: float
    """In the information-set view, over the valued decisions."""
    hindsight_valued: int
    hindsight_points_lost: float
    costliest: tuple[Decision, ...]
    """Its costliest decisions in the information-set view (then in hindsight), at most
    :data:`COSTLIEST`, each that lost something."""

    @property
    def mean_loss(self) -> float:
        return self.points_lost / self.valued if self.valued else 0.0

    @property
    def hindsight_mean_loss(self) -> float:
        return self.hindsight_points_lost / self.hindsight_valued if self.hindsight_valued else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "decisions": self.decisions,
            "valued": self.valued,
            "points_lost": round(self.points_lost, 1),
            "mean_loss": round(self.mean_loss, 2),
            "hindsight_valued": self.hindsight_valued,
            "hindsight_points_lost": round(self.hindsight_points_lost, 1),
            "hindsight_mean_loss": round(self.hindsight_mean_loss, 2),
        }


def summarize(seat: int, decisions: Iterable[Decision]) -> SeatSummary:
    """``seat``'s :class:`SeatSummary` over ``decisions`` (those of other seats ignored)."""
    mine = [d for d in decisions if d.seat == seat]
    informed = [d.informed.loss for d in mine if d.informed is not None]
    known = [x for x in informed if x is not None]
    hindsight = [d.hindsight.loss for d in mine if d.hindsight is not None]
    seen = [x for x in hindsight if x is not None]

    def cost(d: Decision) -> tuple[float, float]:
        return (d.loss("informed") or 0.0, d.loss("hindsight") or 0.0)

    costly = sorted((d for d in mine if max(cost(d)) > 0), key=cost, reverse=True)
    return SeatSummary(
        seat, len(mine), len(known), sum(known), len(seen), sum(seen), tuple(costly[:COSTLIEST])
    )


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """A game's rounds analysed, for the seats asked for."""

    rules: RuleSet
    rounds: tuple[RoundAnalysis, ...]
    seats: tuple[int, ...]
    hindsight_methods: tuple[tuple[str, str], ...] = ()
    """Each hindsight method used, with its description (:meth:`Hindsight.describe`)."""

    @property
    def decisions(self) -> tuple[Decision, ...]:
        return tuple(d for r in self.rounds for d in r.decisions)

    def summary(self, seat: int) -> SeatSummary:
        return summarize(seat, self.decisions)

    def summaries(self) -> tuple[SeatSummary, ...]:
        every = self.decisions
        return tuple(summarize(seat, every) for seat in self.seats)

    def to_json(self) -> dict[str, Any]:
        """The figures of the analysis (the ``analyse`` command's last line)."""
        return {
            "seats": [s.to_json() for s in self.summaries()],
            "rounds": len(self.rounds),
            "informed": INFORMED_METHOD,
            "hindsight": dict(self.hindsight_methods),
        }


# -- the analysis -------------------------------------------------------------------------------


class Coach:
    """Analyses rounds in both views (either may be None: that view is left out)."""

    def __init__(
        self, informed: Evaluator | None, hindsight: Hindsight | None, *, seed: int = 0
    ) -> None:
        self.informed = informed
        self.hindsight = hindsight
        self.seed = seed
        self._methods: dict[str, str] = {}

    def analyse_round(
        self,
        record: RoundRecord,
        deck: Sequence[Card | None] | None = None,
        seats: Collection[int] | None = None,
    ) -> RoundAnalysis:
        """Replay ``record`` with ``deck`` (its whole deck; by default the record's own)
        and value every decision of ``seats`` (every seat by default)."""
        cards = tuple(deck if deck is not None else record.deck)
        if any(c is None for c in cards):
            raise ValueError("the analysis needs the whole deck (an audited round's)")
        if self.hindsight is not None:
            self.hindsight.new_round()
        state = record.start.deal(cards)
        out: list[Decision] = []
        stopped = None
        for index, (action, _claim) in enumerate(record.actions):
            legal = state.legal_actions()
            if action not in legal:
                stopped = f"{action} by seat {state.to_act} breaks the rules"
                break
            seat = state.to_act
            if len(legal) > 1 and (seats is None or seat in seats):
                out.append(self._decision(state, record.number, index, action))
            state = state.apply(action)
        return RoundAnalysis(record.number, record.dealer, tuple(out), stopped)

    def _decision(self, state: State, number: int, index: int, action: Action) -> Decision:
        seat = state.to_act
        obs = observe(state, seat)
        informed = None
        if self.informed is not None:
            rng = decision_rng(self.seed, number, index, "informed")
            informed = valuation(
                self._informed_values(obs, rng), obs.legal, action, INFORMED_METHOD
            )
        hindsight = None
        if self.hindsight is not None:
            rng = decision_rng(self.seed, number, index, "hindsight")
            found = self.hindsight.values(state, rng)
            if found is not None:
                method = found.method.value
                hindsight = valuation(found.values, obs.legal, action, method)
                if method not in self._methods:
                    self._methods[method] = self.hindsight.describe(found.method, state.seats)
        return Decision(number, index, seat, action, obs, informed, hindsight)

    def _informed_values(self, obs: Observation, rng: random.Random) -> Mapping[Action, float]:
        """The evaluator's values; none where it fails (a bot's bug is that decision left
        unvalued in this view, as a table replaces a failing bot's answer, never the end of
        the analysis)."""
        assert self.informed is not None
        try:
            return self.informed.action_values(obs, rng)
        except Exception as exc:
            log.warning("the evaluator failed at round %d: %r", obs.number, exc)
            return {}

    def analyse_game(
        self,
        rules: RuleSet,
        rounds: Iterable[tuple[RoundRecord, Sequence[Card | None] | None]],
        seats: Collection[int] | None = None,
    ) -> GameAnalysis:
        """Every round (a record and its whole deck) analysed for ``seats`` (every seat)."""
        done = tuple(self.analyse_round(r, d, seats) for r, d in rounds)
        chosen = tuple(sorted(seats)) if seats is not None else tuple(range(rules.seats))
        methods = tuple(sorted(self._methods.items(), key=lambda kv: _METHOD_ORDER[kv[0]]))
        return GameAnalysis(rules, done, chosen, methods)

    def hint(self, observation: Observation, rng: random.Random | None = None) -> Hint | None:
        """What the information-set view would do at ``observation`` and why (None when it
        values nothing there)."""
        if self.informed is None or not observation.legal:
            return None
        rng = rng or random.Random(f"belote-p2p/hint:{self.seed}:{observation.number}")
        values = self._informed_values(observation, rng)
        found = valuation(values, observation.legal, observation.legal[0], INFORMED_METHOD)
        if found is None:
            return None
        return make_hint(observation, found)


_METHOD_ORDER = {m.value: i for i, m in enumerate(Method)}


# -- hints --------------------------------------------------------------------------------------


class Reason(Enum):
    """Why a choice is the best, in a few words (the app says it in the reader's)."""

    ONLY = "only"
    """Every legal choice is worth the same."""
    CASH_MASTER = "cash-master"
    """A lead no card still out beats: it takes the trick."""
    LEAD = "lead"
    """A lead: the one that does best."""
    LOAD_PARTNER = "load-partner"
    """The partner holds the trick: give it points."""
    TAKE_LAST = "take-last"
    """Last to play, it takes the trick."""
    TAKE = "take"
    """It wins the trick so far."""
    TRUMP = "trump"
    """It trumps the trick."""
    DUCK = "duck"
    """It cannot (or should not) take the trick: it gives the least away."""
    TAKE_CONTRACT = "take-contract"
    """A bid: the contract pays more on average than passing."""
    PASS = "pass"
    """Passing does better on average than any contract."""
    DOUBLE = "double"
    """A coinche (or surcoinche) pays: the contract fails more often than not."""


@dataclass(frozen=True, slots=True)
class Hint:
    """The best choice of a decision in the information-set view, and why."""

    action: Action
    value: float
    """The round score it leads to on average, our side minus the other."""
    runner_up: tuple[Action, float] | None
    """The next best choice and its value (None: no other was valued)."""
    reason: Reason


def make_hint(obs: Observation, found: Valuation) -> Hint:
    """The :class:`Hint` of a decision's valuation."""
    best = found.best
    runner = found.values[1] if len(found.values) > 1 else None
    return Hint(best, found.best_value, runner, _reason(obs, best, found))


def _reason(obs: Observation, best: Action, found: Valuation) -> Reason:
    if all(v == found.best_value for _, v in found.values):
        return Reason.ONLY
    if isinstance(best, Bid):
        if best.kind in (BidKind.COINCHE, BidKind.SURCOINCHE):
            return Reason.DOUBLE
        return Reason.PASS if best == PASS else Reason.TAKE_CONTRACT
    trump = obs.trump
    if not obs.trick:
        return Reason.CASH_MASTER if obs.masters() >> best & 1 else Reason.LEAD
    winner = obs.trick_winner_so_far()
    if obs.partner >= 0 and winner == obs.partner and POINTS[trump][best] > 0:
        return Reason.LOAD_PARTNER
    after = (*obs.trick, best)
    if winning_index(after, trump) == len(obs.trick):
        if len(after) == obs.rules.seats:
            return Reason.TAKE_LAST
        led = obs.trick[0] >> 3
        if 0 <= trump < 4 and best >> 3 == trump != led:
            return Reason.TRUMP
        return Reason.TAKE
    return Reason.DUCK
