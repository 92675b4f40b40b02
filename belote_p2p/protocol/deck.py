"""The deck protocol: a mental-poker shuffle and deal of the 32 cards, sans-io (version 3).

Four peers with 32 cards; three with 24 (three-handed) or two with 32 (two-handed, where no
card is private: face-up cards open to both at the deal, face-down ones when turned up).

Four peers shuffle and deal one round's deck so that each learns only its own cards, the
classic turned card and the cards played, with no trusted dealer; at the end of the round
every peer reveals its secrets and each one re-checks everything (the audit). The scheme is
Barnett–Smart: ElGamal over the prime-order group ristretto255 (:mod:`belote_p2p.protocol.group`),
re-masking shuffles each proven in zero knowledge (:mod:`belote_p2p.protocol.shuffle`), and
decryption shares with Chaum–Pedersen proofs. ``protocol/DECK.md`` is the language-neutral
specification (every byte of every message and hash); ``protocol/vectors/deck-classic.json``
is a recorded round.

Every proof is checked on receipt, by every peer and every observer: each shuffle proof, in
shuffle order, before anything uses that deck; each decryption share, of every position and
every seat. So a fault is named at once, with its sender, and every honest participant names
the same one; no card can fail to open. The end-of-round audit (seeds recomputed, keys and
seeds checked against their commitments, the rules engine's audit with every hand) is a
second line.

Usage
-----
One :class:`DeckPeer` per seat and round. It does no I/O: the table session hands it the
messages of the other peers and sends what it produces, inside signed envelopes::

    peer = DeckPeer(rules, seat=s, dealer=d, table_id=tid, round_number=n)
    send(peer.start())                      # KeyMessage
    for each message m from another seat:   # in the order each sender sent them
        peer.receive(m)                     # raises a DeckError naming the culprit
        for out in peer.next_messages():    # shuffles and decryption shares, when due
            send(out)
    peer.known_cards()                      # 32 positions, None where unknown to us
    send(peer.set_taker(t))                 # classic: after the bidding, deals 21..31
    send(peer.play(position))               # our card at that position
    peer.card_at(position)                  # after receive(PlayMessage): the card played
    send(peer.reveal())                     # round over (or aborted): our secrets
    deck = peer.audit()                     # once every reveal is in: the 32 cards

One :class:`DeckObserver` per round for someone who holds no seat (``belote-p2p verify``
replaying a transcript): it is handed the messages of all four seats, sends nothing, checks
what a peer checks and audits the round once the four reveals are in::

    observer = DeckObserver(rules, dealer=d, table_id=tid, round_number=n)
    for each message m of any seat:         # in the order each sender sent them
        observer.receive(m)                 # raises a DeckError naming the culprit
    observer.set_taker(t)                   # classic: when the bidding names the taker
    observer.card_at(position)              # the turned card, the cards played
    deck = observer.audit()                 # once the four reveals are in: the 32 cards

API
---
``DeckPeer(rules, *, seat, dealer, table_id, round_number, secret_key=None, shuffle_seed=None)``
    ``secret_key`` (32-byte canonical non-zero scalar) and ``shuffle_seed`` (32 bytes) come
    from :mod:`secrets` unless given; given values make a peer deterministic (tests, vectors):
    every message it sends, shuffle proof included, is a function of them and of what it
    received.
``start() -> KeyMessage``
    Call once; messages received before it are held.
``receive(msg: DeckMessage) -> None``
    Accepts messages of the other seats in any interleaving (each sender's own messages in
    the order it sent them); a message that cannot be used yet is held until it can.
    Raises a :class:`DeckError` subclass when a message is wrong, naming the seat to blame
    (``seat`` is always that seat); the message is then dropped. Any ``DeckError`` ends the
    round: the session aborts it and, if the peers still cooperate, exchanges reveals and
    calls :meth:`~DeckPeer.audit`.
``next_messages() -> list[DeckMessage]``
    The messages this peer produced on its own (its shuffle, its decryption shares), once.
``set_taker(taker: int) -> SharesMessage``
    Classic only, after the first deal: the completion (positions 21..31) starts.
``open(positions) -> OpenMessage``
    Two-handed only, when the engine turned face-down positions up (``pending_openings``):
    publishes our shares of them; each opens once every seat's share is in. No share of a
    face-down position is published before (DECK.md §16).
``play(position: int) -> PlayMessage``
    Publishes our share for one of our positions; every peer learns the card.
``reveal() -> RevealMessage``
    Our secret key and shuffle seed; allowed once the four shuffles are done. After it,
    :meth:`~DeckPeer.play` is refused.
``audit() -> tuple[Card, ...]``
    Once the four reveals are in: re-derives every other shuffle and its proof from the
    revealed seed, then returns the 32 cards in deck order (hand them to the engine's audit).
``waiting_for() -> frozenset[int]``
    Seats that owe the next message (for deadlines and abandonment); empty while waiting
    for the local session (bidding, plays) or when done.
``hand()``, ``known_cards()``, ``card_at(p)``, ``turned_card()``, ``played()``,
``positions_of(seat)``, ``owner_of(p)``, ``phase``, ``joint_key``, ``public_key``
    Read the peer's view.

``DeckObserver(rules, *, dealer, table_id, round_number)``
    The same view without a seat (``seat`` is ``None``; no ``hand()``, ``start()``,
    ``play()`` or ``reveal()``). ``receive()`` takes the messages of all four seats, held
    as a peer holds them, and verifies what a peer verifies: key proofs, every shuffle proof,
    every decryption share, plays and their owner. ``set_taker(taker)`` returns nothing
    (classic; allowed once the four shuffles are in) and may raise the :class:`DeckError` of
    a message it releases. ``next_messages()`` is always empty. ``phase`` and
    ``waiting_for()`` mean what they mean for a peer, over the four seats: ``AUDITABLE`` once
    the four reveals are in. ``known_cards()`` never holds more than the turned card and the
    cards played. ``audit()`` re-derives all four shuffles.

Message types (frozen dataclasses; ``to_wire()`` gives a msgpack-ready ``dict`` with
``bytes`` fields, ``from_wire(data, sender)`` parses strictly and raises
:class:`MalformedDeckMessage` naming ``sender``, the seat of the envelope that carried it):
:class:`KeyMessage`, :class:`ShuffleMessage` (with its
:class:`~belote_p2p.protocol.shuffle.ShuffleProof`), :class:`SharesMessage`,
:class:`PlayMessage`, :class:`RevealMessage`; :func:`message_from_wire`,
:func:`encode_message` and :func:`decode_message` (canonical msgpack,
:mod:`belote_p2p.protocol.wire`) dispatch on the ``type`` field.

Errors: :class:`DeckError` (a peer misbehaved: ``seat``, ``reason``) with subclasses
:class:`MalformedDeckMessage`, :class:`UnexpectedMessage`, :class:`BadPoint`, :class:`BadProof`,
:class:`BadShuffle`, :class:`CommitmentMismatch`, :class:`WrongOwner`;
:class:`DeckUsageError` when the local caller misused the API; :class:`DeckInvariantError`
when a state the proofs rule out is reached anyway (a bug, nobody's fault to blame).
"""

from __future__ import annotations

import hashlib
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, TypeAlias

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import TURNED, deal_owners, public_positions
from belote_p2p.game.rules import RuleSet, Variant

