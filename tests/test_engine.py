"""The game state machine: deals, bidding, rounds, game end (RULES.md §1, §3, §8, §9)."""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Callable
from typing import Any

import pytest
from helpers import play_round, random_deck

from belote_p2p.game.cards import CARDS, cards_of
from belote_p2p.game.engine import (
    BIDS,
    CHOOSE,
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    TURNED,
    UNDEALT,
    Bid,
    BidKind,
    IllegalActionError,
    Phase,
    State,
    deal_owners,
)
from belote_p2p.game.rules import CLASSIC, rule_set
from belote_p2p.game.rules import COINCHE as COINCHE_RULES

DECK = list(CARDS)


def test_deal_owners_classic_and_coinche() -> None:
    owners = deal_owners(CLASSIC, 0)
    assert owners[:3] == (1, 1, 1) and owners[9:12] == (0, 0, 0)
    assert owners[12:14] == (1, 1) and owners[18:20] == (0, 0)
    assert owners[20] == TURNED and set(owners[21:]) == {UNDEALT}
    done = deal_owners(CLASSIC, 0, taker=2)
    assert done[21:] == (1, 1, 1, 2, 2, 3, 3, 3, 0, 0, 0)
    co = deal_owners(COINCHE_RULES, 3)
    assert co[:3] == (0, 0, 0) and co[20:23] == (0, 0, 0) and co[-3:] == (3, 3, 3)
    assert all(co.count(s) == 8 for s in range(4))


def test_classic_take_gives_the_turned_card_and_two_more() -> None:
    s = State.new_game(CLASSIC).deal(DECK)
    assert s.phase is Phase.TAKE_FIRST and s.to_act == 1 and s.turned == DECK[20]
    assert all(len(s.hand(seat)) == 5 for seat in range(4))
    s = s.apply(PASS).apply(TAKE)  # seat 2 takes
    assert s.phase is Phase.PLAY and s.taker == 2 and s.trump == DECK[20].suit
    assert s.to_act == 1 and s.leader == 1
    assert all(len(s.hand(seat)) == 8 for seat in range(4))
    assert DECK[20] in s.hand(2)
    assert set(DECK[24:26]) <= set(s.hand(2))


def test_classic_second_turn_names_another_suit() -> None:
    s = State.new_game(CLASSIC).deal(DECK)
    for _ in range(4):
        s = s.apply(PASS)
    assert s.phase is Phase.TAKE_SECOND and s.to_act == 1
    turned_suit = DECK[20].suit
    assert CHOOSE[turned_suit] not in s.legal_actions()
    with pytest.raises(IllegalActionError):
        s.apply(CHOOSE[turned_suit])
    with pytest.raises(IllegalActionError):
        s.apply(TAKE)
    other = (turned_suit + 1) % 4
    s = s.apply(PASS).apply(CHOOSE[other])
    assert s.trump == other and s.taker == 2 and s.phase is Phase.PLAY


def test_everybody_passes_twice_redeal_by_next_dealer() -> None:
    s = State.new_game(CLASSIC).deal(DECK)
    for _ in range(8):
        s = s.apply(PASS)
    assert s.phase is Phase.DEAL and s.dealer == 1 and s.scores == (0, 0)
    assert s.history[-1].score is None and s.number == 1


def test_coinche_auction() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    assert s.phase is Phase.AUCTION and s.to_act == 1
    assert all(len(s.hand(seat)) == 8 for seat in range(4))
    assert COINCHE not in s.legal_actions()
    s = s.apply(BIDS[80, 1])  # seat 1
    assert BIDS[80, 2] not in s.legal_actions()  # each bid beats the last
    assert BIDS[90, 2] in s.legal_actions() and COINCHE in s.legal_actions()  # seat 2
    s = s.apply(PASS)  # seat 2
    assert COINCHE not in s.legal_actions()  # seat 3 is the bidder's partner
    s = s.apply(BIDS[100, 0])  # seat 3
    s = s.apply(COINCHE)  # seat 0, an opponent
    legal = s.legal_actions()  # seat 1: bidding team may surcoinche, no more bids
    assert SURCOINCHE in legal and all(b.kind is not BidKind.BID for b in legal)
    s = s.apply(PASS)  # seat 1
    assert s.legal_actions() == (PASS,)  # seat 2, defence
    s = s.apply(PASS).apply(PASS)  # seats 2 and 3: three passes after the coinche
    assert s.phase is Phase.PLAY
    assert (s.taker, s.trump, s.contract, s.multiplier) == (3, 0, 100, 2)


def test_coinche_surcoinche_ends_the_auction() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    s = s.apply(BIDS[120, 3]).apply(COINCHE).apply(SURCOINCHE)  # seats 1, 2, 3
    assert s.phase is Phase.PLAY and s.multiplier == 4 and s.taker == 1


def test_coinche_three_passes_after_a_bid_and_four_passes_redeal() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    s = s.apply(PASS).apply(BIDS[90, 2]).apply(PASS).apply(PASS).apply(PASS)
    assert s.phase is Phase.PLAY and s.taker == 2 and s.contract == 90
    s = State.new_game(COINCHE_RULES).deal(DECK)
    for _ in range(4):
        s = s.apply(PASS)
    assert s.phase is Phase.DEAL and s.dealer == 1


