"""Cards, suits and ranks of the 32-card Belote deck, and hands as 32-bit masks.

A card is a small int: ``suit * 8 + rank``, with suits ordered S H D C and ranks
7 8 9 T J Q K A (the sequence order of announcements). A hand, a trick's cards or
the set of played cards is a mask: bit ``card`` is set when the card is in it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

SUIT_LETTERS = "SHDC"
RANK_LETTERS = "789TJQKA"
SUIT_SYMBOLS = "♠♥♦♣"

CardMask = int
"""A set of cards: bit ``card`` is set when the card is in it."""

FULL_DECK: CardMask = (1 << 32) - 1


class Suit(IntEnum):
    """A suit, in the engine's order S H D C."""

    SPADES = 0
    """♠"""
    HEARTS = 1
    """♥"""
    DIAMONDS = 2
    """♦"""
    CLUBS = 3
    """♣"""

    @property
    def letter(self) -> str:
        return SUIT_LETTERS[self]

    def __str__(self) -> str:
        return SUIT_LETTERS[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Parse ``S``, ``h``, ``♦``... into a suit; raise ``ValueError`` otherwise."""
        t = text.strip().upper()
        if len(t) == 1:
            if t in SUIT_LETTERS:
                return cls(SUIT_LETTERS.index(t))
            if t in SUIT_SYMBOLS:
                return cls(SUIT_SYMBOLS.index(t))
            if t in "♤♡♢♧":
                return cls("♤♡♢♧".index(t))
        raise ValueError(f"not a suit: {text!r} (expected one of S H D C)")


class Rank(IntEnum):
    """A rank, in sequence order (7 lowest, ace highest) as announcements use it."""

    SEVEN = 0
    EIGHT = 1
    NINE = 2
    TEN = 3
    JACK = 4
    QUEEN = 5
    KING = 6
    ACE = 7

    @property
    def letter(self) -> str:
        return RANK_LETTERS[self]

    def __str__(self) -> str:
        return RANK_LETTERS[self]


class Card(int):
    """One of the 32 cards, an int in ``0..31`` that prints as ``"JH"``.

    Use :func:`card` or :meth:`Card.parse` rather than the constructor; the 32 instances
    live in :data:`CARDS`.
    """

    __slots__ = ()

    @property
    def suit(self) -> Suit:
        return Suit(self >> 3)

    @property
    def rank(self) -> Rank:
        return Rank(self & 7)

    @property
    def mask(self) -> int:
        return 1 << self

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_NAMES[self]!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``"JH"``, ``"jh"``, ``"10h"``, ``"T♥"`` into a card.

        Raises ``ValueError`` with the offending text when it names no card.
        """
        t = text.strip().upper()
        if t.startswith("10"):
            t = "T" + t[2:]
        if len(t) == 2 and t[0] in RANK_LETTERS:
            try:
                suit = Suit.parse(t[1])
            except ValueError:
                pass
            else:
                return CARDS[suit * 8 + RANK_LETTERS.index(t[0])]
        raise ValueError(f"not a card: {text!r} (expected rank 7 8 9 T J Q K A then suit S H D C)")

    @classmethod
    def of(cls, rank: Rank | int, suit: Suit | int) -> Card:
        return CARDS[int(suit) * 8 + int(rank)]


_NAMES = tuple(r + s for s in SUIT_LETTERS for r in RANK_LETTERS)
CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(32))
"""The 32 cards, indexed by their value: ``CARDS[int(c)] is c``."""

SUIT_MASKS: tuple[int, ...] = tuple(0xFF << (8 * s) for s in range(4))
"""Mask of the eight cards of each suit."""

RANK_MASKS: tuple[int, ...] = tuple(sum(1 << (s * 8 + r) for s in range(4)) for r in range(8))
"""Mask of the four cards of each rank."""


def card(text: str) -> Card:
    """Shorthand for :meth:`Card.parse`."""
    return Card.parse(text)


def mask_of(cards: Iterable[int]) -> int:
    """The mask holding ``cards``; raises ``ValueError`` if a card appears twice."""
    m = 0
    for c in cards:
        bit = 1 << c
        if m & bit:
            raise ValueError(f"card {CARDS[c]} appears twice")
        m |= bit
    return m


# Cards of every byte pattern, so that turning a mask into cards costs four lookups.
_BYTE_BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(8) if p >> i & 1) for p in range(256)
)
_BYTE_CARDS: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(tuple(CARDS[s * 8 + i] for i in _BYTE_BITS[p]) for p in range(256)) for s in range(4)
)


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of ``mask`` in deck order (suit S H D C, then rank 7 to A)."""
    b = _BYTE_CARDS
    return b[0][mask & 0xFF] + b[1][mask >> 8 & 0xFF] + b[2][mask >> 16 & 0xFF] + b[3][mask >> 24]


def parse_cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in texts)


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(_NAMES[c] for c in cards)
