"""The ``expert`` bot: determinized search over worlds weighted by what the table showed, at
four, three and two seats.

For a card it draws many *worlds* (deals of the cards it cannot see) consistent with every
public fact and weighted by how likely the others' bids and plays were in each (see
:mod:`.inference`: the ``rules`` bot's reading of a hand for the bids, the playout policy
for the plays). Each world becomes a fast state (:class:`~belote_p2p.bot.FastState`,
:class:`~belote_p2p.bot.FewFastState` with two or three seats) and every legal card is
valued on it: exactly when few tricks are left (``exact``: the double-dummy
:class:`~belote_p2p.bot.Solver` with four seats, a small search of its own with fewer), else
by a playout of the rest in which every seat plays one policy, seeing its own hand and the
cards still out but not who holds them (``playout``: the careful one,
:meth:`~belote_p2p.bot.FastState.careful_card`, which keeps its high cards and trumps for
later tricks, or the ``pimc`` bot's greedy one; or with ``tricks``, four seats, the
solver's search of that many tricks before its playout). Each value is the round score it
leads to (contract made or not, capot, litige...) for this seat's side minus the other
side's (with three seats, minus the mean of the two others'), and the card with the best
weighted mean is played. A playout costs a fraction of a search, so the same time holds
many more worlds, and it does not play the rest of the round as if every hand were seen (the
"strategy fusion" of perfect-information sampling).

Bidding starts from the ``rules`` bot's choice and overrules it when the worlds clearly
disagree (a contract valued by the playout, or with ``bid_tricks`` by that many
tricks searched). In classic and three-handed, taking (or naming a suit) is valued on decks
completed as they would be, against passing valued by the rest of the bidding as the
``rules`` bot would bid it. In coinche, every contract of every suit is valued over deals
drawn to fit the others' bids; a bid made often enough that beats the ``rules`` bot's
choice and passing by a margin is bid instead; a coinche (or a surcoinche) is made when
the worlds, the contract played out in each, say it pays by ``coinche_margin``.

:meth:`ExpertBot.action_values` gives the value of every legal action it weighed at a
decision (for analysis: what each choice is worth to the bot), :meth:`ExpertBot.decide`
the action it plays.

Budget: ``samples`` worlds per card decision and ``bid_samples`` per bidding decision
(reproducible given the ``rng``), or ``seconds`` of search per card decision (then as many
worlds as fit; not reproducible).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from belote_p2p.bot import (
    BIDS,
    CAPOT_POINTS,
    CHOOSE,
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    Action,
    Bid,
    BidKind,
    Card,
    FastState,
    FewFastState,
    Observation,
    Phase,
    Solver,
    deal_owners,
    equivalent_groups,
    round_score,
)

from .inference import (
    BidModel,
    WorldSampler,
    resample,
    sample_worlds,
)
from .pimc_bot import net
from .rules_bot import RulesBot, announcement_points, hand_strength

_VALUES = (80, 90, 100, 110, 120, 130, 140, 150, 160, CAPOT_POINTS)
_TIMED_BATCH = 8
"""Worlds drawn at a time when the budget is ``seconds``."""
EXACT = {4: 4, 3: 5, 2: 7}
"""Tricks left from which every world is solved exactly, by seat count (``exact=-1``; of
16 tricks of two in two-handed). With fewer seats the search remembers the positions it
met (:meth:`FewFastState.search`), and solving from further out measurably pays within
the decision time bounds: 5 against 4 at three seats, 7 against 6 at two
(docs/strength.md)."""
TAKE_MARGIN = {4: 40.0, 3: 20.0}
"""By how much the worlds must disagree with the ``rules`` bot's take or pass to overrule
it, by seat count (``take_margin=-1``; two-handed has no bidding). At three seats, where
the ``rules`` bot's reading of a hand is the least sure, a smaller margin measurably pays
(docs/strength.md)."""
SAMPLES = {4: 64, 3: 64, 2: 32}
"""Worlds a card decision, by seat count (``samples=-1``). At three seats, where the two
others' hands are the most uncertain, and at four, 64 measurably pay over 32 within the
decision time bounds (docs/strength.md); at two seats a world hides less."""
BID_SAMPLES = 48
"""Deals a bidding decision in classic and three-handed belote (``bid_samples=-1``)."""
COINCHE_BID_SAMPLES = 96
"""Deals an auction decision in coinche (``bid_samples=-1``): the contract chosen is the
best of many noisy estimates, and with 48 deals the noise alone made it overbid
(docs/strength.md)."""


class ExpertOptionError(TypeError, ValueError):
    """An option the ``expert`` bot refuses (a ``TypeError`` so that the bot loader reports
    it like an unknown option, a ``ValueError`` for everybody else)."""


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def play_out(f: FastState, careful: bool = False) -> None:
    """Play the rest of ``f``'s round for good, every seat by the ``pimc`` bot's greedy
    policy (:meth:`FastState.greedy_card`: it sees its own hand and the cards still out,
    not who holds them, so that the playout does not play double-dummy), or with
    ``careful`` by the careful policy (:meth:`FastState.careful_card`, which sees as
    little and keeps its high cards and trumps for later tricks)."""
    if careful:
        f.play_careful()
    else:
        f.play_greedy()


def search_value(f: FastState, tricks: int, careful: bool = False) -> int:
    """Team 0's card points minus team 1's over the rest of ``f``'s round (four seats): the
    solver's, searching ``tricks`` tricks before its double-dummy playout, or with ``tricks``
    0 the :func:`play_out` playout's (``careful`` as there; ``f`` is left as it was)."""
    if tricks:
        return Solver(f, tricks).value()
    g = f.copy()
    play_out(g, careful)
    cp = g.card_points()
    p = f.points
    return cp[0] - cp[1] - (p[0] - p[1])


