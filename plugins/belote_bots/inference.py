"""What the table says about the cards a seat cannot see: deals of them consistent with every
public fact, weighted by how likely the bids and the plays were with them.

A *world* is one deal of the unseen cards. With three or four seats it is every seat's
unplayed cards (masks, the observer's own hand included); in two-handed, where what is
hidden is the face-down cards under the face-up ones (nobody has seen them, their owner
neither), it is ``under[c]``: the face-down card lying under face-up card ``c`` (-1: none),
and the hands are the face-up cards everybody sees.

:class:`WorldSampler` draws worlds that respect every fact: how many cards each seat holds,
the voids a seat showed by not following, not trumping or not overtrumping, the cards
announcements, belote and the turned card showed, the announcements a seat declared or did
not, a king or queen of trump played without belote (the other was not in that hand).

Two models then weigh each world by how likely what the others did was with those hands:

* :class:`BidModel`: the bids and passes, read as the ``rules`` bot reads a hand (its hand
  strength against its thresholds), softened by a logistic of the margin, so that a pass
  with a hand the ``rules`` bot would have taken with is unlikely but not impossible;
* :class:`PlayModel`: every card another seat played, read as the greedy playout policy
  (:meth:`~belote_p2p.bot.FastState.greedy_card`), or with ``careful`` the careful one
  (:meth:`~belote_p2p.bot.FastState.careful_card`), would have played with that world's
  hand at that moment: a play it would have made is likelier than one it would not (a partner
  that did not load its ten on a sure trick probably had none; a last player that did not
  take a rich trick probably could not). ``epsilon`` is the share of plays that model does
  not explain.

:func:`sample_worlds` draws ``oversample`` times the worlds wanted, weighs them and keeps
``count`` by systematic resampling (a world drawn twice weighs twice). The two-handed deal
of face-down cards has no such evidence (nobody saw them: no play says anything of them) and
is drawn uniformly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from belote_p2p.bot import (
    ABOVE,
    POINTS,
    BidKind,
    FastState,
    FewFastState,
    Observation,
    find_announcements,
    pile_positions,
)

from .rules_bot import RulesBot

KING, QUEEN = 6, 5
REDRAWS = 20
"""Draws a world may take before it is given up (a dead end of the placement)."""

World = list[int]
"""Every seat's unplayed cards (masks); two-handed, ``under`` (see the module)."""


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _sigmoid(x: float) -> float:
    if x < -30:
        return 1e-13
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def played_by_seat(obs: Observation) -> list[int]:
    """The cards each seat played this round (masks)."""
    n = obs.rules.seats
    out = [0] * n
    for trick in obs.tricks:
        for i, c in enumerate(trick.cards):
            out[(trick.leader + i) % n] |= 1 << c
    for i, c in enumerate(obs.trick):
        out[(obs.leader + i) % n] |= 1 << c
    return out


def play_sequence(obs: Observation) -> list[tuple[int, int]]:
    """Every card played this round as ``(seat, card)``, in order."""
    n = obs.rules.seats
    out: list[tuple[int, int]] = []
    for trick in obs.tricks:
        for i, c in enumerate(trick.cards):
            out.append(((trick.leader + i) % n, c))
    for i, c in enumerate(obs.trick):
        out.append(((obs.leader + i) % n, c))
    return out


