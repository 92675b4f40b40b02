"""The proof of shuffle: honest proofs verify, every cheat and every tampered or malformed
field is refused, proofs are reproducible from their seed, and the deck's own shuffles (its
permutations, masks and card points) are provable as they are.

Regenerate the committed vector with ``PYTHONPATH=. python tests/test_shuffle.py
--write-vector`` (only when the proof changes on purpose: the test compares against the file).
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.protocol import shuffle
from belote_p2p.protocol.deck import (
    CARD_POINTS,
    Ciphertext,
    shuffle_masks,
    shuffle_permutation,
)
from belote_p2p.protocol.group import (
    DOMAIN,
    IDENTITY,
    InvalidPoint,
    L,
    add,
    base_mul,
    hash_to_point,
    hash_to_scalar,
    mul,
    scalar_bytes,
    transcript_hash,
    u8,
    u32,
)
from belote_p2p.protocol.shuffle import (
    MAX_CARDS,
    MalformedShuffleProof,
    ShuffleProof,
    ShuffleProofUsageError,
    follows_seed,
    generators,
    invalid_point,
    prove_shuffle,
    verify_shuffle,
)
from belote_p2p.protocol.wire import decode, encode

TABLE = b"table-0123456789"
ROUND = 7
SEAT = 2
CONTEXT = (TABLE, u32(ROUND), u8(SEAT), b"\x33" * 32)
SEED = b"\x5a" * 32

# Bytes that are no ristretto255 element (RFC 9496 decoding refuses them): an odd s (also
# Ed25519's encoding of its identity), s = 2 (no point), s = 4 (a point) written as p + 4.
NEGATIVE = (1).to_bytes(32, "little")
OFF_CURVE = (2).to_bytes(32, "little")
NON_CANONICAL = (2**255 - 19 + 4).to_bytes(32, "little")
G = base_mul(1)


def scalar(*parts: bytes) -> int:
    """A fixed non-zero test scalar."""
    return hash_to_scalar(b"test", *parts) or 1


PK = base_mul(scalar(b"joint key"))


def card_point(i: int) -> bytes:
    return CARD_POINTS[i] if i < len(CARD_POINTS) else hash_to_point(b"test-card", u32(i))


def trivial_deck(n: int) -> list[Ciphertext]:
    """The deck before the first shuffle, ``(O, M_i)``."""
    return [Ciphertext(IDENTITY, card_point(i)) for i in range(n)]


def remask(
    deck: Sequence[Ciphertext], perm: Sequence[int], masks: Sequence[int], pk: bytes = PK
) -> list[Ciphertext]:
    """``out[j] = in[perm[j]] + masks[j]·(G, pk)``; a zero mask leaves the ciphertext."""
    out = []
    for j, r in enumerate(masks):
        ct = deck[perm[j]]
        out.append(ct if r == 0 else Ciphertext(add(ct.c1, base_mul(r)), add(ct.c2, mul(r, pk))))
    return out


def encrypt(card: int, r: int) -> Ciphertext:
    return Ciphertext(base_mul(r), add(card_point(card), mul(r, PK)))


@dataclass(frozen=True, slots=True)
class Case:
    """A statement, its witness and its honest proof."""

    inputs: list[Ciphertext]
    outputs: list[Ciphertext]
    perm: tuple[int, ...]
    masks: tuple[int, ...]
    proof: ShuffleProof


def make_case(n: int, tag: bytes = b"case", *, trivial: bool = False) -> Case:
    rng = random.Random(tag + u32(n))
    inputs = trivial_deck(n)
    if not trivial:  # an input that already went through one shuffle
        first = list(range(n))
        rng.shuffle(first)
        inputs = remask(inputs, first, [scalar(tag, b"first", u32(j)) for j in range(n)])
    perm_list = list(range(n))
    rng.shuffle(perm_list)
    perm = tuple(perm_list)
    masks = tuple(scalar(tag, b"mask", u32(j)) for j in range(n))
    outputs = remask(inputs, perm, masks)
    proof = prove_shuffle(PK, inputs, outputs, perm, masks, CONTEXT, SEED)
    return Case(inputs, outputs, perm, masks, proof)


_CASES: dict[tuple[int, bool], Case] = {}


def case(n: int, *, trivial: bool = False) -> Case:
    """Honest cases, made once (a 32-card proof costs tens of milliseconds)."""
    if (n, trivial) not in _CASES:
        _CASES[(n, trivial)] = make_case(n, trivial=trivial)
    return _CASES[(n, trivial)]


def verifies(c: Case, proof: ShuffleProof | None = None, **changes: Any) -> bool:
    """``verify_shuffle`` on ``c`` with some of its arguments changed."""
    args: dict[str, Any] = {
        "pk": PK,
        "inputs": c.inputs,
        "outputs": c.outputs,
        "proof": c.proof if proof is None else proof,
        "context": CONTEXT,
    }
    args.update(changes)
    return verify_shuffle(**args)


# -- honest proofs -----------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 32])
@pytest.mark.parametrize("trivial", [False, True])
def test_an_honest_proof_verifies(n: int, trivial: bool) -> None:
    c = case(n, trivial=trivial)
    assert c.proof.size == n
    assert verifies(c)
    assert invalid_point(c.outputs, c.proof) is None


def test_the_wire_form_round_trips_through_canonical_msgpack() -> None:
    c = case(4)
    data = decode(encode(c.proof.to_wire()))
    assert ShuffleProof.from_wire(data, 4) == c.proof
    assert ShuffleProof.from_wire(data) == c.proof
    assert len(encode(case(32).proof.to_wire())) == 4589  # (4N + 5)·32 bytes plus framing


def test_the_decks_own_four_shuffles_are_provable() -> None:
    """The deck's permutations, masks and card points, four shuffles in a row from the
    trivial deck: each proof verifies against its input and for its own seat only."""
    seeds = [bytes([0x10 + s]) * 32 for s in range(4)]
    deck = [Ciphertext(IDENTITY, m) for m in CARD_POINTS]
    for seat in (1, 2, 3, 0):
        perm = shuffle_permutation(TABLE, ROUND, seat, seeds[seat])
        masks = shuffle_masks(TABLE, ROUND, seat, seeds[seat])
        out = remask(deck, perm, masks)
        ctx = (TABLE, u32(ROUND), u8(seat), b"c" * 32)
        proof = prove_shuffle(PK, deck, out, perm, masks, ctx, seeds[seat])
        assert verify_shuffle(PK, deck, out, proof, ctx)
        assert follows_seed(PK, deck, out, proof, ctx, perm, masks, seeds[seat])
        other_seat = (TABLE, u32(ROUND), u8((seat + 1) % 4), b"c" * 32)
        assert not verify_shuffle(PK, deck, out, proof, other_seat)
        deck = out


# -- cheating shufflers ------------------------------------------------------------------


def test_a_substituted_deck_is_refused() -> None:
    """The attack the proof exists for: fresh encryptions of the cards in an order the
    shuffler chose, in place of a re-masking of its input."""
    c = case(32)
    chosen = list(range(32))
    random.Random(b"cheat").shuffle(chosen)
    fresh = [scalar(b"fresh", u32(j)) for j in range(32)]
    fake = [encrypt(chosen[j], fresh[j]) for j in range(32)]
    assert not verifies(c, outputs=fake)  # the honest proof does not carry over
    forged = prove_shuffle(PK, c.inputs, fake, c.perm, c.masks, CONTEXT, SEED)
    assert not verifies(c, forged, outputs=fake)  # nor does a proof with the honest witness
    # The fake deck *is* a shuffle of the trivial deck, and provable as one; the proof is
    # bound to its input deck, so it fails against the real one.
    of_trivial = prove_shuffle(PK, trivial_deck(32), fake, chosen, fresh, CONTEXT, SEED)
    assert verify_shuffle(PK, trivial_deck(32), fake, of_trivial, CONTEXT)
    assert not verifies(c, of_trivial, outputs=fake)


def test_one_ciphertext_replaced_is_refused() -> None:
    c = case(8)
    j = 5
    for other in (
        encrypt(0, scalar(b"other")),
        Ciphertext(c.outputs[j].c1, add(c.outputs[j].c2, G)),  # shifted c2: another card
        Ciphertext(add(c.outputs[j].c1, G), c.outputs[j].c2),
        remask(c.inputs, [c.perm[j]], [scalar(b"another mask")])[0],  # same card, new mask
    ):
        outputs = list(c.outputs)
        outputs[j] = other
        assert not verifies(c, outputs=outputs)
        forged = prove_shuffle(PK, c.inputs, outputs, c.perm, c.masks, CONTEXT, SEED)
        assert not verifies(c, forged, outputs=outputs)


def test_swapped_outputs_and_a_duplicated_card_are_refused() -> None:
    c = case(32)
    swapped = list(c.outputs)
    swapped[0], swapped[31] = swapped[31], swapped[0]
    assert not verifies(c, outputs=swapped)
    perm = list(c.perm)
    perm[1] = perm[0]  # one card twice, another gone
    duplicated = remask(c.inputs, perm, c.masks)
    assert not verifies(c, outputs=duplicated)
    forged = prove_shuffle(PK, c.inputs, duplicated, c.perm, c.masks, CONTEXT, SEED)
    assert not verifies(c, forged, outputs=duplicated)
    with pytest.raises(ShuffleProofUsageError):  # no proof of a non-permutation is made
        prove_shuffle(PK, c.inputs, duplicated, perm, c.masks, CONTEXT, SEED)


@pytest.mark.parametrize(
    "context",
    [
        (b"table-0123456780", u32(ROUND), u8(SEAT), CONTEXT[3]),
        (TABLE, u32(ROUND + 1), u8(SEAT), CONTEXT[3]),
        (TABLE, u32(ROUND), u8(SEAT + 1), CONTEXT[3]),
        (TABLE, u32(ROUND), u8(SEAT), b"\x34" * 32),
        (TABLE, u32(ROUND), u8(SEAT)),
        (TABLE, u32(ROUND), u8(SEAT) + CONTEXT[3]),
        (),
    ],
)
def test_another_context_is_refused(context: tuple[bytes, ...]) -> None:
    assert not verifies(case(4), context=context)


def test_another_key_input_deck_or_size_is_refused() -> None:
    c = case(8)
    assert not verifies(c, pk=base_mul(scalar(b"joint key") + 1))
    assert not verifies(c, inputs=make_case(8, b"other").outputs)
    swapped = list(c.inputs)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert not verifies(c, inputs=swapped)
    assert not verifies(c, inputs=trivial_deck(8))
    assert not verifies(c, inputs=c.inputs[:7], outputs=c.outputs[:7])
    assert not verifies(c, outputs=c.outputs[:7])


# -- tampering, field by field -----------------------------------------------------------

N_SMALL = 4


def _with(proof: ShuffleProof, name: str, value: object) -> ShuffleProof:
    changes: dict[str, Any] = {name: value}
    return dataclasses.replace(proof, **changes)


def test_every_field_tampered_is_refused() -> None:
    c = case(N_SMALL)
    p = c.proof
    tampered: list[tuple[str, ShuffleProof]] = []
    for name in ("commitments", "chain"):
        points: tuple[bytes, ...] = getattr(p, name)
        for i in range(N_SMALL):
            moved = list(points)
            moved[i] = add(points[i], G)
            tampered.append((f"{name}[{i}]", _with(p, name, tuple(moved))))
    for name in ("challenge", "s1", "s2", "s3", "s4"):
        tampered.append((name, _with(p, name, (getattr(p, name) + 1) % L)))
    for name in ("s_hat", "s_tilde"):
        values: tuple[int, ...] = getattr(p, name)
        for i in range(N_SMALL):
            changed = list(values)
            changed[i] = (changed[i] + 1) % L
            tampered.append((f"{name}[{i}]", _with(p, name, tuple(changed))))
    assert len(tampered) == 4 * N_SMALL + 5
    for name, proof in tampered:
        assert not verifies(c, proof), name


def test_every_wire_bit_flip_is_refused() -> None:
    c = case(N_SMALL)
    wire = c.proof.to_wire()
    for key, value in wire.items():
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            for bit in (0, 8 * 17 + 3, 254):
                flipped = bytearray(item)
                flipped[bit // 8] ^= 1 << (bit % 8)
                new_items = list(items)
                new_items[i] = bytes(flipped)
                data = {**wire, key: new_items if isinstance(value, list) else new_items[0]}
                try:
                    proof = ShuffleProof.from_wire(data, N_SMALL)
                except MalformedShuffleProof:
                    continue
                assert not verifies(c, proof), (key, i, bit)


BAD_POINTS = (NEGATIVE, OFF_CURVE, NON_CANONICAL, IDENTITY, b"\xff" * 32)


def test_an_invalid_output_point_gives_false_and_is_named() -> None:
    """Even where a zero response would skip the multiplication that checks it."""
    c = case(N_SMALL)
    for bad in BAD_POINTS:
        outputs = list(c.outputs)
        outputs[0] = Ciphertext(bad, c.outputs[0].c2)
        assert not verifies(c, outputs=outputs)
        zeroed = _with(c.proof, "s_tilde", (0, *c.proof.s_tilde[1:]))
        assert not verifies(c, zeroed, outputs=outputs)
        assert invalid_point(outputs, c.proof) == "output ciphertext 0"


def test_an_invalid_proof_point_gives_false_and_is_named() -> None:
    """Parsing checks only lengths; the verification checks every point it multiplies."""
    c = case(N_SMALL)
    for bad in BAD_POINTS:
        for name, label in (("commitments", "commitment 1"), ("chain", "chain link 1")):
            points = list(getattr(c.proof, name))
            points[1] = bad
            proof = _with(c.proof, name, tuple(points))
            assert not verifies(c, proof)
            assert invalid_point(c.outputs, proof) == label
            data = {**c.proof.to_wire(), name: points}
            assert ShuffleProof.from_wire(data, N_SMALL) == proof


def test_a_proof_of_the_wrong_shape_gives_false() -> None:
    c = case(N_SMALL)
    for bad in (
        _with(c.proof, "s1", L),
        _with(c.proof, "s2", -1),
        _with(c.proof, "s3", True),
        _with(c.proof, "challenge", 0),
        _with(c.proof, "s_hat", c.proof.s_hat[:-1]),
        _with(c.proof, "commitments", (*c.proof.commitments[:-1], b"short")),
        _with(c.proof, "chain", list(c.proof.chain)),
    ):
        assert not verifies(c, bad)


def test_a_point_met_by_a_zero_multiplier_is_still_checked() -> None:
    assert shuffle._mul(0, G) == IDENTITY
    for bad in BAD_POINTS:
        for k in (0, 5):
            with pytest.raises(InvalidPoint):
                shuffle._mul(k, bad)
    assert shuffle._base(0) == IDENTITY


def test_the_generators_are_fixed_distinct_and_independent_of_n() -> None:
    g32, g4 = generators(32), generators(4)
    assert g4.hs == g32.hs[:4] and g4.h == g32.h
    assert len({g32.h, *g32.hs, G, *CARD_POINTS}) == 32 + 1 + 1 + 32


# -- malformed wire data -----------------------------------------------------------------


def malformed(wire: dict[str, Any]) -> list[tuple[str, object]]:
    def with_(key: str, value: object) -> dict[str, Any]:
        return {**wire, key: value}

    def item(key: str, value: object) -> dict[str, Any]:
        return with_(key, [value, *wire[key][1:]])

    missing = dict(wire)
    del missing["s3"]
    return [
        ("not a map", [wire]),
        ("missing key", missing),
        ("extra key", with_("extra", b"")),
        ("str for a list", with_("commitments", "abc")),
        ("short list", with_("chain", wire["chain"][:-1])),
        ("long list", with_("s_hat", [*wire["s_hat"], wire["s_hat"][0]])),
        ("one card", {k: v[:1] if isinstance(v, list) else v for k, v in wire.items()}),
        ("scalar 31 bytes", with_("s1", wire["s1"][:31])),
        ("scalar 33 bytes", with_("s2", wire["s2"] + b"\0")),
        ("scalar = L", with_("s3", scalar_bytes(L))),
        ("scalar 2^256-1", with_("s4", b"\xff" * 32)),
        ("list scalar = L", item("s_tilde", scalar_bytes(L))),
        ("challenge zero", with_("challenge", bytes(32))),
        ("scalar as int", with_("s1", 5)),
        ("scalar as str", with_("s1", "00" * 32)),
        ("scalar as bytearray", with_("s1", bytearray(wire["s1"]))),
        ("scalar nil", with_("challenge", None)),
        ("point 31 bytes", item("commitments", G[:31])),
        ("point 33 bytes", item("chain", G + b"\0")),
        ("point as list", item("commitments", list(G))),
        ("point nil", item("chain", None)),
        ("list of lists", with_("s_hat", [[s] for s in wire["s_hat"]])),
    ]


def test_malformed_wire_data_is_rejected() -> None:
    wire = case(N_SMALL).proof.to_wire()
    for name, data in malformed(wire):
        with pytest.raises(MalformedShuffleProof):
            ShuffleProof.from_wire(data)
            pytest.fail(name)
    assert issubclass(MalformedShuffleProof, RemoteProtocolError)


def test_the_size_is_checked_before_anything_is_decoded() -> None:
    wire = case(N_SMALL).proof.to_wire()
    with pytest.raises(MalformedShuffleProof):
        ShuffleProof.from_wire(wire, N_SMALL + 1)
    huge = {k: [v[0]] * (MAX_CARDS + 1) if isinstance(v, list) else v for k, v in wire.items()}
    with pytest.raises(MalformedShuffleProof):
        ShuffleProof.from_wire(huge)
    with pytest.raises(ShuffleProofUsageError):
        ShuffleProof.from_wire(wire, 1)


# -- the caller's misuse -----------------------------------------------------------------


def test_the_callers_misuse_raises_the_usage_error() -> None:
    c = case(N_SMALL)
    assert issubclass(ShuffleProofUsageError, LocalProtocolError)
    bad_input = list(c.inputs)
    bad_input[2] = Ciphertext(OFF_CURVE, c.inputs[2].c2)
    for changes in (
        {"pk": b"short"},
        {"pk": "not bytes"},
        {"pk": OFF_CURVE},  # an invalid joint key
        {"inputs": bad_input},  # an input deck nobody verified
        {"inputs": c.inputs[:1], "outputs": c.outputs[:1]},  # one card
        {"inputs": [b"\0" * 64] * N_SMALL},  # not ciphertexts
        {"outputs": [b"\0" * 64] * N_SMALL},
        {"proof": c.proof.to_wire()},  # not parsed
        {"context": b"context"},
        {"context": ["table", "round"]},
    ):
        with pytest.raises(ShuffleProofUsageError):
            verifies(c, **changes)
    for perm, masks in (
        ((0, 1, 2, 2), c.masks),
        ((0, 1, 2), c.masks),
        ((0, 1, 2, 4), c.masks),
        ((0, 1, 2, True), c.masks),
        (c.perm, c.masks[:-1]),
        (c.perm, (L, *c.masks[1:])),
        (c.perm, (-1, *c.masks[1:])),
    ):
        with pytest.raises(ShuffleProofUsageError):
            prove_shuffle(PK, c.inputs, c.outputs, perm, masks, CONTEXT, SEED)
    for pk, inputs in ((OFF_CURVE, c.inputs), (PK, bad_input)):
        with pytest.raises(ShuffleProofUsageError):
            prove_shuffle(pk, inputs, c.outputs, c.perm, c.masks, CONTEXT, SEED)


# -- nonces from the seed ----------------------------------------------------------------


def test_the_same_inputs_give_the_same_proof_bytes() -> None:
    c = case(N_SMALL)
    again = prove_shuffle(PK, c.inputs, c.outputs, c.perm, c.masks, CONTEXT, SEED)
    assert encode(again.to_wire()) == encode(c.proof.to_wire())
    other_seed = prove_shuffle(PK, c.inputs, c.outputs, c.perm, c.masks, CONTEXT, b"\1" * 32)
    assert other_seed != c.proof and verifies(c, other_seed)
    # Nothing is shared between proofs of different statements made with one seed.
    other_ctx = (TABLE, u32(ROUND + 1), u8(SEAT), CONTEXT[3])
    moved = prove_shuffle(PK, c.inputs, c.outputs, c.perm, c.masks, other_ctx, SEED)
    assert not set(moved.commitments) & set(c.proof.commitments)
    assert not set(moved.s_tilde) & set(c.proof.s_tilde)


def test_follows_seed_accepts_the_seeds_proof_only() -> None:
    c = case(N_SMALL)

    def follows(proof: ShuffleProof, seed: bytes = SEED, masks: Sequence[int] = c.masks) -> bool:
        return follows_seed(PK, c.inputs, c.outputs, proof, CONTEXT, c.perm, masks, seed)

    assert follows(c.proof)
    assert not follows(c.proof, seed=b"\1" * 32)
    assert not follows(c.proof, masks=(c.masks[0] + 1, *c.masks[1:]))
    # A valid proof with other nonces verifies but does not follow the seed.
    other = prove_shuffle(PK, c.inputs, c.outputs, c.perm, c.masks, CONTEXT, b"\1" * 32)
    assert verifies(c, other) and not follows(other)
    assert not follows(_with(c.proof, "s4", (c.proof.s4 + 1) % L))
    assert not follows(_with(c.proof, "s_hat", c.proof.s_hat[:-1]))


def test_a_zero_mask_is_a_valid_witness() -> None:
    inputs = case(N_SMALL).outputs
    perm, masks = (1, 0, 3, 2), (0, 5, 0, 7)
    outputs = remask(inputs, perm, masks)
    proof = prove_shuffle(PK, inputs, outputs, perm, masks, CONTEXT, SEED)
    assert verify_shuffle(PK, inputs, outputs, proof, CONTEXT)


# -- DECK.md §5, written out a second time -----------------------------------------------


def _lin(*terms: tuple[int, bytes]) -> bytes:
    """``Σ k·P``, naively: none of the reference's shortcuts."""
    acc = IDENTITY
    for k, p in terms:
        if k % L and p != IDENTITY:
            acc = add(acc, mul(k % L, p))
    return acc


