"""The deck protocol: whole rounds between four in-memory peers, every cheat, the vectors.

Every cheat is refused when its message arrives, by every other peer and by an observer
alike, naming its sender; the audit names what only the revealed seeds show.

Regenerate the committed vector with ``PYTHONPATH=. python tests/test_deck.py --write-vectors``
(only when the protocol changes on purpose: the test compares against the file).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]  # ships no type information
import pytest
from helpers import TABLE_ID, secret_key, shuffle_seed, vector_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import deal_owners
from belote_p2p.game.rules import CLASSIC, COINCHE, RuleSet
from belote_p2p.protocol import group, wire
from belote_p2p.protocol.deck import (
    CARD_POINTS,
    SEATS,
    TRIVIAL_DECK,
    TURNED_POSITION,
    BadPoint,
    BadProof,
    BadShuffle,
    Ciphertext,
    CommitmentMismatch,
    DeckError,
    DeckInvariantError,
    DeckMessage,
    DeckObserver,
    DeckPeer,
    DeckPhase,
    DeckUsageError,
    DecryptionShare,
    KeyMessage,
    MalformedDeckMessage,
    PlayMessage,
    RevealMessage,
    SharesMessage,
    ShuffleMessage,
    SplitMessage,
    UnexpectedMessage,
    WrongOwner,
    decode_message,
    encode_message,
    message_from_wire,
    shuffle_commitment,
    shuffle_masks,
    shuffle_order,
    shuffle_permutation,
    shuffle_proof_context,
)
from belote_p2p.protocol.group import L
from belote_p2p.protocol.shuffle import prove_shuffle

VECTOR = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "deck-classic.json"
NOT_A_POINT = (2).to_bytes(32, "little")  # no ristretto255 element encodes as s = 2


Tamper = Callable[[DeckMessage], DeckMessage]


class Table:
    """Four peers and a FIFO broadcast; records every event for replays and vectors."""

    def __init__(
        self,
        rules: RuleSet = CLASSIC,
        *,
        dealer: int = 0,
        round_number: int = 1,
        tag: bytes = b"",
        tamper: Tamper | None = None,
        drop: Callable[[DeckMessage], bool] | None = None,
        view: Callable[[DeckMessage, int], DeckMessage] | None = None,
        strict: bool = True,
    ) -> None:
        self.rules = rules
        self.peers = [
            DeckPeer(
                rules,
                seat=s,
                dealer=dealer,
                table_id=TABLE_ID,
                round_number=round_number,
                secret_key=secret_key(s, tag),
                shuffle_seed=shuffle_seed(s, tag),
            )
            for s in range(SEATS)
        ]
        self.tamper = tamper
        self.drop = drop
        self.view = view
        self.dropped: list[DeckMessage] = []
        self.strict = strict
        self.errors: dict[int, DeckError] = {}
        self.queue: deque[DeckMessage] = deque()
        self.events: list[tuple[Any, ...]] = []

    def send(self, msg: DeckMessage) -> None:
        if self.tamper is not None:
            msg = self.tamper(msg)
        if self.drop is not None and self.drop(msg):
            self.dropped.append(msg)
            return
        self.events.append(("message", msg.seat, msg))
        self.queue.append(msg)

    def act(self, seat: int, action: str, *args: int) -> None:
        self.events.append((action, seat, *args))
        self.send(getattr(self.peers[seat], action)(*args))

    def pump(self) -> None:
        while self.queue:
            msg = self.queue.popleft()
            for peer in self.peers:
                if peer.seat == msg.seat:
                    continue
                try:
                    peer.receive(msg if self.view is None else self.view(msg, peer.seat))
                except DeckError as exc:
                    if self.strict:
                        raise
                    self.errors.setdefault(peer.seat, exc)
                finally:
                    for out in peer.next_messages():
                        self.send(out)

    def deal(self, taker: int | None = 1) -> None:
        for s in range(SEATS):
            self.act(s, "start")
        self.pump()
        if not self.rules.is_coinche and taker is not None:
            for s in range(SEATS):
                self.act(s, "set_taker", taker)
            self.pump()

    def play_all(self) -> None:
        owners = [self.peers[0].owner_of(p) for p in range(32)]
        order = sorted(range(32), key=lambda p: (p % 8, p))  # any order: rules are not ours
        for p in order:
            owner = owners[p]
            assert owner is not None
            self.act(owner, "play", p)
            self.pump()

    def reveal_all(self) -> None:
        for s in range(SEATS):
            self.act(s, "reveal")
        self.pump()


def run_round(rules: RuleSet, *, dealer: int = 0, taker: int = 1) -> Table:
    table = Table(rules, dealer=dealer)
    table.deal(taker)
    table.play_all()
    table.reveal_all()
    return table


def audited(table: Table) -> tuple[Card, ...]:
    decks = {peer.audit() for peer in table.peers}
    assert len(decks) == 1
    return decks.pop()


# -- whole rounds ------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "dealer", "taker"), [(CLASSIC, 0, 1), (COINCHE, 2, None)])
def test_a_whole_round_deals_plays_and_audits(rules: RuleSet, dealer: int, taker: int) -> None:
    table = Table(rules, dealer=dealer)
    table.deal(taker)
    owners = deal_owners(rules, dealer, taker)
    for peer in table.peers:
        assert peer.phase is DeckPhase.PLAY and peer.waiting_for() == frozenset()
        view = peer.known_cards()
        mine = {p for p, o in enumerate(owners) if o == peer.seat}
        public = set() if rules.is_coinche else {TURNED_POSITION}
        assert {p for p, c in enumerate(view) if c is not None} == mine | public
    table.play_all()
    for peer in table.peers:
        assert None not in peer.known_cards()
    table.reveal_all()
    deck = audited(table)
    assert sorted(deck) == list(range(32))
    for peer in table.peers:
        assert peer.known_cards() == deck
        hand = peer.hand()
        expected = {p: deck[p] for p, o in enumerate(owners) if o == peer.seat}
        if taker == peer.seat:
            expected[TURNED_POSITION] = deck[TURNED_POSITION]
        assert hand == expected
        assert peer.positions_of(peer.seat) == tuple(sorted(expected))


def test_before_any_play_a_peer_sees_its_cards_and_the_turned_card_only() -> None:
    table = Table(CLASSIC, dealer=3)
    table.deal(taker=None)
    owners = deal_owners(CLASSIC, 3)
    turned = {peer.turned_card() for peer in table.peers}
    assert len(turned) == 1 and None not in turned
    for peer in table.peers:
        assert peer.phase is DeckPhase.BIDDING
        assert len(peer.hand()) == 5
        assert set(peer.hand()) == {p for p, o in enumerate(owners) if o == peer.seat}
        assert peer.card_at(21) is None
    table.reveal_all()  # everybody passed: the round ends without a completion
    deck = audited(table)
    assert all(deck[p] == c for peer in table.peers for p, c in peer.hand().items())


def test_the_deal_accepts_messages_out_of_order() -> None:
    reference = Table(CLASSIC, dealer=1)
    reference.deal(taker=None)
    table = Table(CLASSIC, dealer=1)  # shuffle order 2, 3, 0, 1
    for s in range(SEATS):
        table.act(s, "start")
    laggard = table.peers[0]
    held: list[DeckMessage] = []
    while table.queue:  # seat 0 hears nothing for a while
        msg = table.queue.popleft()
        for peer in table.peers[1:]:
            if peer.seat != msg.seat:
                peer.receive(msg)
                for out in peer.next_messages():
                    table.send(out)
        if msg.seat != 0:
            held.append(msg)
    assert laggard.waiting_for() == {1, 2, 3}
    assert all(peer.waiting_for() == {0} for peer in table.peers[1:])
    for msg in reversed(held):  # then everything at once, last first
        laggard.receive(msg)
    for out in laggard.next_messages():
        table.send(out)
    table.pump()
    assert [p.hand() for p in table.peers] == [p.hand() for p in reference.peers]


def test_waiting_for_names_the_seat_that_owes_a_message() -> None:
    silent: set[tuple[type, int]] = {(ShuffleMessage, 1)}
    table = Table(CLASSIC, dealer=2, drop=lambda m: (type(m), m.seat) in silent)
    for s in range(SEATS):
        table.act(s, "start")
    assert all(p.waiting_for() == {q for q in range(4) if q != p.seat} for p in table.peers)
    table.pump()  # shuffle order 3, 0, 1, 2: seat 1 does not shuffle
    for peer in table.peers:
        if peer.seat != 1:
            assert peer.phase is DeckPhase.SHUFFLE and peer.waiting_for() == {1}
    silent.clear()
    silent.add((SharesMessage, 3))
    table.queue.extend(m for m in table.dropped if isinstance(m, ShuffleMessage))
    table.pump()
    for peer in table.peers:
        if peer.seat != 3:
            assert peer.phase is DeckPhase.DEAL and peer.waiting_for() == {3}
    silent.clear()
    table.queue.extend(m for m in table.dropped if isinstance(m, SharesMessage))
    table.pump()
    assert all(p.phase is DeckPhase.BIDDING and p.waiting_for() == set() for p in table.peers)
    table.act(0, "reveal")
    table.pump()
    assert table.peers[1].phase is DeckPhase.REVEAL
    assert table.peers[1].waiting_for() == {2, 3}
    assert table.peers[0].waiting_for() == {1, 2, 3}


# -- cheats ------------------------------------------------------------------------------


def replace_from(seat: int, kind: type, change: Callable[[Any], DeckMessage]) -> Tamper:
    """Alter the first message of ``kind`` that ``seat`` sends."""
    done: list[bool] = []

    def tamper(msg: DeckMessage) -> DeckMessage:
        if msg.seat == seat and isinstance(msg, kind) and not done:
            done.append(True)
            return change(msg)
        return msg

    return tamper


def test_a_key_proof_from_another_round_is_refused() -> None:
    other = DeckPeer(
        CLASSIC, seat=2, dealer=0, table_id=TABLE_ID, round_number=2, secret_key=secret_key(2)
    )
    replayed = other.start()
    table = Table(CLASSIC, round_number=1, tamper=replace_from(2, KeyMessage, lambda m: replayed))
    with pytest.raises(BadProof) as err:
        table.deal()
    assert err.value.seat == 2


def test_a_key_that_is_not_a_valid_point_is_refused() -> None:
    table = Table(
        tamper=replace_from(1, KeyMessage, lambda m: dataclasses.replace(m, public_key=NOT_A_POINT))
    )
    with pytest.raises(BadPoint) as err:
        table.deal()
    assert err.value.seat == 1


def refusals(table: Table, culprit: int) -> set[int]:
    """The seats that refused a message of ``culprit`` (each with the same kind of error)."""
    kinds = {type(e) for e in table.errors.values()}
    assert len(kinds) <= 1, table.errors
    assert all(e.seat == culprit for e in table.errors.values()), table.errors
    return set(table.errors)


def observer_refusal(events: list[tuple[Any, ...]], dealer: int = 0) -> tuple[int, DeckError]:
    """Feed an observer the recorded round; the index of the event it refused, and why."""
    observer = new_observer(CLASSIC, dealer)
    for i, event in enumerate(events):
        try:
            if event[0] == "message":
                observer.receive(event[2])
            elif event[0] == "set_taker" and observer.taker is None:
                observer.set_taker(event[2])
        except DeckError as exc:
            return i, exc
    raise AssertionError("the observer refused nothing")


def assert_refused_by_all(
    table: Table, culprit: int, kind: type[DeckError], message: type, dealer: int = 0
) -> None:
    """Every other peer and an observer refused ``culprit``'s first ``message`` with
    ``kind``, when it arrived."""
    assert refusals(table, culprit) == {s for s in range(SEATS) if s != culprit}
    assert all(isinstance(e, kind) for e in table.errors.values()), table.errors
    index, error = observer_refusal(table.events, dealer)
    assert isinstance(error, kind) and error.seat == culprit
    assert index == message_index(table.events, message, culprit)


def test_a_shuffled_deck_with_an_invalid_point_is_refused_by_everyone() -> None:
    order = shuffle_order(0)

    def spoil(msg: ShuffleMessage) -> DeckMessage:
        deck = list(msg.deck)
        deck[7] = Ciphertext(deck[7].c1, NOT_A_POINT)
        return dataclasses.replace(msg, deck=tuple(deck))

    table = Table(tamper=replace_from(order[1], ShuffleMessage, spoil), strict=False)
    table.deal(taker=None)
    assert_refused_by_all(table, order[1], BadPoint, ShuffleMessage)
    assert "output ciphertext 7" in table.errors[order[0]].reason


# -- a shuffler that substitutes the deck -------------------------------------------------

NINES_AND_JACKS = [suit * 8 + rank for rank in (2, 4) for suit in range(4)]


def shuffle_input(peer: DeckPeer) -> tuple[Ciphertext, ...]:
    """The deck ``peer`` shuffled (read when its own shuffle has just been made)."""
    k = peer.shuffle_order.index(peer.seat)
    return peer._decks[k - 1] if k else TRIVIAL_DECK


def adopt(peer: DeckPeer, msg: ShuffleMessage) -> ShuffleMessage:
    """Make the cheater's own view hold the shuffle it sends instead of the honest one."""
    k = peer.shuffle_order.index(peer.seat)
    peer._decks[k] = msg.deck
    peer._proofs[k] = msg.proof
    return msg


