"""The deck protocol: whole rounds between four in-memory peers, every cheat, the vectors.

Regenerate the committed vector with ``PYTHONPATH=. python tests/test_deck.py --write-vectors``
(only when the protocol changes on purpose: the test compares against the file).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.game.cards import Card
from belote_p2p.game.engine import deal_owners
from belote_p2p.game.rules import CLASSIC, COINCHE, RuleSet
from belote_p2p.protocol import group
from belote_p2p.protocol.deck import (
    CARD_POINTS,
    SEATS,
    TURNED_POSITION,
    BadPoint,
    BadProof,
    BadShuffle,
    Ciphertext,
    CommitmentMismatch,
    DeckError,
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
    UnexpectedMessage,
    WrongOwner,
    decode_message,
    encode_message,
    message_from_wire,
    shuffle_commitment,
    shuffle_masks,
    shuffle_order,
    shuffle_permutation,
)
from belote_p2p.protocol.group import L

TABLE_ID = b"deck-test-table!"
VECTOR = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "deck-classic.json"
SMALL_ORDER = (2**255 - 20).to_bytes(32, "little")


def secret_key(seat: int, tag: bytes = b"") -> bytes:
    digest = hashlib.sha512(b"deck test secret key/" + tag + bytes([seat])).digest()
    return group.scalar_bytes(int.from_bytes(digest, "little") % L)


def shuffle_seed(seat: int, tag: bytes = b"") -> bytes:
    return hashlib.sha256(b"deck test shuffle seed/" + tag + bytes([seat])).digest()


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
        tamper=replace_from(1, KeyMessage, lambda m: dataclasses.replace(m, public_key=SMALL_ORDER))
    )
    with pytest.raises(BadPoint) as err:
        table.deal()
    assert err.value.seat == 1


def test_a_shuffled_deck_with_an_invalid_point_is_refused_by_the_next_shuffler() -> None:
    order = shuffle_order(0)

    def spoil(msg: ShuffleMessage) -> DeckMessage:
        deck = list(msg.deck)
        deck[7] = Ciphertext(deck[7].c1, group.add(deck[7].c2, SMALL_ORDER))
        return dataclasses.replace(msg, deck=tuple(deck))

    table = Table(tamper=replace_from(order[1], ShuffleMessage, spoil))
    with pytest.raises(BadPoint) as err:
        table.deal()
    assert err.value.seat == order[1]


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
    assert isinstance(table.errors[1], BadProof) and table.errors[1].seat == 2
    assert set(table.errors) == {1}


def test_a_share_for_the_wrong_card_is_refused_by_the_owner() -> None:
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
    assert isinstance(table.errors[0], BadProof) and table.errors[0].seat == 3


def test_a_bad_deal_share_of_someone_elses_card_is_caught_at_the_play() -> None:
    # Seat 3 spoils its share of a card of seat 1; seat 1 lets it pass (it colludes),
    # the others catch it when seat 1 plays the card.
    owners = deal_owners(CLASSIC, 0)
    target = next(p for p in range(21) if owners[p] == 1)
    index = [p for p in range(21) if owners[p] != 3].index(target)

    def spoil(msg: DeckMessage, recipient: int) -> DeckMessage:
        if not isinstance(msg, SharesMessage) or msg.seat != 3 or recipient == 1:
            return msg
        shares = list(msg.shares)
        bad = group.add(shares[index].point, group.base_mul(1))
        shares[index] = DecryptionShare(bad, shares[index].proof)
        return dataclasses.replace(msg, shares=tuple(shares))

    table = Table(view=spoil, strict=False)
    table.deal(taker=None)
    assert not table.errors  # only the owner checks a share at the deal
    table.act(1, "play", target)
    table.pump()
    for seat in (0, 2):
        assert isinstance(table.errors[seat], BadProof) and table.errors[seat].seat == 3


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
def test_a_shuffle_that_is_not_its_seeds_is_caught_at_the_audit(kind: str) -> None:
    # The second shuffler duplicates one card over another (so drops one), or swaps two
    # ciphertexts (a permutation other than its seed's): the audit names it.
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
    for error in table.errors.values():  # a repeated card may show in someone's hand
        assert isinstance(error, BadShuffle) and error.seat is None
    table.reveal_all()
    for peer in table.peers:
        if peer.seat == cheater:
            continue
        with pytest.raises(BadShuffle) as err:
            peer.audit()
        assert err.value.seat == cheater


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


def test_messages_round_trip_through_msgpack() -> None:
    kinds = set()
    for msg in messages_of(classic_round()):
        kinds.add(type(msg))
        raw = encode_message(msg)
        assert decode_message(raw, msg.seat) == msg
        assert message_from_wire(msg.to_wire()) == msg
    assert len(kinds) == 5


def test_strict_parsing() -> None:
    msg = next(m for m in messages_of(classic_round()) if isinstance(m, PlayMessage) and m.share)
    wire = msg.to_wire()
    bad: list[object] = [
        [],
        {**wire, "type": "deck.nope"},
        {**wire, "extra": 1},
        {k: v for k, v in wire.items() if k != "share"},
        {**wire, "seat": True},
        {**wire, "seat": 4},
        {**wire, "position": 32},
        {**wire, "share": bytearray(wire["share"])},
        {**wire, "share": wire["share"][:-1]},
    ]
    for data in bad:
        with pytest.raises(MalformedDeckMessage):
            message_from_wire(data)
    with pytest.raises(MalformedDeckMessage) as err:
        message_from_wire(wire, sender=(msg.seat + 1) % 4)
    assert err.value.seat == (msg.seat + 1) % 4
    with pytest.raises(MalformedDeckMessage):
        decode_message(b"\xc1")


# -- replays: corrupted bytes and the vector ----------------------------------------------


def replay(
    events: list[tuple[Any, ...]], observer: int, *, corrupt: tuple[int, int, int] | None = None
) -> DeckPeer:
    """Run one peer through a recorded round: its own actions, the others' messages
    (``events`` hold msgpack bytes); ``corrupt = (event index, byte, delta)``."""
    peer = DeckPeer(
        CLASSIC,
        seat=observer,
        dealer=0,
        table_id=TABLE_ID,
        round_number=1,
        secret_key=secret_key(observer),
        shuffle_seed=shuffle_seed(observer),
    )
    for i, event in enumerate(events):
        kind, seat = event[0], event[1]
        if kind == "message":
            if seat == observer:
                continue
            raw = bytearray(event[2])
            if corrupt is not None and corrupt[0] == i:
                raw[corrupt[1] % len(raw)] = (raw[corrupt[1] % len(raw)] + corrupt[2]) % 256
            peer.receive(decode_message(bytes(raw), seat))
            peer.next_messages()
        elif seat == observer:
            getattr(peer, kind)(*event[2:])
    peer.audit()
    return peer


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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    observer=st.integers(0, 3),
    pick=st.integers(0, 10**6),
    byte=st.integers(0, 10**6),
    delta=st.integers(1, 255),
)
def test_any_corrupted_byte_is_caught_with_a_typed_error(
    observer: int, pick: int, byte: int, delta: int
) -> None:
    events = recorded_events()
    candidates = [i for i, e in enumerate(events) if e[0] == "message" and e[1] != observer]
    index = candidates[pick % len(candidates)]
    sender = events[index][1]
    with pytest.raises(DeckError) as err:
        replay(events, observer, corrupt=(index, byte, delta))
    if isinstance(err.value, MalformedDeckMessage):
        assert err.value.seat == sender


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


def test_an_observer_checks_the_reveals_and_names_a_cheating_shuffler_at_the_audit() -> None:
    events = classic_round().events
    reveal = events[message_index(events, RevealMessage, 2)][2]
    wrong = dataclasses.replace(reveal, seed=shuffle_seed(2, b"other"))
    tampered = [("message", 2, wrong) if e[-1] is reveal else e for e in events]
    with pytest.raises(CommitmentMismatch) as err:
        observe(tampered)
    assert err.value.seat == 2
    # A shuffle that is not its seed's passes every check made on receipt; the audit of
    # every shuffle (the observer has none of its own to skip) names its author.
    cheater = shuffle_order(0)[1]

    def swap(msg: ShuffleMessage) -> DeckMessage:
        deck = list(msg.deck)
        deck[3], deck[30] = deck[30], deck[3]
        return dataclasses.replace(msg, deck=tuple(deck))

    table = Table(tamper=replace_from(cheater, ShuffleMessage, swap), strict=False)
    table.deal(taker=None)
    table.reveal_all()
    observer = observe(table.events)
    assert observer.phase is DeckPhase.AUDITABLE
    with pytest.raises(BadShuffle) as err:
        observer.audit()
    assert err.value.seat == cheater


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
    with pytest.raises(DeckError) as err:
        observe(events).audit()
    if isinstance(err.value, MalformedDeckMessage):
        assert err.value.seat == sender


def build_vector() -> dict[str, Any]:
    table = classic_round()
    deck = audited(table)
    events: list[dict[str, Any]] = []
    for event in table.events:
        kind, seat = event[0], event[1]
        if kind == "message":
            msg = event[2]
            wire = {k: hexed(v) for k, v in msg.to_wire().items()}
            raw = encode_message(msg).hex()
            events.append({"event": "message", "from": seat, "msgpack": raw, "fields": wire})
        else:
            names = {"set_taker": ["taker"], "play": ["position"]}.get(kind, [])
            args = dict(zip(names, event[2:], strict=True))
            events.append({"event": kind, "seat": seat, **args})
    return {
        "description": "A classic round of the deck protocol (protocol/DECK.md) between four "
        "peers with fixed secrets: keys, four shuffles, the deal with the turned card, the "
        "completion for the taker, 32 plays, the reveals. Bytes are hex. 'events' are in "
        "delivery order; a message follows the local action that produced it.",
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


def hexed(value: object) -> object:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [hexed(v) for v in value]
    return value


def vector_text() -> str:
    return json.dumps(build_vector(), indent=1) + "\n"


def test_the_committed_vector_matches_byte_for_byte() -> None:
    assert VECTOR.read_text() == vector_text()


def test_the_committed_vector_replays() -> None:
    data = json.loads(VECTOR.read_text())
    events: list[tuple[Any, ...]] = []
    for e in data["events"]:
        if e["event"] == "message":
            events.append(("message", e["from"], bytes.fromhex(e["msgpack"])))
        else:
            events.append((e["event"], e["seat"], *[e[k] for k in ("taker", "position") if k in e]))
    for observer in range(SEATS):
        peer = replay(events, observer)
        assert [str(c) for c in peer.audit()] == data["deck"]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-vectors"]:
        VECTOR.parent.mkdir(parents=True, exist_ok=True)
        VECTOR.write_text(vector_text())
        print(f"wrote {VECTOR}")
    else:
        print("usage: PYTHONPATH=. python tests/test_deck.py --write-vectors")
