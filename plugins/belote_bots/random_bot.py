"""The ``random`` bot: a uniform choice among the legal actions, the floor of the ladder."""

from __future__ import annotations

import random

from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation


class RandomBot:
    """Plays any legal action, uniformly, from the ``rng`` it is given."""

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        return rng.choice(observation.legal)
