"""The dummy's deck: key splitting, the release of a gone seat's cards, public seats.

At four seats every seat splits its round key among the other live seats; when a seat is
gone, the others release its cards from their pieces and its partner plays them. Every
peer and an observer see the same open cards and audit the same deck; a coalition short of
every holder opens nothing; every cheat names its author, never an honest seat.

Regenerate the two vectors (a round with a release, a round with a public seat) with
``PYTHONPATH=. python tests/test_deck_dummy.py --write-vectors``, only when the protocol
changes on purpose: the tests compare against the files.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import TABLE_ID, VECTOR_ARGUMENTS, secret_key, shuffle_seed, vector_events

from belote_p2p.game.cards import Card
from belote_p2p.game.rules import CLASSIC, COINCHE, THREE_HANDED, RuleSet
from belote_p2p.protocol import group
from belote_p2p.protocol.deck import (
    SEATS,
    BadProof,
    BadSplit,
    CommitmentMismatch,
    ComplaintMessage,
    DeckError,
    DeckMessage,
    DeckObserver,
    DeckPeer,
    DeckPhase,
    DeckUsageError,
    DecryptionShare,
    FalseComplaint,
    KeyMessage,
    KeyPiece,
    MalformedDeckMessage,
    PlayMessage,
    ReleaseMessage,
    RevealMessage,
    SplitMessage,
    UnexpectedMessage,
    WrongOwner,
    card_of_point,
    decode_message,
    encode_message,
    partner_of,
)
from belote_p2p.protocol.group import L

OBSERVER = -1
"""The receiver key of the observer in :attr:`Round.errors`."""

Tamper = Callable[[DeckMessage], DeckMessage]


class Round:
    """The live peers of one round, an observer and a FIFO broadcast between them; a seat
    that left receives and sends nothing more."""

    def __init__(
        self,
        rules: RuleSet = CLASSIC,
        *,
        dealer: int = 0,
        round_number: int = 1,
        public: frozenset[int] = frozenset(),
        tamper: Tamper | None = None,
        strict: bool = True,
    ) -> None:
        self.rules = rules
        self.public = public
        self.peers = {
            s: DeckPeer(
                rules,
                seat=s,
                dealer=dealer,
                table_id=TABLE_ID,
                round_number=round_number,
                secret_key=secret_key(s),
                shuffle_seed=shuffle_seed(s),
                public_seats=public,
            )
            for s in range(SEATS)
            if s not in public
        }
        self.observer = DeckObserver(
            rules, dealer=dealer, table_id=TABLE_ID, round_number=round_number, public_seats=public
        )
        self.tamper = tamper
        self.strict = strict
        self.gone: set[int] = set()
        self.errors: dict[int, DeckError] = {}
        self.queue: deque[DeckMessage] = deque()
        self.events: list[tuple[Any, ...]] = []

    @property
    def live(self) -> list[DeckPeer]:
        return [p for s, p in self.peers.items() if s not in self.gone]

    def views(self) -> list[DeckPeer | DeckObserver]:
        return [*self.live, self.observer]

    def send(self, msg: DeckMessage) -> None:
        if self.tamper is not None:
            msg = self.tamper(msg)
        self.events.append(("message", msg.seat, msg))
        self.queue.append(msg)

    def act(self, seat: int, action: str, *args: int) -> Any:
        self.events.append((action, seat, *args))
        out = getattr(self.peers[seat], action)(*args)
        self.send(out)
        self.flush(self.peers[seat])
        return out

    def flush(self, peer: DeckPeer) -> None:
        for out in peer.next_messages():
            self.send(out)

    def pump(self) -> None:
        while self.queue:
            msg = self.queue.popleft()
            for view in self.views():
                if view.seat == msg.seat:
                    continue
                try:
                    view.receive(msg)
                except DeckError as exc:
                    if self.strict:
                        raise
                    self.errors.setdefault(OBSERVER if view.seat is None else view.seat, exc)
                finally:
                    if isinstance(view, DeckPeer):
                        self.flush(view)

    def deal(self) -> None:
        for peer in self.live:
            self.act(peer.seat, "start")
        self.pump()

    def name_taker(self, taker: int) -> None:
        for peer in self.live:
            self.act(peer.seat, "set_taker", taker)
        self.observer.set_taker(taker)
        self.pump()

    def leave(self, seat: int) -> None:
        """``seat`` is gone: every other live seat releases its cards."""
        self.gone.add(seat)
        for peer in self.live:
            self.act(peer.seat, "release", seat)
        self.pump()

    def leave_late(self, seat: int) -> None:
        """``seat`` is gone with no card of the round left to play: nobody releases, every
        view is told (``set_gone``) and awaits its reveal no more."""
        self.gone.add(seat)
        for peer in self.live:
            self.events.append(("set_gone", peer.seat, seat))
            peer.set_gone(seat)
        self.observer.set_gone(seat)

    def play(self, position: int) -> None:
        """The owner plays the card, or its partner if the owner is a dummy."""
        owner = self.observer.owner_of(position)
        assert owner is not None
        if owner in self.gone or owner in self.public:
            self.act(partner_of(owner), "play_for", owner, position)
        else:
            self.act(owner, "play", position)
        self.pump()

    def reveal(self) -> None:
        for peer in self.live:
            self.act(peer.seat, "reveal")
        self.pump()

    def audits(self) -> set[tuple[Card, ...]]:
        return {view.audit() for view in self.views()}

    def messages(self, kind: type[Any]) -> list[Any]:
        """The messages of one type sent so far, in order."""
        return [e[2] for e in self.events if e[0] == "message" and isinstance(e[2], kind)]


ORDER = sorted(range(32), key=lambda p: (p % 8, p))
"""The plays' order (the deck protocol knows no rule of play)."""


