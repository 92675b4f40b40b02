"""What one seat may know of a game: the value bots and people decide from."""

from __future__ import annotations

from typing import NamedTuple

from .announcements import Announcement
from .cards import Card, CardMask, cards_of
from .engine import Action, Bid, Phase, State, Trick, other_belote_card, pile_positions
from .rules import RuleSet, SeatNumber, Variant, partner_of
from .tables import ABOVE, TrumpMode, winning_index


class Observation(NamedTuple):
    """A seat's view of the game: its own hand and everything public, nothing more.

    An immutable value (a named tuple: cheap to build, since bots get one per decision).
    """

    seat: SeatNumber
    rules: RuleSet
    phase: Phase
    number: int
    dealer: SeatNumber
    hand: tuple[Card, ...]
    legal: tuple[Action, ...]
    """The seat's legal actions now (empty when it is not its turn)."""
    to_act: SeatNumber
    turned: Card | None
    bids: tuple[tuple[SeatNumber, Bid], ...]
    trump: TrumpMode
    """Trump suit ``0..3`` (or no-trump / all-trump mode), -1 before it is chosen."""
    taker: SeatNumber
    contract: int
    multiplier: int
    leader: SeatNumber
    trick: tuple[Card, ...]
    """Cards on the table in the current trick, in play order from ``leader``."""
    tricks: tuple[Trick, ...]
    played: CardMask
    """Mask of every card played this round (the current trick included)."""
    declared: tuple[tuple[Announcement, ...] | None, ...]
    """Announcements each seat declared with its first card (``None``: not yet played)."""
    belote: tuple[tuple[SeatNumber, Card], ...]
    """Each belote announced this round: the seat and the first of its king and queen played."""
    voids: tuple[CardMask, CardMask, CardMask, CardMask]
    """Cards each seat has shown it does not hold (masks). In two-handed, it did not hold
    them face up then: a face-down card turned up later may be one."""
    shown: tuple[CardMask, CardMask, CardMask, CardMask]
    """Cards each seat is known to hold and has not played (announced, belote, turned; in
    two-handed, every seat's face-up cards)."""
    scores: tuple[int, ...]
    """Game scores: per team with four seats, per seat otherwise."""
    pending: int
    open_deck: tuple[Card | None, ...] = ()
    """Two-handed: the deck as both players see it, by position (:func:`deal_owners`):
    every face-up card and every face-down card turned up, ``None`` for a card still face
    down. ``()`` in the other variants."""

    @property
    def seats(self) -> int:
        return self.rules.seats

    @property
    def partner(self) -> SeatNumber:
        """The partner's seat; -1 when there are no teams (two or three seats)."""
        return partner_of(self.seat) if self.rules.has_teams else -1

    @property
    def team(self) -> int:
        """The index of this seat's entry in ``scores``: its team, or itself without teams."""
        return self.seat % 2 if self.rules.has_teams else self.seat

    @property
    def target(self) -> int:
        return self.rules.target

    @property
    def hand_mask(self) -> CardMask:
        m = 0
        for c in self.hand:
            m |= 1 << c
        return m

    def unseen(self) -> CardMask:
        """Cards held by the other seats (two-handed: and the face-down cards), as a mask, as
        far as this seat can tell."""
        return self.rules.deck_mask & ~(self.played | self.hand_mask)

    def possible(self, seat: SeatNumber) -> CardMask:
        """Cards ``seat`` may still hold, given voids and cards known elsewhere."""
        if seat == self.seat:
            return self.hand_mask
        elsewhere = 0
        if self.rules.variant is Variant.TWO_HANDED:
            return self.shown[seat]
        for s in range(4):
            if s != seat:
                elsewhere |= self.shown[s]
        return (self.unseen() & ~self.voids[seat] & ~elsewhere) | self.shown[seat]

    def piles(self, seat: SeatNumber) -> tuple[tuple[Card | None, bool], ...]:
        """Two-handed: ``seat``'s eight piles as both players see them, pile 0 first, each
        as ``(card on top, hidden)``: the card that may be played from it (None when the
        pile holds none that can be), and whether a face-down card not yet turned up lies
        in it. ``()`` in the other variants, and before the deal."""
        if not self.open_deck:
            return ()
        out: list[tuple[Card | None, bool]] = []
        for down, up in pile_positions(self.dealer, seat):
            cover, under = self.open_deck[up], self.open_deck[down]
            if cover is not None and not self.played >> cover & 1:
                out.append((cover, under is None))
            elif under is not None and not self.played >> under & 1:
                out.append((under, False))
            else:
                out.append((None, under is None))
        return tuple(out)

    def masters(self) -> CardMask:
        """Unplayed cards that beat every other unplayed card of their suit (masks)."""
        if self.trump < 0:
            return 0
        remaining = self.rules.deck_mask & ~self.played
        out = 0
        above = ABOVE[self.trump]
        for c in cards_of(remaining):
            if not above[c] & remaining:
                out |= 1 << c
        return out

    def trick_winner_so_far(self) -> SeatNumber | None:
        """The seat winning the current trick so far, or ``None`` before its first card."""
        if not self.trick or self.trump < 0:
            return None
        best = winning_index(self.trick, self.trump)
        return (self.leader + best) % self.rules.seats


