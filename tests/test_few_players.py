"""Three-handed (RULES.md §12) and two-handed (§13): one test per rule, and invariants."""

from __future__ import annotations

import importlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from belote_p2p.app.display import format_round
from belote_p2p.app.profile import score_game
from belote_p2p.game.announcements import AnnouncementKind, find_announcements, scoring_team
from belote_p2p.game.audit import FaultKind, audit_round
from belote_p2p.game.cards import CARDS, Card, card, cards_of, parse_cards
from belote_p2p.game.engine import (
    NO_CLAIM,
    PASS,
    TAKE,
    TURNED,
    UNDEALT,
    Claim,
    IllegalActionError,
    Phase,
    RoundRecord,
    State,
    deal_owners,
    public_positions,
    under_position,
)
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import CLASSIC, COINCHE, Variant, rule_set
from belote_p2p.game.scoring import Outcome, score_round_few
from belote_p2p.game.tables import STRENGTH
from belote_p2p.players.bots import SafePlayer, load_bots, make_bot

THREE = rule_set("three-handed")
TWO = rule_set("two-handed")
seeds = st.integers(0, 2**32 - 1)


def shuffled(rules: object, rng: random.Random) -> list[Card]:
    assert isinstance(rules, type(THREE))
    deck = list(rules.deck_cards)
    rng.shuffle(deck)
    return deck


def play_round(state: State, rng: random.Random) -> State:
    """Random legal actions until the round in progress ends."""
    n = len(state.history)
    while len(state.history) == n:
        state = state.apply(rng.choice(state.legal_actions()))
    return state


def dealt_three(seed: int, dealer: int = 0) -> State:
    rng = random.Random(seed)
    return State.new_game(THREE.with_(first_dealer=dealer)).deal(shuffled(THREE, rng))


def hands3(*texts: str) -> list[tuple[Card, ...]]:
    return [parse_cards(t.split()) for t in texts]


def deck_from_piles(dealer: int, piles: list[list[str]]) -> list[Card]:
    """The two-handed deck that lays ``piles`` (per seat: pile 0 face down, face up, ...)."""
    deck: list[Card | None] = [None] * 32
    for seat in (0, 1):
        base = 4 if seat == dealer else 0
        for pile in range(8):
            down = base + pile % 4 + (16 if pile >= 4 else 0)
            deck[down] = card(piles[seat][2 * pile])
            deck[down + 8] = card(piles[seat][2 * pile + 1])
    assert all(c is not None for c in deck)
    return [c for c in deck if c is not None]


# -- the API --------------------------------------------------------------------------------


