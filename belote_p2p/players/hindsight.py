"""Every hand known: what each legal action of a decision was worth, with hindsight.

The hindsight view of the coach (:mod:`.analysis`): given the full-knowledge engine state of
a decision (every card of the deal known, as an audited round knows it), the value of each
legal action of the seat to act, as the round score it leads to for that seat's side
minus the other side's (with three seats, minus the mean of the two others'). How each is
valued is said with it (:class:`Method`):

* **a card, four seats**: the double-dummy solver (:class:`~belote_p2p.game.solver.Solver`)
  on the real hands, every seat playing perfectly with every hand seen. Exact from
  :data:`EXACT_TRICKS` tricks left; earlier the solver searches the next
  :data:`SEARCH_TRICKS` tricks exactly and plays the rest by its greedy double-dummy
  playout (the search would take seconds a decision at eight tricks left): a bound, not the
  exact value.
* **a card, two or three seats** (the solver plays four): exact from
  :data:`FEW_EXACT_TRICKS` tricks left, by a search of every way the rest can go in which
  each player plays for its own net score (max^n; with two players, whose nets are
  opposite, the same value by alpha-beta, :meth:`FewFastState.search`), each position met
  at the start of a trick searched once; earlier, each card followed by the greedy playout
  of the rest on the real hands (every seat seeing its own hand and the cards still out).
* **a bid**: the contract it leads to, the rest of the auction bid by the ``bidder`` (the
  ``rules`` bot by default, the reading of a hand the ``expert`` bot starts from), that
  contract then played out as a card is valued at its first card (the bounded search,
  or the greedy playout with two or three seats); a redeal is worth 0. So a bid is
  judged against the deal as it lay, not against what the others would have bid had they
  seen every hand.

Pure: no I/O, no clock; the ``rng`` given is the bidder's only randomness.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum

from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import PASS, Action, Phase, State
from belote_p2p.game.fastplay import FastState, FewFastState, equivalent_groups
from belote_p2p.game.observation import observe
from belote_p2p.game.solver import Solver

from .hookspecs import Bot

EXACT_TRICKS = 6
"""Tricks left from which a four-seat card is valued exactly (the solver to the end). With
6 left, every legal card costs the compiled solver 10-14 ms a decision at the median and
109-149 ms at the 99th percentile (with 7 left, 47-56 and 509-781 ms), where the bounded
search would miss the best card in 14% of decisions (``benchmarks/hindsight.py``)."""
SEARCH_TRICKS = 3
"""Tricks the solver searches exactly before its greedy playout, earlier in the round. With
7 tricks left, 3 find the exact best card in 83% of decisions and lose 6.0 points a decision
against it, 2 in 76% and 9.3 points (paired, 3.3 [1.0, 5.6] points a decision more); 3
cost the compiled solver 7 ms at the median and 92 ms at the 99th percentile, 2 cost 1.8
and 14 ms."""
FEW_EXACT_TRICKS = {3: 5, 2: 9}
"""Tricks left from which a card is valued exactly with three or two seats."""


class Method(Enum):
    """How the hindsight view valued a decision's actions."""

    EXACT = "exact"
    """Every way the rest of the round can go, searched to its end with every hand seen."""
    SEARCH = "search"
    """Four seats: the next :data:`SEARCH_TRICKS` tricks searched double-dummy, then the
    solver's greedy double-dummy playout of the rest (a bound on the exact value)."""
    GREEDY = "greedy"
    """Two or three seats: each action followed by the greedy playout of the rest."""
    CONTRACT = "contract"
    """A bid: the contract it leads to (the rest of the auction as the bidder bids it),
    played out as :attr:`SEARCH` (four seats) or :attr:`GREEDY` (three)."""


@dataclass(frozen=True, slots=True)
class HindsightValues:
    """The value of each legal action the hindsight view values, and how."""

    values: dict[Action, float]
    method: Method


def side_net(score: tuple[int, ...], seat: int, seats: int) -> float:
    """A round score (one entry per team with four seats, per seat otherwise) as seen from
    ``seat``: its side's points minus the other side's (with three seats, minus the mean
    of the two others')."""
    if seats == 4:
        mine = seat % 2
        return float(score[mine] - score[1 - mine])
    others = [score[s] for s in range(seats) if s != seat]
    return score[seat] - sum(others) / len(others)


