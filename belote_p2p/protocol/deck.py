"""The deck protocol: a mental-poker shuffle and deal of the 32 cards, sans-io (version 5).

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

At four seats a seat that leaves becomes a **dummy** whose partner plays its open hand
(DECK.md §17): every seat splits its round key among the other live seats (a
:class:`SplitMessage`, before the deal), so that when a seat is gone the others open its cards
from their pieces (:meth:`DeckPeer.release`); in later rounds the gone seat is *public*: its
secrets are derived from public values and every participant plays its part.

Usage
-----
One :class:`DeckPeer` per seat and round. It does no I/O: the table session hands it the
messages of the other peers and sends what it produces, inside signed envelopes::

    peer = DeckPeer(rules, seat=s, dealer=d, table_id=tid, round_number=n)
    send(peer.start())                      # KeyMessage
    for each message m from another seat:   # in the order each sender sent them
        peer.receive(m)                     # raises a DeckError naming the culprit
        for out in peer.next_messages():    # split, shuffle, decryption shares, when due
            send(out)                       # (after a DeckError too: a complaint)
    peer.known_cards()                      # 32 positions, None where unknown to us
    send(peer.set_taker(t))                 # classic: after the bidding, deals 21..31
    send(peer.play(position))               # our card at that position
    peer.card_at(position)                  # after receive(PlayMessage): the card played
    send(peer.release(g))                   # four seats: seat g is gone; open its cards
    send(peer.play_for(g, position))        # we are g's partner: play its open card
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
``DeckPeer(rules, *, seat, dealer, table_id, round_number, secret_key=None, shuffle_seed=None,
public_seats=frozenset(), overlap=False)``
    ``secret_key`` (32-byte canonical non-zero scalar) and ``shuffle_seed`` (32 bytes) come
    from :mod:`secrets` unless given; given values make a peer deterministic (tests, vectors):
    every message it sends, shuffle proof and key split included, is a function of them and
    of what it received. ``public_seats`` (four seats only, never ``seat``): seats that left
    in an earlier round, whose part every participant computes (DECK.md §17.6).
    ``overlap``: when the shuffle before ours arrives, ours is made at once (in
    :meth:`~DeckPeer.next_messages`) and that one's proof is checked by :meth:`~DeckPeer.work`,
    which the caller runs once ours is sent (DECK.md §4); our shares wait for every check.
``has_work``, ``work() -> None``
    With ``overlap``: a check put off (``work()`` raises the :class:`DeckError` naming a bad
    shuffle's shuffler), or our shuffle's masks times ``(G, X)``, made ahead of our turn. One
    piece per call; then send :meth:`~DeckPeer.next_messages` (our shares, once all is checked).
``start() -> KeyMessage``
    Call once; messages received before it are held.
``receive(msg: DeckMessage) -> None``
    Accepts messages of the other seats in any interleaving (each sender's own messages in
    the order it sent them); a message that cannot be used yet is held until it can.
    Raises a :class:`DeckError` subclass when a message is wrong, naming the seat to blame
    (``seat`` is always that seat); the message is then dropped. A holder whose key piece is
    wrong raises :class:`BadSplit` naming the splitter and puts a :class:`ComplaintMessage`
    in :meth:`~DeckPeer.next_messages`: send it, so that the others can name the splitter.
    Any ``DeckError`` ends the round: the session aborts it and, if the peers still
    cooperate, exchanges reveals and calls :meth:`~DeckPeer.audit`.
``next_messages() -> list[DeckMessage]``
    The messages this peer produced on its own (its split, its shuffle, its decryption
    shares, a complaint, the release of positions dealt after :meth:`~DeckPeer.release`),
    once.
``set_taker(taker: int) -> SharesMessage``
    Classic only, after the first deal: the completion (positions 21..31) starts.
``open(positions) -> OpenMessage``
    Two-handed only, when the engine turned face-down positions up (``pending_openings``):
    publishes our shares of them; each opens once every seat's share is in. No share of a
    face-down position is published before (DECK.md §16).
``play(position: int) -> PlayMessage``
    Publishes our share for one of our positions; every peer learns the card.
``release(gone) -> ReleaseMessage``
    Four seats: seat ``gone`` left; our shares of our piece of its key for every position
    dealt so far (later ones follow in ``next_messages``). Once every holder's are in, its
    cards open to all. ``can_release(gone)`` says whether it may. Implies ``set_gone``.
``set_gone(gone)``
    Four seats: seat ``gone`` left (the session decided it); its reveal is no longer
    awaited: the audit rebuilds its key from the pieces every other reveal carries. A peer
    and an observer alike; no message.
``play_for(gone, position) -> PlayMessage``
    We are the partner of the dummy ``gone``: play its open card (no share).
``reveal() -> RevealMessage``
    Our secret key and shuffle seed, and (four seats) our pieces of every other live seat's
    key; allowed once the four shuffles (and every split) are in. After it,
    :meth:`~DeckPeer.play` is refused.
``audit() -> tuple[Card, ...]``
    Once the four reveals are in: checks every other shuffle against its revealed seed
    (its verified proof must be the seed's, which pins its deck too), then returns the 32
    cards in deck order (hand them to the engine's audit).
``waiting_for() -> frozenset[int]``
    Seats that owe the next message (for deadlines and abandonment); empty while waiting
    for the local session (bidding, plays) or when done.
``hand()``, ``hand_of(seat)``, ``known_cards()``, ``card_at(p)``, ``turned_card()``,
``played()``, ``positions_of(seat)``, ``owner_of(p)``, ``released_seats``, ``public_seats``,
``phase``, ``joint_key``, ``public_key``
    Read the peer's view.

``DeckObserver(rules, *, dealer, table_id, round_number, public_seats=frozenset())``
    The same view without a seat (``seat`` is ``None``; no ``hand()``, ``start()``,
    ``play()`` or ``reveal()``). ``receive()`` takes the messages of all four seats, held
    as a peer holds them, and verifies what a peer verifies: key proofs, every shuffle proof,
    every decryption share, plays and their owner. ``set_taker(taker)`` returns nothing
    (classic; allowed once the four shuffles are in) and may raise the :class:`DeckError` of
    a message it releases. ``next_messages()`` is always empty. ``phase`` and
    ``waiting_for()`` mean what they mean for a peer, over the four seats: ``AUDITABLE`` once
    the reveals that are owed are in (a gone or public seat owes none).
    ``known_cards()`` never holds more than the turned card, the cards played and a dummy's
    open hand. ``audit()`` checks every shuffle whose seed is revealed.

Message types (frozen dataclasses; ``to_wire()`` gives a msgpack-ready ``dict`` with
``bytes`` fields, ``from_wire(data, sender)`` parses strictly and raises
:class:`MalformedDeckMessage` naming ``sender``, the seat of the envelope that carried it):
:class:`KeyMessage`, :class:`ShuffleMessage` (with its
:class:`~belote_p2p.protocol.shuffle.ShuffleProof`), :class:`SharesMessage`,
:class:`PlayMessage`, :class:`RevealMessage`, :class:`OpenMessage`, :class:`SplitMessage`
(its :class:`KeyPiece` entries), :class:`ComplaintMessage`, :class:`ReleaseMessage`;
:func:`message_from_wire`,
:func:`encode_message` and :func:`decode_message` (canonical msgpack,
:mod:`belote_p2p.protocol.wire`) dispatch on the ``type`` field.

Errors: :class:`DeckError` (a peer misbehaved: ``seat``, ``reason``) with subclasses
:class:`MalformedDeckMessage`, :class:`UnexpectedMessage`, :class:`BadPoint`, :class:`BadProof`,
:class:`BadShuffle`, :class:`CommitmentMismatch`, :class:`WrongOwner`, :class:`BadSplit`,
:class:`FalseComplaint`;
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
from belote_p2p.game.rules import RuleSet, Variant, partner_of

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
PUBLIC_KEY_LABEL = b"public-key"
PUBLIC_SEED_LABEL = b"public-seed"
SPLIT_PIECE_LABEL = b"split-piece"
SPLIT_NONCE_LABEL = b"split-nonce"
SPLIT_PAD_LABEL = b"split-pad"
COMPLAINT_LABEL = b"complaint"
RELEASE_LABEL = b"release"
PIECE_SIZE = 96
"""A split entry: the piece's commitment ``S``, the ephemeral point ``R`` and the
encrypted piece, 32 bytes each."""
HELD_PIECE_SIZE = 33
"""A revealed piece: the seat it is a piece of, then the scalar."""


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
    """A play at a deck position that was not dealt to the player (nor to a dummy whose
    partner it is)."""


class BadSplit(DeckError):
    """A key split whose commitments do not add up to the key, or (shown by its holder's
    complaint) whose encrypted piece does not match its commitment: names the splitter."""


class FalseComplaint(DeckError):
    """A complaint about a piece that does match its commitment: names the complainer."""


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


NO_PUBLIC_SEAT: frozenset[int] = frozenset()


def public_mask(public_seats: Iterable[int]) -> int:
    """The byte that names a round's public seats in every context: bit ``s`` for seat
    ``s`` (0 for a round without one)."""
    return sum(1 << s for s in set(public_seats))


def _context(
    table_id: bytes, round_number: int, seat: int, public_seats: Iterable[int] = NO_PUBLIC_SEAT
) -> tuple[bytes, ...]:
    """``ctx(seat)``: table, round, seat and the round's public seats. The public seats are
    part of every hash, so that a round dealt again with a seat public shares no hash, key
    proof or shuffle with its first deal."""
    return (table_id, u32(round_number), u8(seat), u8(public_mask(public_seats)))


def shuffle_proof_context(
    table_id: bytes,
    round_number: int,
    seat: int,
    commitment: bytes,
    *,
    public_seats: Iterable[int] = NO_PUBLIC_SEAT,
) -> tuple[bytes, ...]:
    """What a shuffle proof is bound to besides the key and the decks: table, round, the
    shuffler's seat, the public seats and its seed commitment (every field of the shuffle
    message)."""
    return (*_context(table_id, round_number, seat, public_seats), commitment)


def shuffle_commitment(
    table_id: bytes,
    round_number: int,
    seat: int,
    seed: bytes,
    *,
    public_seats: Iterable[int] = NO_PUBLIC_SEAT,
) -> bytes:
    """The 32-byte commitment to a shuffle seed published with the shuffled deck."""
    parts = (*_context(table_id, round_number, seat, public_seats), seed)
    return group.transcript_hash(COMMITMENT_LABEL, *parts)[:COMMITMENT_SIZE]


def shuffle_permutation(
    table_id: bytes,
    round_number: int,
    seat: int,
    seed: bytes,
    size: int = DECK_SIZE,
    *,
    public_seats: Iterable[int] = NO_PUBLIC_SEAT,
) -> tuple[int, ...]:
    """``perm`` with output position ``j`` taking input position ``perm[j]``.

    Fisher–Yates driven by the SHAKE-256 stream of the seed, one byte per draw, bytes at or
    above the largest multiple of the range rejected so that every index is uniform.
    """
    parts = (*_context(table_id, round_number, seat, public_seats), seed)
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
    table_id: bytes,
    round_number: int,
    seat: int,
    seed: bytes,
    size: int = DECK_SIZE,
    *,
    public_seats: Iterable[int] = NO_PUBLIC_SEAT,
) -> tuple[int, ...]:
    """The re-masking scalar of each output position of a shuffle."""
    ctx = (*_context(table_id, round_number, seat, public_seats), seed)
    return tuple(group.hash_to_scalars(MASK_LABEL, ctx, map(u8, range(size))))


def public_secrets(
    table_id: bytes, round_number: int, seat: int, public_seats: Iterable[int]
) -> tuple[int, bytes]:
    """A public seat's secret key and shuffle seed, which every participant derives alike:
    ``Hs("public-key", ctx(seat))`` and ``H("public-seed", ctx(seat))[0..32]``."""
    ctx = _context(table_id, round_number, seat, public_seats)
    x = group.hash_to_scalar(PUBLIC_KEY_LABEL, *ctx)
    if x == 0:  # probability 2^-252
        raise DeckInvariantError(f"seat {seat}'s public key is zero")
    return x, group.transcript_hash(PUBLIC_SEED_LABEL, *ctx)[:SEED_SIZE]


def split_pieces(x: int, context: tuple[bytes, ...], count: int) -> tuple[int, ...]:
    """``count`` non-zero pieces that add up to ``x`` mod ``L``, derived from ``x`` (the
    split is a function of the secret key, like its proofs): ``count - 1`` are
    ``Hs("split-piece", sc(x), ctx(i), u8(k))``, the last one the rest."""
    pieces = [
        group.hash_to_scalar(SPLIT_PIECE_LABEL, group.scalar_bytes(x), *context, u8(k))
        for k in range(count - 1)
    ]
    pieces.append((x - sum(pieces)) % L)
    if any(piece == 0 for piece in pieces):  # probability about 2^-250
        raise DeckInvariantError("a key piece is zero")
    return tuple(pieces)


def split_pad(context: tuple[bytes, ...], holder: int, r_point: bytes, dh: bytes) -> int:
    """The one-time pad of the piece for ``holder``: ``Hs("split-pad", ctx(i), u8(j), R,
    D)``, ``D = r·X_j = x_j·R`` the Diffie–Hellman point of the splitter and the holder."""
    return group.hash_to_scalar(SPLIT_PAD_LABEL, *context, u8(holder), r_point, dh)


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


@dataclass(frozen=True, slots=True)
class _ShufflePlan:
    """A shuffle's permutation and masks, and each mask times ``(G, X)``: all a shuffle
    needs before its input deck is known (the proof's nonces depend on the decks)."""

    perm: tuple[int, ...]
    masks: tuple[int, ...]
    offsets: tuple[tuple[bytes, bytes], ...]

    def remask(self, inputs: tuple[Ciphertext, ...]) -> tuple[Ciphertext, ...]:
        """The shuffled deck: output ``j`` is ``inputs[perm[j]] + r_j·(G, X)`` (an identity
        ``c1``, the trivial deck's, takes no addition: ``O + P`` is ``P``)."""
        return tuple(
            Ciphertext(
                g_r if ct.c1 == group.IDENTITY else group.add(ct.c1, g_r), group.add(ct.c2, x_r)
            )
            for ct, (g_r, x_r) in zip([inputs[i] for i in self.perm], self.offsets, strict=True)
        )


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
    """A peer's secret key and shuffle seed, published when the round is over, with the
    pieces it holds of every other live seat's key (``(seat, sc(piece))`` by increasing
    seat; four seats only), from which the audit rebuilds the key of a seat that left
    without revealing."""

    TYPE: ClassVar[str] = "deck.reveal"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "secret_key", "seed", "pieces"})

    seat: int
    secret_key: bytes
    seed: bytes
    pieces: tuple[tuple[int, bytes], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "secret_key": self.secret_key,
            "seed": self.seed,
            "pieces": [u8(g) + piece for g, piece in self.pieces],
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> RevealMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        raw = w.bin_list("pieces", HELD_PIECE_SIZE, 0, SEATS - 1)
        pieces = tuple((entry[0], entry[1:]) for entry in raw)
        seats = [g for g, _ in pieces]
        if any(g >= SEATS or g == seat for g in seats) or seats != sorted(set(seats)):
            raise w.fail("'pieces' must name other seats, in increasing order")
        return cls(seat, w.bin("secret_key", 32), w.bin("seed", SEED_SIZE), pieces)


@dataclass(frozen=True, slots=True)
class KeyPiece:
    """One piece of a split key: ``S = s·G``, ``R = r·G`` and ``ct = s + pad mod L``
    (:func:`split_pad`), 32 bytes each."""

    commitment: bytes
    ephemeral: bytes
    encrypted: bytes

    def to_bytes(self) -> bytes:
        return self.commitment + self.ephemeral + self.encrypted

    @classmethod
    def from_bytes(cls, data: bytes) -> KeyPiece:
        return cls(data[:32], data[32:64], data[64:])


@dataclass(frozen=True, slots=True)
class SplitMessage:
    """A seat's key split among the other live seats (four seats only): one
    :class:`KeyPiece` per other live seat, by increasing seat, the pieces adding up to the
    sender's secret key. A gone seat's cards open from its pieces (:class:`ReleaseMessage`)."""

    TYPE: ClassVar[str] = "deck.split"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "pieces"})

    seat: int
    pieces: tuple[KeyPiece, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "pieces": [piece.to_bytes() for piece in self.pieces],
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> SplitMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        pieces = w.bin_list("pieces", PIECE_SIZE, 1, SEATS - 1)
        return cls(seat, tuple(KeyPiece.from_bytes(p) for p in pieces))


@dataclass(frozen=True, slots=True)
class ComplaintMessage:
    """A holder's proof that the piece ``splitter`` sent it does not match its commitment:
    ``D = x_j·R`` and the Chaum–Pedersen proof that ``log_G X_j = log_R D``, from which
    every participant decrypts the piece and sees who lied."""

    TYPE: ClassVar[str] = "deck.complaint"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "splitter", "point", "proof"})

    seat: int
    splitter: int
    point: bytes
    proof: bytes

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "splitter": self.splitter,
            "point": self.point,
            "proof": self.proof,
        }

    @classmethod
    def from_wire(cls, data: object, sender: int) -> ComplaintMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        splitter = w.uint("splitter", SEATS - 1)
        return cls(seat, splitter, w.bin("point", 32), w.bin("proof", group.PROOF_SIZE))


