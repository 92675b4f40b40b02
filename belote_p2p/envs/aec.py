"""The game as a PettingZoo AEC environment: one agent per seat, ``seat_0`` to ``seat_3``
(four seats), ``seat_0`` to ``seat_2`` (three-handed) or ``seat_0`` and ``seat_1``
(two-handed), taking turns as the rules say, through whole games.

An observation is a dict: ``observation``, the seat's vector (:func:`encode`), and
``action_mask``, its legal actions among the :data:`ACTIONS`. When a round is scored each
agent's reward is its round points (its team's with four seats: what the score sheet adds);
an episode is a
game to the rule set's target, or ``rounds`` scored rounds; it is truncated after
``max_deals`` deals in a row that everybody passed (a policy that always passes would
redeal for ever). The decks come from a
``random.Random`` seeded by ``reset(seed=...)`` (or by the ``seed`` given at creation, the
next game of the same sequence when ``reset`` has no seed): the same seed, the same deals.
The engine's state of the game is ``env.game`` (a :class:`~belote_p2p.game.engine.State`).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv

from belote_p2p.game.engine import Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RuleSet, rule_set

from .actions import NUM_ACTIONS, action_at
from .encoding import OBS_SIZE, action_mask, encode

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")
"""The agents of a four-seat table; a table of ``n`` seats has the first ``n``."""

ObsDict = dict[str, npt.NDArray[Any]]


class BeloteEnv(AECEnv):  # type: ignore[misc]  # PettingZoo is untyped
    """Belote for four, three or two agents, as the rule set seats (see the module).
    ``variant`` a rule set's name or a
    :class:`RuleSet`; ``rounds`` ends an episode after that many scored rounds (``None``:
    at the end of the game); ``max_deals`` deals in a row passed out truncate it; ``seed``
    the deals' seed when ``reset`` gives none."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "belote_v1",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: str | RuleSet = "classic",
        *,
        rounds: int | None = None,
        max_deals: int = 16,
        seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = rule_set(variant) if isinstance(variant, str) else variant
        if rounds is not None and rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {rounds}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi'")
        if max_deals < 1:
            raise ValueError(f"max_deals must be at least 1, not {max_deals}")
        self.rounds = rounds
        self.max_deals = max_deals
        self.passed_out = 0
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS[: self.rules.seats])
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self._action_space = spaces.Discrete(NUM_ACTIONS)
        self._rng = random.Random(f"belote-env:{seed}")
        self.game = State.new_game(self.rules)
        self.scored = 0
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_space

    # -- the episode ------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(f"belote-env:{seed}")
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.scored = 0
        self.passed_out = 0
        dealer = self._rng.randrange(self.rules.seats)
        self.game = self._deal(State.new_game(self.rules.with_(first_dealer=dealer)))
        self.agent_selection = AGENTS[self.game.to_act]

    def _deal(self, state: State) -> State:
        deck = list(self.rules.deck_cards)
        self._rng.shuffle(deck)
        return state.deal(deck)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: None is for an agent whose episode is over")
        state = self.game
        rounds = len(state.history)
        state = state.apply(action_at(int(action)))
        self.rewards = dict.fromkeys(self.agents, 0)
        if len(state.history) > rounds and state.history[-1].score is not None:
            score = state.history[-1].score.score
            teams = self.rules.has_teams
            for seat, name in enumerate(self.possible_agents):
                self.rewards[name] = score[seat % 2 if teams else seat]
            self.scored += 1
            self.passed_out = 0
            for name in self.possible_agents:
                self.infos[name] = {"round_score": score, "scores": state.scores}
        elif len(state.history) > rounds:
            self.passed_out += 1  # everybody passed: a redeal
        over = state.phase is Phase.GAME_OVER or (
            self.rounds is not None and self.scored >= self.rounds
        )
        stuck = self.passed_out >= self.max_deals
        if not over and not stuck and state.phase is Phase.DEAL:
            state = self._deal(state)  # the next round, or a redeal after everybody passed
        self.game = state
        self._cumulative_rewards[agent] = 0
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif stuck:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = AGENTS[state.to_act]
        self._accumulate_rewards()

    def observe(self, agent: str) -> ObsDict:
        obs = observe(self.game, AGENTS.index(agent))
        return {"observation": encode(obs), "action_mask": action_mask(obs)}

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self.game.summary()
        return None

    def close(self) -> None:
        pass


def raw_env(**kwargs: Any) -> BeloteEnv:
    """The environment without PettingZoo's wrappers."""
    return BeloteEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual checks: an illegal action ends the episode
    with a penalty, a step out of order is an error."""
    from pettingzoo.utils import wrappers

    e: Any = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e
