"""An agent stepping through whole games of the PettingZoo environment, then seated in the
arena as the ``policy`` bot.

    pip install 'belote-p2p[rl]'
    python examples/rl_agent.py [--variant coinche] [--games 3] [--seed 1]

The agent on ``seat_0`` and ``seat_2`` plays the highest legal card and otherwise passes (a
stand-in for a trained policy: any function from the observation dict to an action index
will do); the other team picks uniformly among its legal actions. Prints each game's
score, then the agent's result over a few duplicate boards against ``random``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from belote_p2p.envs import AGENTS, BeloteEnv, raw_env
from belote_p2p.envs.policy import PolicyBot
from belote_p2p.game.rules import rule_set
from belote_p2p.players.arena import play_board
from belote_p2p.players.bots import load_bots
from belote_p2p.players.hookspecs import BotInfo


def highest_card(observation: dict[str, Any]) -> int:
    """The policy: the highest-numbered legal card, else the first legal bid (a pass)."""
    legal = np.flatnonzero(observation["action_mask"])
    cards = legal[legal < 32]
    return int(cards[-1]) if len(cards) else int(legal[0])


def play_game(env: BeloteEnv, rng: random.Random) -> dict[str, float]:
    """One whole game; the rewards each agent collected (its team's round points)."""
    totals = dict.fromkeys(AGENTS, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            action = None
        elif AGENTS.index(agent) % 2 == 0:
            action = highest_card(observation)
        else:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    env = raw_env(variant=args.variant, seed=args.seed)
    rng = random.Random(args.seed)
    for game in range(args.games):
        env.reset(seed=args.seed + game)
        totals = play_game(env, rng)
        print(
            f"game {game + 1}: agent {totals['seat_0']:.0f}, random {totals['seat_1']:.0f} "
            f"({env.scored} rounds)"
        )
    # The same policy as a bot, in duplicate boards against the random bot.
    bots = {"agent": BotInfo("agent", lambda: PolicyBot(policy=highest_card))}
    bots["random"] = load_bots()["random"]
    rules = rule_set(args.variant)
    boards = [play_board(("agent", "random"), rules, args.seed, b, bots).score for b in range(4)]
    print(f"4 duplicate boards against random: {boards}, {sum(boards) / 4:+.1f} per board")


if __name__ == "__main__":
    main()