class Hindsight:
    """The hindsight valuation (see the module); ``bidder`` bids the rest of an auction."""

    def __init__(
        self,
        bidder: Bot,
        *,
        exact: int = EXACT_TRICKS,
        search: int = SEARCH_TRICKS,
        few_exact: dict[int, int] | None = None,
    ) -> None:
        self.bidder = bidder
        self.exact = exact
        self.search = search
        self.few_exact = dict(FEW_EXACT_TRICKS if few_exact is None else few_exact)
        self._contracts: dict[tuple[object, ...], int] = {}

    def describe(self, method: Method, seats: int) -> str:
        """``method`` in a few English words with its limits (for the record and the JSON
        line; the reports say it in the reader's words)."""
        if method is Method.EXACT:
            tricks = self.exact if seats == 4 else self.few_exact.get(seats, 0)
            return f"exact: every hand seen, searched to the end (from {tricks} tricks left)"
        if method is Method.SEARCH:
            return (
                f"double-dummy search of the next {self.search} tricks, then the solver's "
                "greedy double-dummy playout"
            )
        if method is Method.GREEDY:
            return "the greedy playout of the rest on the real hands"
        return "the contract each bid leads to (the rest of the auction bid by the bidder)"

    def new_round(self) -> None:
        """Forget the contracts valued in the round before (a new deal)."""
        self._contracts.clear()

    def values(self, state: State, rng: random.Random) -> HindsightValues | None:
        """The value of each legal action of ``state``'s seat to act (``state`` knows every
        hand), or None when there is no decision there."""
        if state.to_act < 0 or any(state.unknown):
            return None
        legal = state.legal_actions()
        if not legal:
            return None
        if state.phase is Phase.PLAY:
            return self._cards(state)
        return self._bids(state, legal, rng)

    # -- cards ------------------------------------------------------------------------------

    def _cards(self, state: State) -> HindsightValues:
        seat, seats = state.to_act, state.seats
        f = FastState.from_state(state)
        left = f.length - f.tricks
        if seats == 4:
            exact = left <= self.exact
            moves = Solver(f, 0 if exact else self.search).move_values()
            base = f.points[0] - f.points[1]
            values: dict[Action, float] = {}
            for c in state.legal_actions():
                assert isinstance(c, int)
                values[c] = side_net(f.score_for(base + moves[c]), seat, 4)
            return HindsightValues(values, Method.EXACT if exact else Method.SEARCH)
        assert isinstance(f, FewFastState)
        exact = left <= self.few_exact.get(seats, 0)
        values = {}
        # One round with every hand seen: one table of positions for every card.
        outcomes: dict[int, tuple[float, ...]] = {}
        bounds: dict[int, tuple[float, int]] = {}
        for group in equivalent_groups(f):
            g = f.copy()
            g.push(group[0])
            if exact and seats == 2:
                # Two players: what one wins the other loses, so max^n is the minimax
                # value, which the alpha-beta search finds with far fewer positions.
                value = g.search(seat, -math.inf, math.inf, bounds)
            elif exact:
                value = _every_way(g, seats, outcomes)[seat]
            else:
                g.play_greedy()
                value = side_net(g.score(), seat, seats)
            for card in group:
                values[CARDS[card]] = value
        return HindsightValues(values, Method.EXACT if exact else Method.GREEDY)

    # -- bids -------------------------------------------------------------------------------

    def _bids(self, state: State, legal: tuple[Action, ...], rng: random.Random) -> HindsightValues:
        seat = state.to_act
        values: dict[Action, float] = {}
        seed = rng.getrandbits(64)
        for action in legal:
            # The same bidder's randomness after every choice: the choices differ by
            # themselves, not by the draws.
            after = state.apply(action)
            values[action] = self._after_bid(after, state.number, seat, random.Random(seed))
        return HindsightValues(values, Method.CONTRACT)

    def _after_bid(self, state: State, number: int, seat: int, rng: random.Random) -> float:
        """The value for ``seat`` of round ``number``'s auction from ``state`` on, as the
        bidder bids it."""
        while state.number == number and state.phase not in (Phase.PLAY, Phase.GAME_OVER):
            legal = state.legal_actions()
            try:
                answer: object = self.bidder.decide(observe(state, state.to_act), rng)
            except Exception:  # a bidder that cannot read this auction (a contract it
                answer = None  # does not know) passes, as a bidder answering no legal bid
            chosen = next((a for a in legal if a == answer), None)
            state = state.apply(chosen if chosen is not None else _first_pass(legal))
        if state.number != number or state.phase is not Phase.PLAY:
            return 0.0  # everybody passed: the next dealer deals again
        return self._contract_value(state, seat)

    def _contract_value(self, state: State, seat: int) -> float:
        """The value for ``seat`` of the contract ``state`` plays, from its first card."""
        f = FastState.from_state(state)
        if state.seats != 4:
            f.play_greedy()
            return side_net(f.score(), seat, state.seats)
        # The solver's value depends on the hands and the trump (with a turned card, the
        # taker's completion changes the hands), not on the contract: one search serves
        # every contract of the auction in that trump.
        taker = -1 if state.rules.is_coinche else state.taker
        key = (state.deck, state.dealer, taker, state.trump)
        d = self._contracts.get(key)
        if d is None:
            d = self._contracts[key] = Solver(f, self.search).value()
        return side_net(f.score_for(f.points[0] - f.points[1] + d), seat, 4)


def _first_pass(legal: tuple[Action, ...]) -> Action:
    """What a bidder that answered no legal action does: pass (the first action else)."""
    return PASS if PASS in legal else legal[0]


def _every_way(
    f: FewFastState, seats: int, table: dict[int, tuple[float, ...]] | None = None
) -> tuple[float, ...]:
    """Each seat's net score at the round's end, every seat choosing its card for its own
    net with every hand seen (max^n; ``f`` is left as it was).

    ``table`` keeps the outcome of each position reached at the start of a trick
    (:meth:`FewFastState.position`), so that a position reached by plays in another order
    is searched once: one table for the positions of one round with every hand seen."""
    if f.tricks == f.length:
        score = f.score()
        return tuple(side_net(score, s, seats) for s in range(seats))
    key = -1
    if table is not None and not f.trick:
        key = f.position()
        known = table.get(key)
        if known is not None:
            return known
    seat = f.to_act
    best: tuple[float, ...] | None = None
    for group in equivalent_groups(f):
        f.push(group[0])
        outcome = _every_way(f, seats, table)
        f.pop()
        if best is None or outcome[seat] > best[seat]:
            best = outcome
    assert best is not None
    if table is not None and key >= 0:
        table[key] = best
    return best
