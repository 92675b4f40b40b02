"""The ``expert`` bot: legal in every variant, reproducible, its options validated."""

from __future__ import annotations

import importlib
import math
import random

import pytest
from helpers import dealt, random_deck

from belote_p2p.game.cards import FULL_DECK
from belote_p2p.game.engine import BIDS, COINCHE, PASS, Phase, State
from belote_p2p.game.fastplay import FastState, FewFastState
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
        ("expert:take_margin=-0.5", "take_margin"),
        ("expert:take_margin=-2", "take_margin"),
        ("expert:colour=red", "colour"),
        ("expert:playout=smart", "playout"),
    ],
)
def test_bad_options_are_refused_with_a_clear_error(spec: str, words: str) -> None:
    with pytest.raises(BotError, match=words):
        make_bot(spec, load_bots())


def test_good_options_are_taken() -> None:
    bot = make_bot("expert:samples=8:seconds=0.5:exact=5:tricks=2", load_bots())
    assert isinstance(bot, expert.ExpertBot)
    assert (bot.samples, bot.seconds, bot.exact, bot.tricks) == (8, 0.5, 5, 2)
    assert expert.ExpertBot().samples == -1  # the default of the seat count (SAMPLES)
    with pytest.raises(ValueError, match="samples"):
        expert.ExpertBot(samples=-3)


@pytest.mark.parametrize("variant", ["classic", "three-handed"])
def test_the_take_margin_by_default_is_the_seat_counts(variant: str) -> None:
    """``take_margin=-1`` overrules the ``rules`` bot's take or pass exactly as the margin
    of :data:`TAKE_MARGIN` for the seat count does (and a margin of 0 does not)."""
    rules = rule_set(variant)
    default = expert.ExpertBot(samples=2, bid_samples=6)
    same = expert.ExpertBot(samples=2, bid_samples=6, take_margin=expert.TAKE_MARGIN[rules.seats])
    moved = expert.ExpertBot(samples=2, bid_samples=6, take_margin=0.0)
    differs = 0
    rng = random.Random(8)
    for seed in range(30):
        state = dealt(rules, seed)
        while state.phase in (Phase.TAKE_FIRST, Phase.TAKE_SECOND):
            obs = observe(state, state.to_act)
            table, chosen = default.take_or_choose(obs, random.Random(seed))
            assert same.take_or_choose(obs, random.Random(seed)) == (table, chosen)
            differs += moved.take_or_choose(obs, random.Random(seed))[1] != chosen
            state = state.apply(rng.choice(state.legal_actions()))
    assert differs > 0


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
    deck = list(rules.deck_cards)
    rng.shuffle(deck)
    state = State.new_game(rules).deal(deck)
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.DEAL:
            rng.shuffle(deck)
            state = state.deal(deck)
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
        expert.play_out(f)
        score = pimc.finish(state)
        assert score is not None
        assert f.tricks == 8 and not any(f.hands)
        assert f.card_points() == score.card_points


@pytest.mark.parametrize("careful", [False, True])
def test_playout_values_cover_every_legal_card(careful: bool) -> None:
    rng = random.Random(8)
    for _ in range(30):
        state = random_play_state(VARIANTS["coinche"], rng, rng.randrange(30))
        f = FastState.from_state(state)
        before = (list(f.hands), list(f.trick), list(f.points))
        values = expert.rollout_values(f, careful)
        assert set(values) == {c for c in range(32) if f.legal_mask() >> c & 1}
        assert (f.hands, f.trick, f.points) == before  # the position is left as it was
        for c, v in values.items():
            g = f.copy()
            g.play(c)
            assert v == expert.search_value(g, 0, careful) + g.points[0] - g.points[1] - (
                f.points[0] - f.points[1]
            )


@pytest.mark.parametrize("variant", ["classic", "coinche", "three-handed", "two-handed"])
def test_the_playout_policy_is_the_careful_one_unless_told(variant: str) -> None:
    """By default every card (and bid) is valued as with ``playout=careful``, and the greedy
    playout values some differently."""
    rules = rule_set(variant)
    bots = [expert.ExpertBot(samples=3, bid_samples=4, **o) for o in ({}, {"playout": "careful"},
            {"playout": "greedy"})]  # fmt: skip
    differs = 0
    rng = random.Random(12)
    for _ in range(12):
        state = random_play_state(rules, rng, rng.randrange(rules.deck_size - 1))
        obs = observe(state, state.to_act)
        default, same, moved = (b.action_values(obs, random.Random(3)) for b in bots)
        assert default == same
        differs += moved != default
    assert differs > 0


def test_every_search_depth_plays_legal_cards() -> None:
    for spec in ({**SMALL, "tricks": 0, "bid_tricks": 0}, {**SMALL, "tricks": 2, "bid_tricks": 1}):
        state = play_round(VARIANTS["coinche"], 4, spec)
        assert state.history[-1].score is not None or state.phase is Phase.DEAL


