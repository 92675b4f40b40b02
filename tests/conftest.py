from __future__ import annotations

import random

import pytest

from belote_p2p.game.cards import CARDS, Card, parse_cards
from belote_p2p.game.engine import Phase, State


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def random_deck(rng: random.Random) -> list[Card]:
    deck = list(CARDS)
    rng.shuffle(deck)
    return deck


def play_round(state: State, rng: random.Random) -> State:
    while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)