def encrypt(peer: DeckPeer, card: int, r: int) -> Ciphertext:
    """A fresh encryption of ``card`` under the joint key, with mask ``r``."""
    joint = peer.joint_key
    assert joint is not None
    return Ciphertext(group.base_mul(r), group.add(CARD_POINTS[card], group.mul(r, joint)))


def stacked_cards(seat: int, dealer: int = 0, taker: int = 1) -> list[int]:
    """Card values by deck position that deal ``seat`` the four nines and four jacks."""
    owners = deal_owners(CLASSIC, dealer, taker)
    mine = [p for p in range(32) if owners[p] == seat or (p == TURNED_POSITION and seat == taker)]
    others = iter(c for c in range(32) if c not in NINES_AND_JACKS)
    wanted = iter(NINES_AND_JACKS)
    return [next(wanted) if p in mine else next(others) for p in range(32)]


def substitute(
    holder: dict[str, DeckPeer], cards: list[int], proof: str
) -> Callable[[ShuffleMessage], DeckMessage]:
    """Replace a shuffle by fresh encryptions of ``cards`` (values by position), with
    ``proof``: the honest one kept, one made for the new deck with the honest witness, or
    (when ``cards`` are the 32 cards) a valid proof that it shuffles the trivial deck."""

    def change(msg: ShuffleMessage) -> DeckMessage:
        peer = holder["peer"]
        masks = [group.hash_to_scalar(b"cheat", group.u8(j)) for j in range(32)]
        fake = tuple(encrypt(peer, c, r) for c, r in zip(cards, masks, strict=True))
        joint = peer.joint_key
        assert joint is not None
        ctx = shuffle_proof_context(TABLE_ID, 1, msg.seat, msg.commitment)
        seed = shuffle_seed(msg.seat)
        perm = shuffle_permutation(TABLE_ID, 1, msg.seat, seed)
        honest_masks = shuffle_masks(TABLE_ID, 1, msg.seat, seed)
        if proof == "kept":
            made = msg.proof
        elif proof == "honest witness":
            made = prove_shuffle(joint, shuffle_input(peer), fake, perm, honest_masks, ctx, seed)
        else:
            made = prove_shuffle(joint, TRIVIAL_DECK, fake, cards, masks, ctx, seed)
        return adopt(peer, ShuffleMessage(msg.seat, msg.commitment, fake, made))

    return change


