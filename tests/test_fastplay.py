"""The fast path (``FastState``) agrees with the checked engine on every variant."""

from __future__ import annotations

import random

from helpers import random_deck
from hypothesis import given, settings
from hypothesis import strategies as st

from belote_p2p.game.announcements import find_announcements, scoring_team
from belote_p2p.game.cards import CARDS, FULL_DECK, card, mask_of
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.fastplay import (
    FastState,
    FewFastState,
    announcement_key,
    hand_announcements,
    random_round,
    round_score,
    team_announcements,
)
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.game.scoring import score_round

VARIANTS: dict[str, RuleSet] = {
    **{name: rules for name, rules in RULE_SETS.items() if rules.seats == 4},
    "coinche-sa-ta": rule_set("coinche", sans_atout=True, tout_atout=True),
    "coinche-strict": rule_set(
        "coinche",
        sans_atout=True,
        tout_atout=True,
        partner_master_frees=False,
        must_overtrump_on_trump_lead=False,
    ),
    "classic-knobs": rule_set(
        "classic", partner_master_frees=False, must_overtrump_on_trump_lead=False
    ),
}
variants = st.sampled_from(sorted(VARIANTS))
seeds = st.integers(0, 2**32 - 1)


def to_play(rules: RuleSet, rng: random.Random) -> State:
    """A state at the first card of a round, after a random auction."""
    s = State.new_game(rules.with_(target=10**9))
    while s.phase is not Phase.PLAY:
        if s.phase is Phase.DEAL:
            s = s.deal(random_deck(rng, rules))
        else:
            s = s.apply(rng.choice(s.legal_actions()))
    return s