def honest_deck(rules: RuleSet, taker: int | None) -> tuple[Card, ...]:
    """The deck the same secrets give when nobody leaves."""
    r = Round(rules)
    r.deal()
    if taker is not None:
        r.name_taker(taker)
    for p in ORDER:
        r.play(p)
    r.reveal()
    (deck,) = r.audits()
    return deck


def assert_same_open_cards(r: Round, seat: int) -> None:
    """Every live peer and the observer see ``seat``'s hand, and the same cards."""
    hands = [view.hand_of(seat) for view in r.views()]
    assert len(r.observer.positions_of(seat)) == len(hands[0])
    assert all(hand == hands[0] for hand in hands)


# -- whole rounds with a release ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "taker", "leaver", "when"),
    [
        (CLASSIC, 1, 1, "bidding"),  # the taker leaves before the completion is dealt
        (CLASSIC, 2, 3, "play"),
        (COINCHE, None, 0, "bidding"),
        (COINCHE, None, 2, "play"),
    ],
)
def test_a_seat_released_mid_round_is_played_open_by_its_partner(
    rules: RuleSet, taker: int | None, leaver: int, when: str
) -> None:
    r = Round(rules)
    r.deal()
    plays = ORDER if when == "bidding" else ORDER[12:]
    if when == "bidding":
        r.leave(leaver)
        assert all(leaver in v.released_seats for v in r.views())
        assert_same_open_cards(r, leaver)
        if taker is not None:
            # Dealt later: the completion's cards of the gone seat open as they are dealt.
            r.name_taker(taker)
    else:
        if taker is not None:
            r.name_taker(taker)
        for p in ORDER[:12]:
            r.play(p)
        r.leave(leaver)
    assert all(v.phase is DeckPhase.PLAY for v in r.views())
    assert all(v.waiting_for() == frozenset() for v in r.views())
    assert_same_open_cards(r, leaver)
    assert len(r.observer.hand_of(leaver)) == 8
    for p in plays:
        r.play(p)
    assert {v.known_cards() for v in r.views()} == {r.observer.known_cards()}
    r.reveal()
    assert all(v.phase is DeckPhase.AUDITABLE for v in r.views())
    assert r.audits() == {honest_deck(rules, taker)}
    assert not r.errors


