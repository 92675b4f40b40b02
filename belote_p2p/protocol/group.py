"""The prime-order group of Ed25519, domain-separated hashing and the deck's sigma proofs.

What the deck protocol (:mod:`belote_p2p.protocol.deck`) and its proof of shuffle
(:mod:`belote_p2p.protocol.shuffle`) need from cryptography lives here, on top of libsodium
through ``nacl.bindings``:

* points are 32-byte compressed Edwards encodings, as libsodium writes them;
* scalars are Python ints in ``0..L-1`` (``L`` the prime order of the group), encoded as
  32 bytes little-endian; arithmetic on them is plain ``int`` arithmetic modulo ``L``;
* :func:`transcript_hash` is the one hash every label, challenge and derivation goes
  through: SHA-512 over length-framed parts behind the protocol's domain label;
* :class:`Proof` is a Fiat–Shamir proof ``(challenge, response)`` used both as a Schnorr
  proof of knowledge of a key (:func:`prove_key`) and as a Chaum–Pedersen proof of equal
  discrete logarithms for a decryption share (:func:`prove_share`).

``protocol/DECK.md`` gives every byte of every hash input; keep the two in step.

Received points are checked before use. libsodium's variable-base scalar multiplication
(``crypto_scalarmult_ed25519_noclamp``) refuses a point that is non-canonical, of small
order or outside the prime-order subgroup (the same checks as
``crypto_core_ed25519_is_valid_point``); :func:`mul` turns that refusal into
:class:`InvalidPoint`. Point addition checks nothing beyond "on the curve", so a point that
only ever meets additions must go through :func:`is_valid_point` first.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import nacl.exceptions
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_is_valid_point,
    crypto_core_ed25519_sub,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)

from belote_p2p.errors import RemoteProtocolError

DOMAIN = b"belote-p2p/deck/v2"
"""The domain label in front of every hash of the deck protocol."""

L = 2**252 + 27742317777372353535851937790883648493
"""The prime order of the group (and of the Ed25519 base point)."""

POINT_SIZE = 32
SCALAR_SIZE = 32
PROOF_SIZE = 64

IDENTITY = (1).to_bytes(32, "little")
"""The neutral element's encoding. Never valid as a received point."""


class InvalidPoint(RemoteProtocolError, ValueError):
    """Bytes that are not the encoding of a point of the prime-order subgroup (or identity)."""


class InvalidScalar(RemoteProtocolError, ValueError):
    """Bytes that are not a canonical scalar (32 bytes little-endian, below ``L``)."""


# -- encodings ---------------------------------------------------------------------------


def scalar_bytes(k: int) -> bytes:
    """The 32-byte little-endian encoding of a scalar in ``0..L-1``."""
    return k.to_bytes(32, "little")


def parse_scalar(data: bytes, *, nonzero: bool = False) -> int:
    """A scalar from its canonical encoding; raise :class:`InvalidScalar` otherwise."""
    if len(data) != SCALAR_SIZE:
        raise InvalidScalar(f"a scalar is {SCALAR_SIZE} bytes, not {len(data)}")
    k = int.from_bytes(data, "little")
    if k >= L:
        raise InvalidScalar("scalar not reduced modulo L")
    if nonzero and k == 0:
        raise InvalidScalar("scalar is zero")
    return k


def u8(n: int) -> bytes:
    return struct.pack("<B", n)


def u32(n: int) -> bytes:
    return struct.pack("<I", n)


def random_scalar() -> int:
    """A uniformly random non-zero scalar from the operating system's generator."""
    while True:
        k = int.from_bytes(secrets.token_bytes(64), "little") % L
        if k:
            return k


# -- hashing -----------------------------------------------------------------------------


_FRAMED_DOMAIN = u32(len(DOMAIN)) + DOMAIN


def framed(label: bytes, parts: Sequence[bytes]) -> bytes:
    """``frame(DOMAIN) || frame(label) || frame(part)...``, ``frame(x) = u32le(len x) || x``."""
    out = [_FRAMED_DOMAIN, len(label).to_bytes(4, "little"), label]
    for part in parts:
        out.append(len(part).to_bytes(4, "little"))
        out.append(part)
    return b"".join(out)


def transcript_hash(label: bytes, *parts: bytes) -> bytes:
    """SHA-512 of :func:`framed` ``(label, parts)``: 64 bytes."""
    return hashlib.sha512(framed(label, parts)).digest()


def hash_to_scalar(label: bytes, *parts: bytes) -> int:
    """:func:`transcript_hash` read as a little-endian integer, reduced modulo ``L``."""
    return int.from_bytes(transcript_hash(label, *parts), "little") % L


def hash_to_point(label: bytes, *parts: bytes) -> bytes:
    """A point nobody knows the discrete logarithm of (libsodium's Elligator 2 map).

    ``from_uniform`` of the first 32 bytes of :func:`transcript_hash`; libsodium clears
    the cofactor, so the point lies in the prime-order subgroup.
    """
    return bytes(crypto_core_ed25519_from_uniform(transcript_hash(label, *parts)[:32]))


