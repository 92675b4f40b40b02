"""Who plays a seat: the :class:`Player` protocol a live peer asks, and :class:`BotPlayer`.

A person at a terminal or in a browser and a bot answer the same three calls, named as a
bot's optional hooks are (``new_game``, ``new_round``, ``decide``), so that one kind of
player can stand in for the other. ``decide`` is async: a person's answer takes time, and a
bot runs in a worker thread under a deadline.
"""

from __future__ import annotations

import random
from functools import partial
from typing import Protocol

import trio

from belote_p2p.errors import BeloteError
from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet

from .bots import FallbackCounts, SafePlayer, bounds_its_time, make_bot


class Resigned(BeloteError):
    """Raised by a player's ``decide`` when the person chose to leave the game: the peer
    signs its own seat gone (a resignation, not an error)."""


class Player(Protocol):
    """Who answers this seat's turns."""

    def new_game(self, rules: RuleSet, seat: int) -> None:
        """The game begins."""

    def new_round(self, observation: Observation) -> None:
        """A round was dealt; ``observation`` shows the new hand."""

    async def decide(self, observation: Observation) -> Action:
        """One of ``observation.legal``; may raise :class:`Resigned`."""
        ...


class BotPlayer:
    """A bot (``name[:key=value...]``), called in a worker thread under a deadline.

    An illegal answer, an exception or a timeout becomes a seeded random legal action
    (:func:`belote_p2p.players.bots.call_bot`), counted in :attr:`counts`.
    """

    def __init__(self, spec: str, *, deadline: float = 10.0, seed: int | None = None) -> None:
        self.spec = spec
        self.deadline = deadline
        self.rng = random.Random(seed if seed is not None else random.SystemRandom().random())
        self._fallback = random.Random(self.rng.random())
        self.safe = SafePlayer(
            make_bot(spec), name=spec, deadline_s=deadline, fallback=self._fallback
        )

    @property
    def counts(self) -> FallbackCounts:
        return self.safe.counts

    def new_game(self, rules: RuleSet, seat: int) -> None:
        self.safe.new_game(rules, seat)

    def new_round(self, observation: Observation) -> None:
        if self.safe.wants_new_round:
            self.safe.new_round(observation)

    async def decide(self, observation: Observation) -> Action:
        # The bot runs in trio's worker thread itself, abandoned past the deadline (one
        # thread hop per decision). A bot that bounds its own time (an exec bot) is given
        # the deadline and answers by it; the scope then only guards against a hang.
        safe = self.safe
        decide = partial(safe.decide, observation, self.rng, threaded=True)
        own_time = bounds_its_time(safe.bot)
        with trio.move_on_after(self.deadline + 5.0 if own_time else self.deadline):
            return await trio.to_thread.run_sync(decide, abandon_on_cancel=True)
        return safe.timed_out(observation)