@pytest.mark.parametrize("variant, seats", [("classic", 4), ("three-handed", 3), ("two-handed", 2)])
def test_the_default_worlds_a_card_follow_the_seat_count(
    variant: str, seats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    real = expert.sample_worlds

    def counting(obs: object, rng: random.Random, count: int, *rest: object) -> object:
        asked.append(count)
        return real(obs, rng, count, *rest)

    monkeypatch.setattr(expert, "sample_worlds", counting)
    bot = expert.ExpertBot(bid_samples=0)
    rules = rule_set(variant)
    rng = random.Random(4)
    state = State.new_game(rules)
    while not asked:
        if state.phase in (Phase.DEAL, Phase.GAME_OVER):
            deck = list(rules.deck_cards)
            rng.shuffle(deck)
            state = state.deal(deck)
            continue
        obs = observe(state, state.to_act)
        state = state.apply(bot.decide(obs, rng))
    assert asked[0] == expert.SAMPLES[seats]
    assert expert.ExpertBot(samples=5).samples == 5


def paranoid(f: FewFastState, me: int) -> float:
    """Seat ``me``'s net score with every hand seen, every legal card tried (no pruning, no
    merged cards): what :meth:`FewFastState.search` must find."""
    if f.tricks == f.length:
        return pimc.net(f.score(), me)
    values = []
    m = f.legal_mask()
    while m:
        c = (m & -m).bit_length() - 1
        m &= m - 1
        f.push(c)
        values.append(paranoid(f, me))
        f.pop()
    return max(values) if f.to_act == me else min(values)


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
def test_the_few_seat_search_is_the_full_minimax(variant: str) -> None:
    rules = rule_set(variant)
    rng = random.Random(17)
    for _ in range(12):
        f = FewFastState.few_from_state(random_play_state(rules, rng, rules.deck_size - 9))
        me = rng.randrange(rules.seats)
        before = (list(f.hands), f.tricks, list(f.points), f.to_act)
        assert f.search(me, -math.inf, math.inf) == paranoid(f, me)
        assert (list(f.hands), f.tricks, list(f.points), f.to_act) == before


@pytest.mark.parametrize("variant, left", [("three-handed", 12), ("two-handed", 10)])
def test_every_card_searched_with_one_table_is_the_full_minimax(variant: str, left: int) -> None:
    """The positions :meth:`FewFastState.search` remembers, shared by the searches of every
    card of a decision (as the ``expert`` bot searches them), change no value."""
    rules = rule_set(variant)
    rng = random.Random(23)
    remembered = 0
    for _ in range(6):
        f = FewFastState.few_from_state(random_play_state(rules, rng, rules.deck_size - left))
        me = f.to_act
        table: dict[int, tuple[float, int]] = {}
        values = expert.few_values(f, me, True)
        m = f.legal_mask()
        while m:
            c = (m & -m).bit_length() - 1
            m &= m - 1
            f.push(c)
            full = paranoid(f, me)
            assert f.search(me, -math.inf, math.inf, table) == full
            assert values[c][0] == full
            f.pop()
        remembered += len(table)
    assert remembered > 0


def test_a_close_card_decision_draws_more_worlds(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = expert.sample_worlds

    def counting(*args: object) -> object:
        calls[-1] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(expert, "sample_worlds", counting)
    rules = rule_set("three-handed")
    most = {}
    for z in (0.0, 10.0):
        bot = expert.ExpertBot(samples=4, bid_samples=0, extra=2, extra_z=z)
        rng = random.Random(3)
        per: list[int] = []
        for seed in range(3):
            state = random_play_state(rules, random.Random(seed), 0)
            while state.phase is Phase.PLAY:
                obs = observe(state, state.to_act)
                calls.append(0)
                state = state.apply(bot.decide(obs, rng))
                per.append(calls[-1])
        most[z] = max(per)
        assert min(per) >= 0
    assert most[0.0] == 1  # never close at z = 0: one batch a decision
    assert most[10.0] == 3  # the first batch and at most ``extra`` more


def test_close_compares_paired_values() -> None:
    same = [10.0, -20.0, 30.0]
    assert not expert._close(same, same, [1.0, 1.0, 1.0], 2.0)  # no difference at all
    assert not expert._close([50.0, 52.0, 49.0], [0.0, 1.0, -1.0], [1.0, 1.0, 1.0], 2.0)
    assert expert._close([50.0, -40.0, 10.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], 2.0)


def test_the_auction_plays_the_other_sides_contract_out_with_its_taker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The careful playout plays the taker's side as such: valuing passing and a coinche
    of the other side's contract, the auction plays it out with that side's taker (the
    greedy playout, which ignores who took, plays every suit once with this seat's)."""
    takers: dict[str, set[tuple[int, int]]] = {}
    real = expert.search_value

    def recording(f: FastState, tricks: int, careful: bool = False) -> int:
        takers.setdefault("careful" if careful else "greedy", set()).add((f.taker, f.mode))
        return real(f, tricks, careful)

    monkeypatch.setattr(expert, "search_value", recording)
    rules = rule_set("coinche")
    state = dealt(rules, 3).apply(BIDS[80, 1])  # the seat after the dealer bids 80 hearts
    obs = observe(state, state.to_act)
    assert COINCHE in obs.legal and obs.taker % 2 != obs.team
    for playout in ("careful", "greedy"):
        table = expert.ExpertBot(bid_samples=4, playout=playout).action_values(
            obs, random.Random(2)
        )
        assert {PASS, COINCHE} <= set(table)
    me = obs.seat
    assert takers["careful"] == {(me, t) for t in range(4)} | {(obs.taker, 1)}
    assert takers["greedy"] == {(me, t) for t in range(4)}