def test_a_round_with_a_public_seat_deals_its_hand_face_up() -> None:
    r = Round(CLASSIC, public=frozenset({2}))
    r.deal()
    # Nobody waits for the public seat: its shuffle and shares are everybody's own work.
    assert all(v.phase is DeckPhase.BIDDING for v in r.views())
    assert_same_open_cards(r, 2)
    assert len(r.observer.hand_of(2)) == 5
    r.name_taker(2)
    assert_same_open_cards(r, 2)
    assert len(r.observer.hand_of(2)) == 8
    for p in ORDER:
        r.play(p)
    r.reveal()
    (deck,) = r.audits()
    assert sorted(deck) == sorted(honest_deck(CLASSIC, 2))
    # Three live seats split among themselves only.
    splits = r.messages(SplitMessage)
    assert sorted(m.seat for m in splits) == [0, 1, 3]
    assert all(len(m.pieces) == 2 for m in splits)


def test_a_public_seat_round_differs_from_the_first_deal_of_the_round() -> None:
    """Dealt again with a seat public, a round shares no hash with its first deal."""
    first = Round(CLASSIC)
    again = Round(CLASSIC, public=frozenset({1}))
    first.deal()
    again.deal()
    assert first.peers[0].joint_key != again.peers[0].joint_key
    keys = next(m for m in again.messages(KeyMessage) if m.seat == 0)
    with pytest.raises(DeckError) as err:
        first.peers[2].receive(keys)
    assert err.value.seat == 0  # a second key from seat 0: refused (the proof differs too)


def test_a_second_seat_can_leave_a_public_seat_round() -> None:
    r = Round(COINCHE, public=frozenset({1}))
    r.deal()
    r.leave(0)
    assert_same_open_cards(r, 0)
    for p in ORDER:
        r.play(p)
    r.reveal()
    assert len(r.audits()) == 1


def everybody_revealed(rules: RuleSet, taker: int | None) -> tuple[Card, ...]:
    """The deck the same secrets give when every seat reveals after the deal (and, with a
    taker, the completion), no card played: the classic redeal, when none is named."""
    r = Round(rules)
    r.deal()
    if taker is not None:
        r.name_taker(taker)
    r.reveal()
    (deck,) = r.audits()
    return deck


@pytest.mark.parametrize(
    ("rules", "taker"),
    [(CLASSIC, 2), (CLASSIC, None), (COINCHE, None)],
    ids=["classic", "classic-redeal", "coinche"],
)
def test_a_seat_gone_once_its_round_is_over_is_audited_from_the_others_pieces(
    rules: RuleSet, taker: int | None
) -> None:
    """Seat 1 leaves after the round's last card (or after a redeal's four passes), before
    its reveal: nothing is released (no card is left to play), and its key is rebuilt from
    the pieces the three reveals carry; every view audits the same deck."""
    r = Round(rules)
    r.deal()
    if taker is not None:
        r.name_taker(taker)
    redeal = rules is CLASSIC and taker is None
    for p in () if redeal else ORDER:
        r.play(p)
    r.leave_late(1)
    assert all(1 not in v.waiting_for() for v in r.views())
    r.reveal()
    assert all(v.phase is DeckPhase.AUDITABLE for v in r.views())
    assert not r.messages(ReleaseMessage)
    expected = everybody_revealed(rules, taker) if redeal else honest_deck(rules, taker)
    assert r.audits() == {expected}
    assert not r.errors


def test_a_leave_that_races_a_holder_s_reveal_is_audited_all_the_same() -> None:
    """Seat 0 revealed before it knew seat 1 left; seats 2 and 3 knew it with a card still
    to play and released: seat 1's cards are open to none (seat 0 never releases after its
    reveal), nobody waits for seat 1, and the pieces of the three reveals rebuild its key."""
    r = Round(CLASSIC)
    r.deal()
    r.name_taker(2)
    for p in ORDER:
        r.play(p)
    r.act(0, "reveal")
    r.pump()
    r.gone.add(1)
    for seat in (2, 3):
        r.act(seat, "release", 1)
    r.pump()
    with pytest.raises(DeckUsageError):
        r.peers[0].release(1)
    assert all(1 not in v.released_seats for v in r.views())
    for view in (r.peers[0], r.observer):
        view.set_gone(1)
    assert all(v.waiting_for() <= {2, 3} for v in r.views())
    for seat in (2, 3):
        r.act(seat, "reveal")
    r.pump()
    assert all(v.phase is DeckPhase.AUDITABLE for v in r.views())
    assert r.audits() == {honest_deck(CLASSIC, 2)}


