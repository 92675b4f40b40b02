"""The ``expert`` bot: determinized search with inference and a double-dummy solver.

For a card it deals the unseen cards many times, consistently with everything public (how
many cards each seat holds, the voids shown, the cards announcements, belote and the turned
card showed, the announcements a seat did or did not declare, a king or queen of trump
played without belote), and weights each deal by how likely the bids were with those hands
(the ``rules`` bot's reading of a hand, softened), keeping the likeliest. Each deal becomes
a :class:`~belote_p2p.bot.FastState` (the fast path) and every legal card is valued on it:
exactly by the :class:`~belote_p2p.bot.Solver` when few tricks are left (``exact``), else
by a playout of the rest in which every seat plays the ``pimc`` bot's greedy policy, seeing
its own hand and the cards still out but not who holds them (``tricks=0``, the default), or
by the solver's search of the next ``tricks`` tricks and its double-dummy playout of the
rest. Each value is turned into the round score it leads to (contract made or not, capot,
litige...), and the card with the best weighted mean score is played. The greedy playout
on the fast path costs a fraction of a search, so the same time holds more deals, and it
does not play the rest of the round as if every hand were seen (the double-dummy search
does, the "strategy fusion" of perfect-information sampling).

Bidding starts from the ``rules`` bot's choice and overrules it when the samples clearly
disagree (a contract is valued by the greedy playout, or with ``bid_tricks`` by that many
tricks searched): in classic, taking (or naming a suit) is valued on deals completed as
they would be, against passing valued by the rest of the bidding as the ``rules`` bot
would bid it; in coinche, every contract of every suit is valued over deals drawn to fit
the others' bids, and a bid made often enough that beats the ``rules`` bot's choice and
passing by a margin is bid instead.

Budget: ``samples`` deals per decision (reproducible given the ``rng``), or ``seconds``
of search per card decision (then as many deals as fit; not reproducible).

The fast state and the solver are four-seat machinery. With two or three players (RULES.md
§12-13) the bot plays as the ``pimc`` bot does, on the checked engine, with ``samples``
deals per card decision and ``bid_samples`` per bidding decision.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from belote_p2p.bot import (
    ABOVE,
    BIDS,
    CAPOT_POINTS,
    CARDS,
    CHOOSE,
    FULL_DECK,
    PASS,
    POINTS,
    STRENGTH,
    TAKE,
    TRUMP_MASK,
    Action,
    Bid,
    BidKind,
    Card,
    FastState,
    Observation,
    Phase,
    Solver,
    deal_owners,
    equivalent_groups,
    find_announcements,
    round_score,
)

from .pimc_bot import PimcBot
from .rules_bot import RulesBot, announcement_points, hand_strength

KING, QUEEN = 6, 5
_VALUES = (80, 90, 100, 110, 120, 130, 140, 150, 160, CAPOT_POINTS)
_ALL_VALUES = (*_VALUES, 500)
_REDRAWS = 20
_TIMED_BATCH = 8
"""Deals drawn at a time when the budget is ``seconds``."""


class ExpertOptionError(TypeError, ValueError):
    """An option the ``expert`` bot refuses (a ``TypeError`` so that the bot loader reports
    it like an unknown option, a ``ValueError`` for everybody else)."""


def _cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def _sigmoid(x: float) -> float:
    if x < -30:
        return 1e-13
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def greedy_finish(f: FastState) -> None:
    """Play the rest of ``f``'s round for good, every seat by the ``pimc`` bot's greedy
    policy: it sees its own hand and the cards still out, not who holds them (so that
    the playout does not play double-dummy), cashes its masters, loads a trick its
    partner surely takes, wins cheaply, and otherwise gives little away."""
    mode = f.mode
    st = STRENGTH[mode]
    pts = POINTS[mode]
    above = ABOVE[mode]
    tm = TRUMP_MASK[mode] if mode < 4 else 0
    hands = f.hands
    while f.tricks < 8:
        m = f.legal_mask()
        if not m & (m - 1):
            f.play(m.bit_length() - 1)
            continue
        seat = f.to_act
        others = ~(f.played | hands[seat]) & FULL_DECK
        legal = _cards(m)
        trick = f.trick
        if not trick:
            masters = [c for c in legal if not above[c] & others]
            if masters:
                c = max(masters, key=lambda c: (pts[c], st[c]))
            else:
                c = min(legal, key=lambda c: (pts[c], st[c]))
            f.play(c)
            continue
        top = trick[f.best]
        last = len(trick) == 3
        if (f.leader + f.best - seat) & 1 == 0:  # the partner wins the trick so far
            if last or not above[top] & others:
                plain = [c for c in legal if not tm >> c & 1] or legal
                c = max(plain, key=lambda c: (pts[c], -st[c]))
            else:
                c = min(legal, key=lambda c: (pts[c], st[c]))
            f.play(c)
            continue
        stop = st[top]
        winners = [c for c in legal if (c >> 3 == top >> 3 and st[c] > stop) or (st[c] >= 8 > stop)]
        if not winners:
            c = min(legal, key=lambda c: (pts[c], st[c]))
        elif last:
            c = max(winners, key=lambda c: (pts[c] - (st[c] >= 8) * 20, -st[c]))
        else:
            masters = [c for c in winners if not above[c] & others]
            if masters:
                c = min(masters, key=lambda c: (st[c] >= 8, st[c]))
            else:
                c = min(winners, key=st.__getitem__)
        f.play(c)


def search_value(f: FastState, tricks: int) -> int:
    """Team 0's card points minus team 1's over the rest of ``f``'s round: the solver's,
    searching ``tricks`` tricks before its double-dummy playout, or with ``tricks`` 0 the
    :func:`greedy_finish` playout's (``f`` is left as it was)."""
    if tricks:
        return Solver(f, tricks).value()
    g = f.copy()
    greedy_finish(g)
    cp = g.card_points()
    p = f.points
    return cp[0] - cp[1] - (p[0] - p[1])