@pytest.mark.parametrize("proof", ["kept", "honest witness", "of the trivial deck"])
@pytest.mark.parametrize("position", ["last", "middle"])
def test_a_substituted_deck_is_refused_at_the_shuffle(position: str, proof: str) -> None:
    """The attack the proof of shuffle is for: a shuffler publishes fresh encryptions of the
    32 cards in an order it chose (the last one dealing itself the four nines and four
    jacks). Every other peer and an observer refuse that shuffle message, naming it."""
    order = shuffle_order(0)
    cheater = order[-1] if position == "last" else order[2]
    holder: dict[str, DeckPeer] = {}
    change = substitute(holder, stacked_cards(cheater), proof)
    table = Table(tamper=replace_from(cheater, ShuffleMessage, change), strict=False)
    holder["peer"] = table.peers[cheater]
    table.deal(taker=None)
    assert_refused_by_all(table, cheater, BadShuffle, ShuffleMessage)
    assert all(
        len(p._decks) == order.index(cheater) for s, p in enumerate(table.peers) if s != cheater
    )


@pytest.mark.parametrize("proof", ["kept", "honest witness"])
def test_a_first_shuffler_that_substitutes_cards_is_refused(proof: str) -> None:
    """The first shuffler's input is the trivial deck: replacing it by a deck of other
    cards (the nines gone, the jacks twice) is no shuffle, whatever proof it sends."""
    cheater = shuffle_order(0)[0]
    cards = [c if c not in NINES_AND_JACKS[:4] else c + 2 for c in range(32)]
    holder: dict[str, DeckPeer] = {}
    table = Table(
        tamper=replace_from(cheater, ShuffleMessage, substitute(holder, cards, proof)),
        strict=False,
    )
    holder["peer"] = table.peers[cheater]
    table.deal(taker=None)
    assert_refused_by_all(table, cheater, BadShuffle, ShuffleMessage)


def test_a_first_shuffler_that_picks_its_own_order_is_named_by_the_audit() -> None:
    """What the proof cannot refuse: the first shuffler re-encrypting the cards in an order
    of its choosing *is* a shuffle of the trivial deck (harmless: three proven shuffles
    follow). Its seed does not derive that order, and the audit says so."""
    cheater = shuffle_order(0)[0]
    holder: dict[str, DeckPeer] = {}
    change = substitute(holder, stacked_cards(cheater), "of the trivial deck")
    table = Table(tamper=replace_from(cheater, ShuffleMessage, change))
    holder["peer"] = table.peers[cheater]
    table.deal(taker=1)
    assert sorted(table.peers[cheater].hand().values()) != sorted(NINES_AND_JACKS)
    table.reveal_all()
    for peer in table.peers:
        if peer.seat != cheater:
            with pytest.raises(BadShuffle) as err:
                peer.audit()
            assert err.value.seat == cheater and "does not match the seed" in err.value.reason


def test_a_replayed_share_proof_of_another_position_is_refused() -> None:
    # Seat 2 swaps its shares of seat 1's first two positions: each share and proof is
    # genuine, for the other position.
    owners = deal_owners(CLASSIC, 0)
    seat1 = [p for p in range(21) if owners[p] == 1]
    positions_of_2 = [p for p in range(21) if owners[p] != 2]
    i, j = positions_of_2.index(seat1[0]), positions_of_2.index(seat1[1])

    def swap(msg: SharesMessage) -> DeckMessage:
        shares = list(msg.shares)
        shares[i], shares[j] = shares[j], shares[i]
        return dataclasses.replace(msg, shares=tuple(shares))

    table = Table(tamper=replace_from(2, SharesMessage, swap), strict=False)
    table.deal(taker=None)
    assert_refused_by_all(table, 2, BadProof, SharesMessage)


def test_a_share_for_the_wrong_card_is_refused_by_everyone() -> None:
    # Seat 3 publishes, for a card of seat 0, x3·c1 of another position with a proof made
    # for this position (the only one it could make, and it does not verify).
    owners = deal_owners(CLASSIC, 0)
    target = next(p for p in range(21) if owners[p] == 0)
    positions_of_3 = [p for p in range(21) if owners[p] != 3]
    index = positions_of_3.index(target)
    cheat: dict[str, DeckPeer] = {}

    def wrong_card(msg: SharesMessage) -> DeckMessage:
        peer = cheat["peer"]
        final = peer._decks[-1]
        x = group.parse_scalar(secret_key(3))
        share = group.mul(x, final[target + 1].c1)
        ctx = (TABLE_ID, group.u32(1), group.u8(3), group.u8(target))
        proof = group.prove_share(x, peer.public_key, final[target].c1, share, ctx)
        shares = list(msg.shares)
        shares[index] = DecryptionShare(share, proof.to_bytes())
        return dataclasses.replace(msg, shares=tuple(shares))

    table = Table(tamper=replace_from(3, SharesMessage, wrong_card), strict=False)
    cheat["peer"] = table.peers[3]
    table.deal(taker=None)
    assert_refused_by_all(table, 3, BadProof, SharesMessage)


@pytest.mark.parametrize("owner", [1, TURNED_POSITION])
def test_a_wrong_share_aimed_at_another_seats_card_is_refused_at_once(owner: int) -> None:
    """Seat 3 spoils its deal share of a card of seat 1 (or of the turned card): seats 0, 1
    and 2 and an observer refuse its shares message when it arrives, naming seat 3; no card
    is played or opened first."""
    owners = deal_owners(CLASSIC, 0)
    positions = [p for p in range(21) if owners[p] != 3]
    target = (
        TURNED_POSITION
        if owner == TURNED_POSITION
        else next(p for p in positions if owners[p] == owner)
    )
    spoil = replace_from(3, SharesMessage, lambda m: spoil_share(m, positions.index(target)))
    table = Table(tamper=spoil, strict=False)
    table.deal(taker=None)
    assert_refused_by_all(table, 3, BadProof, SharesMessage)
    assert all(f"position {target} " in e.reason for e in table.errors.values())
    assert all(p.phase is DeckPhase.DEAL for p in table.peers if p.seat != 3)


