"""``belote-p2p play --local``: a whole game on this machine between seeded random players."""

from __future__ import annotations

import argparse
import random

from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set

from .display import format_round, format_sheet


def shuffled_deck(rng: random.Random, cards: tuple[Card, ...] = CARDS) -> list[Card]:
    """``cards`` (the 32, or a variant's deck) in an order drawn from ``rng``."""
    deck = list(cards)
    rng.shuffle(deck)
    return deck


def play_game(rules: RuleSet, rng: random.Random, *, verbose: bool = True) -> State:
    """Play a whole game with uniformly random legal actions drawn from ``rng``."""
    state = State.new_game(rules)
    while not state.is_over:
        state = state.deal(shuffled_deck(rng, rules.deck_cards))
        while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
            state = state.apply(rng.choice(state.legal_actions()))
        if verbose:
            print(format_round(state.history[-1]), flush=True)
    return state


def command(args: argparse.Namespace) -> int:
    rules = rule_set(args.variant, target=args.target)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"Local game, {rules.name} to {rules.target}, seed {seed}", flush=True)
    state = play_game(rules, random.Random(seed))
    print(format_sheet(state))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "play",
        help="play a whole game on this machine",
        description="Play a whole game between seeded random players (one per seat) on this "
        "machine (no network) and print every round and the score sheet.",
    )
    p.add_argument("--local", action="store_true", help="no network: every seat here")
    p.add_argument("--seed", type=int, help="seed of the deals and players (default: random)")
    p.add_argument("--variant", choices=sorted(RULE_SETS), default="classic")
    p.add_argument("--target", type=int, default=501, help="score that wins the game")
    p.set_defaults(func=command)