def rollout_values(f: FastState) -> dict[int, int]:
    """Team 0's card points minus team 1's over the rest of the round (as the solver's
    values, capot 250 and générale 500) after each legal card, the round then played out
    by :func:`greedy_finish`; equivalent cards are played out once."""
    out: dict[int, int] = {}
    p = f.points
    base = p[0] - p[1]
    for group in equivalent_groups(f):
        g = f.copy()
        g.play(group[0])
        greedy_finish(g)
        cp = g.card_points()
        v = cp[0] - cp[1] - base
        for c in group:
            out[c] = v
    return out


def _check(name: str, value: object, kind: type, low: float, high: float) -> None:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ExpertOptionError(
            f"expert option {name} must be {'an integer' if kind is int else 'a number'}, "
            f"not {value!r}"
        )
    assert isinstance(value, int | float)
    if not low <= value <= high:
        raise ExpertOptionError(f"expert option {name}={value} is out of range [{low}, {high}]")


class ExpertBot:
    """The ``expert`` bot (see the module). Options:

    ``samples`` deals per card decision; ``seconds`` a time budget instead (0: use
    ``samples``); ``exact`` tricks left from which every deal is solved exactly; ``tricks``
    tricks searched before a greedy playout, earlier in the round; ``bid_samples`` deals per
    bidding decision and ``bid_tricks`` their search depth; ``take_margin`` and
    ``bid_margin`` by how much the samples must disagree with the ``rules`` bot's bid to
    overrule it (classic, coinche); ``oversample`` deals drawn per
    deal kept (the likeliest by the bids); ``inference`` how much the bids weigh (0: not
    at all); ``bid_success`` and ``capot_success`` how often a coinche contract must be
    made in the samples to be bid."""

    def __init__(
        self,
        samples: int = 32,
        seconds: float = 0.0,
        exact: int = 4,
        tricks: int = 0,
        bid_samples: int = 48,
        bid_tricks: int = 0,
        take_margin: float = 40.0,
        bid_margin: float = 40.0,
        bid_success: float = 0.6,
        capot_success: float = 0.9,
        oversample: int = 3,
        inference: float = 1.0,
    ) -> None:
        _check("samples", samples, int, 1, 10_000)
        _check("seconds", seconds, float, 0.0, 3600.0)
        _check("exact", exact, int, 0, 8)
        _check("tricks", tricks, int, 0, 8)
        _check("bid_samples", bid_samples, int, 0, 10_000)
        _check("bid_tricks", bid_tricks, int, 0, 8)
        _check("take_margin", take_margin, float, -500.0, 500.0)
        _check("bid_margin", bid_margin, float, -500.0, 500.0)
        _check("oversample", oversample, int, 1, 100)
        _check("inference", inference, float, 0.0, 10.0)
        _check("bid_success", bid_success, float, 0.0, 1.0)
        _check("capot_success", capot_success, float, 0.0, 1.0)
        self.samples = samples
        self.seconds = float(seconds)
        self.exact = exact
        self.tricks = tricks
        self.bid_samples = bid_samples
        self.bid_tricks = bid_tricks
        self.take_margin = float(take_margin)
        self.bid_margin = float(bid_margin)
        self.oversample = oversample
        self.inference = float(inference)
        self.bid_success = float(bid_success)
        self.capot_success = float(capot_success)
        self.rules = RulesBot()
        self.few = PimcBot(iterations=samples, seconds=seconds, bid_samples=bid_samples)
        """The player with two or three seats (see the module)."""

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        obs = observation
        if len(obs.legal) == 1:
            return obs.legal[0]
        if obs.rules.seats != 4:
            return self.few.decide(obs, rng)
        if obs.phase is Phase.PLAY:
            return self.play(obs, rng)
        if self.bid_samples == 0:
            return self.rules.decide(obs, rng)
        if obs.phase is Phase.AUCTION:
            return self.auction(obs, rng)
        return self.take_or_choose(obs, rng)

    def _deadline(self) -> float:
        return time.perf_counter() + self.seconds if self.seconds > 0 else math.inf

    # -- inference from the bids ------------------------------------------------------------

    def bid_weight(self, obs: Observation, initial: Sequence[int]) -> float:
        """How likely the others' bids were with these hands (``initial[s]``: what seat
        ``s`` held when it bid: 5 cards in classic, 8 in coinche), relative to any other
        deal. The ``rules`` bot's reading of a hand, softened by a logistic of the margin."""
        if not self.inference:
            return 1.0
        k = self.inference
        w = 1.0
        if obs.rules.is_coinche:
            holder, trump = -1, -1
            for seat, bid in obs.bids:
                if seat != obs.seat:
                    hand = initial[seat]
                    if bid.kind is BidKind.BID and 0 <= bid.trump < 4:
                        if holder < 0 or (holder - seat) % 2 == 1 or bid.trump != trump:
                            est = self.rules.estimate(hand, bid.trump)
                            w *= _sigmoid(k * (est + 10 - bid.value) / 12)
                    elif bid.kind is BidKind.PASS and holder < 0:
                        best = max(self.rules.estimate(hand, t) for t in range(4))
                        w *= _sigmoid(k * (90 - best) / 12)
                if bid.kind is BidKind.BID:
                    holder, trump = seat, bid.trump
            return w
        turned = obs.turned
        if turned is None:
            return w
        ts = turned >> 3
        tbit = 1 << turned
        for i, (seat, bid) in enumerate(obs.bids):
            if seat == obs.seat:
                continue
            hand = initial[seat] | tbit
            if i < 4:
                value = RulesBot.classic_value(hand, ts)
                if bid.kind is BidKind.PASS:
                    w *= _sigmoid(k * (self.rules.take_threshold + 4 - value) / 8)
                else:
                    w *= _sigmoid(k * (value - self.rules.take_threshold + 4) / 8)
            else:
                values = [RulesBot.classic_value(hand, s) for s in range(4) if s != ts]
                if bid.kind is BidKind.PASS:
                    w *= _sigmoid(k * (self.rules.choose_threshold + 4 - max(values)) / 8)
                else:
                    value = RulesBot.classic_value(hand, bid.trump)
                    w *= _sigmoid(k * (value - self.rules.choose_threshold + 4) / 8)
        return w

    # -- card play --------------------------------------------------------------------------

    def play(self, obs: Observation, rng: random.Random) -> Action:
        deadline = self._deadline()  # the time budget counts the sampling too
        legal = [c for c in obs.legal if isinstance(c, int)]
        team = obs.team
        score = dict.fromkeys(legal, 0.0)
        points = dict.fromkeys(legal, 0.0)
        left = 8 - len(obs.tricks)
        exact = left <= self.exact
        tricks = 0 if exact else self.tricks
        sign = 1 if team == 0 else -1
        solved = 0
        # With a time budget, deals come in small batches until the time is up.
        batch = self.samples if self.seconds <= 0 else _TIMED_BATCH
        while solved == 0 or self.seconds > 0:
            deals = self.play_deals(obs, rng, batch)
            if not deals:
                break
            for hands, weight in deals:
                f = FastState.from_observation(obs, hands)
                if solved == 0 and len(equivalent_groups(f)) == 1:
                    return self.rules.play(obs)  # every legal card does the same
                base = f.points[0] - f.points[1]
                if exact or tricks:
                    values = Solver(f, tricks).move_values()
                else:
                    values = rollout_values(f)
                for c in legal:
                    d = base + values[c]
                    s = f.score_for(d)
                    score[c] += weight * (s[team] - s[1 - team])
                    points[c] += weight * sign * d
                solved += 1
                if time.perf_counter() > deadline:
                    break
            if time.perf_counter() > deadline:
                break
        if solved == 0:
            return self.rules.play(obs)
        preferred = self.rules.play(obs)
        return max(legal, key=lambda c: (score[c] + 0.01 * points[c], c == preferred, -c))

    def play_deals(
        self, obs: Observation, rng: random.Random, count: int
    ) -> list[tuple[list[int], float]]:
        """Deals of the unseen cards consistent with ``obs`` (each seat's unplayed cards),
        with their weights: ``oversample`` times ``count`` drawn, the ``count`` kept drawn
        in proportion to their weights (duplicates merged)."""
        sampler = _PlaySampler(obs)
        if sampler.dead:
            return []
        drawn: list[tuple[list[int], float]] = []
        weigh = bool(self.inference and obs.bids)
        want = count * (self.oversample if weigh else 1)
        for _ in range(want):
            for _ in range(_REDRAWS):
                hands = sampler.draw(rng)
                if hands is not None:
                    break
            else:
                continue
            w = self.bid_weight(obs, sampler.initial_hands(hands, rng)) if weigh else 1.0
            drawn.append((hands, w))
        if not weigh or len(drawn) <= count:
            return drawn
        return _resample(drawn, count, rng)

    # -- classic: take or name a suit --------------------------------------------------------

    def take_or_choose(self, obs: Observation, rng: random.Random) -> Action:
        """The ``rules`` bot's choice unless the sampled deals clearly disagree.

        Over the same deals (drawn to fit the passes before this turn), taking (or naming
        a suit) is valued by the search on the deal completed as it would be, and passing
        by the rest of the bidding as the ``rules`` bot would bid every seat and the search
        on the contract that comes of it (a redeal: 0). The samples overrule the ``rules``
        bot when they prefer the other choice by ``take_margin``."""
        suggested = self.rules.decide(obs, rng)
        assert obs.turned is not None
        ts = obs.turned >> 3
        if obs.phase is Phase.TAKE_FIRST:
            options: list[tuple[Action, int]] = [(TAKE, ts)]
        else:
            options = [(CHOOSE[s], s) for s in range(4) if CHOOSE[s] in obs.legal]
        sums = [0.0] * len(options)
        pass_sum = 0.0
        total = 0.0
        decks = self._classic_decks(obs, rng)
        if not decks:
            return suggested
        for deck, weight in decks:
            hands = _classic_hands(obs, deck, obs.seat)
            for i, (_, trump) in enumerate(options):
                sums[i] += weight * self._contract_net(obs, hands, trump, obs.seat, 0)
            taker, trump = self._classic_rollout(obs, deck)
            if taker >= 0:
                pass_sum += weight * self._contract_net(
                    obs, _classic_hands(obs, deck, taker), trump, taker, 0
                )
            total += weight
        values = [x / total for x in sums]
        pass_value = pass_sum / total
        best = max(range(len(options)), key=lambda i: values[i])
        if suggested == PASS:
            if values[best] > pass_value + self.take_margin:
                return options[best][0]
            return PASS
        chosen = next((i for i, (a, _) in enumerate(options) if a == suggested), best)
        if values[chosen] < pass_value - self.take_margin:
            return PASS
        return suggested

    def _classic_rollout(self, obs: Observation, deck: list[int]) -> tuple[int, int]:
        """Who takes, and in what trump, if this seat passes and every seat then bids as
        the ``rules`` bot would on this deck; (-1, -1) for a redeal."""
        assert obs.turned is not None
        owners = deal_owners(obs.rules, obs.dealer)
        initial = [0, 0, 0, 0]
        for pos in range(20):
            initial[owners[pos]] |= 1 << deck[pos]
        tbit = 1 << obs.turned
        ts = obs.turned >> 3
        first = (obs.dealer + 1) % 4
        turn = len(obs.bids) + 1  # the turns already taken, this pass included
        rules = self.rules
        while turn < 8:
            seat = (first + turn) % 4
            hand = initial[seat] | tbit
            if turn < 4:
                if RulesBot.classic_value(hand, ts) >= rules.take_threshold:
                    return seat, ts
            else:
                best, value = -1, -1
                for suit in range(4):
                    if suit != ts:
                        v = RulesBot.classic_value(hand, suit)
                        if v > value:
                            best, value = suit, v
                if value >= rules.choose_threshold:
                    return seat, best
            turn += 1
        return -1, -1

    def _classic_decks(self, obs: Observation, rng: random.Random) -> list[tuple[list[int], float]]:
        owners = deal_owners(obs.rules, obs.dealer)
        assert obs.turned is not None
        rest = _cards(FULL_DECK & ~obs.hand_mask & ~(1 << obs.turned))
        mine = list(obs.hand)
        drawn: list[tuple[list[int], float]] = []
        count = self.bid_samples
        spoken = any(seat != obs.seat for seat, _ in obs.bids)
        want = count * (self.oversample if self.inference and spoken else 1)
        for _ in range(want):
            rng.shuffle(rest)
            pool = list(rest)
            mine_left = list(mine)
            deck: list[int] = []
            for owner in owners:
                if owner == obs.seat:
                    deck.append(mine_left.pop())
                elif owner == -1:
                    deck.append(obs.turned)
                else:
                    deck.append(pool.pop())
            w = 1.0
            if self.inference and spoken:
                initial = [0, 0, 0, 0]
                for pos in range(20):
                    initial[owners[pos]] |= 1 << deck[pos]
                w = self.bid_weight(obs, initial)
            drawn.append((deck, w))
        if len(drawn) <= count or not (self.inference and spoken):
            return [(d, 1.0) for d, _ in drawn]
        return _resample(drawn, count, rng)

    def _contract_net(
        self, obs: Observation, hands: list[int], trump: int, taker: int, contract: int
    ) -> float:
        """Our round net score with these hands if ``taker`` plays ``contract`` in ``trump``."""
        team = obs.team
        f = FastState.new(obs.rules, hands, trump, taker, (obs.dealer + 1) % 4, contract, 1)
        d = search_value(f, self.bid_tricks)
        s = f.score_for(d)
        return s[team] - s[1 - team]

    # -- coinche: the auction --------------------------------------------------------------

    def auction(self, obs: Observation, rng: random.Random) -> Action:
        """The ``rules`` bot's bid unless the sampled deals clearly prefer another.

        Every deal (drawn to fit the others' bids) is searched once per trump suit: the
        card-point difference it gives scores every contract of that suit for either side.
        A bid is worth its mean net score over the deals; passing is worth the contract as
        it stands (0 without one). The samples overrule the ``rules`` bot when a bid made
        often enough beats both its choice and passing by ``bid_margin``, or when its bid
        is worse than passing by as much."""
        team = obs.team
        suggested = self.rules.decide(obs, rng)
        if obs.multiplier != 1 or not isinstance(suggested, Bid):
            return suggested
        if suggested.kind is not BidKind.PASS and suggested.kind is not BidKind.BID:
            return suggested  # a coinche: the rules bot's defensive reading
        if obs.contract >= CAPOT_POINTS or (obs.taker >= 0 and not 0 <= obs.trump < 4):
            return suggested
        candidates = [
            (a.value, a.trump)
            for a in obs.legal
            if isinstance(a, Bid)
            and a.kind is BidKind.BID
            and 0 <= a.trump < 4
            and a.value in _VALUES
        ]
        if not candidates:
            return suggested
        deals = self._coinche_deals(obs, rng)
        if not deals:
            return suggested
        leader = (obs.dealer + 1) % 4
        outcomes: list[tuple[float, list[tuple[int, tuple[int, int], tuple[int, int]]]]] = []
        for hands, weight in deals:
            per_trump = []
            for trump in range(4):
                f = FastState.new(obs.rules, hands, trump, obs.seat, leader)
                d = search_value(f, self.bid_tricks)
                per_trump.append((d, f.announcements, f.belote))
            outcomes.append((weight, per_trump))
        total = sum(w for w, _ in outcomes)

        def value_of(trump: int, taker: int, value: int) -> tuple[float, float]:
            """Our mean net score and how often the takers make it."""
            net = made = 0.0
            for w, per in outcomes:
                d, ann, bel = per[trump]
                s0, s1 = _score_d(obs, d, ann, bel, taker, value, 1)
                ours = (s0 - s1) if team == 0 else (s1 - s0)
                net += w * ours
                if (ours > 0) == (taker % 2 == team):
                    made += w
            return net / total, made / total

        if obs.taker < 0:
            pass_value = 0.0
        else:
            pass_value = value_of(obs.trump, obs.taker, obs.contract)[0]
        best: tuple[int, int] | None = None
        best_value = -math.inf
        for value, trump in candidates:
            mean, success = value_of(trump, obs.seat, value)
            needed = self.capot_success if value == CAPOT_POINTS else self.bid_success
            if success >= needed and mean > best_value:
                best, best_value = (value, trump), mean
        if suggested.kind is BidKind.BID and (suggested.value, suggested.trump) in candidates:
            rules_value = value_of(suggested.trump, obs.seat, suggested.value)[0]
        else:
            rules_value = pass_value
        margin = self.bid_margin
        if best is not None and best_value > max(rules_value, pass_value) + margin:
            return BIDS[best]
        if suggested.kind is BidKind.BID and rules_value < pass_value - margin:
            return PASS
        return suggested

    def _coinche_deals(self, obs: Observation, rng: random.Random) -> list[tuple[list[int], float]]:
        rest = _cards(FULL_DECK & ~obs.hand_mask)
        count = self.bid_samples
        spoken = any(seat != obs.seat for seat, _ in obs.bids)
        want = count * (self.oversample if self.inference and spoken else 1)
        drawn: list[tuple[list[int], float]] = []
        for _ in range(want):
            rng.shuffle(rest)
            hands = [0, 0, 0, 0]
            hands[obs.seat] = obs.hand_mask
            i = 0
            for s in range(4):
                if s == obs.seat:
                    continue
                for c in rest[i : i + 8]:
                    hands[s] |= 1 << c
                i += 8
            w = self.bid_weight(obs, hands) if self.inference and spoken else 1.0
            drawn.append((hands, w))
        if len(drawn) <= count or not (self.inference and spoken):
            return [(h, 1.0) for h, _ in drawn]
        return _resample(drawn, count, rng)


