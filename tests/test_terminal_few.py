"""A person at the terminal table of three seats and of two, through a pseudo-terminal of
80x24: a whole game against bots at this terminal (``play``) and against bot peers over
loopback TCP (``host --bots``). The frame shows every player's score, the trick count of
the variant and, two-handed, both players' piles, each card of ours numbered by its pile
(the number stays the pile's when the card below it is turned up). No test sleeps: each
waits for what the screen shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import cli_argv
from terminal import (
    CARD,
    DECISION,
    Terminal,
    answered,
    at_decision,
    environment,
    frame_fits,
    last_line,
)

from belote_p2p.game.rules import rule_set

ROUND_SCREEN = "Enter: the table"
PILE = re.compile(r"(?<![\d♠♥♦♣])(\d) (?:(10|[7-9JQKA])([♠♥♦♣]))?(▪)?")
"""One of our piles in the two-handed frame: its number, the card on top (if any) and the
mark of a face-down card under it."""


def pile_row(text: str, name: str) -> str:
    """The row of ``name``'s piles: the other player's under its label, ours above."""
    lines = text.split("\n")
    index = next(
        i for i, line in enumerate(lines) if re.search(rf"│\s+(▶ )?{name}\b", line) and i > 2
    )
    return lines[index - 1] if name == "You" else lines[index + 1]


def our_piles(text: str) -> dict[str, str]:
    """Pile number -> the card on top of it (rank and suit) in our row of piles."""
    row = pile_row(text, "You")
    return {m[0]: m[1] + m[2] for m in PILE.findall(row) if m[1]}


def play_out(term: Terminal, variant: str, names: list[str]) -> tuple[int, int, str]:
    """Play the game on ``term`` to its end, passing every bid and playing legal cards in
    turn; checks every frame on the way. The rounds seen (the last on the game's screen),
    the cards played and the text of the last screen."""
    rules = rule_set(variant)
    tricks = rules.tricks_per_round
    plays = rounds = 0
    pile_of: dict[str, str] = {}
    while True:
        text = term.wait(
            lambda t: at_decision(t) or ROUND_SCREEN in t or "Score sheet" in t,
            "a decision, the round screen or the end",
        )
        if "Score sheet" in text and not at_decision(text) and ROUND_SCREEN not in text:
            # The last round's screen is the game's, asking no Enter: one more round seen.
            assert "Round score" in term.plain(), text
            return rounds + 1, plays, text
        frame_fits(text)
        if ROUND_SCREEN in text and "Game over" not in text:
            redeal = "Everybody passed" in text
            if not redeal:  # a column per player, headed by its name
                row = next(line for line in text.split("\n") if "Round score" in line)
                assert len(re.findall(r"\d+", row)) == rules.seats, text
                assert all(name in text for name in names), text
            game = next(line for line in text.split("\n") if "Game (to 101)" in line)
            over = max(int(n) for n in re.findall(r"\d+", game.split(")")[1])) >= 101
            if rounds == 0 and not redeal and not over:
                term.send("tricks")
                # Whole frames only: a frame caught half drawn lacks its footer.
                shown = term.wait(
                    lambda t: "Tricks of round" in t and ROUND_SCREEN in t, "the round's tricks"
                )
                numbered = re.findall(r"(?:^│ |   )(\d+)\. ", shown, re.MULTILINE)
                assert [int(n) for n in numbered] == list(range(1, tricks + 1)), shown
            rounds += not redeal
            term.send("")
            term.wait(
                lambda t: ROUND_SCREEN not in t and "Tricks of round" not in t, "the table again"
            )
            pile_of.clear()
            continue
        kind = DECISION.search(last_line(text))
        assert kind is not None
        score = text.split("\n")[1]
        assert all(name in score for name in names) and " & " not in score, text
        if kind.group(1) == "bid":
            assert rules.has_bidding
            term.send("pass")
            term.wait(answered, "the bid taken")
            continue
        assert re.search(rf"Trick \d+ of {tricks}\b", text), text
        legal = re.findall(CARD, text.split("Legal: ")[-1].split("\n")[0])
        assert legal, text
        if not rules.has_bidding:
            piles = our_piles(text)
            assert "No bidding" in text, text
            for number, rank, suit in legal:
                # A legal card is on top of the pile its number names.
                assert piles[number] == rank + suit, text
            fresh = not pile_of  # our first card of the round
            for number, card in piles.items():
                # A pile keeps its number; the card on top changes only once played.
                pile_of.setdefault(card, number)
                assert pile_of[card] == number, text
            other = pile_row(text, names[0])
            shown = re.findall(r"(?:10|[7-9JQKA])[♠♥♦♣]▪?|▪|·", other)
            assert len(shown) == 8, text  # eight piles: a card, a face-down one, none
            if fresh:  # most of its cards still lie on face-down ones
                assert sum(p.endswith("▪") for p in shown) >= 6, text
        number, rank, suit = legal[plays % len(legal)]
        term.send(number if plays % 2 else (rank + "SHDC"["♠♥♦♣".index(suit)]).lower())
        term.wait(answered, "the card taken")
        plays += 1


@pytest.mark.parametrize(
    ("variant", "names"), [("three-handed", ["East", "West"]), ("two-handed", ["North"])]
)
def test_a_person_plays_a_whole_local_game_of_three_or_two(
    variant: str, names: list[str], tmp_path: Path
) -> None:
    argv = cli_argv("play", "--variant", variant, "--target", "101", "--seed", "5",
                    "--name", "Ann", "--pace", "0", "--home", tmp_path / "home")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        rounds, plays, _ = play_out(term, variant, names)
        term.expect_raw(r"Play again, same players and seats, the deal passed on\? \[y/N\] ")
        term.send("n")
        assert term.finish() == 0
        final = term.plain()
        assert rounds >= 1 and plays >= 8
        assert re.search(r"Game over: (You win|(East|West|North) wins) \d+-\d+", final), final
        assert "Traceback" not in final
    finally:
        term.close()


@pytest.mark.parametrize(("variant", "bots"), [("three-handed", 2), ("two-handed", 1)])
def test_a_person_plays_a_networked_game_of_three_or_two(
    variant: str, bots: int, tmp_path: Path
) -> None:
    argv = cli_argv("host", "--variant", variant, "--bots", bots, "--target", "101",
                    "--port", "0", "--bind", "127.0.0.1", "--no-beacon", "--name", "Ann",
                    "--home", tmp_path / "home", "--seed", 7)  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        names = [f"Bot{i}" for i in range(1, bots + 1)]
        rounds, plays, _ = play_out(term, variant, names)
        term.expect_raw(r"Play again, same players and seats, the deal passed on\? \[y/N\] ")
        term.send("n")
        assert term.finish() == 0
        final = term.plain()
        assert rounds >= 1 and plays >= 8 and "Traceback" not in final
        scores = "-".join([r"\d+"] * (bots + 1))
        assert re.search(rf"All {bots + 1} peers agree: final scores {scores}", final), final
    finally:
        term.close()
