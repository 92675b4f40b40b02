"""An unchecked, allocation-light card play for search: :class:`FastState`.

:class:`~belote_p2p.game.engine.State` is the authority: immutable, every action checked,
every claim remembered, what peers, the referee and the audit rely on. Search needs the
opposite: play thousands of positions out, trying a card and taking it back. ``FastState``
is that, beside the engine (as python-chess has an unchecked ``push`` beside its checked
moves): the four hands are 32-bit masks in a list, the trick is a short list of card ints,
the points two ints; :meth:`FastState.push` plays a card and :meth:`FastState.pop` takes it
back, :meth:`FastState.play` plays one for good (a playout on a :meth:`FastState.copy`).

Nothing is checked: a card that is not legal (see :meth:`FastState.legal_mask`) gives a
meaningless position. It plays the card play of every variant (a trump suit, sans-atout,
tout-atout; the obligations of RULES.md §4 with the rule-set knobs ``partner_master_frees``
and ``must_overtrump_on_trump_lead``; belote; dix de der; capot and générale) and scores the
round exactly as the engine does (:func:`round_score`; the tests compare both on thousands
of random rounds). Build one from a full-knowledge ``State`` (:meth:`FastState.from_state`),
from a bot's observation and a sampled deal of the unseen cards
(:meth:`FastState.from_observation`), or from four hands at the first card
(:meth:`FastState.new`).

:func:`random_round` plays a whole random round (deal, bidding, 32 plays, scoring) on this
path alone: the benchmark of ``benchmarks/engine.py``, and a fast source of random deals.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .announcements import Announcement, find_announcements
from .cards import SUIT_MASKS
from .engine import Phase, State, Trick, deal_owners, pile_positions
from .rules import CLASSIC, COINCHE, RuleSet
from .scoring import (
    CAPOT_POINTS,
    CLASSIC_FAILED_POINTS,
    COINCHE_FAILED_BASE,
    GENERALE_POINTS,
)
from .tables import (
    ABOVE,
    ALL_TRUMP,
    BEATS,
    LAST_TRICK_BONUS,
    NO_TRUMP,
    POINTS,
    STRENGTH,
    TRUMP_MASK,
    winning_index,
)

if TYPE_CHECKING:
    from .observation import Observation

KING, QUEEN = 6, 5
_INF = float("inf")
_EXACT, _LOWER, _UPPER = 0, 1, 2
"""What a value remembered by :meth:`FewFastState.search` is: the position's value, or a
bound of it (the search stopped early at one of its window's ends)."""

# -- announcements and belote, from masks -----------------------------------------------------


def _seq_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    points = []
    keys = []
    for pattern in range(256):
        total = best = 0
        r = 0
        while r < 8:
            if pattern >> r & 1:
                start = r
                while r < 8 and pattern >> r & 1:
                    r += 1
                length = r - start
                if length >= 3:
                    p = 20 if length == 3 else 50 if length == 4 else 100
                    total += p
                    best = max(best, announcement_key(p, 0, length, r - 1, 0))
            else:
                r += 1
        points.append(total)
        keys.append(best)
    return tuple(points), tuple(keys)


def announcement_key(points: int, carre: int, length: int, top: int, in_trump: int) -> int:
    """An :attr:`Announcement.key` folded into one int that compares the same way."""
    return (((points * 2 + carre) * 16 + length) * 8 + top) * 2 + in_trump


def _key_of(a: Announcement) -> int:
    return announcement_key(*a.key)


_SEQ_POINTS, _SEQ_KEYS = _seq_tables()


def hand_announcements(hand: int, mode: int) -> tuple[int, int]:
    """The points of the announcements an 8-card hand declares and the key of its best one
    (0 for none), as :func:`~belote_p2p.game.announcements.find_announcements` finds them."""
    if hand & hand >> 8 & hand >> 16 & hand >> 24 & 0xFC:
        anns = find_announcements(hand, mode)  # a carré: the general search
        if not anns:
            return 0, 0
        return sum(a.points for a in anns), max(_key_of(a) for a in anns)
    sp, sk = _SEQ_POINTS, _SEQ_KEYS
    b0, b1, b2, b3 = hand & 0xFF, hand >> 8 & 0xFF, hand >> 16 & 0xFF, hand >> 24 & 0xFF
    total = sp[b0] + sp[b1] + sp[b2] + sp[b3]
    if not total:
        return 0, 0
    k0, k1, k2, k3 = sk[b0], sk[b1], sk[b2], sk[b3]
    if mode == ALL_TRUMP:
        return total, max(k0, k1, k2, k3) + 1
    if mode == 0 and k0:
        k0 += 1
    elif mode == 1 and k1:
        k1 += 1
    elif mode == 2 and k2:
        k2 += 1
    elif mode == 3 and k3:
        k3 += 1
    return total, max(k0, k1, k2, k3)


def team_announcements(points: Sequence[int], keys: Sequence[int], first: int) -> tuple[int, int]:
    """What each team scores for announcements, from each seat's points and best key: only
    the team of the single best one scores, and at equal keys the seat nearer ``first``."""
    best_key = 0
    best_seat = -1
    for i in range(4):
        seat = (first + i) % 4
        if keys[seat] > best_key:
            best_key, best_seat = keys[seat], seat
    if best_seat < 0:
        return 0, 0
    team = best_seat & 1
    total = points[team] + points[team + 2]
    return (total, 0) if team == 0 else (0, total)


def belote_holders(hands: Sequence[int], mode: int) -> tuple[int, int]:
    """Belote points each team will score from hands that still hold both the king and the
    queen of a trump suit (20 per pair)."""
    if mode == NO_TRUMP:
        return 0, 0
    suits = range(4) if mode == ALL_TRUMP else (mode,)
    out = [0, 0]
    for seat in range(4):
        h = hands[seat]
        for s in suits:
            pair = 1 << (s * 8 + KING) | 1 << (s * 8 + QUEEN)
            if h & pair == pair:
                out[seat & 1] += 20
    return out[0], out[1]


# -- scoring ----------------------------------------------------------------------------------


def round_score(
    coinche: bool,
    taker: int,
    contract: int,
    multiplier: int,
    card_points: tuple[int, int],
    announcements: tuple[int, int],
    belote: tuple[int, int],
    pending: int,
    generale: int = -1,
) -> tuple[int, int, int]:
    """What each team adds to its score, and the litige pot after the round.

    ``card_points`` are as scored: 250 (capot) or 500 (générale) to the team that took
    every trick, 0 to the other; ``generale`` is the seat that took them all alone, if one
    did (-1). The same arithmetic as :func:`~belote_p2p.game.scoring.score_round`,
    without building a record (RULES.md §7 and §9)."""
    t = taker & 1
    c0, c1 = card_points
    a0, a1 = announcements
    b0, b1 = belote
    tot0 = c0 + a0 + b0
    tot1 = c1 + a1 + b1
    tt, td = (tot0, tot1) if t == 0 else (tot1, tot0)
    if coinche:
        if contract == GENERALE_POINTS:
            made = generale == taker
        elif contract == CAPOT_POINTS:
            made = (c0 if t == 0 else c1) >= CAPOT_POINTS
        else:
            made = tt >= contract and tt > td
        winner = t if made else 1 - t
        if multiplier > 1 or not made:
            won = COINCHE_FAILED_BASE + contract * multiplier + a0 + a1 + (b0, b1)[winner]
            lost = (b0, b1)[1 - winner]
            s0, s1 = (won, lost) if winner == 0 else (lost, won)
        else:
            s0, s1 = (contract + tot0, tot1) if t == 0 else (tot0, contract + tot1)
    elif tt > td:
        winner = t
        s0, s1 = tot0, tot1
    elif tt < td:
        winner = 1 - t
        cw = c0 if winner == 0 else c1
        base = cw if cw >= CAPOT_POINTS else CLASSIC_FAILED_POINTS
        won = base + a0 + a1 + (b0, b1)[winner]
        lost = (b0, b1)[1 - winner]
        s0, s1 = (won, lost) if winner == 0 else (lost, won)
    else:  # litige
        bt = b0 if t == 0 else b1
        s0, s1 = (bt, tot1) if t == 0 else (tot0, bt)
        return s0, s1, pending + tt - bt
    if pending:
        if winner == 0:
            s0 += pending
        else:
            s1 += pending
    return s0, s1, 0


# -- the fast state ---------------------------------------------------------------------------


class FastState:
    """The card play of one round, mutable and unchecked, for search (see the module).

    Read its fields freely; change them only through :meth:`push`, :meth:`pop` and
    :meth:`play`.
    """

    __slots__ = (
        "announcements",
        "belote",
        "best",
        "coinche",
        "contract",
        "free",
        "hands",
        "leader",
        "length",
        "mode",
        "multiplier",
        "overtrump",
        "pending",
        "points",
        "seats",
        "stack",
        "taker",
        "to_act",
        "trick",
        "tricks",
        "wins",
    )

    hands: list[int]
    """The unplayed cards of each seat (masks)."""
    mode: int
    """The trump mode: a suit, ``NO_TRUMP`` or ``ALL_TRUMP``."""
    to_act: int
    leader: int
    """The seat that led the current trick."""
    trick: list[int]
    """The cards of the current trick, in play order from ``leader``."""
    best: int
    """The index in ``trick`` of the card winning it so far."""
    points: list[int]
    """Each team's card points in the tricks it took (dix de der included)."""
    tricks: int
    """Tricks finished."""
    wins: int
    """Bit ``s`` set when seat ``s`` took a trick (for capot and générale)."""
    stack: list[tuple[int, int, int, int, int, int, int, list[int] | None]]
    free: bool
    """``RuleSet.partner_master_frees``."""
    overtrump: bool
    """``RuleSet.must_overtrump_on_trump_lead``."""
    coinche: bool
    taker: int
    contract: int
    multiplier: int
    announcements: tuple[int, int]
    """The announcement points each team scores this round."""
    belote: tuple[int, int]
    """The belote points each team scores this round (declared or still to declare)."""
    pending: int
    """The litige pot carried into the round."""
    seats: int
    """4 here; 3 or 2 in a :class:`FewFastState`."""
    length: int
    """The tricks of a round: 8 (16 in two-handed)."""

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        rules: RuleSet,
        hands: Sequence[int],
        trump: int,
        taker: int,
        leader: int,
        contract: int = 0,
        multiplier: int = 1,
        pending: int = 0,
    ) -> FastState:
        """A round at its first card: four 8-card hands (masks), ``leader`` to lead."""
        f = cls._blank(rules, trump, taker, contract, multiplier, pending)
        f.hands = list(hands)
        f.leader = f.to_act = leader
        if rules.announcements:
            pts = [0, 0, 0, 0]
            keys = [0, 0, 0, 0]
            for s in range(4):
                pts[s], keys[s] = hand_announcements(hands[s], trump)
            f.announcements = team_announcements(pts, keys, leader)
        f.belote = belote_holders(hands, trump)
        return f

    @classmethod
    def _blank(
        cls, rules: RuleSet, trump: int, taker: int, contract: int, multiplier: int, pending: int
    ) -> FastState:
        if rules.seats != 4:
            raise ValueError(
                f"the fast path plays four seats, not {rules.name}: use the checked engine"
            )
        f = cls()
        f.mode = trump
        f.trick = []
        f.best = 0
        f.points = [0, 0]
        f.tricks = 0
        f.wins = 0
        f.stack = []
        f.free = rules.partner_master_frees
        f.overtrump = rules.must_overtrump_on_trump_lead
        f.coinche = rules.is_coinche
        f.taker = taker
        f.contract = contract
        f.multiplier = multiplier
        f.pending = pending
        f.announcements = (0, 0)
        f.belote = (0, 0)
        f.seats = 4
        f.length = 8
        return f

    @classmethod
    def from_state(cls, state: State) -> FastState:
        """The round of a full-knowledge engine state in its play phase (a
        :class:`FewFastState` with two or three seats)."""
        if state.phase is not Phase.PLAY or any(state.unknown):
            raise ValueError("a FastState needs a full-knowledge state in its play phase")
        if state.seats != 4:
            return FewFastState.few_from_state(state)
        f = cls._blank(
            state.rules, state.trump, state.taker, state.contract, state.multiplier, state.pending
        )
        f.hands = list(state.hands)
        f._set_history(
            state.leader,
            state.to_act,
            list(state.trick),
            [(t.winner, t.points) for t in state.tricks],
        )
        first = (state.dealer + 1) % 4
        f._set_declarations(state.rules, state.declared, state.belote, first)
        return f

    @classmethod
    def from_observation(
        cls, obs: Observation, hands: Sequence[int], under: Sequence[int] | None = None
    ) -> FastState:
        """The round a bot observes, with ``hands`` the unplayed cards of every seat (its own
        and a deal of the unseen cards it sampled). With two or three seats a
        :class:`FewFastState`; two-handed, ``hands`` are the face-up cards (the
        observation's ``shown``) and ``under[c]`` the face-down card sampled under face-up
        card ``c`` (-1: none), for every face-up card not played yet."""
        if obs.phase is not Phase.PLAY:
            raise ValueError("a FastState starts in the play phase")
        if obs.rules.seats != 4:
            return FewFastState.few_from_observation(obs, hands, under)
        f = cls._blank(obs.rules, obs.trump, obs.taker, obs.contract, obs.multiplier, obs.pending)
        f.hands = list(hands)
        f._set_history(
            obs.leader, obs.to_act, list(obs.trick), [(t.winner, t.points) for t in obs.tricks]
        )
        first = (obs.dealer + 1) % 4
        f._set_declarations(obs.rules, obs.declared, obs.belote, first)
        return f

    def _set_history(
        self, leader: int, to_act: int, trick: list[int], tricks: list[tuple[int, int]]
    ) -> None:
        self.leader = leader
        self.to_act = to_act
        self.trick = trick
        self.best = winning_index(trick, self.mode) if trick else 0
        for winner, pts in tricks:
            self.points[winner & 1] += pts
            self.wins |= 1 << winner
        self.tricks = len(tricks)

    def _set_declarations(
        self,
        rules: RuleSet,
        declared: Sequence[tuple[Announcement, ...] | None],
        belote: Sequence[tuple[int, int]],
        first: int,
    ) -> None:
        mode = self.mode
        if rules.announcements:
            pts = [0, 0, 0, 0]
            keys = [0, 0, 0, 0]
            for s in range(4):
                anns = declared[s]
                if anns is None:
                    # Not played yet: the seat declares what its (whole) hand holds.
                    pts[s], keys[s] = hand_announcements(self.hands[s], mode)
                elif anns:
                    pts[s] = sum(a.points for a in anns)
                    keys[s] = max(_key_of(a) for a in anns)
            self.announcements = team_announcements(pts, keys, first)
        bel = list(belote_holders(self.hands, mode))
        for seat, _ in belote:
            bel[seat & 1] += 20
        self.belote = (bel[0], bel[1])

    def copy(self) -> FastState:
        """An independent copy (its undo stack starts empty)."""
        f = FastState()
        f.hands = self.hands[:]
        f.mode = self.mode
        f.to_act = self.to_act
        f.leader = self.leader
        f.trick = self.trick[:]
        f.best = self.best
        f.points = self.points[:]
        f.tricks = self.tricks
        f.wins = self.wins
        f.stack = []
        f.free = self.free
        f.overtrump = self.overtrump
        f.coinche = self.coinche
        f.taker = self.taker
        f.contract = self.contract
        f.multiplier = self.multiplier
        f.announcements = self.announcements
        f.belote = self.belote
        f.pending = self.pending
        f.seats = 4
        f.length = 8
        return f

    # -- reading ------------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.tricks == self.length

    @property
    def played(self) -> int:
        """Every card played this round (the current trick included)."""
        h = self.hands
        return 0xFFFFFFFF & ~(h[0] | h[1] | h[2] | h[3])

    def out(self) -> int:
        """Every card not played yet (the current trick's excluded), whoever holds it."""
        h = self.hands
        return h[0] | h[1] | h[2] | h[3]

    def legal_mask(self) -> int:
        """The cards the seat to act may play (RULES.md §4), as a mask."""
        hand = self.hands[self.to_act]
        trick = self.trick
        if not trick:
            return hand
        mode = self.mode
        led = trick[0] >> 3
        m = hand & SUIT_MASKS[led]
        top = trick[self.best]
        if mode == NO_TRUMP:
            return m or hand
        if mode == ALL_TRUMP or mode == led:
            if self.overtrump:
                return hand & ABOVE[mode][top] or m or hand
            return m or hand
        if m:
            return m
        if self.free and self.best == len(trick) - 2:
            return hand
        trumps = hand & SUIT_MASKS[mode]
        if top >> 3 == mode:
            return hand & ABOVE[mode][top] or trumps or hand
        return trumps or hand

    def winner_so_far(self) -> int:
        """The seat winning the current trick (the leader before its first card)."""
        return (self.leader + self.best) & 3

    def card_points(self) -> tuple[int, ...]:
        """Each team's card points as they score: 250 or 500 for a capot or a générale."""
        if self.tricks == 8:
            w = self.wins
            if w & 0b1010 == 0 or w & 0b0101 == 0:
                bonus = GENERALE_POINTS if w & (w - 1) == 0 else CAPOT_POINTS
                return (bonus, 0) if w & 0b0101 else (0, bonus)
        return self.points[0], self.points[1]

    def generale(self) -> int:
        """The seat that took all eight tricks alone, or -1."""
        w = self.wins
        if self.tricks == 8 and w & (w - 1) == 0:
            return w.bit_length() - 1
        return -1

    def score(self) -> tuple[int, ...]:
        """What each team adds to its game score for the finished round."""
        cp = self.card_points()
        s0, s1, _ = round_score(
            self.coinche, self.taker, self.contract, self.multiplier, (cp[0], cp[1]),
            self.announcements, self.belote, self.pending, self.generale(),
        )  # fmt: skip
        return s0, s1

    def score_for(self, difference: int) -> tuple[int, int]:
        """The round score if the round ended with team 0's card points minus team 1's equal
        to ``difference`` (what :mod:`.solver` returns, plus the points already taken):
        ``±250`` and ``±500`` are a capot and a générale."""
        if difference in (CAPOT_POINTS, GENERALE_POINTS):
            cp = (difference, 0)
        elif -difference in (CAPOT_POINTS, GENERALE_POINTS):
            cp = (0, -difference)
        else:
            total = sum(POINTS[self.mode]) + LAST_TRICK_BONUS
            half = (total + difference) // 2
            cp = (half, total - half)
        generale = -1
        if abs(difference) == GENERALE_POINTS:
            # Which seat of the team took everything is unknown here: the contract's seat.
            generale = self.taker
        s0, s1, _ = round_score(
            self.coinche, self.taker, self.contract, self.multiplier, cp,
            self.announcements, self.belote, self.pending, generale,
        )  # fmt: skip
        return s0, s1

    # -- playing ------------------------------------------------------------------------------

    def push(self, c: int) -> None:
        """Play card ``c`` (legal, unchecked) for the seat to act; :meth:`pop` takes it back."""
        seat = self.to_act
        trick = self.trick
        best = self.best
        self.hands[seat] ^= 1 << c
        n = len(trick)
        if n:
            if BEATS[self.mode][trick[best]] >> c & 1:
                self.best = n
            if n == 3:
                p = self.points
                self.stack.append((c, seat, best, self.leader, p[0], p[1], self.wins, trick))
                self._close(c)
                return
        self.stack.append((c, seat, best, 0, 0, 0, 0, None))
        trick.append(c)
        self.to_act = (seat + 1) & 3

    def _close(self, c: int) -> None:
        """Finish the trick whose first three cards are in ``trick`` with ``c``."""
        trick = self.trick
        winner = (self.leader + self.best) & 3
        pts = POINTS[self.mode]
        p = pts[trick[0]] + pts[trick[1]] + pts[trick[2]] + pts[c]
        self.tricks += 1
        if self.tricks == 8:
            p += LAST_TRICK_BONUS
        self.points[winner & 1] += p
        self.wins |= 1 << winner
        self.trick = []
        self.best = 0
        self.leader = self.to_act = winner

    def pop(self) -> int:
        """Take back the last card :meth:`push` played; returns it."""
        c, seat, best, leader, p0, p1, wins, closed = self.stack.pop()
        self.hands[seat] |= 1 << c
        if closed is not None:
            self.trick = closed
            self.leader = leader
            self.points[0] = p0
            self.points[1] = p1
            self.wins = wins
            self.tricks -= 1
        else:
            self.trick.pop()
        self.best = best
        self.to_act = seat
        return c

    def play(self, c: int) -> None:
        """Play card ``c`` for good (no undo record): for playouts on a :meth:`copy`."""
        seat = self.to_act
        trick = self.trick
        self.hands[seat] ^= 1 << c
        n = len(trick)
        if n:
            if BEATS[self.mode][trick[self.best]] >> c & 1:
                self.best = n
            if n == 3:
                self._close(c)
                return
        trick.append(c)
        self.to_act = (seat + 1) & 3

    def greedy_card(self) -> int:
        """The card of the greedy playout policy for the seat to act (the ``pimc`` bot's).

        The seat sees its own hand and the cards still out, not who holds them (so that a
        playout does not play double-dummy). Leading, it cashes its richest master (no card
        still out beats it), else plays its poorest card. On a trick its partner wins it
        loads its richest plain card when the trick is surely the partner's (last to play,
        or the winning card is a master), else its poorest card. Otherwise, last to play, it
        takes the trick with its richest winner (a trump counting 20 less); earlier, with its
        weakest master winner, else its weakest winner; with no winner, its poorest card.
        "Poorest" is fewest points, then weakest; ties go to the lowest card number."""
        m = self.legal_mask()
        if not m & (m - 1):
            return m.bit_length() - 1
        mode = self.mode
        st = STRENGTH[mode]
        pts = POINTS[mode]
        above = ABOVE[mode]
        seat = self.to_act
        others = self.out() & ~self.hands[seat]
        trick = self.trick
        if not trick:
            masters = _masters(m, above, others)
            return _cashed(masters, pts, st) if masters else _poorest(m, pts, st)
        top = trick[self.best]
        n = self.seats
        last = len(trick) == n - 1
        if n == 4 and (self.leader + self.best - seat) & 1 == 0:  # the partner wins it so far
            if last or not above[top] & others:
                tm = TRUMP_MASK[mode] if mode < 4 else 0
                return _richest(m & ~tm or m, pts, st)
            return _poorest(m, pts, st)
        winners = _winners(m, top, mode)
        if not winners:
            return _poorest(m, pts, st)
        if last:
            best = -1
            key = -1000
            while winners:
                low = winners & -winners
                c = low.bit_length() - 1
                winners ^= low
                k = (pts[c] - 20 * (st[c] >= 8)) * 16 - st[c]
                if k > key:
                    best, key = c, k
            return best
        return _weakest(_masters(winners, above, others) or winners, st)

    def careful_card(self) -> int:
        """The card of the careful playout policy for the seat to act (the ``expert`` bot's):
        the greedy policy (:meth:`greedy_card`, seeing as little) with its high cards and
        trumps kept for later tricks.

        Leading, it cashes its richest master (on the taker's side a trump first, on the
        other side never a trump), else plays its poorest card. On a trick its partner
        surely wins it loads its richest plain card that is not a master (else its richest
        plain card), on one the partner may lose its poorest card. Otherwise it takes the
        trick, if it can, last to play with its poorest winner, earlier with its weakest
        trump when only trumps win, else with its weakest master winner; with no master
        winner it plays its poorest card (its weakest winner when every card wins)."""
        m = self.legal_mask()
        if not m & (m - 1):
            return m.bit_length() - 1
        mode = self.mode
        st = STRENGTH[mode]
        pts = POINTS[mode]
        above = ABOVE[mode]
        tm = TRUMP_MASK[mode] if mode < 4 else 0
        seat = self.to_act
        n = self.seats
        others = self.out() & ~self.hands[seat]
        trick = self.trick
        if not trick:
            if (seat - self.taker) % 2 == 0 if n == 4 else seat == self.taker:  # taker's side
                masters = _masters(m, above, others)
                masters = masters & tm or masters
            else:
                masters = _masters(m & ~tm, above, others)
            return _cashed(masters, pts, st) if masters else _poorest(m, pts, st)
        top = trick[self.best]
        last = len(trick) == n - 1
        if n == 4 and (self.leader + self.best - seat) & 1 == 0:  # the partner wins it so far
            if last or not above[top] & others:
                rest = m & ~tm or m
                return _richest(rest & ~_masters(rest, above, others) or rest, pts, st)
            return _poorest(m, pts, st)
        winners = _winners(m, top, mode)
        if not winners:
            return _poorest(m, pts, st)
        if last:
            return _poorest(winners, pts, st)
        if not winners & ~tm:
            return _weakest(winners, st)
        masters = _masters(winners, above, others)
        if masters:
            return _weakest(masters, st)
        if m & ~winners:
            return _poorest(m, pts, st)
        return _weakest(winners, st)

    def play_greedy(self) -> None:
        """Play the rest of the round for good, every seat by :meth:`greedy_card`."""
        length = self.length
        while self.tricks < length:
            self.play(self.greedy_card())

    def play_careful(self) -> None:
        """Play the rest of the round for good, every seat by :meth:`careful_card`."""
        length = self.length
        while self.tricks < length:
            self.play(self.careful_card())

    def play_random(self, rng: random.Random) -> None:
        """Play the rest of the round with uniformly random legal cards, for good.

        The loop of :meth:`legal_mask` and :meth:`play`, written out in one function."""
        rand = rng.random
        hands = self.hands
        mode = self.mode
        beats = BEATS[mode]
        pts = POINTS[mode]
        above = ABOVE[mode]
        kind = 1 if mode == NO_TRUMP else 2 if mode == ALL_TRUMP else 0
        tmask = SUIT_MASKS[mode] if kind == 0 else 0
        free = self.free
        over = self.overtrump
        seat = self.to_act
        trick = self.trick
        n = len(trick)
        lead = self.leader
        if n:
            led = trick[0] >> 3
            top = trick[self.best]
            win = (lead + self.best) & 3
            tp = sum(pts[c] for c in trick)
        else:
            led = top = win = tp = 0
        tricks = self.tricks
        points = self.points
        wins = self.wins
        suits = SUIT_MASKS
        while tricks < 8:
            hand = hands[seat]
            if n == 0:
                m = hand
            else:
                m = hand & suits[led]
                if kind == 1:
                    m = m or hand
                elif kind == 2 or led == mode:
                    m = (hand & above[top] or m or hand) if over else (m or hand)
                elif not m:
                    if free and win ^ seat == 2:
                        m = hand
                    elif top >> 3 == mode:
                        m = hand & above[top] or hand & tmask or hand
                    else:
                        m = hand & tmask or hand
            k = m.bit_count()
            if k > 1:
                for _ in range(int(rand() * k)):
                    m &= m - 1
            bit = m & -m
            c = bit.bit_length() - 1
            hands[seat] = hand ^ bit
            if n == 0:
                led = c >> 3
                top = c
                win = lead = seat
                tp = pts[c]
                n = 1
                seat = (seat + 1) & 3
                continue
            if beats[top] >> c & 1:
                top = c
                win = seat
            tp += pts[c]
            if n < 3:
                n += 1
                seat = (seat + 1) & 3
                continue
            tricks += 1
            if tricks == 8:
                tp += LAST_TRICK_BONUS
            points[win & 1] += tp
            wins |= 1 << win
            seat = win
            n = 0
        self.trick = []
        self.best = 0
        self.leader = self.to_act = seat
        self.tricks = tricks
        self.wins = wins


