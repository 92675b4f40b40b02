"""The PettingZoo environment: PettingZoo's own checks, seeded deals, rewards that add up to
the score sheet, every observation's mask equal to the engine's legal actions, and the
policy bot at a table."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from belote_p2p.envs import (  # noqa: E402
    ACTIONS,
    AGENTS,
    NUM_ACTIONS,
    OBS_SIZE,
    OFFSETS,
    BeloteEnv,
    action_at,
    action_index,
    env,
    raw_env,
)
from belote_p2p.envs.aec import UnsupportedTable  # noqa: E402
from belote_p2p.envs.policy import PolicyBot, load_policy  # noqa: E402
from belote_p2p.game.cards import CARDS  # noqa: E402
from belote_p2p.game.engine import PASS, TAKE, Phase, State  # noqa: E402
from belote_p2p.game.observation import observe  # noqa: E402
from belote_p2p.game.rules import CLASSIC, RULE_SETS  # noqa: E402
from belote_p2p.players.arena import play_board  # noqa: E402
from belote_p2p.players.bots import load_bots, make_bot  # noqa: E402
from belote_p2p.players.hookspecs import BotInfo  # noqa: E402

VARIANTS = sorted(name for name, rules in RULE_SETS.items() if rules.seats == 4)
FEW_VARIANTS = sorted(name for name, rules in RULE_SETS.items() if rules.seats != 4)


@pytest.mark.parametrize("variant", FEW_VARIANTS)
def test_a_table_of_two_or_three_seats_is_refused(variant: str) -> None:
    with pytest.raises(UnsupportedTable, match="four seats"):
        raw_env(variant=variant)


def first_legal(observation: dict[str, Any]) -> int:
    """A policy: the first legal action (the policy bot loads it by its dotted path)."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def random_policy(rng: random.Random) -> Any:
    def act(observation: dict[str, Any]) -> int:
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return act


def play(e: Any, policy: Any) -> tuple[dict[str, float], int]:
    """One episode; each agent's summed rewards and the steps taken."""
    totals = dict.fromkeys(AGENTS, 0.0)
    steps = 0
    for agent in e.agent_iter():
        observation, reward, termination, truncation, _ = e.last()
        totals[agent] += reward
        e.step(None if termination or truncation else policy(observation))
        steps += 1
    return totals, steps


def test_the_action_numbering_is_a_bijection() -> None:
    assert len(set(ACTIONS)) == NUM_ACTIONS == len(ACTIONS)
    assert all(action_index(action_at(i)) == i for i in range(NUM_ACTIONS))
    assert action_at(0) == 0 and action_at(32) == PASS
    with pytest.raises(IndexError):
        action_at(NUM_ACTIONS)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.filterwarnings("ignore:Observation:UserWarning")
def test_pettingzoo_api(variant: str) -> None:
    api_test(env(variant=variant, rounds=2, seed=3), num_cycles=300)


def test_pettingzoo_seed_test() -> None:
    seed_test(lambda: env(variant="coinche", rounds=1), num_cycles=200)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_game_rewards_add_up_to_the_score(variant: str) -> None:
    e = raw_env(variant=variant, seed=7)
    e.reset()
    totals, _ = play(e, random_policy(random.Random(1)))
    state = e.game
    assert state.phase is Phase.GAME_OVER
    assert max(state.scores) >= state.rules.target
    for seat, agent in enumerate(AGENTS):
        assert totals[agent] == state.scores[seat % 2]
    assert e.agents == []  # every agent stepped out after the end


@pytest.mark.parametrize("variant", VARIANTS)
def test_masks_and_observations_follow_the_engine(variant: str) -> None:
    e = raw_env(variant=variant, rounds=1, seed=11)
    e.reset()
    pick = random.Random(2)
    for agent in e.agent_iter():
        if e.terminations[agent]:
            e.step(None)
            continue
        seat = AGENTS.index(agent)
        assert e.game.to_act == seat
        obs = e.observe(agent)
        vector, mask = obs["observation"], obs["action_mask"]
        assert vector.shape == (OBS_SIZE,) and vector.dtype == np.float32
        assert ((vector >= 0) & (vector <= 1)).all()
        legal = {action_at(i) for i in np.flatnonzero(mask)}
        assert legal == set(e.game.legal_actions())
        hand = vector[OFFSETS["hand"] : OFFSETS["hand"] + 32]
        assert set(np.flatnonzero(hand)) == set(e.game.hand(seat))
        # Another seat sees no legal action and its own hand.
        other = AGENTS[(seat + 1) % 4]
        assert not e.observe(other)["action_mask"].any()
        e.step(pick.choice(sorted(np.flatnonzero(mask))))


def test_seeded_resets_repeat_the_deals() -> None:
    def hands(seed: int | None, e: BeloteEnv) -> list[tuple[int, ...]]:
        e.reset(seed=seed)
        return [e.game.hand(s) for s in range(4)]

    a, b = raw_env(variant="coinche"), raw_env(variant="coinche")
    assert hands(5, a) == hands(5, b)
    assert hands(6, a) != hands(5, a)
    # Without a seed, the next game of the same sequence: the same for both.
    assert hands(None, a) == hands(None, b)
    assert raw_env(seed=1).observe  # an environment needs no reset to be built


def test_an_episode_of_some_rounds() -> None:
    e = raw_env(variant="classic", rounds=3, seed=4)
    e.reset(seed=4)
    play(e, random_policy(random.Random(3)))
    assert e.scored == 3 and e.game.phase is Phase.DEAL


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_policy_that_always_passes_is_truncated(variant: str) -> None:
    e = raw_env(variant=variant, max_deals=5, seed=4)
    e.reset()
    totals, _ = play(e, first_legal)  # the first legal action of a bidding turn: pass
    assert e.scored == 0 and e.passed_out == 5
    assert totals == dict.fromkeys(AGENTS, 0.0)


def test_the_policy_bot_plays_a_board() -> None:
    bot = make_bot("policy:callable=test_envs.first_legal", load_bots())
    assert isinstance(bot, PolicyBot) and bot.policy is first_legal
    bots = {
        "first": BotInfo("first", lambda: PolicyBot(policy=first_legal)),
        "random": load_bots()["random"],
    }
    result = play_board(("first", "random"), CLASSIC, seed=1, board=0, bots=bots)
    assert all(t.deals >= 1 for t in result.tables)
    # The bot answers what the policy says, as an action: at a bidding turn and in play.
    state = State.new_game(CLASSIC).deal(list(CARDS))
    obs = observe(state, state.to_act)
    assert bot.decide(obs, random.Random(0)) == PASS
    state = state.apply(TAKE)
    while state.phase is not Phase.PLAY:
        state = state.apply(state.legal_actions()[0])
    obs = observe(state, state.to_act)
    assert bot.decide(obs, random.Random(0)) == min(obs.legal, key=action_index)


@pytest.mark.parametrize(
    "path", ["nowhere", "belote_p2p.nothing.here", "belote_p2p.envs.NUM_ACTIONS", "json.nope"]
)
def test_a_bad_policy_path_is_refused(path: str) -> None:
    with pytest.raises(ValueError):
        load_policy(path)
    with pytest.raises(ValueError):
        PolicyBot()


def test_the_example_plays_whole_games() -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "rl_agent.py"
    out = subprocess.run(
        [sys.executable, str(example), "--games", "2", "--variant", "coinche"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "game 1:" in out and "game 2:" in out and "duplicate boards" in out