def test_a_share_aimed_at_a_colluding_owner_is_refused_by_the_others() -> None:
    """The owner of the card (seat 1) colludes and sees an honest copy: seats 0 and 2 still
    refuse the wrong share at the deal, naming seat 3."""
    owners = deal_owners(CLASSIC, 0)
    positions = [p for p in range(21) if owners[p] != 3]
    target = next(p for p in positions if owners[p] == 1)

    def view(msg: DeckMessage, recipient: int) -> DeckMessage:
        if isinstance(msg, SharesMessage) and msg.seat == 3 and recipient != 1:
            return spoil_share(msg, positions.index(target))
        return msg

    table = Table(view=view, strict=False)
    table.deal(taker=None)
    assert refusals(table, 3) == {0, 2}
    assert all(isinstance(e, BadProof) for e in table.errors.values())


def honest_deck(dealer: int = 0, taker: int = 1) -> tuple[Card, ...]:
    """The cards of the deterministic table's round, by position."""
    table = Table(CLASSIC, dealer=dealer)
    table.deal(taker)
    table.reveal_all()
    return table.peers[0].audit()


@pytest.mark.parametrize("shifters", [(2,), (0,), (0, 2)])
def test_partners_shifting_their_shares_are_refused_at_the_deal(shifters: tuple[int, ...]) -> None:
    """Seats 0 and 2 swap a card: seat 2 shifts its share of seat 0's card p (its ace) by
    the difference of two card points so that p opens as seat 2's card q, and seat 0 shifts
    its share of q the other way. Each shift is a share that is not ``x·c1``: refused at the
    deal by the other peers and an observer, naming the shifting seat."""
    deck = honest_deck()
    owners = deal_owners(CLASSIC, 0)
    p = next(i for i in range(20) if owners[i] == 0)
    q = next(i for i in range(20) if owners[i] == 2)
    points = {i: CARD_POINTS[deck[i]] for i in (p, q)}

    def shift(msg: DeckMessage) -> DeckMessage:
        if not isinstance(msg, SharesMessage) or msg.seat not in shifters or msg.step != 0:
            return msg
        mine, theirs = (q, p) if msg.seat == 0 else (p, q)  # position shifted, card it shows
        index = [i for i in range(21) if owners[i] != msg.seat].index(mine)
        shares = list(msg.shares)
        moved = group.add(shares[index].point, group.sub(points[mine], points[theirs]))
        shares[index] = DecryptionShare(moved, shares[index].proof)
        return dataclasses.replace(msg, shares=tuple(shares))

    table = Table(tamper=shift, strict=False)
    table.deal(taker=None)
    honest = {1, 3}
    assert honest <= set(table.errors)
    verdicts = {(type(table.errors[s]), table.errors[s].seat) for s in honest}
    assert len(verdicts) == 1  # the honest peers agree
    ((kind, named),) = verdicts
    first = min(shifters, key=lambda s: message_index(table.events, SharesMessage, s))
    assert kind is BadProof and named == first
    _, error = observer_refusal(table.events)
    assert isinstance(error, BadProof) and error.seat == first
    assert all(p.phase is DeckPhase.DEAL for p in table.peers if p.seat not in shifters)


def test_a_forged_play_share_is_refused() -> None:
    owners = deal_owners(CLASSIC, 0, 1)
    target = next(p for p in range(32) if owners[p] == 2)

    def forge(msg: PlayMessage) -> DeckMessage:
        assert msg.share is not None
        # Claim a different card: shift the share by the difference of two card points.
        shifted = group.add(msg.share.point, group.sub(CARD_POINTS[0], CARD_POINTS[1]))
        return dataclasses.replace(msg, share=DecryptionShare(shifted, msg.share.proof))

    table = Table(tamper=replace_from(2, PlayMessage, forge))
    table.deal(taker=1)
    with pytest.raises(BadProof) as err:
        table.act(2, "play", target)
        table.pump()
    assert err.value.seat == 2


def test_a_card_that_cannot_open_is_an_internal_error_not_a_peers_fault() -> None:
    """With every shuffle and share proven, a card that does not open means this program
    broke (here: it lost a proven share): DeckInvariantError, a LocalProtocolError that
    blames nobody."""
    table = Table()
    table.deal(taker=1)
    peer = table.peers[0]
    position = table.peers[2].positions_of(2)[0]
    peer._shares[position][1] = group.add(peer._shares[position][1], group.base_mul(1))
    table.act(2, "play", position)
    with pytest.raises(DeckInvariantError) as err:
        table.pump()
    assert isinstance(err.value, LocalProtocolError)
    assert not isinstance(err.value, RemoteProtocolError)
    assert peer.card_at(position) is None and position not in peer.played()


def test_playing_a_position_one_was_not_dealt_is_refused() -> None:
    table = Table()
    table.deal(taker=1)
    owners = deal_owners(CLASSIC, 0, 1)
    theirs = next(p for p in range(32) if owners[p] == 3)
    cheater = table.peers[2]
    with pytest.raises(DeckUsageError):
        cheater.play(theirs)
    # The cheater builds the message by hand, with a genuine share of its own key.
    c1 = cheater._decks[-1][theirs].c1
    x = group.parse_scalar(secret_key(2))
    share = group.mul(x, c1)
    ctx = (TABLE_ID, group.u32(1), group.u8(2), group.u8(theirs))
    proof = group.prove_share(x, cheater.public_key, c1, share, ctx).to_bytes()
    forged = PlayMessage(2, theirs, DecryptionShare(share, proof))
    for seat in (0, 1, 3):
        with pytest.raises(WrongOwner) as err:
            table.peers[seat].receive(forged)
        assert err.value.seat == 2
    # The turned card is the taker's alone.
    with pytest.raises(WrongOwner):
        table.peers[0].receive(PlayMessage(2, TURNED_POSITION, None))


def test_a_second_play_of_a_position_is_refused() -> None:
    table = Table()
    table.deal(taker=1)
    p = table.peers[2].positions_of(2)[0]
    table.act(2, "play", p)
    msg = table.queue[-1]
    table.pump()
    with pytest.raises(UnexpectedMessage) as err:
        table.peers[0].receive(msg)
    assert err.value.seat == 2


@pytest.mark.parametrize("field", ["seed", "secret_key"])
def test_a_reveal_that_does_not_match_its_commitment_is_refused(field: str) -> None:
    other = secret_key(3, b"other") if field == "secret_key" else shuffle_seed(3, b"other")
    table = Table(
        tamper=replace_from(3, RevealMessage, lambda m: dataclasses.replace(m, **{field: other}))
    )
    table.deal(taker=1)
    with pytest.raises(CommitmentMismatch) as err:
        table.reveal_all()
    assert err.value.seat == 3