from . import group, wire
from .group import L, Proof, base_mul, hash_to_point, is_valid_point, mul, u8, u32
from .shuffle import (
    MalformedShuffleProof,
    ShuffleProof,
    ShuffleProofUsageError,
    follows_seed,
    invalid_point,
    prove_shuffle,
    verify_shuffle,
)

SEATS = 4
"""The seats of a four-handed table (classic, coinche); :func:`seats_of` gives any rule set's."""
DECK_SIZE = 32
"""The cards of the full deck, and the most a deck has; :func:`deck_size` gives any rule set's."""
DECK_SIZES = (24, 32)
"""The deck sizes a message may carry (three-handed plays with 24 cards)."""
TURNED_POSITION = 20
"""The classic turned card's deck position; :func:`turned_position` gives any rule set's."""
STEP_DEAL = 0
"""The first deal step: classic positions 0..20 (with the turned card), three-handed 0..15,
coinche 0..31, two-handed the 16 face-up positions."""
STEP_COMPLETION = 1
"""Classic and three-handed only: the positions after the turned card, once the taker is
known."""
SEED_SIZE = 32
COMMITMENT_SIZE = 32
CIPHERTEXT_SIZE = 64
SHARE_SIZE = 96
MAX_TABLE_ID_SIZE = 64
MAX_ROUND = 2**32 - 1

CARD_LABEL = b"card"
COMMITMENT_LABEL = b"shuffle-commitment"
PERMUTATION_LABEL = b"shuffle-permutation"
MASK_LABEL = b"shuffle-mask"


# -- errors ------------------------------------------------------------------------------


class DeckError(RemoteProtocolError):
    """A peer sent something the protocol forbids; ``seat`` names it, always.

    Every deck fault has an author: each proof is checked on receipt, so the first message
    that breaks the protocol is refused with its sender's seat.
    """

    seat: int

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(f"seat {seat}: {reason}", seat=seat)
        self.reason = reason


class MalformedDeckMessage(DeckError):
    """A message of the wrong shape: unknown type, missing field, wrong type or length."""


class UnexpectedMessage(DeckError):
    """A message that may not come now or again (a second key, a second play...)."""


class BadPoint(DeckError):
    """Bytes that are not a valid point where the protocol needs one."""


class BadProof(DeckError):
    """A proof that does not verify, or a share that does not match the revealed key."""


class BadShuffle(DeckError):
    """A shuffle whose proof does not verify, or (at the audit) whose deck or proof is not
    the one its revealed seed gives."""


class CommitmentMismatch(DeckError):
    """A revealed secret key or seed that does not match what the peer committed to."""


class WrongOwner(DeckError):
    """A play at a deck position that was not dealt to the player."""


class DeckUsageError(LocalProtocolError):
    """The local caller misused :class:`DeckPeer` (a call out of order, a bad argument)."""


class DeckInvariantError(LocalProtocolError):
    """A state that the proofs checked on receipt rule out was reached anyway (a card that
    does not open, an own deck that is not valid): a bug of this program, not a fault any
    peer can be blamed for."""


# -- public values -----------------------------------------------------------------------


def _card_points() -> tuple[bytes, ...]:
    points = tuple(hash_to_point(CARD_LABEL, u8(i)) for i in range(DECK_SIZE))
    assert len(set(points)) == DECK_SIZE and all(is_valid_point(p) for p in points)
    return points


CARD_POINTS: tuple[bytes, ...] = _card_points()
"""The public point of each card, indexed by card value (hash-to-curve, see DECK.md)."""
_CARD_OF_POINT: dict[bytes, Card] = {p: CARDS[i] for i, p in enumerate(CARD_POINTS)}


def card_of_point(point: bytes) -> Card | None:
    """The card whose point this is, or ``None``."""
    return _CARD_OF_POINT.get(point)


def seats_of(rules: RuleSet) -> int:
    """How many peers run the deck protocol: 4, 3 (three-handed) or 2 (two-handed)."""
    return rules.seats


def deck_size(rules: RuleSet) -> int:
    """How many cards the deck holds: 32, or 24 in three-handed."""
    return rules.deck_size


def deck_cards(rules: RuleSet) -> tuple[Card, ...]:
    """The cards of the rule set's deck in card order: the trivial deck's positions.

    The 24-card deck is the 32-card order without the 7s and 8s; each card keeps its point
    ``M_i`` (``i`` its value in ``0..31``)."""
    return rules.deck_cards


def is_two_handed(rules: RuleSet) -> bool:
    """Two-handed: no private card; face-up cards open at the deal, face-down ones when the
    engine turns them up (:meth:`DeckPeer.open`)."""
    return rules.variant is Variant.TWO_HANDED


def turned_position(rules: RuleSet) -> int | None:
    """The position of the card turned face up for the bidding (classic 20, three-handed
    15), ``None`` where there is none (coinche, two-handed)."""
    owners = deal_owners(rules, 0)
    return owners.index(TURNED) if TURNED in owners else None


def shuffle_order(dealer: int, seats: int = SEATS) -> tuple[int, ...]:
    """The seats in shuffling order: from the dealer's left, the dealer last."""
    return tuple((dealer + 1 + i) % seats for i in range(seats))


def step_positions(rules: RuleSet, step: int, dealer: int = 0) -> tuple[int, ...]:
    """The deck positions a deal step opens, in increasing order (two-handed: the face-up
    positions, which depend on the dealer; its face-down ones open one by one later)."""
    size = deck_size(rules)
    if is_two_handed(rules):
        return tuple(sorted(public_positions(rules, dealer))) if step == STEP_DEAL else ()
    turned = turned_position(rules)
    if turned is None:
        return tuple(range(size)) if step == STEP_DEAL else ()
    return tuple(range(turned + 1)) if step == STEP_DEAL else tuple(range(turned + 1, size))


def _context(table_id: bytes, round_number: int, seat: int) -> tuple[bytes, ...]:
    return (table_id, u32(round_number), u8(seat))


def shuffle_proof_context(
    table_id: bytes, round_number: int, seat: int, commitment: bytes
) -> tuple[bytes, ...]:
    """What a shuffle proof is bound to besides the key and the decks: table, round, the
    shuffler's seat and its seed commitment (every field of the shuffle message)."""
    return (*_context(table_id, round_number, seat), commitment)


def shuffle_commitment(table_id: bytes, round_number: int, seat: int, seed: bytes) -> bytes:
    """The 32-byte commitment to a shuffle seed published with the shuffled deck."""
    parts = (*_context(table_id, round_number, seat), seed)
    return group.transcript_hash(COMMITMENT_LABEL, *parts)[:COMMITMENT_SIZE]


def shuffle_permutation(
    table_id: bytes, round_number: int, seat: int, seed: bytes, size: int = DECK_SIZE
) -> tuple[int, ...]:
    """``perm`` with output position ``j`` taking input position ``perm[j]``.

    Fisher–Yates driven by the SHAKE-256 stream of the seed, one byte per draw, bytes at or
    above the largest multiple of the range rejected so that every index is uniform.
    """
    parts = (*_context(table_id, round_number, seat), seed)
    xof = hashlib.shake_256(group.framed(PERMUTATION_LABEL, parts))
    stream = _xof_bytes(xof)
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        n = i + 1
        limit = 256 - 256 % n
        while True:
            b = next(stream)
            if b < limit:
                break
        j = b % n
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def _xof_bytes(xof: Any) -> Iterator[int]:
    size = 128
    offset = 0
    while True:
        chunk: bytes = xof.digest(size)
        yield from chunk[offset:]
        offset = size
        size *= 2


