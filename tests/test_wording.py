"""The words of the game in each language, and what a person types in any of them
(:mod:`belote_p2p.app.wording`)."""

from __future__ import annotations

import pytest

from belote_p2p import i18n
from belote_p2p.app import wording
from belote_p2p.game.announcements import Announcement, AnnouncementKind
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import CHOOSE, COINCHE, PASS, SURCOINCHE, TAKE, Bid, BidKind
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP

JH, TS, KC, QD = (Card.parse(t) for t in ("JH", "TS", "KC", "QD"))


@pytest.mark.parametrize(
    ("language", "shown", "plain"),
    [
        ("en", ["J♥", "10♠", "K♣", "Q♦"], ["JH", "10S", "KC", "QD"]),
        ("fr", ["V♥", "10♠", "R♣", "D♦"], ["VC", "10P", "RT", "DK"]),
        ("es", ["V♥", "10♠", "R♣", "D♦"], ["VC", "10P", "RT", "DD"]),
    ],
)
def test_cards_are_written_with_the_readers_letters(
    language: str, shown: list[str], plain: list[str]
) -> None:
    with i18n.using(language):
        assert [wording.card_text(c) for c in (JH, TS, KC, QD)] == shown
        assert [wording.card_text(c, symbols=False) for c in (JH, TS, KC, QD)] == plain
        # What is written can be typed back, in the same language.
        assert [wording.parse_card(t) for t in shown + plain] == [JH, TS, KC, QD] * 2


def test_every_card_reads_back_in_every_language() -> None:
    for language in i18n.LANGUAGES:
        with i18n.using(language):
            for c in CARDS:
                assert wording.parse_card(wording.card_text(c)) == c
                assert wording.parse_card(wording.card_text(c, symbols=False)) == c


@pytest.mark.parametrize("language", ["en", "fr", "es"])
@pytest.mark.parametrize(
    ("typed", "card"),
    [("jh", JH), ("vh", JH), ("V♥", JH), ("T♠", TS), ("10♠", TS), ("10 ♠", TS), ("r♣", KC),
     ("k♣", KC), ("d♦", QD), ("Q♦", QD), ("JD", Card.parse("JD")), ("vk", Card.parse("JD"))],
)  # fmt: skip
def test_any_languages_letters_are_read_in_every_language(
    language: str, typed: str, card: Card
) -> None:
    with i18n.using(language):
        assert wording.parse_card(typed) == card


def test_c_is_clubs_in_english_and_hearts_in_french_and_spanish() -> None:
    assert wording.parse_card("AC") == Card.parse("AC")
    for language in ("fr", "es"):
        with i18n.using(language):
            assert wording.parse_card("AC") == Card.parse("AH")
            assert wording.parse_bid("C") == CHOOSE[1]
    assert wording.parse_bid("C") == CHOOSE[3]


def test_a_refused_card_says_what_was_expected_in_the_readers_language() -> None:
    with pytest.raises(wording.WordError, match="is not a card: a card is its rank"):
        wording.parse_card("ZZ")
    with i18n.using("fr"), pytest.raises(wording.WordError) as refused:
        wording.parse_card("ZZ")
    assert str(refused.value).startswith("« ZZ » n'est pas une carte : une carte s'écrit")
    assert "(A 10 R D V 9 8 7)" in str(refused.value)
    assert "P C K T" in str(refused.value)
    with i18n.using("es"), pytest.raises(wording.WordError, match="no es una apuesta"):
        wording.parse_bid("95 ♥")


@pytest.mark.parametrize(
    ("typed", "bid"),
    [("pass", PASS), ("passe", PASS), ("Paso", PASS), ("take", TAKE), ("prendre", TAKE),
     ("tomar", TAKE), ("coinche", COINCHE), ("contre", COINCHE), ("surcoinche", SURCOINCHE),
     ("H", CHOOSE[1]), ("♠", CHOOSE[0]), ("à ♥", CHOOSE[1]), ("choose D", CHOOSE[2]),
     ("90 H", Bid(BidKind.BID, 1, 90)), ("90 ♥", Bid(BidKind.BID, 1, 90)),
     ("capot S", Bid(BidKind.BID, 0, 250)), ("capote P", Bid(BidKind.BID, 0, 250)),
     ("générale ♦", Bid(BidKind.BID, 2, 500)), ("generale D", Bid(BidKind.BID, 2, 500)),
     ("120 SA", Bid(BidKind.BID, NO_TRUMP, 120)), ("120 TT", Bid(BidKind.BID, ALL_TRUMP, 120))],
)  # fmt: skip
def test_bids_typed_in_any_language(typed: str, bid: Bid) -> None:
    for language in i18n.LANGUAGES:
        with i18n.using(language):
            assert wording.parse_bid(typed) == bid


def test_the_games_own_words() -> None:
    hearts = 0xF << 8  # 7♥ 8♥ 9♥ 10♥
    tierce = Announcement(AnnouncementKind.QUARTE, hearts, 50, (50, 0, 4, 3, 0))
    with i18n.using("fr"):
        assert wording.bid_text(TAKE) == "prend"
        assert wording.bid_choice_text(PASS) == "passer"
        assert wording.bid_text(CHOOSE[1]) == "prend à ♥"
        assert wording.trump_text(NO_TRUMP) == "sans atout"
        assert wording.announcement_text(tierce).startswith("cinquante 7♥ 8♥ 9♥ 10♥")
        assert wording.card_name(JH) == "valet de cœur"
        assert wording.listed(["A", "B", "C"]) == "A, B et C"
    with i18n.using("es"):
        assert wording.bid_text(PASS) == "paso"
        assert wording.trump_text(ALL_TRUMP) == "todo triunfo"
        assert wording.announcement_text(tierce).startswith("cuarta")
        assert wording.bid_text(Bid(BidKind.BID, 0, 250)) == "capote ♠"
    assert wording.bid_text(Bid(BidKind.BID, 0, 500)) == "générale ♠"
    assert wording.card_name(JH) == "jack of hearts"
