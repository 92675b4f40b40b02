"""Bot plugins: discovery through a plugin manager, safe calling, and the built-in ladder."""

from __future__ import annotations

import importlib
import json
import logging
import random
import threading
from pathlib import Path
from typing import Any

import pluggy
import pytest
import trio
from helpers import dealt, random_deck

from belote_p2p.app.cli import main
from belote_p2p.game.cards import CARDS, FULL_DECK, Suit, card
from belote_p2p.game.engine import BIDS, PASS, Bid, BidKind, Phase, State, deal_owners
from belote_p2p.game.engine import COINCHE as COINCHE_BID
from belote_p2p.game.engine import SURCOINCHE as SURCOINCHE_BID
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import CLASSIC, COINCHE, RuleSet
from belote_p2p.game.scoring import CAPOT_POINTS, score_round
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP
from belote_p2p.players import hookspecs
from belote_p2p.players.bots import (
    BotError,
    FallbackCounts,
    SafePlayer,
    call_bot,
    collect_bots,
    get_bot,
    legal_answer,
    make_bot,
    make_plugin_manager,
    parse_spec,
)
from belote_p2p.players.hookspecs import BotInfo, hookimpl
from belote_p2p.players.player import BotPlayer

EXAMPLE = Path(__file__).resolve().parent.parent / "plugins" / "examples" / "belote-bot-example"


def first_play_state(seed: int = 1) -> State:
    """A classic round at its first card: seat to act takes, then it is play."""
    state = dealt(CLASSIC, seed)
    return state.apply(state.legal_actions()[0])  # TAKE


class Fixed:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def decide(self, observation: Observation, rng: random.Random) -> object:
        return self.answer


class Raising:
    def decide(self, observation: Observation, rng: random.Random) -> object:
        raise RuntimeError("bug in bot")


class Blocking:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()

    def decide(self, observation: Observation, rng: random.Random) -> object:
        self.release.wait()
        self.finished.set()
        return observation.legal[0]


class TestPlugin:
    @hookimpl
    def belote_bots(self) -> list[BotInfo]:
        return [BotInfo("fixed-pass", lambda: Fixed(PASS), "1.0", "Always passes.")]


class Clash:
    @hookimpl
    def belote_bots(self) -> list[BotInfo]:
        return [BotInfo("random", lambda: Fixed(PASS), "9", "A second 'random'.")]


def bare_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


# -- discovery ----------------------------------------------------------------------------


def test_plugin_manager_collects_registered_bots() -> None:
    pm = bare_manager()
    pm.register(TestPlugin(), name="test-plugin")
    pm.check_pending()
    bots = collect_bots(pm)
    assert list(bots) == ["fixed-pass"]
    info = bots["fixed-pass"]
    assert (info.version, info.package) == ("1.0", "test-plugin")
    assert get_bot("fixed-pass", bots) is info
    with pytest.raises(BotError, match="no bot named 'nope'"):
        get_bot("nope", bots)


def test_builtin_ladder_loads_like_any_plugin() -> None:
    pm = make_plugin_manager(entry_points=False)
    bots = collect_bots(pm)
    assert {"random", "rules", "pimc"} <= set(bots)
    assert all(b.description and b.version for b in bots.values())


def test_duplicate_bot_names_are_an_error() -> None:
    pm = make_plugin_manager(entry_points=False)
    pm.register(Clash(), name="clash")
    with pytest.raises(BotError, match="two bots named 'random'"):
        collect_bots(pm)


def test_specs_carry_options() -> None:
    assert parse_spec("pimc:iterations=8:seconds=0.5:mode=x") == (
        "pimc",
        {"iterations": 8, "seconds": 0.5, "mode": "x"},
    )
    bots = collect_bots(make_plugin_manager(entry_points=False))
    bot = make_bot("pimc:iterations=3", bots)
    assert getattr(bot, "iterations", None) == 3
    with pytest.raises(BotError, match="rejects options"):
        make_bot("random:depth=2", bots)


def test_bots_command_lists_installed_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bots", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert {"random", "rules", "pimc"} <= names
    assert main(["bots"]) == 0
    assert "rules" in capsys.readouterr().out


# -- safe calling -------------------------------------------------------------------------


def test_legal_answer_accepts_plain_ints_and_rejects_the_rest() -> None:
    obs = observe(first_play_state(), first_play_state().to_act)
    card = obs.legal[0]
    assert legal_answer(int(card), obs.legal) is card
    assert legal_answer(True, obs.legal) is None
    assert legal_answer("JH", obs.legal) is None
    assert legal_answer(PASS, obs.legal) is None


