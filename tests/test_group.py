from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from belote_p2p.protocol import group
from belote_p2p.protocol.deck import CARD_POINTS
from belote_p2p.protocol.group import L, Proof

CTX = (b"table", group.u32(3), group.u8(1))
FIELD = 2**255 - 19
NEGATIVE = (1).to_bytes(32, "little")  # an odd s: RFC 9496 refuses it (and Ed25519's identity)


def test_card_points_are_distinct_valid_and_not_small_multiples_of_the_base() -> None:
    assert len(set(CARD_POINTS)) == 32
    assert all(group.is_valid_point(p) for p in CARD_POINTS)
    small_multiples = {group.base_mul(k) for k in range(1, 1000)}
    assert not small_multiples & set(CARD_POINTS)


def test_framing_separates_parts() -> None:
    assert group.transcript_hash(b"x", b"ab", b"c") != group.transcript_hash(b"x", b"a", b"bc")
    assert group.transcript_hash(b"x", b"") != group.transcript_hash(b"x")


def test_a_vector_of_scalars_hashes_as_one_scalar_at_a_time() -> None:
    """The shared prefix is hashed once, and every last part framed as usual: the same
    scalars, whatever the parts and the lengths of the last ones."""
    lasts = [b"", b"\x00", group.u32(7), bytes(300)]
    for parts in [(), (b"",), (b"key", bytes(64))]:
        one_by_one = [group.hash_to_scalar(b"label", *parts, last) for last in lasts]
        assert group.hash_to_scalars(b"label", parts, lasts) == one_by_one
        assert len(set(one_by_one)) == len(lasts)
    assert group.hash_to_scalars(b"label", (b"key",), []) == []


def test_scalars_must_be_canonical() -> None:
    assert group.parse_scalar(group.scalar_bytes(L - 1)) == L - 1
    with pytest.raises(group.InvalidScalar):
        group.parse_scalar(L.to_bytes(32, "little"))
    with pytest.raises(group.InvalidScalar):
        group.parse_scalar(bytes(32), nonzero=True)
    with pytest.raises(group.InvalidScalar):
        Proof.from_bytes(bytes(63))


def test_the_generator_is_ristretto255s() -> None:
    assert group.base_mul(1).hex() == (
        "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
    )  # RFC 9496, A.1
    assert group.base_mul(L - 1) == group.sub(group.IDENTITY, group.base_mul(1))


def test_invalid_points_are_refused() -> None:
    p = group.base_mul(5)
    non_canonical = (FIELD + 4).to_bytes(32, "little")  # s = 4 (a point) written as p + 4
    assert group.is_valid_point((4).to_bytes(32, "little"))
    off_curve = next(
        b
        for b in (k.to_bytes(32, "little") for k in range(2, 200, 2))
        if not group.is_valid_point(b)
    )
    for bad in (NEGATIVE, off_curve, non_canonical, b"\xff" * 32, group.IDENTITY, b"\x00" * 31):
        assert not group.is_valid_point(bad)
        with pytest.raises(group.InvalidPoint):
            group.mul(7, bad)
    for bad in (NEGATIVE, off_curve, non_canonical, b"\xff" * 32, b"\x00" * 31):
        with pytest.raises(group.InvalidPoint):
            group.add(p, bad)
        with pytest.raises(group.InvalidPoint):
            group.sub(bad, p)
    assert group.is_valid_point(p)
    assert group.add(p, group.IDENTITY) == p  # the identity decodes; only mul refuses it
    assert group.sum_points([]) == group.IDENTITY
    assert group.sum_points([p, p, p]) == group.base_mul(15)


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
        group.verify_share(public, base, NEGATIVE, proof, ctx)


def test_importing_the_group_leaves_no_copy_of_libsodium_behind(tmp_path: Path) -> None:
    """rbcl writes its libsodium to the temporary directory at import: group removes it."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    code = "from belote_p2p.protocol import group; print(group.base_mul(1).hex())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("e2f2ae0a")
    assert list(tmp_path.iterdir()) == []