@pytest.mark.parametrize("kind", ["duplicate", "swap"])
def test_a_tampered_shuffle_is_refused_at_once(kind: str) -> None:
    # The second shuffler duplicates one card over another (so drops one), or swaps two
    # ciphertexts after proving: the proof no longer holds, every other peer says so.
    order = shuffle_order(0)
    cheater = order[1]
    holder: dict[str, DeckPeer] = {}

    def cheat(msg: ShuffleMessage) -> DeckMessage:
        deck = list(msg.deck)
        if kind == "swap":
            deck[3], deck[30] = deck[30], deck[3]
        else:
            joint = holder["peer"].joint_key
            assert joint is not None
            r = 12345
            src = deck[30]
            deck[3] = Ciphertext(
                group.add(src.c1, group.base_mul(r)), group.add(src.c2, group.mul(r, joint))
            )
        return dataclasses.replace(msg, deck=tuple(deck))

    table = Table(tamper=replace_from(cheater, ShuffleMessage, cheat), strict=False)
    holder["peer"] = table.peers[cheater]
    table.deal(taker=None)
    assert_refused_by_all(table, cheater, BadShuffle, ShuffleMessage)


def proven_other_shuffle(holder: dict[str, DeckPeer], nonces_only: bool = False) -> Tamper:
    """The holder's shuffle made, and validly proven, from another seed than the one it
    committed to; or (``nonces_only``) the seed's own deck with a proof of other nonces."""

    def change(msg: ShuffleMessage) -> DeckMessage:
        peer = holder["peer"]
        joint = peer.joint_key
        assert joint is not None
        inputs = shuffle_input(peer)
        seed = shuffle_seed(msg.seat, b"other")
        ctx = shuffle_proof_context(TABLE_ID, 1, msg.seat, msg.commitment)
        if nonces_only:
            real = shuffle_seed(msg.seat)
            perm = shuffle_permutation(TABLE_ID, 1, msg.seat, real)
            masks = shuffle_masks(TABLE_ID, 1, msg.seat, real)
            proof = prove_shuffle(joint, inputs, msg.deck, perm, masks, ctx, seed)
            return adopt(peer, dataclasses.replace(msg, proof=proof))
        perm = shuffle_permutation(TABLE_ID, 1, msg.seat, seed)
        masks = shuffle_masks(TABLE_ID, 1, msg.seat, seed)
        deck = []
        for j, r in enumerate(masks):
            ct = inputs[perm[j]]
            c1 = (
                group.add(ct.c1, group.base_mul(r))
                if ct.c1 != group.IDENTITY
                else group.base_mul(r)
            )
            deck.append(Ciphertext(c1, group.add(ct.c2, group.mul(r, joint))))
        proof = prove_shuffle(joint, inputs, deck, perm, masks, ctx, seed)
        return adopt(peer, dataclasses.replace(msg, deck=tuple(deck), proof=proof))

    return lambda msg: change(msg) if isinstance(msg, ShuffleMessage) else msg


@pytest.mark.parametrize("nonces_only", [False, True])
def test_a_proven_shuffle_that_is_not_its_seeds_is_named_by_the_audit(nonces_only: bool) -> None:
    # The second shuffler proves a permutation of another seed (or its seed's deck with
    # other nonces): every check on receipt passes, the audit of the revealed seed names it.
    cheater = shuffle_order(0)[1]
    holder: dict[str, DeckPeer] = {}
    tamper = replace_from(cheater, ShuffleMessage, proven_other_shuffle(holder, nonces_only))
    table = Table(tamper=tamper)
    holder["peer"] = table.peers[cheater]
    table.deal(taker=None)
    table.reveal_all()
    reason = "proof of shuffle is not the one" if nonces_only else "does not match the seed"
    for peer in table.peers:
        if peer.seat == cheater:
            continue
        with pytest.raises(BadShuffle) as err:
            peer.audit()
        assert err.value.seat == cheater and reason in err.value.reason
    observer = observe(table.events)
    with pytest.raises(BadShuffle) as err:
        observer.audit()
    assert err.value.seat == cheater and reason in err.value.reason


def test_the_audit_checks_a_shuffle_proof_whose_check_was_put_off_first() -> None:
    """The audit recomputes no deck: a proof that is the seed's pins its deck only once it
    is verified. So a check put off (overlap, DECK.md §4) and never made is made by the
    audit. Here seat 0, the last shuffler, gets seat 3's shuffle with a spoilt proof (the
    deck is the honest one, which its own shuffle builds on, so the others go on), puts off
    the check and never does that work: its audit makes the check and names seat 3."""
    cheater = shuffle_order(0)[2]

    def spoilt(msg: DeckMessage, seat: int) -> DeckMessage:
        if seat != 0 or msg.seat != cheater or not isinstance(msg, ShuffleMessage):
            return msg
        proof = dataclasses.replace(msg.proof, s1=(msg.proof.s1 + 1) % L)
        return dataclasses.replace(msg, proof=proof)

    table = Table(view=spoilt)
    table.peers[0] = DeckPeer(
        CLASSIC,
        seat=0,
        dealer=0,
        table_id=TABLE_ID,
        round_number=1,
        secret_key=secret_key(0),
        shuffle_seed=shuffle_seed(0),
        overlap=True,
    )
    table.deal(taker=None)
    assert table.peers[0].has_work and table.peers[0].phase is DeckPhase.SHUFFLE
    table.reveal_all()
    with pytest.raises(BadShuffle) as err:
        table.peers[0].audit()
    assert err.value.seat == cheater and "does not verify" in err.value.reason
    assert len({peer.audit() for peer in table.peers[1:]}) == 1


def test_duplicate_and_misplaced_messages_are_refused() -> None:
    table = Table()
    table.deal(taker=None)
    key = next(m for m in messages_of(table) if isinstance(m, KeyMessage) and m.seat == 1)
    with pytest.raises(UnexpectedMessage):
        table.peers[0].receive(key)
    coinche_step = SharesMessage(1, 1, ())
    coinche = Table(COINCHE)
    coinche.act(0, "start")
    with pytest.raises(UnexpectedMessage):
        coinche.peers[0].receive(coinche_step)


def test_local_misuse_is_a_usage_error() -> None:
    peer = Table().peers[0]
    with pytest.raises(DeckUsageError):
        peer.play(0)
    with pytest.raises(DeckUsageError):
        peer.reveal()
    with pytest.raises(DeckUsageError):
        DeckPeer(CLASSIC, seat=4, dealer=0, table_id=TABLE_ID, round_number=1)
    with pytest.raises(DeckUsageError):
        DeckPeer(CLASSIC, seat=0, dealer=0, table_id=b"t", round_number=1, secret_key=bytes(32))


# -- wire --------------------------------------------------------------------------------


@functools.cache
def classic_round() -> Table:
    return run_round(CLASSIC, dealer=0, taker=1)


def messages_of(table: Table) -> list[DeckMessage]:
    return [e[2] for e in table.events if e[0] == "message"]


def test_messages_round_trip_through_canonical_msgpack() -> None:
    kinds = set()
    for msg in messages_of(classic_round()):
        kinds.add(type(msg))
        raw = encode_message(msg)
        assert raw == wire.encode(msg.to_wire())
        assert decode_message(raw, msg.seat) == msg
        assert message_from_wire(msg.to_wire(), msg.seat) == msg
    assert len(kinds) == 6  # key, split, shuffle, shares, play, reveal


