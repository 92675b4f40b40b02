"""The prime-order group ristretto255, domain-separated hashing and the deck's sigma proofs.

What the deck protocol (:mod:`belote_p2p.protocol.deck`) and its proof of shuffle
(:mod:`belote_p2p.protocol.shuffle`) need from cryptography lives here, on top of libsodium's
ristretto255 functions (through the ``rbcl`` package, which ships its own libsodium):

* points are 32-byte ristretto255 encodings (RFC 9496), as libsodium writes them;
* scalars are Python ints in ``0..L-1`` (``L`` the prime order of the group), encoded as
  32 bytes little-endian; arithmetic on them is plain ``int`` arithmetic modulo ``L``;
* :func:`transcript_hash` is the one hash every label, challenge and derivation goes
  through: SHA-512 over length-framed parts behind the protocol's domain label;
* :class:`Proof` is a Fiat–Shamir proof ``(challenge, response)`` used both as a Schnorr
  proof of knowledge of a key (:func:`prove_key`) and as a Chaum–Pedersen proof of equal
  discrete logarithms for a decryption share (:func:`prove_share`).

``protocol/DECK.md`` gives every byte of every hash input; keep the two in step.

Why ristretto255: it *is* a group of prime order ``L``, so there is no cofactor to clear and
no subgroup to check. Every 32 bytes either decode to a group element or are refused (a
non-canonical or otherwise invalid encoding); each element has exactly one encoding. So the
decoding that every operation does anyway is the whole validation of a received point:
:func:`mul`, :func:`add` and :func:`sub` refuse what does not decode (:class:`InvalidPoint`),
and no operation ever needs a separate check. The identity ``O`` (32 zero bytes) decodes;
:func:`mul` refuses it as a factor (libsodium refuses a product equal to ``O``, and with a
scalar in ``1..L-1`` that happens exactly when the point is ``O``), and
:func:`is_valid_point` says no to it, so that no received point may be ``O`` where the
protocol multiplies it.

Each call decodes its points and encodes its result (about 5 µs a point here); a sum of many
points (:func:`sum_points`) is a chain of additions, each decoding its partial sum again:
libsodium has no API that keeps a decoded point between calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import secrets
import struct
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rbcl import _sodium

from belote_p2p.errors import RemoteProtocolError


def _remove_loaded_copy(path: object) -> None:
    """rbcl loads its libsodium from a copy it writes to the temporary directory at import
    and never removes (one per process); once loaded (mapped), the file is not needed any
    more on POSIX systems. Only such a copy is removed, never a library installed elsewhere."""
    if not isinstance(path, str) or os.name != "posix":
        return
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(tempfile.gettempdir()):
        with contextlib.suppress(OSError):
            os.unlink(path)


_remove_loaded_copy(getattr(_sodium, "_name", None))
SODIUM = _sodium
"""The libsodium that ``rbcl`` loaded (its temporary copy removed): the Ed25519 rule of
:mod:`belote_p2p.protocol.ed25519` checks a signature's ``R`` with it too."""

DOMAIN = b"belote-p2p/deck/v5"
"""The domain label in front of every hash of the deck protocol."""

L = 2**252 + 27742317777372353535851937790883648493
"""The prime order of ristretto255."""

POINT_SIZE = 32
SCALAR_SIZE = 32
PROOF_SIZE = 64

IDENTITY = bytes(32)
"""The neutral element's encoding. Never valid as a received point."""


class InvalidPoint(RemoteProtocolError, ValueError):
    """Bytes that are not the encoding of a ristretto255 element (or the identity, where a
    point is multiplied)."""


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


def hash_to_scalars(label: bytes, parts: Sequence[bytes], lasts: Iterable[bytes]) -> list[int]:
    """``[hash_to_scalar(label, *parts, last) for last in lasts]``, the common prefix hashed
    once (a vector of nonces or challenges drawn by index: about a third of the cost)."""
    prefix = hashlib.sha512(framed(label, parts))
    out = []
    for last in lasts:
        h = prefix.copy()
        h.update(len(last).to_bytes(4, "little") + last)
        out.append(int.from_bytes(h.digest(), "little") % L)
    return out


