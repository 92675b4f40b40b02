"""The environment's action numbering: every action of every variant as one integer.

``0..31`` play the card of that number; then pass, take, name each suit (classic), coinche,
surcoinche, and every coinche bid by value and trump mode. Pure Python: the policy bot
reads it without NumPy.
"""

from __future__ import annotations

from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import BID_VALUES, BIDS, CHOOSE, COINCHE, PASS, SURCOINCHE, TAKE, Action

ACTIONS: tuple[Action, ...] = (
    *CARDS,
    PASS,
    TAKE,
    *CHOOSE,
    COINCHE,
    SURCOINCHE,
    *(BIDS[value, trump] for value in BID_VALUES for trump in range(6)),
)
"""Every action, at its index."""

NUM_ACTIONS = len(ACTIONS)
FIRST_BID = len(CARDS)
"""The index of the first bidding action (the cards come before)."""

_INDEX: dict[Action, int] = {a: i for i, a in enumerate(ACTIONS)}


def action_index(action: Action) -> int:
    """The index of ``action``; ``KeyError`` for something that is no action."""
    return _INDEX[action]


def action_at(index: int) -> Action:
    """The action at ``index``; ``IndexError`` outside ``0 .. NUM_ACTIONS - 1``."""
    if not 0 <= index < NUM_ACTIONS:
        raise IndexError(f"no action {index}: actions are 0..{NUM_ACTIONS - 1}")
    return ACTIONS[index]