@dataclass(frozen=True, slots=True)
class ReleaseMessage:
    """A live seat's decryption shares of a gone seat's key piece: for each listed position
    ``p`` (strictly increasing), ``s_gj·c1_p`` with its Chaum–Pedersen proof against the
    piece's commitment ``S_gj``. Once every holder's are in, the gone seat's share of each
    position is their sum: its cards open to everybody, and the others' cards need nothing
    more of it."""

    TYPE: ClassVar[str] = "deck.release"
    FIELDS: ClassVar[frozenset[str]] = frozenset({"type", "seat", "gone", "positions", "shares"})

    seat: int
    gone: int
    positions: tuple[int, ...]
    shares: tuple[DecryptionShare, ...]

    def to_wire(self) -> dict[str, Any]:
        return _positioned_wire(self.TYPE, self.seat, self.positions, self.shares, gone=self.gone)

    @classmethod
    def from_wire(cls, data: object, sender: int) -> ReleaseMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        gone = w.uint("gone", SEATS - 1)
        return cls(seat, gone, *_positioned_shares(w, 0))


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
        return _positioned_wire(self.TYPE, self.seat, self.positions, self.shares)

    @classmethod
    def from_wire(cls, data: object, sender: int) -> OpenMessage:
        w = _open_wire(data, cls.TYPE, cls.FIELDS, sender)
        seat = _seat_of(w)
        return cls(seat, *_positioned_shares(w, 1))