@pytest.mark.parametrize(
    ("bot", "cause"),
    [
        (Fixed(PASS), "illegal"),
        (Fixed(99), "illegal"),
        (Fixed(None), "illegal"),
        (Raising(), "errors"),
    ],
)
def test_fallback_on_illegal_answer_or_exception(
    bot: object, cause: str, caplog: pytest.LogCaptureFixture
) -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    counts = FallbackCounts()
    with caplog.at_level(logging.WARNING, logger="belote_p2p.players.bots"):
        a = call_bot(bot, obs, random.Random(0), counts=counts, name="bad")  # type: ignore[arg-type]
        b = call_bot(bot, obs, random.Random(0), deadline_s=5.0, name="bad")  # type: ignore[arg-type]
    assert a in obs.legal and b in obs.legal
    assert a == b  # the fallback is seeded from the decision point
    assert getattr(counts, cause) == 1 and counts.fallbacks == 1 and counts.decisions == 1
    assert "bad" in caplog.text


def test_fallback_on_timeout_abandons_the_worker(caplog: pytest.LogCaptureFixture) -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    bot = Blocking()
    player = SafePlayer(bot, name="slow", deadline_s=0.02, fallback=random.Random(7))
    with caplog.at_level(logging.WARNING, logger="belote_p2p.players.bots"):
        action = player.decide(obs, random.Random(0))
    assert action in obs.legal
    assert player.counts.timeouts == 1 and player.counts.fallbacks == 1
    assert "timed out" in caplog.text
    bot.release.set()  # let the abandoned worker finish
    assert bot.finished.wait(10)


def test_a_legal_answer_passes_through_the_worker() -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    bot = Blocking()
    bot.release.set()
    counts = FallbackCounts()
    assert call_bot(bot, obs, random.Random(0), 10.0, counts=counts) == obs.legal[0]
    assert counts.fallbacks == 0 and counts.decisions == 1


class Exiting:
    def decide(self, observation: Observation, rng: random.Random) -> object:
        raise SystemExit("a bot that exits")


class Interrupted:
    def decide(self, observation: Observation, rng: random.Random) -> object:
        raise KeyboardInterrupt


def test_a_bot_that_exits_in_the_callers_thread_is_a_failure_and_ctrl_c_is_not() -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    counts = FallbackCounts()
    assert call_bot(Exiting(), obs, random.Random(0), counts=counts) in obs.legal
    assert counts.errors == 1 and counts.decisions == 1
    with pytest.raises(KeyboardInterrupt):  # the arena's Ctrl-C, not the bot's failure
        call_bot(Interrupted(), obs, random.Random(0), counts=counts)


def live_player(bot: object, deadline: float) -> BotPlayer:
    """A live peer's player around ``bot`` (the registry's bots are not needed)."""
    player = BotPlayer("random", deadline=deadline, seed=3)
    player.safe.bot = bot  # type: ignore[assignment]
    return player


async def test_live_player_abandons_its_worker_past_the_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    bot = Blocking()
    player = live_player(bot, 0.05)
    with trio.fail_after(30), caplog.at_level(logging.WARNING, logger="belote_p2p.players.bots"):
        action = await player.decide(obs)
    assert action in obs.legal
    assert player.counts.timeouts == 1 and player.counts.decisions == 1
    assert "timed out after 0.050 s" in caplog.text
    assert not bot.finished.is_set()  # still blocked in its abandoned worker
    bot.release.set()
    assert bot.finished.wait(10)


async def test_live_player_runs_the_bot_in_one_worker_thread() -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    threads: list[threading.Thread] = []

    class Where:
        def decide(self, observation: Observation, rng: random.Random) -> object:
            threads.append(threading.current_thread())
            return observation.legal[-1]

    player = live_player(Where(), 10.0)
    with trio.fail_after(30):
        assert await player.decide(obs) == obs.legal[-1]
        assert await player.decide(obs) == obs.legal[-1]
    assert threading.main_thread() not in threads
    assert not any(t.name.startswith("bot-") for t in threads)  # no thread of its own
    assert player.counts.fallbacks == 0 and player.counts.decisions == 2


async def test_live_player_survives_a_bot_that_exits(caplog: pytest.LogCaptureFixture) -> None:
    state = first_play_state()
    obs = observe(state, state.to_act)
    player = live_player(Exiting(), 10.0)
    with trio.fail_after(30), caplog.at_level(logging.WARNING, logger="belote_p2p.players.bots"):
        action = await player.decide(obs)
    assert action in obs.legal
    assert player.counts.errors == 1
    assert "SystemExit" in caplog.text


# -- the ladder plays whole rounds --------------------------------------------------------


def play_round(rules: RuleSet, bots: list[object], seed: int) -> State:
    state = dealt(rules, seed)
    rngs = [random.Random(seed * 10 + s) for s in range(4)]
    players = [SafePlayer(b, name=f"seat{s}") for s, b in enumerate(bots)]  # type: ignore[arg-type]
    for s, p in enumerate(players):
        p.new_game(rules, s)
    n = len(state.history)
    while len(state.history) == n:
        seat = state.to_act
        state = state.apply(players[seat].decide(observe(state, seat), rngs[seat]))
    for p in players:
        assert p.counts.fallbacks == 0, p.name
    return state


