"""belote-p2p: French Belote for four peers with no server.

The core (cards, rules, engine, audit) is pure and deterministic; see ``engine.State``.
"""

from __future__ import annotations

from belote_p2p.game.cards import CARDS, Card, Rank, Suit
from belote_p2p.game.engine import (
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    Bid,
    BidKind,
    Claim,
    IllegalActionError,
    Phase,
    State,
)
from belote_p2p.game.rules import RuleSet, Variant, rule_set

__version__ = "0.1.0"

__all__ = [
    "CARDS",
    "COINCHE",
    "PASS",
    "SURCOINCHE",
    "TAKE",
    "Bid",
    "BidKind",
    "Card",
    "Claim",
    "IllegalActionError",
    "Phase",
    "Rank",
    "RuleSet",
    "State",
    "Suit",
    "Variant",
    "__version__",
    "rule_set",
]