# -- two or three seats -----------------------------------------------------------------------


def seat_announcements(
    points: Sequence[int], keys: Sequence[int], first: int, seats: int
) -> tuple[int, ...]:
    """Three-handed: what each seat scores for announcements, from each seat's points and
    best key: only the seat of the single best one scores (at equal keys, the seat nearer
    ``first``)."""
    best_key = 0
    best_seat = -1
    for i in range(seats):
        seat = (first + i) % seats
        if keys[seat] > best_key:
            best_key, best_seat = keys[seat], seat
    out = [0] * seats
    if best_seat >= 0:
        out[best_seat] = points[best_seat]
    return tuple(out)


def few_round_score(
    taker: int,
    card_points: Sequence[int],
    announcements: Sequence[int],
    belote: Sequence[int],
) -> tuple[int, ...]:
    """What each seat adds to its score for a round of three-handed or two-handed (``taker``
    -1): the arithmetic of :func:`~belote_p2p.game.scoring.score_round_few` without a
    record (``card_points`` as scored: 250 to a seat that took every trick)."""
    n = len(card_points)
    totals = [card_points[s] + announcements[s] + belote[s] for s in range(n)]
    if taker < 0:
        return tuple(totals)
    tt = totals[taker]
    made = True
    for s in range(n):
        if s != taker and totals[s] >= tt:
            made = False
    if made:
        return tuple(totals)
    half = (card_points[taker] + announcements[taker]) // 2
    return tuple([belote[s] if s == taker else totals[s] + half for s in range(n)])


