"""Partial knowledge (a peer's view) and the round audit (RULES.md §10)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from helpers import random_deck

from belote_p2p.game.audit import FaultKind, audit_round, corrected_record
from belote_p2p.game.cards import Card, cards_of
from belote_p2p.game.engine import Claim, IllegalActionError, Phase, State, deal_owners
from belote_p2p.game.rules import CLASSIC, COINCHE, RuleSet


class Table:
    """A full-information state and one seat's partial view, moved in lockstep."""

    def __init__(self, rules: RuleSet, deck: list[Card], viewer: int) -> None:
        self.deck = deck
        self.viewer = viewer
        self.full = State.new_game(rules).deal(deck)
        owners = deal_owners(rules, 0)
        masked = [c if owners[i] in (viewer, -1) else None for i, c in enumerate(deck)]
        self.view = State.new_game(rules).deal(masked)

    def act(self, action: object, claim: Claim | None = None) -> None:
        was_bidding = self.full.phase is not Phase.PLAY
        self.full = self.full.apply(action)  # type: ignore[arg-type]
        self.view = self.view.apply(action, claim)  # type: ignore[arg-type]
        if was_bidding and self.view.phase is Phase.PLAY:
            owners = deal_owners(self.full.rules, 0, self.full.taker)
            mine = {i: self.deck[i] for i in range(21, 32) if owners[i] == self.viewer}
            if self.full.rules.is_coinche:
                mine = {}
            self.view = self.view.reveal(mine)

    def play_card(self, c: Card) -> None:
        seat = self.full.to_act
        claim = self.full.claim_for(c) if seat != self.viewer else None
        self.act(c, claim)


def bid_until_play(t: Table, rng: random.Random) -> None:
    while t.full.phase is not Phase.PLAY:
        if t.full.phase is Phase.DEAL:
            pytest.skip("redeal")
        t.act(rng.choice(t.full.legal_actions()))


@pytest.mark.parametrize("rules", [CLASSIC, COINCHE])
@pytest.mark.parametrize("seed", range(6))
def test_a_peer_view_follows_an_honest_round(rules: RuleSet, seed: int) -> None:
    rng = random.Random(seed)
    t = Table(rules, random_deck(rng), viewer=seed % 4)
    bid_until_play(t, rng)
    assert t.view.hands[t.viewer] == t.full.hands[t.viewer]
    assert t.view.unknown[t.viewer] == 0
    while t.full.phase is Phase.PLAY:
        t.play_card(rng.choice(t.full.legal_actions()))
    assert t.view.scores == t.full.scores
    assert t.view.history[-1].score == t.full.history[-1].score
    report = audit_round(t.view.history[-1], t.deck)
    assert report.clean and report.score == t.full.history[-1].score


def test_the_view_knows_only_own_and_public_cards() -> None:
    rng = random.Random(4)
    t = Table(CLASSIC, random_deck(rng), viewer=1)
    assert t.view.hands[0] | t.view.hands[2] | t.view.hands[3] == 0
    assert t.view.unknown == (5, 0, 5, 5)
    assert t.view.turned == t.deck[20]
    bid_until_play(t, rng)
    while t.full.to_act == 1:
        t.play_card(rng.choice(t.full.legal_actions()))
    # Another seat cannot play a card the viewer holds, nor one already played.
    mine = cards_of(t.view.hands[1])[0]
    with pytest.raises(IllegalActionError, match="cannot hold"):
        t.view.apply(mine)
    if t.view.played:
        with pytest.raises(IllegalActionError, match="already played"):
            t.view.apply(cards_of(t.view.played)[0])
        # Even with a proof of ownership (the deck protocol's), a played card stays played.
        with pytest.raises(IllegalActionError, match="already played"):
            t.view.apply(cards_of(t.view.played)[0], proven=True)


def rounds_at_play(seeds: int) -> Iterator[tuple[Table, random.Random]]:
    """For each seed below ``seeds``, a classic round seen by seat 0 at its first card, and
    the generator that played it so far (a seed whose deal is redealt is left out)."""
    for seed in range(seeds):
        rng = random.Random(seed)
        t = Table(CLASSIC, random_deck(rng), viewer=0)
        try:
            bid_until_play(t, rng)
        except pytest.skip.Exception:
            continue
        yield t, rng


