"""``belote-p2p referee``: score rounds given as JSON Lines, one answer line per input line.

The format is specified in ``protocol/REFEREE.md`` (and summed up in ``docs/api.md``), with
golden rounds in ``protocol/vectors/referee-*.jsonl``; it is how rule disputes are settled
and how bot authors check a deal, so it stays exactly so.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from belote_p2p.errors import LocalProtocolError
from belote_p2p.game.cards import Card, cards_of
from belote_p2p.game.engine import IllegalActionError, Phase, State, pile_positions
from belote_p2p.game.rules import RULE_SETS, RuleSet
from belote_p2p.game.scoring import CAPOT_POINTS, GENERALE_POINTS

KEYS = {
    "variant",
    "dealer",
    "hands",
    "trump",
    "taker",
    "contract",
    "multiplier",
    "plays",
    "pending",
    "piles",
}
SUITS = {"S": 0, "H": 1, "D": 2, "C": 3}


class RefereeInputError(LocalProtocolError, ValueError):
    """A malformed input line; the message says what is wrong."""


def _seat(data: dict[str, Any], key: str, seats: int = 4) -> int:
    value = data.get(key)
    if type(value) is not int or not 0 <= value < seats:
        raise RefereeInputError(f"{key!r} must be a seat 0..{seats - 1}, not {value!r}")
    return value


def _card(text: object, where: str) -> Card:
    if not isinstance(text, str):
        raise RefereeInputError(f'{where}: a card is a string like "JH", not {text!r}')
    try:
        return Card.parse(text)
    except ValueError as exc:
        raise RefereeInputError(f"{where}: {exc}") from None


def _start(data: dict[str, Any]) -> tuple[State, list[Card]]:
    unknown = set(data) - KEYS
    if unknown:
        raise RefereeInputError(f"unknown field(s): {', '.join(sorted(unknown))}")
    variant = data.get("variant")
    if variant not in RULE_SETS:
        raise RefereeInputError(f"'variant' must be one of {', '.join(RULE_SETS)}, not {variant!r}")
    rules = RULE_SETS[variant]
    seats = rules.seats
    dealer = _seat(data, "dealer", seats)
    if not rules.has_bidding:
        return _start_two_handed(data, dealer)
    if "piles" in data:
        raise RefereeInputError("'piles' are for two-handed only")
    taker = _seat(data, "taker", seats)
    trump = data.get("trump")
    if trump not in SUITS:
        raise RefereeInputError(f"'trump' must be one of S H D C, not {trump!r}")
    hands = _card_lists(data, "hands", rules, "hand", 8)
    contract, multiplier = 0, 1
    if rules.is_coinche:
        raw = data.get("contract")
        named = {"capot": CAPOT_POINTS, "generale": GENERALE_POINTS}
        value = named[raw] if isinstance(raw, str) and raw in named else raw
        if type(value) is not int or not (
            (80 <= value <= 160 and value % 10 == 0) or value in named.values()
        ):
            raise RefereeInputError(
                f'\'contract\' must be 80..160, "capot" or "generale", not {raw!r}'
            )
        contract = value
        multiplier = data.get("multiplier", 1)
        if multiplier not in (1, 2, 4) or type(multiplier) is not int:
            raise RefereeInputError(f"'multiplier' must be 1, 2 or 4, not {multiplier!r}")
    elif "contract" in data or "multiplier" in data:
        raise RefereeInputError("'contract' and 'multiplier' are for coinche only")
    pending = _pending(data, rules)
    plays = _plays(data, rules)
    state = State.for_play(
        rules,
        dealer=dealer,
        hands=hands,
        trump=SUITS[trump],
        taker=taker,
        contract=contract,
        multiplier=multiplier,
        pending=pending,
    )
    return state, plays


def _card_lists(
    data: dict[str, Any], key: str, rules: RuleSet, what: str, size: int
) -> list[list[Card]]:
    """``data[key]``: one list of ``size`` distinct cards of the deck per seat."""
    seats = rules.seats
    lists_in = data.get(key)
    if not isinstance(lists_in, list) or len(lists_in) != seats:
        raise RefereeInputError(f"{key!r} must be a list of {seats} {key}")
    lists: list[list[Card]] = []
    seen: set[Card] = set()
    for seat, cards_in in enumerate(lists_in):
        if not isinstance(cards_in, list) or len(cards_in) != size:
            got = len(cards_in) if isinstance(cards_in, list) else "no list"
            raise RefereeInputError(f"{what} of seat {seat} must hold {size} cards, not {got}")
        cards = [_card(t, f"{what} of seat {seat}") for t in cards_in]
        for c in cards:
            if c in seen:
                raise RefereeInputError(f"card {c} appears twice in the {key}")
            if not rules.deck_mask >> c & 1:
                raise RefereeInputError(f"card {c} is not in the {rules.name} deck")
            seen.add(c)
        lists.append(cards)
    return lists


def _pending(data: dict[str, Any], rules: RuleSet) -> int:
    if not rules.has_teams:
        if "pending" in data:
            raise RefereeInputError(f"'pending' (the litige pot) is not for {rules.name}")
        return 0
    pending = data.get("pending", 0)
    if type(pending) is not int or pending < 0:
        raise RefereeInputError(f"'pending' must be a non-negative integer, not {pending!r}")
    return pending


def _plays(data: dict[str, Any], rules: RuleSet) -> list[Card]:
    size = rules.deck_size
    plays_in = data.get("plays", [])
    if not isinstance(plays_in, list) or len(plays_in) > size:
        raise RefereeInputError(f"'plays' must be a list of at most {size} cards")
    plays = [_card(t, f"play {i}") for i, t in enumerate(plays_in)]
    if len(set(plays)) != len(plays):
        twice = next(c for c in plays if plays.count(c) > 1)
        raise RefereeInputError(f"card {twice} is played twice")
    return plays


def _start_two_handed(data: dict[str, Any], dealer: int) -> tuple[State, list[Card]]:
    """Two-handed: the deck rebuilt from each seat's piles, dealt as the rules say."""
    rules = RULE_SETS["two-handed"]
    given = sorted({"hands", "trump", "taker", "contract", "multiplier"} & set(data))
    if given:
        raise RefereeInputError(f"two-handed takes 'piles', not {', '.join(map(repr, given))}")
    piles = _card_lists(data, "piles", rules, "piles", 16)
    deck: list[Card | None] = [None] * 32
    for seat, cards in enumerate(piles):
        for pile, (down, up) in enumerate(pile_positions(dealer, seat)):
            deck[down] = cards[2 * pile]
            deck[up] = cards[2 * pile + 1]
    plays = _plays(data, rules)
    return State.new_game(rules.with_(first_dealer=dealer)).deal(deck), plays


