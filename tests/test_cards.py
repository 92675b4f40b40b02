from __future__ import annotations

import pytest

from belote_p2p.game.cards import CARDS, Card, Rank, Suit, cards_of, mask_of


def test_text_round_trip() -> None:
    for c in CARDS:
        assert Card.parse(str(c)) is c
    assert str(Card.parse("JH")) == "JH"
    assert Card.parse("10h") is Card.parse("TH")
    assert Card.parse("jh") is Card.parse("JH")
    assert Card.parse("A♠") is Card.parse("AS")


def test_card_value_layout() -> None:
    jh = Card.parse("JH")
    assert jh.suit is Suit.HEARTS and jh.rank is Rank.JACK
    assert int(jh) == 1 * 8 + 4
    assert Card.of(Rank.ACE, Suit.CLUBS) is Card.parse("AC")


@pytest.mark.parametrize("bad", ["", "X", "1H", "JX", "JHH", "11H", "6S"])
def test_parse_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        Card.parse(bad)


def test_masks() -> None:
    hand = [Card.parse(t) for t in ("AS", "7H", "JC")]
    m = mask_of(hand)
    assert cards_of(m) == tuple(sorted(hand))
    with pytest.raises(ValueError, match="twice"):
        mask_of(hand + hand[:1])