def spec_challenge(
    inputs: Sequence[Ciphertext], outputs: Sequence[Ciphertext], proof: ShuffleProof
) -> int:
    """The challenge DECK.md §5.5 recomputes, from its formulas as written."""
    n = len(inputs)
    h = hash_to_point(b"shuffle-proof-h")
    hs = [hash_to_point(b"shuffle-proof-h-i", u32(i)) for i in range(n)]
    decks = [e.c1 + e.c2 for e in inputs] + [e.c1 + e.c2 for e in outputs]
    s = transcript_hash(b"shuffle-proof-statement", u32(len(CONTEXT)), *CONTEXT, u32(n), PK, *decks)
    q = transcript_hash(b"shuffle-proof-commitments", s, *proof.commitments)
    u = [hash_to_scalar(b"shuffle-proof-u", q, u32(j)) for j in range(n)]
    c = proof.challenge
    u_prod = 1
    for x in u:
        u_prod = u_prod * x % L
    c_sum = _lin(*((1, p) for p in proof.commitments), *((-1, p) for p in hs))
    t1 = _lin((proof.s1, G), (-c, c_sum))
    t2 = _lin((proof.s2, G), (-c, _lin((1, proof.chain[-1]), (-u_prod, h))))
    t3 = _lin(
        (proof.s3, G),
        *zip(proof.s_tilde, hs, strict=True),
        (-c, _lin(*zip(u, proof.commitments, strict=True))),
    )
    t4 = [
        _lin(
            *((s_i, getattr(e, part)) for s_i, e in zip(proof.s_tilde, outputs, strict=True)),
            (-proof.s4, key),
            (-c, _lin(*((u_j, getattr(e, part)) for u_j, e in zip(u, inputs, strict=True)))),
        )
        for part, key in (("c1", G), ("c2", PK))
    ]
    previous = [h, *proof.chain[:-1]]
    t_hat = [
        _lin((proof.s_hat[i], G), (proof.s_tilde[i], previous[i]), (-c, proof.chain[i]))
        for i in range(n)
    ]
    return hash_to_scalar(b"shuffle-proof-challenge", q, *proof.chain, t1, t2, t3, *t4, *t_hat)