def _positioned_wire(
    kind: str,
    seat: int,
    positions: tuple[int, ...],
    shares: tuple[DecryptionShare, ...],
    **more: int,
) -> dict[str, Any]:
    """The wire map of an open or release message (a release's ``gone`` in ``more``)."""
    return {
        "type": kind,
        "seat": seat,
        **more,
        "positions": list(positions),
        "shares": [s.to_bytes() for s in shares],
    }


def _positioned_shares(
    w: _Wire, min_count: int
) -> tuple[tuple[int, ...], tuple[DecryptionShare, ...]]:
    """The ``positions`` of an open or release message and a share for each."""
    positions = _positions(w, min_count)
    shares = w.bin_list("shares", SHARE_SIZE, len(positions), len(positions))
    return positions, tuple(DecryptionShare.from_bytes(s) for s in shares)


def _positions(w: _Wire, min_count: int) -> tuple[int, ...]:
    """The strictly increasing ``positions`` list of an open or release message."""
    raw = w.data["positions"]
    if type(raw) not in (list, tuple) or not min_count <= len(raw) <= DECK_SIZE:
        raise w.fail(f"'positions' must be a list of {min_count}..{DECK_SIZE} positions")
    positions: list[int] = []
    for value in raw:
        if type(value) is not int or not 0 <= value < DECK_SIZE:
            raise w.fail(f"'positions' must hold integers in 0..{DECK_SIZE - 1}")
        if positions and value <= positions[-1]:
            raise w.fail("'positions' must be strictly increasing")
        positions.append(value)
    return tuple(positions)


