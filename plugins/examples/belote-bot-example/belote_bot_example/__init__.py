"""An example belote-p2p bot package: one bot, ``greedy``, announced through a hook.

belote-p2p finds this module through the entry point ``example`` in the group
``belote_p2p.bots`` (see ``pyproject.toml``) and calls its ``belote_bots`` hook.
"""

from __future__ import annotations

import random

from belote_p2p.bot import (
    PASS,
    POINTS,
    TAKE,
    Action,
    Bid,
    BotInfo,
    Card,
    Observation,
    Phase,
    Rank,
    RuleSet,
    hookimpl,
)

__version__ = "0.1.0"


class GreedyBot:
    """Takes with the jack of the turned suit, bids 80 on a jack in coinche, and in play
    throws its most valuable card when its partner is winning, its cheapest otherwise."""

    def new_game(self, rules: RuleSet, seat: int) -> None:
        self.seat = seat

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        obs = observation
        if obs.phase is Phase.PLAY:
            points = POINTS[obs.trump]
            cards = [c for c in obs.legal if not isinstance(c, Bid)]
            partner_winning = obs.trick_winner_so_far() == obs.partner
            if partner_winning:
                return max(cards, key=lambda c: points[c])
            return min(cards, key=lambda c: (points[c], rng.random()))
        hand = obs.hand_mask
        if obs.phase is Phase.TAKE_FIRST and obs.turned is not None:
            jack = Card.of(Rank.JACK, obs.turned.suit).mask
            if (hand | obs.turned.mask) & jack and TAKE in obs.legal:
                return TAKE
        if obs.phase is Phase.AUCTION and obs.contract == 0:
            for bid in obs.legal:
                if (
                    isinstance(bid, Bid)
                    and bid.value == 80
                    and hand & Card.of(Rank.JACK, bid.trump).mask
                ):
                    return bid
        return PASS


@hookimpl
def belote_bots() -> list[BotInfo]:
    return [
        BotInfo(
            "example-greedy",
            GreedyBot,
            __version__,
            "Example plugin: loads its partner's tricks, otherwise plays cheap.",
        )
    ]