@pytest.mark.parametrize("trivial", [False, True])
def test_the_reference_follows_the_spec(trivial: bool) -> None:
    """A naive verifier written from DECK.md agrees with the proof, and the permutation
    commitments are the ones the specified nonces give."""
    n = 5
    c = make_case(n, b"spec", trivial=trivial)
    assert spec_challenge(c.inputs, c.outputs, c.proof) == c.proof.challenge
    tampered = _with(c.proof, "s4", (c.proof.s4 + 1) % L)
    assert spec_challenge(c.inputs, c.outputs, tampered) != c.proof.challenge
    decks = [e.c1 + e.c2 for e in c.inputs] + [e.c1 + e.c2 for e in c.outputs]
    s = transcript_hash(b"shuffle-proof-statement", u32(len(CONTEXT)), *CONTEXT, u32(n), PK, *decks)
    key = transcript_hash(
        b"shuffle-proof-nonce-key",
        SEED,
        s,
        b"".join(u32(p) for p in c.perm),
        b"".join(scalar_bytes(r) for r in c.masks),
    )
    for j in range(n):
        rho = hash_to_scalar(b"shuffle-proof-nonce-rho", key, u32(j))
        column = hash_to_point(b"shuffle-proof-h-i", u32(c.perm.index(j)))
        assert c.proof.commitments[j] == add(base_mul(rho), column)