def hash_to_point(label: bytes, *parts: bytes) -> bytes:
    """A point nobody knows the discrete logarithm of: libsodium's
    ``crypto_core_ristretto255_from_hash`` (RFC 9496's one-way map) of the 64 bytes of
    :func:`transcript_hash`."""
    out = ctypes.create_string_buffer(POINT_SIZE)
    _sodium.crypto_core_ristretto255_from_hash(out, transcript_hash(label, *parts))
    return out.raw


# -- group operations --------------------------------------------------------------------

_point_buffer = ctypes.c_char * POINT_SIZE
_base_mul = _sodium.crypto_scalarmult_ristretto255_base
_mul = _sodium.crypto_scalarmult_ristretto255
_add = _sodium.crypto_core_ristretto255_add
_sub = _sodium.crypto_core_ristretto255_sub
_is_valid = _sodium.crypto_core_ristretto255_is_valid_point


FIELD_PRIME = 2**255 - 19
"""The prime ``p`` of the field ristretto255's encodings are numbers of."""


def canonical_field_element(p: bytes) -> bool:
    """32 bytes that RFC 9496's decoding reads on: a little-endian ``s`` with ``s < p``
    (so never with the top bit set) and ``s`` even (non-negative). Checked here, whatever
    the libsodium: some versions (1.0.18, which ``rbcl`` ships) ignore the top bit, and read
    ``s + 2^255`` as ``s``, which would give an element a second encoding that a receiver
    running another version refuses (DECK.md §11)."""
    s = int.from_bytes(p, "little")
    return s < FIELD_PRIME and not s & 1


def is_valid_point(p: bytes) -> bool:
    """The canonical encoding of an element of ristretto255 other than the identity."""
    return (
        type(p) is bytes
        and len(p) == POINT_SIZE
        and p != IDENTITY
        and canonical_field_element(p)
        and _is_valid(p) == 1
    )


def _point(p: object) -> bytes:
    """``p`` if it is 32 bytes (what libsodium reads) holding a canonical field element
    (:func:`canonical_field_element`), else :class:`InvalidPoint`: libsodium decodes the
    rest (RFC 9496's equations)."""
    if type(p) is not bytes or len(p) != POINT_SIZE:
        raise InvalidPoint(f"a point is {POINT_SIZE} bytes")
    if not canonical_field_element(p):
        raise InvalidPoint("not a canonical ristretto255 encoding (s >= p, or s odd)")
    return p


def base_mul(k: int) -> bytes:
    """``k·G`` for a non-zero scalar ``k`` below ``L``."""
    out = _point_buffer()
    if _base_mul(out, k.to_bytes(32, "little")) != 0:
        raise ValueError("k·G for k = 0 (mod L)")
    return out.raw


def mul(k: int, p: bytes) -> bytes:
    """``k·P`` for ``k`` in ``1..L-1``; raise :class:`InvalidPoint` when ``P`` is not a valid
    point: it does not decode, or it is the identity (libsodium refuses a product equal to
    ``O``, which is reported the same way)."""
    out = _point_buffer()
    if _mul(out, k.to_bytes(32, "little"), _point(p)) != 0:
        raise InvalidPoint("not a ristretto255 point other than the identity")
    return out.raw


def add(p: bytes, q: bytes) -> bytes:
    """``P + Q``; raise :class:`InvalidPoint` when either does not decode. Either may be
    the identity."""
    out = _point_buffer()
    if _add(out, _point(p), _point(q)) != 0:
        raise InvalidPoint("not a ristretto255 point")
    return out.raw


def sub(p: bytes, q: bytes) -> bytes:
    """``P − Q``, as :func:`add`."""
    out = _point_buffer()
    if _sub(out, _point(p), _point(q)) != 0:
        raise InvalidPoint("not a ristretto255 point")
    return out.raw


def sum_points(points: Iterable[bytes]) -> bytes:
    """The sum of points (each checked to decode), the identity for none."""
    it = iter(points)
    acc = next(it, IDENTITY)
    for p in it:
        acc = add(acc, p)
    return acc


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
    point: each is decoded by the multiplication it goes through.
    """
    if proof.response == 0 or proof.challenge == 0:
        return False
    s, c = proof.response, proof.challenge
    a = sub(base_mul(s), mul(c, public))
    b = sub(mul(s, base), mul(c, share))
    return hash_to_scalar(SHARE_CHALLENGE, *context, public, base, share, a, b) == c
