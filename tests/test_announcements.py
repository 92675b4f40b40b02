"""RULES.md §5: finding announcements in a hand and comparing them."""

from __future__ import annotations

import pytest
from helpers import cards

from belote_p2p.game.announcements import (
    Announcement,
    AnnouncementKind,
    find_announcements,
    scoring_team,
)
from belote_p2p.game.cards import mask_of


def anns(hand: str, trump: int = 0) -> list[tuple[str, str, int]]:
    return [
        (a.kind.value, " ".join(str(c) for c in a.card_list), a.points)
        for a in find_announcements(mask_of(cards(hand)), trump)
    ]


def test_nothing() -> None:
    assert anns("7S 9S JS 7H 9H JH 7D 9D") == []


def test_sequences() -> None:
    assert anns("7H 8H 9H AS 7D JC QC AC") == [("tierce", "7H 8H 9H", 20)]
    assert anns("TH JH QH KH AS 7D 9C 7C") == [("quarte", "TH JH QH KH", 50)]
    assert anns("9H TH JH QH KH AS 7D 9C") == [("quinte", "9H TH JH QH KH", 100)]


def test_run_of_eight_is_one_quinte() -> None:
    assert anns("7S 8S 9S TS JS QS KS AS") == [("quinte", "7S 8S 9S TS JS QS KS AS", 100)]


def test_two_sequences() -> None:
    got = anns("7S 8S 9S JH QH KH AH 7C")
    assert got == [("quarte", "JH QH KH AH", 50), ("tierce", "7S 8S 9S", 20)]


def test_carres() -> None:
    assert anns("JS JH JD JC 7S 9H AD 8C") == [("carre", "JS JH JD JC", 200)]
    assert anns("9S 9H 9D 9C 7S JH AD 8C") == [("carre", "9S 9H 9D 9C", 150)]
    assert anns("AS AH AD AC 7S JH 9D 8C") == [("carre", "AS AH AD AC", 100)]
    # Four sevens or eights are no carré.
    assert anns("7S 7H 7D 7C 9S JH AD 8C") == []


def test_card_counts_once_carre_or_sequence_best_choice() -> None:
    # Jacks carré (200) beats using JS in the tierce TS JS QS (20): the tierce is lost.
    assert anns("TS JS QS JH JD JC 7H 8D") == [("carre", "JS JH JD JC", 200)]
    # Queen carré (100) + nothing, versus giving QS back for a quinte 9S..KS (100) and
    # keeping no carré: equal points, the carré ranks higher at equal points.
    got = anns("9S TS JS QS KS QH QD QC")
    assert got == [("carre", "QS QH QD QC", 100), ("tierce", "9S TS JS", 20)]


def test_best_announcement_comparison() -> None:
    a = find_announcements(mask_of(cards("7H 8H 9H")), 0)  # tierce to 9, plain
    b = find_announcements(mask_of(cards("8S 9S TS")), 0)  # tierce to T, trump
    c = find_announcements(mask_of(cards("8D 9D TD")), 0)  # tierce to T, plain
    assert a[0].key < c[0].key < b[0].key  # higher top card, then trump wins
    quinte = find_announcements(mask_of(cards("7C 8C 9C TC JC")), 0)[0]
    carre = find_announcements(mask_of(cards("QS QH QD QC")), 0)[0]
    assert quinte.points == carre.points == 100
    assert carre.key > quinte.key  # at equal points a carré beats a sequence
    six = find_announcements(mask_of(cards("7C 8C 9C TC JC QC")), 0)[0]
    assert six.kind is AnnouncementKind.QUINTE and six.key > quinte.key  # then the longer sequence


def test_only_the_best_team_scores_and_ties_go_to_first_seat() -> None:
    t1 = find_announcements(mask_of(cards("7H 8H 9H")), 0)
    t2 = find_announcements(mask_of(cards("7D 8D 9D")), 0)
    # Seats 1 and 2 hold equal tierces; first seat of the first trick is 1: team 1 wins.
    assert scoring_team(((), t1, t2, ()), first_seat=1) == 1
    assert scoring_team(((), t1, t2, ()), first_seat=2) == 0
    assert scoring_team(((), (), (), ()), first_seat=0) is None


CARRES_OF_100 = ("A", "T", "K", "Q")
"""The carrés worth 100, strongest first (RULES.md §5: A > T > K > Q at equal points)."""


def carre_of(rank: str) -> tuple[Announcement, ...]:
    return find_announcements(mask_of(cards(" ".join(rank + s for s in "SHDC"))), 0)


@pytest.mark.parametrize(
    ("stronger", "weaker"),
    [
        (CARRES_OF_100[i], CARRES_OF_100[j])
        for i in range(len(CARRES_OF_100))
        for j in range(i + 1, len(CARRES_OF_100))
    ],
)
def test_carres_of_equal_points_rank_a_t_k_q(stronger: str, weaker: str) -> None:
    high, low = carre_of(stronger), carre_of(weaker)
    assert high[0].points == low[0].points == 100
    assert high[0].key > low[0].key
    # The team of the stronger carré scores, whichever seat holds it and plays first.
    for first_seat in range(4):
        assert scoring_team((high, low, (), ()), first_seat) == 0
        assert scoring_team((low, high, (), ()), first_seat) == 1
        assert scoring_team(((), (), low, high), first_seat) == 1


def test_a_hand_of_two_carres_lists_the_stronger_first() -> None:
    # A claim lists the announcements best first (PROTOCOL.md §6.2): tens before kings.
    assert anns("TS TH TD TC KS KH KD KC") == [
        ("carre", "TS TH TD TC", 100),
        ("carre", "KS KH KD KC", 100),
    ]
    assert anns("QS QH QD QC AS AH AD AC") == [
        ("carre", "AS AH AD AC", 100),
        ("carre", "QS QH QD QC", 100),
    ]