def test_strict_parsing() -> None:
    msg = next(m for m in messages_of(classic_round()) if isinstance(m, PlayMessage) and m.share)
    data = msg.to_wire()
    bad: list[object] = [
        [],
        {**data, "type": "deck.nope"},
        {**data, "extra": 1},
        {k: v for k, v in data.items() if k != "share"},
        {**data, "seat": True},
        {**data, "seat": 4},
        {**data, "position": 32},
        {**data, "share": bytearray(data["share"])},
        {**data, "share": data["share"][:-1]},
    ]
    for item in bad:
        with pytest.raises(MalformedDeckMessage) as err:
            message_from_wire(item, msg.seat)
        assert err.value.seat == msg.seat
    with pytest.raises(MalformedDeckMessage) as err:
        message_from_wire(data, sender=(msg.seat + 1) % 4)
    assert err.value.seat == (msg.seat + 1) % 4
    with pytest.raises(MalformedDeckMessage):
        decode_message(b"\xc1", 0)
    unsorted = msgpack.packb(dict(reversed(list(data.items()))), use_bin_type=True)
    with pytest.raises(MalformedDeckMessage) as err:  # valid msgpack, not canonical
        decode_message(unsorted, msg.seat)
    assert err.value.seat == msg.seat
    with pytest.raises(DeckUsageError):
        message_from_wire(data, None)  # type: ignore[arg-type]


def test_a_shuffle_proof_is_parsed_strictly() -> None:
    msg = next(m for m in messages_of(classic_round()) if isinstance(m, ShuffleMessage))
    data = msg.to_wire()
    proof = data["proof"]
    for item in (
        {k: v for k, v in data.items() if k != "proof"},
        {**data, "proof": None},
        {**data, "proof": [proof]},
        {**data, "proof": {**proof, "s1": group.scalar_bytes(L)}},
        {**data, "proof": {**proof, "challenge": bytes(32)}},
        {**data, "proof": {**proof, "chain": proof["chain"][:-1]}},
        {**data, "proof": {k: v[:24] if isinstance(v, list) else v for k, v in proof.items()}},
        {**data, "proof": {**proof, "extra": b""}},
    ):
        with pytest.raises(MalformedDeckMessage) as err:
            message_from_wire(item, msg.seat)
        assert err.value.seat == msg.seat


# -- replays: corrupted bytes and the vector ----------------------------------------------


def new_peer(seat: int) -> DeckPeer:
    """The deterministic table's peer at ``seat``, before anything happened."""
    return DeckPeer(
        CLASSIC,
        seat=seat,
        dealer=0,
        table_id=TABLE_ID,
        round_number=1,
        secret_key=secret_key(seat),
        shuffle_seed=shuffle_seed(seat),
    )


def replay_event(peer: DeckPeer, event: tuple[Any, ...], corrupt: tuple[int, int] | None) -> None:
    """One recorded event for ``peer``: another seat's message (msgpack bytes, one byte
    changed by ``corrupt = (byte, delta)``) or its own action."""
    kind, seat = event[0], event[1]
    if kind == "message":
        if seat == peer.seat:
            return
        raw = bytearray(event[2])
        if corrupt is not None:
            raw[corrupt[0] % len(raw)] = (raw[corrupt[0] % len(raw)] + corrupt[1]) % 256
        peer.receive(decode_message(bytes(raw), seat))
        peer.next_messages()
    elif seat == peer.seat:
        getattr(peer, kind)(*event[2:])


def replay(
    events: list[tuple[Any, ...]], observer: int, *, corrupt: tuple[int, int, int] | None = None
) -> DeckPeer:
    """Run one peer through a recorded round: its own actions, the others' messages
    (``events`` hold msgpack bytes); ``corrupt = (event index, byte, delta)``. A corrupted
    replay of the recorded round starts from a copy of the honest peer just before it."""
    start = 0
    peer = new_peer(observer)
    if corrupt is not None and events is recorded_events():
        start = corrupt[0]
        peer = copy.deepcopy(honest_replay(observer)[start])
    for i in range(start, len(events)):
        changed = corrupt[1:] if corrupt is not None and corrupt[0] == i else None
        replay_event(peer, events[i], changed)
    peer.audit()
    return peer


@functools.cache
def honest_replay(observer: int) -> list[DeckPeer]:
    """The peer at ``observer`` before each recorded event (copies)."""
    peer = new_peer(observer)
    states = []
    for event in recorded_events():
        states.append(copy.deepcopy(peer))
        replay_event(peer, event, None)
    return states


@functools.cache
def recorded_events() -> list[tuple[Any, ...]]:
    return [
        (e[0], e[1], encode_message(e[2])) if e[0] == "message" else e
        for e in classic_round().events
    ]


def test_a_replayed_recording_audits_for_every_observer() -> None:
    deck = audited(classic_round())
    for observer in range(SEATS):
        assert replay(recorded_events(), observer).audit() == deck


def corrupted_replay_names_the_sender(
    observer: int, pick: int, byte: int, delta: int, kinds: tuple[type, ...]
) -> None:
    """Replay the recorded round for ``observer`` with one byte of another seat's message of
    ``kinds`` changed: the peer refuses it, naming that seat."""
    sent = classic_round().events
    candidates = [
        i
        for i, e in enumerate(sent)
        if e[0] == "message" and e[1] != observer and isinstance(e[2], kinds)
    ]
    index = candidates[pick % len(candidates)]
    if only_another_holders_piece(sent[index][2], observer, byte, delta):
        # Only that piece's holder can see it (and shows everybody, test_deck_dummy.py).
        replay(recorded_events(), observer, corrupt=(index, byte, delta))
        return
    with pytest.raises(DeckError) as err:
        replay(recorded_events(), observer, corrupt=(index, byte, delta))
    assert err.value.seat == sent[index][1]


def only_another_holders_piece(
    msg: DeckMessage, observer: int | None, byte: int, delta: int
) -> bool:
    """The changed byte falls in the ephemeral point or the encrypted piece of a split's
    piece for another seat than ``observer`` and leaves it well formed: only that piece's
    holder can see it."""
    if not isinstance(msg, SplitMessage):
        return False
    raw = bytearray(encode_message(msg))
    raw[byte % len(raw)] = (raw[byte % len(raw)] + delta) % 256
    try:
        changed = decode_message(bytes(raw), msg.seat)
    except DeckError:
        return False
    assert isinstance(changed, SplitMessage)
    holders = [s for s in range(SEATS) if s != msg.seat]
    return changed != msg and all(
        a == b
        or (
            a.commitment == b.commitment
            and group.is_valid_point(b.ephemeral)
            and int.from_bytes(b.encrypted, "little") < L
            and h != observer
        )
        for h, a, b in zip(holders, msg.pieces, changed.pieces, strict=True)
    )