class FewFastState(FastState):
    """The fast path with three seats (RULES.md §12) or two (§13): every seat for itself.

    As :class:`FastState`, with ``seats`` hands and per-seat ``points``. Two-handed, the
    hands are the face-up cards (what each player may play) and :attr:`under` the
    face-down card under each face-up one (a deal of them sampled by the bot: nobody sees
    them), turned up into its owner's hand when the trick of the card above it ends.
    :meth:`score` gives one score per seat. The double-dummy :class:`Solver` plays four
    seats only.
    """

    __slots__ = ("done", "few_stack", "hidden", "seat_announcements", "seat_belote", "under")

    done: int
    """Every card played this round (the current trick included)."""
    hidden: int
    """Two-handed: the face-down cards not turned up yet (0 otherwise)."""
    under: list[int]
    """Two-handed: ``under[c]`` the face-down card under face-up card ``c`` still to turn
    up (-1: none); ``[]`` in three-handed."""
    seat_announcements: tuple[int, ...]
    """The announcement points each seat scores this round."""
    seat_belote: tuple[int, ...]
    """The belote points each seat scores this round."""
    few_stack: list[tuple[int, int, int, int, int, int, int, list[int] | None]]

    @classmethod
    def _few_blank(cls, rules: RuleSet, trump: int, taker: int) -> FewFastState:
        n = rules.seats
        if n not in (2, 3):
            raise ValueError(f"a FewFastState plays two or three seats, not {rules.name}")
        f = cls()
        f.mode = trump
        f.trick = []
        f.best = 0
        f.points = [0] * n
        f.tricks = 0
        f.wins = 0
        f.stack = []
        f.few_stack = []
        f.free = False  # no partner
        f.overtrump = rules.must_overtrump_on_trump_lead
        f.coinche = False
        f.taker = taker
        f.contract = 0
        f.multiplier = 1
        f.pending = 0
        f.announcements = (0, 0)
        f.belote = (0, 0)
        f.seats = n
        f.length = rules.tricks_per_round
        f.done = 0
        f.hidden = 0
        f.under = []
        f.seat_announcements = (0,) * n
        f.seat_belote = (0,) * n
        return f

    @classmethod
    def new_few(
        cls, rules: RuleSet, hands: Sequence[int], trump: int, taker: int, leader: int
    ) -> FewFastState:
        """Three-handed: a round at its first card, three 8-card hands (masks)."""
        f = cls._few_blank(rules, trump, taker)
        n = f.seats
        f.hands = [hands[s] for s in range(n)]
        f.leader = f.to_act = leader
        f._set_few_declarations(rules, (None,) * n, [0] * n, leader)
        return f

    @classmethod
    def few_from_state(cls, state: State) -> FewFastState:
        """The round of a full-knowledge engine state of two or three seats, in play."""
        n = state.seats
        f = cls._few_blank(state.rules, state.trump, state.taker)
        f.hands = [state.hands[s] for s in range(n)]
        f.done = state.played
        if n == 2:
            deck = state.deck
            under = [-1] * 32
            in_trick = 0
            for c in state.trick:
                in_trick |= 1 << c
            for seat in range(2):
                for down, up in pile_positions(state.dealer, seat):
                    cover, d = deck[up], deck[down]
                    assert cover is not None and d is not None
                    if not state.played >> cover & 1 or in_trick >> cover & 1:
                        under[cover] = d
                        f.hidden |= 1 << d
            f.under = under
        f._few_history(state.leader, state.to_act, list(state.trick), state.tricks)
        first = (state.dealer + 1) % n
        f._set_few_declarations(state.rules, state.declared, f._played_by(state.tricks), first)
        return f

    @classmethod
    def few_from_observation(
        cls, obs: Observation, hands: Sequence[int], under: Sequence[int] | None
    ) -> FewFastState:
        """:meth:`FastState.from_observation` with two or three seats."""
        n = obs.rules.seats
        f = cls._few_blank(obs.rules, obs.trump, obs.taker)
        f.hands = [hands[s] for s in range(n)]
        f.done = obs.played
        if n == 2:
            if under is None:
                raise ValueError("two-handed needs the face-down cards under the face-up ones")
            f.under = list(under)
            for u in f.under:
                if u >= 0:
                    f.hidden |= 1 << u
        f._few_history(obs.leader, obs.to_act, list(obs.trick), obs.tricks)
        first = (obs.dealer + 1) % n
        f._set_few_declarations(obs.rules, obs.declared, f._played_by(obs.tricks), first)
        return f

    def _few_history(
        self, leader: int, to_act: int, trick: list[int], tricks: Sequence[Trick]
    ) -> None:
        self.leader = leader
        self.to_act = to_act
        self.trick = trick
        self.best = winning_index(trick, self.mode) if trick else 0
        for t in tricks:
            self.points[t.winner] += t.points
            self.wins |= 1 << t.winner
        self.tricks = len(tricks)

    def _played_by(self, tricks: Sequence[Trick]) -> list[int]:
        """The cards each seat played this round (masks), from the tricks and this trick."""
        n = self.seats
        out = [0] * n
        for t in tricks:
            for i, c in enumerate(t.cards):
                out[(t.leader + i) % n] |= 1 << c
        for i, d in enumerate(self.trick):
            out[(self.leader + i) % n] |= 1 << d
        return out

    def _set_few_declarations(
        self,
        rules: RuleSet,
        declared: Sequence[tuple[Announcement, ...] | None],
        played: Sequence[int],
        first: int,
    ) -> None:
        n = self.seats
        mode = self.mode
        owned = [self.hands[s] | played[s] for s in range(n)]
        under = self.under
        for s in range(n):
            for c in _bits(self.hands[s]):
                if under and under[c] >= 0:
                    owned[s] |= 1 << under[c]
        for i, c in enumerate(self.trick):
            if under and under[c] >= 0:
                owned[(self.leader + i) % n] |= 1 << under[c]
        if rules.announcements:
            pts = [0] * n
            keys = [0] * n
            for s in range(n):
                anns = declared[s]
                if anns is None:
                    pts[s], keys[s] = hand_announcements(self.hands[s], mode)
                elif anns:
                    pts[s] = sum(a.points for a in anns)
                    keys[s] = max(_key_of(a) for a in anns)
            self.seat_announcements = seat_announcements(pts, keys, first, n)
        bel = [0] * n
        if 0 <= mode < 4:
            pair = 1 << (mode * 8 + KING) | 1 << (mode * 8 + QUEEN)
            for s in range(n):
                if owned[s] & pair == pair:
                    bel[s] = 20
        self.seat_belote = tuple(bel)

    def copy(self) -> FewFastState:
        f = FewFastState()
        f.hands = self.hands[:]
        f.mode = self.mode
        f.to_act = self.to_act
        f.leader = self.leader
        f.trick = self.trick[:]
        f.best = self.best
        f.points = self.points[:]
        f.tricks = self.tricks
        f.wins = self.wins
        f.stack = []
        f.few_stack = []
        f.free = False
        f.overtrump = self.overtrump
        f.coinche = False
        f.taker = self.taker
        f.contract = 0
        f.multiplier = 1
        f.pending = 0
        f.announcements = (0, 0)
        f.belote = (0, 0)
        f.seats = self.seats
        f.length = self.length
        f.done = self.done
        f.hidden = self.hidden
        f.under = self.under  # never changed: shared
        f.seat_announcements = self.seat_announcements
        f.seat_belote = self.seat_belote
        return f

    @property
    def played(self) -> int:
        return self.done

    def out(self) -> int:
        h = self.hands
        m = self.hidden
        for s in range(self.seats):
            m |= h[s]
        return m

    def winner_so_far(self) -> int:
        return (self.leader + self.best) % self.seats

    def card_points(self) -> tuple[int, ...]:
        """Each seat's card points as they score: 250 to a seat that took every trick."""
        w = self.wins
        if self.tricks == self.length and w & (w - 1) == 0:
            winner = w.bit_length() - 1
            return tuple([CAPOT_POINTS if s == winner else 0 for s in range(self.seats)])
        return tuple(self.points)

    def generale(self) -> int:
        return -1

    def score(self) -> tuple[int, ...]:
        """What each seat adds to its game score for the finished round."""
        return few_round_score(
            self.taker, self.card_points(), self.seat_announcements, self.seat_belote
        )

    def score_for(self, difference: int) -> tuple[int, int]:
        raise ValueError("score_for is the four-seat solver's; use score() at the round's end")

    def _close_few(self, trick: list[int]) -> tuple[int, int]:
        """Take the full ``trick``: its winner and the points it gained; the face-down
        cards under its cards are turned up (two-handed)."""
        n = self.seats
        leader = self.leader
        winner = (leader + self.best) % n
        pts = POINTS[self.mode]
        p = 0
        for c in trick:
            p += pts[c]
        self.tricks += 1
        if self.tricks == self.length:
            p += LAST_TRICK_BONUS
        self.points[winner] += p
        self.wins |= 1 << winner
        under = self.under
        if under:
            for i, c in enumerate(trick):
                u = under[c]
                if u >= 0:
                    self.hands[(leader + i) % n] |= 1 << u
                    self.hidden &= ~(1 << u)
        self.trick = []
        self.best = 0
        self.leader = self.to_act = winner
        return winner, p

    def push(self, c: int) -> None:
        seat = self.to_act
        trick = self.trick
        best = self.best
        n = self.seats
        self.hands[seat] ^= 1 << c
        self.done |= 1 << c
        k = len(trick)
        if k:
            if BEATS[self.mode][trick[best]] >> c & 1:
                self.best = k
            if k == n - 1:
                leader = self.leader
                wins = self.wins
                trick.append(c)
                winner, gained = self._close_few(trick)
                self.few_stack.append((c, seat, best, leader, wins, winner, gained, trick))
                return
        self.few_stack.append((c, seat, best, 0, 0, -1, 0, None))
        trick.append(c)
        self.to_act = (seat + 1) % n

    def pop(self) -> int:
        c, seat, best, leader, wins, winner, gained, closed = self.few_stack.pop()
        if closed is not None:
            n = self.seats
            under = self.under
            if under:
                for i, d in enumerate(closed):
                    u = under[d]
                    if u >= 0:
                        self.hands[(leader + i) % n] &= ~(1 << u)
                        self.hidden |= 1 << u
            self.points[winner] -= gained
            self.tricks -= 1
            self.wins = wins
            self.leader = leader
            closed.pop()
            self.trick = closed
        else:
            self.trick.pop()
        self.hands[seat] |= 1 << c
        self.done &= ~(1 << c)
        self.best = best
        self.to_act = seat
        return c

    def play(self, c: int) -> None:
        seat = self.to_act
        trick = self.trick
        n = self.seats
        self.hands[seat] ^= 1 << c
        self.done |= 1 << c
        k = len(trick)
        if k:
            if BEATS[self.mode][trick[self.best]] >> c & 1:
                self.best = k
            if k == n - 1:
                trick.append(c)
                self._close_few(trick)
                return
        trick.append(c)
        self.to_act = (seat + 1) % n

    def search(
        self, me: int, alpha: float, beta: float, table: dict[int, tuple[float, int]] | None = None
    ) -> float:
        """Seat ``me``'s net round score (its score minus the mean of the others') at the end
        of the round with every hand seen, ``me`` playing for the best and every other seat
        against it: alpha-beta within ``(alpha, beta)`` over the legal cards, one of each
        group of :func:`equivalent_groups` (the state is left as it was).

        ``table`` remembers the positions searched at the start of a trick, so that the same
        hands and points reached in another order are searched once: pass one table to the
        searches of the same round seen the same way by the same ``me`` (every card of one
        decision in one world), a new one otherwise (two-handed, the face-down cards differ
        from world to world)."""
        return self._search(me, alpha, beta, {} if table is None else table)

    def position(self) -> int:
        """The position at the start of a trick, as one number: what the rest of the round
        depends on (with the face-down cards and the declarations, fixed for a round). A
        key for a table of values of one round seen one way (:meth:`search`)."""
        key = self.to_act << 3 | self.wins
        for h in self.hands:
            key = key << 32 | h
        for p in self.points:
            key = key << 9 | p
        return key

    def _search(
        self, me: int, alpha: float, beta: float, table: dict[int, tuple[float, int]]
    ) -> float:
        if self.tricks == self.length:
            score = self.score()
            others = 0
            for s in range(self.seats):
                if s != me:
                    others += score[s]
            return score[me] - others / (self.seats - 1)
        key = -1
        if not self.trick:
            key = self.position()
            known = table.get(key)
            if known is not None:
                value, bound = known
                if (
                    bound == _EXACT
                    or (bound == _LOWER and value >= beta)
                    or (bound == _UPPER and value <= alpha)
                ):
                    return value
        low, high = alpha, beta
        maximize = self.to_act == me
        best = -_INF if maximize else _INF
        for group in equivalent_groups(self):
            self.push(group[0])
            v = self._search(me, alpha, beta, table)
            self.pop()
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            elif v < best:
                best = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        if key >= 0:
            table[key] = (best, _UPPER if best <= low else _LOWER if best >= high else _EXACT)
        return best

    def play_random(self, rng: random.Random) -> None:
        rand = rng.random
        length = self.length
        while self.tricks < length:
            m = self.legal_mask()
            k = m.bit_count()
            for _ in range(int(rand() * k)):
                m &= m - 1
            self.play((m & -m).bit_length() - 1)


