"""The Belote rules engine: a whole game as a deterministic state machine.

``State`` is immutable from the outside: :meth:`State.apply` returns a new state and never
changes the one it is called on. The engine never shuffles: each round starts with
:meth:`State.deal` and a deck order chosen by the caller (a seed, or the deck protocol).

Two modes share every rule:

* full information (referee, arena, audit, bots' playouts): every hand is known and every
  action is checked against the rules;
* partial knowledge (a peer): some cards of other seats are unknown (``None`` in the deck).
  A play by such a seat is checked as far as it can be (turn, card not seen elsewhere, not
  contradicting a void the seat showed earlier), and what the play proves about the seat's
  hand is remembered. The round is audited when the hands are revealed (:mod:`.audit`).

Four seats in teams (classic, coinche), three seats each for himself with 24 cards
(three-handed, RULES.md §12), or two seats playing from piles of a face-down card under a
face-up one (two-handed, §13: see :func:`deal_owners`, :func:`public_positions`,
:func:`under_position` and :attr:`State.pending_openings`). Per-seat tuples keep four
entries whatever the seat count; scores have one entry per team, or per seat without teams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple, TypeVar, cast

from belote_p2p.errors import LocalProtocolError

from .announcements import Announcement, announcement_from_cards, find_announcements, scoring_team
from .cards import _BYTE_CARDS as _SUIT_CARDS
from .cards import CARDS, SUIT_MASKS, Card, cards_of, format_cards, mask_of
from .rules import RuleSet, Variant
from .scoring import CAPOT_POINTS, GENERALE_POINTS, RoundScore, score_round, score_round_few
from .tables import (
    ABOVE,
    ALL_TRUMP,
    BEATS,
    LAST_TRICK_BONUS,
    NO_TRUMP,
    POINTS,
    parse_trump,
    trump_letter,
)

TURNED = -1
"""Owner code of the classic turned card in :func:`deal_owners`."""
UNDEALT = -2
"""Owner code of a classic completion card before the taker is known."""

BID_VALUES = (80, 90, 100, 110, 120, 130, 140, 150, 160, CAPOT_POINTS, GENERALE_POINTS)
KING, QUEEN = 6, 5
BELOTE_CARDS = tuple(
    sum(
        1 << (suit * 8 + r) for suit in range(4) for r in (KING, QUEEN) if mode in (suit, ALL_TRUMP)
    )
    for mode in range(6)
)
"""Per trump mode, the kings and queens of trump (the cards that may carry a belote)."""


CONTRACT_WORDS = {CAPOT_POINTS: "capot", GENERALE_POINTS: "generale"}
"""The coinche contracts written as words (in bids on the wire and on screen)."""


def contract_word(value: int) -> str:
    """``"90"``, ``"capot"`` or ``"generale"``."""
    return CONTRACT_WORDS.get(value, str(value))


def other_belote_card(c: int) -> Card:
    """The other card of a belote: the queen of king ``c``'s suit, or the king of queen ``c``'s."""
    return CARDS[c ^ (KING ^ QUEEN)]


class Phase(Enum):
    """What the game waits for."""

    DEAL = "deal"
    """A deck order, through :meth:`State.deal`."""
    TAKE_FIRST = "take-first"
    """Classic, first turn: take the turned card or pass."""
    TAKE_SECOND = "take-second"
    """Classic, second turn: name another suit or pass."""
    AUCTION = "auction"
    """Coinche: bid, pass, coinche or surcoinche."""
    PLAY = "play"
    """A card from the seat to act."""
    GAME_OVER = "game-over"
    """A team reached the target."""


class BidKind(Enum):
    """The kinds of bidding action."""

    PASS = "pass"
    TAKE = "take"
    """Classic: take the turned card; its suit is trump."""
    CHOOSE = "choose"
    """Classic, second turn: name another suit as trump."""
    BID = "bid"
    """Coinche: a value and a trump."""
    COINCHE = "coinche"
    SURCOINCHE = "surcoinche"


# The phases and bid kinds as module constants, for the hot paths (apply, legal_actions, a
# bid, a deal): CPython 3.11 sends every attribute read on an Enum class through
# ``EnumType.__getattr__``'s slow hook, about 70 ns for ``Phase.PLAY`` against 5 for a global.
_DEAL = Phase.DEAL
_TAKE_FIRST = Phase.TAKE_FIRST
_TAKE_SECOND = Phase.TAKE_SECOND
_AUCTION = Phase.AUCTION
_PLAY = Phase.PLAY
_GAME_OVER = Phase.GAME_OVER
_BIDDING = (_TAKE_FIRST, _TAKE_SECOND, _AUCTION)
_K_PASS = BidKind.PASS
_K_TAKE = BidKind.TAKE
_K_CHOOSE = BidKind.CHOOSE
_K_BID = BidKind.BID
_K_COINCHE = BidKind.COINCHE


def _by_constructor(value: Any) -> tuple[type[Any], tuple[Any, ...]]:
    """``__reduce__`` of this module's frozen dataclasses: a copy or an unpickled value is
    made by the constructor. (Compiled with mypyc, the default ``__setstate__`` sets each
    field once the object exists, and meets the frozen ``__setattr__``.)"""
    return type(value), tuple([getattr(value, f.name) for f in fields(value)])


@dataclass(frozen=True, slots=True)
class Bid:
    """A bidding action. Build them with the constants and helpers below, or :meth:`parse`."""

    kind: BidKind
    trump: int = -1
    """A suit ``0..3``, or ``NO_TRUMP`` / ``ALL_TRUMP``, for CHOOSE and BID."""
    value: int = 0
    """80..160, 250 (capot) or 500 (générale), for BID."""

    def __str__(self) -> str:
        if self.kind is BidKind.CHOOSE:
            return f"choose {trump_letter(self.trump)}"
        if self.kind is BidKind.BID:
            return f"{contract_word(self.value)} {trump_letter(self.trump)}"
        return str(self.kind.value)

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        return _by_constructor(self)

    @classmethod
    def parse(cls, text: str) -> Bid:
        """``pass``, ``take``, ``choose H`` (or ``H``), ``90 H``, ``capot S``, ``coinche``..."""
        words = text.strip().lower().split()
        if len(words) == 1 and words[0] in ("pass", "take", "coinche", "surcoinche"):
            return cls(BidKind(words[0]))
        try:
            if len(words) == 1:
                return cls(BidKind.CHOOSE, parse_trump(words[0]))
            if len(words) == 2 and words[0] == "choose":
                return cls(BidKind.CHOOSE, parse_trump(words[1]))
            if len(words) == 2:
                named = {word: value for value, word in CONTRACT_WORDS.items()}
                value = named.get(words[0].replace("é", "e")) or int(words[0])
                if value in BID_VALUES:
                    return cls(BidKind.BID, parse_trump(words[1]), value)
        except ValueError:
            pass
        raise ValueError(
            f"not a bid: {text!r} (try pass, take, H, 90 H, capot S, coinche, surcoinche)"
        )


PASS = Bid(BidKind.PASS)
TAKE = Bid(BidKind.TAKE)
COINCHE = Bid(BidKind.COINCHE)
SURCOINCHE = Bid(BidKind.SURCOINCHE)
CHOOSE = tuple(Bid(BidKind.CHOOSE, s) for s in range(4))
BIDS = {(v, t): Bid(BidKind.BID, t, v) for v in BID_VALUES for t in range(6)}

Action = Card | Bid


@dataclass(frozen=True, slots=True)
class Claim:
    """What a seat with a hidden hand declares with a play.

    With its first card: its announcements. With the first of the king and queen of trump:
    ``belote`` (it holds the other one too). Peers with a known hand never need one: the
    engine finds both from the hand.
    """

    announcements: tuple[Announcement, ...] = ()
    belote: bool = False

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        return _by_constructor(self)


NO_CLAIM = Claim()
BELOTE_CLAIM = Claim((), True)
"""A belote without announcements (a claim is a value: the engine finds this one shared)."""
_PLAIN_PLAYS = tuple((c, NO_CLAIM) for c in CARDS)
"""Each card's entry in :attr:`State.actions` when it carries no claim, built once."""


