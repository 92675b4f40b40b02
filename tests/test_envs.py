"""The PettingZoo environment: PettingZoo's own checks, seeded deals, rewards that add up to
the score sheet, every observation's mask equal to the engine's legal actions, with four,
three and two agents (two-handed: no face-down card seen before it is turned up), and the
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
from belote_p2p.envs.policy import PolicyBot, load_policy  # noqa: E402
from belote_p2p.game.cards import CARDS  # noqa: E402
from belote_p2p.game.engine import PASS, TAKE, Phase, State  # noqa: E402
from belote_p2p.game.observation import observe  # noqa: E402
from belote_p2p.game.rules import CLASSIC, RULE_SETS, Variant  # noqa: E402
from belote_p2p.players.arena import play_board  # noqa: E402
from belote_p2p.players.bots import FallbackCounts, load_bots, make_bot  # noqa: E402
from belote_p2p.players.hookspecs import BotInfo  # noqa: E402

VARIANTS = sorted(RULE_SETS)
BIDDING = sorted(n for n, rules in RULE_SETS.items() if rules.variant is not Variant.TWO_HANDED)
"""The variants with a bidding: every one but two-handed."""


def first_legal(observation: dict[str, Any]) -> int:
    """A policy: the first legal action (the policy bot loads it by its dotted path)."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def random_policy(rng: random.Random) -> Any:
    def act(observation: dict[str, Any]) -> int:
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return act


def play(e: Any, policy: Any) -> tuple[dict[str, float], int]:
    """One episode; each agent's summed rewards and the steps taken."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
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


@pytest.mark.parametrize("variant", ["coinche", "three-handed", "two-handed"])
def test_pettingzoo_seed_test(variant: str) -> None:
    seed_test(lambda: env(variant=variant, rounds=1), num_cycles=200)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_game_rewards_add_up_to_the_score(variant: str) -> None:
    e = raw_env(variant=variant, seed=7)
    e.reset()
    totals, _ = play(e, random_policy(random.Random(1)))
    state = e.game
    assert state.phase is Phase.GAME_OVER
    assert max(state.scores) >= state.rules.target
    n = state.rules.seats
    assert e.possible_agents == list(AGENTS[:n]) and len(state.scores) == (2 if n == 4 else n)
    for seat, agent in enumerate(e.possible_agents):
        assert totals[agent] == state.scores[seat % 2 if n == 4 else seat]
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
        other = AGENTS[(seat + 1) % e.rules.seats]
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


@pytest.mark.parametrize("variant", BIDDING)
def test_a_policy_that_always_passes_is_truncated(variant: str) -> None:
    e = raw_env(variant=variant, max_deals=5, seed=4)
    e.reset()
    totals, _ = play(e, first_legal)  # the first legal action of a bidding turn: pass
    assert e.scored == 0 and e.passed_out == 5
    assert totals == dict.fromkeys(e.possible_agents, 0.0)


def cards_in(vector: Any, block: str, slots: int = 1) -> set[int]:
    """The cards set in ``slots`` consecutive 32-card masks of ``block``."""
    at = OFFSETS[block]
    return {int(i) % 32 for i in np.flatnonzero(vector[at : at + 32 * slots])}


def test_two_handed_observations_show_the_face_up_cards_and_no_face_down_one() -> None:
    e = raw_env(variant="two-handed", rounds=1, seed=5)
    e.reset()
    pick = random.Random(4)
    turned_up = 0
    for agent in e.agent_iter():
        if e.terminations[agent]:
            e.step(None)
            continue
        seat = AGENTS.index(agent)
        full = e.game.deck
        seen = observe(e.game, seat).open_deck  # what both players may see, by position
        face_down = {c for c, shown in zip(full, seen, strict=True) if shown is None}
        turned_up = max(turned_up, sum(c is not None for c in seen) - 16)
        for viewer in (seat, 1 - seat):
            vector = e.observe(AGENTS[viewer])["observation"]
            # Both players' face-up cards (own first, then the other's), and nothing face down.
            assert cards_in(vector, "hand") == set(e.game.hand(viewer))
            at = OFFSETS["shown"]
            assert {int(i) for i in np.flatnonzero(vector[at : at + 32])} == set(
                e.game.hand(viewer)
            )
            assert {int(i) for i in np.flatnonzero(vector[at + 32 : at + 64])} == set(
                e.game.hand(1 - viewer)
            )
            for block in ("hand", "played", "trick", "shown"):
                assert not cards_in(vector, block, 4) & face_down, block
            scores = vector[OFFSETS["scores"] : OFFSETS["scores"] + 4]
            target = e.rules.target
            expected = [e.game.scores[viewer] / target, e.game.scores[1 - viewer] / target, 0, 0]
            assert scores.tolist() == pytest.approx([min(x, 1.0) for x in expected])
        mask = e.observe(agent)["action_mask"]
        e.step(pick.choice(sorted(np.flatnonzero(mask))))
    assert turned_up > 0  # the round turned face-down cards up as it went
    assert e.scored == 1


def test_three_handed_scores_are_per_player_from_the_observers_seat() -> None:
    e = raw_env(variant="three-handed", seed=2)
    e.reset()
    e.game = State.new_game(e.rules, scores=(10, 20, 30)).deal(list(e.rules.deck_cards))
    for seat in range(3):
        vector = e.observe(AGENTS[seat])["observation"]
        scores = vector[OFFSETS["scores"] : OFFSETS["scores"] + 4].tolist()
        # Itself, the next to play, the one after: (10, 20, 30) seen from each seat.
        mine = [(10, 20, 30)[(seat + r) % 3] / e.rules.target for r in range(3)]
        assert scores == pytest.approx([*mine, 0.0])


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


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
def test_the_policy_bot_plays_at_a_table_of_three_or_two(variant: str) -> None:
    """The policy sees what an agent of that table's environment sees: it plays the board's
    every rotation (one table per seat), and its answers are legal (no fallback)."""
    seen: list[int] = []

    def first(observation: dict[str, Any]) -> int:
        assert observation["observation"].shape == (OBS_SIZE,)
        seen.append(first_legal(observation))
        return seen[-1]

    bots = {
        "first": BotInfo("first", lambda: PolicyBot(policy=first)),
        "random": load_bots()["random"],
    }
    counts = (FallbackCounts(), FallbackCounts())
    rules = RULE_SETS[variant]
    result = play_board(("first", "random"), rules, seed=3, board=0, bots=bots, counts=counts)
    assert len(result.tables) == rules.seats and all(t.deals >= 1 for t in result.tables)
    assert counts[0].decisions == len(seen) > 0 and counts[0].fallbacks == 0


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
