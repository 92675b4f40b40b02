from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from belote_p2p.protocol.identity import KEY_FILE_NAME, Identity, IdentityError, fingerprint, verify


def test_load_or_create_creates_a_private_key_file_then_loads_it(tmp_path: Path) -> None:
    home = tmp_path / "home" / "belote"
    first = Identity.load_or_create(home)
    key_file = home / KEY_FILE_NAME
    assert len(key_file.read_bytes()) == 32
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert [p.name for p in home.iterdir()] == [KEY_FILE_NAME]

    again = Identity.load_or_create(home)
    assert again == first
    assert again.public_key_bytes == first.public_key_bytes
    assert len(first.public_key_bytes) == 32


def test_key_file_holds_the_seed(tmp_path: Path) -> None:
    identity = Identity.load_or_create(tmp_path)
    seed = (tmp_path / KEY_FILE_NAME).read_bytes()
    assert Identity.from_seed(seed) == identity


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    Identity.load_or_create(tmp_path)
    os.chmod(tmp_path / KEY_FILE_NAME, 0o644)
    with pytest.raises(IdentityError, match="0644"):
        Identity.load_or_create(tmp_path)


@pytest.mark.parametrize("content", [b"", b"x" * 31, b"x" * 33])
def test_a_key_file_of_the_wrong_size_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / KEY_FILE_NAME
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(IdentityError, match="32 bytes"):
        Identity.load_or_create(tmp_path)
    assert path.read_bytes() == content  # never overwritten


def test_fingerprint_is_stable_and_readable() -> None:
    identity = Identity.from_seed(bytes(range(32)))
    assert identity.fingerprint == fingerprint(identity.public_key_bytes)
    assert identity.fingerprint == Identity.from_seed(bytes(range(32))).fingerprint
    groups = identity.fingerprint.split("-")
    assert [len(g) for g in groups] == [4, 4, 4, 4]
    assert all(c in "0123456789abcdef" for g in groups for c in g)
    # SHA-256 of 32 zero bytes starts 66687aadf862bd77: the documented format, pinned.
    assert fingerprint(bytes(32)) == "6668-7aad-f862-bd77"


def test_rfc8032_test_vector_1() -> None:
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    identity = Identity.from_seed(seed)
    assert identity.public_key_bytes == bytes.fromhex(
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    )
    signature = identity.sign(b"")
    assert signature == bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )


def test_sign_and_verify() -> None:
    alice, bob = Identity.from_seed(b"a" * 32), Identity.from_seed(b"b" * 32)
    sig = alice.sign(b"hello")
    assert len(sig) == 64
    assert verify(alice.public_key_bytes, sig, b"hello")
    assert not verify(alice.public_key_bytes, sig, b"hellp")
    assert not verify(bob.public_key_bytes, sig, b"hello")
    assert not verify(alice.public_key_bytes, sig[:-1], b"hello")
    assert not verify(alice.public_key_bytes[:31], sig, b"hello")
    assert not verify(b"\xff" * 32, sig, b"hello")


def test_seed_must_be_32_bytes() -> None:
    with pytest.raises(ValueError):
        Identity.from_seed(b"short")


def test_generate_gives_distinct_identities_and_repr_hides_the_key() -> None:
    a, b = Identity.generate(), Identity.generate()
    assert a != b
    assert "private" not in repr(a)