def test_set_gone_needs_a_split_key() -> None:
    r = Round(CLASSIC)
    with pytest.raises(DeckUsageError):
        r.observer.set_gone(1)  # no split yet
    r.deal()
    with pytest.raises(DeckUsageError):
        r.peers[0].set_gone(0)
    few = DeckObserver(THREE_HANDED, dealer=0, table_id=TABLE_ID, round_number=1)
    with pytest.raises(DeckUsageError):
        few.set_gone(1)


# -- what a coalition can and cannot do ---------------------------------------------------


def test_a_coalition_of_two_cannot_open_a_card_of_a_seat_still_playing() -> None:
    """Seats 0 and 2 hold pieces of seat 1's and seat 3's keys, and their own keys: with
    all of it, and every share published, they still miss seat 3's piece of seat 1's key."""
    r = Round(CLASSIC)
    r.deal()
    target = 1
    final = r.peers[0]._decks[-1]
    coalition = (0, 2)
    for p in r.peers[0].positions_of(target):
        c1, c2 = final[p].c1, final[p].c2
        # Every published share of the position: 0's, 2's and 3's deal shares.
        point = c2
        for seat in (0, 2, 3):
            point = group.sub(point, r.observer._shares[p][seat])
        # The coalition's pieces of the target's key, and its pieces of seat 3's too.
        for s in coalition:
            point = group.sub(point, group.mul(r.peers[s]._held[target], c1))
        assert card_of_point(point) is None
        for s in coalition:
            point = group.sub(point, group.mul(r.peers[s]._held[3], c1))
            assert card_of_point(point) is None
    # Their releases, sent before the seat is gone, open nothing anywhere.
    for s in coalition:
        r.act(s, "release", target)
    r.pump()
    for view in [r.peers[3], r.observer]:
        assert view.hand_of(target) == {}
        assert target not in view.released_seats
    assert r.peers[target].hand_of(target)  # the seat itself still sees its cards


def test_a_release_before_the_seat_is_gone_is_harmless() -> None:
    """One holder's early release opens nothing, moves no deadline, and the seat goes on
    playing its own cards (the session refuses such a release: PROTOCOL.md)."""
    r = Round(CLASSIC)
    r.deal()
    r.name_taker(0)
    r.act(3, "release", 1)
    r.pump()
    honest = [r.peers[0], r.peers[1], r.peers[2], r.observer]
    assert all(v.waiting_for() == frozenset() for v in honest)
    assert all(v.hand_of(1) == {} for v in [r.peers[0], r.peers[2], r.observer])
    for p in ORDER:
        r.play(p)
    r.reveal()
    assert r.audits() == {honest_deck(CLASSIC, 0)}


# -- cheats -------------------------------------------------------------------------------


def refused_by_all(r: Round, culprit: int) -> None:
    """Every live peer but the culprit, and the observer, named the culprit."""
    honest = {s for s in r.peers if s != culprit and s not in r.gone} | {OBSERVER}
    assert honest <= set(r.errors), r.errors
    assert {r.errors[s].seat for s in honest} == {culprit}


def spoil_piece(seat: int, index: int, field: str) -> Tamper:
    def tamper(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, SplitMessage) and msg.seat == seat:
            pieces = list(msg.pieces)
            piece = pieces[index]
            if field == "commitment":
                other = group.base_mul(12345)
                pieces[index] = dataclasses.replace(piece, commitment=other)
            else:
                ct = (int.from_bytes(piece.encrypted, "little") + 1) % L
                pieces[index] = dataclasses.replace(piece, encrypted=group.scalar_bytes(ct))
            return dataclasses.replace(msg, pieces=tuple(pieces))
        return msg

    return tamper


def test_a_split_whose_commitments_do_not_add_up_names_the_splitter() -> None:
    r = Round(CLASSIC, tamper=spoil_piece(2, 1, "commitment"), strict=False)
    r.deal()
    refused_by_all(r, 2)
    assert all(isinstance(e, BadSplit) for e in r.errors.values())


