"""The coach's analysis (``belote_p2p.players.analysis``, ``.hindsight``): a random player
loses more a decision than the experts it plays with, no loss is ever below zero, every
choice named best is legal (in every variant, in seeded games and in the recorded ones),
hindsight is the solver's where it says it is exact, and the same record gives the same
figures."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.app.coach import COACH_BOT
from belote_p2p.game.engine import Bid, Phase, RoundRecord, State
from belote_p2p.game.fastplay import FastState, FewFastState, equivalent_groups
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RULE_SETS, rule_set
from belote_p2p.game.solver import Solver, solve
from belote_p2p.players.analysis import (
    Coach,
    Decision,
    NotAnEvaluator,
    Reason,
    RoundAnalysis,
    evaluator,
    valuation,
)
from belote_p2p.players.arena import play_game
from belote_p2p.players.bots import make_bot
from belote_p2p.players.hindsight import (
    EXACT_TRICKS,
    FEW_EXACT_TRICKS,
    SEARCH_TRICKS,
    Hindsight,
    Method,
    _every_way,
    side_net,
)
from belote_p2p.protocol.verify import verify_transcript

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
SEED = 2
"""The game of the ordering test (seeds 1-8 checked by hand: seven of the eight short games
put the random seat's loss above every expert's; a whole game, as the benchmark plays them,
does in every one tried)."""
CHEAP = "expert:samples=6:bid_samples=6"
"""An information-set view cheap enough for the property tests (its values are noisier,
which the invariants do not mind)."""


def one_round(variant: str, seed: int) -> RoundRecord:
    """A round of random players (a redeal counts: its bids are decisions too)."""
    rules = RULE_SETS[variant]
    rng = random.Random(seed)
    deck = list(rules.deck_cards)
    rng.shuffle(deck)
    state = State.new_game(rules).deal(deck)
    while state.number == 0:
        state = state.apply(rng.choice(state.legal_actions()))
    return state.history[-1]


def coach(spec: str = CHEAP) -> Coach:
    return Coach(evaluator(make_bot(spec)), Hindsight(make_bot("rules")), seed=3)


def check(d: Decision) -> None:
    """The invariants of every view of every decision."""
    legal = set(d.legal)
    assert len(legal) > 1 and d.action in legal
    for view in (d.informed, d.hindsight):
        if view is None:
            continue
        actions = [a for a, _ in view.values]
        values = [v for _, v in view.values]
        assert set(actions) <= legal and len(actions) == len(set(actions))
        assert view.best in legal
        assert values == sorted(values, reverse=True) and view.best_value == max(values)
        if view.chosen is not None:
            assert view.value_of(d.action) == view.chosen
            assert view.loss is not None and view.loss >= 0
        else:
            assert d.action not in actions
    # Hindsight values every legal choice; the expert values every legal card.
    assert d.hindsight is not None and {a for a, _ in d.hindsight.values} == legal
    if d.phase is Phase.PLAY and d.informed is not None:
        assert {a for a, _ in d.informed.values} == legal


def check_round(r: RoundAnalysis) -> None:
    assert r.decisions
    for d in r.decisions:
        check(d)


def test_a_random_player_loses_more_a_decision_than_every_expert() -> None:
    """The issue's test, short enough for the suite: a seeded game to 301 (four rounds),
    seat 0 random and seats 1-3 the expert at its table budget, analysed by the coach's
    evaluator (``benchmarks/analyse.py`` plays the whole game to 501)."""
    rules = rule_set("classic", target=301)
    state = play_game(rules, ["random", "expert", "expert", "expert"], seed=SEED)
    analysis = Coach(evaluator(make_bot(COACH_BOT)), None).analyse_game(
        state.rules, [(r, None) for r in state.history]
    )
    random_seat, *experts = analysis.summaries()
    assert random_seat.valued >= 15 and all(e.valued >= 15 for e in experts)
    for e in experts:
        assert random_seat.mean_loss > e.mean_loss, [s.to_json() for s in analysis.summaries()]
    figures = analysis.to_json()
    assert [s["seat"] for s in figures["seats"]] == [0, 1, 2, 3]
    assert figures["seats"][0]["mean_loss"] == round(random_seat.mean_loss, 2)


@pytest.mark.parametrize("variant", sorted(RULE_SETS))
@settings(
    max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_no_loss_below_zero_and_every_best_choice_is_legal(variant: str, seed: int) -> None:
    check_round(coach().analyse_round(one_round(variant, seed)))


@pytest.mark.parametrize(
    "vector",
    sorted(p.name for p in VECTORS.glob("game-*.transcript")),
)
def test_every_recorded_game_analyses_with_the_same_invariants(vector: str) -> None:
    """The recorded games of every variant, those stopped by a fault included: the replay
    of a round the audit found a revoke in stops there, and says so; a game stopped before
    any deal was revealed has nothing to value, and says that too (no decision, no loss)."""
    verdict = verify_transcript(VECTORS / vector)
    rounds = [(r.record, r.deck) for r in verdict.rounds if r.deck]
    analysis = coach().analyse_game(verdict.definition.rules, rounds)
    assert len(analysis.rounds) == len(rounds)
    assert len(analysis.summaries()) == verdict.definition.rules.seats
    if not rounds:
        assert all(s.decisions == 0 and s.points_lost == 0 for s in analysis.summaries())
    for r in analysis.rounds:
        for d in r.decisions:
            check(d)
    faults = [a for a in verdict.rounds if a.report.fault is not None and a.deck]
    for audited in faults:
        if audited.report.fault is not None and audited.report.fault.kind.value == "illegal-play":
            (found,) = [r for r in analysis.rounds if r.number == audited.record.number]
            assert found.stopped is not None
    for s in analysis.summaries():
        assert s.points_lost >= 0 and s.hindsight_points_lost >= 0


def classic_plays(exact: bool) -> Iterator[State]:
    """The card decisions of the played classic rounds of seeds 0-39 at which the hindsight
    searches exactly (``exact``, from EXACT_TRICKS tricks left) or not, round by round, until
    a round ends with 30 of them given or more."""
    given = 0
    for seed in range(40):
        record = one_round("classic", seed)
        if record.score is None:
            continue
        state = record.start.deal(record.deck)
        for action, _ in record.actions:
            if state.phase is Phase.PLAY and (8 - len(state.tricks) <= EXACT_TRICKS) == exact:
                yield state
                given += 1
            state = state.apply(action)
        if given >= 30:
            return


def test_hindsight_is_the_solvers_value_where_it_says_exact() -> None:
    """From EXACT_TRICKS tricks left the best card's hindsight value is the round score the
    double-dummy solver's exact value gives."""
    rules = RULE_SETS["classic"]
    h = Hindsight(make_bot("rules"))
    checked = 0
    for state in classic_plays(exact=True):
        found = h.values(state, random.Random(0))
        assert found is not None and found.method is Method.EXACT
        f = FastState.from_state(state)
        exact = side_net(f.score_for(f.points[0] - f.points[1] + solve(f)), state.to_act, 4)
        assert max(found.values.values()) == exact
        checked += 1
    assert checked >= 30 and rules.seats == 4


