"""RULES.md §4: the play obligations and trick winners."""

from __future__ import annotations

import random

import pytest
from helpers import cards, random_deck

from belote_p2p.game.cards import Card
from belote_p2p.game.engine import IllegalActionError, Phase, State
from belote_p2p.game.rules import CLASSIC, CLASSIC_NO_ANNOUNCEMENTS, RuleSet
from belote_p2p.game.tables import winning_index

PLAIN = "789JQKTA"
TRUMP = "78QKTA9J"

# Deal B: trump hearts; seat 0 leads.
DEAL_B = (
    "QH AS KS QS JS TS 9S 8S",
    "7H AD KD QD JD TD 9D 8D",
    "KH 8H AC KC QC JC TC 9C",
    "JH 9H AH TH 7S 7D 7C 8C",
)
# Deal D: trump spades; seat 0 leads.
DEAL_D = (
    "AH KH QH 9D 8D 7D 9C 8C",
    "JS 9S AD KD QD JD TD AC",
    "7S 8S KC QC JC TC 7C AS",
    "TH JH 9H 8H 7H TS KS QS",
)


def at_play(
    deal: tuple[str, ...], trump: int, plays: str = "", rules: RuleSet = CLASSIC_NO_ANNOUNCEMENTS
) -> State:
    s = State.for_play(rules, dealer=3, hands=[cards(h) for h in deal], trump=trump, taker=0)
    for p in plays.split():
        s = s.apply(Card.parse(p))
    return s


def legal(s: State) -> set[str]:
    return {str(c) for c in s.legal_actions()}


def test_first_card_is_free() -> None:
    assert legal(at_play(DEAL_B, 1)) == set(DEAL_B[0].split())


def test_trump_led_only_trump() -> None:
    assert legal(at_play(DEAL_B, 1, "QH")) == {"7H"}


def test_trump_led_must_overtrump_even_over_partner() -> None:
    # Seat 0 (partner of seat 2) is winning with QH; seat 2 holds KH and 8H.
    assert legal(at_play(DEAL_B, 1, "QH 7H")) == {"KH"}


def test_trump_led_overtrump_knob_off() -> None:
    rules = CLASSIC_NO_ANNOUNCEMENTS.with_(must_overtrump_on_trump_lead=False)
    assert legal(at_play(DEAL_B, 1, "QH 7H", rules)) == {"KH", "8H"}


def test_trump_led_all_higher_trumps_allowed() -> None:
    assert legal(at_play(DEAL_B, 1, "QH 7H KH")) == {"JH", "9H", "AH", "TH"}


def test_plain_led_follow_suit_without_beating() -> None:
    # Seat 3 holds 7S only in spades: it must follow, even under the ace.
    s = at_play(DEAL_D, 0, "AH 9S AS")
    assert legal(s) == {"TH", "JH", "9H", "8H", "7H"}


def test_cannot_follow_must_trump() -> None:
    assert legal(at_play(DEAL_D, 0, "AH")) == {"JS", "9S"}


def test_must_undertrump_rather_than_discard() -> None:
    # Seat 1 trumped with the 9; seat 2 has only lower trumps and no heart.
    assert legal(at_play(DEAL_D, 0, "AH 9S")) == {"7S", "8S", "AS"}


def test_must_overtrump_an_opponent() -> None:
    # Trump clubs in deal F: seat 3 leads a heart, seat 0 follows, seat 1 follows; seat 2
    # cannot follow, seat 1 (opponent) wins: trump.  Then seat 0 leads AH... instead check
    # the overtrump: seat 0 leads 9D, seat 1 follows TD, seat 2 trumps 7C, seat 3 (no
    # diamond) must beat the 7 of clubs with the ace, its only trump.
    s = at_play(DEAL_F, 3, "9D TD 7C")
    assert legal(s) == {"AC"}


# Deal F: deal D with seat 1's AC and seat 3's 7H swapped.
DEAL_F = (
    "AH KH QH 9D 8D 7D 9C 8C",
    "JS 9S AD KD QD JD TD 7H",
    "7S 8S KC QC JC TC 7C AS",
    "TH JH 9H 8H AC TS KS QS",
)


