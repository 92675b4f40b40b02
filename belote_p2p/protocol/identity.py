"""A player's long-term Ed25519 identity, kept in a data directory.

The key file is ``<home>/identity.key``: the 32 raw bytes of the RFC 8032 private key
(the seed), nothing else, mode 0600. It is created on first use and never overwritten.
A key file that group or others may read is refused, as ssh refuses one.

A fingerprint is what people compare aloud: the first 8 bytes of SHA-256 of the
32-byte public key, as four dash-separated groups of four lowercase hex digits
(``3f2a-91c0-7b4e-d015``).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from belote_p2p.errors import BeloteError

from . import ed25519
from .private import private_directory

KEY_FILE_NAME = "identity.key"
SEED_SIZE = 32
PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64


class IdentityError(BeloteError, ValueError):
    """The key file is missing its 32 bytes, or others may read it."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def fingerprint(public_key: bytes) -> str:
    """The short human-friendly form of a public key, e.g. ``3f2a-91c0-7b4e-d015``."""
    digest = hashlib.sha256(public_key).hexdigest()[:16]
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


KEY_DIGEST_SIZE = 16


def key_digest(public_key: bytes) -> bytes:
    """What an invitation or a watch code holds of the host's key (``PROTOCOL.md`` §9: 128
    bits of SHA-256 leave nobody a key of their own that matches; its fingerprint is the
    first half)."""
    return hashlib.sha256(public_key).digest()[:KEY_DIGEST_SIZE]


def verify(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """Whether ``signature`` is a valid Ed25519 signature of ``data`` by ``public_key``, by
    the protocol's rule (``PROTOCOL.md`` §1, :mod:`.ed25519`): a canonical ``S``, a key and
    an ``R`` of the prime-order subgroup, canonically encoded, checked here before the
    library checks the equation, so that what is accepted does not depend on the library.

    Never raises: a key or signature of the wrong length, or a key that is not a
    curve point, is simply not a valid signer.
    """
    if len(public_key) != PUBLIC_KEY_SIZE or len(signature) != SIGNATURE_SIZE:
        return False
    if not ed25519.acceptable(public_key, signature):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class Identity:
    """An Ed25519 key pair. Equal identities have equal public keys."""

    public_key_bytes: bytes
    _private_key: Ed25519PrivateKey = field(repr=False, compare=False)

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """The identity whose RFC 8032 private key is ``seed`` (32 bytes); for tests."""
        if len(seed) != SEED_SIZE:
            raise ValueError(f"an Ed25519 seed is {SEED_SIZE} bytes, got {len(seed)}")
        key = Ed25519PrivateKey.from_private_bytes(seed)
        return cls(key.public_key().public_bytes_raw(), key)

    @classmethod
    def generate(cls) -> Identity:
        """A fresh identity that lives in memory only."""
        return cls.from_seed(secrets.token_bytes(SEED_SIZE))

    @classmethod
    def load_or_create(cls, home: Path) -> Identity:
        """The identity stored in ``home``, creating it (and ``home``) on first use."""
        path = home / KEY_FILE_NAME
        try:
            return cls._load(path)
        except FileNotFoundError:
            pass
        private_directory(home)
        seed = secrets.token_bytes(SEED_SIZE)
        # Write under a temporary name and hard-link into place: a reader never sees a
        # half-written key, and of two processes racing to create it, one key wins.
        tmp = home / f".{KEY_FILE_NAME}.{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(seed)
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                return cls._load(path)
        finally:
            tmp.unlink(missing_ok=True)
        return cls.from_seed(seed)

    @classmethod
    def _load(cls, path: Path) -> Identity:
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise IdentityError(
                    f"key file mode is {stat.S_IMODE(mode):04o}; it must be 0600", path
                )
            seed = f.read(SEED_SIZE + 1)
        if len(seed) != SEED_SIZE:
            raise IdentityError(f"a key file holds {SEED_SIZE} bytes, found {len(seed)}", path)
        return cls.from_seed(seed)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key_bytes)

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._private_key.sign(data)