# -- group operations --------------------------------------------------------------------


def is_valid_point(p: bytes) -> bool:
    """Canonical, on the curve, in the prime-order subgroup and not the identity."""
    return len(p) == POINT_SIZE and bool(crypto_core_ed25519_is_valid_point(p))


def base_mul(k: int) -> bytes:
    """``k·G`` for a non-zero scalar ``k`` below ``L``."""
    return bytes(crypto_scalarmult_ed25519_base_noclamp(k.to_bytes(32, "little")))


def mul(k: int, p: bytes) -> bytes:
    """``k·P``; raise :class:`InvalidPoint` when ``P`` is not a valid point.

    libsodium checks ``P`` exactly as :func:`is_valid_point` does before multiplying, and
    refuses a zero result (``k = 0``), which is reported the same way.
    """
    try:
        return bytes(crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), p))
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError) as exc:
        raise InvalidPoint("not a point of the prime-order subgroup") from exc


def add(p: bytes, q: bytes) -> bytes:
    """``P + Q``. libsodium only refuses bytes that decode to no curve point at all
    (:class:`InvalidPoint`): check received points before adding them."""
    try:
        return bytes(crypto_core_ed25519_add(p, q))
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError) as exc:
        raise InvalidPoint("not a point of the curve") from exc


def sub(p: bytes, q: bytes) -> bytes:
    """``P − Q``, as :func:`add`."""
    try:
        return bytes(crypto_core_ed25519_sub(p, q))
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError) as exc:
        raise InvalidPoint("not a point of the curve") from exc


# -- proofs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proof:
    """A Fiat–Shamir proof: challenge ``c`` and response ``s = k + c·x`` (both mod ``L``)."""

    challenge: int
    response: int

    def to_bytes(self) -> bytes:
        """``c || s``, each 32 bytes little-endian."""
        return scalar_bytes(self.challenge) + scalar_bytes(self.response)

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        """Parse ``c || s``; raise :class:`InvalidScalar` on a wrong length or a non-canonical
        scalar (libsodium would silently drop the top bit of ``s``)."""
        if len(data) != PROOF_SIZE:
            raise InvalidScalar(f"a proof is {PROOF_SIZE} bytes, not {len(data)}")
        return cls(parse_scalar(data[:32]), parse_scalar(data[32:]))


KEY_NONCE = b"key-nonce"
KEY_CHALLENGE = b"key-proof"
SHARE_NONCE = b"share-nonce"
SHARE_CHALLENGE = b"share-proof"


def prove_key(x: int, public: bytes, context: Sequence[bytes]) -> Proof:
    """Schnorr proof that the prover knows ``x`` with ``public = x·G``.

    The nonce is derived from the secret and the statement (as in EdDSA), so a proof is
    reproducible from the secret alone and two statements never share a nonce.
    """
    k = hash_to_scalar(KEY_NONCE, scalar_bytes(x), *context, public)
    commitment = base_mul(k)
    c = hash_to_scalar(KEY_CHALLENGE, *context, public, commitment)
    return Proof(c, (k + c * x) % L)


def verify_key(public: bytes, proof: Proof, context: Sequence[bytes]) -> bool:
    """Check a :func:`prove_key` proof; raise :class:`InvalidPoint` for a bad ``public``."""
    if proof.response == 0 or proof.challenge == 0:
        return False
    commitment = sub(base_mul(proof.response), mul(proof.challenge, public))
    return hash_to_scalar(KEY_CHALLENGE, *context, public, commitment) == proof.challenge


def prove_share(
    x: int, public: bytes, base: bytes, share: bytes, context: Sequence[bytes]
) -> Proof:
    """Chaum–Pedersen proof that ``log_G(public) = log_base(share)`` (both equal ``x``)."""
    k = hash_to_scalar(SHARE_NONCE, scalar_bytes(x), *context, public, base, share)
    a = base_mul(k)
    b = mul(k, base)
    c = hash_to_scalar(SHARE_CHALLENGE, *context, public, base, share, a, b)
    return Proof(c, (k + c * x) % L)


def verify_share(
    public: bytes, base: bytes, share: bytes, proof: Proof, context: Sequence[bytes]
) -> bool:
    """Check a :func:`prove_share` proof.

    Raises :class:`InvalidPoint` when ``share`` (or ``public``/``base``) is not a valid
    point: libsodium checks each of them as it multiplies.
    """
    if proof.response == 0 or proof.challenge == 0:
        return False
    s, c = proof.response, proof.challenge
    a = sub(base_mul(s), mul(c, public))
    b = sub(mul(s, base), mul(c, share))
    return hash_to_scalar(SHARE_CHALLENGE, *context, public, base, share, a, b) == c