def test_rule_sets_know_their_seats_decks_and_teams() -> None:
    assert (CLASSIC.seats, CLASSIC.deck_size, CLASSIC.has_teams) == (4, 32, True)
    assert (THREE.seats, THREE.deck_size, THREE.has_teams) == (3, 24, False)
    assert (TWO.seats, TWO.deck_size, TWO.has_teams) == (2, 32, False)
    assert THREE.variant is Variant.THREE_HANDED and TWO.variant is Variant.TWO_HANDED
    assert list(THREE.deck_cards) == [c for c in CARDS if str(c)[0] not in "78"]
    assert TWO.deck_cards == CARDS
    # No new field: a four-seat definition keeps its bytes.
    assert set(CLASSIC.to_dict()) == set(THREE.to_dict())
    assert type(THREE).from_dict(THREE.to_dict()) == THREE


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("three-handed", {"sans_atout": True}),
        ("two-handed", {"tout_atout": True}),
        ("three-handed", {"partner_master_frees": False}),
        ("two-handed", {"announcements": True}),
        ("three-handed", {"first_dealer": 3}),
        ("two-handed", {"first_dealer": 2}),
    ],
)
def test_validate_refuses_switches_without_meaning(name: str, changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        rule_set(name, **changes)


def test_four_seat_deal_owners_unchanged() -> None:
    owners = deal_owners(CLASSIC, 3)
    assert owners[20] == TURNED and owners[21:] == (UNDEALT,) * 11
    assert deal_owners(COINCHE, 0)[:3] == (1, 1, 1)
    assert public_positions(CLASSIC, 0) == () and under_position(CLASSIC, 0, 12) is None


# -- §12 three-handed ------------------------------------------------------------------------


def test_12_twenty_four_cards_152_points_and_ten_for_the_last_trick() -> None:
    assert len(THREE.deck_cards) == 24
    with pytest.raises(ValueError):
        State.new_game(THREE).deal(list(CARDS))  # 32 positions
    deck = list(THREE.deck_cards)
    deck[0] = card("7S")
    with pytest.raises(ValueError, match="7S"):
        State.new_game(THREE).deal(deck)
    s = play_round(dealt_three(1), random.Random(1))
    record = s.history[-1]
    if record.score is not None:
        assert sum(t.points for t in record.tricks) == 162
        assert record.tricks[-1].points >= 10


def test_12_no_partner_frees_a_player_who_cannot_follow() -> None:
    # Dealer 0: seat 1 leads AS, seat 2 follows 9S; seat 0 has no spade but trumps (hearts).
    # With four seats, the player two seats after the leader would be its partner.
    s = State.for_play(
        THREE,
        dealer=0,
        hands=hands3(
            "9H TH AD KD QD JD 9D TD",
            "AS KS QS JS TS 9C TC JC",
            "9S QC KC AC JH QH KH AH",
        ),
        trump=1,
        taker=0,
    )
    s = s.apply(card("AS")).apply(card("9S"))
    assert s.to_act == 0
    assert set(s.legal_actions()) == {card("9H"), card("TH")}


def test_12_deal_3_then_2_turn_the_16th_then_complete() -> None:
    owners = deal_owners(THREE, 2)
    assert owners[:15] == (0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 1, 1, 2, 2)
    assert owners[15] == TURNED and owners[16:] == (UNDEALT,) * 8
    assert deal_owners(THREE, 2, taker=1)[16:] == (0, 0, 0, 1, 1, 2, 2, 2)
    s = dealt_three(5, dealer=2)
    assert s.phase is Phase.TAKE_FIRST and s.to_act == 0 and s.turned == s.deck[15]
    assert all(len(s.hand(seat)) == 5 for seat in range(3))
    s = s.apply(PASS).apply(TAKE)  # seat 1 takes
    turned = s.deck[15]
    assert turned is not None and s.taker == 1 and s.trump == turned >> 3
    assert all(len(s.hand(seat)) == 8 for seat in range(3))
    assert s.deck[15] in s.hand(1)
    every = sum(s.hands[:3])
    assert every == THREE.deck_mask


def test_12_everybody_passes_twice_the_next_dealer_deals() -> None:
    s = dealt_three(6, dealer=1)
    for _ in range(3):
        s = s.apply(PASS)
    assert s.phase is Phase.TAKE_SECOND
    for _ in range(3):
        s = s.apply(PASS)
    assert s.phase is Phase.DEAL and s.dealer == 2 and s.history[-1].score is None


def test_12_eight_tricks_of_three() -> None:
    rng = random.Random(7)
    s = State.new_game(THREE.with_(target=10_000))
    while not s.history or s.history[-1].score is None:  # past any redeal
        s = play_round(s.deal(shuffled(THREE, rng)), rng)
    tricks = s.history[-1].tricks
    assert len(tricks) == 8 and all(len(t.cards) == 3 for t in tricks)
    assert [t.leader for t in tricks[1:]] == [t.winner for t in tricks[:-1]]


def test_12_sequences_run_9_to_a_and_only_the_best_holder_scores() -> None:
    hand = sum(1 << c for c in parse_cards(["9S", "TS", "JS", "QS", "9H", "TH", "JH", "AC"]))
    anns = find_announcements(hand, 1)
    assert [a.points for a in anns] == [50, 20]
    best = find_announcements(sum(1 << c for c in parse_cards(["TD", "JD", "QD", "KD", "AD"])), 1)
    # Seat 2's quinte beats seat 0's quarte: only seat 2 scores (its own announcements).
    declared = (anns, (), best)
    assert scoring_team(declared, 1, 3) == 2
    s = State.for_play(
        THREE,
        dealer=0,
        hands=hands3(
            "9S TS JS QS 9H TH JH AC",
            "KS AS QH KH AH 9C TC JC",
            "TD JD QD KD AD 9D QC KC",
        ),
        trump=3,
        taker=1,
    )
    s = play_round(s, random.Random(0))
    record = s.history[-1]
    assert record.announcements_team == 2
    assert record.score is not None and record.score.announcements == (0, 0, 100)


def test_12_belote_stays_with_its_holder_even_when_the_contract_fails() -> None:
    score = score_round_few(
        taker=0,
        trick_points=(40, 60, 62),
        trick_winners=(1, 2, 0, 1, 2, 0, 1, 2),
        announcements=(0, 0, 0),
        belote=(20, 0, 0),
    )
    assert score.outcome is Outcome.FAILED and score.score[0] == 20


def test_12_capot_is_250_and_there_is_no_generale() -> None:
    s = State.for_play(
        THREE,
        dealer=0,
        hands=hands3(
            "9S TS KS 9D TD KD 9C TC",
            "9H TH JH QH KH AH AS AD",
            "JS QS JD QD JC QC KC AC",
        ),
        trump=1,
        taker=1,
    )
    while s.phase is Phase.PLAY:
        legal = [c for c in s.legal_actions() if isinstance(c, Card)]
        strongest = max(legal, key=lambda c: STRENGTH[1][c])
        s = s.apply(strongest if s.to_act == 1 else legal[0])
    score = s.history[-1].score
    assert score is not None
    assert score.capot == 1 and score.generale is None and score.card_points == (0, 250, 0)


def test_12_total_is_card_points_announcements_and_belote() -> None:
    score = score_round_few(
        taker=2,
        trick_points=(30, 50, 82),
        trick_winners=(2, 2, 1, 0, 2, 1, 2, 2),
        announcements=(0, 0, 50),
        belote=(0, 20, 0),
    )
    assert score.totals == (30, 70, 132)
    assert score.outcome is Outcome.MADE and score.score == score.totals


def test_12_made_needs_strictly_more_than_each_other_player_no_litige() -> None:
    winners, none = (0, 1, 2, 0, 1, 2, 0, 1), (0, 0, 0)
    tied = score_round_few(
        taker=0, trick_points=(70, 70, 22), trick_winners=winners, announcements=none, belote=none
    )
    assert tied.outcome is Outcome.FAILED and tied.pending == 0
    beaten_by_one = score_round_few(
        taker=0, trick_points=(60, 20, 82), trick_winners=winners, announcements=none, belote=none
    )
    assert beaten_by_one.outcome is Outcome.FAILED


def test_12_failed_taker_scores_its_belote_others_add_half_rounded_down() -> None:
    score = score_round_few(
        taker=1,
        trick_points=(90, 41, 31),
        trick_winners=(0, 1, 2, 0, 1, 2, 0, 0),
        announcements=(0, 20, 0),
        belote=(0, 20, 0),
    )
    # The taker's 81 is less than 90. Half of its 41 card points and 20 of announcements:
    # 30 (rounded down from 30.5).
    assert score.outcome is Outcome.FAILED
    assert score.score == (90 + 30, 20, 31 + 30)


def test_12_end_the_single_highest_at_the_target_wins_equal_plays_on() -> None:
    s = play_round(
        State.new_game(THREE.with_(target=10_000)).deal(shuffled(THREE, random.Random(3))),
        random.Random(3),
    )
    record = s.history[-1]
    tied = record._replace(scores_after=(600, 600, 10))
    assert s.replace_round(tied).phase is Phase.DEAL
    rules = THREE.with_(target=501)
    base = State.new_game(rules).deal(shuffled(THREE, random.Random(3)))
    done = play_round(base, random.Random(3))
    over = done.replace_round(done.history[-1]._replace(scores_after=(520, 601, 10)))
    assert over.is_over and over.winner == 1
    under = done.replace_round(done.history[-1]._replace(scores_after=(500, 400, 0)))
    assert under.phase is Phase.DEAL and under.winner is None


def test_12_xp_round_won_by_made_taker_or_both_others_trick_by_its_taker() -> None:
    s = State.new_game(THREE.with_(target=10_000))
    rng = random.Random(11)
    while len([r for r in s.history if r.score is not None]) < 6:
        s = play_round(s.deal(shuffled(THREE, rng)), rng)
    rounds = [r for r in s.history if r.score is not None]
    records = score_game(s.history, coinche=False, winner=None, seats=3)
    assert len(records) == 3
    for seat, rec in enumerate(records):
        won = 0
        for r in rounds:
            assert r.score is not None
            made = r.score.outcome is Outcome.MADE
            won += (seat == r.taker) if made else (seat != r.taker)
        assert rec.rounds_won == won
        assert rec.tricks_won == sum(t.winner == seat for r in rounds for t in r.tricks)


# -- §13 two-handed --------------------------------------------------------------------------


def test_13_thirty_two_cards_two_seats_each_for_himself() -> None:
    s = State.new_game(TWO).deal(list(CARDS))
    assert s.seats == 2 and s.scores == (0, 0) and s.team_points == (0, 0)
    assert observe(s, 0).partner == -1 and observe(s, 1).team == 1


def test_13_deck_positions_and_face_up_cards_open_to_both() -> None:
    owners = deal_owners(TWO, 0)
    assert owners[:16] == (1,) * 4 + (0,) * 4 + (1,) * 4 + (0,) * 4
    assert owners[16:] == owners[:16]
    assert public_positions(TWO, 1) == tuple(range(8, 16)) + tuple(range(24, 32))
    assert under_position(TWO, 0, 8) == 0 and under_position(TWO, 0, 31) == 23
    assert under_position(TWO, 0, 3) is None
    with pytest.raises(ValueError):
        under_position(TWO, 0, 32)
    s = State.new_game(TWO).deal(list(CARDS))
    for seat in (0, 1):
        up = {CARDS[p] for p in public_positions(TWO, 0) if owners[p] == seat}
        assert set(s.hand(seat)) == up
        # The other seat sees them too.
        assert observe(s, 1 - seat).shown[seat] == sum(1 << c for c in up)


def test_13_face_down_cards_stay_unknown_until_turned_up() -> None:
    deck = list(CARDS)
    random.Random(4).shuffle(deck)
    public = set(public_positions(TWO, 0))
    partial: list[Card | None] = [c if i in public else None for i, c in enumerate(deck)]
    with pytest.raises(ValueError):
        State.new_game(TWO).deal([None] * 32)  # the face-up cards must be known
    s = State.new_game(TWO).deal(partial)
    full = State.new_game(TWO).deal(deck)
    assert s.pending_openings == () and full.pending_openings == ()
    first = full.legal_actions()[0]
    s, full = s.apply(first), full.apply(first)
    second = full.legal_actions()[0]
    s, full = s.apply(second), full.apply(second)
    assert isinstance(first, Card) and isinstance(second, Card)
    expected = tuple(sorted(under_position(TWO, 0, deck.index(c)) or 0 for c in (first, second)))
    assert s.pending_openings == expected and full.pending_openings == ()
    assert s.legal_actions() == ()
    still_down = next(p for p in range(8) if p not in expected)
    with pytest.raises(ValueError, match="face down"):
        s.reveal({still_down: deck[still_down]})
    with pytest.raises(IllegalActionError):
        s.apply(full.legal_actions()[0])
    s = s.reveal({expected[0]: deck[expected[0]]})
    assert s.pending_openings == expected[1:]
    s = s.reveal({expected[1]: deck[expected[1]]})
    assert s.pending_openings == () and s.hands == full.hands


def test_13_trump_is_the_dealers_last_face_up_card_no_bidding() -> None:
    deck = list(CARDS)
    random.Random(5).shuffle(deck)
    s = State.new_game(TWO.with_(first_dealer=1)).deal(deck)
    assert s.phase is Phase.PLAY and s.trump == deck[31] >> 3 and s.taker == -1
    assert deal_owners(TWO, 1)[31] == 1
    assert all(isinstance(a, int) for a in s.legal_actions())
    s = play_round(s, random.Random(5))
    assert not any(s.history[-1].declared) and s.history[-1].announcements_team is None


def test_13_non_dealer_leads_only_face_up_cards_are_playable() -> None:
    deck = list(CARDS)
    random.Random(6).shuffle(deck)
    s = State.new_game(TWO).deal(deck)
    assert s.to_act == 1 == s.leader
    face_down = deck[0]  # the non-dealer's pile 0, face down
    with pytest.raises(IllegalActionError):
        s.apply(face_down)
    assert face_down not in s.legal_actions()


def test_13_face_up_cards_are_the_hand_for_the_obligations() -> None:
    # Dealer 0; seat 1 leads AS. Seat 0 has spades only face down: it may play any card.
    piles = [
        ["7S", "7H", "8S", "8H", "9S", "9H", "TS", "TH"]
        + ["JS", "JH", "QS", "QH", "KS", "KH", "7D", "7C"],
        ["8D", "AS", "9D", "AH", "TD", "AD", "JD", "8C"]
        + ["QD", "9C", "KD", "TC", "AC", "JC", "QC", "KC"],
    ]
    s = State.new_game(TWO).deal(deck_from_piles(0, piles))
    assert s.trump == 3  # 7C, the dealer's pile 7 face up
    s = s.apply(card("AS"))
    up = {card(t) for t in piles[0][1::2]}
    assert set(s.legal_actions()) == {c for c in up if c >> 3 == 3}  # must trump: 7C
    s = s.apply(card("7C"))
    # The cards under AS (seat 1, pile 0) and 7C (seat 0, pile 7) are turned up.
    assert card("8D") in s.hand(1) and card("7D") in s.hand(0)


def test_13_sixteen_tricks_of_two_each_card_turned_up_once() -> None:
    deck = list(CARDS)
    random.Random(7).shuffle(deck)
    s = play_round(State.new_game(TWO).deal(deck), random.Random(7))
    record = s.history[-1]
    assert len(record.tricks) == 16 and all(len(t.cards) == 2 for t in record.tricks)
    assert sorted(c for t in record.tricks for c in t.cards) == list(CARDS)
    assert record.tricks[-1].points >= 10


def test_13_belote_for_playing_both_king_and_queen_of_trump() -> None:
    deck = list(CARDS)
    for seed in range(200):
        random.Random(seed).shuffle(deck)
        s = play_round(State.new_game(TWO).deal(deck), random.Random(seed))
        record = s.history[-1]
        king, queen = CARDS[record.trump * 8 + 6], CARDS[record.trump * 8 + 5]
        by = {}
        for t in record.tricks:
            for i, c in enumerate(t.cards):
                by[c] = (t.leader + i) % 2
        assert record.score is not None
        if by[king] == by[queen]:
            seat = by[king]
            assert [b[0] for b in record.belote] == [seat]
            assert record.score.belote[seat] == 20
            # Recorded with the second of the two cards played.
            second = record.belote[0][1]
            order = [c for t in record.tricks for c in t.cards]
            assert order.index(second) > order.index(king if second == queen else queen)
        else:
            assert record.belote == () and record.score.belote == (0, 0)


def test_13_scoring_card_points_belote_and_capot_250() -> None:
    plain = score_round_few(
        taker=-1,
        trick_points=(100, 62),
        trick_winners=(0, 1) * 8,
        announcements=(0, 0),
        belote=(0, 20),
    )
    assert plain.outcome is Outcome.NO_CONTRACT and plain.score == (100, 82)
    capot = score_round_few(
        taker=-1,
        trick_points=(0, 162),
        trick_winners=(1,) * 16,
        announcements=(0, 0),
        belote=(0, 0),
    )
    assert capot.capot == 1 and capot.card_points == (0, 250) and capot.score == (0, 250)


def test_13_the_round_winner_deals_next_equal_the_deal_passes() -> None:
    deck = list(CARDS)
    random.Random(8).shuffle(deck)
    s = play_round(State.new_game(TWO.with_(target=10_000)).deal(deck), random.Random(8))
    record = s.history[-1]
    assert record.score is not None
    a, b = record.score.score
    assert s.dealer == (0 if a > b else 1)
    zero = record._replace(
        score=record.score._replace(score=(81, 81)),
        scores_after=(81, 81),
    )
    assert s.replace_round(zero).dealer == 1  # the first dealer was 0: the deal passes


def test_13_end_and_xp_the_round_goes_to_the_higher_score() -> None:
    rng = random.Random(9)
    s = State.new_game(TWO)
    while not s.is_over:
        deck = list(CARDS)
        rng.shuffle(deck)
        s = play_round(s.deal(deck), rng)
    assert s.winner is not None and s.scores[s.winner] >= 501
    assert s.scores[s.winner] > s.scores[1 - s.winner]
    records = score_game(s.history, coinche=False, winner=s.winner, seats=2)
    for seat in (0, 1):
        won = sum(
            r.score is not None and r.score.score[seat] > r.score.score[1 - seat] for r in s.history
        )
        assert records[seat].rounds_won == won
        assert records[seat].won == (seat == s.winner)


# -- invariants ------------------------------------------------------------------------------


def play_game(rules_name: str, seed: int, check: bool) -> State:
    rules = rule_set(rules_name, target=301)
    rng = random.Random(seed)
    s = State.new_game(rules)
    while not s.is_over:
        s = s.deal(shuffled(rules, rng))
        dealt = sum(1 << c for c in s.deck if c is not None)
        assert dealt == rules.deck_mask and len(s.deck) == rules.deck_size
        while s.phase not in (Phase.DEAL, Phase.GAME_OVER):
            if check:
                assert 0 <= s.to_act < rules.seats
                if s.phase is Phase.PLAY:
                    assert s.legal_actions()
                    held = [s.hands[i] for i in range(rules.seats)]
                    assert sum(h.bit_count() for h in held) == (sum(held) & ~s.played).bit_count()
            s = s.apply(rng.choice(s.legal_actions()))
        record = s.history[-1]
        if record.score is not None:
            assert sum(t.points for t in record.tricks) == 162
            if record.score.capot is not None:
                assert sorted(record.score.card_points)[-1] == 250
                assert sum(record.score.card_points) == 250
            else:
                assert sum(record.score.card_points) == 162
            assert audit_round(record).score == record.score
    return s


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["three-handed", "two-handed"]), seeds)
def test_invariants_of_random_games(name: str, seed: int) -> None:
    s = play_game(name, seed, check=True)
    assert s.winner is not None
    assert all(s.scores[s.winner] > x for i, x in enumerate(s.scores) if i != s.winner)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["three-handed", "two-handed"]), seeds)