# -- equivalent cards ------------------------------------------------------------------------


def _orders() -> tuple[tuple[tuple[tuple[int, ...], ...], ...], ...]:
    """``ORDER[mode][suit][byte]``: the cards of that byte of the suit, strongest first."""
    out = []
    for mode in range(6):
        st = STRENGTH[mode]
        per_suit = []
        for suit in range(4):
            per_suit.append(
                tuple(
                    tuple(
                        sorted(
                            (suit * 8 + r for r in range(8) if b >> r & 1),
                            key=lambda c: -st[c],
                        )
                    )
                    for b in range(256)
                )
            )
        out.append(tuple(per_suit))
    return tuple(out)


ORDER = _orders()


def equivalent_groups(f: FastState) -> list[list[int]]:
    """The legal cards of the seat to act, in groups of equivalent cards: touching cards of
    a suit (no card still out, or on the table, between them) with the same points, and in
    two-handed neither with a face-down card under it still to turn up (which one turns up
    depends on the card played)."""
    under: list[int] = f.under if isinstance(f, FewFastState) else []
    mode = f.mode
    pts = POINTS[mode]
    above = ABOVE[mode]
    order = ORDER[mode]
    live = f.out()  # any seat count (two-handed: the face-down cards included)
    for c in f.trick:
        live |= 1 << c
    legal = f.legal_mask()
    groups: list[list[int]] = []
    for suit in range(4):
        b = legal >> (suit * 8) & 0xFF
        prev = -1
        for c in order[suit][b] if b else ():
            if (
                prev >= 0
                and pts[c] == pts[prev]
                and not above[c] & ~above[prev] & ~(1 << prev) & live
                and not (under and (under[c] >= 0 or under[prev] >= 0))
            ):
                groups[-1].append(c)
            else:
                groups.append([c])
            prev = c
    return groups