def shuffle_masks(
    table_id: bytes, round_number: int, seat: int, seed: bytes, size: int = DECK_SIZE
) -> tuple[int, ...]:
    """The re-masking scalar of each output position of a shuffle."""
    ctx = (*_context(table_id, round_number, seat), seed)
    return tuple(group.hash_to_scalar(MASK_LABEL, *ctx, u8(j)) for j in range(size))


# -- messages ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """An ElGamal ciphertext ``(r·G, M + r·X)`` of a card point ``M`` under the joint key."""

    c1: bytes
    c2: bytes

    def to_bytes(self) -> bytes:
        return self.c1 + self.c2

    @classmethod
    def from_bytes(cls, data: bytes) -> Ciphertext:
        return cls(data[:32], data[32:])


TRIVIAL_DECK: tuple[Ciphertext, ...] = tuple(Ciphertext(group.IDENTITY, m) for m in CARD_POINTS)
"""The deck before the first shuffle: card ``i`` at position ``i``, encrypted with no mask
(``(O, M_i)``). Never sent; the first shuffle proof is checked against it."""


def trivial_deck(rules: RuleSet) -> tuple[Ciphertext, ...]:
    """The rule set's deck before the first shuffle: :func:`deck_cards` in order, each
    encrypted with no mask (:data:`TRIVIAL_DECK` for 32 cards)."""
    if deck_size(rules) == DECK_SIZE:
        return TRIVIAL_DECK
    return tuple(TRIVIAL_DECK[c] for c in deck_cards(rules))


@dataclass(frozen=True, slots=True)
class DecryptionShare:
    """``x_i·c1`` for one position, with the Chaum–Pedersen proof (``c || s``) that it is."""

    point: bytes
    proof: bytes

    def to_bytes(self) -> bytes:
        return self.point + self.proof

    @classmethod
    def from_bytes(cls, data: bytes) -> DecryptionShare:
        return cls(data[:32], data[32:])


class _Wire:
    """Strict readers of a wire map, blaming ``seat`` (the envelope's sender)."""

    __slots__ = ("data", "seat")

    def __init__(self, data: Mapping[str, Any], seat: int) -> None:
        self.data = data
        self.seat = seat

    def fail(self, reason: str) -> MalformedDeckMessage:
        return MalformedDeckMessage(self.seat, reason)

    def uint(self, key: str, upper: int) -> int:
        value = self.data[key]
        if type(value) is not int or not 0 <= value <= upper:
            raise self.fail(f"{key!r} must be an integer in 0..{upper}")
        return value

    def bin(self, key: str, size: int) -> bytes:
        return self.bin_value(self.data[key], key, size)

    def bin_value(self, value: object, key: str, size: int) -> bytes:
        if type(value) is not bytes or len(value) != size:
            raise self.fail(f"{key!r} must be {size} bytes")
        return value

    def bin_list(self, key: str, size: int, min_count: int, max_count: int) -> list[bytes]:
        value = self.data[key]
        if type(value) not in (list, tuple) or not min_count <= len(value) <= max_count:
            raise self.fail(f"{key!r} must be a list of {min_count}..{max_count} items")
        return [self.bin_value(v, key, size) for v in value]


@dataclass(frozen=True, slots=True)
class KeyMessage:
    """A peer's public key share for the round and its Schnorr proof of knowledge."""

    TYPE: ClassVar[str] = "deck.key"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "key", "proof"})

    seat: int
    public_key: bytes
    proof: bytes

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "seat": self.seat, "key": self.public_key, "proof": self.proof}

    @classmethod
    def from_wire(cls, data: object, sender: int) -> KeyMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        return cls(_seat_of(w), w.bin("key", 32), w.bin("proof", group.PROOF_SIZE))


@dataclass(frozen=True, slots=True)
class ShuffleMessage:
    """A peer's shuffled and re-masked deck, the commitment to its shuffle seed, and the
    proof that the deck is a permutation and re-masking of the previous one."""

    TYPE: ClassVar[str] = "deck.shuffle"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "commitment", "deck", "proof"})

    seat: int
    commitment: bytes
    deck: tuple[Ciphertext, ...]
    proof: ShuffleProof

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "commitment": self.commitment,
            "deck": [c.to_bytes() for c in self.deck],
            "proof": self.proof.to_wire(),
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> ShuffleMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        deck = w.bin_list("deck", CIPHERTEXT_SIZE, min(DECK_SIZES), DECK_SIZE)
        if len(deck) not in DECK_SIZES:
            raise w.fail(f"'deck' must hold one of {DECK_SIZES} ciphertexts")
        commitment = w.bin("commitment", COMMITMENT_SIZE)
        try:
            proof = ShuffleProof.from_wire(w.data["proof"], len(deck))
        except MalformedShuffleProof as exc:
            raise w.fail(f"proof: {exc}") from None
        return cls(seat, commitment, tuple(Ciphertext.from_bytes(c) for c in deck), proof)


@dataclass(frozen=True, slots=True)
class SharesMessage:
    """A peer's decryption shares for one deal step.

    One share per position of the step that the sender does not own (the turned card's
    included), in increasing position order.
    """

    TYPE: ClassVar[str] = "deck.shares"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "step", "shares"})

    seat: int
    step: int
    shares: tuple[DecryptionShare, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "step": self.step,
            "shares": [s.to_bytes() for s in self.shares],
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> SharesMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        step = w.uint("step", STEP_COMPLETION)
        shares = w.bin_list("shares", SHARE_SIZE, 1, DECK_SIZE)
        return cls(seat, step, tuple(DecryptionShare.from_bytes(s) for s in shares))


@dataclass(frozen=True, slots=True)
class PlayMessage:
    """A card played: its position and the player's own share for it.

    ``share`` is ``None`` exactly for a card every seat's share of was published before
    it was played: the turned card (classic, three-handed) and every two-handed card.
    """

    TYPE: ClassVar[str] = "deck.play"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "position", "share"})

    seat: int
    position: int
    share: DecryptionShare | None

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "position": self.position,
            "share": None if self.share is None else self.share.to_bytes(),
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> PlayMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        position = w.uint("position", DECK_SIZE - 1)
        raw = w.data["share"]
        share = None if raw is None else DecryptionShare.from_bytes(w.bin("share", SHARE_SIZE))
        return cls(seat, position, share)


@dataclass(frozen=True, slots=True)
class RevealMessage:
    """A peer's secret key and shuffle seed, published when the round is over."""

    TYPE: ClassVar[str] = "deck.reveal"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "secret_key", "seed"})

    seat: int
    secret_key: bytes
    seed: bytes

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "secret_key": self.secret_key,
            "seed": self.seed,
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> RevealMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        return cls(_seat_of(w), w.bin("secret_key", 32), w.bin("seed", SEED_SIZE))