def _score_d(
    obs: Observation,
    d: int,
    ann: tuple[int, int],
    bel: tuple[int, int],
    taker: int,
    contract: int,
    multiplier: int,
) -> tuple[int, int]:
    """The round score of a deal in a suit contract whose card-point difference is ``d``."""
    if d in (250, 500):
        cp = (d, 0)
    elif -d in (250, 500):
        cp = (0, -d)
    else:
        half = (162 + d) // 2
        cp = (half, 162 - half)
    generale = taker if abs(d) == 500 else -1
    s0, s1, _ = round_score(
        obs.rules.is_coinche, taker, contract, multiplier, cp, ann, bel, obs.pending, generale
    )
    return s0, s1


def _classic_hands(obs: Observation, deck: list[int], taker: int) -> list[int]:
    """The 8-card hands of a classic deck once ``taker`` takes."""
    owners = deal_owners(obs.rules, obs.dealer, taker)
    hands = [0, 0, 0, 0]
    for pos, c in enumerate(deck):
        o = owners[pos]
        hands[taker if o == -1 else o] |= 1 << c
    return hands


def _resample(
    drawn: list[tuple[list[int], float]], count: int, rng: random.Random
) -> list[tuple[list[int], float]]:
    """``count`` of the drawn items picked in proportion to their weights (systematic
    resampling), duplicates merged into one item weighing as many."""
    total = sum(w for _, w in drawn)
    if total <= 0:
        return [(h, 1.0) for h, _ in drawn[:count]]
    step = total / count
    u = rng.random() * step
    out: list[tuple[list[int], float]] = []
    acc = 0.0
    i = -1
    last = -1
    for k in range(count):
        target = u + k * step
        while acc <= target and i + 1 < len(drawn):
            i += 1
            acc += drawn[i][1]
        if i == last:
            h, w = out[-1]
            out[-1] = (h, w + 1.0)
        else:
            out.append((drawn[i][0], 1.0))
            last = i
    return out


