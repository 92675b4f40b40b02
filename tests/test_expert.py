"""The ``expert`` bot: legal in every variant, reproducible, its options validated."""

from __future__ import annotations

import importlib
import random

import pytest
from helpers import random_deck

from belote_p2p.game.cards import FULL_DECK
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.fastplay import FastState
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RuleSet, rule_set
from belote_p2p.players.bots import BotError, load_bots, make_bot

expert = importlib.import_module("belote_bots.expert_bot")
pimc = importlib.import_module("belote_bots.pimc_bot")
inference = importlib.import_module("belote_bots.inference")

VARIANTS: dict[str, RuleSet] = {
    "classic": rule_set("classic"),
    "classic-no-announcements": rule_set("classic-no-announcements"),
    "coinche": rule_set("coinche"),
    "coinche-sa-ta-strict": rule_set(
        "coinche",
        sans_atout=True,
        tout_atout=True,
        partner_master_frees=False,
        must_overtrump_on_trump_lead=False,
    ),
}
SMALL = {"samples": 3, "bid_samples": 2, "exact": 3}


def play_round(rules: RuleSet, seed: int, spec: dict[str, int]) -> State:
    """One round (redeals included) with four experts; every answer checked legal."""
    rng = random.Random(seed)
    bots = [expert.ExpertBot(**spec) for _ in range(4)]
    rngs = [random.Random(seed * 4 + s) for s in range(4)]
    state = State.new_game(rules.with_(first_dealer=seed % 4))
    for _ in range(10):
        state = state.deal(random_deck(rng))
        while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
            seat = state.to_act
            obs = observe(state, seat)
            action = bots[seat].decide(obs, rngs[seat])
            assert action in obs.legal, (action, obs.legal)
            state = state.apply(action)
        if state.history[-1].score is not None:
            break
    return state


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_expert_plays_legal_actions_in_every_variant(variant: str) -> None:
    for seed in range(2):
        state = play_round(VARIANTS[variant], seed, SMALL)
        assert state.history


def test_the_expert_is_reproducible_with_a_sample_budget() -> None:
    a = play_round(VARIANTS["coinche"], 5, SMALL)
    b = play_round(VARIANTS["coinche"], 5, SMALL)
    assert a.history[-1].actions == b.history[-1].actions


def test_the_expert_bids_without_samples_as_the_rules_bot() -> None:
    state = play_round(VARIANTS["classic"], 3, {**SMALL, "bid_samples": 0})
    assert state.history[-1].actions


@pytest.mark.parametrize(
    "spec, words",
    [
        ("expert:samples=0", "samples"),
        ("expert:samples=many", "samples"),
        ("expert:seconds=-1", "seconds"),
        ("expert:exact=9", "exact"),
        ("expert:tricks=9", "tricks"),
        ("expert:bid_tricks=-1", "bid_tricks"),
        ("expert:inference=x", "inference"),
        ("expert:colour=red", "colour"),
    ],
)
def test_bad_options_are_refused_with_a_clear_error(spec: str, words: str) -> None:
    with pytest.raises(BotError, match=words):
        make_bot(spec, load_bots())


def test_good_options_are_taken() -> None:
    bot = make_bot("expert:samples=8:seconds=0.5:exact=5:tricks=2", load_bots())
    assert isinstance(bot, expert.ExpertBot)
    assert (bot.samples, bot.seconds, bot.exact, bot.tricks) == (8, 0.5, 5, 2)
    with pytest.raises(ValueError, match="samples"):
        expert.ExpertBot(samples=-3)


def test_sampled_deals_respect_what_was_observed() -> None:
    rng = random.Random(11)
    rules = VARIANTS["classic"]
    for seed in range(20):
        state = State.new_game(rules).deal(random_deck(random.Random(seed)))
        while state.phase is not Phase.PLAY:
            if state.phase is Phase.DEAL:
                state = state.deal(random_deck(rng))
            else:
                state = state.apply(rng.choice(state.legal_actions()))
        for _ in range(rng.randrange(28)):
            state = state.apply(rng.choice(state.legal_actions()))
        obs = observe(state, state.to_act)
        sampler = inference.WorldSampler(obs)
        assert not sampler.dead
        for _ in range(5):
            hands = sampler.draw(rng)
            if hands is None:
                continue
            assert hands[obs.seat] == obs.hand_mask
            assert sum(h.bit_count() for h in hands) + obs.played.bit_count() == 32
            union = 0
            for s in range(4):
                assert not union & hands[s]
                union |= hands[s]
                assert hands[s].bit_count() == state.hands[s].bit_count()
                assert not hands[s] & obs.voids[s] & ~obs.shown[s]
                assert hands[s] & obs.shown[s] == obs.shown[s]
            assert union | obs.played == FULL_DECK


def random_play_state(rules: RuleSet, rng: random.Random, cards: int) -> State:
    """A full-knowledge state ``cards`` plays into a round after random bidding."""
    state = State.new_game(rules).deal(random_deck(rng))
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.DEAL:
            state = state.deal(random_deck(rng))
        else:
            state = state.apply(rng.choice(state.legal_actions()))
    for _ in range(cards):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("variant", ["classic", "coinche-sa-ta-strict"])
def test_the_fast_greedy_playout_is_the_pimc_bots_policy(variant: str) -> None:
    """The fast path's playout plays what the ``pimc`` bot's greedy policy plays on the
    checked engine (which refuses an illegal card): the same card points every time."""
    rng = random.Random(5)
    rules = VARIANTS[variant]
    for _ in range(60):
        state = random_play_state(rules, rng, rng.randrange(31))
        f = FastState.from_state(state)
        expert.greedy_finish(f)
        score = pimc.finish(state)
        assert score is not None
        assert f.tricks == 8 and not any(f.hands)
        assert f.card_points() == score.card_points


def test_playout_values_cover_every_legal_card() -> None:
    rng = random.Random(8)
    for _ in range(30):
        state = random_play_state(VARIANTS["coinche"], rng, rng.randrange(30))
        f = FastState.from_state(state)
        before = (list(f.hands), list(f.trick), list(f.points))
        values = expert.rollout_values(f)
        assert set(values) == {c for c in range(32) if f.legal_mask() >> c & 1}
        assert (f.hands, f.trick, f.points) == before  # the position is left as it was
        for c, v in values.items():
            g = f.copy()
            g.play(c)
            assert v == expert.search_value(g, 0) + g.points[0] - g.points[1] - (
                f.points[0] - f.points[1]
            )


def test_every_search_depth_plays_legal_cards() -> None:
    for spec in ({**SMALL, "tricks": 0, "bid_tricks": 0}, {**SMALL, "tricks": 2, "bid_tricks": 1}):
        state = play_round(VARIANTS["coinche"], 4, spec)
        assert state.history[-1].score is not None or state.phase is Phase.DEAL