def rollout_values(f: FastState, careful: bool = False) -> dict[int, int]:
    """Team 0's card points minus team 1's over the rest of the round (as the solver's
    values, capot 250 and générale 500) after each legal card, the round then played out
    by :func:`play_out` (``careful`` as there); equivalent cards are played out once (four
    seats)."""
    out: dict[int, int] = {}
    p = f.points
    base = p[0] - p[1]
    for group in equivalent_groups(f):
        g = f.copy()
        g.play(group[0])
        play_out(g, careful)
        cp = g.card_points()
        v = cp[0] - cp[1] - base
        for c in group:
            out[c] = v
    return out


def few_values(
    f: FewFastState, me: int, exact: bool, careful: bool = False
) -> dict[int, tuple[float, float]]:
    """Two or three seats: for each legal card, this seat's net round score (its score minus
    the other's, or the mean of the two others') and its card points minus theirs, after
    the rest of the round played out by :func:`play_out` (``careful`` as there), or with
    ``exact`` searched to its end as if every other seat played against it
    (:func:`few_search`)."""
    out: dict[int, tuple[float, float]] = {}
    table: dict[int, tuple[float, int]] = {}
    for group in equivalent_groups(f):
        g = f.copy()
        g.push(group[0])
        if exact:
            v = few_search(g, me, -math.inf, math.inf, table)
            pts = 0.0
        else:
            play_out(g, careful)
            v = net(g.score(), me)
            pts = net(g.card_points(), me)
        for c in group:
            out[c] = (v, pts)
    return out


def few_search(
    f: FewFastState,
    me: int,
    alpha: float,
    beta: float,
    table: dict[int, tuple[float, int]] | None = None,
) -> float:
    """The net round score of seat ``me`` (as :func:`few_values`) with every hand seen,
    ``me`` playing for the best and the others against it (alpha-beta,
    :meth:`FewFastState.search`, with its ``table``; ``f`` is left as it was)."""
    return f.search(me, alpha, beta, table)