def test_a_bad_encrypted_piece_is_shown_by_its_holders_complaint() -> None:
    # Seat 1's second piece is for seat 2 (holders 0, 2, 3).
    r = Round(CLASSIC, tamper=spoil_piece(1, 1, "encrypted"), strict=False)
    r.deal()
    complaints = r.messages(ComplaintMessage)
    assert [(m.seat, m.splitter) for m in complaints] == [(2, 1)]
    refused_by_all(r, 1)
    assert all(isinstance(r.errors[s], BadSplit) for s in (0, 2, 3, OBSERVER))


def test_a_false_complaint_names_the_complainer() -> None:
    r = Round(CLASSIC)
    r.deal()
    # Seat 3 complains of seat 0's honest piece, with a true proof of the true point.
    peer = r.peers[3]
    piece = r.peers[3]._splits[0].pieces[2]  # holders of 0's key: 1, 2, 3
    dh = group.mul(peer._x, piece.ephemeral)
    ctx = peer._complaint_ctx(3, 0)
    proof = group.prove_share(peer._x, peer.public_key, piece.ephemeral, dh, ctx).to_bytes()
    complaint = ComplaintMessage(3, 0, dh, proof)
    fresh = copy.deepcopy(r.observer)
    for view in [r.peers[0], r.peers[1], r.peers[2], r.observer]:
        with pytest.raises(FalseComplaint) as err:
            view.receive(complaint)
        assert err.value.seat == 3
    # A complaint whose proof fails names the complainer too, whatever the piece.
    lie = ComplaintMessage(3, 0, group.base_mul(7), proof)
    with pytest.raises(BadProof) as bad:
        fresh.receive(lie)
    assert bad.value.seat == 3


def test_a_bad_release_share_names_its_sender() -> None:
    def tamper(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, ReleaseMessage) and msg.seat == 2 and msg.positions:
            first = msg.shares[0]
            wrong = DecryptionShare(group.base_mul(99), first.proof)
            return dataclasses.replace(msg, shares=(wrong, *msg.shares[1:]))
        return msg

    r = Round(CLASSIC, tamper=tamper, strict=False)
    r.deal()
    r.leave(1)
    refused_by_all(r, 2)
    assert all(isinstance(e, BadProof) for e in r.errors.values())


def test_a_release_share_made_for_another_position_is_refused() -> None:
    def tamper(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, ReleaseMessage) and msg.seat == 0 and len(msg.positions) > 1:
            shares = (msg.shares[1], msg.shares[0], *msg.shares[2:])
            return dataclasses.replace(msg, shares=shares)
        return msg

    r = Round(COINCHE, tamper=tamper, strict=False)
    r.deal()
    r.leave(3)
    refused_by_all(r, 0)


@pytest.mark.parametrize("player", [1, 3])  # the dummy's opponents
def test_a_play_for_a_dummy_from_a_seat_not_its_partner_is_refused(player: int) -> None:
    r = Round(CLASSIC)
    r.deal()
    r.name_taker(1)
    r.leave(2)  # its partner is seat 0
    position = r.observer.positions_of(2)[0]
    with pytest.raises(DeckUsageError):
        r.peers[player].play_for(2, position)
    forged = PlayMessage(player, position, None)
    for view in r.views():
        if view.seat == player:
            continue
        with pytest.raises(WrongOwner) as err:
            view.receive(forged)
        assert err.value.seat == player
    # The partner's play is taken, once.
    r.play(position)
    assert all(position in v.played() for v in r.views())
    with pytest.raises(DeckUsageError):
        r.peers[0].play_for(2, position)


def test_the_partner_s_play_before_its_own_release_is_refused_and_after_it_held() -> None:
    """The partner releases the dummy before it plays a card of it (its own order): a play
    before that can never become valid, and is refused at once (``WrongOwner``), whatever
    the other holders released. After the partner's own release, the play waits until the
    card opens (every holder's release share of its position), then is taken."""
    r = Round(CLASSIC)
    r.deal()
    r.name_taker(1)
    r.gone.add(2)  # seat 2 left; its partner is seat 0
    position = r.observer.positions_of(2)[0]
    early = PlayMessage(0, position, None)
    view = copy.deepcopy(r.observer)
    for holder in (1, 3):
        r.act(holder, "release", 2)
    r.pump()
    with pytest.raises(WrongOwner) as err:
        view.receive(early)  # (a fresh view, which got none of the releases)
    assert err.value.seat == 0
    fresh = copy.deepcopy(r.observer)
    with pytest.raises(WrongOwner):
        fresh.receive(early)  # seats 1 and 3 released it; seat 0 did not yet
    # The partner's release, then its play, to a view that has only that release: held.
    release = r.act(0, "release", 2)
    alone = DeckObserver(CLASSIC, dealer=0, table_id=TABLE_ID, round_number=1)
    for event in r.events:
        if event[0] == "message" and not isinstance(event[2], ReleaseMessage):
            alone.receive(event[2])
    alone.set_taker(1)
    alone.receive(release)
    alone.receive(PlayMessage(0, position, None))
    assert position not in alone.played()
    for msg in r.messages(ReleaseMessage):
        if msg.seat != 0:
            alone.receive(msg)
    assert position in alone.played()