def test_same_seed_same_game(name: str, seed: int) -> None:
    a, b = play_game(name, seed, check=False), play_game(name, seed, check=False)
    assert a.scores == b.scores and [r.actions for r in a.history] == [r.actions for r in b.history]


@settings(max_examples=20, deadline=None)
@given(seeds)
def test_two_handed_partial_knowledge_follows_the_full_game(seed: int) -> None:
    """A peer that learns each face-down card only when it is turned up plays the same round."""
    rng = random.Random(seed)
    deck = shuffled(TWO, rng)
    public = set(public_positions(TWO, 0))
    full = State.new_game(TWO).deal(deck)
    peer = State.new_game(TWO).deal([c if i in public else None for i, c in enumerate(deck)])
    while full.phase is Phase.PLAY:
        if peer.pending_openings:
            assert all(peer.deck[p] is None for p in peer.pending_openings)
            peer = peer.reveal({p: deck[p] for p in peer.pending_openings})
        assert peer.hands == full.hands and peer.legal_actions() == full.legal_actions()
        c = rng.choice(full.legal_actions())
        full, peer = full.apply(c), peer.apply(c)
    assert peer.history[-1].score == full.history[-1].score
    assert peer.history[-1].deck == full.history[-1].deck


# -- partial knowledge and the audit with three seats ----------------------------------------