class Trick(NamedTuple):
    """A finished trick: who led, the four cards in play order, who won, its points."""

    leader: int
    cards: tuple[Card, ...]
    winner: int
    points: int
    """Card points, plus dix de der on the last trick."""

    def to_json(self) -> dict[str, object]:
        return {
            "leader": self.leader,
            "cards": [str(c) for c in self.cards],
            "winner": self.winner,
            "points": self.points,
        }


_new_trick = tuple.__new__
"""Builds a :class:`Trick` from a tuple without the named tuple's Python constructor."""


class IllegalActionError(LocalProtocolError, ValueError):
    """An action the rules forbid here, with the action and a short summary of the state."""

    def __init__(self, action: object, state: State, reason: str) -> None:
        self.action = action
        self.seat = state.to_act
        self.reason = reason
        self.summary = state.summary()
        super().__init__(
            f"illegal action {action} by seat {state.to_act}: {reason} [{self.summary}]"
        )


TURNED_POSITION = {4: 20, 3: 15}
"""Deck position of the turned card, by seat count (classic and three-handed)."""


@lru_cache(maxsize=64)
def deal_owners(rules: RuleSet, dealer: int, taker: int | None = None) -> tuple[int, ...]:
    """Who receives each deck position: a tuple of ``rules.deck_size`` seats or owner codes.

    Seats deal in playing order from ``dealer + 1`` (modulo ``rules.seats``).

    * classic (32 positions): 3 then 2 cards to each seat, the turned card at position 20
      (``TURNED``), then, once ``taker`` is known, 2 cards to the taker and 3 to every other
      seat (``UNDEALT`` for positions 21-31 while ``taker`` is ``None``);
    * coinche (32): 3, 2, 3 cards to each seat;
    * three-handed (24, RULES.md §12): 3 then 2 cards to each seat (positions 0-14), the
      turned card at position 15 (``TURNED``), then, once ``taker`` is known, 2 cards to
      the taker and 3 to each other seat (``UNDEALT`` for positions 16-23 before);
    * two-handed (32, RULES.md §13): every position belongs to a seat, ``taker`` is
      ignored. With ``n`` the non-dealer and ``d`` the dealer, positions 0-3 are ``n``'s
      face-down cards of piles 0-3, 4-7 ``d``'s face-down 0-3, 8-11 ``n``'s face-up 0-3,
      12-15 ``d``'s face-up 0-3, then 16-31 the same for piles 4-7. Position 31 (the
      dealer's pile 7, face up) is the last card dealt: its suit is trump.
      See :func:`public_positions` and :func:`under_position`.
    """
    seats = rules.seats
    order = [(dealer + 1 + i) % seats for i in range(seats)]
    owners: list[int] = []
    if rules.variant is Variant.TWO_HANDED:
        for _ in range(2):
            for seat in order + order:
                owners += [seat] * 4
        return tuple(owners)
    for n in (3, 2):
        for seat in order:
            owners += [seat] * n
    if rules.is_coinche:
        for seat in order:
            owners += [seat] * 3
        return tuple(owners)
    owners.append(TURNED)
    if taker is None:
        return tuple(owners + [UNDEALT] * (rules.deck_size - len(owners)))
    for seat in order:
        owners += [seat] * (2 if seat == taker else 3)
    return tuple(owners)


def public_positions(rules: RuleSet, dealer: int) -> tuple[int, ...]:
    """The deck positions every player sees from the deal, in increasing order.

    Two-handed: the 16 face-up cards, positions 8-15 and 24-31 (both players' piles, see
    :func:`deal_owners`), whatever the dealer. Every other variant: ``()`` (the classic
    turned card is not listed: it is the position whose owner code is ``TURNED``).
    """
    del dealer  # the same positions for either dealer; kept for a uniform signature
    if rules.variant is not Variant.TWO_HANDED:
        return ()
    return _TWO_HANDED_PUBLIC


_TWO_HANDED_PUBLIC = tuple(range(8, 16)) + tuple(range(24, 32))


def under_position(rules: RuleSet, dealer: int, position: int) -> int | None:
    """Two-handed: the deck position of the face-down card lying under the face-up card
    at ``position`` (``position - 8``: same seat, same pile), or ``None`` when
    ``position`` is itself face-down. That card is turned up, to both players, once the
    trick in which the face-up card is played ends. ``None`` in every other variant.
    ``ValueError`` for a position outside ``0..rules.deck_size - 1``.
    """
    del dealer
    if not 0 <= position < rules.deck_size:
        raise ValueError(f"no deck position {position} in {rules.name}")
    if rules.variant is not Variant.TWO_HANDED or position % 16 < 8:
        return None
    return position - 8


def pile_positions(dealer: int, seat: int) -> tuple[tuple[int, int], ...]:
    """Two-handed: the deck positions of ``seat``'s eight piles, pile 0 first, each as
    ``(face-down, face-up)`` (see :func:`deal_owners`: the non-dealer's piles 0-3 lie at
    0-3 under 8-11, the dealer's at 4-7 under 12-15, piles 4-7 the same from 16)."""
    base = 4 if seat == dealer else 0
    out = []
    for pile in range(8):
        down = base + pile % 4 + (16 if pile >= 4 else 0)
        out.append((down, down + 8))
    return tuple(out)


_OWNERS: dict[tuple[Variant, int, int], tuple[int, ...]] = {}
_DEAL_GETTERS: dict[tuple[int, ...], tuple[Callable[[Sequence[Card | None]], Any], ...]] = {}
_BITS = tuple(1 << c for c in range(32))
_CARD_TYPE = {Card}


def _owners_of(rules: RuleSet, dealer: int, taker: int = -1) -> tuple[int, ...]:
    """:func:`deal_owners` cached on plain ints (hashing a rule set costs more than this)."""
    key = (rules.variant, dealer, taker)
    owners = _OWNERS.get(key)
    if owners is None:
        owners = _OWNERS[key] = deal_owners(rules, dealer, None if taker < 0 else taker)
    return owners


def _obligations(mode: int, led: int, top: int, freed: bool, overtrump: bool) -> tuple[int, ...]:
    """The play obligations of a seat (RULES.md §4), strongest first, in a trick led in suit
    ``led`` whose best card so far is ``top``, under trump ``mode``: follow, overtrump, trump.

    ``freed``: the seat's partner is master (and the rule set lets that free it: four seats
    and ``partner_master_frees``); ``overtrump``: ``must_overtrump_on_trump_lead``.
    """
    follow = SUIT_MASKS[led]
    if mode == NO_TRUMP:
        return (follow,)
    if mode == ALL_TRUMP or mode == led:
        return (ABOVE[mode][top], follow) if overtrump else (follow,)
    if freed:
        return (follow,)
    trumps = SUIT_MASKS[mode]
    if top >> 3 == mode:
        return (follow, ABOVE[mode][top], trumps)
    return (follow, trumps)


