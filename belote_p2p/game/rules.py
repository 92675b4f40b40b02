"""Rule sets as data: every convention a table agrees on before the game (RULES.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

SeatNumber = int
"""A seat ``0..3`` in playing order; seats ``s`` and ``(s + 2) % 4`` are partners."""


class Variant(Enum):
    """How trump is chosen and how a round is scored."""

    CLASSIC = "classic"
    """Take or pass on a turned card, then name a suit (RULES.md §3-8)."""
    COINCHE = "coinche"
    """An auction with values, coinche and surcoinche (RULES.md §9)."""


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
        return self.variant is Variant.COINCHE

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
        if not 0 <= self.first_dealer < 4:
            raise ValueError(f"first dealer must be a seat 0..3, not {self.first_dealer}")
        if not self.is_coinche and (self.sans_atout or self.tout_atout):
            raise ValueError("sans-atout and tout-atout exist only in coinche")


CLASSIC = RuleSet("classic", Variant.CLASSIC)
CLASSIC_NO_ANNOUNCEMENTS = RuleSet("classic-no-announcements", Variant.CLASSIC, announcements=False)
COINCHE = RuleSet("coinche", Variant.COINCHE)

RULE_SETS: dict[str, RuleSet] = {r.name: r for r in (CLASSIC, CLASSIC_NO_ANNOUNCEMENTS, COINCHE)}


def rule_set(name: str, **changes: Any) -> RuleSet:
    """The named rule set (``classic``, ``classic-no-announcements``, ``coinche``), changed."""
    try:
        base = RULE_SETS[name]
    except KeyError:
        raise ValueError(
            f"unknown variant {name!r}; choose one of {', '.join(RULE_SETS)}"
        ) from None
    rules = base.with_(**changes) if changes else base
    rules.validate()
    return rules
