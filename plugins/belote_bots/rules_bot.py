"""A hand-written player: counts cards, infers voids, plays with its partner in mind.

Bidding values a hand from its trumps (jack, nine, ace, length, belote), side aces and
tens, and announcements. Card play leads masters, draws trumps for the takers, loads points
on a partner's safe trick, wins cheaply when it can hold the trick, and otherwise plays low.
"""

from __future__ import annotations

import random

from belote_p2p.bot import (
    ABOVE,
    ALL_TRUMP,
    BIDS,
    CARDS,
    CHOOSE,
    COINCHE,
    NO_TRUMP,
    PASS,
    POINTS,
    STRENGTH,
    SUIT_MASKS,
    SURCOINCHE,
    TAKE,
    TRUMP_MASK,
    Action,
    BidKind,
    Card,
    Observation,
    Phase,
    find_announcements,
)

SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = range(8)


def _bit(suit: int, rank: int) -> int:
    return 1 << (suit * 8 + rank)


def _low_cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def hand_strength(hand: int, trump: int) -> int:
    """A rough count of the points ``hand`` brings its team with ``trump``: a suit, or
    sans-atout / tout-atout (a coinche contract the bot did not bid may still be its to
    surcoinche, or its partner's to support)."""
    if trump == NO_TRUMP or trump == ALL_TRUMP:
        return _masters_strength(hand, trump)
    trumps = hand & SUIT_MASKS[trump]
    n = trumps.bit_count()
    v = 0
    if trumps & _bit(trump, JACK):
        v += 25
    if trumps & _bit(trump, NINE):
        v += 18 if n >= 2 else 10
    if trumps & _bit(trump, ACE):
        v += 12
    if trumps & _bit(trump, TEN):
        v += 9
    for rank in (KING, QUEEN, EIGHT, SEVEN):
        if trumps & _bit(trump, rank):
            v += 6
    if n >= 4:
        v += 10 * (n - 3)
    if trumps & _bit(trump, KING) and trumps & _bit(trump, QUEEN):
        v += 20
    for suit in range(4):
        if suit == trump:
            continue
        side = hand & SUIT_MASKS[suit]
        if side & _bit(suit, ACE):
            v += 12
            if side & _bit(suit, TEN):
                v += 9
        elif side & _bit(suit, TEN) and side.bit_count() >= 2:
            v += 3
        if n >= 3 and side.bit_count() == 0:
            v += 6
        elif n >= 3 and side.bit_count() == 1 and not side & _bit(suit, ACE):
            v += 3
    return v


def _masters_strength(hand: int, mode: int) -> int:
    """With no single trump suit, what counts is each suit's run of masters from the top
    (every card of it wins a trick whoever leads it): its points, a share of the low cards
    it catches, and the long tail a run of three or more masters makes good."""
    strength, points = STRENGTH[mode], POINTS[mode]
    v = 0
    for suit in range(4):
        ranks = sorted(range(8), key=lambda r: -strength[suit * 8 + r])
        held = [bool(hand & _bit(suit, r)) for r in ranks]
        run = held.index(False) if False in held else 8
        v += sum(points[suit * 8 + r] + 6 for r in ranks[:run])
        if run >= 3:
            v += 8 * (sum(held) - run)
    return v


def announcement_points(hand: int, trump: int) -> int:
    return sum(a.points for a in find_announcements(hand, trump))


