"""The edge cases of the encodings a receiver accepts, ``protocol/vectors/encodings.json``:
Ed25519 signatures and keys (PROTOCOL.md §1) and ristretto255 points (DECK.md §1, §11).

Every case is checked against the code, and against the rule itself: the project's checks
refuse what the rule refuses even with a library that would accept it (a stand-in for the
library that accepts every equation), so that the verdict never depends on a library's
version.

    PYTHONPATH=. python tests/test_encodings.py --write    # regenerate the vector
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import pytest
from helpers import ROOT

from belote_p2p.protocol import ed25519, group, identity
from belote_p2p.protocol.ed25519 import (
    BASE,
    IDENTITY,
    L,
    P,
    Point,
    add,
    decode_point,
    encode_point,
    has_small_order,
    in_prime_order_subgroup,
    multiply,
)
from belote_p2p.protocol.identity import Identity, verify

VECTOR = ROOT / "protocol" / "vectors" / "encodings.json"
MESSAGE = b"belote-p2p/encodings/v1\x00 the message every signature case signs"
SEED = bytes(range(0x40, 0x60))
"""The RFC 8032 private key of the honest signer."""


def _secret_scalar(seed: bytes) -> int:
    """RFC 8032 §5.1.5: the clamped first half of SHA-512(seed)."""
    h = bytearray(hashlib.sha512(seed).digest()[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    return int.from_bytes(h, "little")


def _challenge(r: bytes, key: bytes, message: bytes) -> int:
    return int.from_bytes(hashlib.sha512(r + key + message).digest(), "little") % L


def _scalar(k: int) -> bytes:
    return k.to_bytes(32, "little")


def torsion_point(order: int) -> Point:
    """A point of exactly ``order`` (1, 2, 4 or 8): ``[L]`` of a point of the curve that is
    not in the prime-order subgroup, doubled down to the order wanted."""
    y = 2
    while True:
        found = decode_point(_scalar(y))
        if found is not None:
            t = multiply(L, found)
            if encode_point(double_times(t, 2)) != encode_point(IDENTITY):  # of order 8
                while order < 8:
                    t = add(t, t)
                    order *= 2
                return t
        y += 1


def double_times(p: Point, n: int) -> Point:
    for _ in range(n):
        p = add(p, p)
    return p


def _signed_with(a: int, key: bytes, r_point: Point, r: int) -> bytes:
    """A signature with commitment ``r_point`` and ``S = r + k·a`` (``r`` the discrete log of
    ``r_point``'s prime-order part, given)."""
    r_bytes = encode_point(r_point)
    k = _challenge(r_bytes, key, MESSAGE)
    return r_bytes + _scalar((r + k * a) % L)


def signature_cases() -> list[dict[str, Any]]:
    honest = Identity.from_seed(SEED)
    key = honest.public_key_bytes
    good = honest.sign(MESSAGE)
    s = int.from_bytes(good[32:], "little")
    a = _secret_scalar(SEED)
    assert encode_point(multiply(a, BASE)) == key
    t8 = torsion_point(8)

    # A key of order 8: a signature whose k is a multiple of 8 verifies with R = [S]B.
    small = encode_point(t8)
    for n in range(1, 1000):
        r_bytes = encode_point(multiply(n, BASE))
        if _challenge(r_bytes, small, MESSAGE) % 8 == 0:
            small_sig = r_bytes + _scalar(n)
            break
    # A key with a torsion component: the honest signature by a, for a k that [k]T cancels
    # (the cofactorless equation accepts it), and for one it does not (only the cofactored).
    mixed = encode_point(add(multiply(a, BASE), t8))
    mixed_sigs: dict[bool, bytes] = {}
    for n in range(1, 1000):
        r_bytes = encode_point(multiply(n, BASE))
        cancels = _challenge(r_bytes, mixed, MESSAGE) % 8 == 0
        if cancels not in mixed_sigs:
            mixed_sigs[cancels] = _signed_with(a, mixed, multiply(n, BASE), n)
        if len(mixed_sigs) == 2:
            break
    # R of small order (the identity), with S = k·a: [S]B - [k]A is the identity.
    ident = encode_point(IDENTITY)
    r_identity = ident + _scalar(_challenge(ident, key, MESSAGE) * a % L)
    # R with a torsion component: R = [n]B + T, S = n + k·a; [S]B - [k]A = [n]B, not R.
    n = 12345
    r_mixed = _signed_with(a, key, add(multiply(n, BASE), t8), n)
    p_plus_1 = (P + 1).to_bytes(32, "little")
    return [
        {"case": "an honest signature", "key": key, "signature": good, "accepted": True,
         "equation": "both", "why": "RFC 8032: S < L, A and R of prime order"},
        {"case": "S + L", "key": key, "signature": good[:32] + _scalar(s + L),
         "accepted": False, "equation": "both", "why": "S is not canonical (S >= L): the "
         "same signature, malleated; a library that reduces S modulo L accepts it"},
        {"case": "the identity as the key, R the identity, S = 0", "key": ident,
         "signature": ident + bytes(32), "accepted": False, "equation": "both",
         "why": "a key of small order: this one signature verifies for every message"},
        {"case": "the identity's non-canonical encoding as the key", "key": p_plus_1,
         "signature": ident + bytes(32), "accepted": False, "equation": "both",
         "why": "y = p + 1 >= p: not canonical (and the identity, of small order)"},
        {"case": "a key of order 8", "key": small, "signature": small_sig, "accepted": False,
         "equation": "both", "why": "a key of small order"},
        {"case": "a key with a torsion component, k a multiple of 8", "key": mixed,
         "signature": mixed_sigs[True], "accepted": False, "equation": "both",
         "why": "the key is not in the prime-order subgroup: the two equations disagree on "
         "its signatures"},
        {"case": "a key with a torsion component, k not a multiple of 8", "key": mixed,
         "signature": mixed_sigs[False], "accepted": False, "equation": "cofactored only",
         "why": "the key is not in the prime-order subgroup"},
        {"case": "R the identity", "key": key, "signature": r_identity, "accepted": False,
         "equation": "both", "why": "R of small order"},
        {"case": "R with a torsion component", "key": key, "signature": r_mixed,
         "accepted": False, "equation": "cofactored only",
         "why": "R is not in the prime-order subgroup"},
    ]  # fmt: skip


def point_cases() -> list[dict[str, Any]]:
    g = group.base_mul(1)
    p_bytes = group.FIELD_PRIME.to_bytes(32, "little")
    odd = (group.FIELD_PRIME - 2).to_bytes(32, "little")
    # An even s < p that is no encoding: the first one from 2 up.
    s = 2
    while group.is_valid_point(s.to_bytes(32, "little")):
        s += 2
    return [
        {"case": "the generator", "point": g, "valid": True, "why": "RFC 9496"},
        {"case": "the generator with the top bit set", "point": g[:31] + bytes([g[31] | 0x80]),
         "valid": False, "why": "s >= p: RFC 9496 refuses it; libsodium 1.0.18 ignores the "
         "top bit and reads the generator"},
        {"case": "s = p", "point": p_bytes, "valid": False, "why": "s >= p"},
        {"case": "s = p - 2 (odd)", "point": odd, "valid": False, "why": "s is negative (odd)"},
        {"case": "the identity", "point": bytes(32), "valid": False,
         "why": "it decodes, and is refused wherever a received point is multiplied"},
        {"case": "an even s < p that is no element", "point": s.to_bytes(32, "little"),
         "valid": False, "why": "RFC 9496's decoding fails (no square root)"},
    ]  # fmt: skip


def vector() -> dict[str, Any]:
    def hexed(case: dict[str, Any]) -> dict[str, Any]:
        return {k: v.hex() if isinstance(v, bytes) else v for k, v in case.items()}

    return {
        "description": "Encodings a receiver accepts or refuses. 'signatures': Ed25519 "
        "(PROTOCOL.md section 1) of 'message' (hex), each with the key, the 64-byte "
        "signature and whether a receiver accepts it; 'points': ristretto255 encodings "
        "(DECK.md sections 1 and 11) and whether each is a valid received point. Bytes are "
        "hex.",
        "message": MESSAGE.hex(),
        "signatures": [hexed(c) for c in signature_cases()],
        "points": [hexed(c) for c in point_cases()],
    }


def vector_text() -> str:
    return json.dumps(vector(), indent=1) + "\n"


def test_the_vector_is_what_the_code_writes() -> None:
    assert VECTOR.read_text(encoding="utf-8") == vector_text()


def _cases(kind: str) -> list[dict[str, Any]]:
    """The vector's cases of ``kind`` (none while it is being written)."""
    if not VECTOR.exists():
        return []
    cases: list[dict[str, Any]] = json.loads(VECTOR.read_text(encoding="utf-8"))[kind]
    return cases


MSG = MESSAGE
"""The vector's message (its first test checks the file holds it)."""


@pytest.mark.parametrize("case", _cases("signatures"), ids=lambda c: c["case"])
def test_a_receiver_accepts_exactly_the_signatures_the_rule_accepts(case: dict[str, Any]) -> None:
    key, sig = bytes.fromhex(case["key"]), bytes.fromhex(case["signature"])
    assert verify(key, sig, MSG) is case["accepted"]


@pytest.mark.parametrize("case", _cases("signatures"), ids=lambda c: c["case"])
def test_the_rule_does_not_depend_on_the_library(
    case: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a library that accepts every signature, what the rule refuses is still refused
    (every case here but the honest one is refused before the equation); and the equation,
    checked apart, holds where the case says (so the refusals are the rule's own)."""

    class Lenient:
        @staticmethod
        def from_public_bytes(data: bytes) -> Lenient:
            return Lenient()

        def verify(self, signature: bytes, data: bytes) -> None:
            return None

    monkeypatch.setattr(identity, "Ed25519PublicKey", Lenient)
    key, sig = bytes.fromhex(case["key"]), bytes.fromhex(case["signature"])
    assert verify(key, sig, MSG) is case["accepted"]
    assert ed25519.acceptable(key, sig) is case["accepted"]


def test_the_equation_holds_where_the_cases_say() -> None:
    """Each case satisfies the equations its ``equation`` names (RFC 8032 §5.1.7: the
    cofactored ``[8][S]B = [8]R + [8][k]A``, and the cofactorless ``[S]B = R + [k]A`` that
    libsodium and OpenSSL check): what refuses it is the rule's checks, not the equation."""
    for case in _cases("signatures"):
        key, sig = bytes.fromhex(case["key"]), bytes.fromhex(case["signature"])
        a = decode_point(key) or decode_point(_scalar(int.from_bytes(key, "little") - P))
        r = decode_point(sig[:32])
        assert a is not None and r is not None, case["case"]
        s = int.from_bytes(sig[32:], "little")
        k = _challenge(sig[:32], key, MSG)
        lhs, rhs = multiply(s, BASE), add(r, multiply(k, a))
        cofactorless = encode_point(lhs) == encode_point(rhs)
        cofactored = encode_point(multiply(8, lhs)) == encode_point(multiply(8, rhs))
        found = "both" if cofactorless else "cofactored only" if cofactored else "neither"
        assert found == case["equation"], case["case"]


def test_the_orders_of_the_cases_points() -> None:
    t8 = torsion_point(8)
    assert not is_identity_point(multiply(4, t8)) and is_identity_point(multiply(8, t8))
    assert in_prime_order_subgroup(BASE) and not has_small_order(BASE)
    assert not in_prime_order_subgroup(add(BASE, t8))
    honest = Identity.from_seed(SEED).public_key_bytes
    assert ed25519.valid_public_key(honest)


def is_identity_point(p: Point) -> bool:
    return encode_point(p) == encode_point(IDENTITY)


@pytest.mark.parametrize("case", _cases("points"), ids=lambda c: c["case"])
def test_a_received_point_is_valid_exactly_as_the_rule_says(case: dict[str, Any]) -> None:
    point = bytes.fromhex(case["point"])
    assert group.is_valid_point(point) is case["valid"]
    if not case["valid"]:
        with pytest.raises(group.InvalidPoint):
            group.mul(3, point)


def test_the_top_bit_is_refused_whatever_libsodium_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own check refuses ``s >= p`` before libsodium reads the bytes (1.0.18, which
    rbcl ships, reads the top bit as nothing)."""
    g = group.base_mul(1)
    top = g[:31] + bytes([g[31] | 0x80])
    assert group.mul(5, g) == group.base_mul(5)
    assert not group.canonical_field_element(top)
    monkeypatch.setattr(group, "_is_valid", lambda p: 1)
    assert not group.is_valid_point(top)
    with pytest.raises(group.InvalidPoint):
        group.add(g, top)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        VECTOR.write_text(vector_text(), encoding="utf-8")
        print(f"wrote {VECTOR}")
    else:
        print("usage: PYTHONPATH=. python tests/test_encodings.py --write")
