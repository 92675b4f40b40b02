"""The deck protocol among three and two peers: 24- and 32-card decks, the two-handed
face-up deal and face-down cards opened only when the engine turns them up.

Every cheat is refused by every honest peer and by an observer alike, naming its sender;
an honest peer is never named.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import deck_peers, vector_events

from belote_p2p.game.cards import CARDS, Card, Rank
from belote_p2p.game.engine import TURNED, deal_owners, public_positions
from belote_p2p.game.rules import CLASSIC, RuleSet, rule_set
from belote_p2p.protocol import group
from belote_p2p.protocol.deck import (
    BadProof,
    BadShuffle,
    DeckError,
    DeckMessage,
    DeckObserver,
    DeckPeer,
    DeckPhase,
    DeckUsageError,
    DecryptionShare,
    MalformedDeckMessage,
    OpenMessage,
    PlayMessage,
    SharesMessage,
    ShuffleMessage,
    UnexpectedMessage,
    deck_cards,
    decode_message,
    encode_message,
    message_from_wire,
    shuffle_order,
    step_positions,
    turned_position,
)
from belote_p2p.protocol.group import L

TABLE_ID = b"few-deck-table!!"
THREE = rule_set("three-handed")
TWO = rule_set("two-handed")
Tamper = Callable[[DeckMessage], DeckMessage]


def secret_key(seat: int) -> bytes:
    digest = hashlib.sha512(b"few deck test secret key/" + bytes([seat])).digest()
    return group.scalar_bytes(int.from_bytes(digest, "little") % L)


def shuffle_seed(seat: int) -> bytes:
    return hashlib.sha256(b"few deck test shuffle seed/" + bytes([seat])).digest()


class Table:
    """``rules.seats`` peers, an observer and a FIFO broadcast; every message is kept."""

    def __init__(self, rules: RuleSet, *, dealer: int = 0, tamper: Tamper | None = None) -> None:
        self.rules = rules
        self.seats = rules.seats
        self.dealer = dealer
        self.peers = deck_peers(
            rules, dealer=dealer, key=secret_key, seed=shuffle_seed, table_id=TABLE_ID
        )
        self.observer = DeckObserver(rules, dealer=dealer, table_id=TABLE_ID, round_number=1)
        self.tamper = tamper
        self.queue: deque[DeckMessage] = deque()
        self.sent: list[DeckMessage] = []
        self.events: list[tuple[Any, ...]] = []
        """Local steps ``(name, seat, *args)`` and ``("message", seat, msg)``, in order."""
        self.errors: dict[int | None, DeckError] = {}

    def send(self, msg: DeckMessage) -> None:
        if self.tamper is not None:
            msg = self.tamper(msg)
        self.events.append(("message", msg.seat, msg))
        self.sent.append(msg)
        self.queue.append(msg)

    def pump(self) -> None:
        while self.queue:
            msg = self.queue.popleft()
            for view in (*self.peers, self.observer):
                if view.seat == msg.seat or view.seat in self.errors:
                    continue
                try:
                    view.receive(msg)
                except DeckError as exc:
                    self.errors[view.seat] = exc
                finally:
                    for out in view.next_messages():
                        self.send(out)

    def act(self, seat: int, step: str, *args: Any) -> None:
        self.events.append((step, seat, *args))
        self.send(getattr(self.peers[seat], step)(*args))

    def deal(self) -> None:
        for peer in self.peers:
            self.act(peer.seat, "start")
        self.pump()

    def complete(self, taker: int) -> None:
        for peer in self.peers:
            self.act(peer.seat, "set_taker", taker)
        self.observer.set_taker(taker)
        self.pump()

    def open(self, positions: list[int]) -> None:
        for peer in self.peers:
            self.act(peer.seat, "open", positions)
            self.pump()
        self.observer.open(positions)

    def play(self, position: int) -> None:
        owner = self.peers[0].owner_of(position)
        assert owner is not None
        self.act(owner, "play", position)
        self.pump()

    def reveal_all(self) -> None:
        for peer in self.peers:
            self.act(peer.seat, "reveal")
        self.pump()

    def audits(self) -> tuple[Card, ...]:
        decks = {view.audit() for view in (*self.peers, self.observer)}
        assert len(decks) == 1
        return decks.pop()


def face_down(dealer: int) -> list[int]:
    public = public_positions(TWO, dealer)
    return [p for p in range(32) if p not in public]


# -- layouts -------------------------------------------------------------------------------


def test_the_layouts_follow_the_rule_sets() -> None:
    assert deck_cards(THREE) == tuple(c for c in CARDS if c.rank not in (Rank.SEVEN, Rank.EIGHT))
    assert len(deck_cards(THREE)) == 24 and deck_cards(TWO) == CARDS
    assert turned_position(THREE) == 15 and turned_position(CLASSIC) == 20
    assert turned_position(TWO) is None
    assert step_positions(THREE, 0) == tuple(range(16))
    assert step_positions(THREE, 1) == tuple(range(16, 24))
    for dealer in (0, 1):
        assert step_positions(TWO, 0, dealer) == tuple(sorted(public_positions(TWO, dealer)))
        assert len(step_positions(TWO, 0, dealer)) == 16 and step_positions(TWO, 1) == ()
    assert shuffle_order(2, 3) == (0, 1, 2) and shuffle_order(0, 2) == (1, 0)


# -- three-handed --------------------------------------------------------------------------


@pytest.mark.parametrize(("dealer", "taker"), [(0, 1), (2, 2)])
def test_three_peers_deal_play_and_audit_a_24_card_round(dealer: int, taker: int) -> None:
    table = Table(THREE, dealer=dealer)
    table.deal()
    for peer in table.peers:
        assert peer.phase is DeckPhase.BIDDING
        known = {p for p, c in enumerate(peer.known_cards()) if c is not None}
        assert known == set(peer.positions_of(peer.seat)) | {15}
        assert len(peer.positions_of(peer.seat)) == 5
    assert {p for p, c in enumerate(table.observer.known_cards()) if c} == {15}
    table.complete(taker)
    assert not table.errors
    owners = list(deal_owners(THREE, dealer, taker))
    assert len(owners) == 24 and owners[15] == TURNED
    owners[15] = taker
    for peer in table.peers:
        assert peer.phase is DeckPhase.PLAY
        assert len(peer.hand()) == 8
        assert set(peer.hand()) == {p for p in range(24) if owners[p] == peer.seat}
    for p in sorted(range(24), key=lambda p: (p % 8, p)):
        table.play(p)
    assert not table.errors
    assert all(v.known_cards() == table.peers[0].known_cards() for v in table.peers)
    table.reveal_all()
    deck = table.audits()
    assert sorted(deck) == sorted(deck_cards(THREE))
    assert table.observer.known_cards() == deck
    # Three shuffles, one of 24 cards each.
    shuffles = [m for m in table.sent if isinstance(m, ShuffleMessage)]
    assert [m.seat for m in shuffles] == list(shuffle_order(dealer, 3))
    assert all(len(m.deck) == 24 and m.proof.size == 24 for m in shuffles)


def spoil_share(seat: int, position: int, rules: RuleSet) -> Tamper:
    """``seat`` publishes, for ``position``, the share of another position (a valid point
    with a proof that does not fit)."""

    def tamper(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, SharesMessage) and msg.seat == seat and msg.step == 0:
            positions = [p for p in step_positions(rules, 0) if p not in owned(rules, seat)]
            i = positions.index(position)
            shares = list(msg.shares)
            shares[i] = DecryptionShare(shares[(i + 1) % len(shares)].point, shares[i].proof)
            return SharesMessage(msg.seat, msg.step, tuple(shares))
        return msg

    return tamper


def owned(rules: RuleSet, seat: int) -> set[int]:
    return {p for p, o in enumerate(deal_owners(rules, 0)) if o == seat}


@pytest.mark.parametrize("position", [15, 0])  # the turned card; a card of seat 1
def test_a_forged_deal_share_among_three_is_named_by_everyone(position: int) -> None:
    cheater = 2
    table = Table(THREE, tamper=spoil_share(cheater, position, THREE))
    table.deal()
    assert set(table.errors) == {0, 1, None}
    for error in table.errors.values():
        assert isinstance(error, BadProof) and error.seat == cheater
        assert f"position {position}" in error.reason


def test_a_withheld_turned_card_share_waits_for_its_author_only() -> None:
    cheater = 1
    table = Table(THREE)
    table.tamper = None
    for peer in table.peers:
        table.send(peer.start())
    # Deliver everything but the cheater's deal shares.
    while table.queue:
        msg = table.queue.popleft()
        if isinstance(msg, SharesMessage) and msg.seat == cheater:
            continue
        for view in (*table.peers, table.observer):
            if view.seat != msg.seat:
                view.receive(msg)
                for out in view.next_messages():
                    table.send(out)
    for view in (table.peers[0], table.peers[2], table.observer):
        assert view.waiting_for() == frozenset({cheater})
        assert view.turned_card() is None and view.phase is DeckPhase.DEAL


def test_a_32_card_shuffle_in_a_three_handed_round_is_malformed() -> None:
    big = Table(CLASSIC)
    for peer in big.peers:
        big.send(peer.start())
    big.pump()
    shuffle = next(m for m in big.sent if isinstance(m, ShuffleMessage))
    small = Table(THREE)
    for peer in small.peers:
        small.send(peer.start())
    small.pump()
    late = DeckObserver(THREE, dealer=0, table_id=TABLE_ID, round_number=1)
    with pytest.raises(MalformedDeckMessage) as info:
        late.receive(
            ShuffleMessage(shuffle.seat % 3, shuffle.commitment, shuffle.deck, shuffle.proof)
        )
    assert info.value.seat == shuffle.seat % 3


# -- two-handed ----------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", [0, 1])
def test_two_peers_see_the_face_up_cards_and_no_face_down_one(dealer: int) -> None:
    table = Table(TWO, dealer=dealer)
    table.deal()
    assert not table.errors
    public = public_positions(TWO, dealer)
    for view in (*table.peers, table.observer):
        assert view.phase is DeckPhase.PLAY and view.waiting_for() == frozenset()
        known = {p for p, c in enumerate(view.known_cards()) if c is not None}
        assert known == set(public)
    # No share of a face-down position was sent by anybody, its owner included.
    for msg in table.sent:
        assert not isinstance(msg, (OpenMessage, PlayMessage))
        if isinstance(msg, SharesMessage):
            assert len(msg.shares) == 16
    with pytest.raises(DeckUsageError):
        table.peers[0].set_taker(0)
    hidden = face_down(dealer)[0]
    owner = table.peers[0].owner_of(hidden)
    assert owner is not None
    with pytest.raises(DeckUsageError, match="not dealt"):
        table.peers[owner].play(hidden)


def test_a_face_down_card_opens_to_both_when_turned_up_only() -> None:
    table = Table(TWO)
    table.deal()
    p = face_down(0)[3]
    # The first peer publishes its share: still nobody knows the card.
    table.send(table.peers[0].open([p]))
    table.pump()
    for view in (*table.peers, table.observer):
        assert view.card_at(p) is None
    assert table.peers[0].waiting_for() == frozenset({1})
    table.observer.open([p])
    assert table.observer.waiting_for() == frozenset({1})
    table.send(table.peers[1].open([p]))
    table.pump()
    cards = {view.card_at(p) for view in (*table.peers, table.observer)}
    assert len(cards) == 1 and None not in cards
    assert table.peers[0].waiting_for() == frozenset() == table.observer.waiting_for()


def test_two_peers_play_a_whole_round_and_audit() -> None:
    table = Table(TWO, dealer=1)
    table.deal()
    down = face_down(1)
    up = sorted(public_positions(TWO, 1))
    for p in up:
        table.play(p)
    for i in range(0, len(down), 2):
        table.open(down[i : i + 2])
        for p in down[i : i + 2]:
            table.play(p)
    assert not table.errors
    plays = [m for m in table.sent if isinstance(m, PlayMessage)]
    assert len(plays) == 32 and all(m.share is None for m in plays)
    table.reveal_all()
    deck = table.audits()
    assert sorted(deck) == list(CARDS)
    assert all(v.known_cards() == deck for v in (*table.peers, table.observer))


def test_a_play_of_a_face_down_card_waits_until_it_is_turned_up() -> None:
    """An observer handed the play before the shares that open the card holds it."""
    table = Table(TWO)
    table.deal()
    dealt = list(table.sent)
    p = face_down(0)[0]
    table.open([p])
    table.play(p)
    opens = [m for m in table.sent if isinstance(m, OpenMessage)]
    (play,) = [m for m in table.sent if isinstance(m, PlayMessage)]
    late = DeckObserver(TWO, dealer=0, table_id=TABLE_ID, round_number=1)
    for msg in dealt:
        late.receive(msg)
    late.receive(play)
    assert late.played() == () and late.card_at(p) is None
    for msg in opens:
        late.receive(msg)
    assert late.played() == ()  # not turned up for the observer yet
    late.open([p])
    assert late.played() == (p,) and late.card_at(p) == table.peers[0].card_at(p)


def test_a_forged_open_share_is_named_by_the_other_peer_and_the_observer() -> None:
    table = Table(TWO)
    table.deal()
    p, q = face_down(0)[:2]
    cheater, honest = 1, 0
    table.send(table.peers[honest].open([p, q]))
    table.pump()
    table.observer.open([p, q])
    good = table.peers[cheater].open([p, q])
    forged = OpenMessage(cheater, good.positions, (good.shares[1], good.shares[0]))
    for view in (table.peers[honest], table.observer):
        with pytest.raises(BadProof) as info:
            view.receive(forged)
        assert info.value.seat == cheater
        assert view.card_at(p) is None and view.card_at(q) is None


def test_a_withheld_open_share_waits_for_its_author_only() -> None:
    table = Table(TWO)
    table.deal()
    p = face_down(0)[5]
    table.send(table.peers[0].open([p]))
    table.pump()
    table.observer.open([p])
    # Seat 1 never sends its share: everybody waits for seat 1, nobody for seat 0.
    assert table.peers[0].waiting_for() == frozenset({1})
    assert table.observer.waiting_for() == frozenset({1})
    assert table.peers[1].waiting_for() == frozenset()
    assert all(view.card_at(p) is None for view in (*table.peers, table.observer))


def test_a_share_sent_before_the_card_is_turned_up_is_held_unused() -> None:
    """A cheater that publishes its share early only gives it away: it is held, and the
    card opens when the honest peer turns it up, not before."""
    table = Table(TWO)
    table.deal()
    p = face_down(0)[2]
    early = table.peers[1].open([p])
    table.peers[0].receive(early)
    table.observer.receive(early)
    assert table.peers[0].card_at(p) is None and table.observer.card_at(p) is None
    assert table.peers[0].waiting_for() == frozenset()  # nothing is turned up
    table.send(table.peers[0].open([p]))
    table.pump()
    table.observer.open([p])
    assert table.peers[0].card_at(p) is not None
    assert table.observer.card_at(p) == table.peers[0].card_at(p) == table.peers[1].card_at(p)


def test_open_messages_that_break_the_rules_are_refused() -> None:
    table = Table(TWO)
    table.deal()
    up = min(public_positions(TWO, 0))
    p = face_down(0)[0]
    good = table.peers[1].open([p])
    observer = table.observer
    # A face-up position: opened at the deal.
    with pytest.raises(UnexpectedMessage, match="face up"):
        observer.receive(OpenMessage(1, (up,), good.shares))
    observer.receive(good)
    with pytest.raises(UnexpectedMessage, match="second share"):
        observer.receive(good)
    # Not two-handed: no open message at all.
    three = Table(THREE)
    three.deal()
    with pytest.raises(UnexpectedMessage):
        three.observer.receive(OpenMessage(1, (0,), good.shares))
    with pytest.raises(DeckUsageError):
        three.peers[0].open([0])
    # A play with a share, in two-handed.
    table.send(table.peers[0].open([p]))
    table.pump()
    owner = table.peers[0].owner_of(p)
    assert owner is not None
    play = table.peers[owner].play(p)
    assert play.share is None
    with_share = PlayMessage(owner, p, good.shares[0])
    fresh = Table(TWO)
    fresh.deal()
    fresh.open([p])
    with pytest.raises(MalformedDeckMessage, match="without a share"):
        fresh.peers[1 - owner].receive(with_share)


def test_open_messages_round_trip_and_parse_strictly() -> None:
    table = Table(TWO)
    table.deal()
    msg = table.peers[0].open(face_down(0)[:2])
    raw = encode_message(msg)
    assert decode_message(raw, 0) == msg
    wire = msg.to_wire()
    bad: list[dict[str, Any]] = [
        {**wire, "positions": list(reversed(wire["positions"]))},
        {**wire, "positions": [wire["positions"][0]] * 2},
        {**wire, "positions": []},
        {**wire, "positions": [32, 33]},
        {**wire, "shares": wire["shares"][:1]},
        {**wire, "seat": 1},
        {**wire, "extra": 1},
    ]
    for data in bad:
        with pytest.raises(MalformedDeckMessage) as info:
            message_from_wire(data, 0)
        assert info.value.seat == 0


# -- recorded rounds -------------------------------------------------------------------------

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"


def recorded_round(variant: str) -> Table:
    """The round of ``protocol/vectors/deck-<variant>.json``: dealer 0, round 1; three-handed
    with taker 1; plays in position order (not a legal game: the deck protocol knows no
    rules of play); two-handed turns up the two face-down cards under each pair of face-up
    cards played, then plays them."""
    if variant == "three-handed":
        table = Table(THREE)
        table.deal()
        table.complete(1)
        for p in sorted(range(24), key=lambda p: (p % 8, p)):
            table.play(p)
    else:
        table = Table(TWO)
        table.deal()
        up = sorted(public_positions(TWO, 0))
        for i in range(0, 16, 2):
            pair = up[i : i + 2]
            for p in pair:
                table.play(p)
            under = [p - 8 for p in pair]  # under_position: the card below, same pile
            table.open(under)
            for p in under:
                table.play(p)
    table.reveal_all()
    return table


def build_vector(variant: str) -> dict[str, Any]:
    table = recorded_round(variant)
    deck = table.audits()
    rules = table.rules
    events = vector_events(table.events)
    seats = range(rules.seats)
    return {
        "description": f"A {variant} round of the deck protocol (protocol/DECK.md section 16) "
        f"between {rules.seats} peers with the secrets below; the layout of deck-classic.json "
        "(DECK.md section 12), with 'open' steps (two-handed: the face-down positions the "
        "engine turned up) and no taker in two-handed. Plays go in an order the deck "
        "protocol accepts, not a legal order of play.",
        "domain": group.DOMAIN.decode(),
        "rules": rules.name,
        "table_id": TABLE_ID.hex(),
        "round": 1,
        "dealer": 0,
        "taker": 1 if rules.has_bidding else None,
        "deck_cards": [str(c) for c in deck_cards(rules)],
        "shuffle_order": list(shuffle_order(0, rules.seats)),
        "secrets": [
            {"seat": s, "secret_key": secret_key(s).hex(), "shuffle_seed": shuffle_seed(s).hex()}
            for s in seats
        ],
        "joint_key": (table.peers[0].joint_key or b"").hex(),
        "events": events,
        "deck": [str(c) for c in deck],
        "hands": {str(s): [str(deck[p]) for p in table.peers[s].positions_of(s)] for s in seats},
    }


def vector_text(variant: str) -> str:
    return json.dumps(build_vector(variant), indent=1) + "\n"


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
def test_the_committed_vector_matches_byte_for_byte(variant: str) -> None:
    assert (VECTORS / f"deck-{variant}.json").read_text() == vector_text(variant)


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
def test_the_committed_vector_replays_for_every_seat_and_an_observer(variant: str) -> None:
    data = json.loads((VECTORS / f"deck-{variant}.json").read_text())
    rules = rule_set(variant)
    for me in range(rules.seats):
        peer = DeckPeer(
            rules, seat=me, dealer=0, table_id=TABLE_ID, round_number=1,
            secret_key=bytes.fromhex(data["secrets"][me]["secret_key"]),
            shuffle_seed=bytes.fromhex(data["secrets"][me]["shuffle_seed"]),
        )  # fmt: skip
        recorded = [
            e["canonical_msgpack"]
            for e in data["events"]
            if e["event"] == "message" and e["from"] == me
        ]
        produced: list[DeckMessage] = []
        for e in data["events"]:
            if e["event"] == "message":
                if e["from"] != me:
                    peer.receive(decode_message(bytes.fromhex(e["canonical_msgpack"]), e["from"]))
            elif e["seat"] == me:
                args = [e[k] for k in ("taker", "position", "positions") if k in e]
                produced.append(getattr(peer, e["event"])(*args))
            produced += peer.next_messages()
        # Every message of ours comes out again, byte for byte, in the recorded order.
        assert [encode_message(m).hex() for m in produced] == recorded
        assert [str(c) for c in peer.audit()] == data["deck"]
    observer = DeckObserver(rules, dealer=0, table_id=TABLE_ID, round_number=1)
    told: set[tuple[str, str]] = set()
    for e in data["events"]:
        if e["event"] == "message":
            observer.receive(decode_message(bytes.fromhex(e["canonical_msgpack"]), e["from"]))
        elif e["event"] in ("set_taker", "open"):
            arg = e.get("taker", e.get("positions"))
            if (e["event"], str(arg)) not in told:
                told.add((e["event"], str(arg)))
                getattr(observer, e["event"])(arg)
    assert [str(c) for c in observer.audit()] == data["deck"]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-vectors"]:
        for name in ("three-handed", "two-handed"):
            path = VECTORS / f"deck-{name}.json"
            path.write_text(vector_text(name))
            print(f"wrote {path}")
    else:
        print("usage: PYTHONPATH=. python tests/test_deck_few.py --write-vectors")


@pytest.mark.parametrize("variant", ["three-handed", "two-handed"])
def test_a_shuffled_deck_that_its_proof_does_not_cover_is_named_by_everyone(
    variant: str,
) -> None:
    """The last shuffler swaps two ciphertexts of its proven deck (it would know where two
    cards went): every other peer and the observer refuse the shuffle, naming it."""
    rules = rule_set(variant)
    cheater = shuffle_order(0, rules.seats)[-1]

    def swap(msg: DeckMessage) -> DeckMessage:
        if isinstance(msg, ShuffleMessage) and msg.seat == cheater:
            deck = list(msg.deck)
            deck[0], deck[1] = deck[1], deck[0]
            return ShuffleMessage(msg.seat, msg.commitment, tuple(deck), msg.proof)
        return msg

    table = Table(rules, tamper=swap)
    table.deal()
    honest = {s for s in range(rules.seats) if s != cheater}
    assert set(table.errors) == honest | {None}
    for error in table.errors.values():
        assert isinstance(error, BadShuffle) and error.seat == cheater
    assert all(v.known_cards() == (None,) * rules.deck_size for v in (table.observer,))