def test_a_release_that_lists_other_positions_than_its_sender_shared_is_refused() -> None:
    """A release lists exactly the positions of the deal steps its sender shared before
    it, less those it released already: one position left out, or a release of nothing
    after the deal shares, is its sender's fault at once (DECK.md §17.4)."""

    def drop_last(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, ReleaseMessage) and msg.seat == 2 and msg.positions:
            return dataclasses.replace(msg, positions=msg.positions[:-1], shares=msg.shares[:-1])
        return msg

    r = Round(CLASSIC, tamper=drop_last, strict=False)
    r.deal()
    r.name_taker(0)
    r.leave(1)
    refused_by_all(r, 2)
    assert all(isinstance(e, MalformedDeckMessage) for e in r.errors.values())
    r = Round(CLASSIC)
    r.deal()
    nothing = ReleaseMessage(2, 1, (), ())
    for view in [r.peers[0], r.peers[3], r.observer]:
        with pytest.raises(MalformedDeckMessage) as err:
            view.receive(nothing)
        assert err.value.seat == 2


def test_the_partner_may_not_play_for_a_seat_that_is_not_a_dummy() -> None:
    r = Round(CLASSIC)
    r.deal()
    position = r.observer.positions_of(1)[0]
    with pytest.raises(DeckUsageError):
        r.peers[3].play_for(1, position)
    with pytest.raises(WrongOwner) as err:
        r.observer.receive(PlayMessage(3, position, None))
    assert err.value.seat == 3


def test_a_reveal_with_a_wrong_piece_names_its_sender() -> None:
    r = Round(COINCHE)
    r.deal()
    r.leave(1)
    for p in ORDER:
        r.play(p)
    reveals = {s: r.peers[s].reveal() for s in (0, 2, 3)}
    assert [g for g, _ in reveals[2].pieces] == [0, 1, 3]
    wrong = ((0, reveals[2].pieces[0][1]), (1, group.scalar_bytes(5)), reveals[2].pieces[2])
    with pytest.raises(CommitmentMismatch) as err:
        copy.deepcopy(r.observer).receive(dataclasses.replace(reveals[2], pieces=wrong))
    assert err.value.seat == 2
    # A reveal carries every piece its sender holds, released seat or not: one that lacks
    # one is refused on receipt (the audit could not rebuild the key of a seat that leaves).
    for pieces in ((), reveals[2].pieces[:2], reveals[2].pieces[1:]):
        with pytest.raises(MalformedDeckMessage) as missing:
            copy.deepcopy(r.observer).receive(dataclasses.replace(reveals[2], pieces=pieces))
        assert missing.value.seat == 2


# -- the API's edges ------------------------------------------------------------------------


def test_release_needs_a_split_key_and_its_shuffle() -> None:
    r = Round(CLASSIC)
    peer = r.peers[0]
    with pytest.raises(DeckUsageError):
        peer.release(1)  # nothing received yet
    r.deal()
    assert peer.can_release(1) and not peer.can_release(0)
    with pytest.raises(DeckUsageError):
        peer.release(0)
    peer.release(1)
    with pytest.raises(DeckUsageError):
        peer.release(1)
    # Three-handed: nobody splits, nobody is released.
    few = DeckPeer(THREE_HANDED, seat=0, dealer=0, table_id=TABLE_ID, round_number=1)
    assert not few.can_release(2)
    with pytest.raises(DeckUsageError):
        DeckPeer(
            THREE_HANDED, seat=0, dealer=0, table_id=TABLE_ID, round_number=1, public_seats={2}
        )