DeckMessage: TypeAlias = (
    KeyMessage
    | ShuffleMessage
    | SharesMessage
    | PlayMessage
    | RevealMessage
    | OpenMessage
    | SplitMessage
    | ComplaintMessage
    | ReleaseMessage
)
_MESSAGE_CLASSES = (
    KeyMessage,
    ShuffleMessage,
    SharesMessage,
    PlayMessage,
    RevealMessage,
    OpenMessage,
    SplitMessage,
    ComplaintMessage,
    ReleaseMessage,
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
    """Four seats: the key splits; then decryption shares of the first deal step."""
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
    whose shares are all in and runs the audit. It also plays the public seats' part (their
    secrets are public: every participant computes their shuffles and shares alike).
    :class:`DeckPeer` adds a seat's secrets and the messages they produce;
    :class:`DeckObserver` holds no seat.
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
        public_seats: Iterable[int] = NO_PUBLIC_SEAT,
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
        public = frozenset(public_seats)
        if public:
            if seats != SEATS:
                raise DeckUsageError("only a four-seat table has public seats (dummies)")
            if not all(type(g) is int and 0 <= g < seats for g in public):
                raise DeckUsageError(f"public_seats must be seats 0..{seats - 1}")
            if len(public) > seats - 2 or seat in public:
                raise DeckUsageError("at least two live seats, ours among them, deal a round")
        self.rules = rules
        self.seat = seat
        self.dealer = dealer
        self.table_id = table_id
        self.round_number = round_number
        self.seats = seats
        """How many peers shuffle and deal (4, 3 or 2)."""
        self.public_seats = public
        """Seats whose secrets are public this round (dummies of an earlier round)."""
        self.live_seats = tuple(s for s in range(seats) if s not in public)
        """The seats that hold secrets this round."""
        self.size = deck_size(rules)
        """How many cards the deck holds (32 or 24)."""
        self.shuffle_order = shuffle_order(dealer, seats)
        # ctx(seat) of every seat, in every share proof and key proof of the round.
        self._contexts = tuple(_context(table_id, round_number, s, public) for s in range(seats))
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
        # A peer made with overlap=True: received shuffles whose proof is still to check, as
        # (index in _decks, message). Our own shuffle is built on such a deck at once and the
        # proof checked once ours is out (work()); nothing else uses the deck before.
        self._overlap = False
        self._unchecked: list[tuple[int, ShuffleMessage]] = []
        # Our own shuffle's permutation, masks and r_j·(G, X), made ahead by work().
        self._plan: _ShufflePlan | None = None
        # Published shares by position then seat, a peer's own included, each one proven
        # (or computed: a public seat's, a released seat's from its pieces).
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

        # Public seats: their secret key and seed, which everybody derives.
        self._public_secrets = {
            g: public_secrets(table_id, round_number, g, public) for g in sorted(public)
        }
        for g, (x, _) in self._public_secrets.items():
            self._keys[g] = base_mul(x)
        # Key splitting (four seats, three live ones or more): by splitter, the split and
        # the commitment of each holder's piece; a peer's own pieces of the others' keys.
        self._splitting = seats == SEATS and len(self.live_seats) >= 3
        self._splits: dict[int, SplitMessage] = {}
        self._piece_keys: dict[int, dict[int, bytes]] = {}
        self._held: dict[int, int] = {}
        # Releases: seats some release was seen (or made) of, and for a peer the ones it
        # released itself; the seats the caller said left (set_gone, release); by gone seat
        # and position, each holder's proven share of its piece; by (gone, holder), the
        # positions released; by seat and holder, the pieces revealed at the end.
        self._release_started: set[int] = set()
        self._releasing: set[int] = set()
        self._releasers: set[tuple[int, int]] = set()  # (holder, gone): a release came or was made
        self._left: set[int] = set()
        self._pieces: dict[int, list[dict[int, bytes]]] = {}
        self._released: dict[tuple[int, int], set[int]] = {}
        self._revealed_pieces: dict[int, dict[int, int]] = {}

    # -- what differs between a peer and an observer ---------------------------------------

    @abstractmethod
    def _reveals_complete(self) -> bool:
        """Every reveal that is owed is in (a peer's own included)."""

    @abstractmethod
    def _start_step(self, step: int) -> None:
        """A deal step may start: its final deck is in (and, for the deal, every split)."""

    @abstractmethod
    def _split_own(self) -> None:
        """The joint key was just formed: a peer splits its key."""

    @abstractmethod
    def _took_split(self, msg: SplitMessage, holders: list[int]) -> None:
        """A split was accepted: a peer that holds a piece of it decrypts and checks it."""

    def _shuffle(self) -> None:
        """A peer's own shuffle, when its turn comes (an observer never shuffles)."""
        raise DeckInvariantError("an observer has no shuffle of its own")

    def _secrets(self) -> dict[int, tuple[int, bytes | None]]:
        """Every seat's secret key and seed, for the audit (a released seat that did not
        reveal: its key rebuilt from its pieces, no seed)."""
        out: dict[int, tuple[int, bytes | None]] = {**self._reveals}
        out.update(self._public_secrets)
        for g in range(self.seats):
            if g not in out:
                out[g] = (self._rebuilt_key(g), None)
        return out

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
        if len(self._decks) < self.seats or self._unchecked:
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
    def released_seats(self) -> frozenset[int]:
        """Seats released this round whose every dealt position is open to everybody:
        every holder of a piece of their key published its shares (:class:`ReleaseMessage`)."""
        dealt = self._dealt_positions()
        return frozenset(
            g
            for g in self._gone_seats()
            if all(dealt <= self._released[g, j] for j in self._piece_keys[g])
        )

    def _gone_seats(self) -> frozenset[int]:
        """Seats that every holder of their pieces released (each sent a release, even
        an empty one): gone, by the agreement of all who could open their cards anyway.
        They owe nothing more, and their reveal is rebuilt from their pieces. A release
        that some holders sent and others did not yet changes nothing of this."""
        return frozenset(
            g
            for g in self._release_started
            if g in self._piece_keys and all((g, j) in self._released for j in self._piece_keys[g])
        )

    def _excused(self) -> frozenset[int]:
        """Seats that owe nothing more: released by every holder, or said gone by the
        caller (:meth:`set_gone`, :meth:`DeckPeer.release`)."""
        return self._gone_seats() | self._left

    def set_gone(self, gone: int) -> None:
        """Seat ``gone`` left (the table session decided it, ``PROTOCOL.md`` §6.7): it owes
        nothing more, its reveal is not awaited, and the audit rebuilds its key from the
        pieces the other reveals carry (DECK.md §8). Its cards open only with the holders'
        releases (:meth:`DeckPeer.release`). Four seats, ``gone`` a live seat whose split
        is in."""
        if not (self._splitting and gone in self.live_seats and gone in self._piece_keys):
            raise DeckUsageError(f"seat {gone!r} has no split key to rebuild")
        if gone == self.seat:
            raise DeckUsageError("a peer that leaves stops: it is not told so")
        self._left.add(gone)

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

    def hand_of(self, seat: int) -> dict[int, Card]:
        """The cards of ``seat`` this view knows, by position: a dummy's (public or
        released) open hand, our own hand, or the cards a seat played."""
        return {p: self._cards[p] for p in self.positions_of(seat) if p in self._cards}

    def card_at(self, position: int) -> Card | None:
        """The card at a position if this view knows it (a peer's own, turned, played, or
        a dummy's)."""
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
        plays) or when done. Public seats and gone ones owe nothing; the holders of a
        released seat's pieces owe their release."""
        gone = self._excused()
        others = [s for s in self.live_seats if s != self.seat and s not in gone]
        if self._reveals or self._revealed:
            return frozenset(s for s in others if s not in self._reveals)
        if self._joint is None:
            return frozenset(s for s in others if s not in self._keys)
        if len(self._decks) < self.seats:
            return frozenset({self.shuffle_order[len(self._decks)]})
        if self._splitting:
            missing = frozenset(s for s in others if s not in self._splits)
            if missing:
                return missing
        for step in (STEP_DEAL, STEP_COMPLETION):
            if step not in self._steps_started:
                return frozenset()
            missing = frozenset(s for s in others if (step, s) not in self._share_steps)
            missing |= self._release_debt(gone, self._step_positions[step], others)
            if missing:
                return missing
            if not self._has_completion:
                break
        return frozenset(s for s in others if not self._requested <= self._opened[s])

    def _release_debt(
        self, gone: Iterable[int], positions: Iterable[int], others: list[int]
    ) -> frozenset[int]:
        """The holders among ``others`` that did not release every one of ``positions`` of
        the ``gone`` seats."""
        wanted = set(positions)
        return frozenset(
            j
            for g in gone
            for j in self._piece_keys.get(g, {})
            if j in others and not wanted <= self._released.get((g, j), set())
        )

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

    def _dealt_positions(self) -> set[int]:
        """The positions of the deal steps started so far."""
        return {p for step in self._steps_started for p in self._step_positions[step]}

    def _plays_for(self, owner: int, seat: int) -> bool:
        """``seat`` may play the cards of ``owner``: it is the partner of a dummy, public
        this round, or released by ``seat`` itself (DECK.md §17.5: the partner holds a
        piece of the dummy's key, and its own release of it comes before its plays of the
        dummy's cards, in its own order; a play before it is refused, never held)."""
        if self.seats != SEATS or seat != partner_of(owner):
            return False
        return owner in self.public_seats or (seat, owner) in self._releasers

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
        if msg.seat in self.public_seats:
            raise UnexpectedMessage(msg.seat, "a public seat sends nothing: everybody plays it")
        self._admit(msg)
        self._pending.append(msg)
        self._drain()

    def _admit(self, msg: DeckMessage) -> None:
        """Checks that need no state the message may be waiting for: duplicates, steps,
        ownership where it is already known."""
        slot: tuple[object, ...]
        if isinstance(msg, ShuffleMessage) and len(msg.deck) != self.size:
            raise MalformedDeckMessage(msg.seat, f"a shuffled deck holds {self.size} cards")
        if isinstance(msg, (SplitMessage, ComplaintMessage, ReleaseMessage)) and not (
            self._splitting
        ):
            raise UnexpectedMessage(msg.seat, "no key is split at this table or round")
        if isinstance(msg, SharesMessage):
            if msg.step == STEP_COMPLETION and not self._has_completion:
                raise UnexpectedMessage(
                    msg.seat, f"{self.rules.variant.value} has no completion step"
                )
            slot = ("shares", msg.seat, msg.step)
        elif isinstance(msg, OpenMessage):
            self._admit_open(msg)
            return
        elif isinstance(msg, ReleaseMessage):
            self._admit_release(msg)
            return
        elif isinstance(msg, ComplaintMessage):
            slot = ("complaint", msg.seat, msg.splitter)
        elif isinstance(msg, PlayMessage):
            if msg.position >= self.size:
                raise MalformedDeckMessage(msg.seat, f"no deck position {msg.position}")
            owner = self.owner_of(msg.position)
            if owner is not None and owner != msg.seat and not self._plays_for(owner, msg.seat):
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

    def _admit_release(self, msg: ReleaseMessage) -> None:
        """A release is of another seat that holds secrets, and lists exactly the positions
        of the deal steps its sender shared before it (its ``deck.shares``, in its own
        order) that no earlier release of the seat by it listed (DECK.md §17.4). From its
        arrival on, the gone seat's partner, if it sent it, may play its cards (a play is
        held until the card opens, which takes every holder's release)."""
        g = msg.gone
        if g == msg.seat or g in self.public_seats:
            raise UnexpectedMessage(msg.seat, f"seat {g} has no key to release")
        for p in msg.positions:
            if p >= self.size:
                raise MalformedDeckMessage(msg.seat, f"no deck position {p}")
            if ("release", msg.seat, g, p) in self._seen:
                raise UnexpectedMessage(msg.seat, f"a second release of position {p}")
        shared = [
            p
            for step in (STEP_DEAL, STEP_COMPLETION)
            if ("shares", msg.seat, step) in self._seen
            for p in self._step_positions[step]
        ]
        owed = sorted(p for p in shared if ("release", msg.seat, g, p) not in self._seen)
        if list(msg.positions) != owed:
            raise MalformedDeckMessage(
                msg.seat,
                f"a release of seat {g} lists the positions of the deal steps it shared and "
                f"did not release yet ({len(owed)}), not {len(msg.positions)}",
            )
        self._seen.update(("release", msg.seat, g, p) for p in msg.positions)
        self._release_started.add(g)
        self._releasers.add((msg.seat, g))

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
        if isinstance(msg, SplitMessage):
            return self._joint is not None
        if isinstance(msg, ComplaintMessage):
            return msg.splitter in self._splits
        if isinstance(msg, ReleaseMessage):
            return msg.gone in self._piece_keys and self._dealt_positions().issuperset(
                msg.positions
            )
        if isinstance(msg, SharesMessage):
            return msg.step in self._steps_started
        if isinstance(msg, OpenMessage):
            return STEP_DEAL in self._steps_started and self._requested.issuperset(msg.positions)
        if isinstance(msg, RevealMessage):
            # Its pieces are checked against the splits' commitments.
            return len(self._decks) == self.seats and self._splits_in()
        if isinstance(msg, PlayMessage):
            owner = self.owner_of(msg.position)
            if owner is None:
                return False
            if owner != msg.seat or self._shareless(msg.position):
                return msg.position in self._cards  # a dummy's card: once it is open
            shares = self._shares[msg.position]
            return all(s in shares for s in range(self.seats) if s != owner)
        return len(self._decks) == self.seats and not self._unchecked

    def _splits_in(self) -> bool:
        """Every live seat's split is in (or none is made at this table or round)."""
        return not self._splitting or all(g in self._splits for g in self.live_seats)

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
        elif isinstance(msg, SplitMessage):
            self._apply_split(msg)
        elif isinstance(msg, ComplaintMessage):
            self._apply_complaint(msg)
        elif isinstance(msg, ReleaseMessage):
            self._apply_release(msg)
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
            self._split_own()
            self._progress()

    def _progress(self) -> None:
        """Take the steps that are due once keys, shuffles or splits came in: the public
        seats' shuffles and a peer's own, in shuffle order; then the deal, once every
        shuffle and every split is in."""
        while len(self._decks) < self.seats:
            shuffler = self.shuffle_order[len(self._decks)]
            if shuffler in self._public_secrets:
                self._add_shuffle(shuffler, self._public_secrets[shuffler][1])
            elif shuffler == self.seat:
                self._shuffle()
            else:
                return
        if STEP_DEAL not in self._steps_started and not self._unchecked and self._splits_in():
            self._start_step(STEP_DEAL)

    def _add_shuffle(self, seat: int, seed: bytes) -> ShuffleMessage:
        """Permute and re-mask the last deck (the trivial one first) as ``seed`` derives,
        and prove it, with nonces from the same seed: a peer's own shuffle, or a public
        seat's (which every participant computes alike)."""
        assert self._joint is not None
        plan = self._plan if seat == self.seat and self._plan is not None else None
        if plan is None:
            plan = self._shuffle_plan(seat, seed)
        inputs = self._decks[-1] if self._decks else self._trivial
        new_deck = plan.remask(inputs)
        joint, public = self._joint, self.public_seats
        rnd, tid = self.round_number, self.table_id
        commitment = shuffle_commitment(tid, rnd, seat, seed, public_seats=public)
        ctx = shuffle_proof_context(tid, rnd, seat, commitment, public_seats=public)
        proof = prove_shuffle(joint, inputs, new_deck, plan.perm, plan.masks, ctx, seed)
        self._decks.append(new_deck)
        self._proofs.append(proof)
        self._commitments[seat] = commitment
        return ShuffleMessage(seat, commitment, new_deck, proof)

    def _begin_step(self, step: int) -> None:
        """A deal step starts: the public seats' shares of all its positions are computed
        (their own positions' included: a public seat's cards open to everybody)."""
        self._steps_started.add(step)
        deck = self._decks[-1]
        for g, (x, _) in self._public_secrets.items():
            for p in self._step_positions[step]:
                try:
                    self._shares[p][g] = mul(x, deck[p].c1)
                except group.InvalidPoint:
                    raise DeckInvariantError(f"final deck position {p} is not valid") from None
            self._share_steps.add((step, g))

    def _apply_shuffle(self, msg: ShuffleMessage) -> None:
        """Verify the proof against the previous deck (the trivial one for the first shuffle)
        before anything uses this deck; or, for a peer made with ``overlap`` whose own shuffle
        comes next, build that one on the deck first and leave the check to :meth:`work`
        (DECK.md §4): nothing else uses the deck before it is checked, and a bad proof still
        names its shuffler."""
        index = len(self._decks)
        # Our shuffle needs only points it can add to (64 decodings, not a proof's check).
        deferred = (
            self._overlap
            and self._builds_on(index)
            and all(is_valid_point(ct.c1) and is_valid_point(ct.c2) for ct in msg.deck)
        )
        if not deferred:
            self._check_shuffles()  # those before it first
            self._check_shuffle(index, msg)
        self._decks.append(msg.deck)
        self._proofs.append(msg.proof)
        self._commitments[msg.seat] = msg.commitment
        if deferred:
            self._unchecked.append((index, msg))
        self._progress()

    def _builds_on(self, index: int) -> bool:
        """Our own shuffle is the next live seat's after deck ``index`` (public seats'
        shuffles, computed by everybody, may come between)."""
        later = [s for s in self.shuffle_order[index + 1 :] if s not in self.public_seats]
        return bool(later) and later[0] == self.seat

    def _check_shuffle(self, index: int, msg: ShuffleMessage) -> None:
        """Verify shuffle ``index``'s proof against the deck before it. The verification
        puts every point of the deck and of the proof through a multiplication, whose
        decoding validates it, so a deck that is accepted holds only valid points."""
        assert self._joint is not None
        inputs = self._decks[index - 1] if index else self._trivial
        ctx = shuffle_proof_context(
            self.table_id,
            self.round_number,
            msg.seat,
            msg.commitment,
            public_seats=self.public_seats,
        )
        try:
            ok = verify_shuffle(self._joint, inputs, msg.deck, msg.proof, ctx)
        except ShuffleProofUsageError as exc:
            raise DeckInvariantError(f"an accepted deck or the key is invalid: {exc}") from exc
        if not ok:
            where = invalid_point(msg.deck, msg.proof)
            if where is not None:
                raise BadPoint(msg.seat, f"the shuffle's {where} is not a valid point")
            raise BadShuffle(msg.seat, "the proof of shuffle does not verify")

    def _check_shuffles(self) -> bool:
        """Check every shuffle left unchecked, in order; True if there was one. A bad one
        drops its deck and every deck built on it (our own shuffle's included) and raises
        the :class:`DeckError` naming its shuffler."""
        if not self._unchecked:
            return False
        while self._unchecked:
            index, msg = self._unchecked[0]
            try:
                self._check_shuffle(index, msg)
            except DeckError:
                for seat in self.shuffle_order[index : len(self._decks)]:
                    self._commitments.pop(seat, None)
                del self._decks[index:], self._proofs[index:]
                self._unchecked.clear()
                self._overlap = False  # the round is over: no more work
                raise
            del self._unchecked[0]
        return True

    @property
    def has_work(self) -> bool:
        """Work put off so that our messages leave first (see :meth:`work`)."""
        return bool(self._unchecked) or self._plan_due()

    def work(self) -> None:
        """One piece of the work put off: the checks of the shuffles our own one was built
        on (raising the :class:`DeckError` that names a bad one's shuffler; the deal then
        goes on, our shares follow in :meth:`next_messages`), else the permutation and masks
        of our own shuffle, ahead of its turn. The session's driver calls it when no input
        waits."""
        if self._check_shuffles():
            self._progress()
        elif self._plan_due():
            assert self.seat is not None
            self._plan = self._shuffle_plan(self.seat, self._own_seed())

    def _plan_due(self) -> bool:
        return False  # a peer's own shuffle only (DeckPeer)

    def _own_seed(self) -> bytes:
        raise DeckInvariantError("an observer has no shuffle of its own")

    def _shuffle_plan(self, seat: int, seed: bytes) -> _ShufflePlan:
        """What a shuffle needs of its input deck only at the end: the permutation, the masks
        and ``r_j·(G, X)``, from the seed and the joint key."""
        assert self._joint is not None
        rnd, tid, public = self.round_number, self.table_id, self.public_seats
        perm = shuffle_permutation(tid, rnd, seat, seed, self.size, public_seats=public)
        masks = shuffle_masks(tid, rnd, seat, seed, self.size, public_seats=public)
        offsets = tuple((base_mul(r), mul(r, self._joint)) for r in masks)
        return _ShufflePlan(perm, masks, offsets)

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
            if owner is None or not self._plays_for(owner, msg.seat):
                raise WrongOwner(msg.seat, f"position {p} belongs to seat {owner}")
            if msg.share is not None:
                raise MalformedDeckMessage(msg.seat, "a dummy's card is played without a share")
            self._played.append(p)  # open: _ready waited for it
            return
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
        if p not in self._cards:  # a released seat's card is open already
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
        self._open_known(msg.positions)

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

    # -- key splitting and release ----------------------------------------------------------

    def _holders(self, splitter: int) -> list[int]:
        """The seats that hold a piece of ``splitter``'s key: the other live seats."""
        return [j for j in self.live_seats if j != splitter]

    def _apply_split(self, msg: SplitMessage) -> None:
        """Every participant checks that each commitment and ephemeral point is a valid
        point, each encrypted piece a canonical scalar, and that the commitments add up to
        the splitter's key; a holder then decrypts its piece (:meth:`_took_split`)."""
        i = msg.seat
        holders = self._holders(i)
        if len(msg.pieces) != len(holders):
            raise MalformedDeckMessage(i, f"a split has {len(holders)} pieces here")
        for piece in msg.pieces:
            if not (is_valid_point(piece.commitment) and is_valid_point(piece.ephemeral)):
                raise BadPoint(i, "a piece's commitment or ephemeral point is not valid")
            try:
                group.parse_scalar(piece.encrypted)
            except group.InvalidScalar as exc:
                raise MalformedDeckMessage(i, f"encrypted piece: {exc}") from None
        commitments = {j: piece.commitment for j, piece in zip(holders, msg.pieces, strict=True)}
        if group.sum_points(commitments.values()) != self._keys[i]:
            raise BadSplit(i, "the pieces' commitments do not add up to its key share")
        self._splits[i] = msg
        self._piece_keys[i] = commitments
        self._took_split(msg, holders)
        self._progress()

    def _piece_of(self, splitter: int, holder: int, dh: bytes) -> int | None:
        """The piece of ``splitter``'s key for ``holder``, decrypted with the Diffie–Hellman
        point ``dh``; ``None`` if it does not match its commitment."""
        holders = self._holders(splitter)
        piece = self._splits[splitter].pieces[holders.index(holder)]
        pad = split_pad(self._ctx(splitter), holder, piece.ephemeral, dh)
        s = (int.from_bytes(piece.encrypted, "little") - pad) % L
        return s if s and base_mul(s) == piece.commitment else None

    def _complaint_ctx(self, holder: int, splitter: int) -> tuple[bytes, ...]:
        return (*self._ctx(holder), COMPLAINT_LABEL, u8(splitter))

    def _release_ctx(self, holder: int, gone: int, position: int) -> tuple[bytes, ...]:
        return (*self._ctx(holder), RELEASE_LABEL, u8(gone), u8(position))

    def _apply_complaint(self, msg: ComplaintMessage) -> None:
        """A complaint always ends the round: its proof names the complainer if it fails;
        else the piece, decrypted with the proven point, names the splitter if it does not
        match its commitment and the complainer if it does."""
        j, i = msg.seat, msg.splitter
        holders = self._holders(i)
        if j not in holders:
            raise UnexpectedMessage(j, f"it holds no piece of seat {i}'s key")
        piece = self._splits[i].pieces[holders.index(j)]
        proof = self._parse_proof(j, msg.proof)
        try:
            ok = group.verify_share(
                self._keys[j], piece.ephemeral, msg.point, proof, self._complaint_ctx(j, i)
            )
        except group.InvalidPoint:
            raise BadPoint(j, "the complaint's point is not a valid point") from None
        if not ok:
            raise BadProof(j, "the complaint's proof does not verify")
        if self._piece_of(i, j, msg.point) is None:
            raise BadSplit(i, f"its piece for seat {j} does not match its commitment")
        raise FalseComplaint(j, f"it complained of seat {i}'s piece, which matches")

    def _apply_release(self, msg: ReleaseMessage) -> None:
        """Verify every share against the sender's piece commitment, then store them."""
        j, g = msg.seat, msg.gone
        keys = self._piece_keys[g]
        if j not in keys:
            raise UnexpectedMessage(j, f"it holds no piece of seat {g}'s key")
        if len(msg.shares) != len(msg.positions):
            raise MalformedDeckMessage(j, "a release has one share per position")
        deck = self._decks[-1]
        for p, share in zip(msg.positions, msg.shares, strict=True):
            ctx = self._release_ctx(j, g, p)
            self._check_share(j, p, keys[j], deck[p].c1, share, ctx)
        self._store_release(g, j, msg.positions, [s.point for s in msg.shares])

    def _store_release(
        self, g: int, holder: int, positions: tuple[int, ...], points: list[bytes]
    ) -> None:
        """Keep a holder's proven shares of its piece; where every holder's are in, the
        gone seat's share of the position is their sum (``x_g = Σ s_gj``), and the cards
        that needed it open."""
        self._release_started.add(g)
        pieces = self._pieces.setdefault(g, [{} for _ in range(self.size)])
        holders = self._holders(g)
        for p, point in zip(positions, points, strict=True):
            pieces[p][holder] = point
            if len(pieces[p]) == len(holders) and g not in self._shares[p]:
                self._shares[p][g] = group.sum_points(pieces[p][h] for h in holders)
        self._released.setdefault((g, holder), set()).update(positions)
        for step in self._steps_started:
            if all(len(pieces[p]) == len(holders) for p in self._step_positions[step]):
                self._share_steps.add((step, g))
        self._open_known(positions)

    def _rebuilt_key(self, g: int) -> int:
        """A seat's secret key from the pieces its holders revealed (and our own)."""
        if g not in self._piece_keys:
            raise DeckUsageError(f"seat {g} revealed nothing and its key was not split")
        pieces = {**self._revealed_pieces.get(g, {})}
        if self.seat is not None and g in self._held:
            pieces[self.seat] = self._held[g]
        for h in self._holders(g):
            if h not in pieces:
                raise MalformedDeckMessage(h, f"its reveal lacks its piece of seat {g}'s key")
        x = sum(pieces.values()) % L
        if not x or base_mul(x) != self._keys[g]:
            raise DeckInvariantError(f"seat {g}'s proven pieces do not add up to its key")
        return x

    # -- the reveal -------------------------------------------------------------------------

    def _apply_reveal(self, msg: RevealMessage) -> None:
        try:
            x = group.parse_scalar(msg.secret_key, nonzero=True)
        except group.InvalidScalar as exc:
            raise MalformedDeckMessage(msg.seat, f"secret key: {exc}") from None
        if base_mul(x) != self._keys[msg.seat]:
            raise CommitmentMismatch(msg.seat, "the secret key does not match the key share")
        expected = shuffle_commitment(
            self.table_id, self.round_number, msg.seat, msg.seed, public_seats=self.public_seats
        )
        if expected != self._commitments[msg.seat]:
            raise CommitmentMismatch(msg.seat, "the seed does not match the shuffle commitment")
        held = [g for g in self._piece_keys if msg.seat in self._piece_keys[g]]
        if [g for g, _ in msg.pieces] != sorted(held):
            raise MalformedDeckMessage(
                msg.seat, "a reveal carries its piece of every other live seat's key"
            )
        pieces: dict[int, int] = {}
        for g, raw in msg.pieces:
            commitment = self._piece_keys[g][msg.seat]
            try:
                s = group.parse_scalar(raw, nonzero=True)
            except group.InvalidScalar as exc:
                raise MalformedDeckMessage(msg.seat, f"piece of seat {g}: {exc}") from None
            if base_mul(s) != commitment:
                raise CommitmentMismatch(
                    msg.seat, f"its piece of seat {g}'s key does not match its commitment"
                )
            pieces[g] = s
        self._reveals[msg.seat] = (x, msg.seed)
        for g, s in pieces.items():
            self._revealed_pieces.setdefault(g, {})[msg.seat] = s

    def _owing_reveal(self) -> list[int]:
        """The seats whose reveal the audit needs: live seats that are not gone."""
        gone = self._excused()
        return [s for s in self.live_seats if s not in gone]

    # -- checks ---------------------------------------------------------------------------

    def _ctx(self, seat: int) -> tuple[bytes, ...]:
        return self._contexts[seat]

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
        """Decrypt the positions of ``step`` we may see once all their shares are in."""
        self._open_known(self._step_positions[step])

    def _open_known(self, positions: Iterable[int]) -> None:
        """Decrypt the positions we may see: those whose every seat's share is in (the
        cards opened to all, a public or released seat's cards), and a peer's own ones
        once the other seats' shares are in (an observer's seat owns none)."""
        for p in positions:
            if p in self._cards:
                continue
            shares = self._shares[p]
            if len(shares) == self.seats:
                self._open(p, shares)
            elif p in self._private and len(shares) == self.seats - 1:
                self._open(p, {**shares, self._step_owner(p): self._private[p]})

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
        self,
        seat: int,
        position: int,
        key: bytes,
        c1: bytes,
        share: DecryptionShare,
        context: tuple[bytes, ...] | None = None,
    ) -> None:
        """Verify one proven share of ``position`` by ``seat`` (a deal or play share, or
        with ``context``, a release share under a piece's commitment ``key``)."""
        proof = self._parse_proof(seat, share.proof)
        ctx = (*self._ctx(seat), u8(position)) if context is None else context
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

        For each shuffle of another seat, in shuffle order, its proof must be the one the
        revealed seed's nonces give (:func:`~belote_p2p.protocol.shuffle.follows_seed`),
        which for a proof verified on receipt also pins its deck to the one the seed derives
        from the deck before (DECK.md §10); the first that is not raises :class:`BadShuffle`
        naming its shuffler (saying whether its deck differs, or only its proof). A released
        seat revealed no seed: its key is rebuilt from the pieces its holders revealed, its
        shuffle keeps the proof checked on receipt, and its output deck is decrypted with
        the joint secret, the shuffles after it checked from there. Every share was proven
        on receipt, so none is checked again. Keys and seeds were checked against their
        commitments on receipt of the reveals.
        """
        if not self._reveals_complete():
            raise DeckUsageError("the audit needs every reveal")
        assert self._joint is not None
        # A check put off (overlap) is made now: what follows relies on every proof verified.
        self._check_shuffles()
        revealed = self._secrets()
        size, public = self.size, self.public_seats
        rnd, tid = self.round_number, self.table_id
        # Position j of the current deck holds source[j] of the base deck: the trivial one
        # until a shuffle without a seed, then that shuffle's output, whose cards are
        # decrypted.
        base_cards, source = list(range(size)), list(range(size))
        for k, seat in enumerate(self.shuffle_order):
            deck = self._decks[k]
            seed = revealed[seat][1]
            if seed is None:
                x = sum(secret for secret, _ in revealed.values()) % L
                base_cards, source = [self._card_index(c, x) for c in deck], list(range(size))
                continue
            perm = shuffle_permutation(tid, rnd, seat, seed, size, public_seats=public)
            source = [source[perm[j]] for j in range(size)]
            if seat == self.seat or seat in public:
                continue
            masks = shuffle_masks(tid, rnd, seat, seed, size, public_seats=public)
            inputs = self._decks[k - 1] if k else self._trivial
            ctx = shuffle_proof_context(
                tid, rnd, seat, self._commitments[seat], public_seats=public
            )
            # The deck is not recomputed: its proof was verified on receipt, and a verified
            # proof with the seed's responses holds the seed's deck (DECK.md §10).
            if not follows_seed(self._joint, inputs, deck, self._proofs[k], ctx, perm, masks, seed):
                raise self._not_seeds(seat, seed, inputs, deck)
        return tuple(self._cards_in_order[base_cards[source[j]]] for j in range(size))

    def _not_seeds(
        self, seat: int, seed: bytes, inputs: tuple[Ciphertext, ...], deck: tuple[Ciphertext, ...]
    ) -> BadShuffle:
        """The fault of a shuffle whose proof is not its seed's: the first position of its
        deck that is not the one the seed derives, or its proof alone."""
        expected = self._shuffle_plan(seat, seed).remask(inputs)
        for j, (ct, want) in enumerate(zip(deck, expected, strict=True)):
            if ct != want:
                return BadShuffle(seat, f"shuffled deck position {j} does not match the seed")
        return BadShuffle(seat, "the proof of shuffle is not the one its seed gives")

    def _card_index(self, ct: Ciphertext, x: int) -> int:
        """The trivial-deck index of the card a ciphertext holds, under joint secret ``x``."""
        card = card_of_point(group.sub(ct.c2, mul(x, ct.c1)))
        if card not in self._card_set:
            raise DeckInvariantError("a proven deck holds a point that is not a card")
        return self._cards_in_order.index(card)


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
        public_seats: Iterable[int] = NO_PUBLIC_SEAT,
        overlap: bool = False,
    ) -> None:
        if seat is None:
            raise DeckUsageError("a peer's seat may not be None")
        super().__init__(
            rules,
            seat=seat,
            dealer=dealer,
            table_id=table_id,
            round_number=round_number,
            public_seats=public_seats,
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
        self._overlap = overlap

    # -- reading the view ------------------------------------------------------------------

    @property
    def public_key(self) -> bytes:
        """Our key share ``x·G`` for this round."""
        return self._public

    def hand(self) -> dict[int, Card]:
        """Our cards known so far, by position (played ones included)."""
        return self.hand_of(self.seat)

    def can_release(self, gone: int) -> bool:
        """Whether :meth:`release` may open ``gone``'s cards: four seats, ``gone`` another
        live seat whose key split and shuffle are in, every holder of its pieces still
        playing. When not, a round cannot go on with ``gone`` as a dummy (deal it again
        with ``gone`` public, or end the game)."""
        return (
            self._splitting
            and type(gone) is int
            and gone in self.live_seats
            and gone != self.seat
            and gone in self._held
            and gone in self._commitments
            and not any(h in self._excused() for h in self._holders(gone))
        )

    # -- local actions -------------------------------------------------------------------

    def start(self) -> KeyMessage:
        """Our key share and its proof: the first message of the round (a split, and a
        shuffle when it is our turn, follow in :meth:`next_messages`)."""
        if self._started:
            raise DeckUsageError("start() called twice")
        self._started = True
        self._keys[self.seat] = self._public
        proof = group.prove_key(self._x, self._public, self._ctx(self.seat))
        self._join_keys(self.seat)
        return KeyMessage(self.seat, self._public, proof.to_bytes())

    def set_taker(self, taker: int) -> SharesMessage:
        """Classic: the taker is known; publish our shares of positions 21..31 (and, in
        :meth:`next_messages`, our release of them for every seat we released)."""
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
        self._open_known(wanted)
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

    def release(self, gone: int) -> ReleaseMessage:
        """Seat ``gone`` left: publish our shares of our piece of its key for every position
        dealt so far (all of them, so that every peer expects the same), with proofs;
        positions dealt later are released with them (:meth:`next_messages`). Once every
        holder's release is in, ``gone``'s cards open to everybody and its partner plays
        them (:meth:`play_for`). Needs :meth:`can_release`."""
        if self._revealed:
            raise DeckUsageError("no release after our reveal")
        if gone in self._releasing:
            raise DeckUsageError(f"seat {gone} is already released")
        if not self.can_release(gone):
            raise DeckUsageError(f"seat {gone}'s cards cannot be released")
        self._releasing.add(gone)
        self._releasers.add((self.seat, gone))
        self._left.add(gone)
        msg = self._release_positions(gone, tuple(sorted(self._dealt_positions())))
        self._drain()
        return msg

    def play_for(self, gone: int, position: int) -> PlayMessage:
        """Play the dummy's card at ``position`` for our partner ``gone``: its card is open,
        so the message carries no share."""
        if self._revealed:
            raise DeckUsageError("no play after our reveal")
        if type(gone) is not int or not self._plays_for(gone, self.seat):
            raise DeckUsageError(f"we do not play for seat {gone!r}")
        if type(position) is not int or self.owner_of(position) != gone:
            raise DeckUsageError(f"position {position!r} is not seat {gone}'s")
        if position in self._played:
            raise DeckUsageError(f"position {position} was already played")
        if position not in self._cards:
            raise DeckUsageError(f"the card at position {position} is not open")
        self._played.append(position)
        return PlayMessage(self.seat, position, None)

    def reveal(self) -> RevealMessage:
        """End the round for us: publish our secret key and shuffle seed, and our pieces of
        every other live seat's key (four seats), so that the key of a seat that leaves
        before its own reveal is rebuilt all the same (DECK.md §8)."""
        if len(self._decks) < self.seats or not self._splits_in():
            raise DeckUsageError("nothing to reveal before every shuffle and split is in")
        if self._revealed:
            raise DeckUsageError("reveal() called twice")
        self._revealed = True
        pieces = tuple((g, group.scalar_bytes(self._held[g])) for g in sorted(self._held))
        return RevealMessage(self.seat, group.scalar_bytes(self._x), self._seed, pieces)

    # -- the protocol's own steps ----------------------------------------------------------

    def _reveals_complete(self) -> bool:
        return self._revealed and all(
            s in self._reveals for s in self._owing_reveal() if s != self.seat
        )

    def _secrets(self) -> dict[int, tuple[int, bytes | None]]:
        self._reveals[self.seat] = (self._x, self._seed)
        try:
            return super()._secrets()
        finally:
            del self._reveals[self.seat]

    def _shuffle(self) -> None:
        """Our shuffle, with its proof, to send."""
        self._outbox.append(self._add_shuffle(self.seat, self._seed))
        self._plan = None

    def _plan_due(self) -> bool:
        """With ``overlap``, our shuffle's plan can be made while we wait for our turn."""
        return (
            self._overlap
            and self._plan is None
            and self._joint is not None
            and self.seat in self.shuffle_order[len(self._decks) :]
        )

    def _own_seed(self) -> bytes:
        return self._seed

    def _split_own(self) -> None:
        """Split our key among the other live seats: pieces derived from it (so that the
        split, like every proof, is a function of the secret), each encrypted to its holder
        under a Diffie–Hellman pad."""
        if not self._splitting:
            return
        holders = self._holders(self.seat)
        ctx = self._ctx(self.seat)
        entries: list[KeyPiece] = []
        for j, s in zip(holders, split_pieces(self._x, ctx, len(holders)), strict=True):
            r = group.hash_to_scalar(SPLIT_NONCE_LABEL, group.scalar_bytes(self._x), *ctx, u8(j))
            if r == 0:  # probability 2^-252
                raise DeckInvariantError("a split nonce is zero")
            ephemeral = base_mul(r)
            pad = split_pad(ctx, j, ephemeral, mul(r, self._keys[j]))
            entries.append(KeyPiece(base_mul(s), ephemeral, group.scalar_bytes((s + pad) % L)))
        msg = SplitMessage(self.seat, tuple(entries))
        self._splits[self.seat] = msg
        self._piece_keys[self.seat] = {
            j: e.commitment for j, e in zip(holders, entries, strict=True)
        }
        self._outbox.append(msg)

    def _took_split(self, msg: SplitMessage, holders: list[int]) -> None:
        """Decrypt our piece; if it does not match its commitment, complain (the complaint,
        in :meth:`next_messages`, lets everybody see it) and name the splitter."""
        if self.seat not in holders:
            return
        piece = msg.pieces[holders.index(self.seat)]
        dh = mul(self._x, piece.ephemeral)
        s = self._piece_of(msg.seat, self.seat, dh)
        if s is None:
            ctx = self._complaint_ctx(self.seat, msg.seat)
            proof = group.prove_share(self._x, self._public, piece.ephemeral, dh, ctx)
            self._outbox.append(ComplaintMessage(self.seat, msg.seat, dh, proof.to_bytes()))
            raise BadSplit(
                msg.seat, f"its piece for seat {self.seat} does not match its commitment"
            )
        self._held[msg.seat] = s

    def _start_step(self, step: int) -> None:
        self._deal_step(step)

    def _prove_share(self, position: int, share: bytes) -> bytes:
        ct = self._decks[-1][position]
        ctx = (*self._ctx(self.seat), u8(position))
        return group.prove_share(self._x, self._public, ct.c1, share, ctx).to_bytes()

    def _release_positions(self, gone: int, positions: tuple[int, ...]) -> ReleaseMessage:
        """Our proven shares of our piece of ``gone``'s key for ``positions``, kept as a
        received release is."""
        s, commitment = self._held[gone], self._piece_keys[gone][self.seat]
        deck = self._decks[-1] if positions else ()
        shares: list[DecryptionShare] = []
        for p in positions:
            c1 = deck[p].c1
            point = mul(s, c1)
            proof = group.prove_share(
                s, commitment, c1, point, self._release_ctx(self.seat, gone, p)
            )
            shares.append(DecryptionShare(point, proof.to_bytes()))
        self._store_release(gone, self.seat, positions, [d.point for d in shares])
        return ReleaseMessage(self.seat, gone, positions, tuple(shares))

    def _deal_step(self, step: int) -> SharesMessage:
        self._begin_step(step)
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
        for g in sorted(self._releasing):
            self._outbox.append(self._release_positions(g, self._step_positions[step]))
        self._drain()
        self._open_dealt(step)
        return msg