def _bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def _poorest(m: int, pts: Sequence[int], st: Sequence[int]) -> int:
    """The card of mask ``m`` with the fewest points, then the weakest (the lowest card
    number at a tie)."""
    best = -1
    key = 10_000
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        k = pts[c] * 16 + st[c]
        if k < key:
            best, key = c, k
    return best


def _cashed(m: int, pts: Sequence[int], st: Sequence[int]) -> int:
    """The card of mask ``m`` with the most points, then the strongest (the lowest card
    number at a tie): the master to cash."""
    best = -1
    key = -1
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        k = pts[c] * 16 + st[c]
        if k > key:
            best, key = c, k
    return best


def _masters(m: int, above: Sequence[int], others: int) -> int:
    """The cards of mask ``m`` that no card of ``others`` beats in their suit."""
    out = 0
    while m:
        low = m & -m
        m ^= low
        if not above[low.bit_length() - 1] & others:
            out |= low
    return out


def _richest(m: int, pts: Sequence[int], st: Sequence[int]) -> int:
    """The card of mask ``m`` with the most points, then the weakest (the lowest card number
    at a tie): the card to load on a trick the partner takes."""
    best = -1
    key = -1000
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        k = pts[c] * 16 - st[c]
        if k > key:
            best, key = c, k
    return best