def test_hindsight_before_the_exact_search_is_the_bounded_search_it_names() -> None:
    """Before EXACT_TRICKS tricks left a card's hindsight value is the round score of the
    solver searching SEARCH_TRICKS tricks, then playing the rest by its greedy playout, and
    the decision says so (Method.SEARCH)."""
    h = Hindsight(make_bot("rules"))
    checked = 0
    for state in classic_plays(exact=False):
        found = h.values(state, random.Random(0))
        assert found is not None and found.method is Method.SEARCH
        f = FastState.from_state(state)
        moves = Solver(f, SEARCH_TRICKS).move_values()
        base = f.points[0] - f.points[1]
        for card, value in found.values.items():
            assert isinstance(card, int)
            assert value == side_net(f.score_for(base + moves[card]), state.to_act, 4)
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize(("variant", "left"), [("three-handed", 4), ("two-handed", 6)])
def test_few_seat_hindsight_is_every_way_searched_without_a_table(variant: str, left: int) -> None:
    """With three or two seats, where hindsight says exact, each card's value is the max^n
    value of every way the rest can go searched without a table of positions (the table,
    and with two players the alpha-beta search, change how it is found, not what)."""
    rules = RULE_SETS[variant]
    h = Hindsight(make_bot("rules"))
    assert left <= FEW_EXACT_TRICKS[rules.seats]
    checked = 0
    for seed in range(30):
        record = one_round(variant, seed)
        state = record.start.deal(record.deck)
        for action, _ in record.actions:
            if state.phase is Phase.PLAY and state.pending_openings == ():
                tricks_left = rules.tricks_per_round - len(state.tricks)
                if tricks_left <= left and len(state.legal_actions()) > 1:
                    found = h.values(state, random.Random(0))
                    assert found is not None and found.method is Method.EXACT
                    f = FastState.from_state(state)
                    assert isinstance(f, FewFastState)
                    for group in equivalent_groups(f):
                        g = f.copy()
                        g.push(group[0])
                        every = _every_way(g, rules.seats)[state.to_act]
                        assert all(found.values[c] == every for c in group)
                    checked += 1
            state = state.apply(action)
        if checked >= 40:
            break
    assert checked >= 40


def test_the_same_record_gives_the_same_figures() -> None:
    record = one_round("coinche", 5)
    first, again = coach().analyse_round(record), coach().analyse_round(record)
    assert first == again


def test_only_a_bot_that_values_every_action_is_an_evaluator() -> None:
    with pytest.raises(NotAnEvaluator):
        evaluator(make_bot("random"))
    assert evaluator(make_bot("expert")) is not None


def test_a_choice_as_good_as_the_best_loses_nothing_and_is_named_best() -> None:
    a, b, c = (Bid.parse("pass"), Bid.parse("take"), Bid.parse("H"))
    v = valuation({a: 10.0, b: 10.0, c: 3.0}, (a, b, c), b, "expert")
    assert v is not None and v.best == b and v.loss == 0
    v = valuation({a: 10.0, c: 3.0}, (a, b, c), b, "expert")  # b not valued
    assert v is not None and v.best == a and v.loss is None and v.chosen is None
    assert valuation({}, (a, b), a, "expert") is None


def test_a_hint_names_a_legal_choice_with_a_reason() -> None:
    c = coach()
    for seed in range(6):
        record = one_round("classic", seed)
        state = record.start.deal(record.deck)
        for action, _ in record.actions:
            obs = observe(state, state.to_act)
            if len(obs.legal) > 1:
                hint = c.hint(obs, random.Random(seed))
                assert hint is not None and hint.action in obs.legal
                assert isinstance(hint.reason, Reason)
                if hint.runner_up is not None:
                    assert hint.runner_up[0] in obs.legal and hint.runner_up[1] <= hint.value
            state = state.apply(action)