class ThreeTable:
    """A full three-handed state and seat ``viewer``'s view (only its own cards and the
    turned card), moved in lockstep until a play the full state refuses."""

    def __init__(self, seed: int, viewer: int) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.viewer = viewer
        while True:
            self.deck = shuffled(THREE, rng)
            self.full = State.new_game(THREE).deal(self.deck)
            owners = deal_owners(THREE, 0)
            masked = [c if owners[i] in (viewer, TURNED) else None for i, c in enumerate(self.deck)]
            self.view = State.new_game(THREE).deal(masked)
            while self.full.phase is not Phase.PLAY and self.full.phase is not Phase.DEAL:
                bid = rng.choice(self.full.legal_actions())
                self.full, self.view = self.full.apply(bid), self.view.apply(bid)
            if self.full.phase is Phase.PLAY:
                break
        owners = deal_owners(THREE, 0, self.full.taker)
        mine = {i: self.deck[i] for i in range(16, 24) if owners[i] == viewer}
        self.view = self.view.reveal(mine)

    def play(self, c: Card, *, claim: Claim | None = None, honest: bool = True) -> None:
        seat = self.view.to_act
        if seat == self.viewer:
            self.view = self.view.apply(c)
        elif honest:
            self.view = self.view.apply(c, self.full.claim_for(c), proven=True)
        else:
            self.view = self.view.apply(c, claim or NO_CLAIM, proven=True)
        if honest:
            self.full = self.full.apply(c)


