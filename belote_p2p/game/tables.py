"""Precomputed per-trump tables: card points, trick strength, and "higher than" masks.

A trump mode is a suit ``0..3`` (that suit is trump), :data:`NO_TRUMP` (sans-atout: every
suit ranks and scores as non-trump) or :data:`ALL_TRUMP` (tout-atout: every suit ranks as
trump, with its own point scale). RULES.md §2 and §9.
"""

from __future__ import annotations

from collections.abc import Sequence

TrumpMode = int
"""A suit ``0..3`` (that suit is trump), :data:`NO_TRUMP` or :data:`ALL_TRUMP`; -1 before one
is chosen."""

NO_TRUMP = 4
ALL_TRUMP = 5
TRUMP_MODES = (0, 1, 2, 3, NO_TRUMP, ALL_TRUMP)
TRUMP_LETTERS = ("S", "H", "D", "C", "NT", "AT")

# Indexed by rank 7 8 9 T J Q K A.
PLAIN_POINTS = (0, 0, 0, 10, 2, 3, 4, 11)
TRUMP_POINTS = (0, 0, 14, 10, 20, 3, 4, 11)
ALL_TRUMP_POINTS = (0, 0, 9, 5, 14, 1, 3, 6)
# Strength within a suit, higher wins.  Plain: A T K Q J 9 8 7.  Trump: J 9 A T K Q 8 7.
PLAIN_ORDER = (0, 1, 2, 6, 3, 4, 5, 7)
TRUMP_ORDER = (0, 1, 6, 4, 7, 2, 3, 5)


def _is_trump(mode: int, suit: int) -> bool:
    return mode == ALL_TRUMP or mode == suit


def _points(mode: int, c: int) -> int:
    suit, rank = c >> 3, c & 7
    if mode == ALL_TRUMP:
        return ALL_TRUMP_POINTS[rank]
    return TRUMP_POINTS[rank] if mode == suit else PLAIN_POINTS[rank]


def _strength(mode: int, c: int) -> int:
    """Order within the card's suit, plus 8 for a trump so that any trump beats any plain card."""
    suit, rank = c >> 3, c & 7
    if _is_trump(mode, suit):
        return 8 + TRUMP_ORDER[rank]
    return PLAIN_ORDER[rank]


POINTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(_points(m, c) for c in range(32)) for m in TRUMP_MODES
)
"""``POINTS[mode][card]``: the card's points under that trump mode."""

STRENGTH: tuple[tuple[int, ...], ...] = tuple(
    tuple(_strength(m, c) for c in range(32)) for m in TRUMP_MODES
)
"""``STRENGTH[mode][card]``: rank within the suit, +8 for trumps."""

ABOVE: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        sum(
            1 << d
            for d in range((c >> 3) * 8, (c >> 3) * 8 + 8)
            if _strength(m, d) > _strength(m, c)
        )
        for c in range(32)
    )
    for m in TRUMP_MODES
)
"""``ABOVE[mode][card]``: mask of the cards of the same suit that beat it."""

TRUMP_MASK: tuple[int, ...] = tuple(
    (0xFFFFFFFF if m == ALL_TRUMP else 0 if m == NO_TRUMP else 0xFF << (8 * m)) for m in TRUMP_MODES
)
"""Mask of the trump cards under each mode."""

BEATS: tuple[tuple[int, ...], ...] = tuple(
    tuple(ABOVE[m][c] | (0 if _is_trump(m, c >> 3) else TRUMP_MASK[m]) for c in range(32))
    for m in TRUMP_MODES
)
"""``BEATS[mode][card]``: mask of the cards that beat it in a trick (a stronger card of its
suit; any trump over a plain card): the one statement of who takes a trick, read by
:func:`winning_index`, the engine, the fast path and the solver."""


def winning_index(cards: Sequence[int], mode: int) -> int:
    """The index in ``cards`` (a trick, or a trick so far, in play order) of the card that
    wins it: the highest trump, else the highest card of the suit led."""
    beats = BEATS[mode]
    best = 0
    for i in range(1, len(cards)):
        if beats[cards[best]] >> cards[i] & 1:
            best = i
    return best


LAST_TRICK_BONUS = 10


def trump_letter(mode: int) -> str:
    return TRUMP_LETTERS[mode]


def parse_trump(text: str) -> int:
    """``S H D C`` (or a suit symbol), ``NT``/``SA`` (sans-atout), ``AT``/``TA`` (tout-atout)."""
    t = text.strip().upper()
    if t in ("NT", "SA", "NOTRUMP", "SANS-ATOUT"):
        return NO_TRUMP
    if t in ("AT", "TA", "ALLTRUMP", "TOUT-ATOUT"):
        return ALL_TRUMP
    from .cards import Suit

    return int(Suit.parse(t))