corruptions = given(
    observer=st.integers(0, 3),
    pick=st.integers(0, 10**6),
    byte=st.integers(0, 10**6),
    delta=st.integers(1, 255),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@corruptions
def test_any_corrupted_byte_is_refused_naming_its_sender(
    observer: int, pick: int, byte: int, delta: int
) -> None:
    corrupted_replay_names_the_sender(observer, pick, byte, delta, (DeckMessage,))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@corruptions
def test_a_corrupted_shuffle_or_shares_message_is_refused_naming_its_sender(
    observer: int, pick: int, byte: int, delta: int
) -> None:
    """The messages that carry proofs: one byte changed anywhere (the deck, the proof, a
    share, the framing) and the peer refuses the message, naming the seat that sent it."""
    kinds = (ShuffleMessage, SharesMessage)
    corrupted_replay_names_the_sender(observer, pick, byte, delta, kinds)


# -- observers ---------------------------------------------------------------------------


def new_observer(rules: RuleSet = CLASSIC, dealer: int = 0) -> DeckObserver:
    return DeckObserver(rules, dealer=dealer, table_id=TABLE_ID, round_number=1)


def observe(
    events: list[tuple[Any, ...]], rules: RuleSet = CLASSIC, dealer: int = 0
) -> DeckObserver:
    """Feed an observer every message of a recorded round (``DeckMessage`` objects or
    msgpack bytes), telling it the taker when the first seat learns it."""
    observer = new_observer(rules, dealer)
    for event in events:
        if event[0] == "message":
            msg = event[2]
            observer.receive(decode_message(msg, event[1]) if isinstance(msg, bytes) else msg)
        elif event[0] == "set_taker" and observer.taker is None:
            observer.set_taker(event[2])
    return observer


@functools.cache
def coinche_round() -> Table:
    return run_round(COINCHE, dealer=2)


@pytest.mark.parametrize(("rules", "dealer"), [(CLASSIC, 0), (COINCHE, 2)])
def test_an_observer_checks_a_whole_round_and_audits_it(rules: RuleSet, dealer: int) -> None:
    table = classic_round() if rules is CLASSIC else coinche_round()
    observer = new_observer(rules, dealer)
    assert observer.seat is None and observer.phase is DeckPhase.KEYS
    assert observer.waiting_for() == {0, 1, 2, 3}
    turned = set() if rules.is_coinche else {TURNED_POSITION}
    before_plays = DeckPhase.PLAY if rules.is_coinche else DeckPhase.BIDDING
    phases = []
    for event in table.events:
        if event[0] == "message":
            msg = event[2]
            if isinstance(msg, RevealMessage) and observer.phase is DeckPhase.PLAY:
                # Before the reveal it knows the turned card and the cards played, no more.
                known = {p for p, c in enumerate(observer.known_cards()) if c is not None}
                assert known == turned | set(observer.played()) and len(known) == 32
            observer.receive(msg)
            assert observer.next_messages() == []
        elif event[0] == "set_taker" and observer.taker is None:
            assert observer.phase is before_plays and observer.waiting_for() == frozenset()
            known = {p for p, c in enumerate(observer.known_cards()) if c is not None}
            assert known == turned
            observer.set_taker(event[2])
        elif event[0] == "play" and not observer.played():
            assert observer.phase is DeckPhase.PLAY
            assert {p for p, c in enumerate(observer.known_cards()) if c is not None} == turned
        if not phases or phases[-1] is not observer.phase:
            phases.append(observer.phase)
    expected = [DeckPhase.KEYS, DeckPhase.SHUFFLE, DeckPhase.DEAL, before_plays]
    if not rules.is_coinche:
        expected += [DeckPhase.COMPLETION, DeckPhase.PLAY]
    assert phases == [*expected, DeckPhase.REVEAL, DeckPhase.AUDITABLE]
    assert observer.waiting_for() == frozenset()
    deck = audited(table)
    assert observer.audit() == deck
    assert observer.known_cards() == deck and observer.played() == table.peers[0].played()
    owners = deal_owners(rules, dealer, None if rules.is_coinche else 1)
    for seat in range(SEATS):
        mine = {p for p, o in enumerate(owners) if o == seat}
        if seat == observer.taker:
            mine.add(TURNED_POSITION)
        assert observer.positions_of(seat) == tuple(sorted(mine))
        assert {observer.owner_of(p) for p in mine} == {seat}


def test_an_observer_audits_a_round_everybody_passed() -> None:
    table = Table(CLASSIC, dealer=3)
    table.deal(taker=None)
    table.reveal_all()
    observer = observe(table.events, CLASSIC, 3)
    assert observer.taker is None and observer.turned_card() is not None
    assert observer.known_cards() == tuple(
        observer.turned_card() if p == TURNED_POSITION else None for p in range(32)
    )
    assert observer.audit() == audited(table)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order=st.randoms(use_true_random=False))
def test_an_observer_accepts_any_interleaving(order: Any) -> None:
    # Each sender's messages in order, the senders interleaved at random; the taker is told
    # as soon as the four shuffles are in, before or after any deal share.
    queues = [[m for m in messages_of(classic_round()) if m.seat == s] for s in range(SEATS)]
    observer = new_observer()
    while any(queues):
        queue = order.choice([q for q in queues if q])
        observer.receive(queue.pop(0))
        if observer.taker is None and observer.phase not in (DeckPhase.KEYS, DeckPhase.SHUFFLE):
            observer.set_taker(1)
    assert observer.phase is DeckPhase.AUDITABLE
    assert observer.audit() == audited(classic_round())


def test_an_observer_is_told_the_taker_once_and_in_classic_only() -> None:
    observer = new_observer()
    with pytest.raises(DeckUsageError):
        observer.set_taker(1)  # before the deal
    with pytest.raises(DeckUsageError):
        new_observer(COINCHE).set_taker(1)
    with pytest.raises(DeckUsageError):
        observer.audit()
    with pytest.raises(DeckUsageError):
        DeckObserver(CLASSIC, dealer=4, table_id=TABLE_ID, round_number=1)
    observer = observe(classic_round().events)
    with pytest.raises(DeckUsageError):
        observer.set_taker(2)


def message_index(
    events: list[tuple[Any, ...]], kind: type, seat: int | None = None, step: int = 0
) -> int:
    """The index of the first recorded message of ``kind`` (from ``seat``; shares of
    ``step``)."""
    return next(
        i
        for i, e in enumerate(events)
        if e[0] == "message"
        and isinstance(e[2], kind)
        and seat in (None, e[1])
        and (not isinstance(e[2], SharesMessage) or e[2].step == step)
    )


def spoil_share(msg: SharesMessage, index: int) -> SharesMessage:
    shares = list(msg.shares)
    bad = group.add(shares[index].point, group.base_mul(1))
    shares[index] = DecryptionShare(bad, shares[index].proof)
    return dataclasses.replace(msg, shares=tuple(shares))


@pytest.mark.parametrize("sender", range(SEATS))
def test_an_observer_checks_every_deal_share_of_every_seat(sender: int) -> None:
    # A spoiled share of a card of each other seat (which only that owner checks at the
    # deal, so a colluding owner would let it pass) and of the turned card.
    owners = deal_owners(CLASSIC, 0)
    events = classic_round().events
    index = message_index(events, SharesMessage, sender)
    msg = events[index][2]
    positions = [p for p in range(TURNED_POSITION + 1) if owners[p] != sender]
    targets = [next(p for p in positions if owners[p] == o) for o in range(SEATS) if o != sender]
    for target in [*targets, TURNED_POSITION]:
        spoiled = [*events[:index], ("message", sender, spoil_share(msg, positions.index(target)))]
        with pytest.raises(BadProof) as err:
            observe(spoiled)
        assert err.value.seat == sender and f"position {target} " in err.value.reason