def _winners(m: int, top: int, mode: int) -> int:
    """The cards of mask ``m`` that would take a trick ``top`` wins so far (a trump on a
    plain card)."""
    winners = m & ABOVE[mode][top]
    if STRENGTH[mode][top] < 8 and mode < 4:
        winners |= m & TRUMP_MASK[mode]
    return winners


def _weakest(m: int, st: Sequence[int]) -> int:
    """The weakest card of mask ``m`` (the lowest card number at a tie)."""
    best = -1
    key = 10_000
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if st[c] < key:
            best, key = c, st[c]
    return best


# -- a whole random round on the fast path ------------------------------------------------------

_FACT32 = 263130836933693530167218012160000000  # 32!
_BITS32 = _FACT32.bit_length()


def random_deck(rng: random.Random) -> list[int]:
    """The 32 cards in a uniformly random order, from one draw of random bits."""
    getrandbits = rng.getrandbits
    x = getrandbits(_BITS32)
    while x >= _FACT32:
        x = getrandbits(_BITS32)
    rest = list(range(32))
    out = []
    for i in range(32, 1, -1):
        x, r = divmod(x, i)
        out.append(rest.pop(r))
    out.append(rest[0])
    return out


_OWNERS_CACHE: dict[tuple[bool, int, int], tuple[int, ...]] = {}


