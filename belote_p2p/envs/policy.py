"""The ``policy`` bot: any policy callable of the environment seated at a table.

``policy:callable=package.module.function`` imports ``function``, which is given what the
environment gives an agent, ``{"observation": vector, "action_mask": mask}``
(:mod:`belote_p2p.envs.encoding`; at a table of three or two seats, what an agent of that
table's environment sees), and returns an action index (:data:`ACTIONS`). In Python,
``PolicyBot(policy=function)`` takes the callable itself. An index that is no legal action
is the arena's and the table's business like any illegal answer: a seeded random legal
action instead, counted.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from typing import Any

from belote_p2p.game.engine import Action
from belote_p2p.game.observation import Observation
from belote_p2p.players.hookspecs import BotInfo, hookimpl

from .actions import NUM_ACTIONS, action_at

Policy = Callable[[dict[str, Any]], Any]
"""A policy: the environment's observation dict in, an action index out."""


def load_policy(path: str) -> Policy:
    """The callable at ``package.module.attribute``; ``ValueError`` when there is none."""
    module_name, _, attribute = path.rpartition(".")
    if not module_name or not attribute:
        raise ValueError(f"policy callable {path!r}: expected package.module.function")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"policy callable {path!r} not found: {exc}") from None
    if not callable(found):
        raise ValueError(f"policy callable {path!r} is not callable")
    policy: Policy = found
    return policy


class PolicyBot:
    """Asks ``policy`` (a callable, or its dotted path as ``callable``) for each decision."""

    def __init__(self, policy: Policy | None = None, callable: str | None = None) -> None:
        if (policy is None) == (callable is None):
            raise ValueError("the policy bot takes a policy, or callable=package.module.name")
        if policy is None:
            if not isinstance(callable, str):
                raise ValueError(f"callable must be a dotted path, not {callable!r}")
            policy = load_policy(callable)
        from .encoding import action_mask, encode  # NumPy, from the [rl] extra

        self.policy = policy
        self._encode = encode
        self._mask = action_mask

    def decide(self, observation: Observation, rng: random.Random) -> Action:
        answer = self.policy(
            {"observation": self._encode(observation), "action_mask": self._mask(observation)}
        )
        index = int(answer)
        if not 0 <= index < NUM_ACTIONS:
            raise ValueError(f"the policy answered {answer!r}, not an action index")
        return action_at(index)


@hookimpl
def belote_bots() -> list[BotInfo]:
    return [
        BotInfo(
            "policy",
            PolicyBot,
            "0.1.0",
            "A policy of the PettingZoo environment (callable=package.module.function).",
        )
    ]