@pytest.mark.parametrize("rules", [CLASSIC, COINCHE], ids=["classic", "coinche"])
@pytest.mark.parametrize("spec", ["random", "rules", "pimc:iterations=3:bid_samples=2"])
def test_builtin_bots_play_legal_rounds(rules: RuleSet, spec: str) -> None:
    bots = collect_bots(make_plugin_manager(entry_points=False))
    for seed in range(2):
        seats = [make_bot(spec, bots), make_bot("random", bots)] * 2
        state = play_round(rules, seats, seed)
        assert state.phase in (Phase.DEAL, Phase.GAME_OVER)


def test_pimc_samples_respect_what_was_observed() -> None:
    sampling = importlib.import_module("belote_bots.pimc_bot")
    state = first_play_state(3)
    rng = random.Random(0)
    for _ in range(12):  # advance into the round so that voids may appear
        state = state.apply(rng.choice(state.legal_actions()))
    seat = state.to_act
    obs = observe(state, seat)
    played = sampling.played_by_seat(obs)
    for _ in range(20):
        hands = sampling.sample_hands(obs, rng)
        if hands is None:
            continue
        assert hands[seat] == obs.hand_mask
        union = 0
        for s in range(4):
            assert hands[s] & union == 0
            union |= hands[s]
            assert hands[s].bit_count() + played[s].bit_count() == 8
            assert hands[s] & obs.shown[s] == obs.shown[s]
            if s != seat:
                assert hands[s] & ~obs.possible(s) == 0
        assert union | obs.played == FULL_DECK


def test_rules_bot_loads_a_partners_master_trick() -> None:
    rules_bot = importlib.import_module("belote_bots.rules_bot").RulesBot()
    # Find a position where the partner is winning with the last card to play and the seat
    # has a choice of plain cards: the bot must throw the most valuable one.
    rng = random.Random(5)
    for seed in range(200):
        state = first_play_state(seed)
        while state.phase is Phase.PLAY:
            obs = observe(state, state.to_act)
            if len(obs.trick) == 3 and obs.trick_winner_so_far() == obs.partner:
                plain = [c for c in obs.legal if c >> 3 != obs.trump]
                if len(plain) >= 2 and len(plain) == len(obs.legal):
                    choice = rules_bot.decide(obs, rng)
                    from belote_p2p.game.tables import POINTS

                    best = max(POINTS[obs.trump][c] for c in plain)
                    master_bonus = 11  # it may keep a master ace back
                    assert POINTS[obs.trump][choice] >= best - master_bonus
                    if best >= 10 and POINTS[obs.trump][choice] >= 10:
                        return
            state = state.apply(rng.choice(state.legal_actions()))
    pytest.fail("no position found")


def coinche_opening(first: list[str], seed: int = 0) -> State:
    """A coinche deal whose first bidder (dealer + 1) holds ``first``; the rest shuffled."""
    mine = [card(t) for t in first]
    rest = [c for c in CARDS if c not in mine]
    random.Random(seed).shuffle(rest)
    owners = deal_owners(COINCHE, 0)
    deck = [mine.pop() if owner == 1 else rest.pop() for owner in owners]
    state = State.new_game(COINCHE.with_(first_dealer=0)).deal(deck)
    assert state.phase is Phase.AUCTION and state.to_act == 1
    return state


def pimc_bidding_over(suggestion: Bid) -> Any:
    """A ``pimc`` bot whose ``rules`` prior always answers ``suggestion`` in the auction."""
    module = importlib.import_module("belote_bots.pimc_bot")
    rules_module = importlib.import_module("belote_bots.rules_bot")

    class Prior(rules_module.RulesBot):  # type: ignore[misc]
        def auction(self, obs: Observation) -> Bid:
            return suggestion if suggestion in obs.legal else PASS

    bot = module.PimcBot(auction_samples=24)
    bot.rules = Prior()
    return bot


def test_pimc_coinche_bid_comes_from_the_samples() -> None:
    # A strong heart hand: the rules prior passes, the sampled contracts say hearts.
    strong = coinche_opening(["JH", "9H", "AH", "TH", "KH", "QH", "AS", "AC"])
    obs = observe(strong, 1)
    bot = pimc_bidding_over(PASS)
    bid = bot.decide(obs, random.Random(3))
    assert isinstance(bid, Bid) and bid.kind is BidKind.BID and bid.trump == Suit.HEARTS
    assert bid.value >= 100 and bid in obs.legal
    assert bot.decide(obs, random.Random(3)) == bid  # deterministic given the rng
    # A hopeless hand: the rules prior opens 80 spades, the samples say pass.
    weak = coinche_opening(["7S", "8H", "7D", "8D", "7C", "8C", "QC", "9D"])
    obs = observe(weak, 1)
    assert pimc_bidding_over(BIDS[80, Suit.SPADES]).decide(obs, random.Random(3)) == PASS
    # With no samples the rules prior stands.
    module = importlib.import_module("belote_bots.pimc_bot")
    bot = module.PimcBot(auction_samples=0)
    assert bot.decide(obs, random.Random(3)) == bot.rules.decide(obs, random.Random(3))