_Obligations = tuple[tuple[tuple[int, ...], ...], ...]
"""Indexed by the best card so far then the suit led: :func:`_obligations`."""
_OBLIGATIONS: tuple[tuple[tuple[_Obligations, ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple(
                tuple(_obligations(mode, led, top, freed, overtrump) for led in range(4))
                for top in range(32)
            )
            for mode in range(6)
        )
        for freed in (False, True)
    )
    for overtrump in (False, True)
)
"""``_OBLIGATIONS[overtrump][freed][mode][top][led]``: :func:`_obligations` for every trick,
computed once (a play's legal cards, and its check, look them up)."""


def _popcount(x: int) -> int:
    return x.bit_count()


_T = TypeVar("_T")


def _replace_at(t: tuple[_T, ...], i: int, value: _T) -> tuple[_T, ...]:
    """``t`` with entry ``i`` replaced (through a list: half the time of slicing around it)."""
    items = list(t)
    items[i] = value
    return tuple(items)


class State:
    """A whole game of Belote: game score, dealer, and the round in progress.

    Create one with :meth:`new_game`; read it through its attributes and methods; change it
    only through :meth:`deal` and :meth:`apply`, which return a new state.
    """

    __slots__ = (
        "_cat_cache",
        "actions",
        "belote",
        "best",
        "bidder",
        "bids",
        "contract",
        "dealer",
        "deck",
        "declared",
        "hands",
        "history",
        "leader",
        "multiplier",
        "number",
        "passes",
        "pending",
        "phase",
        "played",
        "rules",
        "scores",
        "start",
        "taker",
        "team_points",
        "to_act",
        "trick",
        "tricks",
        "trump",
        "turned",
        "unknown",
        "voids",
        "winner",
    )

    rules: RuleSet
    seats: int = 4
    """``rules.seats``: 4, 3 or 2. Per-seat tuples (hands, unknown, voids) always have four
    entries; those of seats that do not play stay 0. (A state of two or three seats is a
    private subclass with this and :attr:`pending_openings` as fields, so that four-seat
    states copy no more than they need.)"""
    phase: Phase
    dealer: int
    number: int
    """Rounds dealt so far in this game, redeals included (the first is 0)."""
    scores: tuple[int, ...]
    """Game scores: per team (team 0 = seats 0 and 2) with four seats, per seat otherwise."""
    pending: int
    """The litige pot."""
    history: tuple[RoundRecord, ...]
    winner: int | None
    """The winning team (four seats) or seat (two or three) once the game is over."""
    start: State | None
    deck: tuple[Card | None, ...]
    hands: tuple[int, int, int, int]
    """Known cards of each seat, as masks (all of them in full information). Two-handed:
    each seat's face-up cards, the cards it may play (face-down cards join when turned up)."""
    unknown: tuple[int, int, int, int]
    """How many cards of each seat's hand are unknown (0 in full information)."""
    voids: tuple[int, int, int, int]
    """Cards each seat has shown it does not hold, by failing to follow, trump or overtrump."""
    turned: Card | None
    to_act: int
    """The seat to act, or -1 when the state waits for a deal or the game is over."""
    bids: tuple[tuple[int, Bid], ...]
    passes: int
    bidder: int
    trump: int
    taker: int
    contract: int
    multiplier: int
    leader: int
    trick: tuple[Card, ...]
    best: int
    """Index in ``trick`` of the card winning it so far."""
    tricks: tuple[Trick, ...]
    played: int
    team_points: tuple[int, ...]
    """Card points taken so far this round: per team with four seats, per seat otherwise."""
    declared: tuple[tuple[Announcement, ...] | None, ...]
    belote: tuple[tuple[int, Card], ...]
    """Each belote declared: the seat and the first of its king and queen played."""
    actions: tuple[tuple[Action, Claim], ...]
    pending_openings: tuple[int, ...] = ()
    """Two-handed, partial knowledge only: deck positions of face-down cards turned up by
    the trick just ended whose cards this state does not know yet, in increasing order.
    While it is not empty no action is legal (:meth:`legal_actions` is empty and
    :meth:`apply` raises ``IllegalActionError``): learn them with :meth:`reveal`, which
    adds each card to its owner's playable cards and removes its position from here.
    Always ``()`` in the other variants and whenever the deck is fully known (referee,
    bots, local play)."""
    _cat_cache: tuple[int, ...] | None

    # -- construction -------------------------------------------------------------------

    @classmethod
    def new_game(
        cls, rules: RuleSet, scores: tuple[int, ...] | None = None, pending: int = 0
    ) -> State:
        """A game waiting for its first deal, dealt by ``rules.first_dealer``.

        ``scores``: the game scores to start from (one per team with four seats, one per
        seat otherwise; zeros by default)."""
        n = rules.seats
        s = (cls if n == 4 else _FewState)()
        s.rules = rules
        if n != 4:
            cast("_FewState", s).seats = n
        width = 2 if n == 4 else n
        if scores is None:
            scores = (0,) * width
        elif len(scores) != width:
            raise ValueError(f"{rules.name} keeps {width} scores, not {len(scores)}")
        s.phase = _DEAL
        s.dealer = rules.first_dealer
        s.number = 0
        s.scores = scores
        s.pending = pending
        s.history = ()
        s.winner = None
        s._reset_round()
        return s

    def _reset_round(self) -> None:
        self.start = None
        self.deck = ()
        self.hands = (0, 0, 0, 0)
        self.unknown = (0, 0, 0, 0)
        self.voids = (0, 0, 0, 0)
        self.turned = None
        self.to_act = -1
        self.bids = ()
        self.passes = 0
        self.bidder = -1
        self.trump = -1
        self.taker = -1
        self.contract = 0
        self.multiplier = 1
        self.leader = -1
        self.trick = ()
        self.best = 0
        self.tricks = ()
        self.played = 0
        self.team_points = (0, 0) if self.seats == 4 else (0,) * self.seats
        self.declared = (None, None, None, None)
        self.belote = ()
        self.actions = ()
        self._cat_cache = None

    def _copy(self) -> State:
        s = self.__class__()
        s.rules = self.rules
        s.phase = self.phase
        s.dealer = self.dealer
        s.number = self.number
        s.scores = self.scores
        s.pending = self.pending
        s.history = self.history
        s.winner = self.winner
        s.start = self.start
        s.deck = self.deck
        s.hands = self.hands
        s.unknown = self.unknown
        s.voids = self.voids
        s.turned = self.turned
        s.to_act = self.to_act
        s.bids = self.bids
        s.passes = self.passes
        s.bidder = self.bidder
        s.trump = self.trump
        s.taker = self.taker
        s.contract = self.contract
        s.multiplier = self.multiplier
        s.leader = self.leader
        s.trick = self.trick
        s.best = self.best
        s.tricks = self.tricks
        s.played = self.played
        s.team_points = self.team_points
        s.declared = self.declared
        s.belote = self.belote
        s.actions = self.actions
        s._cat_cache = None
        return s

    @classmethod
    def for_play(
        cls,
        rules: RuleSet,
        *,
        dealer: int,
        hands: Sequence[Sequence[Card]],
        trump: int,
        taker: int,
        contract: int = 0,
        multiplier: int = 1,
        pending: int = 0,
    ) -> State:
        """A round set up at the first card, with every hand known (the referee's start).

        ``hands``: one hand of 8 cards per seat (4, or 3 in three-handed, of the variant's
        deck). Two-handed has no such start: deal it a deck. ``ValueError`` otherwise.
        """
        if not rules.has_bidding:
            raise ValueError(f"{rules.name} starts from a deal, not from hands")
        s = cls.new_game(rules, pending=pending)
        n = s.seats
        if not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, not {dealer}")
        s.dealer = dealer
        if len(hands) != n:
            raise ValueError(f"{len(hands)} hands given, not {n}")
        for seat, hand in enumerate(hands):
            if len(hand) != 8:
                raise ValueError(f"seat {seat} holds {len(hand)} cards, not 8")
        masks = [mask_of(hand) for hand in hands] + [0] * (4 - n)
        every = mask_of(c for hand in hands for c in hand)  # raises if a card appears twice
        if every & ~rules.deck_mask:
            raise ValueError(f"{format_cards(cards_of(every & ~rules.deck_mask))} not in the deck")
        s.start = s._copy()
        s.hands = (masks[0], masks[1], masks[2], masks[3])
        s.trump = trump
        s.taker = taker
        s.contract = contract
        s.multiplier = multiplier
        s._start_play()
        return s

    # -- reading ------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.GAME_OVER

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The known cards of ``seat``, in deck order."""
        return cards_of(self.hands[seat])

    def summary(self) -> str:
        parts = [f"round {self.number}", self.phase.value, f"dealer {self.dealer}"]
        if self.trump >= 0:
            taker = f" taker {self.taker}" if self.taker >= 0 else ""  # none in two-handed
            parts.append(f"trump {trump_letter(self.trump)}{taker}")
        if self.phase is Phase.PLAY:
            parts.append(
                f"trick {len(self.tricks) + 1} led by {self.leader}: {format_cards(self.trick)}"
            )
        if self.to_act >= 0:
            parts.append(f"to act {self.to_act}")
        parts.append("score " + "-".join(str(x) for x in self.scores))
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"<State {self.summary()}>"

    # -- dealing ------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card | None]) -> State:
        """Start the round from ``deck`` (``rules.deck_size`` positions, owned as
        :func:`deal_owners` says, ``None`` for a card this peer cannot see).

        The turned card (classic, three-handed) must be known. Two-handed: the face-up
        cards (:func:`public_positions`) must be known; they are each seat's playable
        cards; the face-down ones join them when turned up (see :attr:`pending_openings`);
        trump is the suit of position 31 and the non-dealer is to play.

        Raises ``IllegalActionError`` outside the deal phase and ``ValueError`` for a deck
        of the wrong length, with a card twice, or a card not in the variant's deck.
        """
        if self.phase is not _DEAL:
            raise IllegalActionError("deal", self, f"no deal expected in phase {self.phase.value}")
        if self.seats != 4:
            return self._deal_few(deck)
        if len(deck) != 32:
            raise ValueError(f"a deck has 32 positions, not {len(deck)}")
        owners = _owners_of(self.rules, self.dealer)
        if set(map(type, deck)) == _CARD_TYPE and len(set(deck)) == 32:
            # A full deck of 32 distinct cards (every peer of a table in full knowledge, the
            # arena): each hand in one pass over its positions.
            getters = _DEAL_GETTERS.get(owners)
            if getters is None:
                getters = _DEAL_GETTERS[owners] = tuple(
                    itemgetter(*[i for i, o in enumerate(owners) if o == seat]) for seat in range(4)
                )
            bits = _BITS.__getitem__
            s = self._copy()
            s.start = self
            s.deck = tuple(deck)
            s.unknown = (0, 0, 0, 0)
            s.hands = (
                sum(map(bits, getters[0](deck))),
                sum(map(bits, getters[1](deck))),
                sum(map(bits, getters[2](deck))),
                sum(map(bits, getters[3](deck))),
            )
            return s._dealt()
        seen = 0
        hands = [0, 0, 0, 0]
        unknown = [0, 0, 0, 0]
        plain = True  # every position a Card: the deck is kept as given
        for c, owner in zip(deck, owners, strict=True):
            if type(c) is not Card:
                plain = False
                if c is None:
                    if owner >= 0:
                        unknown[owner] += 1
                    continue
                if not isinstance(c, int) or not 0 <= c < 32:
                    raise ValueError(f"not a card: {c!r}")
                c = CARDS[c]
            bit = 1 << c
            if seen & bit:
                raise ValueError(f"card {c} appears twice in the deck")
            seen |= bit
            if owner >= 0:
                hands[owner] |= bit
        s = self._copy()
        s.start = self
        if plain:
            s.deck = tuple(deck)
        else:
            s.deck = tuple(c if c is None or type(c) is Card else CARDS[c] for c in deck)
        s.hands = (hands[0], hands[1], hands[2], hands[3])
        s.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])
        return s._dealt()

    def _dealt(self) -> State:
        """The fresh copy just dealt: the first seat to bid, the turned card."""
        self.to_act = (self.dealer + 1) % 4
        if self.rules.is_coinche:
            self.phase = _AUCTION
        else:
            if self.deck[20] is None:
                raise ValueError("the turned card must be known")
            self.turned = self.deck[20]
            self.phase = _TAKE_FIRST
        return self

    def _deal_few(self, deck: Sequence[Card | None]) -> State:
        """:meth:`deal` for three-handed and two-handed."""
        rules = self.rules
        size = rules.deck_size
        if len(deck) != size:
            raise ValueError(f"a deck has {size} positions, not {len(deck)}")
        owners = _owners_of(rules, self.dealer)
        two = rules.variant is Variant.TWO_HANDED
        public = _TWO_HANDED_PUBLIC if two else ()
        cards: list[Card | None] = []
        seen = 0
        hands = [0, 0, 0, 0]
        unknown = [0, 0, 0, 0]
        for pos, (c, owner) in enumerate(zip(deck, owners, strict=True)):
            if c is None:
                if two and pos in public:
                    raise ValueError(f"the face-up card at position {pos} must be known")
                if owner >= 0 and not two:
                    unknown[owner] += 1
                cards.append(None)
                continue
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 32:
                raise ValueError(f"not a card: {c!r}")
            c = CARDS[c]
            bit = 1 << c
            if not rules.deck_mask & bit:
                raise ValueError(f"{c} is not a card of the {rules.name} deck")
            if seen & bit:
                raise ValueError(f"card {c} appears twice in the deck")
            seen |= bit
            cards.append(c)
            if owner >= 0 and (not two or pos in public):
                hands[owner] |= bit
        s = self._copy()
        s.start = self
        s.deck = tuple(cards)
        s.hands = (hands[0], hands[1], hands[2], hands[3])
        s.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])
        s.to_act = (self.dealer + 1) % self.seats
        if two:
            last = s.deck[31]
            assert last is not None  # a public position
            s.trump = last >> 3
            s._start_play()
        else:
            turned = s.deck[TURNED_POSITION[3]]
            if turned is None:
                raise ValueError("the turned card must be known")
            s.turned = turned
            s.phase = Phase.TAKE_FIRST
        return s

    def reveal(self, cards: dict[int, Card]) -> State:
        """Learn the cards at some deck positions (a peer's own completion cards; in
        two-handed, face-down cards turned up, listed in :attr:`pending_openings`).

        A learned position of :attr:`pending_openings` leaves it and its card becomes
        playable by its owner. ``ValueError`` for a position outside the deck or one that
        already holds another card; in two-handed also for a face-down position that is
        not turned up yet, or a card already elsewhere in the deck.
        """
        s = self._copy()
        deck = list(s.deck)
        hands = list(s.hands)
        unknown = list(s.unknown)
        owners = self._owners()
        two = self.rules.variant is Variant.TWO_HANDED
        opening = set(self.pending_openings)
        for pos, c in cards.items():
            if not 0 <= pos < len(deck):
                raise ValueError(f"no deck position {pos}")
            if deck[pos] is not None and deck[pos] != c:
                raise ValueError(f"position {pos} already holds {deck[pos]}")
            if deck[pos] is None:
                if two:
                    if pos not in opening:
                        raise ValueError(f"position {pos} is face down until it is turned up")
                    deck[pos] = CARDS[c]
                    hands[owners[pos]] |= 1 << c
                    opening.discard(pos)
                    continue
                deck[pos] = CARDS[c]
                owner = owners[pos]
                if owner >= 0 and self.phase is not Phase.DEAL:
                    hands[owner] |= 1 << c
                    unknown[owner] -= 1
        if two:
            cast("_FewState", s).pending_openings = tuple(sorted(opening))
            if len({c for c in deck if c is not None}) != sum(c is not None for c in deck):
                raise ValueError("a card appears twice in the deck")
        s.deck = tuple(deck)
        s.hands = (hands[0], hands[1], hands[2], hands[3])
        s.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])
        return s

    def _owners(self) -> tuple[int, ...]:
        taker = self.taker if self.phase is Phase.PLAY or self.tricks else None
        return deal_owners(self.rules, self.dealer, taker)

    # -- legal actions ------------------------------------------------------------------

    def legal_actions(self) -> tuple[Action, ...]:
        """Every legal action of the seat to act (for a hidden hand: the cards it may hold);
        ``()`` between rounds, at the end, and while :attr:`pending_openings` is not empty."""
        phase = self.phase
        if phase is _PLAY:
            seat = self.to_act
            if self.unknown[seat]:
                return cards_of(self.legal_mask())
            # A known hand: :meth:`legal_mask`, written out. Every category lies within one
            # suit, so its cards come from a single lookup.
            hand = self.hands[seat]
            if not self.trick:
                return cards_of(hand)
            cats = self._cat_cache
            if cats is None:
                cats = self._categories()
            for cat in cats:
                m = hand & cat
                if m:
                    suit = (m.bit_length() - 1) >> 3
                    return _SUIT_CARDS[suit][m >> (suit << 3)]
            return cards_of(hand)
        if phase is _TAKE_FIRST:
            return (TAKE, PASS)
        if phase is _TAKE_SECOND:
            turned_suit = self.turned >> 3 if self.turned is not None else -1
            return tuple(CHOOSE[s] for s in range(4) if s != turned_suit) + (PASS,)
        if phase is _AUCTION:
            return self._auction_actions()
        return ()

    def _auction_actions(self) -> tuple[Bid, ...]:
        seat = self.to_act
        out: list[Bid] = [PASS]
        if self.multiplier == 1:
            trumps = [0, 1, 2, 3]
            if self.rules.sans_atout:
                trumps.append(NO_TRUMP)
            if self.rules.tout_atout:
                trumps.append(ALL_TRUMP)
            for v in BID_VALUES:
                if v > self.contract:
                    out.extend(BIDS[v, t] for t in trumps)
            if self.bidder >= 0 and (seat - self.bidder) % 2 == 1:
                out.append(COINCHE)
        elif self.multiplier == 2 and (seat - self.bidder) % 2 == 0:
            out.append(SURCOINCHE)
        return tuple(out)

    def _categories(self) -> tuple[int, ...]:
        """The play obligations of the seat to act, strongest first (RULES.md §4).

        The legal cards of a hand are its cards in the first category it meets (all of
        them if it meets none). The same list tells what an unexpected play proves: the
        seat holds none of the categories before the one its card is in.
        """
        cache = self._cat_cache
        if cache is not None:
            return cache
        trick = self.trick
        if trick:
            rules = self.rules
            best = self.best
            freed = rules.partner_master_frees and best == len(trick) - 2 and self.seats == 4
            by_top = _OBLIGATIONS[rules.must_overtrump_on_trump_lead][freed][self.trump]
            cats = by_top[trick[best]][trick[0] >> 3]
        else:
            cats = ()
        self._cat_cache = cats
        return cats

    def legal_mask(self) -> int:
        """The legal cards of the seat to act as a mask (play phase only).

        For a seat whose hand is partly unknown: every card it may legally play.
        """
        seat = self.to_act
        hand = self.hands[seat]
        if self.unknown[seat]:
            candidates = self._possible(seat) | hand
            out = 0
            for cat in self._categories():
                if hand & cat:
                    return out | (candidates & cat)
                out |= candidates & cat
            return candidates
        for cat in self._categories():
            m = hand & cat
            if m:
                return m
        return hand

    def _possible(self, seat: int) -> int:
        """Cards a hidden seat may hold: not played, not known elsewhere, not a shown void."""
        return ~(self.played | self._elsewhere(seat) | self.voids[seat]) & self.rules.deck_mask

    def _elsewhere(self, seat: int) -> int:
        """Cards this peer knows in the other seats' hands (privately for the hands it sees
        whole, its own; publicly for what hidden seats showed)."""
        h = self.hands
        return (h[0] | h[1] | h[2] | h[3]) & ~h[seat]

    # -- applying actions ---------------------------------------------------------------

    def apply(self, action: Action, claim: Claim | None = None, *, proven: bool = False) -> State:
        """The state after ``action`` by the seat to act; raises ``IllegalActionError``.

        ``claim`` is what a hidden seat declares with a play (:class:`Claim`); for a seat
        whose hand is known the engine computes it, and a given claim must agree.

        ``proven``: the card of a hidden seat comes with a proof that the seat holds it (the
        deck protocol's). Then what contradicts a void the seat showed proves a revoke
        rather than an impossible card: the play is accepted and left to the round audit
        (RULES.md §10). Its claim is checked only against what the record shows (its form,
        a card already played, the first card, the other belote card still to play), never
        against a deduction about the hand, and it teaches nothing about the hand: every
        false claim is the audit's to find, so that every peer and every verifier reaches
        the same verdict at the same step (PROTOCOL.md §6.2.3).
        """
        if self.phase is not _PLAY:
            return self._bid_action(action, claim)
        # Four seats: the play of a known hand is written out here, the rest goes to
        # :meth:`_play_with_claims`.
        c = action if type(action) is Card else self._card(action)
        seat = self.to_act
        cats = self._cat_cache
        if cats is None:
            cats = self._categories()
        hidden = self.unknown[seat]
        if claim is not None or hidden:
            return self._play_with_claims(c, claim, cats, proven=proven and hidden > 0)
        bit = 1 << c
        # A known hand (:meth:`_check_known`, written out); with the first trick or a belote
        # card, the claim :meth:`claim_for` finds (what :meth:`_play_known_claim` does).
        hand = self.hands[seat]
        if not hand & bit:
            raise IllegalActionError(c, self, f"seat {seat} does not hold {c}")
        denied = 0
        for cat in cats:
            m = hand & cat
            if m:
                if not m & bit:
                    raise IllegalActionError(
                        c, self, f"must play one of {format_cards(cards_of(m))}"
                    )
                break
            denied |= cat
        declared = self.declared
        belote = self.belote
        if not self.tricks or BELOTE_CARDS[self.trump] & bit:
            claim = self.claim_for(c)
            if not self.tricks and declared[seat] is None:
                declared = _replace_at(declared, seat, claim.announcements)
            if claim.belote:
                belote = belote + ((seat, c),)
            entry = (c, claim)
        else:
            entry = _PLAIN_PLAYS[c]
        # What ``self._copy()._place(seat, c, claim, denied)`` gives, each field set once.
        s = State()
        s.rules = self.rules
        s.phase = self.phase
        s.dealer = self.dealer
        s.number = self.number
        s.scores = self.scores
        s.pending = self.pending
        s.history = self.history
        s.winner = self.winner
        s.start = self.start
        s.deck = self.deck
        s.unknown = self.unknown
        s.turned = self.turned
        s.bids = self.bids
        s.passes = self.passes
        s.bidder = self.bidder
        s.trump = trump = self.trump
        s.taker = self.taker
        s.contract = self.contract
        s.multiplier = self.multiplier
        s.declared = declared
        s.belote = belote
        nb = ~bit
        h = self.hands
        s.hands = (h[0] & nb, h[1] & nb, h[2] & nb, h[3] & nb)
        if denied:
            v = self.voids
            s.voids = _replace_at(v, seat, v[seat] | denied)  # type: ignore[assignment]
        else:
            s.voids = self.voids
        s.played = self.played | bit
        s.actions = self.actions + (entry,)
        trick = self.trick
        best = self.best
        k = len(trick)  # the cards played to the trick before this one
        if k:
            if BEATS[trump][trick[best]] & bit:
                best = k
            trick = trick + (c,)
        else:
            trick = (c,)
        if k < 3:
            s.trick = trick
            s.best = best
            s.to_act = (seat + 1) % 4
            s.leader = self.leader
            s.tricks = self.tricks
            s.team_points = self.team_points
            # The next seat's obligations (:meth:`_categories`, written out): every play
            # of the trick needs them, to be checked or listed.
            rules = self.rules
            freed = rules.partner_master_frees and best == k - 1
            by_top = _OBLIGATIONS[rules.must_overtrump_on_trump_lead][freed][trump]
            s._cat_cache = by_top[trick[best]][trick[0] >> 3]
            return s
        s._cat_cache = ()  # a lead: no obligations
        leader = self.leader
        winner = (leader + best) % 4
        points = POINTS[trump]
        pts = points[trick[0]] + points[trick[1]] + points[trick[2]] + points[trick[3]]
        tricks = self.tricks
        last = len(tricks) == 7
        if last:
            pts += LAST_TRICK_BONUS
        s.tricks = tricks + (_new_trick(Trick, (leader, trick, winner, pts)),)
        tp = self.team_points
        s.team_points = (tp[0] + pts, tp[1]) if winner % 2 == 0 else (tp[0], tp[1] + pts)
        s.trick = ()
        s.best = 0
        s.leader = s.to_act = winner
        if last:
            return s._finish()
        return s

    def _card(self, action: object) -> Card:
        """The card of a play given as an int (or a refusal)."""
        if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < 32:
            raise IllegalActionError(action, self, "a card is expected")
        return CARDS[action]

    def _bid_action(self, action: Action, claim: Claim | None) -> State:
        """:meth:`apply` outside the play phase."""
        phase = self.phase
        if isinstance(action, Bid) and phase in _BIDDING:
            if action not in self.legal_actions():
                raise IllegalActionError(action, self, "not a legal bid now")
            if claim is not None and claim != NO_CLAIM:
                raise IllegalActionError(action, self, "claims go with plays")
            return self._bid(action)
        raise IllegalActionError(action, self, f"no such action in phase {phase.value}")

    def _bid(self, bid: Bid) -> State:
        s = self._copy()
        seat = self.to_act
        s.bids = self.bids + ((seat, bid),)
        s.actions = self.actions + ((bid, NO_CLAIM),)
        n = self.seats
        s.to_act = (seat + 1) % n
        kind = bid.kind
        if kind is _K_TAKE or kind is _K_CHOOSE:
            assert self.turned is not None
            s.trump = self.turned >> 3 if kind is _K_TAKE else bid.trump
            s.taker = seat
            s._complete_deal()
            s._start_play()
        elif kind is _K_PASS:
            s.passes = self.passes + 1
            if self.phase is _AUCTION:
                if self.bidder < 0 and s.passes == n:
                    return s._end_round(None)
                if self.bidder >= 0 and s.passes == 3:
                    s._start_play()
            elif s.passes == n:
                if self.phase is _TAKE_FIRST:
                    s.phase = _TAKE_SECOND
                    s.passes = 0
                else:
                    return s._end_round(None)
        elif kind is _K_BID:
            s.bidder = seat
            s.taker = seat
            s.trump = bid.trump
            s.contract = bid.value
            s.passes = 0
        elif kind is _K_COINCHE:
            s.multiplier = 2
            s.passes = 0
        else:
            s.multiplier = 4
            s._start_play()
        return s

    def _complete_deal(self) -> None:
        owners = _owners_of(self.rules, self.dealer, self.taker)
        hands = list(self.hands)
        unknown = list(self.unknown)
        assert self.turned is not None
        hands[self.taker] |= 1 << self.turned
        for pos in range(TURNED_POSITION[self.seats] + 1, self.rules.deck_size):
            c = self.deck[pos]
            if c is None:
                unknown[owners[pos]] += 1
            else:
                hands[owners[pos]] |= 1 << c
        self.hands = (hands[0], hands[1], hands[2], hands[3])
        self.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])

    def _start_play(self) -> None:
        self.phase = _PLAY
        self.leader = self.to_act = (self.dealer + 1) % self.seats
        self.passes = 0

    def _play_known_claim(self, c: Card, cats: tuple[int, ...]) -> State:
        """A card from a known hand that may carry announcements (first trick) or belote:
        what :meth:`_play_with_claims` does for it with the claim :meth:`claim_for` finds."""
        seat = self.to_act
        denied = self._check_known(c, cats)
        claim = self.claim_for(c)
        s = self._copy()
        if not self.tricks and self.declared[seat] is None:
            s.declared = _replace_at(self.declared, seat, claim.announcements)
        if claim.belote:
            s.belote = self.belote + ((seat, c),)
        return s._place(seat, c, claim, denied)

    def _check_known(self, c: Card, cats: tuple[int, ...]) -> int:
        """Check a card from a known hand; return the obligations the play shows unmet."""
        seat = self.to_act
        hand = self.hands[seat]
        bit = 1 << c
        if not hand & bit:
            raise IllegalActionError(c, self, f"seat {seat} does not hold {c}")
        denied = 0
        for cat in cats:
            m = hand & cat
            if m:
                if not m & bit:
                    must = format_cards(cards_of(m))
                    raise IllegalActionError(c, self, f"must play one of {must}")
                break
            denied |= cat
        return denied

    def _play_with_claims(
        self, c: Card, claim: Claim | None, cats: tuple[int, ...], *, proven: bool = False
    ) -> State:
        """A play that may carry a claim, or comes from a seat whose hand is hidden."""
        seat = self.to_act
        bit = 1 << c
        hand = self.hands[seat]
        hidden = self.unknown[seat]
        if not hidden:
            self._check_known(c, cats)
            expected = self.claim_for(c)
            if claim is not None and claim != expected:
                raise IllegalActionError(c, self, f"the claim does not match the hand ({claim})")
            claim = expected
        else:
            if self.played & bit:
                raise IllegalActionError(c, self, f"{c} was already played")
            if not proven and not self._possible(seat) & bit and not hand & bit:
                raise IllegalActionError(
                    c, self, f"seat {seat} cannot hold {c} (seen elsewhere or shown void)"
                )
            if claim is None:
                claim = NO_CLAIM
        s = self._copy()
        # Announcements, with the seat's first card.
        if not self.tricks and self.declared[seat] is None:
            s._declare(seat, claim.announcements, hidden, proven)
        elif claim.announcements:
            raise IllegalActionError(c, self, "announcements go with the first card")
        # Belote, with the first of the king and queen of trump (two-handed: the second,
        # checked with the claim above: every hand is known there).
        if claim.belote and self.seats == 2:
            s.belote = self.belote + ((seat, c),)
        elif claim.belote:
            other_bit = self._belote_partner(c)
            if not other_bit:
                raise IllegalActionError(c, self, "belote goes with the first of K and Q of trump")
            # A proven play's claim teaches nothing about the hand: whether the seat holds
            # the other card is the audit's question (PROTOCOL.md §6.2.3), so that no peer
            # deduces from its own hand what another peer or a verifier cannot.
            if hidden and not proven and not s.hands[seat] & other_bit:
                if not s._possible(seat) & other_bit:
                    raise IllegalActionError(c, self, "belote claimed without the other card")
                else:
                    s._learn(seat, other_bit)
            s.belote = self.belote + ((seat, c),)
        # What the play shows everybody: the seat held none of the stronger obligations.
        denied = 0
        for cat in cats:
            if cat & bit:
                break
            denied |= cat
        if hidden:
            if s.hands[seat] & denied and not proven:
                raise IllegalActionError(
                    c, self, f"seat {seat} was shown to hold a card it must play"
                )
            if not s.hands[seat] & bit:
                unknown = list(s.unknown)
                unknown[seat] -= 1
                s.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])
        return s._place(seat, c, claim, denied)

    def _place(self, seat: int, c: Card, claim: Claim, denied: int) -> State:
        """Put checked card ``c`` on the trick (on a fresh copy) and close the trick if full."""
        bit = 1 << c
        if denied:
            v = self.voids
            self.voids = _replace_at(v, seat, v[seat] | denied)  # type: ignore[assignment]
        # Only the player can hold the card: clearing it everywhere needs no branch.
        nb = ~bit
        h = self.hands
        self.hands = (h[0] & nb, h[1] & nb, h[2] & nb, h[3] & nb)
        self.played |= bit
        self.actions = self.actions + ((c, claim),)
        trick = self.trick
        n = self.seats
        if not trick:
            self.trick = (c,)
            self.to_act = (seat + 1) % n
            return self
        if BEATS[self.trump][trick[self.best]] & bit:
            self.best = len(trick)
        trick = trick + (c,)
        if len(trick) < n:
            self.trick = trick
            self.to_act = (seat + 1) % n
            return self
        if n != 4:
            return self._close_trick(trick, self.best)
        leader = self.leader
        winner = (leader + self.best) % 4
        points = POINTS[self.trump]
        pts = points[trick[0]] + points[trick[1]] + points[trick[2]] + points[trick[3]]
        tricks = self.tricks
        if len(tricks) == 7:
            pts += LAST_TRICK_BONUS
        self.tricks = tricks = tricks + (_new_trick(Trick, (leader, trick, winner, pts)),)
        tp = self.team_points
        self.team_points = (tp[0] + pts, tp[1]) if winner % 2 == 0 else (tp[0], tp[1] + pts)
        self.trick = ()
        self.best = 0
        self.leader = self.to_act = winner
        if len(tricks) == 8:
            return self._finish()
        return self

    def _close_trick(self, trick: tuple[Card, ...], best: int) -> State:
        """Two or three seats: take the full ``trick`` won by the card at index ``best`` (on
        a fresh copy), turn up what lay under its cards (two-handed), end the round after
        the last trick."""
        n = self.seats
        leader = self.leader
        winner = (leader + best) % n
        points = POINTS[self.trump]
        pts = sum(points[c] for c in trick)
        tricks = self.tricks
        last = len(tricks) == self.rules.tricks_per_round - 1
        if last:
            pts += LAST_TRICK_BONUS
        self.tricks = tricks + (_new_trick(Trick, (leader, trick, winner, pts)),)
        tp = self.team_points
        self.team_points = _replace_at(tp, winner, tp[winner] + pts)
        self.trick = ()
        self.best = 0
        self.leader = self.to_act = winner
        if last:
            return self._finish()
        if n == 2:
            self._turn_up(trick)
        return self

    def _turn_up(self, trick: tuple[Card, ...]) -> None:
        """Two-handed: each face-down card under a card of ``trick`` is turned up: it joins
        its owner's playable cards, or :attr:`pending_openings` when unknown here."""
        deck = self.deck
        owners = _owners_of(self.rules, self.dealer)
        hands = list(self.hands)
        pending = []
        for c in trick:
            pos = deck.index(c)
            if pos % 16 < 8:
                continue
            under = deck[pos - 8]
            if under is None:
                pending.append(pos - 8)
            else:
                hands[owners[pos - 8]] |= 1 << under
        self.hands = (hands[0], hands[1], hands[2], hands[3])
        cast("_FewState", self).pending_openings = tuple(sorted(pending))

    def _played_by(self, seat: int) -> int:
        """The cards ``seat`` played this round, as a mask."""
        n = self.seats
        m = 0
        for t in self.tricks:
            m |= 1 << t.cards[(seat - t.leader) % n]
        i = (seat - self.leader) % n
        if i < len(self.trick):
            m |= 1 << self.trick[i]
        return m

    def _belote_partner(self, c: int) -> int:
        """The mask of the other belote card if ``c`` is the first of K/Q of trump played."""
        rank = c & 7
        if (rank != KING and rank != QUEEN) or (self.trump != c >> 3 and self.trump != ALL_TRUMP):
            return 0
        other_bit = 1 << other_belote_card(c)
        return 0 if self.played & other_bit else other_bit

    def claim_for(self, c: int) -> Claim:
        """What the seat to act declares with card ``c``, from its known hand."""
        seat = self.to_act
        if self.seats == 2:
            # Two-handed: the play of the second of the K and Q of trump by one seat.
            rank = c & 7
            if (
                (rank == KING or rank == QUEEN)
                and c >> 3 == self.trump
                and self._played_by(seat) & 1 << other_belote_card(c)
            ):
                return Claim((), True)
            return NO_CLAIM
        anns: tuple[Announcement, ...] = ()
        if self.rules.announcements and not self.tricks and self.declared[seat] is None:
            anns = find_announcements(self.hands[seat], self.trump)
        other_bit = self._belote_partner(c)
        belote = bool(other_bit and self.hands[seat] & other_bit)
        if not anns:
            return BELOTE_CLAIM if belote else NO_CLAIM
        return Claim(anns, belote)

    def _learn(self, seat: int, cards: int) -> None:
        """Cards of a hidden seat become known (a claim shows them)."""
        hands = list(self.hands)
        unknown = list(self.unknown)
        new = cards & ~hands[seat]
        hands[seat] |= new
        unknown[seat] -= _popcount(new)
        if unknown[seat] < 0:
            raise IllegalActionError("claim", self, f"seat {seat} shows more cards than it holds")
        self.hands = (hands[0], hands[1], hands[2], hands[3])
        self.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])

    def _declare(
        self, seat: int, anns: tuple[Announcement, ...], hidden: int, proven: bool = False
    ) -> None:
        if anns and not self.rules.announcements:
            raise IllegalActionError("claim", self, "announcements are off in this rule set")
        if hidden:
            shown = 0
            for a in anns:
                try:
                    real = announcement_from_cards(a.card_list, self.trump)
                except ValueError as exc:
                    raise IllegalActionError("claim", self, str(exc)) from None
                if real != a or shown & a.cards:
                    raise IllegalActionError("claim", self, f"malformed announcement {a}")
                shown |= a.cards
            if proven:
                # Against what everybody knows only: a card already played. The cards shown
                # are not learned: a claim proves nothing about the hand until the audit
                # (PROTOCOL.md §6.2.3), and a hand made known by claims would have its next
                # cards checked against them, from what each peer privately knows.
                if shown & self.played:
                    raise IllegalActionError("claim", self, "announced a card already played")
            else:
                if shown & ~(self._possible(seat) | self.hands[seat]):
                    raise IllegalActionError("claim", self, "announced cards the seat cannot hold")
                self._learn(seat, shown)
        self.declared = _replace_at(self.declared, seat, anns)

    def _announcing_team(self) -> int | None:
        """The team (four seats) or seat (three-handed) that scores announcements."""
        if not self.rules.announcements:
            return None
        n = self.seats
        return scoring_team(tuple(d or () for d in self.declared), (self.dealer + 1) % n, n)

    def _finish(self) -> State:
        """Score the round just played (on a fresh copy) and wait for the next deal."""
        d = self.declared  # four entries, whatever the seats
        declared = (d[0] or (), d[1] or (), d[2] or (), d[3] or ())
        team = None
        if self.rules.announcements:
            n = self.seats
            team = scoring_team(declared, (self.dealer + 1) % n, n)
        score = self._score(declared, team)
        return self._next_round(self._record(score, declared, team))

    def _score(
        self,
        declared: tuple[tuple[Announcement, ...], ...] | None = None,
        team: int | None = -1,
    ) -> RoundScore:
        if declared is None:
            declared = tuple(d or () for d in self.declared)
        if team == -1:
            team = self._announcing_team()
        n = self.seats
        if n != 4:
            ann = [0] * n
            if team is not None:
                ann[team] = sum(a.points for a in declared[team])
            bel = [0] * n
            for seat, _ in self.belote:
                bel[seat] += 20
            return score_round_few(
                taker=self.taker,
                trick_points=self.team_points,
                trick_winners=tuple([t.winner for t in self.tricks]),
                announcements=tuple(ann),
                belote=tuple(bel),
            )
        ann = [0, 0]
        if team is not None:
            for seat in (team, team + 2):
                for a in declared[seat]:
                    ann[team] += a.points
        bel = [0, 0]
        for seat, _ in self.belote:
            bel[seat % 2] += 20
        return score_round(
            coinche=self.rules.is_coinche,
            taker=self.taker,
            contract=self.contract,
            multiplier=self.multiplier,
            trick_points=(self.team_points[0], self.team_points[1]),
            trick_winners=tuple([t.winner for t in self.tricks]),
            announcements=(ann[0], ann[1]),
            belote=(bel[0], bel[1]),
            pending=self.pending,
        )

    def round_record(self, score: RoundScore | None = None) -> RoundRecord:
        """The round in progress as a record (for an audit of an unfinished round)."""
        if self.start is None:
            raise ValueError("no round in progress")
        declared = tuple(d or () for d in self.declared)
        team = self._announcing_team() if score is not None else None
        return self._record(score, declared, team)

    def _record(
        self,
        score: RoundScore | None,
        declared: tuple[tuple[Announcement, ...], ...],
        team: int | None,
    ) -> RoundRecord:
        assert self.start is not None  # a round in progress
        scores = self.scores
        if score is not None:
            add = score.score
            if len(scores) == 2:
                scores = (scores[0] + add[0], scores[1] + add[1])
            else:
                scores = tuple(a + b for a, b in zip(scores, add, strict=True))
        return RoundRecord(
            self.number, self.dealer, self.start, self.deck, self.actions, self.turned,
            self.trump, self.taker, self.contract, self.multiplier, self.tricks, declared, team,
            self.belote, score, scores,
        )  # fmt: skip

    def _end_round(self, score: RoundScore | None) -> State:
        """Close the round (``score`` None for a redeal) and wait for the next deal."""
        return self._next_round(self.round_record(score))

    def _next_round(self, record: RoundRecord) -> State:
        s = self  # always a fresh copy made by the caller
        s.history = self.history + (record,)
        s.scores = record.scores_after
        if record.score is not None:
            s.pending = record.score.pending
        s.number = self.number + 1
        n = self.seats
        s.dealer = (self.dealer + 1) % n
        if n == 2 and record.score is not None:
            # Two-handed: the player who scored more deals; at equal points the deal passes.
            a, b = record.score.score
            if a != b:
                s.dealer = 0 if a > b else 1
        s._reset_round()
        target = self.rules.target
        scores = s.scores
        if len(scores) == 2:
            a, b = scores
            over = (a >= target or b >= target) and a != b
            top = a if a > b else b
        else:
            top = max(scores)
            over = top >= target and scores.count(top) == 1
        if over:
            s.phase = _GAME_OVER
            s.winner = scores.index(top)
        else:
            s.phase = _DEAL
        return s

    def replace_round(self, record: RoundRecord) -> State:
        """This state with its last round's record (and score) replaced (an audit's verdict).

        Only valid between rounds: the game goes on from the corrected score.
        """
        if not self.history or self.phase not in (Phase.DEAL, Phase.GAME_OVER):
            raise ValueError("a round can only be replaced between rounds")
        previous = self.history[-1]
        base = previous.start
        s = base._copy()
        s.number = previous.number
        s.dealer = previous.dealer
        s.start = base
        return s._next_round(record)

    # -- views --------------------------------------------------------------------------