class WorldSampler:
    """Worlds consistent with an observation of the play phase (see the module)."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        n = self.seats = obs.rules.seats
        self.two_handed = n == 2
        self.played = played_by_seat(obs)
        if self.two_handed:
            self._init_two_handed()
            return
        me = obs.seat
        excluded = self._belote_exclusions()
        pool = obs.unseen()
        hands = [0] * n
        hands[me] = obs.hand_mask
        for s in range(n):
            if s != me:
                shown = obs.shown[s] & pool
                hands[s] = shown
                pool &= ~shown
        room = [0] * n
        allowed = [0] * n
        for s in range(n):
            if s != me:
                room[s] = 8 - self.played[s].bit_count() - hands[s].bit_count()
                allowed[s] = obs.possible(s) & ~excluded[s] & pool
        self.base = hands
        self.room = room
        self.allowed = allowed
        self.dead = sum(room) != pool.bit_count() or min(room) < 0
        # How many seats may hold each card: the most constrained are placed first.
        self.options = {c: sum(1 for s in range(n) if allowed[s] >> c & 1) for c in _cards(pool)}
        self.cards = sorted(self.options, key=self.options.__getitem__)
        self.check_announcements = obs.rules.announcements and any(
            d is not None for s, d in enumerate(obs.declared) if s != me
        )

    def _belote_exclusions(self) -> list[int]:
        """A king or queen of trump played first, without belote: its partner card is not
        (and was not) in that hand."""
        obs = self.obs
        n = self.seats
        excluded = [0] * n
        trump = obs.trump
        if not (0 <= trump < 4 or trump == 5):
            return excluded
        belote_cards = {c for _, c in obs.belote}
        seen = 0
        for seat, c in play_sequence(obs):
            rank = c & 7
            if rank in (KING, QUEEN) and (trump == 5 or c >> 3 == trump):
                other = c ^ (KING ^ QUEEN)
                if not seen >> other & 1 and c not in belote_cards:
                    excluded[seat] |= 1 << other
            seen |= 1 << c
        return excluded

    def _init_two_handed(self) -> None:
        obs = self.obs
        deck = obs.open_deck
        known = 0
        for c in deck:
            if c is not None:
                known |= 1 << c
        self.pool_cards = _cards(obs.rules.deck_mask & ~known)
        covers = []
        for seat in range(2):
            for down, up in pile_positions(obs.dealer, seat):
                cover = deck[up]
                if deck[down] is None and cover is not None:
                    covers.append(cover)
        self.covers = covers
        self.dead = len(covers) != len(self.pool_cards)

    def draw(self, rng: random.Random) -> World | None:
        """One world, or None at a dead end (redraw)."""
        if self.two_handed:
            cards = list(self.pool_cards)
            rng.shuffle(cards)
            under = [-1] * 32
            for cover, c in zip(self.covers, cards, strict=True):
                under[cover] = c
            return under
        n = self.seats
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
            for s in range(n):
                if room[s] and allowed[s] >> c & 1:
                    total += room[s]
            if not total:
                return None
            pick = rand() * total
            seat = -1
            for s in range(n):
                if room[s] and allowed[s] >> c & 1:
                    seat = s
                    pick -= room[s]
                    if pick < 0:
                        break
            hands[seat] |= 1 << c
            room[seat] -= 1
        if self.check_announcements and not self._announcements_fit(hands):
            return None
        return hands

    def _announcements_fit(self, hands: Sequence[int]) -> bool:
        obs = self.obs
        for s in range(self.seats):
            declared = obs.declared[s]
            if s == obs.seat or declared is None:
                continue
            if find_announcements(hands[s] | self.played[s], obs.trump) != declared:
                return False
        return True

    def full_hands(self, hands: Sequence[int]) -> list[int]:
        """Each seat's eight cards of the round (unplayed and played)."""
        return [hands[s] | self.played[s] for s in range(self.seats)]

    def initial_hands(self, hands: Sequence[int], rng: random.Random) -> list[int]:
        """What each seat held when it bid: in coinche its 8 cards; in classic and
        three-handed 5 of them (the taker's turned card and the completion cards aside),
        picked at random."""
        obs = self.obs
        full = self.full_hands(hands)
        if obs.rules.is_coinche:
            return full
        turned = 1 << obs.turned if obs.turned is not None else 0
        out = [0] * self.seats
        for s in range(self.seats):
            cards = _cards(full[s] & ~turned)
            out[s] = sum(1 << c for c in rng.sample(cards, min(5, len(cards))))
        return out

    def state(self, world: World) -> FastState:
        """The fast state of the observed position in ``world``."""
        obs = self.obs
        if self.two_handed:
            return FastState.from_observation(obs, list(obs.shown[:2]), world)
        return FastState.from_observation(obs, world)


class BidModel:
    """How likely the others' bids and passes were with given hands: the ``rules`` bot's
    reading of a hand, softened by a logistic of its margin (``strength`` scales it; 0:
    every world alike)."""

    def __init__(self, strength: float = 1.0, rules: RulesBot | None = None) -> None:
        self.k = strength
        self.rules = rules or RulesBot()

    def weight(self, obs: Observation, initial: Sequence[int]) -> float:
        """``initial[s]``: what seat ``s`` held when it bid (5 cards in classic and
        three-handed, 8 in coinche)."""
        k = self.k
        if not k:
            return 1.0
        w = 1.0
        rules = self.rules
        if obs.rules.is_coinche:
            holder, trump = -1, -1
            for seat, bid in obs.bids:
                if seat != obs.seat:
                    hand = initial[seat]
                    if bid.kind is BidKind.BID and 0 <= bid.trump < 4:
                        if holder < 0 or (holder - seat) % 2 == 1 or bid.trump != trump:
                            est = rules.estimate(hand, bid.trump)
                            w *= _sigmoid(k * (est + 10 - bid.value) / 12)
                    elif bid.kind is BidKind.PASS and holder < 0:
                        best = max(rules.estimate(hand, t) for t in range(4))
                        w *= _sigmoid(k * (90 - best) / 12)
                if bid.kind is BidKind.BID:
                    holder, trump = seat, bid.trump
            return w
        turned = obs.turned
        if turned is None:
            return w
        n = obs.rules.seats
        ts = turned >> 3
        tbit = 1 << turned
        for i, (seat, bid) in enumerate(obs.bids):
            if seat == obs.seat:
                continue
            hand = initial[seat] | tbit
            if i < n:
                value = RulesBot.classic_value(hand, ts)
                if bid.kind is BidKind.PASS:
                    w *= _sigmoid(k * (rules.take_threshold + 4 - value) / 8)
                else:
                    w *= _sigmoid(k * (value - rules.take_threshold + 4) / 8)
            else:
                values = [RulesBot.classic_value(hand, s) for s in range(4) if s != ts]
                if bid.kind is BidKind.PASS:
                    w *= _sigmoid(k * (rules.choose_threshold + 4 - max(values)) / 8)
                else:
                    value = RulesBot.classic_value(hand, bid.trump)
                    w *= _sigmoid(k * (value - rules.choose_threshold + 4) / 8)
        return w