def test_three_handed_peer_view_follows_an_honest_round() -> None:
    for seed in range(4):
        t = ThreeTable(seed, viewer=seed % 3)
        assert t.view.hands[t.viewer] == t.full.hands[t.viewer]
        assert sum(t.view.unknown) == 16 - (t.full.taker != t.viewer)  # the turned card
        while t.full.phase is Phase.PLAY:
            t.play(t.rng.choice(cards_of(t.full.legal_mask())))
        assert t.view.history[-1].score == t.full.history[-1].score
        report = audit_round(t.view.history[-1], t.deck)
        assert report.clean and report.score == t.full.history[-1].score
        assert len(report.hands) == 3


def test_three_handed_audit_finds_a_revoke_and_the_offender_loses() -> None:
    found = 0
    for seed in range(60):
        t = ThreeTable(seed, viewer=0)
        while t.full.phase is Phase.PLAY:
            seat = t.full.to_act
            hand = cards_of(t.full.hands[seat])
            illegal = [c for c in hand if not t.full.legal_mask() >> c & 1]
            if seat != t.viewer and illegal:
                break
            t.play(t.rng.choice(cards_of(t.full.legal_mask())))
        else:
            continue
        index = len(t.view.actions)
        t.play(illegal[0], honest=False)
        # The rest of the round: any card of the true hands.
        hands = [t.full.hands[s] & ~t.view.played for s in range(3)]
        while t.view.phase is Phase.PLAY:
            seat = t.view.to_act
            if seat == t.viewer:
                c = cards_of(t.view.legal_mask())[0]
            else:
                c = cards_of(hands[seat])[0]
            hands[seat] &= ~(1 << c)
            t.play(c, honest=False)
        record = t.view.history[-1]
        report = audit_round(record, t.deck)
        assert report.fault is not None and report.fault.kind is FaultKind.ILLEGAL_PLAY
        assert report.fault.index == index and report.fault.seat == seat_of(record, index)
        score = report.score
        assert score is not None
        offender = report.fault.seat
        if offender == record.taker:
            assert score.outcome is Outcome.FAILED
            assert score.score[offender] == score.belote[offender]
        else:
            assert score.outcome is Outcome.MADE
            assert score.score[offender] == score.belote[offender]
            assert score.score[record.taker] >= 162
        found += 1
        if found == 3:
            break
    assert found == 3