def _close(first: list[float], second: list[float], weights: list[float], z: float) -> bool:
    """Whether two cards' values over the same worlds (paired: each world values both) are
    too close to tell apart: the weighted mean of their difference is under ``z`` standard
    errors."""
    total = sum(weights)
    mean = sum(w * (x - y) for w, x, y in zip(weights, first, second, strict=True)) / total
    var = sum(w * (x - y - mean) ** 2 for w, x, y in zip(weights, first, second, strict=True))
    effective = total * total / sum(w * w for w in weights)
    return mean * mean * effective < z * z * var / total


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

    ``samples`` worlds per card decision (-1: the default of the seat count,
    :data:`SAMPLES`); ``seconds`` a time budget instead (0: use ``samples``); ``exact``
    tricks left from which every world is solved exactly (-1: the default of the seat count,
    :data:`EXACT`); ``tricks`` tricks searched before a greedy playout, earlier in the round
    (four seats); ``bid_samples`` deals per bidding decision (-1: :data:`BID_SAMPLES`, in
    coinche :data:`COINCHE_BID_SAMPLES`; 0: the ``rules`` bot's bids) and ``bid_tricks``
    their search depth; ``take_margin`` and ``bid_margin`` by how much the worlds must
    disagree with the ``rules`` bot's bid to overrule it (classic and three-handed, -1:
    :data:`TAKE_MARGIN`; coinche); ``coinche_margin`` by how much a coinche or a
    surcoinche must beat passing; ``oversample`` worlds drawn per world kept (the likeliest
    by the bids and plays); ``inference`` how much the bids weigh (0: not at all);
    ``play_inference`` how much the plays weigh (0: not at all; 1: a play the playout policy
    would not make is ``1 / play_inference - 1`` times... see :mod:`.inference`: its
    ``epsilon`` is ``1 - play_inference``); ``bid_success`` and ``capot_success`` how often
    a coinche contract must be made in the worlds to be bid; ``extra`` batches of
    ``samples`` more worlds a card decision may draw while the two best cards are within
    ``extra_z`` standard errors of each other (0: never); ``playout`` the policy of the
    playouts and of the plays' weighing, ``careful`` (:meth:`FastState.careful_card`) or
    ``greedy`` (the ``pimc`` bot's, :meth:`FastState.greedy_card`)."""

    def __init__(
        self,
        samples: int = -1,
        seconds: float = 0.0,
        exact: int = -1,
        tricks: int = 0,
        bid_samples: int = -1,
        bid_tricks: int = 0,
        take_margin: float = -1.0,
        bid_margin: float = 40.0,
        coinche_margin: float = 20.0,
        bid_success: float = 0.6,
        capot_success: float = 0.9,
        oversample: int = 3,
        inference: float = 1.0,
        play_inference: float = 0.65,
        extra: int = 0,
        extra_z: float = 2.0,
        playout: str = "careful",
    ) -> None:
        _check("samples", samples, int, -1, 10_000)
        if samples == 0:
            raise ExpertOptionError("expert option samples=0: at least one world, or -1")
        _check("seconds", seconds, float, 0.0, 3600.0)
        _check("exact", exact, int, -1, 8)
        _check("tricks", tricks, int, 0, 8)
        _check("bid_samples", bid_samples, int, -1, 10_000)
        _check("bid_tricks", bid_tricks, int, 0, 8)
        _check("take_margin", take_margin, float, -1.0, 500.0)
        if -1.0 < take_margin < 0.0:
            raise ExpertOptionError("expert option take_margin must be at least 0, or -1")
        _check("bid_margin", bid_margin, float, -500.0, 500.0)
        _check("coinche_margin", coinche_margin, float, -1000.0, 1000.0)
        _check("oversample", oversample, int, 1, 100)
        _check("inference", inference, float, 0.0, 10.0)
        _check("play_inference", play_inference, float, 0.0, 1.0)
        _check("bid_success", bid_success, float, 0.0, 1.0)
        _check("capot_success", capot_success, float, 0.0, 1.0)
        _check("extra", extra, int, 0, 100)
        _check("extra_z", extra_z, float, 0.0, 10.0)
        self.samples = samples
        self.seconds = float(seconds)
        self.exact = exact
        self.tricks = tricks
        self.bid_samples = bid_samples
        self.bid_tricks = bid_tricks
        self.take_margin = float(take_margin)
        self.bid_margin = float(bid_margin)
        self.coinche_margin = float(coinche_margin)
        self.oversample = oversample
        self.inference = float(inference)
        self.play_inference = float(play_inference)
        self.bid_success = float(bid_success)
        self.capot_success = float(capot_success)
        self.extra = extra
        self.extra_z = float(extra_z)
        if playout not in ("careful", "greedy"):
            raise ExpertOptionError(
                f"expert option playout must be 'careful' or 'greedy', not {playout!r}"
            )
        self.playout = playout
        self.rules = RulesBot()
        self.bids = BidModel(self.inference, self.rules)

    @property
    def careful(self) -> bool:
        """Whether every seat is played out by the careful policy (``playout``)."""
        return self.playout == "careful"

    # -- the two doors: the action, and every action's value ---------------------------------

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        obs = observation
        if len(obs.legal) == 1:
            return obs.legal[0]
        return self._evaluate(obs, rng)[1]

    def action_values(self, observation: Observation, rng: random.Random) -> dict[Action, float]:
        """What each legal action this seat weighs now is worth to the bot: the mean round
        score it expects after it (this seat's side minus the other side's; with three
        seats minus the mean of the two others'), over the worlds it searched, as
        :meth:`decide` weighs them (with the same ``rng`` state, the same worlds).

        Every legal card is valued; in the bidding, every action the bot weighs (classic:
        taking or each suit it may name, and passing; coinche: each bid of 80 to 160 and
        capot in each suit, passing, and coinche or surcoinche when legal; an action not
        valued is left out). A single legal action is valued too. ``{}`` when there is no
        decision to make."""
        obs = observation
        if not obs.legal:
            return {}
        return self._evaluate(obs, rng, every=True)[0]

    def _evaluate(
        self, obs: Observation, rng: random.Random, every: bool = False
    ) -> tuple[dict[Action, float], Action]:
        """The values :meth:`action_values` returns and the action :meth:`decide` plays."""
        if obs.phase is Phase.PLAY:
            return self.play(obs, rng, every)
        if self.bid_samples == 0:
            return {}, self.rules.decide(obs, rng)
        if obs.phase is Phase.AUCTION:
            return self.auction(obs, rng)
        return self.take_or_choose(obs, rng)

    def _deadline(self) -> float:
        return time.perf_counter() + self.seconds if self.seconds > 0 else math.inf

    def _exact(self, obs: Observation) -> int:
        return self.exact if self.exact >= 0 else EXACT[obs.rules.seats]

    # -- card play --------------------------------------------------------------------------

    def play(
        self, obs: Observation, rng: random.Random, every: bool = False
    ) -> tuple[dict[Action, float], Action]:
        deadline = self._deadline()  # the time budget counts the sampling too
        legal = [c for c in obs.legal if isinstance(c, int)]
        n = obs.rules.seats
        team = obs.team
        score = dict.fromkeys(legal, 0.0)
        points = dict.fromkeys(legal, 0.0)
        left = obs.rules.tricks_per_round - len(obs.tricks)
        exact = left <= self._exact(obs)
        tricks = 0 if exact else self.tricks
        sign = 1 if team == 0 else -1
        sampler = WorldSampler(obs)
        solved = 0
        total = 0.0
        # With a time budget, worlds come in small batches until the time is up.
        samples = self.samples if self.samples > 0 else SAMPLES[n]
        batch = samples if self.seconds <= 0 else _TIMED_BATCH
        epsilon = 1.0 - self.play_inference
        careful = self.careful
        # Each world's value of every card, kept to tell a close decision (``extra``).
        seen: dict[Card, list[float]] = {c: [] for c in legal}
        weights: list[float] = []
        batches = 0
        # A world drawn twice (few cards left unseen) is valued once.
        known: dict[tuple[int, ...], dict[int, int]] = {}
        known_few: dict[tuple[int, ...], dict[int, tuple[float, float]]] = {}
        while True:
            worlds = sample_worlds(
                obs, rng, batch, self.oversample, self.bids, epsilon, sampler, careful
            )
            if not worlds:
                break
            for world, weight in worlds:
                f = sampler.state(world)
                if solved == 0 and not every and len(equivalent_groups(f)) == 1:
                    return {}, self.rules.play(obs)  # every legal card does the same
                if n == 4:
                    base = f.points[0] - f.points[1]
                    key = tuple(world)
                    moves = known.get(key)
                    if moves is None:
                        if exact or tricks:
                            moves = Solver(f, tricks).move_values()
                        else:
                            moves = rollout_values(f, careful)
                        known[key] = moves
                    for c in legal:
                        d = base + moves[c]
                        s = f.score_for(d)
                        value = s[team] - s[1 - team]
                        seen[c].append(value)
                        score[c] += weight * value
                        points[c] += weight * sign * d
                else:
                    assert isinstance(f, FewFastState)
                    key = tuple(world)
                    few = known_few.get(key)
                    if few is None:
                        few = known_few[key] = few_values(f, obs.seat, exact, careful)
                    for c in legal:
                        v, p = few[c]
                        seen[c].append(v)
                        score[c] += weight * v
                        points[c] += weight * p
                weights.append(weight)
                total += weight
                solved += 1
                if time.perf_counter() > deadline:
                    break
            batches += 1
            if time.perf_counter() > deadline:
                break
            if self.seconds > 0:
                continue
            if batches > self.extra or len(legal) < 2:
                break
            first, second = sorted(legal, key=lambda c: -score[c])[:2]
            if not _close(seen[first], seen[second], weights, self.extra_z):
                break
        preferred = self.rules.play(obs)
        if solved == 0:
            return {}, preferred
        values: dict[Action, float] = {c: score[c] / total for c in legal}
        best = max(legal, key=lambda c: (score[c] + 0.01 * points[c], c == preferred, -c))
        return values, best

    # -- classic and three-handed: take or name a suit --------------------------------------

    def take_or_choose(
        self, obs: Observation, rng: random.Random
    ) -> tuple[dict[Action, float], Action]:
        """The ``rules`` bot's choice unless the sampled decks clearly disagree.

        Over the same decks (drawn to fit the passes before this turn), taking (or naming
        a suit) is valued by the search on the deal completed as it would be, and passing
        by the rest of the bidding as the ``rules`` bot would bid every seat and the search
        on the contract that comes of it (a redeal: 0). The worlds overrule the ``rules``
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
            return {}, suggested
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
        table: dict[Action, float] = {a: values[i] for i, (a, _) in enumerate(options)}
        table[PASS] = pass_value
        best = max(range(len(options)), key=lambda i: values[i])
        margin = self.take_margin if self.take_margin >= 0 else TAKE_MARGIN[obs.rules.seats]
        if suggested == PASS:
            if values[best] > pass_value + margin:
                return table, options[best][0]
            return table, PASS
        chosen = next((i for i, (a, _) in enumerate(options) if a == suggested), best)
        if values[chosen] < pass_value - margin:
            return table, PASS
        return table, suggested

    def _classic_rollout(self, obs: Observation, deck: list[int]) -> tuple[int, int]:
        """Who takes, and in what trump, if this seat passes and every seat then bids as
        the ``rules`` bot would on this deck; (-1, -1) for a redeal."""
        assert obs.turned is not None
        n = obs.rules.seats
        owners = deal_owners(obs.rules, obs.dealer)
        initial = [0] * n
        for pos in range(5 * n):
            initial[owners[pos]] |= 1 << deck[pos]
        tbit = 1 << obs.turned
        ts = obs.turned >> 3
        first = (obs.dealer + 1) % n
        turn = len(obs.bids) + 1  # the turns already taken, this pass included
        rules = self.rules
        while turn < 2 * n:
            seat = (first + turn) % n
            hand = initial[seat] | tbit
            if turn < n:
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
        """Decks that deal this seat its cards and turn the card it saw, weighed by how
        likely the bids before this turn were with them."""
        n = obs.rules.seats
        owners = deal_owners(obs.rules, obs.dealer)
        assert obs.turned is not None
        rest = _cards(obs.rules.deck_mask & ~obs.hand_mask & ~(1 << obs.turned))
        mine = list(obs.hand)
        drawn: list[tuple[list[int], float]] = []
        count = self.bid_samples if self.bid_samples > 0 else BID_SAMPLES
        spoken = any(seat != obs.seat for seat, _ in obs.bids)
        weigh = bool(self.inference and spoken)
        want = count * (self.oversample if weigh else 1)
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
            if weigh:
                initial = [0] * n
                for pos in range(5 * n):
                    initial[owners[pos]] |= 1 << deck[pos]
                w = self.bids.weight(obs, initial)
            drawn.append((deck, w))
        if len(drawn) <= count or not weigh:
            return [(d, 1.0) for d, _ in drawn]
        return resample(drawn, count, rng)

    def _contract_net(
        self, obs: Observation, hands: list[int], trump: int, taker: int, contract: int
    ) -> float:
        """Our round net score with these hands if ``taker`` plays ``contract`` in ``trump``."""
        n = obs.rules.seats
        leader = (obs.dealer + 1) % n
        if n != 4:
            g = FewFastState.new_few(obs.rules, hands, trump, taker, leader)
            play_out(g, self.careful)
            return net(g.score(), obs.seat)
        team = obs.team
        f = FastState.new(obs.rules, hands, trump, taker, leader, contract, 1)
        d = search_value(f, self.bid_tricks, self.careful)
        s = f.score_for(d)
        return s[team] - s[1 - team]

    # -- coinche: the auction --------------------------------------------------------------

    def auction(self, obs: Observation, rng: random.Random) -> tuple[dict[Action, float], Action]:
        """The ``rules`` bot's bid unless the sampled deals clearly prefer another.

        Every deal (drawn to fit the others' bids) is searched once per trump suit: the
        card-point difference it gives scores every contract of that suit for either side,
        undoubled or doubled. A bid is worth its mean net score over the deals; passing is
        worth the contract as it stands (0 without one), a coinche or surcoinche the same
        contract doubled again. The worlds overrule the ``rules`` bot when a bid made often
        enough beats both its choice and passing by ``bid_margin``, or when its bid is
        worse than passing by as much; they coinche (surcoinche) when that beats passing by
        ``coinche_margin``, and never follow the ``rules`` bot's coinche otherwise."""
        team = obs.team
        suggested = self.rules.decide(obs, rng)
        if not isinstance(suggested, Bid):
            return {}, suggested
        if obs.taker >= 0 and not 0 <= obs.trump < 4:
            return {}, suggested  # a sans-atout or tout-atout contract: the rules bot's
        if obs.multiplier == 1 and obs.contract >= CAPOT_POINTS:
            return {}, suggested
        candidates = [
            (a.value, a.trump)
            for a in obs.legal
            if isinstance(a, Bid)
            and a.kind is BidKind.BID
            and 0 <= a.trump < 4
            and a.value in _VALUES
        ]
        doubling = COINCHE in obs.legal or SURCOINCHE in obs.legal
        if not candidates and not doubling:
            return {}, suggested
        deals = self._coinche_deals(obs, rng)
        if not deals:
            return {}, suggested
        leader = (obs.dealer + 1) % 4
        # The careful playout plays the taker's side as such: a contract the other side holds
        # is played out again with its taker (the greedy one ignores who took).
        careful = self.careful
        theirs = careful and obs.taker >= 0 and obs.taker % 2 != team
        outcomes: list[tuple[float, list[tuple[int, tuple[int, int], tuple[int, int]]]]] = []
        for hands, weight in deals:
            per_trump = []
            for trump in range(4):
                f = FastState.new(obs.rules, hands, trump, obs.seat, leader)
                d = search_value(f, self.bid_tricks, careful)
                per_trump.append((d, f.announcements, f.belote))
            if theirs:
                f = FastState.new(obs.rules, hands, obs.trump, obs.taker, leader)
                d = search_value(f, self.bid_tricks, careful)
                per_trump.append((d, f.announcements, f.belote))
            outcomes.append((weight, per_trump))
        total = sum(w for w, _ in outcomes)

        def value_of(trump: int, taker: int, value: int, multiplier: int) -> tuple[float, float]:
            """Our mean net score and how often the takers make it."""
            net_sum = made = 0.0
            for w, per in outcomes:
                d, ann, bel = per[4 if theirs and taker % 2 != team else trump]
                s0, s1 = _score_d(obs, d, ann, bel, taker, value, multiplier)
                ours = (s0 - s1) if team == 0 else (s1 - s0)
                net_sum += w * ours
                if (ours > 0) == (taker % 2 == team):
                    made += w
            return net_sum / total, made / total

        table: dict[Action, float] = {}
        if obs.taker < 0:
            pass_value = 0.0
        else:
            pass_value = value_of(obs.trump, obs.taker, obs.contract, obs.multiplier)[0]
        table[PASS] = pass_value
        if doubling:
            double = COINCHE if COINCHE in obs.legal else SURCOINCHE
            doubled = value_of(obs.trump, obs.taker, obs.contract, 2 * obs.multiplier)[0]
            table[double] = doubled
            if doubled > pass_value + self.coinche_margin:
                return table, double
        if obs.multiplier != 1:
            return table, PASS
        best: tuple[int, int] | None = None
        best_value = -math.inf
        for value, trump in candidates:
            mean, success = value_of(trump, obs.seat, value, 1)
            table[BIDS[value, trump]] = mean
            needed = self.capot_success if value == CAPOT_POINTS else self.bid_success
            if success >= needed and mean > best_value:
                best, best_value = (value, trump), mean
        if suggested.kind is BidKind.BID and (suggested.value, suggested.trump) in candidates:
            rules_value = table[BIDS[suggested.value, suggested.trump]]
        else:
            rules_value = pass_value
        margin = self.bid_margin
        if best is not None and best_value > max(rules_value, pass_value) + margin:
            return table, BIDS[best]
        if suggested.kind is BidKind.BID and rules_value < pass_value - margin:
            return table, PASS
        if suggested.kind is BidKind.COINCHE or suggested.kind is BidKind.SURCOINCHE:
            return table, PASS  # the worlds did not find the double worth it
        return table, suggested

    def _coinche_deals(self, obs: Observation, rng: random.Random) -> list[tuple[list[int], float]]:
        rest = _cards(obs.rules.deck_mask & ~obs.hand_mask)
        count = self.bid_samples if self.bid_samples > 0 else COINCHE_BID_SAMPLES
        spoken = any(seat != obs.seat for seat, _ in obs.bids)
        weigh = bool(self.inference and spoken)
        want = count * (self.oversample if weigh else 1)
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
            w = self.bids.weight(obs, hands) if weigh else 1.0
            drawn.append((hands, w))
        if len(drawn) <= count or not weigh:
            return [(h, 1.0) for h, _ in drawn]
        return resample(drawn, count, rng)


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


def _classic_hands(obs: Observation, deck: Sequence[int], taker: int) -> list[int]:
    """The 8-card hands of a classic (or three-handed) deck once ``taker`` takes."""
    n = obs.rules.seats
    owners = deal_owners(obs.rules, obs.dealer, taker)
    hands = [0] * n
    for pos, c in enumerate(deck):
        o = owners[pos]
        hands[taker if o == -1 else o] |= 1 << c
    return hands


__all__ = [
    "ExpertBot",
    "ExpertOptionError",
    "announcement_points",
    "few_search",
    "few_values",
    "hand_strength",
    "play_out",
    "rollout_values",
    "search_value",
]
