"""The ``pimc`` bot: perfect-information Monte Carlo over hands consistent with the play.

For a card decision it deals the unseen cards to the other seats many times, respecting
everything observed (how many cards each seat holds, shown voids, cards shown by
announcements, belote or the turned card), rebuilds each sample as a full-information
engine state by replaying the round, plays every legal card followed by a fast greedy
playout of the rest of the round for all four seats, and picks the card with the best
average round score. Samples whose replay contradicts what was seen (an announcement or a
belote the seat did not declare) are redrawn. Bidding is the ``rules`` bot's, checked in
classic against sampled deals.

With three players (RULES.md §12) the same, for three seats. With two (§13) a sample deals
the face-down cards nobody has seen under the face-up cards that still cover one (the
observation's ``open_deck``) and replays the round from that deal.

The budget is a number of samples (reproducible, the default) or a time in seconds.
"""

from __future__ import annotations

import random
import time

from belote_p2p.bot import (
    ABOVE,
    BIDS,
    CAPOT_POINTS,
    CARDS,
    CHOOSE,
    COINCHE_FAILED_BASE,
    PASS,
    POINTS,
    STRENGTH,
    TAKE,
    TRUMP_MASK,
    Action,
    Bid,
    BidKind,
    Card,
    IllegalActionError,
    Observation,
    Phase,
    RoundScore,
    State,
    deal_owners,
)

from .rules_bot import RulesBot

_REDRAWS = 12
JACK, NINE, ACE = 4, 2, 7
_VALUES = (80, 90, 100, 110, 120, 130, 140, 150, 160)


def _cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


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


def sample_hands(obs: Observation, rng: random.Random) -> list[int] | None:
    """Unplayed cards for every seat (masks), consistent with ``obs``; None after a dead end.

    Cards are placed most-constrained first, each on a seat drawn in proportion to the room
    it has left, so a single pass rarely fails.
    """
    me = obs.seat
    played = played_by_seat(obs)
    n = len(played)
    hands = [0] * n
    hands[me] = obs.hand_mask
    room = [0] * n
    allowed = [0] * n
    pool = obs.unseen()
    for s in range(n):
        if s == me:
            continue
        shown = obs.shown[s] & pool
        hands[s] = shown
        pool &= ~shown
    for s in range(n):
        if s == me:
            continue
        room[s] = 8 - played[s].bit_count() - hands[s].bit_count()
        allowed[s] = obs.possible(s)
    if sum(room) != pool.bit_count() or min(room) < 0:
        return None
    cards = _cards(pool)
    rng.shuffle(cards)
    options = []
    for c in cards:
        bit = 1 << c
        options.append((sum(1 for s in range(n) if allowed[s] & bit), c))
    options.sort(key=lambda x: x[0])
    for _, c in options:
        bit = 1 << c
        seats = [s for s in range(n) if room[s] and allowed[s] & bit]
        if not seats:
            return None
        total = sum(room[s] for s in seats)
        pick = rng.randrange(total)
        for s in seats:
            pick -= room[s]
            if pick < 0:
                break
        hands[s] |= bit
        room[s] -= 1
    return hands


def rebuild(obs: Observation, hands: list[int]) -> State | None:
    """The full-information state of ``obs`` with these unplayed hands, or None if the
    replay contradicts what was observed."""
    played = played_by_seat(obs)
    full = [_cards(hands[s] | played[s]) for s in range(len(played))]
    try:
        start = State.for_play(
            obs.rules,
            dealer=obs.dealer,
            hands=full,
            trump=obs.trump,
            taker=obs.taker,
            contract=obs.contract,
            multiplier=obs.multiplier,
            pending=obs.pending,
        )
    except ValueError:
        return None
    state = _replay(obs, start)
    if state is None or state.belote != obs.belote:
        return None
    for s in range(len(played)):
        if obs.declared[s] is not None and state.declared[s] != obs.declared[s]:
            return None
    return state


def rebuild_two_handed(obs: Observation, rng: random.Random) -> State | None:
    """Two-handed: a full-information state of ``obs`` with the face-down cards still
    unknown dealt at random under the face-up cards that cover them; None if the replay
    fails (it cannot, for an observation of a legal round)."""
    deck = list(obs.open_deck)
    known = 0
    for c in deck:
        if c is not None:
            known |= 1 << c
    unseen = _cards(obs.rules.deck_mask & ~known)
    rng.shuffle(unseen)
    full = [c if c is not None else unseen.pop() for c in deck]
    try:
        state = State.new_game(obs.rules.with_(first_dealer=obs.dealer)).deal(full)
    except ValueError:
        return None
    return _replay(obs, state)