def seat_of(record: RoundRecord, index: int) -> int:
    """The seat that made action ``index`` of a round."""
    state = record.start.deal(record.deck)
    for action, claim in record.actions[:index]:
        state = state.apply(action, claim if isinstance(action, Card) else None)
    return state.to_act


def test_three_handed_audit_finds_a_false_announcement() -> None:
    for seed in range(40):
        t = ThreeTable(seed, viewer=0)
        claimer = t.full.to_act
        if claimer == t.viewer or t.full.declared[claimer]:
            continue
        # A tierce of cards the claimer does not hold, as far as the viewer can tell.
        others = t.full.hands[3 - claimer] if claimer else 0
        fake = find_announcements(others, t.full.trump)
        seqs = [a for a in fake if a.kind is not AnnouncementKind.CARRE]
        if not seqs:
            continue
        c = cards_of(t.full.hands[claimer] & t.full.legal_mask())[0]
        index = len(t.view.actions)
        t.play(c, claim=Claim((seqs[0],), False), honest=False)
        record = t.view.round_record()
        report = audit_round(record, t.deck)
        assert report.fault is not None
        assert report.fault.kind is FaultKind.FALSE_ANNOUNCEMENT
        assert report.fault.seat == claimer and report.fault.index == index
        return
    pytest.fail("no deal with a sequence to claim falsely")


