#!/usr/bin/env python3
"""A belote-p2p bot program in plain Python (standard library only): protocol/BOTS.md.

    belote-p2p arena --bots 'exec:cmd=python3 examples/bots/heuristic.py,rules'

It takes or bids 80 on a suit where it holds the jack, passes otherwise; in play it throws
its most valuable card on a trick its partner is winning, and its cheapest card otherwise.
Option ``style=first`` makes it play the first legal action instead.
"""

import json
import random
import sys

# Card points by rank letter, in trump and out of trump (RULES.md).
TRUMP_POINTS = {"J": 20, "9": 14, "A": 11, "T": 10, "K": 4, "Q": 3, "8": 0, "7": 0}
PLAIN_POINTS = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2, "9": 0, "8": 0, "7": 0}


def points(card, trump):
    rank, suit = card[0], card[1]
    table = TRUMP_POINTS if trump in (suit, "AT") else PLAIN_POINTS
    return table[rank]


def choose(obs, rng):
    legal = obs["legal"]
    hand = obs["hand"]
    if obs["phase"] == "play":
        cards = [action.split()[1] for action in legal]  # "play JS" -> "JS"
        if obs["partner"] >= 0 and obs["winning"] == obs["partner"]:
            best = max(cards, key=lambda c: points(c, obs["trump"]))
        else:
            best = min(cards, key=lambda c: (points(c, obs["trump"]), rng.random()))
        return "play " + best
    jacks = {card[1] for card in hand if card[0] == "J"}
    if obs["phase"] == "take-first" and "take" in legal and obs["turned"][1] in jacks:
        return "take"
    for suit in sorted(jacks):
        for action in ("choose " + suit, "bid 80 " + suit):
            if action in legal and obs["contract"] == 0:
                return action
    return "pass" if "pass" in legal else legal[0]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    style = "heuristic"
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            style = message["options"].get("style", style)
            send(
                {
                    "type": "hello",
                    "protocol": 1,
                    "name": "heuristic-py",
                    "version": "1.0",
                    "options": {"style": "heuristic"},
                }
            )
        elif kind == "decide":
            obs = message["observation"]
            if style == "first":
                action = obs["legal"][0]
            else:
                action = choose(obs, random.Random(message["seed"]))
            send({"type": "action", "id": message["id"], "action": action})
        elif kind == "quit":
            return
        # new_game and new_round need no answer: this bot decides from each observation.


if __name__ == "__main__":
    main()