# -- random permutations -----------------------------------------------------------------


@st.composite
def statements(draw: st.DrawFn) -> tuple[list[int], list[int], bool]:
    n = draw(st.integers(min_value=2, max_value=6))
    perm = draw(st.permutations(list(range(n))))
    masks = draw(st.lists(st.integers(1, L - 1), min_size=n, max_size=n))
    return perm, masks, draw(st.booleans())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statements())
def test_random_permutations(statement: tuple[list[int], list[int], bool]) -> None:
    perm, masks, trivial = statement
    n = len(perm)
    inputs = trivial_deck(n) if trivial else case(n).outputs
    outputs = remask(inputs, perm, masks)
    proof = prove_shuffle(PK, inputs, outputs, perm, masks, CONTEXT, SEED)
    assert verify_shuffle(PK, inputs, outputs, proof, CONTEXT)
    assert follows_seed(PK, inputs, outputs, proof, CONTEXT, perm, masks, SEED)
    swapped = [outputs[-1], *outputs[1:-1], outputs[0]]
    if swapped != outputs:
        assert not verify_shuffle(PK, inputs, swapped, proof, CONTEXT)


# -- the committed vector ----------------------------------------------------------------

VECTOR = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "shuffle-proof.json"


def build_vector() -> dict[str, Any]:
    """One proof for four cards whose input went through a shuffle, with the intermediate
    hashes an implementation of DECK.md §5 can check itself against."""
    c = make_case(4, b"vector")
    statement = shuffle._statement_digest(CONTEXT, PK, c.inputs, c.outputs)
    q, u = shuffle._challenge_vector(statement, c.proof.commitments)
    proof = c.proof.to_wire()
    return {
        "description": "One proof of shuffle (protocol/DECK.md section 5) for N = 4 cards. "
        "Bytes are hex; scalars are 32 bytes little-endian; ciphertexts are c1 || c2.",
        "domain": DOMAIN.decode(),
        "context": [part.hex() for part in CONTEXT],
        "joint_key": PK.hex(),
        "inputs": [(e.c1 + e.c2).hex() for e in c.inputs],
        "outputs": [(e.c1 + e.c2).hex() for e in c.outputs],
        "permutation": list(c.perm),
        "masks": [scalar_bytes(r).hex() for r in c.masks],
        "nonce_seed": SEED.hex(),
        "statement": statement.hex(),
        "commitments_digest": q.hex(),
        "u": [scalar_bytes(x).hex() for x in u],
        "proof": {
            k: [x.hex() for x in v] if isinstance(v, list) else v.hex() for k, v in proof.items()
        },
        "canonical_msgpack": encode(proof).hex(),
    }