def _names(cards: Iterable[int]) -> list[str]:
    return [str(Card(c)) for c in cards]


def judge(data: object) -> dict[str, Any]:
    """The referee's answer for one decoded input line (raises ``RefereeInputError``)."""
    if not isinstance(data, dict):
        raise RefereeInputError("a line must be a JSON object")
    state, plays = _start(data)
    for index, card in enumerate(plays):
        seat = state.to_act
        try:
            state = state.apply(card)
        except IllegalActionError:
            legal = _names(cards_of(state.legal_mask()))
            return {"illegal": {"index": index, "seat": seat, "card": str(card), "legal": legal}}
        if state.phase is not Phase.PLAY:
            break
    if state.phase is Phase.PLAY:
        return {
            "tricks": [t.to_json() for t in state.tricks],
            "to_play": state.to_act,
            "legal": _names(cards_of(state.legal_mask())),
        }
    record = state.history[-1]
    score = record.score
    assert score is not None
    announcements: list[dict[str, object]] = []
    team = record.announcements_team
    if team is not None:
        teams = state.rules.has_teams
        for seat in range(state.seats):
            if (seat % 2 if teams else seat) == team:
                announcements += [a.to_json(seat) for a in record.declared[seat]]
    return {
        "tricks": [t.to_json() for t in record.tricks],
        "announcements": announcements,
        "belote": record.belote[0][0] if record.belote else None,
        **score.to_json(),
    }


def answer(line: str) -> tuple[dict[str, Any], bool]:
    """The answer to one input line, and whether the line was malformed."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return {"error": f"bad JSON: {exc}"}, True
    try:
        return judge(data), False
    except RefereeInputError as exc:
        return {"error": str(exc)}, True


def run(lines: Iterable[str], out: TextIO) -> int:
    """Answer every non-blank line; the status is 2 if any line was malformed, else 0."""
    status = 0
    for line in lines:
        result, bad = answer(line) if line.strip() else ({"error": "empty line"}, True)
        if bad:
            status = 2
        out.write(json.dumps(result, separators=(", ", ": ")) + "\n")
        out.flush()
    return status


def _lines(f: TextIO) -> Iterator[str]:
    yield from f


def command(args: argparse.Namespace) -> int:
    if args.file in (None, "-"):
        return run(_lines(sys.stdin), sys.stdout)
    try:
        with open(args.file, encoding="utf-8") as f:
            return run(_lines(f), sys.stdout)
    except OSError as exc:
        print(f"belote-p2p referee: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from belote_p2p.i18n import _

    p = sub.add_parser(
        "referee",
        help=_("score rounds given as JSON Lines"),
        description=_(
            "Read one round per JSON line (FILE or standard input) and write one JSON "
            "answer per line: the tricks and score, the next legal cards, the first illegal "
            "play, or an error. Exit status 2 if any line was malformed."
        ),
    )
    p.add_argument("file", nargs="?", metavar=_("FILE"), help=_("JSON Lines file (standard input)"))
    p.set_defaults(func=command)
