"""The built-in bots: ``random``, ``rules``, ``pimc`` and ``expert``, the ladder every bot is
measured on, and ``exec``, which seats a program in any language (``protocol/BOTS.md``).

This package is a plugin like any other: it is found through the entry point ``builtin`` in
the group ``belote_p2p.bots`` and answers the ``belote_bots`` hook.
"""

from __future__ import annotations

from belote_p2p.bot import BotInfo, hookimpl

from .exec_bot import EXEC
from .expert_bot import ExpertBot
from .pimc_bot import PimcBot
from .random_bot import RandomBot
from .rules_bot import RulesBot

__version__ = "0.1.0"

__all__ = ["ExpertBot", "PimcBot", "RandomBot", "RulesBot", "belote_bots"]


@hookimpl
def belote_bots() -> list[BotInfo]:
    return [
        BotInfo(
            "random",
            RandomBot,
            __version__,
            "Uniform over the legal actions; the floor of the ladder.",
        ),
        BotInfo(
            "rules",
            RulesBot,
            __version__,
            "Counts cards, infers voids, plays with its partner; bids from trump strength.",
        ),
        BotInfo(
            "pimc",
            PimcBot,
            __version__,
            "Monte Carlo over hands consistent with the play, greedy playouts (iterations=24).",
        ),
        BotInfo(
            "expert",
            ExpertBot,
            __version__,
            "Deals weighted by the bids and the plays, each card played out carefully, the"
            " end solved exactly (samples=64 or seconds=S).",
        ),
        EXEC,
    ]