def test_messages_of_a_release_round_trip_and_parse_strictly() -> None:
    r = release_round()
    kinds = set()
    for msg in r.messages(object):
        kinds.add(type(msg))
        assert decode_message(encode_message(msg), msg.seat) == msg
    assert {SplitMessage, ReleaseMessage, RevealMessage} <= kinds
    reveal = r.messages(RevealMessage)[0]
    assert [g for g, _ in reveal.pieces] == [s for s in range(SEATS) if s != reveal.seat]
    split = r.messages(SplitMessage)[0]
    wire_split = split.to_wire()
    for data in (
        {**wire_split, "pieces": []},
        {**wire_split, "pieces": [b"x" * 95]},
        {**wire_split, "extra": 1},
    ):
        with pytest.raises(DeckError):
            SplitMessage.from_wire(data, split.seat)
    wire_reveal = reveal.to_wire()
    for pieces in ([bytes([reveal.seat]) + bytes(32)], [bytes([3]) + bytes(32)] * 2):
        with pytest.raises(DeckError):
            RevealMessage.from_wire({**wire_reveal, "pieces": pieces}, reveal.seat)
    assert KeyPiece.from_bytes(split.pieces[0].to_bytes()) == split.pieces[0]


def test_a_message_from_a_public_seat_is_refused() -> None:
    r = Round(CLASSIC, public=frozenset({3}))
    with pytest.raises(UnexpectedMessage) as err:
        r.observer.receive(PlayMessage(3, 0, None))
    assert err.value.seat == 3
    with pytest.raises(DeckUsageError):
        DeckPeer(CLASSIC, seat=3, dealer=0, table_id=TABLE_ID, round_number=1, public_seats={3})


# -- the vectors ---------------------------------------------------------------------------

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
RELEASE_VECTOR = VECTORS / "deck-release.json"
PUBLIC_VECTOR = VECTORS / "deck-public-seat.json"
LATE_VECTOR = VECTORS / "deck-left-late.json"


def release_round() -> Round:
    """Classic, dealer 0: seat 1 leaves during the bidding, seat 2 takes; seat 3 plays
    seat 1's cards (its completion cards released as they are dealt)."""
    r = Round(CLASSIC)
    r.deal()
    r.leave(1)
    r.name_taker(2)
    for p in ORDER:
        r.play(p)
    r.reveal()
    return r


def public_seat_round() -> Round:
    """Classic, dealer 0, round 2: seat 2 left in an earlier round and is public; seat 1
    takes; seat 0 plays seat 2's cards."""
    r = Round(CLASSIC, round_number=2, public=frozenset({2}))
    r.deal()
    r.name_taker(1)
    for p in ORDER:
        r.play(p)
    r.reveal()
    return r


def left_late_round() -> Round:
    """Classic, dealer 0: seat 2 takes, every card is played, then seat 1 leaves before its
    reveal; nothing is released, and the three reveals' pieces rebuild its key."""
    r = Round(CLASSIC)
    r.deal()
    r.name_taker(2)
    for p in ORDER:
        r.play(p)
    r.leave_late(1)
    r.reveal()
    return r


def build_vector(r: Round, description: str) -> dict[str, Any]:
    (deck,) = r.audits()
    events = vector_events(r.events)
    return {
        "description": description,
        "domain": group.DOMAIN.decode(),
        "rules": r.rules.name,
        "table_id": TABLE_ID.hex(),
        "round": r.observer.round_number,
        "dealer": r.observer.dealer,
        "taker": r.observer.taker,
        "public_seats": sorted(r.public),
        "gone": sorted(r.gone),
        "secrets": [
            {"seat": s, "secret_key": secret_key(s).hex(), "shuffle_seed": shuffle_seed(s).hex()}
            for s in sorted(r.peers)
        ],
        "events": events,
        "deck": [str(c) for c in deck],
        "hands": {str(s): [str(deck[p]) for p in r.observer.positions_of(s)] for s in range(4)},
    }