def equivalent(a: int, b: int, live: int, mode: int) -> bool:
    """Whether cards ``a`` and ``b`` do the same in a trick: the same suit, the same points,
    and no ``live`` card between them."""
    if a == b:
        return True
    if a >> 3 != b >> 3 or POINTS[mode][a] != POINTS[mode][b]:
        return False
    above = ABOVE[mode]
    low, high = (a, b) if above[a] >> b & 1 else (b, a)
    return not above[low] & ~above[high] & ~(1 << high) & live


class PlayModel:
    """How likely the cards the others played were with a world's hands (see the module):
    each play by another seat counts ``1 - epsilon + epsilon / k`` when the greedy policy
    (with ``careful`` the careful one) would have played it (or a card equivalent to it),
    ``epsilon / k`` otherwise, with ``k`` the seat's legal cards then."""

    def __init__(self, obs: Observation, epsilon: float, careful: bool = False) -> None:
        self.obs = obs
        self.epsilon = epsilon
        self.careful = careful
        self.sequence = play_sequence(obs)
        # Only plays made by another seat say something; the last of them ends the replay.
        self.stop = max(
            (i + 1 for i, (seat, _) in enumerate(self.sequence) if seat != obs.seat), default=0
        )
        self.active = epsilon < 1.0 and self.stop > 0 and obs.rules.seats != 2

    def weight(self, full: Sequence[int]) -> float:
        """``full[s]``: seat ``s``'s eight cards of the round in the world weighed."""
        if not self.active:
            return 1.0
        obs = self.obs
        n = obs.rules.seats
        leader = (obs.dealer + 1) % n
        if n == 4:
            f = FastState.new(
                obs.rules, full, obs.trump, obs.taker, leader, obs.contract, obs.multiplier
            )
        else:
            f = FewFastState.new_few(obs.rules, full, obs.trump, obs.taker, leader)
        eps = self.epsilon
        mode = obs.trump
        me = obs.seat
        w = 1.0
        for seat, c in self.sequence[: self.stop]:
            if seat != me:
                m = f.legal_mask()
                if m & (m - 1):
                    k = m.bit_count()
                    g = f.careful_card() if self.careful else f.greedy_card()
                    live = f.out()
                    if f.trick:
                        live |= 1 << f.trick[f.best]
                    if equivalent(c, g, live, mode):
                        w *= 1.0 - eps + eps / k
                    else:
                        w *= eps / k
            f.play(c)
        return w


def sample_worlds(
    obs: Observation,
    rng: random.Random,
    count: int,
    oversample: int,
    bids: BidModel,
    epsilon: float,
    sampler: WorldSampler | None = None,
    careful: bool = False,
) -> list[tuple[World, float]]:
    """``count`` worlds of a play-phase observation with their weights: ``oversample``
    times as many drawn, weighed by the bids (``bids``) and the plays (``epsilon`` and
    ``careful`` as :class:`PlayModel`; ``epsilon`` 1: not at all), ``count`` kept in
    proportion to their weights."""
    sampler = sampler or WorldSampler(obs)
    if sampler.dead:
        return []
    plays = PlayModel(obs, epsilon, careful)
    weigh_bids = bool(bids.k and obs.bids) and not sampler.two_handed
    weigh = weigh_bids or plays.active
    want = count * (oversample if weigh else 1)
    drawn: list[tuple[World, float]] = []
    for _ in range(want):
        for _ in range(REDRAWS):
            world = sampler.draw(rng)
            if world is not None:
                break
        else:
            continue
        w = 1.0
        if weigh_bids:
            w = bids.weight(obs, sampler.initial_hands(world, rng))
        if plays.active:
            w *= plays.weight(sampler.full_hands(world))
        drawn.append((world, w))
    if not weigh or len(drawn) <= count:
        return drawn
    return resample(drawn, count, rng)


def resample(
    drawn: list[tuple[World, float]], count: int, rng: random.Random
) -> list[tuple[World, float]]:
    """``count`` of the drawn items picked in proportion to their weights (systematic
    resampling), duplicates merged into one item weighing as many."""
    total = sum(w for _, w in drawn)
    if total <= 0:
        return [(h, 1.0) for h, _ in drawn[:count]]
    step = total / count
    u = rng.random() * step
    out: list[tuple[World, float]] = []
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


__all__ = [
    "BidModel",
    "PlayModel",
    "World",
    "WorldSampler",
    "equivalent",
    "played_by_seat",
    "resample",
    "sample_worlds",
]