# -- observations and bots -------------------------------------------------------------------


def test_two_handed_observation_opens_the_deck_as_it_is_turned_up() -> None:
    rebuild_two_handed = importlib.import_module("belote_bots.pimc_bot").rebuild_two_handed
    deck = shuffled(TWO, random.Random(12))
    s = State.new_game(TWO).deal(deck)
    rng = random.Random(12)
    while s.phase is Phase.PLAY:
        obs = observe(s, s.to_act)
        for pos, c in enumerate(obs.open_deck):
            if pos in public_positions(TWO, 0):
                assert c == deck[pos]
            elif c is not None:
                assert c == deck[pos] and deck[pos + 8] in {x for t in s.tricks for x in t.cards}
            else:
                cover = deck[pos + 8]
                assert not any(cover in t.cards for t in s.tricks)
        # The unplayed cards not in the open deck are the unseen ones.
        hidden = {c for c, o in zip(deck, obs.open_deck, strict=True) if o is None}
        assert hidden == set(cards_of(obs.unseen() & ~obs.shown[1 - obs.seat]))
        state = rebuild_two_handed(obs, rng)
        assert state is not None and state.hands == s.hands and state.trick == s.trick
        s = s.apply(rng.choice(s.legal_actions()))
    assert observe(State.new_game(THREE).deal(shuffled(THREE, rng)), 0).open_deck == ()