def vector_texts() -> dict[Path, str]:
    release = build_vector(
        release_round(),
        "A classic round of the deck protocol, version 5 (protocol/DECK.md section 17), "
        "where seat 1 leaves after the deal: seats 0, 2 and 3 release its cards from their "
        "pieces of its key (the completion's with the completion), seat 3 plays them. "
        "Layout: DECK.md section 17.7.",
    )
    public = build_vector(
        public_seat_round(),
        "A classic round of the deck protocol, version 5 (protocol/DECK.md section 17), "
        "with seat 2 public: every participant computes its shuffle and shares from its "
        "public secrets, its hand opens to all at the deal, seat 0 plays it. Layout: "
        "DECK.md section 17.7.",
    )
    late = build_vector(
        left_late_round(),
        "A classic round of the deck protocol, version 5 (protocol/DECK.md section 17.11), "
        "where seat 1 leaves after the last card and before its reveal: nothing is "
        "released, each live seat and the observer are told (set_gone), and the audit "
        "rebuilds seat 1's key from the pieces the three reveals carry. Layout: DECK.md "
        "section 17.7.",
    )
    return {
        RELEASE_VECTOR: json.dumps(release, indent=1) + "\n",
        PUBLIC_VECTOR: json.dumps(public, indent=1) + "\n",
        LATE_VECTOR: json.dumps(late, indent=1) + "\n",
    }


def test_the_committed_vectors_match_byte_for_byte() -> None:
    for path, text in vector_texts().items():
        assert path.read_text() == text, path.name


@pytest.mark.parametrize("path", [RELEASE_VECTOR, PUBLIC_VECTOR, LATE_VECTOR], ids=lambda p: p.stem)
def test_the_committed_vectors_replay_for_every_seat_and_an_observer(path: Path) -> None:
    """Each live seat, fed its own steps and the others' messages in event order, sends
    every one of its messages byte for byte; the gone seat's messages stop at its leaving;
    every audit, an observer's included, gives the deck."""
    data = json.loads(path.read_text())
    public = frozenset(data["public_seats"])
    events = data["events"]
    rules = CLASSIC
    for seat in [s for s in range(4) if s not in public] + [OBSERVER]:
        kwargs = dict(table_id=bytes.fromhex(data["table_id"]), round_number=data["round"])
        view: DeckPeer | DeckObserver
        if seat == OBSERVER:
            view = DeckObserver(rules, dealer=data["dealer"], public_seats=public, **kwargs)
        else:
            view = DeckPeer(
                rules,
                seat=seat,
                dealer=data["dealer"],
                secret_key=secret_key(seat),
                shuffle_seed=shuffle_seed(seat),
                public_seats=public,
                **kwargs,
            )
        made: list[bytes] = []
        expected = [
            bytes.fromhex(e["canonical_msgpack"])
            for e in events
            if e["event"] == "message" and e["from"] == seat
        ]
        told: set[tuple[str, int]] = set()
        for e in events:
            if e["event"] == "message":
                if e["from"] != seat:
                    view.receive(decode_message(bytes.fromhex(e["canonical_msgpack"]), e["from"]))
            elif e["event"] in ("set_taker", "set_gone") and seat == OBSERVER:
                assert isinstance(view, DeckObserver)
                (arg,) = [e[k] for k in VECTOR_ARGUMENTS[e["event"]]]
                if (e["event"], arg) not in told:  # at its first event
                    getattr(view, e["event"])(arg)
                told.add((e["event"], arg))
            elif e["seat"] == seat:
                args = [e[k] for k in VECTOR_ARGUMENTS.get(e["event"], ())]
                out = getattr(view, e["event"])(*args)
                if out is not None:  # set_gone sends nothing
                    made.append(encode_message(out))
            if isinstance(view, DeckPeer):
                made.extend(encode_message(m) for m in view.next_messages())
        if seat in data["gone"]:
            assert made == expected[: len(made)]
        else:
            assert made == expected
            assert [str(c) for c in view.audit()] == data["deck"]
        for g in data["gone"] + data["public_seats"]:
            if seat not in data["gone"]:
                assert [str(c) for c in view.hand_of(g).values()] == data["hands"][str(g)]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-vectors"]:
        for path, text in vector_texts().items():
            path.write_text(text)
            print(f"wrote {path}")
    else:
        print("usage: PYTHONPATH=. python tests/test_deck_dummy.py --write-vectors")
