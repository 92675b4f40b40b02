"""What a seat may know: its own hand and everything public, nothing more."""

from __future__ import annotations

import random

from helpers import random_deck

from belote_p2p.game.cards import FULL_DECK, cards_of
from belote_p2p.game.engine import TAKE, Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import CLASSIC


def played_state(seed: int, plays: int) -> State:
    rng = random.Random(seed)
    s = State.new_game(CLASSIC).deal(random_deck(rng)).apply(TAKE)  # seat 1 takes
    for _ in range(plays):
        s = s.apply(rng.choice(s.legal_actions()))
    return s


def test_own_hand_and_legal_actions_only() -> None:
    s = played_state(1, 5)
    for seat in range(4):
        obs = observe(s, seat)
        assert obs.hand == s.hand(seat)
        assert obs.legal == (s.legal_actions() if seat == s.to_act else ())
        assert obs.unseen() & obs.hand_mask == 0
        assert obs.unseen() | obs.hand_mask | obs.played == FULL_DECK


def test_the_turned_card_is_known_in_the_takers_hand_until_played() -> None:
    s = played_state(2, 0)
    assert s.phase is Phase.PLAY and s.taker == 1 and s.turned is not None
    obs = observe(s, 0)
    assert obs.shown[1] == 1 << s.turned
    assert obs.possible(2) & (1 << s.turned) == 0
    assert obs.possible(1) & (1 << s.turned)


def test_voids_masters_and_possible_cards_follow_the_play() -> None:
    for seed in range(30):
        s = played_state(seed, 16)
        obs = observe(s, 0)
        for seat in range(1, 4):
            # What a seat showed it lacks, it does not hold.
            assert obs.voids[seat] & s.hands[seat] == 0
            assert s.hands[seat] & ~obs.possible(seat) == 0
        remaining = FULL_DECK & ~s.played
        for c in cards_of(obs.masters()):
            assert remaining >> c & 1
        winner = obs.trick_winner_so_far()
        assert (winner is None) == (not s.trick)