@pytest.mark.parametrize("name", ["three-handed", "two-handed"])
@pytest.mark.parametrize(
    "spec", ["random", "rules", "pimc:iterations=3:bid_samples=2", "expert:samples=3"]
)
def test_built_in_bots_play_a_whole_game_legally(name: str, spec: str) -> None:
    rules = rule_set(name, target=300)
    bots = load_bots()
    players = [SafePlayer(make_bot(spec, bots), name=spec) for _ in range(rules.seats)]
    rng = random.Random(5)
    s = State.new_game(rules)
    while not s.is_over:
        if s.phase is Phase.DEAL:
            s = s.deal(shuffled(rules, rng))
            continue
        s = s.apply(players[s.to_act].decide(observe(s, s.to_act), rng))
    counts = players[0].counts
    for p in players[1:]:
        counts.add(p.counts)
    assert counts.decisions > 0
    assert counts.illegal == counts.errors == counts.timeouts == 0


@pytest.mark.parametrize("rules", [THREE, TWO], ids=["three", "two"])
def test_a_capot_in_a_few_player_round_is_written_with_the_player_who_made_it(
    rules: object,
) -> None:
    # The round's four announcement slots are no sign of teams: a capot by seat 1 names
    # that player, where a team name would read past the end of the names.
    assert isinstance(rules, type(THREE))
    rng = random.Random(4)
    state = play_round(State.new_game(rules).deal(shuffled(rules, rng)), rng)
    while state.history[-1].score is None:
        state = play_round(state.deal(shuffled(rules, rng)), rng)
    record = state.history[-1]
    assert record.score is not None
    swept = record._replace(score=record.score._replace(capot=1))
    names = ("Ann", "Bob", "Cy")[: rules.seats]
    assert ", capot by Bob" in format_round(swept, names)