def _replay(obs: Observation, state: State) -> State | None:
    """``state`` (at the round's first card) after the cards ``obs`` saw played, or None
    if one is illegal there."""
    try:
        for trick in obs.tricks:
            for c in trick.cards:
                state = state.apply(c)
        for c in obs.trick:
            state = state.apply(c)
    except IllegalActionError:
        return None
    return state


def greedy_card(state: State) -> Card:
    """A fast full-information move: cash masters, load a partner's trick, win cheaply."""
    m = state.legal_mask()
    if not m & (m - 1):
        return CARDS[m.bit_length() - 1]
    trump = state.trump
    st = STRENGTH[trump]
    pts = POINTS[trump]
    above = ABOVE[trump]
    seat = state.to_act
    others = state.rules.deck_mask & ~state.played & ~state.hands[seat]
    trick = state.trick
    legal = _cards(m)
    if not trick:
        best: Card | None = None
        for c in legal:
            if not above[c] & others and (best is None or (pts[c], st[c]) > (pts[best], st[best])):
                best = c
        if best is not None:
            return best
        return min(legal, key=lambda c: (pts[c], st[c]))
    top = trick[state.best]
    last = len(trick) == state.seats - 1
    if state.seats == 4 and (state.leader + state.best) % 2 == seat % 2:
        tm = TRUMP_MASK[trump]
        safe = last or not above[top] & others
        if safe:
            plain = [c for c in legal if not tm >> c & 1] or legal
            return max(plain, key=lambda c: (pts[c], -st[c]))
        return min(legal, key=lambda c: (pts[c], st[c]))
    winners = [
        c for c in legal if (c >> 3 == top >> 3 and st[c] > st[top]) or (st[c] >= 8 and st[top] < 8)
    ]
    if winners:
        if last:
            return max(winners, key=lambda c: (pts[c] - (st[c] >= 8) * 20, -st[c]))
        masters = [c for c in winners if not above[c] & others]
        if masters:
            return min(masters, key=lambda c: (st[c] >= 8, st[c]))
        return min(winners, key=lambda c: st[c])
    return min(legal, key=lambda c: (pts[c], st[c]))


def finish(state: State) -> RoundScore | None:
    """Finish the round greedily; its score (None if it ended without one)."""
    n = len(state.history)
    while len(state.history) == n:
        state = state.apply(greedy_card(state))
    return state.history[-1].score


def net(score: tuple[int, ...], side: int) -> float:
    """``side``'s round score minus the other side's (with three players: minus the mean of
    the two others'); ``side`` is a team with four seats, a seat otherwise."""
    if len(score) == 2:
        return score[side] - score[1 - side]
    others = [x for i, x in enumerate(score) if i != side]
    return score[side] - sum(others) / len(others)


def playout(state: State, team: int) -> float:
    """Finish the round greedily; :func:`net` of its score for ``team`` (a seat without
    teams)."""
    score = finish(state)
    if score is None:
        return 0
    return net(score.score, team)


def contract_net(score: RoundScore, team: int, value: int) -> int:
    """What ``team`` would net (its score minus the other's) holding an undoubled coinche
    contract of ``value`` in a round that ended as ``score`` (RULES.md §9)."""
    us, them = score.totals[team], score.totals[1 - team]
    if value == CAPOT_POINTS:
        made = score.capot == team
    else:
        made = us >= value and us > them
    if made:
        return value + us - them
    shown = score.announcements[0] + score.announcements[1]
    return score.belote[team] - (COINCHE_FAILED_BASE + value + shown + score.belote[1 - team])


