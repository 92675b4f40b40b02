"""Which Ed25519 signatures a receiver accepts: the project's own rule, whatever library
checks the equation (``protocol/PROTOCOL.md`` §1).

RFC 8032 leaves a verifier some freedom, and libraries use it differently: a scalar ``S``
of ``L`` or more, a point encoding of ``y ≥ p``, a public key of small order (for which one
signature verifies for every message), the cofactored or the cofactorless equation. Two
implementations that differ there reach different verdicts on a record (one accepts an
envelope the other refuses), so the protocol fixes one rule, and this module checks the
parts of it that libraries disagree on, before the library checks the equation:

* ``S`` is canonical: ``S < L`` (:func:`canonical_scalar`);
* the public key ``A`` is a canonical encoding (``y < p``; ``x = 0`` with the sign bit
  set is refused) of a point of the prime-order subgroup other than the identity: not of
  small order, and with no torsion component (:func:`valid_public_key`, in pure Python,
  once per key);
* ``R`` is the canonical encoding of a point of the prime-order subgroup other than the
  identity (:func:`valid_commitment`: the canonical form in pure Python, then libsodium's
  ``crypto_core_ed25519_is_valid_point``, which decodes the point and checks that it is
  not of small order and lies in the prime-order subgroup);
* then ``[S]B = R + [k]A``, ``k = SHA-512(R || A || message)`` (the library's check).

With ``A`` and ``R`` of prime order the cofactored and the cofactorless equations accept
exactly the same signatures, so the rule does not depend on which one a library uses:
for a given message and key, the only ``R`` accepted with a given ``S`` is the encoding of
``[S]B − [k]A``. Every honest key and signature meets the rule: RFC 8032's key generation
gives ``A = [a]B`` and its signing ``R = [r]B``, ``S = r + k·a mod L``.

The point arithmetic here is plain integer arithmetic on extended twisted Edwards
coordinates (RFC 8032 §5.1.4); it is slow (about 2 ms for a check of order), which is why a
key is checked once (:func:`valid_public_key` keeps its answers) and ``R``, new in every
signature, goes to libsodium.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from .group import SODIUM

P = 2**255 - 19
"""The field's prime."""
L = 2**252 + 27742317777372353535851937790883648493
"""The order of the base point, and of the prime-order subgroup."""
D = -121665 * pow(121666, -1, P) % P
"""The curve constant ``d`` of ``−x² + y² = 1 + d·x²·y²``."""
SQRT_M1 = pow(2, (P - 1) // 4, P)
"""A square root of −1 modulo ``p``."""
POINT_SIZE = 32
SCALAR_SIZE = 32

Point = tuple[int, int, int, int]
"""A point in extended coordinates ``(X, Y, Z, T)``: ``x = X/Z``, ``y = Y/Z``, ``x·y = T/Z``."""
IDENTITY: Point = (0, 1, 1, 0)


def canonical_scalar(data: bytes) -> bool:
    """``S`` is 32 bytes, little-endian, below ``L``."""
    return len(data) == SCALAR_SIZE and int.from_bytes(data, "little") < L


def canonical_encoding(data: bytes) -> bool:
    """The 32 bytes encode ``y < p`` (the top bit is the sign of ``x``). The encodings of
    ``y = 1`` and ``y = p − 1`` with the sign bit set (``x = 0`` is not negative) are not
    canonical either; both are points of small order, refused anyway."""
    if len(data) != POINT_SIZE:
        return False
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    sign = data[31] >> 7
    return y < P and not (sign and y in (1, P - 1))


def decode_point(data: bytes) -> Point | None:
    """The point a canonical encoding names (RFC 8032 §5.1.3), or None: not canonical, or
    no point of the curve has that ``y``."""
    if not canonical_encoding(data):
        return None
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    sign = data[31] >> 7
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * SQRT_M1 % P
    elif v * x * x % P != u:
        return None
    if x & 1 != sign:
        x = P - x
    return (x % P, y, 1, x * y % P)


def encode_point(p: Point) -> bytes:
    """The canonical encoding of ``p``: ``y`` little-endian, the sign of ``x`` in the top bit."""
    x, y, z, _ = p
    inverse = pow(z, P - 2, P)
    x, y = x * inverse % P, y * inverse % P
    return (y | (x & 1) << 255).to_bytes(POINT_SIZE, "little")


def _base_point() -> Point:
    point = decode_point(bytes.fromhex("58" + "66" * 31))  # y = 4/5
    assert point is not None
    return point


def add(p: Point, q: Point) -> Point:
    """``p + q`` (the unified addition of RFC 8032 §5.1.4, valid for every pair)."""
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * D * t1 * t2 % P
    d = 2 * z1 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def double(p: Point) -> Point:
    """``p + p``."""
    x1, y1, z1, _ = p
    a = x1 * x1 % P
    b = y1 * y1 % P
    c = 2 * z1 * z1 % P
    h = a + b
    e = h - (x1 + y1) * (x1 + y1)
    g = a - b
    f = c + g
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def multiply(k: int, p: Point) -> Point:
    """``[k]p`` for ``k ≥ 0`` (double and add, from the top bit; not constant time: only
    public points are multiplied here)."""
    out = IDENTITY
    for bit in bin(k)[2:]:
        out = double(out)
        if bit == "1":
            out = add(out, p)
    return out


def is_identity(p: Point) -> bool:
    x, y, z, _ = p
    return x % P == 0 and (y - z) % P == 0


def has_small_order(p: Point) -> bool:
    """``[8]p`` is the identity: ``p`` is one of the eight points of order 1, 2, 4 or 8."""
    return is_identity(double(double(double(p))))


def in_prime_order_subgroup(p: Point) -> bool:
    """``[L]p`` is the identity: ``p`` has no torsion component."""
    return is_identity(multiply(L, p))


BASE: Final[Point] = _base_point()
"""The base point ``B`` of RFC 8032."""


@lru_cache(maxsize=1024)
def valid_public_key(data: bytes) -> bool:
    """A public key a receiver accepts: the canonical encoding of a point of the prime-order
    subgroup other than the identity (neither of small order nor with a torsion
    component). Kept per key: a table has a few, checked on every signature."""
    point = decode_point(data)
    return point is not None and not has_small_order(point) and in_prime_order_subgroup(point)


_is_valid_point = SODIUM.crypto_core_ed25519_is_valid_point


def valid_commitment(data: bytes) -> bool:
    """A signature's ``R`` a receiver accepts: canonical (checked here), and a point of the
    prime-order subgroup other than one of small order (libsodium's check: it decodes the
    point, refuses one of small order, and multiplies by ``L``)."""
    return canonical_encoding(data) and _is_valid_point(data) == 1


def acceptable(public_key: bytes, signature: bytes) -> bool:
    """The key and the signature meet the rule's parts that are not the equation."""
    return (
        len(signature) == 2 * POINT_SIZE
        and canonical_scalar(signature[32:])
        and valid_public_key(public_key)
        and valid_commitment(signature[:32])
    )