def test_pimc_coinche_auctions_stay_legal() -> None:
    module = importlib.import_module("belote_bots.pimc_bot")
    bot = module.PimcBot(auction_samples=8)
    bids = 0
    for seed in range(12):
        state = dealt(COINCHE, seed)
        rng = random.Random(seed)
        while state.phase is Phase.AUCTION:
            obs = observe(state, state.to_act)
            action = bot.decide(obs, rng)
            assert action in obs.legal
            bids += isinstance(action, Bid) and action.kind is BidKind.BID
            state = state.apply(action)
    assert bids > 0


@pytest.mark.parametrize("mode", [NO_TRUMP, ALL_TRUMP], ids=["sans-atout", "tout-atout"])
def test_bots_weigh_a_surcoinche_without_a_trump_suit(mode: int) -> None:
    # The taker of a coinched sans-atout (or tout-atout) contract may surcoinche: every bot
    # values its hand for that contract (hand_strength once indexed a trump suit there).
    rules = COINCHE.with_(first_dealer=0, sans_atout=True, tout_atout=True)
    mine = [card(t) for t in ["AH", "TH", "KH", "AS", "TS", "AC", "AD", "TD"]]
    rest = [c for c in CARDS if c not in mine]
    random.Random(0).shuffle(rest)
    deck = [mine.pop() if owner == 1 else rest.pop() for owner in deal_owners(rules, 0)]
    state = State.new_game(rules).deal(deck).apply(BIDS[80, mode]).apply(COINCHE_BID)
    while state.to_act != 1:
        state = state.apply(PASS)
    obs = observe(state, 1)
    assert SURCOINCHE_BID in obs.legal
    bots = collect_bots(make_plugin_manager(entry_points=False))
    for spec in ("rules", "pimc:auction_samples=4", "expert:bid_samples=4"):
        assert make_bot(spec, bots).decide(obs, random.Random(1)) in obs.legal, spec
    module = importlib.import_module("belote_bots.rules_bot")
    # Four aces, three tens behind them: a strong hand sans-atout, a poor one with a trump.
    assert module.hand_strength(obs.hand_mask, NO_TRUMP) > module.hand_strength(0xFF, NO_TRUMP)


def test_contract_net_follows_the_coinche_scoring() -> None:
    module = importlib.import_module("belote_bots.pimc_bot")
    made = score_round(
        coinche=True, taker=1, contract=80, multiplier=1, trick_points=(52, 110),
        trick_winners=(1, 0, 1, 3, 3, 1, 2, 3), announcements=(0, 20), belote=(20, 0),
        pending=0,
    )  # fmt: skip
    # Team 1 totals 130 against 72: a 120 contract is made, 130 too, 140 fails.
    assert module.contract_net(made, 1, 120) == 120 + 130 - 72
    assert module.contract_net(made, 1, 130) == 130 + 130 - 72
    assert module.contract_net(made, 1, 140) == 0 - (160 + 140 + 20 + 20)
    assert module.contract_net(made, 0, 80) == 20 - (160 + 80 + 20 + 0)
    assert module.contract_net(made, 1, CAPOT_POINTS) < 0


# -- the example third-party package ------------------------------------------------------


def test_example_package_bot_plays_a_game(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    example = importlib.import_module("belote_bot_example")
    pm = bare_manager()
    pm.register(example, name="example")
    bots = collect_bots(pm)
    assert list(bots) == ["example-greedy"]
    for rules in (CLASSIC, COINCHE):
        state = State.new_game(rules.with_(target=301))
        rng = random.Random(1)
        players = [SafePlayer(bots["example-greedy"].create()) for _ in range(4)]
        for s, p in enumerate(players):
            p.new_game(rules, s)
        rounds = 0
        while state.phase is not Phase.GAME_OVER and rounds < 60:
            state = state.deal(random_deck(rng))
            rounds += 1
            while state.phase is not Phase.DEAL and state.phase is not Phase.GAME_OVER:
                seat = state.to_act
                state = state.apply(players[seat].decide(observe(state, seat), rng))
        assert all(p.counts.fallbacks == 0 for p in players)
        assert state.phase is Phase.GAME_OVER
        assert any(isinstance(a, Bid) for r in state.history for a, _ in r.actions)
