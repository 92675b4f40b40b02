"""A zero-knowledge proof that a shuffled deck is a permutation and re-masking of its input.

Every ``deck.shuffle`` message carries one (``protocol/DECK.md`` §5): without it the last
shuffler could publish fresh encryptions of the 32 cards in an order it chose and know every
hand. It is the Terelius–Wikström proof of shuffle, in the pseudo-code of Haenni, Locher,
Koenig and Dubuis (FC 2017 Workshops), over the prime-order group ristretto255
(:mod:`belote_p2p.protocol.group`), made non-interactive by Fiat–Shamir.

Statement
---------
Public: the joint key ``X``, a context (byte strings: in the deck, table id, round, the
shuffler's seat and its seed commitment), the input deck ``E_0..E_{N-1}`` and the output deck
``E'_0..E'_{N-1}`` (``N >= 2`` ElGamal ciphertexts ``(c1, c2)``). The prover knows a
permutation ``π`` and scalars ``r_i`` with, for every output position ``i``::

    E'_i = E_{π(i)} + r_i·(G, X)      (c1'_i = c1_{π(i)} + r_i·G,  c2'_i = c2_{π(i)} + r_i·X)

which is the deck's re-masking with ``π(i) = perm[i]``. The proof shows that such ``(π, r)``
exist and are known, and nothing else. It does not show that they are the ones the
committed seed derives: the end-of-round audit still checks that.

Construction (additive notation; ``H``, ``H_i`` are generators nobody knows a discrete
logarithm of, see :func:`generators`)
-----------------------------------------------------------------------------------------
1. Commit to the permutation matrix column by column: ``C_j = ρ_j·G + H_{π⁻¹(j)}``.
2. ``u_j`` = hash of the statement and every ``C_j`` (so ``u`` is drawn after ``π`` is
   fixed); ``ũ_i = u_{π(i)}``.
3. A chain ``Ĉ_{-1} = H``, ``Ĉ_i = r̂_i·G + ũ_i·Ĉ_{i-1}``: ``Ĉ_{N-1}`` commits to ``∏ ũ_i``.
4. A Schnorr-style proof of knowledge (one challenge ``c``) of ``r̄ = Σ ρ_j``,
   ``r̂ = Σ r̂_i·∏_{k>i} ũ_k``, ``r = Σ ρ_j·u_j``, ``r' = Σ ũ_i·r_i``, the ``r̂_i`` and ``ũ_i``
   such that::

       Σ C_j − Σ H_i          = r̄·G                       (B·1 = 1)
       Ĉ_{N-1} − (∏ u_j)·H    = r̂·G                       (∏ ũ_i = ∏ u_j)
       Σ u_j·C_j              = r·G + Σ ũ_i·H_i            (ũ = B·u)
       Σ ũ_i·E'_i − r'·(G, X) = Σ u_j·E_j                  (the re-masking)
       Ĉ_i                    = r̂_i·G + ũ_i·Ĉ_{i-1}        (each link)

   with the responses ``s̃_i = ω̃_i + c·ũ_i`` shared by the last three, so that the same ``ũ``
   appears in all of them. The proof is ``(C, Ĉ, c, s1..s4, ŝ, s̃)``; the verifier recomputes
   the ``N + 5`` commitments from it and re-derives ``c``.

Soundness. Two accepting answers to different ``c`` for the same commitments give every
opening (special soundness). ``C`` binds a matrix ``B`` before ``u`` is drawn; ``B·1 = 1``
and ``∏ (B·u)_i = ∏ u_i`` for a random ``u`` make ``B`` a permutation matrix except with
probability ``N/L`` (Terelius–Wikström, Theorem 1). With ``B = π``, the re-masking equation
says ``Σ u_{π(i)}·(E'_i − E_{π(i)})`` is a multiple of ``(G, X)``; if some ``E'_i − E_{π(i)}``
is not, its image in ``G²/span((G, X)) ≅ Z_L`` is non-zero and the sum vanishes for a
fraction ``1/L`` of ``u``. A cheating prover thus succeeds with probability about
``(N + 2)/L < 2^-246`` per hash it computes, plus the odds of finding a discrete logarithm
between the generators. Nothing is assumed about ``X``: the prover may know its logarithm.

Fiat–Shamir binds everything: ``S`` hashes the context (its part count first), ``N``, ``X``
and both decks; ``Q = H(S, C...)`` gives ``u``; ``c = H(Q, Ĉ..., t...)``. A proof verifies
for no other table, round, seat, commitment, key, input deck or output deck.

Nonces
------
Every secret value of the prover is ``Hs(label, K, u32(index))`` with
``K = H("shuffle-proof-nonce-key", nonce_seed, S, π, r)``: the same inputs give the same
bytes, two statements never share a nonce, and the values are uniform to whoever does not
know ``nonce_seed`` (the deck's secret shuffle seed). Once the seed is revealed, the proof
can be recomputed; :func:`follows_seed` checks that a verified proof is the one the seed
gives, with scalar arithmetic only.

Cost (``N`` cards; ``mul`` a variable-point multiplication, ``base`` a base-point one):
prove ``5N + 1`` mul (``4N + 1`` from the trivial deck) and ``3N + 4`` base; verify ``8N + 3``
mul (``7N + 3``) and ``N + 4`` base. Every point the prover sends goes through a
multiplication (or, with a zero multiplier, :func:`~belote_p2p.protocol.group.is_valid_point`),
whose decoding is the whole check of a ristretto255 point; :meth:`ShuffleProof.from_wire`
checks only shapes and scalars. Without a multi-scalar multiplication in libsodium, batching
the equations with random weights would not save a single multiplication.

Errors: :class:`MalformedShuffleProof` (wire data that is no proof: a peer's fault) and
:class:`ShuffleProofUsageError` (the caller's arguments: types, a bad witness, an invalid key
or input deck — the input deck is the previous output, whose proof the caller verified
first). :func:`verify_shuffle` returns ``False`` for everything the prover controls.
``protocol/DECK.md`` §5 gives every byte; keep the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Protocol

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError

from .group import (
    IDENTITY,
    POINT_SIZE,
    InvalidPoint,
    InvalidScalar,
    L,
    add,
    base_mul,
    hash_to_point,
    hash_to_scalar,
    hash_to_scalars,
    is_valid_point,
    mul,
    parse_scalar,
    scalar_bytes,
    sub,
    sum_points,
    transcript_hash,
    u32,
)

MIN_CARDS = 2
MAX_CARDS = 1024
"""The largest proof :meth:`ShuffleProof.from_wire` accepts without being told ``N``."""

GENERATOR_H_LABEL = b"shuffle-proof-h"
GENERATOR_HI_LABEL = b"shuffle-proof-h-i"
STATEMENT_LABEL = b"shuffle-proof-statement"
COMMITMENTS_LABEL = b"shuffle-proof-commitments"
U_LABEL = b"shuffle-proof-u"
CHALLENGE_LABEL = b"shuffle-proof-challenge"
NONCE_KEY_LABEL = b"shuffle-proof-nonce-key"
NONCE_RHO_LABEL = b"shuffle-proof-nonce-rho"
NONCE_CHAIN_LABEL = b"shuffle-proof-nonce-chain"
NONCE_OMEGA_LABELS = (
    b"shuffle-proof-nonce-omega-1",
    b"shuffle-proof-nonce-omega-2",
    b"shuffle-proof-nonce-omega-3",
    b"shuffle-proof-nonce-omega-4",
)
NONCE_OMEGA_HAT_LABEL = b"shuffle-proof-nonce-omega-hat"
NONCE_OMEGA_TILDE_LABEL = b"shuffle-proof-nonce-omega-tilde"


class ShuffleProofUsageError(LocalProtocolError):
    """The caller misused the API (types, witness, joint key, input deck); never raised
    because of what the prover sent."""


class MalformedShuffleProof(RemoteProtocolError):
    """Wire data that is not a well-formed proof (shape, type, length, scalar)."""


class CiphertextLike(Protocol):
    """An ElGamal ciphertext ``(c1, c2)`` of 32-byte points (``deck.Ciphertext`` fits)."""

    @property
    def c1(self) -> bytes: ...

    @property
    def c2(self) -> bytes: ...


# -- the proof ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """``(C, Ĉ, c, s1..s4, ŝ, s̃)``: points as 32-byte encodings, scalars as ints below ``L``.

    Built by :func:`prove_shuffle` or :meth:`from_wire`; :func:`verify_shuffle` re-checks the
    shape of a proof built any other way, and every point.
    """

    FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"commitments", "chain", "challenge", "s1", "s2", "s3", "s4", "s_hat", "s_tilde"}
    )

    commitments: tuple[bytes, ...]
    """``C_j = ρ_j·G + H_{π⁻¹(j)}``, one per input position."""
    chain: tuple[bytes, ...]
    """``Ĉ_i = r̂_i·G + ũ_i·Ĉ_{i-1}`` (``Ĉ_{-1} = H``), one per output position."""
    challenge: int
    s1: int
    s2: int
    s3: int
    s4: int
    s_hat: tuple[int, ...]
    s_tilde: tuple[int, ...]

    @property
    def size(self) -> int:
        """``N``, the number of cards the proof is for."""
        return len(self.commitments)

    def to_wire(self) -> dict[str, Any]:
        """A msgpack-ready map, 32-byte ``bytes`` for points and scalars (DECK.md §5.6)."""
        return {
            "commitments": list(self.commitments),
            "chain": list(self.chain),
            "challenge": scalar_bytes(self.challenge),
            "s1": scalar_bytes(self.s1),
            "s2": scalar_bytes(self.s2),
            "s3": scalar_bytes(self.s3),
            "s4": scalar_bytes(self.s4),
            "s_hat": [scalar_bytes(s) for s in self.s_hat],
            "s_tilde": [scalar_bytes(s) for s in self.s_tilde],
        }

    @classmethod
    def from_wire(cls, data: object, size: int | None = None) -> ShuffleProof:
        """Parse :meth:`to_wire`'s map strictly; raise :class:`MalformedShuffleProof`.

        ``size`` is the number of cards the caller expects, checked before anything else is
        decoded; without it the four lists must agree on a size in ``MIN_CARDS..MAX_CARDS``.
        Scalars must be canonical and the challenge non-zero. Points are only checked to be
        32 bytes: :func:`verify_shuffle` validates each one in the multiplication it needs
        anyway (validating them here too would cost ``2N`` more checks a proof).
        """
        if size is not None and (type(size) is not int or not MIN_CARDS <= size <= MAX_CARDS):
            raise ShuffleProofUsageError(f"size must be an int in {MIN_CARDS}..{MAX_CARDS}")
        if not isinstance(data, Mapping):
            raise MalformedShuffleProof("a shuffle proof is a map")
        if set(data) != cls.FIELDS:
            raise MalformedShuffleProof(f"a shuffle proof has the fields {sorted(cls.FIELDS)}")
        lists: dict[str, Sequence[object]] = {}
        for key in ("commitments", "chain", "s_hat", "s_tilde"):
            value = data[key]
            if type(value) not in (list, tuple):
                raise MalformedShuffleProof(f"{key!r} must be a list")
            lists[key] = value
        n = len(lists["commitments"])
        if size is not None and n != size:
            raise MalformedShuffleProof(f"expected a proof for {size} cards, not {n}")
        if not MIN_CARDS <= n <= MAX_CARDS:
            raise MalformedShuffleProof(f"a proof is for {MIN_CARDS}..{MAX_CARDS} cards")
        if any(len(v) != n for v in lists.values()):
            raise MalformedShuffleProof("the lists of a shuffle proof differ in length")
        challenge = _scalar_field(data["challenge"], "challenge")
        if challenge == 0:
            raise MalformedShuffleProof("'challenge' is zero")
        s1, s2, s3, s4 = (_scalar_field(data[k], k) for k in ("s1", "s2", "s3", "s4"))
        return cls(
            commitments=tuple(_point_field(v, "commitments") for v in lists["commitments"]),
            chain=tuple(_point_field(v, "chain") for v in lists["chain"]),
            challenge=challenge,
            s1=s1,
            s2=s2,
            s3=s3,
            s4=s4,
            s_hat=tuple(_scalar_field(v, "s_hat") for v in lists["s_hat"]),
            s_tilde=tuple(_scalar_field(v, "s_tilde") for v in lists["s_tilde"]),
        )


def _scalar_field(value: object, key: str) -> int:
    if type(value) is not bytes:
        raise MalformedShuffleProof(f"{key!r}: a scalar is 32 bytes")
    try:
        return parse_scalar(value)
    except InvalidScalar as exc:
        raise MalformedShuffleProof(f"{key!r}: {exc}") from None


def _point_field(value: object, key: str) -> bytes:
    if type(value) is not bytes or len(value) != POINT_SIZE:
        raise MalformedShuffleProof(f"{key!r}: a point is {POINT_SIZE} bytes")
    return value


# -- generators --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Generators:
    """``H``, ``H_0..H_{N-1}`` and ``Σ H_i`` (which saves ``N`` additions a verification)."""

    h: bytes
    hs: tuple[bytes, ...]
    h_sum: bytes


@lru_cache(maxsize=8)
def generators(n: int) -> Generators:
    """The commitment generators for ``n`` cards, computed once per ``n``:
    ``H = from_hash(H("shuffle-proof-h"))``, ``H_i = from_hash(H("shuffle-proof-h-i", u32(i)))``
    (``H_i`` does not depend on ``n``).

    Hash-to-curve, so nobody knows a discrete logarithm between them, ``G`` and the card
    points, which the soundness needs. Checked to be valid and distinct (a failure would be a
    hash collision).
    """
    h = hash_to_point(GENERATOR_H_LABEL)
    hs = tuple(hash_to_point(GENERATOR_HI_LABEL, u32(i)) for i in range(n))
    if not all(is_valid_point(p) for p in (h, *hs)) or len({h, *hs}) != n + 1:
        raise AssertionError("the shuffle proof's generators are not distinct valid points")
    return Generators(h, hs, sum_points(hs))


# -- group helpers -----------------------------------------------------------------------


def _base(k: int) -> bytes:
    """``k·G``, the identity for ``k = 0`` (which libsodium refuses)."""
    return base_mul(k) if k else IDENTITY


def _mul(k: int, p: bytes) -> bytes:
    """``k·P`` for a received or fixed point, checked even when ``k = 0`` (the multiplication
    checks it otherwise); :class:`InvalidPoint` if ``P`` is not valid."""
    if k == 0:
        if not is_valid_point(p):
            raise InvalidPoint("not a ristretto255 point other than the identity")
        return IDENTITY
    return mul(k, p)


def _mul_computed(k: int, p: bytes) -> bytes:
    """``k·P`` for a point we computed, which may be the identity."""
    if k == 0 or p == IDENTITY:
        return IDENTITY
    return mul(k, p)


# -- hashes ------------------------------------------------------------------------------


def _statement_digest(
    context: Sequence[bytes],
    pk: bytes,
    inputs: Sequence[CiphertextLike],
    outputs: Sequence[CiphertextLike],
) -> bytes:
    """``S = H("shuffle-proof-statement", u32(len ctx), ctx..., u32(N), X, E..., E'...)``;
    the count of context parts keeps the framing unambiguous."""
    return transcript_hash(
        STATEMENT_LABEL,
        u32(len(context)),
        *context,
        u32(len(inputs)),
        pk,
        *(ct.c1 + ct.c2 for ct in inputs),
        *(ct.c1 + ct.c2 for ct in outputs),
    )


def _challenge_vector(statement: bytes, commitments: Sequence[bytes]) -> tuple[bytes, list[int]]:
    """``Q = H("shuffle-proof-commitments", S, C...)`` and ``u_j = Hs("shuffle-proof-u", Q,
    u32(j))``: ``u`` is fixed only after the permutation is committed."""
    q = transcript_hash(COMMITMENTS_LABEL, statement, *commitments)
    return q, hash_to_scalars(U_LABEL, (q,), map(u32, range(len(commitments))))


def _challenge(q: bytes, chain: Sequence[bytes], t: Sequence[bytes]) -> int:
    """``c = Hs("shuffle-proof-challenge", Q, Ĉ..., t1, t2, t3, t4a, t4b, t̂...)``."""
    return hash_to_scalar(CHALLENGE_LABEL, q, *chain, *t)


@dataclass(frozen=True, slots=True)
class _Nonces:
    """The prover's secret values, all derived from ``K`` (see the module docstring)."""

    rho: tuple[int, ...]
    chain: tuple[int, ...]
    omega: tuple[int, int, int, int]
    omega_hat: tuple[int, ...]
    omega_tilde: tuple[int, ...]

    @classmethod
    def derive(
        cls, nonce_seed: bytes, statement: bytes, perm: Sequence[int], masks: Sequence[int]
    ) -> _Nonces:
        key = transcript_hash(
            NONCE_KEY_LABEL,
            nonce_seed,
            statement,
            b"".join(u32(p) for p in perm),
            b"".join(scalar_bytes(r) for r in masks),
        )
        indices = [u32(i) for i in range(len(perm))]

        def draw(label: bytes) -> tuple[int, ...]:
            return tuple(hash_to_scalars(label, (key,), indices))

        w1, w2, w3, w4 = (hash_to_scalar(label, key, u32(0)) for label in NONCE_OMEGA_LABELS)
        return cls(
            rho=draw(NONCE_RHO_LABEL),
            chain=draw(NONCE_CHAIN_LABEL),
            omega=(w1, w2, w3, w4),
            omega_hat=draw(NONCE_OMEGA_HAT_LABEL),
            omega_tilde=draw(NONCE_OMEGA_TILDE_LABEL),
        )


def _responses(
    c: int, nonces: _Nonces, perm: Sequence[int], masks: Sequence[int], u: Sequence[int]
) -> tuple[int, int, int, int, tuple[int, ...], tuple[int, ...]]:
    """``(s1, s2, s3, s4, ŝ, s̃)`` for challenge ``c``: nonce plus ``c`` times the witness."""
    n = len(perm)
    u_t = [u[perm[i]] for i in range(n)]
    r_bar = sum(nonces.rho) % L
    r_chain = 0  # Σ r̂_i·∏_{k>i} ũ_k, accumulated from the end (the empty product is 1)
    v = 1
    for i in range(n - 1, -1, -1):
        r_chain = (r_chain + nonces.chain[i] * v) % L
        v = v * u_t[i] % L
    r_u = sum(x * y for x, y in zip(nonces.rho, u, strict=True)) % L
    r_mask = sum(x * y for x, y in zip(u_t, masks, strict=True)) % L
    w1, w2, w3, w4 = nonces.omega
    return (
        (w1 + c * r_bar) % L,
        (w2 + c * r_chain) % L,
        (w3 + c * r_u) % L,
        (w4 + c * r_mask) % L,
        tuple((w + c * r) % L for w, r in zip(nonces.omega_hat, nonces.chain, strict=True)),
        tuple((w + c * x) % L for w, x in zip(nonces.omega_tilde, u_t, strict=True)),
    )


# -- argument checks ---------------------------------------------------------------------


def _check_deck(deck: object, name: str) -> Sequence[CiphertextLike]:
    """A sequence of ciphertexts with 32-byte ``bytes`` fields, or a usage error."""
    if not isinstance(deck, Sequence) or isinstance(deck, (bytes, str)):
        raise ShuffleProofUsageError(f"{name} must be a sequence of ciphertexts")
    for ct in deck:
        c1 = getattr(ct, "c1", None)
        c2 = getattr(ct, "c2", None)
        if type(c1) is not bytes or type(c2) is not bytes:
            raise ShuffleProofUsageError(f"{name} holds something that is not a ciphertext")
        if len(c1) != POINT_SIZE or len(c2) != POINT_SIZE:
            raise ShuffleProofUsageError(f"{name}: ciphertext points are {POINT_SIZE} bytes")
    return deck


def _check_statement(pk: object, inputs: object, outputs: object, context: object) -> int:
    """Check the caller's part of a statement; return ``N``."""
    if type(pk) is not bytes or len(pk) != POINT_SIZE:
        raise ShuffleProofUsageError(f"the public key must be {POINT_SIZE} bytes")
    if (
        not isinstance(context, Sequence)
        or isinstance(context, (bytes, str))
        or not all(type(part) is bytes for part in context)
    ):
        raise ShuffleProofUsageError("context must be a sequence of bytes")
    n = len(_check_deck(inputs, "inputs"))
    if n < MIN_CARDS:
        raise ShuffleProofUsageError(f"a shuffle proof needs at least {MIN_CARDS} cards")
    _check_deck(outputs, "outputs")
    return n


def _check_witness(n: int, permutation: object, masks: object, nonce_seed: object) -> None:
    if not isinstance(permutation, Sequence) or sorted(
        p if type(p) is int else -1 for p in permutation
    ) != list(range(n)):
        raise ShuffleProofUsageError(f"permutation must be a permutation of 0..{n - 1}")
    if (
        not isinstance(masks, Sequence)
        or len(masks) != n
        or any(type(x) is not int or not 0 <= x < L for x in masks)
    ):
        raise ShuffleProofUsageError(f"masks must be {n} ints in 0..L-1")
    if type(nonce_seed) is not bytes:
        raise ShuffleProofUsageError("nonce_seed must be bytes")


# -- proving -----------------------------------------------------------------------------


def prove_shuffle(
    pk: bytes,
    inputs: Sequence[CiphertextLike],
    outputs: Sequence[CiphertextLike],
    permutation: Sequence[int],
    masks: Sequence[int],
    context: Sequence[bytes],
    nonce_seed: bytes,
) -> ShuffleProof:
    """Prove that ``outputs[i] = inputs[permutation[i]] + masks[i]·(G, pk)`` for every ``i``.

    ``nonce_seed`` is a secret (the deck's shuffle seed) from which, with the statement and
    the witness, every nonce derives. The witness is not checked against the decks (that
    would cost ``2N`` multiplications): a wrong one gives a proof that does not verify.
    Raises :class:`ShuffleProofUsageError` on bad arguments, an invalid ``pk`` or input point
    included.
    """
    n = _check_statement(pk, inputs, outputs, context)
    if len(outputs) != n:
        raise ShuffleProofUsageError("outputs and inputs differ in length")
    _check_witness(n, permutation, masks, nonce_seed)
    perm, r = tuple(permutation), tuple(masks)
    gens = generators(n)
    statement = _statement_digest(context, pk, inputs, outputs)
    nonces = _Nonces.derive(nonce_seed, statement, perm, r)

    # 1. The permutation matrix, column j: C_j = ρ_j·G + H_{π⁻¹(j)}.
    inverse = [0] * n
    for i, j in enumerate(perm):
        inverse[j] = i
    commitments = tuple(add(_base(nonces.rho[j]), gens.hs[inverse[j]]) for j in range(n))

    # 2. The challenge vector, permuted.
    q, u = _challenge_vector(statement, commitments)
    u_t = [u[perm[i]] for i in range(n)]

    # 3. The chain Ĉ_i = r̂_i·G + ũ_i·Ĉ_{i-1}, Ĉ_{-1} = H.
    chain: list[bytes] = []
    prev = gens.h
    for i in range(n):
        prev = add(_base(nonces.chain[i]), _mul_computed(u_t[i], prev))
        chain.append(prev)

    # 4. The commitments of the sigma protocol. t4 = Σ ω̃_i·E'_i − ω4·(G, X) is computed as
    # Σ ω̃_i·E_{π(i)} + δ·(G, X), δ = Σ ω̃_i·r_i − ω4, so the trivial deck's identity c1 cost
    # nothing.
    w1, w2, w3, w4 = nonces.omega
    w_tilde = nonces.omega_tilde
    t3 = sum_points([_base(w3), *(_mul(w_tilde[i], gens.hs[i]) for i in range(n))])
    delta = (sum(w * x for w, x in zip(w_tilde, r, strict=True)) - w4) % L
    shuffled = [inputs[perm[i]] for i in range(n)]
    try:
        t4a = sum_points(
            [_base(delta)]
            + [_mul(w, e.c1) for w, e in zip(w_tilde, shuffled, strict=True) if e.c1 != IDENTITY]
        )
        t4b = sum_points(
            [_mul(delta, pk)]
            + [_mul(w, e.c2) for w, e in zip(w_tilde, shuffled, strict=True) if e.c2 != IDENTITY]
        )
    except InvalidPoint:
        raise ShuffleProofUsageError("an invalid public key or input deck point") from None
    previous = [gens.h, *chain[:-1]]
    t_hat = [
        add(_base(nonces.omega_hat[i]), _mul_computed(w_tilde[i], previous[i])) for i in range(n)
    ]

    # 5. The Fiat–Shamir challenge and the responses.
    c = _challenge(q, chain, [_base(w1), _base(w2), t3, t4a, t4b, *t_hat])
    s1, s2, s3, s4, s_hat, s_tilde = _responses(c, nonces, perm, r, u)
    return ShuffleProof(tuple(commitments), tuple(chain), c, s1, s2, s3, s4, s_hat, s_tilde)


# -- verifying ---------------------------------------------------------------------------


def _shape_ok(proof: ShuffleProof, n: int) -> bool:
    """The fields have the types, counts and ranges :meth:`ShuffleProof.from_wire` gives."""
    scalars = (proof.challenge, proof.s1, proof.s2, proof.s3, proof.s4)
    vectors = (proof.commitments, proof.chain, proof.s_hat, proof.s_tilde)
    if any(type(v) is not tuple or len(v) != n for v in vectors):
        return False
    if not all(type(p) is bytes and len(p) == POINT_SIZE for p in proof.commitments + proof.chain):
        return False
    if proof.challenge == 0:
        return False
    return all(type(s) is int and 0 <= s < L for s in (*scalars, *proof.s_hat, *proof.s_tilde))


def verify_shuffle(
    pk: bytes,
    inputs: Sequence[CiphertextLike],
    outputs: Sequence[CiphertextLike],
    proof: ShuffleProof,
    context: Sequence[bytes],
) -> bool:
    """Whether ``proof`` shows ``outputs`` to be a permutation and re-masking of ``inputs``
    under ``pk`` for this ``context``.

    ``False`` for anything the prover controls: an output deck of the wrong size or with an
    invalid point, a proof of the wrong shape, with an invalid point, or that does not
    verify (:func:`invalid_point` tells which point, if one is). Raises
    :class:`ShuffleProofUsageError` only for the caller's own arguments: wrong types, fewer
    than 2 cards, an invalid ``pk``, an input point neither valid nor the identity.
    """
    n = _check_statement(pk, inputs, outputs, context)
    if not isinstance(proof, ShuffleProof):
        raise ShuffleProofUsageError("proof must be a ShuffleProof")
    if len(outputs) != n or not _shape_ok(proof, n):
        return False
    gens = generators(n)
    c = proof.challenge
    statement = _statement_digest(context, pk, inputs, outputs)
    q, u = _challenge_vector(statement, proof.commitments)
    cu = [c * x % L for x in u]

    # The caller's points first, so that an invalid one is reported as misuse: c·Σ u_j·E_j
    # (the trivial deck's identity c1 contribute nothing) and s4·X.
    try:
        ce_a = sum_points(_mul(cu[j], e.c1) for j, e in enumerate(inputs) if e.c1 != IDENTITY)
        ce_b = sum_points(_mul(cu[j], e.c2) for j, e in enumerate(inputs) if e.c2 != IDENTITY)
        s4_x = _mul(proof.s4, pk)
    except InvalidPoint:
        raise ShuffleProofUsageError("an invalid public key or input deck point") from None

    # Every point of the prover goes through _mul below, which checks it: C_j in t3, Ĉ_i in
    # c·Ĉ_i, the output deck in t4.
    try:
        # t1 = s1·G − c·(Σ C_j − Σ H_i)
        t1 = sub(_base(proof.s1), _mul_computed(c, sub(sum_points(proof.commitments), gens.h_sum)))
        # t̂_i = ŝ_i·G + s̃_i·Ĉ_{i-1} − c·Ĉ_i; c·Ĉ_{N-1} also serves t2.
        c_chain = [_mul(c, p) for p in proof.chain]
        previous = [gens.h, *proof.chain[:-1]]
        t_hat = [
            sub(add(_base(proof.s_hat[i]), _mul(proof.s_tilde[i], previous[i])), c_chain[i])
            for i in range(n)
        ]
        # t2 = s2·G − c·(Ĉ_{N-1} − (∏ u_j)·H)
        u_prod = 1
        for x in u:
            u_prod = u_prod * x % L
        t2 = add(sub(_base(proof.s2), c_chain[-1]), _mul(c * u_prod % L, gens.h))
        # t3 = s3·G + Σ s̃_i·H_i − Σ (c·u_j)·C_j
        t3 = sub(
            sum_points([_base(proof.s3), *map(_mul, proof.s_tilde, gens.hs)]),
            sum_points(map(_mul, cu, proof.commitments)),
        )
        # t4 = Σ s̃_i·E'_i − s4·(G, X) − c·Σ u_j·E_j
        s_t = proof.s_tilde
        t4a = sub(sum_points(_mul(s_t[i], e.c1) for i, e in enumerate(outputs)), _base(proof.s4))
        t4b = sub(sum_points(_mul(s_t[i], e.c2) for i, e in enumerate(outputs)), s4_x)
        t4a = sub(t4a, ce_a)
        t4b = sub(t4b, ce_b)
    except InvalidPoint:
        return False
    return _challenge(q, proof.chain, [t1, t2, t3, t4a, t4b, *t_hat]) == c


def invalid_point(outputs: Sequence[CiphertextLike], proof: ShuffleProof) -> str | None:
    """Which point of the prover's is not a valid point, if one is (to word a refusal after
    :func:`verify_shuffle` returned ``False``; it costs ``4N`` checks)."""
    for j, ct in enumerate(outputs):
        if not (is_valid_point(ct.c1) and is_valid_point(ct.c2)):
            return f"output ciphertext {j}"
    for name, points in (("commitment", proof.commitments), ("chain link", proof.chain)):
        for j, p in enumerate(points):
            if not is_valid_point(p):
                return f"{name} {j}"
    return None


def follows_seed(
    pk: bytes,
    inputs: Sequence[CiphertextLike],
    outputs: Sequence[CiphertextLike],
    proof: ShuffleProof,
    context: Sequence[bytes],
    permutation: Sequence[int],
    masks: Sequence[int],
    nonce_seed: bytes,
) -> bool:
    """Whether a proof that :func:`verify_shuffle` accepted is, byte for byte, the one
    :func:`prove_shuffle` makes from this witness and ``nonce_seed`` (the audit's check,
    once the seed is revealed).

    Only scalar arithmetic: the responses must be the seed's nonces plus ``c`` times the
    witness. That pins the points too: for a verified proof with those responses, each
    recomputed commitment is the honest one plus a deviation fixed before ``c`` plus ``c``
    times the deviation of a sent point (``C_j`` weighted by ``u_j``, ``Ĉ_i`` link by link,
    and in ``t4`` the output deck, ``Σ ũ_i·(E'_i − E_{π(i)} − r_i·(G, X))``, which is not
    ``O`` for a deck that differs but for a fraction ``1/L`` of ``u``), and ``c`` hashes those
    commitments, so a deviation survives only if ``c`` hits a fixed point of the hash
    (probability about ``1/L`` per try). So a verified proof that follows the seed also
    proves ``outputs`` to be the seed's re-masking of ``inputs``: the audit recomputes no
    deck (DECK.md §10).
    """
    n = _check_statement(pk, inputs, outputs, context)
    _check_witness(n, permutation, masks, nonce_seed)
    if not isinstance(proof, ShuffleProof) or len(outputs) != n or not _shape_ok(proof, n):
        return False
    statement = _statement_digest(context, pk, inputs, outputs)
    nonces = _Nonces.derive(nonce_seed, statement, permutation, masks)
    _, u = _challenge_vector(statement, proof.commitments)
    s1, s2, s3, s4, s_hat, s_tilde = _responses(proof.challenge, nonces, permutation, masks, u)
    return (s1, s2, s3, s4, s_hat, s_tilde) == (
        proof.s1,
        proof.s2,
        proof.s3,
        proof.s4,
        proof.s_hat,
        proof.s_tilde,
    )