@dataclass(frozen=True, slots=True)
class OpenMessage:
    """Two-handed: a peer's decryption shares of face-down positions the engine turned up.

    ``positions`` are strictly increasing; ``shares[i]`` is for ``positions[i]``. Nobody
    publishes a share of a face-down position before the rules engine turns it up, so
    nobody, its owner included, knows the card before that.
    """

    TYPE: ClassVar[str] = "deck.open"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "positions", "shares"})

    seat: int
    positions: tuple[int, ...]
    shares: tuple[DecryptionShare, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "positions": list(self.positions),
            "shares": [s.to_bytes() for s in self.shares],
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> OpenMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        raw = w.data["positions"]
        if type(raw) not in (list, tuple) or not 1 <= len(raw) <= DECK_SIZE:
            raise w.fail(f"'positions' must be a list of 1..{DECK_SIZE} positions")
        positions: list[int] = []
        for value in raw:
            if type(value) is not int or not 0 <= value < DECK_SIZE:
                raise w.fail(f"'positions' must hold integers in 0..{DECK_SIZE - 1}")
            if positions and value <= positions[-1]:
                raise w.fail("'positions' must be strictly increasing")
            positions.append(value)
        shares = w.bin_list("shares", SHARE_SIZE, len(positions), len(positions))
        return cls(seat, tuple(positions), tuple(DecryptionShare.from_bytes(s) for s in shares))


DeckMessage: TypeAlias = (
    KeyMessage | ShuffleMessage | SharesMessage | PlayMessage | RevealMessage | OpenMessage
)
_MESSAGE_CLASSES = (
    KeyMessage,
    ShuffleMessage,
    SharesMessage,
    PlayMessage,
    RevealMessage,
    OpenMessage,
)
MESSAGE_TYPES: dict[str, type[DeckMessage]] = {cls.TYPE: cls for cls in _MESSAGE_CLASSES}


def _open_wire(data: object, type_name: str, fields: frozenset[str], sender: int) -> _Wire:
    _check_sender(sender)
    if not isinstance(data, Mapping):
        raise MalformedDeckMessage(sender, "a message is a map")
    if data.get("type") != type_name:
        raise MalformedDeckMessage(sender, f"expected a {type_name!r} message")
    if set(data) != fields:
        raise MalformedDeckMessage(
            sender, f"a {type_name!r} message has the fields {sorted(fields)}"
        )
    return _Wire(data, sender)


def _check_sender(sender: object) -> None:
    if type(sender) is not int or not 0 <= sender < SEATS:
        raise DeckUsageError(f"not a seat: {sender!r}")


def _seat_of(w: _Wire) -> int:
    seat = w.data["seat"]
    if type(seat) is not int or not 0 <= seat < SEATS:
        raise w.fail("'seat' must be an integer in 0..3")
    if seat != w.seat:
        raise w.fail(f"message names seat {seat} but was sent by seat {w.seat}")
    return seat


def message_from_wire(data: object, sender: int) -> DeckMessage:
    """Parse any deck message from its wire map; ``sender`` (the seat of the envelope that
    carried it) is checked against the ``seat`` field and blamed for a malformed message."""
    _check_sender(sender)
    if not isinstance(data, Mapping):
        raise MalformedDeckMessage(sender, "a message is a map")
    kind = data.get("type")
    cls = MESSAGE_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise MalformedDeckMessage(sender, f"unknown message type {kind!r}")
    return cls.from_wire(data, sender)


def encode_message(msg: DeckMessage) -> bytes:
    """The canonical msgpack bytes of a message (``PROTOCOL.md`` §2, as inside an envelope;
    for tests and vectors: the session sends the wire map in its envelopes)."""
    return wire.encode(msg.to_wire())


def decode_message(raw: bytes, sender: int) -> DeckMessage:
    """Parse canonical msgpack bytes sent by ``sender`` into a message; raise
    :class:`MalformedDeckMessage` naming ``sender`` on any fault, a non-canonical encoding
    included."""
    _check_sender(sender)
    try:
        data = wire.decode(raw)
    except wire.MalformedMessage as exc:
        raise MalformedDeckMessage(sender, str(exc)) from None
    return message_from_wire(data, sender)


# -- the peer ----------------------------------------------------------------------------


class DeckPhase(Enum):
    """What the deck protocol of a round waits for."""

    KEYS = "keys"
    """The four key shares and their proofs."""
    SHUFFLE = "shuffle"
    """The four shuffles, one after the other."""
    DEAL = "deal"
    """Decryption shares of the first deal step."""
    BIDDING = "bidding"
    """Classic: the local session's :meth:`DeckPeer.set_taker`."""
    COMPLETION = "completion"
    """Classic: decryption shares of positions 21..31."""
    PLAY = "play"
    """Every card dealt; plays come and go."""
    REVEAL = "reveal"
    """Some peer revealed its secrets: the round is over, the reveals come in."""
    AUDITABLE = "auditable"
    """Every reveal is in: :meth:`DeckPeer.audit` may run."""


class _DeckRound(ABC):
    """The public side of one round's deck: what every participant sees and checks.

    It holds the messages received, verifies every proof in them on receipt, opens the cards
    whose shares are all in and runs the audit. :class:`DeckPeer` adds a seat's secrets and
    the messages they produce; :class:`DeckObserver` holds no seat.
    """

    seat: int | None

    def __init__(
        self,
        rules: RuleSet,
        *,
        seat: int | None,
        dealer: int,
        table_id: bytes,
        round_number: int,
    ) -> None:
        seats = seats_of(rules)
        for name, value in (("seat", seat), ("dealer", dealer)):
            if name == "seat" and value is None:
                continue
            if type(value) is not int or not 0 <= value < seats:
                raise DeckUsageError(f"{name} must be 0..{seats - 1}, not {value!r}")
        if not isinstance(table_id, bytes) or not 1 <= len(table_id) <= MAX_TABLE_ID_SIZE:
            raise DeckUsageError(f"table_id must be 1..{MAX_TABLE_ID_SIZE} bytes")
        if type(round_number) is not int or not 0 <= round_number <= MAX_ROUND:
            raise DeckUsageError(f"round_number must be 0..{MAX_ROUND}")
        self.rules = rules
        self.seat = seat
        self.dealer = dealer
        self.table_id = table_id
        self.round_number = round_number
        self.seats = seats
        """How many peers shuffle and deal (4, 3 or 2)."""
        self.size = deck_size(rules)
        """How many cards the deck holds (32 or 24)."""
        self.shuffle_order = shuffle_order(dealer, seats)
        self.taker: int | None = None
        self._cards_in_order = deck_cards(rules)
        self._card_set = frozenset(self._cards_in_order)
        self._trivial = trivial_deck(rules)
        self._turned = turned_position(rules)
        self._two_handed = is_two_handed(rules)
        self._step_positions = {
            step: step_positions(rules, step, dealer) for step in (STEP_DEAL, STEP_COMPLETION)
        }
        # Positions every seat shares at the deal, opened to all: the turned card, or the
        # two-handed face-up cards.
        self._open_to_all = frozenset(
            self._step_positions[STEP_DEAL]
            if self._two_handed
            else ()
            if self._turned is None
            else (self._turned,)
        )
        # Two-handed: face-down positions the engine turned up (their shares may come in),
        # and by seat the ones it published its share of.
        self._requested: set[int] = set()
        self._opened: dict[int, set[int]] = {s: set() for s in range(seats)}

        self._revealed = False  # DeckPeer: our own reveal is out
        self._keys: dict[int, bytes] = {}
        self._joint: bytes | None = None
        self._decks: list[tuple[Ciphertext, ...]] = []
        self._proofs: list[ShuffleProof] = []  # one per deck, for the audit
        self._commitments: dict[int, bytes] = {}
        # Published shares by position then seat, a peer's own included, each one proven.
        self._shares: list[dict[int, bytes]] = [{} for _ in range(self.size)]
        self._share_steps: set[tuple[int, int]] = set()  # (step, seat) received or sent
        self._owners = deal_owners(rules, dealer)
        # DeckPeer: its share of its own positions, unpublished (an observer has none).
        self._private: dict[int, bytes] = {}
        self._cards: dict[int, Card] = {}
        self._played: list[int] = []
        self._reveals: dict[int, tuple[int, bytes]] = {}
        self._seen: set[tuple[object, ...]] = set()
        self._pending: list[DeckMessage] = []
        self._outbox: list[DeckMessage] = []
        # Deal steps whose final deck is in and, for a peer, whose shares it published.
        self._steps_started: set[int] = set()

    # -- what differs between a peer and an observer ---------------------------------------

    @abstractmethod
    def _reveals_complete(self) -> bool:
        """Every reveal is in (a peer's own included)."""

    @abstractmethod
    def _keys_joined(self) -> None:
        """The joint key was just formed."""

    @abstractmethod
    def _after_shuffle(self) -> None:
        """A shuffled deck was just added."""

    def _secrets(self) -> dict[int, tuple[int, bytes]]:
        """Every seat's secret key and seed, for the audit."""
        return dict(self._reveals)

    # -- reading the view ------------------------------------------------------------------

    @property
    def joint_key(self) -> bytes | None:
        """The sum of the four key shares, once all four are proven."""
        return self._joint

    @property
    def phase(self) -> DeckPhase:
        if self._reveals or self._revealed:
            if self._reveals_complete():
                return DeckPhase.AUDITABLE
            return DeckPhase.REVEAL
        if self._joint is None:
            return DeckPhase.KEYS
        if len(self._decks) < self.seats:
            return DeckPhase.SHUFFLE
        if not self._step_complete(STEP_DEAL):
            return DeckPhase.DEAL
        if not self._has_completion:
            return DeckPhase.PLAY
        if self.taker is None:
            return DeckPhase.BIDDING
        if not self._step_complete(STEP_COMPLETION):
            return DeckPhase.COMPLETION
        return DeckPhase.PLAY

    @property
    def _has_completion(self) -> bool:
        """Classic and three-handed deal the rest once the bidding named the taker."""
        return self._turned is not None

    def _step_complete(self, step: int) -> bool:
        return step in self._steps_started and all(
            (step, s) in self._share_steps for s in range(self.seats)
        )

    def owner_of(self, position: int) -> int | None:
        """The seat a position is dealt to; ``None`` while unknown (classic completion
        before the taker, or the turned card before the taker)."""
        if not 0 <= position < self.size:
            raise DeckUsageError(f"no deck position {position}")
        if position == self._turned:
            return self.taker
        owner = self._owners[position]
        return owner if owner >= 0 else None

    def positions_of(self, seat: int) -> tuple[int, ...]:
        """The positions dealt to ``seat`` so far (the taker's include the turned card)."""
        return tuple(p for p in range(self.size) if self.owner_of(p) == seat)

    def card_at(self, position: int) -> Card | None:
        """The card at a position if this view knows it (a peer's own, turned or played)."""
        return self._cards.get(position)

    def known_cards(self) -> tuple[Card | None, ...]:
        """The deck's positions as this view sees them; ``None`` where it does not know."""
        return tuple(self._cards.get(p) for p in range(self.size))

    def turned_card(self) -> Card | None:
        """Classic, three-handed: the face-up card, once every seat's share is in."""
        return None if self._turned is None else self._cards.get(self._turned)

    def requested(self) -> frozenset[int]:
        """Two-handed: the face-down positions turned up so far (:meth:`DeckPeer.open`)."""
        return frozenset(self._requested)

    def played(self) -> tuple[int, ...]:
        """Positions played so far, in the order the plays were accepted."""
        return tuple(self._played)

    def waiting_for(self) -> frozenset[int]:
        """Seats that owe the next message; empty while the session must act (bidding,
        plays) or when done."""
        others = [s for s in range(self.seats) if s != self.seat]
        if self._reveals or self._revealed:
            return frozenset(s for s in others if s not in self._reveals)
        if self._joint is None:
            return frozenset(s for s in others if s not in self._keys)
        if len(self._decks) < self.seats:
            return frozenset({self.shuffle_order[len(self._decks)]})
        for step in (STEP_DEAL, STEP_COMPLETION):
            if step not in self._steps_started:
                return frozenset()
            missing = frozenset(s for s in others if (step, s) not in self._share_steps)
            if missing:
                return missing
            if not self._has_completion:
                break
        return frozenset(s for s in others if not self._requested <= self._opened[s])

    def next_messages(self) -> list[DeckMessage]:
        """Messages produced since the last call (send them all); always empty for an
        observer."""
        out, self._outbox = self._outbox, []
        return out

    def _check_taker(self, taker: int) -> None:
        """The checks of ``set_taker``; on success, the completion's owners are known."""
        if not self._has_completion:
            raise DeckUsageError(f"{self.rules.variant.value} deals every card at once")
        if type(taker) is not int or not 0 <= taker < self.seats:
            raise DeckUsageError(f"taker must be 0..{self.seats - 1}, not {taker!r}")
        if self.taker is not None:
            raise DeckUsageError("the taker is already known")
        if self._revealed or STEP_DEAL not in self._steps_started:
            raise DeckUsageError("no completion before the first deal step")
        self.taker = taker
        self._owners = deal_owners(self.rules, self.dealer, taker)

    # -- receiving ------------------------------------------------------------------------

    def receive(self, msg: DeckMessage) -> None:
        """Take a message (of another seat, for a peer); raise a :class:`DeckError` if it
        is wrong."""
        if not isinstance(msg, _MESSAGE_CLASSES):
            raise DeckUsageError(f"not a deck message: {msg!r}")
        if type(msg.seat) is not int or not 0 <= msg.seat < self.seats:
            raise DeckUsageError(f"not a seat: {msg.seat!r}")
        if msg.seat == self.seat:
            raise DeckUsageError("a peer does not receive its own messages")
        self._admit(msg)
        self._pending.append(msg)
        self._drain()

    def _admit(self, msg: DeckMessage) -> None:
        """Checks that need no state the message may be waiting for: duplicates, steps,
        ownership where it is already known."""
        slot: tuple[object, ...]
        if isinstance(msg, ShuffleMessage) and len(msg.deck) != self.size:
            raise MalformedDeckMessage(msg.seat, f"a shuffled deck holds {self.size} cards")
        if isinstance(msg, SharesMessage):
            if msg.step == STEP_COMPLETION and not self._has_completion:
                raise UnexpectedMessage(
                    msg.seat, f"{self.rules.variant.value} has no completion step"
                )
            slot = ("shares", msg.seat, msg.step)
        elif isinstance(msg, OpenMessage):
            self._admit_open(msg)
            return
        elif isinstance(msg, PlayMessage):
            if msg.position >= self.size:
                raise MalformedDeckMessage(msg.seat, f"no deck position {msg.position}")
            owner = self.owner_of(msg.position)
            if owner is not None and owner != msg.seat:
                raise WrongOwner(msg.seat, f"position {msg.position} belongs to seat {owner}")
            slot = ("play", msg.position)
        else:
            slot = (type(msg).TYPE, msg.seat)
        if slot in self._seen:
            raise UnexpectedMessage(msg.seat, f"a second {type(msg).TYPE!r} message")
        self._seen.add(slot)

    def _admit_open(self, msg: OpenMessage) -> None:
        """An open message is two-handed, of face-down positions, each once per seat."""
        if not self._two_handed:
            raise UnexpectedMessage(msg.seat, "only two-handed opens face-down cards")
        for p in msg.positions:
            if p >= self.size:
                raise MalformedDeckMessage(msg.seat, f"no deck position {p}")
            if p in self._open_to_all:
                raise UnexpectedMessage(msg.seat, f"position {p} is face up: opened at the deal")
            if ("open", msg.seat, p) in self._seen:
                raise UnexpectedMessage(msg.seat, f"a second share of position {p}")
        self._seen.update(("open", msg.seat, p) for p in msg.positions)

    def _drain(self) -> None:
        progress = True
        while progress:
            progress = False
            for i, msg in enumerate(self._pending):
                if self._ready(msg):
                    del self._pending[i]
                    self._apply(msg)
                    progress = True
                    break

    def _ready(self, msg: DeckMessage) -> bool:
        if isinstance(msg, KeyMessage):
            return True
        if isinstance(msg, ShuffleMessage):
            done = len(self._decks)
            return (
                self._joint is not None
                and done < self.seats
                and self.shuffle_order[done] == msg.seat
            )
        if isinstance(msg, SharesMessage):
            return msg.step in self._steps_started
        if isinstance(msg, OpenMessage):
            return STEP_DEAL in self._steps_started and self._requested.issuperset(msg.positions)
        if isinstance(msg, PlayMessage):
            owner = self.owner_of(msg.position)
            if owner is None:
                return False
            if self._shareless(msg.position):
                return msg.position in self._cards
            shares = self._shares[msg.position]
            return all(s in shares for s in range(self.seats) if s != owner)
        return len(self._decks) == self.seats

    def _shareless(self, position: int) -> bool:
        """Every seat's share of this position is out before it is played (the turned card,
        every two-handed card): its play carries no share."""
        return self._two_handed or position == self._turned

    def _apply(self, msg: DeckMessage) -> None:
        if isinstance(msg, KeyMessage):
            self._apply_key(msg)
        elif isinstance(msg, ShuffleMessage):
            self._apply_shuffle(msg)
        elif isinstance(msg, SharesMessage):
            self._apply_shares(msg)
        elif isinstance(msg, PlayMessage):
            self._apply_play(msg)
        elif isinstance(msg, OpenMessage):
            self._apply_open(msg)
        else:
            self._apply_reveal(msg)

    def _apply_key(self, msg: KeyMessage) -> None:
        proof = self._parse_proof(msg.seat, msg.proof)
        try:  # the multiplication by the key share validates it
            ok = group.verify_key(msg.public_key, proof, self._ctx(msg.seat))
        except group.InvalidPoint:
            raise BadPoint(msg.seat, "the key share is not a valid point") from None
        if not ok:
            raise BadProof(msg.seat, "the proof of knowledge of the key share does not verify")
        self._keys[msg.seat] = msg.public_key
        self._join_keys(msg.seat)

    def _join_keys(self, last: int) -> None:
        if len(self._keys) == self.seats:
            joint = self._keys[0]
            for s in range(1, self.seats):
                joint = group.add(joint, self._keys[s])
            if joint == group.IDENTITY:
                raise BadPoint(last, "the joint key is the identity")
            self._joint = joint
            self._keys_joined()

    def _apply_shuffle(self, msg: ShuffleMessage) -> None:
        """Verify the proof against the previous deck (the trivial one for the first shuffle)
        before anything uses this deck. The proof's verification puts every point of the
        deck and of the proof through a multiplication, whose decoding validates it, so a
        deck that is accepted holds only valid points."""
        assert self._joint is not None
        inputs = self._decks[-1] if self._decks else self._trivial
        ctx = shuffle_proof_context(self.table_id, self.round_number, msg.seat, msg.commitment)
        try:
            ok = verify_shuffle(self._joint, inputs, msg.deck, msg.proof, ctx)
        except ShuffleProofUsageError as exc:
            raise DeckInvariantError(f"an accepted deck or the key is invalid: {exc}") from exc
        if not ok:
            where = invalid_point(msg.deck, msg.proof)
            if where is not None:
                raise BadPoint(msg.seat, f"the shuffle's {where} is not a valid point")
            raise BadShuffle(msg.seat, "the proof of shuffle does not verify")
        self._decks.append(msg.deck)
        self._proofs.append(msg.proof)
        self._commitments[msg.seat] = msg.commitment
        self._after_shuffle()

    def _apply_shares(self, msg: SharesMessage) -> None:
        """Verify every share of the message, whoever's card it is for: a wrong share is
        refused at once, by every peer alike."""
        positions = self._shared_by(msg.seat, msg.step)
        if len(msg.shares) != len(positions):
            raise MalformedDeckMessage(
                msg.seat, f"step {msg.step} needs {len(positions)} shares, not {len(msg.shares)}"
            )
        deck = self._decks[-1]
        key = self._keys[msg.seat]
        for p, share in zip(positions, msg.shares, strict=True):
            self._check_share(msg.seat, p, key, deck[p].c1, share)
        for p, share in zip(positions, msg.shares, strict=True):
            self._shares[p][msg.seat] = share.point
        self._share_steps.add((msg.step, msg.seat))
        self._open_dealt(msg.step)

    def _apply_play(self, msg: PlayMessage) -> None:
        p = msg.position
        owner = self.owner_of(p)
        if owner != msg.seat:
            raise WrongOwner(msg.seat, f"position {p} belongs to seat {owner}")
        if self._shareless(p):
            if msg.share is not None:
                what = "a two-handed card" if self._two_handed else "the turned card"
                raise MalformedDeckMessage(msg.seat, f"{what} is played without a share")
            self._played.append(p)
            return
        if msg.share is None:
            raise MalformedDeckMessage(msg.seat, f"the play of position {p} carries no share")
        ct = self._decks[-1][p]
        self._check_share(msg.seat, p, self._keys[msg.seat], ct.c1, msg.share)
        self._open(p, {**self._shares[p], msg.seat: msg.share.point})
        self._shares[p][msg.seat] = msg.share.point
        self._played.append(p)

    def _apply_open(self, msg: OpenMessage) -> None:
        """Verify every share of the message; then open each position whose shares are all
        in (the other seats' may still be to come)."""
        deck = self._decks[-1]
        key = self._keys[msg.seat]
        for p, share in zip(msg.positions, msg.shares, strict=True):
            self._check_share(msg.seat, p, key, deck[p].c1, share)
        for p, share in zip(msg.positions, msg.shares, strict=True):
            self._shares[p][msg.seat] = share.point
        self._opened[msg.seat].update(msg.positions)
        self._open_turned_up(msg.positions)

    def _open_turned_up(self, positions: Iterable[int]) -> None:
        for p in positions:
            if p not in self._cards and len(self._shares[p]) == self.seats:
                self._open(p, self._shares[p])

    def _request_open(self, positions: Iterable[int]) -> tuple[int, ...]:
        """The checks of ``open``; on success the positions are turned up."""
        if not self._two_handed:
            raise DeckUsageError("only two-handed opens face-down cards")
        if STEP_DEAL not in self._steps_started or self._revealed:
            raise DeckUsageError("cards open between the deal and the reveal")
        wanted = tuple(sorted(set(positions)))
        if not wanted:
            raise DeckUsageError("no position to open")
        for p in wanted:
            if type(p) is not int or not 0 <= p < self.size or p in self._open_to_all:
                raise DeckUsageError(f"position {p!r} is not a face-down position")
            if p in self._requested:
                raise DeckUsageError(f"position {p} is already turned up")
        self._requested.update(wanted)
        return wanted

    def _apply_reveal(self, msg: RevealMessage) -> None:
        try:
            x = group.parse_scalar(msg.secret_key, nonzero=True)
        except group.InvalidScalar as exc:
            raise MalformedDeckMessage(msg.seat, f"secret key: {exc}") from None
        if base_mul(x) != self._keys[msg.seat]:
            raise CommitmentMismatch(msg.seat, "the secret key does not match the key share")
        expected = shuffle_commitment(self.table_id, self.round_number, msg.seat, msg.seed)
        if expected != self._commitments[msg.seat]:
            raise CommitmentMismatch(msg.seat, "the seed does not match the shuffle commitment")
        self._reveals[msg.seat] = (x, msg.seed)

    # -- checks ---------------------------------------------------------------------------

    def _ctx(self, seat: int) -> tuple[bytes, ...]:
        return _context(self.table_id, self.round_number, seat)

    def _parse_proof(self, seat: int, data: bytes) -> Proof:
        try:
            return Proof.from_bytes(data)
        except group.InvalidScalar as exc:
            raise BadProof(seat, f"proof: {exc}") from None

    def _shared_by(self, seat: int, step: int) -> list[int]:
        """The positions ``seat`` publishes a share of in ``step``, in order."""
        return [p for p in self._step_positions[step] if self._step_owner(p) != seat]

    def _step_owner(self, position: int) -> int:
        """Owner at deal time: a card opened to all (the turned card, a two-handed face-up
        card) belongs to nobody then (every seat shares)."""
        if position in self._open_to_all:
            return TURNED
        owner = self.owner_of(position)
        assert owner is not None
        return owner

    def _open_dealt(self, step: int) -> None:
        """Decrypt the positions of ``step`` we may see once all their shares are in: the
        cards opened to all, and a peer's own positions (an observer's seat owns none)."""
        for p in self._step_positions[step]:
            if p in self._cards:
                continue
            shares = self._shares[p]
            if p in self._open_to_all:
                if len(shares) < self.seats:
                    continue
            elif self._step_owner(p) != self.seat or len(shares) < self.seats - 1:
                continue
            else:
                shares = {**shares, self._step_owner(p): self._private[p]}
            self._open(p, shares)

    def _open(self, position: int, shares: Mapping[int, bytes]) -> None:
        """Decrypt a position from its four proven shares and learn its card.

        The final deck is a proven permutation and re-masking of the 32 card points and
        every share is proven, so the result is a card not seen elsewhere; anything else is
        a :class:`DeckInvariantError`.
        """
        point = self._decks[-1][position].c2
        try:
            for s in range(self.seats):
                point = group.sub(point, shares[s])
        except group.InvalidPoint:
            card = None
        else:
            card = card_of_point(point)
            if card not in self._card_set:
                card = None
        if card is None or any(c == card for c in self._cards.values()):
            reason = "does not decrypt to a card" if card is None else f"repeats {card}"
            raise DeckInvariantError(
                f"position {position} {reason} although every shuffle and share is proven"
            )
        self._cards[position] = card

    def _check_share(
        self, seat: int, position: int, key: bytes, c1: bytes, share: DecryptionShare
    ) -> None:
        proof = self._parse_proof(seat, share.proof)
        ctx = (*self._ctx(seat), u8(position))
        try:
            ok = group.verify_share(key, c1, share.point, proof, ctx)
        except group.InvalidPoint:
            raise BadPoint(
                seat, f"the share for position {position} is not a valid point"
            ) from None
        if not ok:
            raise BadProof(seat, f"the share proof for position {position} does not verify")

    # -- audit ----------------------------------------------------------------------------

    def audit(self) -> tuple[Card, ...]:
        """Check the whole round from the revealed secrets; return the 32 cards in order.

        For each shuffle of another seat, in shuffle order, the published deck must be the
        one its revealed seed derives, byte for byte, and its proof the one the seed's
        nonces give (:func:`~belote_p2p.protocol.shuffle.follows_seed`); the first that is
        not raises :class:`BadShuffle` naming its shuffler. Every share was proven on
        receipt, so none is checked again. Keys and seeds were checked against their
        commitments on receipt of the reveals.
        """
        if not self._reveals_complete():
            raise DeckUsageError("the audit needs the four reveals")
        assert self._joint is not None
        revealed = self._secrets()
        x = sum(secret for secret, _ in revealed.values()) % L
        size = self.size
        randomness = [0] * size
        cards = list(range(size))  # indices into the trivial deck
        for k, seat in enumerate(self.shuffle_order):
            seed = revealed[seat][1]
            perm = shuffle_permutation(self.table_id, self.round_number, seat, seed, size)
            masks = shuffle_masks(self.table_id, self.round_number, seat, seed, size)
            randomness = [(randomness[perm[j]] + masks[j]) % L for j in range(size)]
            cards = [cards[perm[j]] for j in range(size)]
            if seat == self.seat:
                continue
            deck = self._decks[k]
            for j, ct in enumerate(deck):
                r = randomness[j]
                if ct.c1 != base_mul(r) or ct.c2 != group.add(
                    self._trivial[cards[j]].c2, base_mul(x * r % L)
                ):
                    raise BadShuffle(seat, f"shuffled deck position {j} does not match the seed")
            inputs = self._decks[k - 1] if k else self._trivial
            ctx = shuffle_proof_context(
                self.table_id, self.round_number, seat, self._commitments[seat]
            )
            if not follows_seed(self._joint, inputs, deck, self._proofs[k], ctx, perm, masks, seed):
                raise BadShuffle(seat, "the proof of shuffle is not the one its seed gives")
        return tuple(self._cards_in_order[c] for c in cards)


class DeckPeer(_DeckRound):
    """One seat's side of the deck protocol for one round (see the module docstring)."""

    seat: int

    def __init__(
        self,
        rules: RuleSet,
        *,
        seat: int,
        dealer: int,
        table_id: bytes,
        round_number: int,
        secret_key: bytes | None = None,
        shuffle_seed: bytes | None = None,
    ) -> None:
        if seat is None:
            raise DeckUsageError("a peer's seat may not be None")
        super().__init__(
            rules, seat=seat, dealer=dealer, table_id=table_id, round_number=round_number
        )
        if secret_key is None:
            self._x = group.random_scalar()
        else:
            try:
                self._x = group.parse_scalar(secret_key, nonzero=True)
            except group.InvalidScalar as exc:
                raise DeckUsageError(f"secret_key: {exc}") from None
        if shuffle_seed is None:
            shuffle_seed = secrets.token_bytes(SEED_SIZE)
        elif not isinstance(shuffle_seed, bytes) or len(shuffle_seed) != SEED_SIZE:
            raise DeckUsageError(f"shuffle_seed must be {SEED_SIZE} bytes")
        self._seed = shuffle_seed
        self._public = base_mul(self._x)
        self._started = False

    # -- reading the view ------------------------------------------------------------------

    @property
    def public_key(self) -> bytes:
        """Our key share ``x·G`` for this round."""
        return self._public

    def hand(self) -> dict[int, Card]:
        """Our cards known so far, by position (played ones included)."""
        return {p: c for p, c in self._cards.items() if self.owner_of(p) == self.seat}

    # -- local actions -------------------------------------------------------------------

    def start(self) -> KeyMessage:
        """Our key share and its proof: the first message of the round."""
        if self._started:
            raise DeckUsageError("start() called twice")
        self._started = True
        self._keys[self.seat] = self._public
        proof = group.prove_key(self._x, self._public, self._ctx(self.seat))
        self._join_keys(self.seat)
        return KeyMessage(self.seat, self._public, proof.to_bytes())

    def set_taker(self, taker: int) -> SharesMessage:
        """Classic: the taker is known; publish our shares of positions 21..31."""
        self._check_taker(taker)
        return self._deal_step(STEP_COMPLETION)

    def open(self, positions: Iterable[int]) -> OpenMessage:
        """Two-handed: the engine turned these face-down positions up; publish our shares
        of them, with proofs. Each opens once every seat's share is in."""
        wanted = self._request_open(positions)
        deck = self._decks[-1]
        shares: list[DecryptionShare] = []
        for p in wanted:
            try:
                share = mul(self._x, deck[p].c1)
            except group.InvalidPoint:
                raise DeckInvariantError(f"final deck position {p} is not valid") from None
            self._shares[p][self.seat] = share
            shares.append(DecryptionShare(share, self._prove_share(p, share)))
        self._opened[self.seat].update(wanted)
        self._drain()
        self._open_turned_up(wanted)
        return OpenMessage(self.seat, wanted, tuple(shares))

    def play(self, position: int) -> PlayMessage:
        """Play our card at ``position``: publish our share and its proof (none where every
        share is out already: the turned card, a two-handed card)."""
        if self._revealed:
            raise DeckUsageError("no play after our reveal")
        if type(position) is not int or self.owner_of(position) != self.seat:
            raise DeckUsageError(f"position {position!r} is not ours")
        if position in self._played:
            raise DeckUsageError(f"position {position} was already played")
        if position not in self._cards:
            raise DeckUsageError(f"the card at position {position} is not dealt yet")
        self._played.append(position)
        if self._shareless(position):
            return PlayMessage(self.seat, position, None)
        share = self._private.pop(position)
        self._shares[position][self.seat] = share
        proof = self._prove_share(position, share)
        return PlayMessage(self.seat, position, DecryptionShare(share, proof))

    def reveal(self) -> RevealMessage:
        """End the round for us: publish our secret key and shuffle seed."""
        if len(self._decks) < self.seats:
            raise DeckUsageError("nothing to reveal before every shuffle is in")
        if self._revealed:
            raise DeckUsageError("reveal() called twice")
        self._revealed = True
        return RevealMessage(self.seat, group.scalar_bytes(self._x), self._seed)

    # -- the protocol's own steps ----------------------------------------------------------

    def _reveals_complete(self) -> bool:
        return self._revealed and len(self._reveals) == self.seats - 1

    def _secrets(self) -> dict[int, tuple[int, bytes]]:
        return {**self._reveals, self.seat: (self._x, self._seed)}

    def _keys_joined(self) -> None:
        if self.shuffle_order[0] == self.seat:
            self._shuffle()

    def _after_shuffle(self) -> None:
        done = len(self._decks)
        if done == self.seats:
            self._deal_step(STEP_DEAL)
        elif self.shuffle_order[done] == self.seat:
            self._shuffle()

    def _shuffle(self) -> None:
        """Permute and re-mask the last deck (the trivial one first) as our seed derives,
        and prove it, with nonces from the same seed."""
        assert self._joint is not None
        joint = self._joint
        seat, seed = self.seat, self._seed
        perm = shuffle_permutation(self.table_id, self.round_number, seat, seed, self.size)
        masks = shuffle_masks(self.table_id, self.round_number, seat, seed, self.size)
        out: list[Ciphertext] = []
        if not self._decks:
            for j in range(self.size):
                r = masks[j]
                point = self._trivial[perm[j]].c2
                out.append(Ciphertext(base_mul(r), group.add(point, mul(r, joint))))
        else:
            deck = self._decks[-1]
            for j in range(self.size):
                r = masks[j]
                ct = deck[perm[j]]
                out.append(
                    Ciphertext(group.add(ct.c1, base_mul(r)), group.add(ct.c2, mul(r, joint)))
                )
        new_deck = tuple(out)
        inputs = self._decks[-1] if self._decks else self._trivial
        commitment = shuffle_commitment(self.table_id, self.round_number, seat, seed)
        ctx = shuffle_proof_context(self.table_id, self.round_number, seat, commitment)
        proof = prove_shuffle(joint, inputs, new_deck, perm, masks, ctx, seed)
        self._decks.append(new_deck)
        self._proofs.append(proof)
        self._commitments[seat] = commitment
        self._outbox.append(ShuffleMessage(seat, commitment, new_deck, proof))
        self._after_shuffle()

    def _prove_share(self, position: int, share: bytes) -> bytes:
        ct = self._decks[-1][position]
        ctx = (*self._ctx(self.seat), u8(position))
        return group.prove_share(self._x, self._public, ct.c1, share, ctx).to_bytes()

    def _deal_step(self, step: int) -> SharesMessage:
        self._steps_started.add(step)
        deck = self._decks[-1]
        shares: list[DecryptionShare] = []
        for p in self._step_positions[step]:
            try:
                share = mul(self._x, deck[p].c1)
            except group.InvalidPoint:
                raise DeckInvariantError(f"final deck position {p} is not valid") from None
            if self._step_owner(p) == self.seat:
                self._private[p] = share
            else:
                self._shares[p][self.seat] = share
                shares.append(DecryptionShare(share, self._prove_share(p, share)))
        self._share_steps.add((step, self.seat))
        msg = SharesMessage(self.seat, step, tuple(shares))
        if step == STEP_DEAL:
            self._outbox.append(msg)
        self._drain()
        self._open_dealt(step)
        return msg


class DeckObserver(_DeckRound):
    """A round's deck seen by someone who holds no seat (``seat`` is ``None``).

    It receives the messages of all four seats, verifies every proof on receipt as a peer
    does (key proofs, shuffle proofs, every decryption share, plays), learns the turned card
    and the cards played, and audits the round once the four reveals are in. It sends
    nothing. See the module docstring.
    """

    seat: None

    def __init__(self, rules: RuleSet, *, dealer: int, table_id: bytes, round_number: int) -> None:
        super().__init__(
            rules, seat=None, dealer=dealer, table_id=table_id, round_number=round_number
        )

    def set_taker(self, taker: int) -> None:
        """Classic: the bidding named the taker; the completion shares may come in.

        Allowed once the four shuffles are in; a held message that this makes usable is
        checked now, so a :class:`DeckError` may be raised.
        """
        self._check_taker(taker)
        self._steps_started.add(STEP_COMPLETION)
        self._drain()

    def open(self, positions: Iterable[int]) -> None:
        """Two-handed: the engine turned these face-down positions up; their shares may
        come in. May raise the :class:`DeckError` of a message it releases."""
        self._request_open(positions)
        self._drain()

    def _ready(self, msg: DeckMessage) -> bool:
        if isinstance(msg, PlayMessage):
            owner = self.owner_of(msg.position)
            if owner is not None and owner != msg.seat:
                return True  # held until the taker was known: refused now (WrongOwner)
        return super()._ready(msg)

    def _reveals_complete(self) -> bool:
        return len(self._reveals) == self.seats

    def _keys_joined(self) -> None:
        pass

    def _after_shuffle(self) -> None:
        if len(self._decks) == self.seats:
            self._steps_started.add(STEP_DEAL)