def test_coinche_capot_and_generale_bids_and_parse() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    s = s.apply(Bid.parse("160 S")).apply(Bid.parse("capot H"))
    assert BIDS[500, 0] in s.legal_actions() and BIDS[160, 0] not in s.legal_actions()
    assert str(Bid.parse("generale d")) == "generale D"
    assert Bid.parse("H") == CHOOSE[1] and Bid.parse("take") == TAKE
    with pytest.raises(ValueError, match="not a bid"):
        Bid.parse("85 S")


def test_sans_atout_and_tout_atout_are_switches() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    assert all(b.trump < 4 for b in s.legal_actions() if b.kind is BidKind.BID)
    rules = rule_set("coinche", sans_atout=True, tout_atout=True)
    s = State.new_game(rules).deal(DECK)
    assert {b.trump for b in s.legal_actions() if b.kind is BidKind.BID} == set(range(6))


@pytest.mark.parametrize("trump_bid", ["80 NT", "80 AT"])
def test_sans_atout_and_tout_atout_rounds_add_up(trump_bid: str) -> None:
    rules = rule_set("coinche", sans_atout=True, tout_atout=True)
    rng = random.Random(5)
    s = State.new_game(rules).deal(random_deck(rng))
    s = s.apply(Bid.parse(trump_bid)).apply(PASS).apply(PASS).apply(PASS)
    s = play_round(s, rng)
    record = s.history[-1]
    total = sum(t.points for t in record.tricks)
    assert total == (130 if trump_bid == "80 NT" else 162)


def test_game_ends_at_target_and_dealer_rotates() -> None:
    rng = random.Random(11)
    s = State.new_game(CLASSIC)
    dealers = []
    while not s.is_over:
        dealers.append(s.dealer)
        s = play_round(s.deal(random_deck(rng)), rng)
    assert dealers == [i % 4 for i in range(len(dealers))]
    assert max(s.scores) >= 501 and s.scores[s.winner or 0] == max(s.scores)
    assert s.legal_actions() == ()
    with pytest.raises(IllegalActionError):
        s.deal(DECK)


def test_game_end_needs_a_strictly_higher_score() -> None:
    s = State.new_game(CLASSIC.with_(target=10), scores=(0, 0))
    rng = random.Random(3)
    s = play_round(s.deal(random_deck(rng)), rng)
    if s.scores[0] == s.scores[1]:
        assert s.phase is Phase.DEAL
    else:
        assert s.is_over


def test_first_dealer_is_a_rule_set_field() -> None:
    s = State.new_game(CLASSIC.with_(first_dealer=2)).deal(DECK)
    assert s.dealer == 2 and s.to_act == 3


def test_bad_decks_are_refused() -> None:
    s = State.new_game(CLASSIC)
    with pytest.raises(ValueError, match="32 positions"):
        s.deal(DECK[:31])
    with pytest.raises(ValueError, match="twice"):
        s.deal(DECK[:31] + DECK[:1])


def test_belote_scores_for_the_holder_even_on_failure() -> None:
    # Find a random round in which a belote was declared and check its 20 points.
    rng = random.Random(8)
    found = 0
    for _ in range(200):
        s = play_round(State.new_game(CLASSIC).deal(random_deck(rng)), rng)
        record = s.history[-1]
        if record.score is None or not record.belote:
            continue
        seat, first = record.belote[0]
        assert first.suit == record.trump and first.rank in (5, 6)
        team = seat % 2
        assert record.score.belote[team] == 20
        assert record.score.score[team] >= 20
        found += 1
    assert found > 5


def test_hands_are_dealt_in_full() -> None:
    s = State.new_game(COINCHE_RULES).deal(DECK)
    assert sum(len(s.hand(seat)) for seat in range(4)) == 32
    assert cards_of(s.hands[0] | s.hands[1] | s.hands[2] | s.hands[3]) == tuple(CARDS)


def _pickled(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


@pytest.mark.parametrize(
    "copier", [copy.copy, copy.deepcopy, _pickled], ids=["copy", "deep", "pickle"]
)
def test_states_and_records_copy_and_pickle(copier: Callable[[Any], Any]) -> None:
    # A replay deep-copies peers (the deck and mutation tests); the arena's cluster pickles
    # boards. Frozen values (bids, claims, records) come back through their constructors,
    # which the compiled build needs (engine.py's _by_constructor).
    rng = random.Random(3)
    s = State.new_game(CLASSIC.with_(target=10**9))
    while not any(c.announcements for r in s.history for _, c in r.actions):
        s = play_round(s.deal(random_deck(rng)), rng)
    record = s.history[-1]
    twin = copier(record)
    assert type(twin) is type(record) and twin is not record
    assert (twin.actions, twin.tricks, twin.declared, twin.score, twin.scores_after) == (
        record.actions, record.tricks, record.declared, record.score, record.scores_after,
    )  # fmt: skip
    assert any(type(a) is Bid for a, _ in twin.actions)
    assert twin.bids == record.bids
    again = copier(s)
    deck = random_deck(rng)
    a, b = s.deal(deck), again.deal(deck)
    assert (a.scores, a.dealer, a.legal_actions()) == (b.scores, b.dealer, b.legal_actions())
    assert len(again.history) == len(s.history)
