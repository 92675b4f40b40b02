"""The bot plugin interface: one typed hook, and the values it exchanges.

A plugin is any module or object with functions marked ``@hookimpl`` (which a plugin
imports, with everything else it needs, from :mod:`belote_p2p.bot`). Installed packages
announce theirs through the entry-point group ``belote_p2p.bots``; the built-in bots
(``belote_bots``) load through the same door. A bot is an object with
``decide(observation, rng) -> action``; it may also have ``new_game(rules, seat)`` and
``new_round(observation)``, called when a game and each round begin.

Hooks are synchronous (pluggy does not await): a live peer runs ``decide`` in a worker
thread under a deadline (:func:`belote_p2p.players.bots.call_bot`). A bot whose ``decide``
takes a keyword ``deadline_s`` bounds its own time (the ``exec`` bot, on its program's
pipes): it is given the caller's deadline and runs in the caller's thread.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import pluggy

from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation

PROJECT_NAME = "belote_p2p"
ENTRY_POINT_GROUP = "belote_p2p.bots"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@runtime_checkable
class Bot(Protocol):
    """A player that answers "your turn" from what its seat may see.

    ``decide`` must return one of ``observation.legal``; every random choice must come
    from ``rng`` (the arena seeds it from the match seed, the board and the seat).
    """

    def decide(self, observation: Observation, rng: random.Random) -> Action: ...


BotFactory = Callable[..., Bot]
"""Builds a fresh bot; keyword options (``iterations=50``) tune it."""


@dataclass(frozen=True, slots=True)
class BotInfo:
    """What a plugin says about one bot it provides."""

    name: str
    """Unique among installed bots: lowercase letters, digits, ``-`` and ``_``."""
    factory: BotFactory
    version: str = "0"
    description: str = ""
    """One line."""
    package: str = ""
    """The distribution that provides it; filled in by :func:`belote_p2p.players.bots.load_bots`."""

    def create(self, **options: Any) -> Bot:
        return self.factory(**options)


@hookspec
def belote_bots() -> list[BotInfo]:  # type: ignore[empty-body]
    """The bots this plugin provides."""
