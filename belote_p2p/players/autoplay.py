"""A person's seat with a stand-in: when the person has not answered by the deadline, the
peer's own bot plays the turn for them, and the person takes over again at their next turn.

:class:`Autoplay` wraps any :class:`~belote_p2p.players.player.Player` (a person at the
terminal or in the browser) with a stand-in bot (``--autoplay rules``); without a stand-in
(``--autoplay none``) the person keeps the turn past the deadline, and the other peers sign
the seat gone after their grace period.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet

from .player import BotPlayer, Player


class Autoplay:
    """``person`` answers each turn; past ``seconds`` (the decision deadline), ``standin``
    does, and ``on_autoplay(observation, action)`` is told (to say so)."""

    def __init__(
        self,
        person: Player,
        standin: Player | None,
        seconds: float,
        on_autoplay: Callable[[Observation, Action], None] | None = None,
    ) -> None:
        self.person = person
        self.standin = standin
        self.seconds = seconds
        self.on_autoplay = on_autoplay
        self.autoplayed = 0
        """Turns the stand-in played."""

    @classmethod
    def for_person(
        cls,
        person: Player,
        bot: str | None,
        seconds: float,
        on_autoplay: Callable[[Observation, Action], None] | None = None,
        *,
        bot_deadline: float = 10.0,
        seed: int | None = None,
    ) -> Autoplay:
        """``person`` with the stand-in ``bot`` (``--autoplay``; None: nobody), as the
        terminal table and the browser's both play a person's seat."""
        standin = None if bot is None else BotPlayer(bot, deadline=bot_deadline, seed=seed)
        return cls(person, standin, seconds, on_autoplay)

    def new_game(self, rules: RuleSet, seat: int) -> None:
        self.person.new_game(rules, seat)
        if self.standin is not None:
            self.standin.new_game(rules, seat)

    def new_round(self, observation: Observation) -> None:
        self.person.new_round(observation)
        if self.standin is not None:
            self.standin.new_round(observation)

    async def decide(self, observation: Observation) -> Action:
        if self.standin is None:
            return await self.person.decide(observation)
        with trio.move_on_after(self.seconds):
            return await self.person.decide(observation)
        action = await self.standin.decide(observation)
        self.autoplayed += 1
        if self.on_autoplay is not None:
            self.on_autoplay(observation, action)
        return action
