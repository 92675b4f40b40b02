"""Announcements (tierce, quarte, quinte, carré): finding them in a hand and ranking them.

RULES.md §5: a card counts in at most one announcement; each carré either counts or gives
its four cards back to the sequences; of these choices the one with the most points counts,
then the one whose best announcement ranks higher.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from operator import attrgetter

from .cards import CARDS, RANK_MASKS, Card, cards_of
from .tables import ALL_TRUMP, NO_TRUMP


class AnnouncementKind(Enum):
    """The kind of an announcement, by its name in the rules."""

    TIERCE = "tierce"
    """Three in sequence in one suit: 20."""
    QUARTE = "quarte"
    """Four in sequence: 50."""
    QUINTE = "quinte"
    """Five or more in sequence: 100."""
    CARRE = "carre"
    """Four of a rank among J 9 A T K Q: 200 for jacks, 150 for nines, 100 otherwise."""


# Ranks 7 8 9 T J Q K A by index: carré points (0 = no carré for that rank).
CARRE_POINTS = (0, 0, 150, 100, 200, 100, 100, 100)
# Carrés of equal points rank A > T > K > Q (RULES.md §5), indexed by rank 7 8 9 T J Q K A;
# jacks and nines have points of their own, so their place here never decides.
CARRE_ORDER = (0, 0, 0, 3, 0, 1, 2, 4)


@dataclass(frozen=True, slots=True)
class Announcement:
    """One announcement held by a seat: its kind, its cards (a mask) and its points."""

    kind: AnnouncementKind
    cards: int
    points: int
    key: tuple[int, int, int, int, int]
    """Comparison key: points, carré over sequence, length, top card, sequence in trump."""

    @property
    def card_list(self) -> tuple[Card, ...]:
        return cards_of(self.cards)

    def __str__(self) -> str:
        return f"{self.kind.value} {' '.join(str(c) for c in self.card_list)} ({self.points})"

    def to_json(self, seat: int) -> dict[str, object]:
        return {
            "seat": seat,
            "kind": self.kind.value,
            "cards": [str(c) for c in self.card_list],
            "points": self.points,
        }


def _runs(pattern: int) -> tuple[tuple[int, int], ...]:
    out = []
    r = 0
    while r < 8:
        if pattern >> r & 1:
            start = r
            while r < 8 and pattern >> r & 1:
                r += 1
            if r - start >= 3:
                out.append((start, r - start))
        else:
            r += 1
    return tuple(out)


_RUNS: tuple[tuple[tuple[int, int], ...], ...] = tuple(_runs(p) for p in range(256))


def sequence(suit: int, low: int, length: int, trump_mode: int) -> Announcement:
    return _sequence(suit, low, length, 1 if trump_mode == suit or trump_mode == ALL_TRUMP else 0)


def _sequence(suit: int, low: int, length: int, in_trump: int) -> Announcement:
    points = 20 if length == 3 else 50 if length == 4 else 100
    kind = (
        AnnouncementKind.TIERCE
        if length == 3
        else AnnouncementKind.QUARTE
        if length == 4
        else AnnouncementKind.QUINTE
    )
    mask = ((1 << length) - 1) << (suit * 8 + low)
    return Announcement(kind, mask, points, (points, 0, length, low + length - 1, in_trump))


def carre(rank: int) -> Announcement:
    points = CARRE_POINTS[rank]
    return Announcement(
        AnnouncementKind.CARRE, RANK_MASKS[rank], points, (points, 1, 4, CARRE_ORDER[rank], 0)
    )


def _suit_sequences(suit: int, in_trump: int) -> tuple[tuple[Announcement, ...], ...]:
    """Indexed by a pattern of ranks: the sequences of ``suit`` holding them, lowest first."""
    return tuple(
        tuple(_sequence(suit, low, length, in_trump) for low, length in _RUNS[pattern])
        for pattern in range(256)
    )


_SUIT_SEQUENCES = tuple((_suit_sequences(suit, 0), _suit_sequences(suit, 1)) for suit in range(4))
_SEQUENCES_BY_MODE: tuple[tuple[tuple[tuple[Announcement, ...], ...], ...], ...] = tuple(
    tuple(_SUIT_SEQUENCES[suit][mode == suit or mode == ALL_TRUMP] for suit in range(4))
    for mode in range(ALL_TRUMP + 1)
)
"""``_SEQUENCES_BY_MODE[trump_mode][suit][pattern]``: the sequences of a suit holding the
ranks of ``pattern``. Announcements are immutable values: finding a hand's (every seat's
first card of a round) reads them here rather than building them."""


def _sequences(hand: int, trump_mode: int) -> tuple[Announcement, ...]:
    """The sequences of ``hand``, suit by suit (S H D C), lowest first in a suit."""
    mode = trump_mode if 0 <= trump_mode <= ALL_TRUMP else NO_TRUMP  # another: no suit trump
    s0, s1, s2, s3 = _SEQUENCES_BY_MODE[mode]
    return s0[hand & 0xFF] + s1[hand >> 8 & 0xFF] + s2[hand >> 16 & 0xFF] + s3[hand >> 24 & 0xFF]


def _choice_key(anns: list[Announcement]) -> tuple[int, tuple[int, int, int, int, int]]:
    total = sum(a.points for a in anns)
    best = max((a.key for a in anns), default=(0, 0, 0, 0, 0))
    return total, best


_announcement_key = attrgetter("key")


def find_announcements(hand: int, trump_mode: int) -> tuple[Announcement, ...]:
    """The announcements that ``hand`` (an 8-card mask) declares, best first."""
    # Bit r of ``full`` is set when all four suits hold rank r (7s and 8s make no carré).
    full = hand & hand >> 8 & hand >> 16 & hand >> 24 & 0xFC
    if not full:
        seqs = _sequences(hand, trump_mode)
        if len(seqs) < 2:
            return seqs
        return tuple(sorted(seqs, key=_announcement_key, reverse=True))
    carres = [r for r in range(8) if full >> r & 1]
    best: list[Announcement] = []
    best_key = (-1, (0, 0, 0, 0, 0))
    for choice in range(1 << len(carres)):
        kept = [carres[i] for i in range(len(carres)) if choice >> i & 1]
        rest = hand
        for r in kept:
            rest &= ~RANK_MASKS[r]
        anns = [carre(r) for r in kept] + list(_sequences(rest, trump_mode))
        key = _choice_key(anns)
        if key > best_key:
            best, best_key = anns, key
    return tuple(sorted(best, key=_announcement_key, reverse=True))


def announcement_from_cards(cards: list[Card] | tuple[Card, ...], trump_mode: int) -> Announcement:
    """Rebuild a declared announcement from its cards; ``ValueError`` if they form none."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    ranks = {c & 7 for c in cards}
    if len(ranks) == 1 and CARRE_POINTS[cards[0] & 7] and mask == RANK_MASKS[cards[0] & 7]:
        return carre(cards[0] & 7)
    suits = {c >> 3 for c in cards}
    if len(suits) == 1 and len(cards) >= 3:
        suit = cards[0] >> 3
        pattern = mask >> (8 * suit) & 0xFF
        runs = _RUNS[pattern]
        if len(runs) == 1 and runs[0][1] == len(cards):
            return sequence(suit, runs[0][0], runs[0][1], trump_mode)
    raise ValueError(f"{' '.join(str(CARDS[c]) for c in cards)} is no announcement")


def scoring_team(
    declared: tuple[tuple[Announcement, ...], ...], first_seat: int, seats: int = 4
) -> int | None:
    """Who scores announcements (RULES.md §5, §12), or ``None`` if nobody has one: with four
    seats the team of the seat holding the best one; with fewer (three-handed) that seat.

    ``declared[seat]`` is the seat's announcements (``seats`` entries at least); at equal
    keys the seat nearer to ``first_seat`` in playing order wins.
    """
    best: tuple[tuple[int, int, int, int, int], int] | None = None
    for i in range(seats):
        seat = (first_seat + i) % seats
        for a in declared[seat]:
            candidate = (a.key, -i)
            if best is None or candidate > best:
                best = candidate
    if best is None:
        return None
    seat = (first_seat - best[1]) % seats
    return seat % 2 if seats == 4 else seat