def observe(state: State, seat: int) -> Observation:
    """What ``seat`` may know of ``state`` (full or partial knowledge alike)."""
    declared = state.declared
    taker = state.taker
    turned_bit = 0
    if state.turned is not None and taker >= 0 and state.phase is Phase.PLAY:
        turned_bit = 1 << state.turned
    if state.belote or any(declared):
        known = [0, 0, 0, 0]
        for s, anns in enumerate(declared):
            for a in anns or ():
                known[s] |= a.cards
        if turned_bit:
            known[taker] |= turned_bit
        for s, c in state.belote:
            # The other card of an announced belote is known to be in that hand.
            known[s] |= 1 << other_belote_card(c)
        remaining = ~state.played
        shown = (
            known[0] & remaining, known[1] & remaining, known[2] & remaining, known[3] & remaining,
        )  # fmt: skip
    elif turned_bit and not turned_bit & state.played:
        t = turned_bit
        shown = (t * (taker == 0), t * (taker == 1), t * (taker == 2), t * (taker == 3))
    else:
        shown = (0, 0, 0, 0)
    if state.seats == 2:
        shown = state.hands  # two-handed: the face-up cards are everybody's to see
    return _make(
        Observation,
        (
            seat,
            state.rules,
            state.phase,
            state.number,
            state.dealer,
            state.hand(seat),
            state.legal_actions() if state.to_act == seat else (),
            state.to_act,
            state.turned,
            state.bids,
            state.trump,
            state.taker,
            state.contract,
            state.multiplier,
            state.leader,
            state.trick,
            state.tricks,
            state.played,
            declared,
            state.belote,
            state.voids,
            shown,
            state.scores,
            state.pending,
            _open_deck(state) if state.seats == 2 else (),
        ),
    )


def _open_deck(state: State) -> tuple[Card | None, ...]:
    """Two-handed: ``state.deck`` without the face-down cards not turned up yet (a card is
    turned up once the trick of the card that covered it is over)."""
    deck = state.deck
    if not deck:
        return ()
    out = list(deck)
    in_trick = 0
    for c in state.trick:
        in_trick |= 1 << c
    done = state.played & ~in_trick
    for pos in range(32):
        if pos % 16 < 8:
            cover = deck[pos + 8]
            if cover is None or not done >> cover & 1:
                out[pos] = None
    return tuple(out)


# The named tuple's own constructor is Python code with 24 arguments; bots get one
# observation per decision, so build it as the plain tuple it is.
_make = tuple.__new__