def test_partner_master_frees_the_discard() -> None:
    # Trump clubs: seat 0 leads AH and stays master; seat 2 has no heart and its partner
    # is master: any card, trumping is not forced.
    s = at_play(DEAL_F, 3, "AH 7H")
    assert legal(s) == set(DEAL_F[2].split())
    rules = CLASSIC_NO_ANNOUNCEMENTS.with_(partner_master_frees=False)
    s = at_play(DEAL_F, 3, "AH 7H", rules)
    assert legal(s) == {"KC", "QC", "JC", "TC", "7C"}


def test_illegal_card_is_refused_with_details() -> None:
    s = at_play(DEAL_D, 0, "AH")
    with pytest.raises(IllegalActionError) as info:
        s.apply(Card.parse("AD"))
    assert info.value.action == Card.parse("AD")
    assert info.value.seat == 1
    assert "must play one of" in info.value.reason
    assert "trick 1" in info.value.summary
    with pytest.raises(IllegalActionError, match="does not hold"):
        s.apply(Card.parse("7S"))


def test_apply_never_changes_the_callers_state() -> None:
    s = at_play(DEAL_D, 0, "AH")
    before = (s.hands, s.trick, s.to_act, s.played)
    s.apply(Card.parse("JS"))
    assert (s.hands, s.trick, s.to_act, s.played) == before


def test_trick_winner_and_points() -> None:
    s = at_play(DEAL_D, 0, "AH 9S AS TH")
    t = s.tricks[0]
    assert t.winner == 1 and t.leader == 0
    assert t.points == 11 + 14 + 11 + 10
    assert s.to_act == 1 and s.leader == 1


def test_highest_of_led_suit_wins_without_trump() -> None:
    # Trump diamonds: hearts led, nobody trumps; the ace wins over the ten... by rank order.
    s = at_play(DEAL_B, 2, "QH 7H KH AH")
    assert s.tricks[0].winner == 3
    assert s.tricks[0].points == 3 + 0 + 4 + 11


def _reference_legal(hand: list[Card], trick: list[Card], trump: int) -> set[Card]:
    """RULES.md §4 written out plainly, to check the engine's masks against."""
    if not trick:
        return set(hand)

    def key(c: Card) -> tuple[int, int]:
        if c.suit == trump:
            return (2, TRUMP.index(str(c)[0]))
        if c.suit == trick[0].suit:
            return (1, PLAIN.index(str(c)[0]))
        return (0, 0)

    winner = max(range(len(trick)), key=lambda i: key(trick[i]))
    partner_winning = winner == len(trick) - 2
    trumps = [c for c in hand if c.suit == trump]
    table_trumps = [key(c)[1] for c in trick if c.suit == trump]
    higher = [c for c in trumps if key(c)[1] > max(table_trumps, default=-1)]
    if trick[0].suit == trump:
        return set(higher or trumps or hand)
    follow = [c for c in hand if c.suit == trick[0].suit]
    if follow:
        return set(follow)
    if partner_winning:
        return set(hand)
    return set(higher or trumps or hand)


@pytest.mark.parametrize("seed", range(40))
def test_engine_agrees_with_plain_rules(seed: int) -> None:
    rng = random.Random(seed)
    s = State.new_game(CLASSIC).deal(random_deck(rng))
    while s.phase is not Phase.PLAY:
        s = s.apply(rng.choice(s.legal_actions()))
        if s.phase is Phase.DEAL:
            s = s.deal(random_deck(rng))
    while s.phase is Phase.PLAY:
        hand = list(s.hand(s.to_act))
        expected = _reference_legal(hand, list(s.trick), s.trump)
        assert set(s.legal_actions()) == expected
        s = s.apply(rng.choice(s.legal_actions()))


@pytest.mark.parametrize("seed", range(10))
def test_trick_winners_agree_with_the_shared_helper(seed: int) -> None:
    rng = random.Random(seed)
    s = State.new_game(CLASSIC).deal(random_deck(rng))
    while s.phase not in (Phase.DEAL, Phase.GAME_OVER):
        s = s.apply(rng.choice(s.legal_actions()))
    record = s.history[-1]
    for t in record.tricks:
        assert t.winner == (t.leader + winning_index(t.cards, record.trump)) % 4