class PimcBot:
    """The ``pimc`` bot; ``iterations`` samples per decision, or ``seconds`` if given."""

    def __init__(
        self,
        iterations: int = 24,
        seconds: float = 0.0,
        bid_samples: int = 16,
        bid_margin: int = 40,
        auction_samples: int = 24,
        auction_margin: int = 40,
        auction_success: float = 0.6,
        capot_success: float = 0.9,
        auction_oversample: int = 4,
    ) -> None:
        self.iterations = iterations
        self.seconds = seconds
        self.bid_samples = bid_samples
        self.bid_margin = bid_margin
        self.auction_samples = auction_samples
        self.auction_margin = auction_margin
        self.auction_success = auction_success
        self.capot_success = capot_success
        self.auction_oversample = auction_oversample
        self.rules = RulesBot()

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        obs = observation
        if len(obs.legal) == 1:
            return obs.legal[0]
        if obs.phase is Phase.PLAY:
            return self.play(obs, rng)
        if obs.phase in (Phase.TAKE_FIRST, Phase.TAKE_SECOND) and self.bid_samples > 0:
            return self.take_or_choose(obs, rng)
        if obs.phase is Phase.AUCTION and self.auction_samples > 0:
            return self.auction(obs, rng)
        return self.rules.decide(obs, rng)

    def _budget(self) -> tuple[int, float]:
        if self.seconds > 0:
            return 1 << 30, time.perf_counter() + self.seconds
        return self.iterations, float("inf")

    def play(self, obs: Observation, rng: random.Random) -> Action:
        legal = [c for c in obs.legal if isinstance(c, int)]
        preferred = self.rules.play(obs)
        totals = dict.fromkeys(legal, 0.0)
        team = obs.team
        count, stop = self._budget()
        done = 0
        for _ in range(count):
            state = None
            if obs.open_deck:
                state = rebuild_two_handed(obs, rng)
            for _ in range(0 if obs.open_deck else _REDRAWS):
                hands = sample_hands(obs, rng)
                if hands is not None:
                    state = rebuild(obs, hands)
                    if state is not None:
                        break
            if state is None:
                continue
            for c in legal:
                totals[c] += playout(state.apply(c), team)
            done += 1
            if time.perf_counter() > stop:
                break
        if not done:
            return preferred
        # Ties go to the rules bot's choice: it knows conventions the playouts ignore.
        return max(legal, key=lambda c: (totals[c], c == preferred))

    # -- classic bidding checked on sampled deals ---------------------------------------

    def take_or_choose(self, obs: Observation, rng: random.Random) -> Action:
        suggested = self.rules.decide(obs, rng)
        assert obs.turned is not None
        turned_suit = obs.turned >> 3
        if obs.phase is Phase.TAKE_FIRST:
            options: list[Action] = [TAKE]
            trumps = [turned_suit]
        else:
            trumps = [s for s in range(4) if CHOOSE[s] in obs.legal]
            options = [CHOOSE[s] for s in trumps]
        values = [0.0] * len(options)
        for _ in range(self.bid_samples):
            deck = self._sample_deck(obs, rng)
            for i, action in enumerate(options):
                values[i] += self._contract_value(obs, deck, action)
        best = max(range(len(options)), key=lambda i: values[i])
        mean = values[best] / max(self.bid_samples, 1)
        # The samples overrule the rules bot's bid only when they disagree clearly: greedy
        # full-information playouts are a noisy judge of a whole contract.
        if suggested == PASS:
            return options[best] if mean > self.bid_margin else PASS
        chosen = options.index(suggested) if suggested in options else best
        if values[chosen] / max(self.bid_samples, 1) < -self.bid_margin:
            return PASS
        return suggested

    @staticmethod
    def _sample_deck(obs: Observation, rng: random.Random) -> list[Card]:
        """A deck that deals this seat its hand and turns the observed card."""
        owners = deal_owners(obs.rules, obs.dealer)
        assert obs.turned is not None
        rest = _cards(obs.rules.deck_mask & ~obs.hand_mask & ~(1 << obs.turned))
        rng.shuffle(rest)
        mine = list(obs.hand)
        deck: list[Card] = []
        for owner in owners:
            if owner == obs.seat:
                deck.append(mine.pop())
            elif owner == -1:
                deck.append(obs.turned)
            else:
                deck.append(rest.pop())
        return deck

    @staticmethod
    def _contract_value(obs: Observation, deck: list[Card], action: Action) -> float:
        state = State.new_game(obs.rules.with_(first_dealer=obs.dealer)).deal(deck)
        for _, bid in obs.bids:
            state = state.apply(bid)
        state = state.apply(action)
        return playout(state, obs.team)

    # -- coinche auction: contracts valued on sampled deals -----------------------------

    def auction(self, obs: Observation, rng: random.Random) -> Action:
        """A coinche bid: the ``rules`` bid unless the samples clearly prefer another one.

        Every sample deals the unseen cards uniformly (the bids of the others are not used)
        and is played out greedily once per trump suit; the same playout values a contract
        of that suit for either side, since the greedy policy ignores who took. A contract's
        value is its mean net score over the samples; passing is worth 0 with no contract
        yet, or the current contract's value for the side that holds it.
        """
        suggested = self.rules.decide(obs, rng)
        if obs.multiplier != 1 or not isinstance(suggested, Bid):
            return suggested
        if suggested.kind is not BidKind.PASS and suggested.kind is not BidKind.BID:
            return suggested  # coinche: the rules bot's defensive judgement
        if obs.contract >= CAPOT_POINTS or (obs.taker >= 0 and not 0 <= obs.trump < 4):
            return suggested
        candidates = [
            (a.value, a.trump)
            for a in obs.legal
            if isinstance(a, Bid)
            and a.kind is BidKind.BID
            and 0 <= a.trump < 4
            and (a.value in _VALUES or a.value == CAPOT_POINTS)
        ]
        if not candidates:
            return suggested
        rounds = self._sample_rounds(obs, rng)
        if not rounds:
            return suggested
        team = obs.team
        n = len(rounds)

        def value_of(value: int, trump: int, side: int) -> tuple[float, float]:
            nets = [contract_net(r[trump], side, value) for r in rounds]
            made = sum(1 for x in nets if x > 0)
            return sum(nets) / n, made / n

        if obs.taker < 0:
            pass_value = 0.0
        elif obs.taker % 2 == team:
            pass_value = value_of(obs.contract, obs.trump, team)[0]
        else:
            pass_value = -value_of(obs.contract, obs.trump, 1 - team)[0]
        best: tuple[int, int] | None = None
        best_value = float("-inf")
        for value, trump in candidates:
            mean, success = value_of(value, trump, team)
            needed = self.capot_success if value == CAPOT_POINTS else self.auction_success
            if success >= needed and mean > best_value:
                best, best_value = (value, trump), mean
        margin = self.auction_margin
        if suggested.kind is BidKind.BID and (suggested.value, suggested.trump) in candidates:
            rules_value = value_of(suggested.value, suggested.trump, team)[0]
        else:
            rules_value = pass_value
        if best is not None and best_value > max(rules_value, pass_value) + margin:
            return BIDS[best]
        if suggested.kind is BidKind.BID and rules_value < pass_value - margin:
            return PASS
        return suggested

    def _sample_deals(self, obs: Observation, rng: random.Random) -> list[list[int]]:
        """Deals consistent with this hand; when others have spoken, the ones (of a few
        times more drawn) that best fit their bids and passes as the ``rules`` bot reads a
        hand."""
        spoken = any(seat != obs.seat for seat, _ in obs.bids)
        draws = self.auction_samples * (self.auction_oversample if spoken else 1)
        deals: list[list[int]] = []
        for _ in range(draws):
            for _ in range(_REDRAWS):
                hands = sample_hands(obs, rng)
                if hands is not None:
                    deals.append(hands)
                    break
        if not spoken:
            return deals
        ranked = sorted(range(len(deals)), key=lambda i: (self._misfit(obs, deals[i]), i))
        return [deals[i] for i in ranked[: self.auction_samples]]

    def _misfit(self, obs: Observation, hands: list[int]) -> int:
        """How far a deal's hands fall short of the bids and passes the others made."""
        short = 0
        contract, holder, trump = 0, -1, -1
        estimate = self.rules.estimate
        for seat, bid in obs.bids:
            hand = hands[seat]
            if seat != obs.seat:
                if bid.kind is BidKind.BID and 0 <= bid.trump < 4:
                    if holder >= 0 and (holder - seat) % 2 == 0 and bid.trump == trump:
                        support = sum(1 for r in (JACK, NINE) if hand >> (trump * 8 + r) & 1)
                        support += sum(
                            1 for t in range(4) if t != trump and hand >> (t * 8 + ACE) & 1
                        )
                        short += max(0, bid.value - contract - 10 * support)
                    else:
                        short += max(0, bid.value - estimate(hand, bid.trump))
                elif bid.kind is BidKind.PASS and holder < 0:
                    best = max(estimate(hand, t) for t in range(4))
                    short += max(0, best - 79)
            if bid.kind is BidKind.BID:
                contract, holder, trump = bid.value, seat, bid.trump
        return short

    def _sample_rounds(self, obs: Observation, rng: random.Random) -> list[list[RoundScore]]:
        """For each sampled deal, the greedy playout's score with each suit as trump."""
        out: list[list[RoundScore]] = []
        for hands in self._sample_deals(obs, rng):
            full = [_cards(h) for h in hands]
            scores: list[RoundScore] = []
            for trump in range(4):
                state = State.for_play(
                    obs.rules, dealer=obs.dealer, hands=full, trump=trump, taker=obs.seat
                )
                score = finish(state)
                if score is None:
                    break
                scores.append(score)
            if len(scores) == 4:
                out.append(scores)
        return out


__all__ = [
    "PimcBot",
    "contract_net",
    "finish",
    "greedy_card",
    "playout",
    "rebuild",
    "rebuild_two_handed",
    "sample_hands",
]
