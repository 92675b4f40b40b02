"""Rule sets as data: every convention a table agrees on before the game (RULES.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from .cards import CARDS, Card

SeatNumber = int
"""A seat ``0..seats-1`` in playing order; with four seats, ``s`` and ``(s + 2) % 4`` are
partners (the other variants have no teams)."""


def partner_of(seat: SeatNumber) -> SeatNumber:
    """A seat's partner at a four-seat table (the one who plays its open hand if it leaves)."""
    return (seat + 2) % 4


class Variant(Enum):
    """How trump is chosen and how a round is scored."""

    CLASSIC = "classic"
    """Take or pass on a turned card, then name a suit (RULES.md §3-8)."""
    COINCHE = "coinche"
    """An auction with values, coinche and surcoinche (RULES.md §9)."""
    THREE_HANDED = "three-handed"
    """Three players, each for himself, 24 cards, take or pass as in classic (RULES.md §12)."""
    TWO_HANDED = "two-handed"
    """Two players, piles of a face-down card under a face-up one ("belote découverte"),
    trump from the last card dealt, no bidding (RULES.md §13)."""


DECK_32: tuple[Card, ...] = CARDS
"""The 32-card deck in canonical order (suits S H D C, ranks 7 to A)."""
DECK_24: tuple[Card, ...] = tuple(c for c in CARDS if c & 7 >= 2)
"""The 24-card deck of three-handed: the 32-card order without the 7s and 8s."""
# The variants as module constants for the properties below, which the engine reads in its
# hot paths: CPython 3.11 reads an attribute of an Enum class through a slow hook
# (``EnumType.__getattr__``, about 70 ns), and hashing a member (a dict of them) runs Python.
_COINCHE = Variant.COINCHE
_THREE_HANDED = Variant.THREE_HANDED
_TWO_HANDED = Variant.TWO_HANDED


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The conventions of one table. Peers sign it with the table definition."""

    name: str
    variant: Variant
    announcements: bool = True
    """Tierce, quarte, quinte and carrés score (RULES.md §5)."""
    target: int = 501
    """A team reaching this score after a round wins the game (RULES.md §8)."""
    first_dealer: int = 0
    sans_atout: bool = False
    """Coinche only: allow no-trump bids."""
    tout_atout: bool = False
    """Coinche only: allow all-trump bids."""
    partner_master_frees: bool = True
    """A player who cannot follow may discard while the partner is master (RULES.md §4)."""
    must_overtrump_on_trump_lead: bool = True
    """On a trump lead, play a higher trump if you can, even over the partner (RULES.md §4)."""

    @property
    def is_coinche(self) -> bool:
        return self.variant is _COINCHE

    @property
    def seats(self) -> int:
        """How many seats play: 4 (classic, coinche), 3 (three-handed) or 2 (two-handed)."""
        variant = self.variant
        return 3 if variant is _THREE_HANDED else 2 if variant is _TWO_HANDED else 4

    @property
    def has_teams(self) -> bool:
        """Seats ``s`` and ``s + 2`` are partners: only with four seats. Otherwise scores,
        totals and XP are per seat, and no partner ever frees a player (RULES.md §12-13)."""
        return self.variant is not _THREE_HANDED and self.variant is not _TWO_HANDED

    @property
    def deck_size(self) -> int:
        """Cards in the deck and positions in a deal: 24 for three-handed, 32 otherwise."""
        return 24 if self.variant is _THREE_HANDED else 32

    @property
    def deck_cards(self) -> tuple[Card, ...]:
        """The variant's cards in canonical deck order (the order a deck protocol starts
        from): the 32 cards, or for three-handed the same order without the 7s and 8s."""
        return DECK_24 if self.variant is _THREE_HANDED else DECK_32

    @property
    def deck_mask(self) -> int:
        """The variant's cards as a mask (bit ``card`` set for each card of the deck)."""
        return 0xFCFCFCFC if self.variant is _THREE_HANDED else 0xFFFFFFFF

    @property
    def tricks_per_round(self) -> int:
        """8 tricks, or 16 tricks of two in two-handed."""
        return 16 if self.variant is _TWO_HANDED else 8

    @property
    def has_bidding(self) -> bool:
        """Whether a round starts with take/pass or an auction (not in two-handed)."""
        return self.variant is not _TWO_HANDED

    def with_(self, **changes: Any) -> RuleSet:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant.value,
            "announcements": self.announcements,
            "target": self.target,
            "first_dealer": self.first_dealer,
            "sans_atout": self.sans_atout,
            "tout_atout": self.tout_atout,
            "partner_master_frees": self.partner_master_frees,
            "must_overtrump_on_trump_lead": self.must_overtrump_on_trump_lead,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        fields = dict(data)
        fields["variant"] = Variant(fields["variant"])
        rules = cls(**fields)
        rules.validate()
        return rules

    def validate(self) -> None:
        if self.target <= 0:
            raise ValueError(f"target must be positive, not {self.target}")
        seats = self.seats
        if not 0 <= self.first_dealer < seats:
            raise ValueError(f"first dealer must be a seat 0..{seats - 1}, not {self.first_dealer}")
        if not self.is_coinche and (self.sans_atout or self.tout_atout):
            raise ValueError("sans-atout and tout-atout exist only in coinche")
        if not self.has_teams and not self.partner_master_frees:
            raise ValueError(f"{self.variant.value} has no partners: partner_master_frees stays on")
        if self.variant is Variant.TWO_HANDED and self.announcements:
            raise ValueError("two-handed has no announcements")


CLASSIC = RuleSet("classic", Variant.CLASSIC)
CLASSIC_NO_ANNOUNCEMENTS = RuleSet("classic-no-announcements", Variant.CLASSIC, announcements=False)
COINCHE = RuleSet("coinche", Variant.COINCHE)
THREE_HANDED = RuleSet("three-handed", Variant.THREE_HANDED)
TWO_HANDED = RuleSet("two-handed", Variant.TWO_HANDED, announcements=False)

RULE_SETS: dict[str, RuleSet] = {
    r.name: r for r in (CLASSIC, CLASSIC_NO_ANNOUNCEMENTS, COINCHE, THREE_HANDED, TWO_HANDED)
}


def rule_set(name: str, **changes: Any) -> RuleSet:
    """The named rule set (``classic``, ``classic-no-announcements``, ``coinche``,
    ``three-handed``, ``two-handed``), changed; ``ValueError`` for an unknown name or a
    change :meth:`RuleSet.validate` refuses."""
    try:
        base = RULE_SETS[name]
    except KeyError:
        raise ValueError(
            f"unknown variant {name!r}; choose one of {', '.join(RULE_SETS)}"
        ) from None
    rules = base.with_(**changes) if changes else base
    rules.validate()
    return rules