def vector_text() -> str:
    return json.dumps(build_vector(), indent=1) + "\n"


def test_the_committed_vector_matches_byte_for_byte() -> None:
    assert VECTOR.read_text() == vector_text()


def test_the_committed_vector_verifies() -> None:
    data = json.loads(VECTOR.read_text())

    def deck(items: list[str]) -> list[Ciphertext]:
        return [Ciphertext.from_bytes(bytes.fromhex(x)) for x in items]

    context = [bytes.fromhex(x) for x in data["context"]]
    pk = bytes.fromhex(data["joint_key"])
    inputs, outputs = deck(data["inputs"]), deck(data["outputs"])
    proof = ShuffleProof.from_wire(decode(bytes.fromhex(data["canonical_msgpack"])), 4)
    assert verify_shuffle(pk, inputs, outputs, proof, context)
    masks = [int.from_bytes(bytes.fromhex(x), "little") for x in data["masks"]]
    seed = bytes.fromhex(data["nonce_seed"])
    perm = data["permutation"]
    assert follows_seed(pk, inputs, outputs, proof, context, perm, masks, seed)
    assert prove_shuffle(pk, inputs, outputs, perm, masks, context, seed) == proof


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-vector"]:
        VECTOR.write_text(vector_text())
        print(f"wrote {VECTOR}")
    else:
        print("usage: PYTHONPATH=. python tests/test_shuffle.py --write-vector")