class DeckObserver(_DeckRound):
    """A round's deck seen by someone who holds no seat (``seat`` is ``None``).

    It receives the messages of all four seats, verifies every proof on receipt as a peer
    does (key proofs, splits, complaints, shuffle proofs, every decryption share, releases,
    plays), learns the turned card, the cards played and a dummy's open hand, and audits the
    round once the reveals are in. It sends nothing. See the module docstring.
    """

    seat: None

    def __init__(
        self,
        rules: RuleSet,
        *,
        dealer: int,
        table_id: bytes,
        round_number: int,
        public_seats: Iterable[int] = NO_PUBLIC_SEAT,
    ) -> None:
        super().__init__(
            rules,
            seat=None,
            dealer=dealer,
            table_id=table_id,
            round_number=round_number,
            public_seats=public_seats,
        )

    def set_taker(self, taker: int) -> None:
        """Classic: the bidding named the taker; the completion shares may come in.

        Allowed once the four shuffles are in; a held message that this makes usable is
        checked now, so a :class:`DeckError` may be raised.
        """
        self._check_taker(taker)
        self._begin_step(STEP_COMPLETION)
        self._drain()
        self._open_dealt(STEP_COMPLETION)

    def open(self, positions: Iterable[int]) -> None:
        """Two-handed: the engine turned these face-down positions up; their shares may
        come in. May raise the :class:`DeckError` of a message it releases."""
        self._request_open(positions)
        self._drain()

    def _ready(self, msg: DeckMessage) -> bool:
        if isinstance(msg, PlayMessage):
            owner = self.owner_of(msg.position)
            if owner is not None and owner != msg.seat and not self._plays_for(owner, msg.seat):
                return True  # held until the taker was known: refused now (WrongOwner)
        return super()._ready(msg)

    def _reveals_complete(self) -> bool:
        return all(s in self._reveals for s in self._owing_reveal())

    def _start_step(self, step: int) -> None:
        self._begin_step(step)
        self._open_dealt(step)

    def _split_own(self) -> None:
        pass  # an observer has no key

    def _took_split(self, msg: SplitMessage, holders: list[int]) -> None:
        pass  # nor any piece