class RoundRecord(NamedTuple):
    """A finished round (or a redeal), kept in :attr:`State.history`.

    A named tuple, like :class:`Trick`: one is made each round, and a frozen dataclass's
    constructor (a call per field) took 2.3 µs of a pure-Python round's ~108."""

    number: int
    dealer: int
    start: State
    """The state just before the deal: the audit replays the round from it."""
    deck: tuple[Card | None, ...]
    actions: tuple[tuple[Action, Claim], ...]
    turned: Card | None
    trump: int
    taker: int
    contract: int
    multiplier: int
    tricks: tuple[Trick, ...]
    declared: tuple[tuple[Announcement, ...], ...]
    announcements_team: int | None
    """The team (four seats) or the seat (three-handed) that scores announcements."""
    belote: tuple[tuple[int, Card], ...]
    """Each belote: the seat and the first of its king and queen played (two-handed: the
    second, the play that completed it)."""
    score: RoundScore | None
    """``None`` for a redeal (everybody passed)."""
    scores_after: tuple[int, ...]
    """Game scores after the round: per team with four seats, per seat otherwise."""

    @property
    def bids(self) -> tuple[tuple[int, Bid], ...]:
        """The bidding, as (seat, bid) pairs; bidding turns run on from dealer+1."""
        out = []
        n = self.start.seats
        seat = (self.dealer + 1) % n
        for action, _ in self.actions:
            if isinstance(action, Bid):
                out.append((seat, action))
                seat = (seat + 1) % n
        return tuple(out)


class _FewState(State):
    """A :class:`State` of two or three seats (RULES.md §12-13): the fields four seats do
    without, and every card through the general path (no four-seat fast path)."""

    __slots__ = ("pending_openings", "seats")

    def _copy(self) -> State:
        s = cast("_FewState", State._copy(self))
        s.seats = self.seats
        s.pending_openings = self.pending_openings
        return s

    def _reset_round(self) -> None:
        State._reset_round(self)
        self.pending_openings = ()

    def legal_actions(self) -> tuple[Action, ...]:
        if self.pending_openings:
            return ()
        return State.legal_actions(self)

    def apply(self, action: Action, claim: Claim | None = None, *, proven: bool = False) -> State:
        if self.pending_openings:
            raise IllegalActionError(
                action, self, f"positions {self.pending_openings} must be turned up first"
            )
        if self.phase is not _PLAY:
            return self._bid_action(action, claim)
        c = action if type(action) is Card else self._card(action)
        cats = self._categories()
        hidden = self.unknown[self.to_act]
        if claim is not None or hidden:
            return self._play_with_claims(c, claim, cats, proven=proven and hidden > 0)
        return self._play_known_claim(c, cats)