class RulesBot:
    """The ``rules`` bot. Thresholds are options so that the ladder can tune them."""

    def __init__(
        self,
        take: int = 48,
        choose: int = 52,
        open_offset: int = 30,
        coinche: bool = True,
    ) -> None:
        self.take_threshold = take
        self.choose_threshold = choose
        self.open_offset = open_offset
        self.allow_coinche = coinche

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        obs = observation
        if len(obs.legal) == 1:
            return obs.legal[0]
        if obs.phase is Phase.PLAY:
            return self.play(obs)
        if obs.phase is Phase.AUCTION:
            return self.auction(obs)
        return self.take_or_choose(obs)

    # -- classic: take or choose --------------------------------------------------------

    def take_or_choose(self, obs: Observation) -> Action:
        assert obs.turned is not None
        hand = obs.hand_mask | (1 << obs.turned)
        turned_suit = obs.turned >> 3
        if obs.phase is Phase.TAKE_FIRST:
            value = self.classic_value(hand, turned_suit)
            return TAKE if value >= self.take_threshold else PASS
        best, best_value = -1, -1
        for suit in range(4):
            if suit != turned_suit and CHOOSE[suit] in obs.legal:
                value = self.classic_value(hand, suit)
                if value > best_value:
                    best, best_value = suit, value
        if best >= 0 and best_value >= self.choose_threshold:
            return CHOOSE[best]
        return PASS

    @staticmethod
    def classic_value(hand: int, trump: int) -> int:
        # Announcements count for the contract; the 6 known cards show only part of them.
        return hand_strength(hand, trump) + announcement_points(hand, trump) // 2

    # -- coinche: the auction -----------------------------------------------------------

    def estimate(self, hand: int, trump: int) -> int:
        """What this hand may promise with ``trump``, as a contract value (not rounded)."""
        return hand_strength(hand, trump) + announcement_points(hand, trump) + self.open_offset

    def auction(self, obs: Observation) -> Action:
        hand = obs.hand_mask
        partner = obs.partner
        contract, bidder = obs.contract, obs.taker
        my_bids = [b for s, b in obs.bids if s == obs.seat and b.kind is BidKind.BID]
        if obs.multiplier == 2:
            if SURCOINCHE in obs.legal and bidder == obs.seat:
                value = self.estimate(hand, obs.trump)
                if value >= contract + 40:
                    return SURCOINCHE
            return PASS
        if bidder == partner and contract > 0:
            # Support: raise by ten per ace and per top trump, once.
            trump = obs.trump
            if any(b.trump == trump for b in my_bids) or not 0 <= trump < 4:
                return PASS
            raise_by = 0
            for suit in range(4):
                if suit != trump and hand & _bit(suit, ACE):
                    raise_by += 10
            if hand & _bit(trump, JACK):
                raise_by += 10
            if hand & _bit(trump, NINE):
                raise_by += 10
            value = min(contract + raise_by, 160)
            if raise_by and value > contract:
                bid = BIDS.get((value, trump))
                if bid is not None and bid in obs.legal:
                    return bid
            return PASS
        best, best_value = -1, -1
        for suit in range(4):
            value = self.estimate(hand, suit)
            if value > best_value:
                best, best_value = suit, value
        value = min(best_value // 10 * 10, 160)
        if value >= 80 and value > contract and (bidder < 0 or value >= contract + 10):
            bid = BIDS.get((value, best))
            if bid is not None and bid in obs.legal:
                return bid
        if COINCHE in obs.legal and self.allow_coinche and self._coinche(obs):
            return COINCHE
        return PASS

    @staticmethod
    def _coinche(obs: Observation) -> bool:
        trump = obs.trump
        if not 0 <= trump < 4:
            return False
        hand = obs.hand_mask
        trumps = hand & SUIT_MASKS[trump]
        tops = bool(trumps & _bit(trump, JACK)) + bool(trumps & _bit(trump, NINE))
        aces = sum(1 for s in range(4) if s != trump and hand & _bit(s, ACE))
        # Only a clear defensive hand: both top trumps with length, or a top trump and aces
        # against a high contract.
        if tops == 2 and trumps.bit_count() >= 3:
            return True
        return tops >= 1 and aces >= 2 and obs.contract >= 110

    # -- card play ----------------------------------------------------------------------

    def play(self, obs: Observation) -> Card:
        legal = 0
        for c in obs.legal:
            if isinstance(c, int):
                legal |= 1 << c
        ctx = _Context(obs)
        if not obs.trick:
            return ctx.lead(legal)
        return ctx.follow(legal)


class _Context:
    """What a card decision needs, computed once."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        self.seat = obs.seat
        self.partner = obs.partner  # -1 with two or three seats: no partner
        self.seats = n = obs.rules.seats
        if n == 4:
            self.opps: tuple[int, ...] = ((obs.seat + 1) % 4, (obs.seat + 3) % 4)
        else:
            self.opps = tuple((obs.seat + k) % n for k in range(1, n))
        trump = obs.trump
        self.trump = trump
        self.strength = STRENGTH[trump]
        self.points = POINTS[trump]
        self.above = ABOVE[trump]
        self.tmask = TRUMP_MASK[trump]
        self.hand = obs.hand_mask
        self.unseen = obs.unseen()
        self.possible = [obs.possible(s) if s != obs.seat else 0 for s in range(n)]
        if obs.taker < 0:
            self.takers = False
        elif n == 4:
            self.takers = obs.taker % 2 == obs.team
        else:
            self.takers = obs.taker == obs.seat

    def is_master(self, c: int) -> bool:
        return not self.above[c] & self.unseen

    def beats(self, c: int, top: int) -> bool:
        s = self.strength
        return (c >> 3 == top >> 3 and s[c] > s[top]) or (s[c] >= 8 and s[top] < 8)

    def could_beat(self, seat: int, c: int, led: int) -> bool:
        """Whether ``seat`` may hold a card that beats ``c`` in a trick led in suit ``led``."""
        p = self.possible[seat]
        can_follow = p & SUIT_MASKS[led]
        # A higher card of c's suit: playable if c's suit was led, or if c is a trump and
        # the seat cannot follow.
        if p & self.above[c] and (c >> 3 == led or not can_follow):
            return True
        # A plain card falls to any trump of a seat that cannot follow.
        return self.strength[c] < 8 and not can_follow and bool(p & self.tmask)

    def holds(self, c: int, led: int, later: tuple[int, ...]) -> bool:
        return not any(self.could_beat(s, c, led) for s in later if s in self.opps)

    def _lowest(self, cards: int, prefer_plain: bool = True) -> Card:
        """The cheapest card to give away: few points, weak, not a master if possible."""
        if prefer_plain and cards & ~self.tmask:
            cards &= ~self.tmask
        pts, st = self.points, self.strength
        hand = self.hand

        def cost(c: Card) -> tuple[int, int, int, int]:
            suit_len = (hand & SUIT_MASKS[c >> 3]).bit_count()
            return (pts[c], int(self.is_master(c)), st[c], suit_len)

        return min(_low_cards(cards), key=cost)

    def lead(self, legal: int) -> Card:
        tm = self.tmask
        my_trumps = legal & tm
        opp_trumps = any(self.possible[o] & tm for o in self.opps)
        if self.trump == ALL_TRUMP or self.trump == NO_TRUMP:
            masters = [c for c in _low_cards(legal) if self.is_master(c)]
            if masters:
                return max(masters, key=lambda c: self.points[c])
            return self._lowest(legal, prefer_plain=False)
        if self.takers and my_trumps and opp_trumps:
            trump_masters = [c for c in _low_cards(my_trumps) if self.is_master(c)]
            if trump_masters:
                return max(trump_masters, key=lambda c: self.strength[c])
            if self.obs.taker == self.seat and my_trumps.bit_count() >= 3:
                return min(_low_cards(my_trumps), key=lambda c: self.strength[c])
            if self.obs.taker == self.partner:
                return min(_low_cards(my_trumps), key=lambda c: self.strength[c])
        # Masters of side suits that no opponent can ruff.
        safe: list[Card] = []
        for c in _low_cards(legal & ~tm):
            if not self.is_master(c):
                continue
            suit = SUIT_MASKS[c >> 3]
            if any(not self.possible[o] & suit and self.possible[o] & tm for o in self.opps):
                continue
            safe.append(c)
        if safe:
            return max(safe, key=lambda c: (self.points[c], self.strength[c]))
        # A suit the partner may ruff, when defending.
        if not self.takers and self.partner >= 0:
            p = self.possible[self.partner]
            if p & tm:
                for c in sorted(_low_cards(legal & ~tm), key=lambda c: self.points[c]):
                    if not p & SUIT_MASKS[c >> 3] and self.points[c] < 10:
                        return c
        plain = legal & ~tm
        if plain:
            # Lead low from a suit, sparing tens whose ace is still out.
            def cost(c: Card) -> tuple[int, int, int]:
                suit_cards = self.hand & SUIT_MASKS[c >> 3]
                bare_ten = c & 7 == TEN and not self.is_master(c)
                return (int(bare_ten), self.points[c], -suit_cards.bit_count())

            return min(_low_cards(plain), key=cost)
        return min(_low_cards(legal), key=lambda c: self.strength[c])

    def follow(self, legal: int) -> Card:
        obs = self.obs
        trick = obs.trick
        led = trick[0] >> 3
        winner = obs.trick_winner_so_far()
        assert winner is not None
        n = self.seats
        top = trick[(winner - obs.leader) % n]
        later = tuple((self.seat + k) % n for k in range(1, n - len(trick)))
        trick_points = sum(self.points[c] for c in trick)
        if winner == self.partner:
            if self.holds(top, led, later):
                return self._load(legal)
            for c in sorted(_low_cards(legal), key=lambda c: -self.points[c]):
                if c >> 3 == led and self.beats(c, top) and self.holds(c, led, later):
                    return c
            return self._lowest(legal)
        winners = [c for c in _low_cards(legal) if self.beats(c, top)]
        holding = [c for c in winners if self.holds(c, led, later)]
        if holding:
            plain = [c for c in holding if self.strength[c] < 8]
            if plain:
                return max(plain, key=lambda c: (self.points[c], -self.strength[c]))
            return min(holding, key=lambda c: self.strength[c])
        if winners and trick_points >= 10:
            return max(winners, key=lambda c: self.strength[c])
        return self._lowest(legal)

    def _load(self, legal: int) -> Card:
        """Points on the partner's trick, sparing trumps and masters that win on their own."""
        plain = legal & ~self.tmask
        if not plain:
            return min(_low_cards(legal), key=lambda c: self.strength[c])

        def gain(c: Card) -> tuple[int, int]:
            master = self.is_master(c) and self.points[c] >= 10
            return (self.points[c] - (6 if master else 0), -self.strength[c])

        return max(_low_cards(plain), key=gain)