class _PlaySampler:
    """Deals of the unseen cards to the other seats, consistent with an observation."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        me = obs.seat
        played = [0, 0, 0, 0]
        for trick in obs.tricks:
            for i, c in enumerate(trick.cards):
                played[(trick.leader + i) % 4] |= 1 << c
        for i, c in enumerate(obs.trick):
            played[(obs.leader + i) % 4] |= 1 << c
        self.played = played
        trump = obs.trump
        belote_cards = {c for _, c in obs.belote}
        seen = 0
        order = [c for t in obs.tricks for c in t.cards] + list(obs.trick)
        excluded = [0, 0, 0, 0]
        # A king or queen of trump played first, without belote: its partner card is not
        # (and was not) in that hand.
        if 0 <= trump < 4 or trump == 5:
            for pos, c in enumerate(order):
                rank = c & 7
                if rank not in (KING, QUEEN) or (trump != 5 and c >> 3 != trump):
                    continue
                other = c ^ (KING ^ QUEEN)
                if not seen >> other & 1 and c not in belote_cards:
                    seat = self._seat_of(pos)
                    excluded[seat] |= 1 << other
                seen |= 1 << c
        del seen
        pool = obs.unseen()
        hands = [0, 0, 0, 0]
        hands[me] = obs.hand_mask
        room = [0, 0, 0, 0]
        allowed = [0, 0, 0, 0]
        for s in range(4):
            if s != me:
                shown = obs.shown[s] & pool
                hands[s] = shown
                pool &= ~shown
        for s in range(4):
            if s != me:
                room[s] = 8 - played[s].bit_count() - hands[s].bit_count()
                allowed[s] = obs.possible(s) & ~excluded[s] & pool
        self.base = hands
        self.room = room
        self.allowed = allowed
        self.pool = pool
        self.dead = sum(room) != pool.bit_count() or min(room) < 0
        # How many seats may hold each card: the most constrained are placed first.
        self.options = {c: sum(1 for s in range(4) if allowed[s] >> c & 1) for c in _cards(pool)}
        self.cards = sorted(self.options, key=self.options.__getitem__)
        self.check_announcements = obs.rules.announcements and any(
            d is not None for s, d in enumerate(obs.declared) if s != me
        )

    def _seat_of(self, pos: int) -> int:
        obs = self.obs
        t, i = divmod(pos, 4)
        leader = obs.tricks[t].leader if t < len(obs.tricks) else obs.leader
        return (leader + i) % 4

    def draw(self, rng: random.Random) -> list[int] | None:
        """One deal (every seat's unplayed cards), or None at a dead end."""
        hands = list(self.base)
        room = list(self.room)
        allowed = self.allowed
        rand = rng.random
        # Shuffle within equally constrained cards, then place each on a seat chosen in
        # proportion to the room it has left.
        cards = list(self.cards)
        rng.shuffle(cards)
        cards.sort(key=self.options.__getitem__)
        for c in cards:
            total = 0
            for s in range(4):
                if room[s] and allowed[s] >> c & 1:
                    total += room[s]
            if not total:
                return None
            pick = rand() * total
            for s in range(4):
                if room[s] and allowed[s] >> c & 1:
                    pick -= room[s]
                    if pick < 0:
                        break
            hands[s] |= 1 << c
            room[s] -= 1
        if self.check_announcements and not self._announcements_fit(hands):
            return None
        return hands

    def _announcements_fit(self, hands: list[int]) -> bool:
        obs = self.obs
        for s in range(4):
            declared = obs.declared[s]
            if s == obs.seat or declared is None:
                continue
            original = hands[s] | self.played[s]
            if find_announcements(original, obs.trump) != declared:
                return False
        return True

    def initial_hands(self, hands: list[int], rng: random.Random) -> list[int]:
        """What each seat held when it bid: in coinche its 8 cards; in classic 5 of them
        (the taker's turned card and 2 completion cards aside), picked at random."""
        obs = self.obs
        full = [hands[s] | self.played[s] for s in range(4)]
        if obs.rules.is_coinche:
            return full
        out = [0, 0, 0, 0]
        for s in range(4):
            cards = _cards(full[s] & ~(1 << obs.turned if obs.turned is not None else 0))
            out[s] = sum(1 << c for c in rng.sample(cards, min(5, len(cards))))
        return out


__all__ = ["ExpertBot", "ExpertOptionError", "announcement_points", "hand_strength"]
