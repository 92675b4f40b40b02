"""The tools of reinforcement learning: the game as a PettingZoo AEC environment.

``pip install 'belote-p2p[rl]'`` (PettingZoo and NumPy), then::

    from belote_p2p.envs import env

    e = env(variant="coinche")
    e.reset(seed=1)
    for agent in e.agent_iter():
        observation, reward, termination, truncation, info = e.last()
        if termination or truncation:
            action = None
        else:
            action = my_policy(observation)  # observation["action_mask"]: the legal ones
        e.step(action)

Every variant, with one agent per seat (four, three or two); actions are the integers of
:data:`ACTIONS` (cards, then bids), an observation is the seat's vector (:func:`encode`) and
its legal-action mask, rewards are round points. The ``policy`` bot
(:mod:`belote_p2p.envs.policy`) seats any such policy at a table or in the arena. The NumPy
and PettingZoo parts load on first use, so that the bot plugin and the action numbering need
neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .actions import ACTIONS, FIRST_BID, NUM_ACTIONS, action_at, action_index

if TYPE_CHECKING:
    from .aec import AGENTS, BeloteEnv, env, raw_env
    from .encoding import OBS_SIZE, OFFSETS, action_mask, encode

_LAZY = {
    "AGENTS": "aec",
    "BeloteEnv": "aec",
    "env": "aec",
    "raw_env": "aec",
    "OBS_SIZE": "encoding",
    "OFFSETS": "encoding",
    "action_mask": "encoding",
    "encode": "encoding",
}

__all__ = [
    "ACTIONS",
    "AGENTS",
    "FIRST_BID",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "OFFSETS",
    "BeloteEnv",
    "action_at",
    "action_index",
    "action_mask",
    "encode",
    "env",
    "raw_env",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