def test_an_observer_checks_completion_shares_and_plays() -> None:
    events = classic_round().events
    index = message_index(events, SharesMessage, 3, step=1)
    spoiled = [*events[:index], ("message", 3, spoil_share(events[index][2], 0))]
    with pytest.raises(BadProof) as err:
        observe(spoiled)
    assert err.value.seat == 3
    index = message_index(events, PlayMessage)
    play = events[index][2]
    forged = dataclasses.replace(
        play,
        share=DecryptionShare(group.add(play.share.point, group.base_mul(1)), play.share.proof),
    )
    with pytest.raises(BadProof) as err:
        observe([*events[:index], ("message", play.seat, forged)])
    assert err.value.seat == play.seat


def forged_play(observer: DeckObserver, seat: int, position: int) -> PlayMessage:
    """A play of ``position`` by ``seat`` with a genuine share and proof of ``seat``'s key."""
    c1 = observer._decks[-1][position].c1
    x = group.parse_scalar(secret_key(seat))
    share = group.mul(x, c1)
    ctx = (TABLE_ID, group.u32(1), group.u8(seat), group.u8(position))
    proof = group.prove_share(x, group.base_mul(x), c1, share, ctx).to_bytes()
    return PlayMessage(seat, position, DecryptionShare(share, proof))


def test_an_observer_refuses_a_play_at_a_position_the_player_does_not_own() -> None:
    events = classic_round().events
    first_play = next(i for i, e in enumerate(events) if e[0] == "play")
    observer = observe(events[:first_play])
    assert observer.phase is DeckPhase.PLAY
    owners = deal_owners(CLASSIC, 0, 1)
    theirs = next(p for p in range(32) if owners[p] == 3)
    with pytest.raises(WrongOwner) as err:
        observer.receive(forged_play(observer, 2, theirs))
    assert err.value.seat == 2
    with pytest.raises(WrongOwner) as err:
        observer.receive(PlayMessage(0, TURNED_POSITION, None))  # the taker's alone
    assert err.value.seat == 0
    # A play of a completion card before the taker is known is held, then refused.
    before_taker = next(i for i, e in enumerate(events) if e[0] == "set_taker")
    observer = observe(events[:before_taker])
    late = next(p for p in range(TURNED_POSITION + 1, 32) if owners[p] == 3)
    observer.receive(forged_play(observer, 2, late))
    with pytest.raises(WrongOwner) as err:
        observer.set_taker(1)
    assert err.value.seat == 2


def test_an_observer_checks_the_reveals() -> None:
    events = classic_round().events
    reveal = events[message_index(events, RevealMessage, 2)][2]
    wrong = dataclasses.replace(reveal, seed=shuffle_seed(2, b"other"))
    tampered = [("message", 2, wrong) if e[-1] is reveal else e for e in events]
    with pytest.raises(CommitmentMismatch) as err:
        observe(tampered)
    assert err.value.seat == 2


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pick=st.integers(0, 10**6), byte=st.integers(0, 10**6), delta=st.integers(1, 255))
def test_an_observer_catches_any_corrupted_byte(pick: int, byte: int, delta: int) -> None:
    events = list(recorded_events())
    candidates = [i for i, e in enumerate(events) if e[0] == "message"]
    index = candidates[pick % len(candidates)]
    sender = events[index][1]
    raw = bytearray(events[index][2])
    raw[byte % len(raw)] = (raw[byte % len(raw)] + delta) % 256
    events[index] = ("message", sender, bytes(raw))
    msg = classic_round().events[index][2]
    if only_another_holders_piece(msg, None, byte, delta):
        observe(events).audit()  # only the piece's holder sees it (test_deck_dummy.py)
        return
    with pytest.raises(DeckError) as err:
        observe(events).audit()
    assert err.value.seat == sender


def build_vector() -> dict[str, Any]:
    table = classic_round()
    deck = audited(table)
    events = vector_events(table.events)
    return {
        "description": "A classic round of the deck protocol, version 5 (protocol/DECK.md) "
        "between four peers with fixed secrets: keys, four shuffles with their proofs, the "
        "deal with the turned card, the completion for the taker, 32 plays, the reveals. "
        "Bytes are hex. 'events' are in delivery order, for the whole table: a local step "
        "of a seat, or a message delivered to the three other peers, after the step or the "
        "message whose handling produced it; plays go in position order, not in a legal "
        "order of play. 'canonical_msgpack' is the message's canonical encoding "
        "(PROTOCOL.md section 2), 'fields' the same map in JSON (bin as hex, nil as null). "
        "Layout: DECK.md section 12.",
        "domain": group.DOMAIN.decode(),
        "rules": "classic",
        "table_id": TABLE_ID.hex(),
        "round": 1,
        "dealer": 0,
        "taker": 1,
        "shuffle_order": list(shuffle_order(0)),
        "card_points": [p.hex() for p in CARD_POINTS],
        "secrets": [
            {"seat": s, "secret_key": secret_key(s).hex(), "shuffle_seed": shuffle_seed(s).hex()}
            for s in range(SEATS)
        ],
        "derived": [
            {
                "seat": s,
                "public_key": table.peers[s].public_key.hex(),
                "commitment": shuffle_commitment(TABLE_ID, 1, s, shuffle_seed(s)).hex(),
                "permutation": list(shuffle_permutation(TABLE_ID, 1, s, shuffle_seed(s))),
                "masks": [
                    group.scalar_bytes(r).hex()
                    for r in shuffle_masks(TABLE_ID, 1, s, shuffle_seed(s))
                ],
            }
            for s in range(SEATS)
        ],
        "joint_key": (table.peers[0].joint_key or b"").hex(),
        "events": events,
        "deck": [str(c) for c in deck],
        "hands": {
            str(s): [str(deck[p]) for p in table.peers[s].positions_of(s)] for s in range(SEATS)
        },
    }


def vector_text() -> str:
    return json.dumps(build_vector(), indent=1) + "\n"


def test_the_committed_vector_matches_byte_for_byte() -> None:
    assert VECTOR.read_text() == vector_text()


def test_the_committed_vector_replays() -> None:
    data = json.loads(VECTOR.read_text())
    events: list[tuple[Any, ...]] = []
    for e in data["events"]:
        if e["event"] == "message":
            events.append(("message", e["from"], bytes.fromhex(e["canonical_msgpack"])))
        else:
            events.append((e["event"], e["seat"], *[e[k] for k in ("taker", "position") if k in e]))
    for observer in range(SEATS):
        peer = replay(events, observer)
        assert [str(c) for c in peer.audit()] == data["deck"]
    assert [str(c) for c in observe(events).audit()] == data["deck"]
    for e in data["events"]:
        if e["event"] == "message":
            assert wire.decode(bytes.fromhex(e["canonical_msgpack"])) == unhexed(e["fields"])


def unhexed(value: object) -> object:
    """The inverse of :func:`hexed` for a message map (every string but ``type`` is hex)."""
    if isinstance(value, str):
        return value if value.startswith("deck.") else bytes.fromhex(value)
    if isinstance(value, list):
        return [unhexed(v) for v in value]
    if isinstance(value, dict):
        return {k: unhexed(v) for k, v in value.items()}
    return value


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-vectors"]:
        VECTOR.parent.mkdir(parents=True, exist_ok=True)
        VECTOR.write_text(vector_text())
        print(f"wrote {VECTOR}")
    else:
        print("usage: PYTHONPATH=. python tests/test_deck.py --write-vectors")
