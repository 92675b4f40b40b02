from __future__ import annotations

import pytest

from belote_p2p.protocol import group
from belote_p2p.protocol.deck import CARD_POINTS
from belote_p2p.protocol.group import L, Proof

CTX = (b"table", group.u32(3), group.u8(1))
SMALL_ORDER = (2**255 - 20).to_bytes(32, "little")  # (0, -1), of order 2


def test_card_points_are_distinct_valid_and_not_small_multiples_of_the_base() -> None:
    assert len(set(CARD_POINTS)) == 32
    assert all(group.is_valid_point(p) for p in CARD_POINTS)
    small_multiples = {group.base_mul(k) for k in range(1, 1000)}
    assert not small_multiples & set(CARD_POINTS)


def test_framing_separates_parts() -> None:
    assert group.transcript_hash(b"x", b"ab", b"c") != group.transcript_hash(b"x", b"a", b"bc")
    assert group.transcript_hash(b"x", b"") != group.transcript_hash(b"x")


def test_scalars_must_be_canonical() -> None:
    assert group.parse_scalar(group.scalar_bytes(L - 1)) == L - 1
    with pytest.raises(group.InvalidScalar):
        group.parse_scalar(L.to_bytes(32, "little"))
    with pytest.raises(group.InvalidScalar):
        group.parse_scalar(bytes(32), nonzero=True)
    with pytest.raises(group.InvalidScalar):
        Proof.from_bytes(bytes(63))


def test_invalid_points_are_refused() -> None:
    p = group.base_mul(5)
    tainted = group.add(p, SMALL_ORDER)
    non_canonical = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1 encodes y = 1
    for bad in (SMALL_ORDER, tainted, group.IDENTITY, non_canonical, b"\x00" * 31):
        assert not group.is_valid_point(bad)
        with pytest.raises(group.InvalidPoint):
            group.mul(7, bad)
    assert group.is_valid_point(p)


def test_key_proof_is_bound_to_its_context() -> None:
    x = group.random_scalar()
    public = group.base_mul(x)
    proof = group.prove_key(x, public, CTX)
    assert group.verify_key(public, proof, CTX)
    assert Proof.from_bytes(proof.to_bytes()) == proof
    assert not group.verify_key(public, proof, (b"table", group.u32(4), group.u8(1)))
    assert not group.verify_key(group.base_mul(x + 1), proof, CTX)
    assert not group.verify_key(public, Proof(proof.challenge, (proof.response + 1) % L), CTX)


def test_share_proof_is_bound_to_statement_and_context() -> None:
    x = group.random_scalar()
    public = group.base_mul(x)
    base = CARD_POINTS[3]
    share = group.mul(x, base)
    ctx = (*CTX, group.u8(9))
    proof = group.prove_share(x, public, base, share, ctx)
    assert group.verify_share(public, base, share, proof, ctx)
    assert not group.verify_share(public, base, share, proof, (*CTX, group.u8(10)))
    assert not group.verify_share(public, CARD_POINTS[4], share, proof, ctx)
    wrong = group.mul(x, CARD_POINTS[4])
    assert not group.verify_share(public, base, wrong, proof, ctx)
    forged = group.prove_share(x, public, base, wrong, ctx)  # an honest key cannot help
    assert not group.verify_share(public, base, wrong, forged, ctx)
    with pytest.raises(group.InvalidPoint):
        group.verify_share(public, base, SMALL_ORDER, proof, ctx)