def _injected_revoke(seed: int) -> tuple[Table, int, int] | None:
    """Play a round where a hidden seat revokes undetectably; return where it did."""
    rng = random.Random(seed)
    t = Table(CLASSIC, random_deck(rng), viewer=0)
    while t.full.phase is not Phase.PLAY:
        if t.full.phase is Phase.DEAL:
            return None
        t.act(rng.choice(t.full.legal_actions()))
    while t.full.phase is Phase.PLAY:
        seat = t.full.to_act
        hand = t.full.hands[seat]
        illegal = hand & ~t.full.legal_mask()
        if seat != 0 and illegal:
            c = cards_of(illegal)[0]
            try:
                view = t.view.apply(c, t.full.claim_for(c))
            except IllegalActionError:
                pass  # the peer could prove this one at once: not the case under test
            else:
                return t, seat, len(view.actions) - 1
        t.play_card(rng.choice(t.full.legal_actions()))
    return None


def test_the_audit_finds_an_injected_revoke_and_scores_it() -> None:
    found = 0
    for seed in range(60):
        got = _injected_revoke(seed)
        if got is None:
            continue
        t, seat, index = got
        seat_view = t.view
        c = cards_of(t.full.hands[seat] & ~t.full.legal_mask())[0]
        after = seat_view.apply(c, t.full.claim_for(c))
        report = audit_round(after.round_record(), t.deck)
        assert report.fault is not None
        assert report.fault.kind is FaultKind.ILLEGAL_PLAY
        assert report.fault.seat == seat and report.fault.index == index
        assert report.score is not None
        offenders = seat % 2
        assert report.score.score[offenders] == report.score.belote[offenders]
        found += 1
    assert found >= 10


def test_a_play_that_contradicts_a_shown_void_is_refused_at_once() -> None:
    # Seat 1 failed to follow a suit; a later card of that suit proves the revoke now.
    for t, rng in rounds_at_play(200):
        while t.full.phase is Phase.PLAY:
            void = t.view.voids[t.full.to_act] & ~t.view.played
            seat = t.full.to_act
            if seat != 0 and void & ~t.view.hands[0]:
                c = cards_of(void & ~t.view.hands[0])[0]
                with pytest.raises(IllegalActionError):
                    t.view.apply(c)
                return
            t.play_card(rng.choice(t.full.legal_actions()))
    pytest.fail("no shown void found")


def test_false_belote_claim_is_found_by_the_audit() -> None:
    for t, rng in rounds_at_play(300):
        while t.full.phase is Phase.PLAY:
            seat = t.full.to_act
            trump_kq = [
                c
                for c in cards_of(t.full.legal_mask())
                if c.suit == t.full.trump and c.rank in (5, 6)
            ]
            other_ok = all(
                not t.full.hands[seat] >> (c ^ 3) & 1
                and not t.view.played >> (c ^ 3) & 1
                and not t.view.hands[0] >> (c ^ 3) & 1
                for c in trump_kq
            )
            if seat != 0 and trump_kq and other_ok and t.full.tricks:
                c = trump_kq[0]
                try:
                    view = t.view.apply(c, Claim(belote=True))
                except IllegalActionError:
                    t.play_card(rng.choice(t.full.legal_actions()))
                    continue
                report = audit_round(view.round_record(), t.deck)
                assert report.fault is not None
                assert report.fault.kind is FaultKind.FALSE_BELOTE
                assert report.fault.seat == seat
                return
            t.play_card(rng.choice(t.full.legal_actions()))
    pytest.fail("no chance to claim a false belote")


def test_corrected_record_replaces_the_score() -> None:
    got = next(g for g in map(_injected_revoke, range(60)) if g is not None)
    t, seat, _ = got
    c = cards_of(t.full.hands[seat] & ~t.full.legal_mask())[0]
    view = t.view.apply(c, t.full.claim_for(c))
    record = view.round_record()
    report = audit_round(record, t.deck)
    fixed = corrected_record(record, report)
    assert fixed.score == report.score
    assert report.score is not None
    assert fixed.scores_after == report.score.score


def test_audit_needs_the_whole_deck() -> None:
    rng = random.Random(1)
    s = State.new_game(CLASSIC).deal(random_deck(rng))
    record = s.round_record()
    with pytest.raises(ValueError, match="whole deck"):
        audit_round(record, [None] * 32)  # type: ignore[list-item]
    assert audit_round(record).clean  # nothing played yet: nothing to find