@settings(max_examples=60, deadline=None)
@given(variants, seeds)
def test_fast_path_and_engine_agree_on_every_legal_set_and_score(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    rules = VARIANTS[variant]
    for _ in range(20):
        s = to_play(rules, rng)
        f = FastState.from_state(s)
        fresh = f.copy()
        while s.phase is Phase.PLAY:
            assert f.legal_mask() == s.legal_mask()
            assert f.to_act == s.to_act and f.hands == list(s.hands)
            c = rng.choice(s.legal_actions())
            s = s.apply(c)
            f.push(c)
        assert f.is_over and f.score() == s.history[-1].score.score  # type: ignore[union-attr]
        # Every push undone gives the round back as it started.
        while f.stack:
            f.pop()
        assert (f.hands, f.trick, f.points, f.tricks, f.wins, f.to_act) == (
            fresh.hands, fresh.trick, fresh.points, fresh.tricks, fresh.wins, fresh.to_act,
        )  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(variants, seeds, st.integers(0, 31))
def test_a_fast_state_taken_mid_round_finishes_as_the_engine(
    variant: str, seed: int, at: int
) -> None:
    rng = random.Random(seed)
    s = to_play(VARIANTS[variant], rng)
    for _ in range(at):
        s = s.apply(rng.choice(s.legal_actions()))
    f = FastState.from_state(s)
    g = FastState.from_observation(observe(s, s.to_act), s.hands)
    for fast in (f, g):
        assert fast.announcements == f.announcements and fast.belote == f.belote
    while s.phase is Phase.PLAY:
        c = rng.choice(s.legal_actions())
        assert f.legal_mask() == g.legal_mask() == s.legal_mask()
        s = s.apply(c)
        f.play(c)
        g.push(c)
    assert f.score() == g.score() == s.history[-1].score.score  # type: ignore[union-attr]


@settings(max_examples=40, deadline=None)
@given(variants, seeds)
def test_random_rounds_replay_on_the_engine(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    rules = VARIANTS[variant]
    for _ in range(25):
        dealer = rng.randrange(4)
        pending = rng.choice((0, 0, 80))
        log: list[tuple[str, object]] = []
        f = random_round(rules, rng, dealer, pending, log)
        s = State.new_game(rules.with_(first_dealer=dealer, target=10**9), pending=pending)
        for kind, x in log:
            if kind == "deal":
                s = s.deal([CARDS[c] for c in x])  # type: ignore[attr-defined]
            elif kind == "bid":
                s = s.apply(s.legal_actions()[x])  # type: ignore[index]
            else:
                assert s.legal_mask() >> x & 1  # type: ignore[operator]
                s = s.apply(CARDS[x])  # type: ignore[index]
        score = s.history[-1].score
        assert score is not None and f.score() == score.score


def test_random_round_play_random_matches_the_logged_path() -> None:
    # The same seed gives the same round whether the cards are logged or not.
    rules = RULE_SETS["coinche"]
    a = random_round(rules, random.Random(9))
    b = random_round(rules, random.Random(9))
    assert a.score() == b.score() and a.points == b.points


@settings(max_examples=300, deadline=None)
@given(seeds, st.integers(0, 5))
def test_hand_announcements_agree_with_find_announcements(seed: int, mode: int) -> None:
    rng = random.Random(seed)
    deck = list(range(32))
    rng.shuffle(deck)
    hand = sum(1 << c for c in deck[:8])
    if rng.random() < 0.3:  # make carrés and long runs common
        hand = (hand & ~(0xFF << 8)) | (0xF0 << 8)
        hand |= sum(1 << (s * 8 + 4) for s in range(4))
        hand &= FULL_DECK
        while hand.bit_count() > 8:
            hand &= hand - 1
    anns = find_announcements(hand, mode)
    points, key = hand_announcements(hand, mode)
    assert points == sum(a.points for a in anns)
    assert key == max((announcement_key(*a.key) for a in anns), default=0)


@settings(max_examples=200, deadline=None)
@given(seeds, st.integers(0, 3))
def test_team_announcements_agree_with_scoring_team(seed: int, first: int) -> None:
    rng = random.Random(seed)
    deck = list(range(32))
    rng.shuffle(deck)
    mode = rng.randrange(6)
    hands = [sum(1 << c for c in deck[8 * s : 8 * s + 8]) for s in range(4)]
    declared = tuple(find_announcements(h, mode) for h in hands)
    team = scoring_team(declared, first)
    summary = [hand_announcements(h, mode) for h in hands]
    got = team_announcements([p for p, _ in summary], [k for _, k in summary], first)
    if team is None:
        assert got == (0, 0)
    else:
        total = sum(a.points for s in (team, team + 2) for a in declared[s])
        assert got == ((total, 0) if team == 0 else (0, total))


@settings(max_examples=500, deadline=None)
@given(
    st.booleans(),
    st.integers(0, 3),
    st.sampled_from((80, 90, 100, 110, 120, 130, 140, 150, 160, 250, 500)),
    st.sampled_from((1, 2, 4)),
    st.integers(0, 162),
    st.sampled_from(("none", "capot0", "capot1", "gen")),
    st.tuples(st.sampled_from((0, 20, 50, 100, 150)), st.sampled_from((0, 20, 70))),
    st.tuples(st.sampled_from((0, 20)), st.sampled_from((0, 20, 40))),
    st.sampled_from((0, 0, 81, 162)),
)
def test_round_score_agrees_with_score_round(
    coinche: bool,
    taker: int,
    contract: int,
    multiplier: int,
    p0: int,
    sweep: str,
    ann: tuple[int, int],
    bel: tuple[int, int],
    pending: int,
) -> None:
    ann = (ann[0], 0) if ann[0] else (0, ann[1])  # one team scores announcements
    if not coinche:
        contract, multiplier = 0, 1
    winners: tuple[int, ...] = (0, 1, 0, 1, 2, 3, 2, 1)
    points = (p0, 162 - p0)
    card_points = points
    generale = -1
    if sweep == "capot0":
        winners, points, card_points = (0, 2) * 4, (162, 0), (250, 0)
    elif sweep == "capot1":
        winners, points, card_points = (1, 3) * 4, (0, 162), (0, 250)
    elif sweep == "gen":
        winners, points, card_points, generale = (taker,) * 8, (162, 0), (500, 0), taker
        if taker & 1:
            points, card_points = (0, 162), (0, 500)
    ref = score_round(
        coinche=coinche, taker=taker, contract=contract, multiplier=multiplier,
        trick_points=points, trick_winners=winners, announcements=ann, belote=bel,
        pending=pending,
    )  # fmt: skip
    got = round_score(
        coinche, taker, contract, multiplier, card_points, ann, bel, pending, generale
    )
    assert got == (ref.score[0], ref.score[1], ref.pending)


# -- the careful playout policy ----------------------------------------------------------------

HEARTS = 1


def careful_position(mine: str, seat: int, leader: int, trick: str, taker: int = 0) -> FastState:
    """Hearts trumps, ``seat`` to act holding ``mine`` after the cards of ``trick`` were
    played from ``leader`` on; every other card dealt to the seats in turn."""
    played = [card(t) for t in trick.split()]
    hands = [0, 0, 0, 0]
    hands[seat] = mask_of(card(t) for t in mine.split())
    for i, c in enumerate(played):
        hands[(leader + i) % 4] |= 1 << c
    rest = [c for c in range(32) if not (hands[0] | hands[1] | hands[2] | hands[3]) >> c & 1]
    for s in range(4):
        while hands[s].bit_count() < 8:
            hands[s] |= 1 << rest.pop()
    f = FastState.new(rule_set("classic"), hands, HEARTS, taker, leader)
    for c in played:
        f.play(c)
    assert f.to_act == seat
    return f


def test_the_careful_policy_keeps_its_high_cards_where_the_greedy_one_spends_them() -> None:
    cases = [
        # A defender cashes a plain master, never its master trump...
        ("JH AS 7D 8D 7C 8C 9C TC", 1, 1, "", "AS", "JH"),
        # ... and with no plain master it leads its poorest card.
        ("JH 7S 8S 9S 7D 8D 9D 7C", 1, 1, "", "7S", "JH"),
        # The taker's side cashes its master trump first.
        ("JH AS 7D 8D 7C 8C 9C TC", 0, 0, "", "JH", "JH"),
        # Last to play, it takes with its poorest winner.
        ("AS TS 7D 8D 7C 8C 9C QC", 0, 1, "KS 7S 8S", "TS", "AS"),
        # Only trumps win: its weakest one, not its master jack.
        ("JH 7H 7D 8D 7C 8C 9C QC", 0, 3, "AS", "7H", "JH"),
        # The partner's master trump takes the trick: a rich card that is not a master.
        ("AS KD QD 7C 8C 9C TC 8S", 0, 2, "JH 7H", "TC", "AS"),
        # No master winner: its poorest card rather than a king that may be overtaken.
        ("KS 8S 7D 8D 7C 8C 9C QC", 0, 3, "9S", "8S", "KS"),
    ]
    for mine, seat, leader, trick, careful, greedy in cases:
        f = careful_position(mine, seat, leader, trick)
        assert CARDS[f.careful_card()] == card(careful), (mine, trick)
        assert CARDS[f.greedy_card()] == card(greedy), (mine, trick)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([*sorted(VARIANTS), "three-handed"]), seeds, st.integers(0, 31))
def test_the_careful_policy_plays_legal_cards_and_sees_only_its_hand(
    variant: str, seed: int, at: int
) -> None:
    """Its card is legal, and the same however the cards it cannot see lie among the
    others; played out, it ends the round."""
    rules = VARIANTS.get(variant) or rule_set(variant)
    rng = random.Random(seed)
    s = to_play(rules, rng)
    for _ in range(min(at, rules.seats * 8 - 1)):
        s = s.apply(rng.choice(s.legal_actions()))
    f = FastState.from_state(s) if rules.seats == 4 else FewFastState.few_from_state(s)
    c = f.careful_card()
    assert f.legal_mask() >> c & 1
    seat = f.to_act
    others = [o for o in range(rules.seats) if o != seat]
    pool = [x for o in others for x in range(32) if f.hands[o] >> x & 1]
    rng.shuffle(pool)
    g = f.copy()
    for o in others:
        size = f.hands[o].bit_count()
        g.hands[o] = mask_of(pool[:size])
        del pool[:size]
    assert g.careful_card() == c
    f.play_careful()
    assert f.tricks == f.length and not any(f.hands)
