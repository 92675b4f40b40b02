"""The ``random`` bot: a uniform choice among the legal actions, the floor of the ladder."""

from __future__ import annotations

import random

from belote_p2p.bot import Action, Observation


class RandomBot:
    """Plays any legal action, uniformly, from the ``rng`` it is given."""

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        return rng.choice(observation.legal)