def _owners(coinche: bool, dealer: int, taker: int) -> tuple[int, ...]:
    """Who receives each deck position (as :func:`.engine.deal_owners`)."""
    key = (coinche, dealer, taker)
    got = _OWNERS_CACHE.get(key)
    if got is None:
        got = deal_owners(COINCHE if coinche else CLASSIC, dealer, None if taker < 0 else taker)
        _OWNERS_CACHE[key] = got
    return got


def random_round(
    rules: RuleSet,
    rng: random.Random,
    dealer: int = 0,
    pending: int = 0,
    log: list[tuple[str, object]] | None = None,
) -> FastState:
    """A whole round with uniformly random choices, on the fast path alone.

    Deals a random deck (a new one, by the next dealer, after a pass-out), bids with a random
    legal action at each turn (the engine's legal actions, in its order), plays the 32 cards
    at random and returns the finished :class:`FastState` (its :meth:`FastState.score` is
    the round's score). ``log`` receives ``("deal", deck)``, ``("bid", index)`` (the index
    in ``State.legal_actions()``) and ``("play", card)`` entries: enough to replay the round
    on the engine."""
    rand = rng.random
    coinche = rules.is_coinche
    sa, ta = rules.sans_atout, rules.tout_atout
    trumps = 4 + (1 if sa else 0) + (1 if ta else 0)
    modes = (0, 1, 2, 3) + ((NO_TRUMP,) if sa else ()) + ((ALL_TRUMP,) if ta else ())
    while True:
        deck = random_deck(rng)
        if log is not None:
            log.append(("deal", deck))
        owners = _owners(coinche, dealer, -1)
        hands = [0, 0, 0, 0]
        for pos in range(32 if coinche else 20):
            hands[owners[pos]] |= 1 << deck[pos]
        first = (dealer + 1) & 3
        taker = -1
        trump = -1
        contract = 0
        multiplier = 1
        if not coinche:
            turned = deck[20]
            for turn in range(8):
                seat = (first + turn) & 3
                if turn < 4:
                    k = int(rand() * 2)  # TAKE, PASS
                    if log is not None:
                        log.append(("bid", k))
                    if k == 0:
                        taker, trump = seat, turned >> 3
                        break
                else:
                    k = int(rand() * 4)  # three suits, PASS
                    if log is not None:
                        log.append(("bid", k))
                    if k < 3:
                        taker = seat
                        trump = k if k < turned >> 3 else k + 1
                        break
            if taker >= 0:
                hands[taker] |= 1 << turned
                done = _owners(False, dealer, taker)
                for pos in range(21, 32):
                    hands[done[pos]] |= 1 << deck[pos]
        else:
            seat = first
            passes = 0
            values = (80, 90, 100, 110, 120, 130, 140, 150, 160, CAPOT_POINTS, GENERALE_POINTS)
            above = 0  # index in values of the lowest bid still allowed
            while True:
                if multiplier == 1:
                    coinche_ok = taker >= 0 and (seat - taker) & 1 == 1
                    n = 1 + (len(values) - above) * trumps + (1 if coinche_ok else 0)
                else:
                    n = 2 if (seat - taker) & 1 == 0 else 1  # PASS (, SURCOINCHE)
                k = int(rand() * n)
                if log is not None:
                    log.append(("bid", k))
                if k == 0:
                    passes += 1
                    if (taker < 0 and passes == 4) or (taker >= 0 and passes == 3):
                        break
                elif multiplier == 1 and k <= (len(values) - above) * trumps:
                    i, t = divmod(k - 1, trumps)
                    taker, trump, contract = seat, modes[t], values[above + i]
                    above += i + 1
                    passes = 0
                elif multiplier == 1:
                    multiplier, passes = 2, 0
                else:
                    multiplier = 4
                    break
                seat = (seat + 1) & 3
        if taker >= 0:
            break
        dealer = (dealer + 1) & 3
    f = FastState.new(rules, hands, trump, taker, first, contract, multiplier, pending)
    if log is None:
        f.play_random(rng)
    else:
        while f.tricks < 8:
            m = f.legal_mask()
            k = m.bit_count()
            for _ in range(int(rand() * k)):
                m &= m - 1
            c = (m & -m).bit_length() - 1
            log.append(("play", c))
            f.play(c)
    return f
