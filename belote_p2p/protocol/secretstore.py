"""Where a seat keeps its deck secrets: on disk, so that a crashed peer can resume its game.

The table session (:class:`~belote_p2p.protocol.session.TableSession`) asks its
:class:`SecretStore` to keep each round's secret key and shuffle seed *before* it first uses
them: a peer that signed a shuffle and then died must find the same secrets when it restarts,
or it could never open its cards nor reveal its seed, and the table would be stuck.
:class:`MemorySecrets` keeps them in memory (tests; a peer that never resumes).
:class:`FileSecrets` keeps them in one file per table and seat,
``<home>/secrets/<table id>-seat<k>.secrets``, a canonical msgpack map::

    {"type": "belote-p2p/secrets", "version": 1, "table": table id, "seat": k,
     "rounds": [[round, secret key, shuffle seed], ...]}

Each :meth:`FileSecrets.save` rewrites the whole file atomically (a temporary file in the
same directory, fsynced, renamed over the old one, the directory fsynced) before it returns.
The file is readable by its owner only (mode 0600, directory 0700): until a round's reveal,
its secrets open every card of the seat's hand.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Protocol

from belote_p2p.errors import BeloteError, RemoteProtocolError

from .private import private_directory
from .wire import decode, encode

SECRETS_TYPE = "belote-p2p/secrets"


class SecretStoreError(BeloteError, ValueError):
    """The secrets file exists but is not this table's and seat's, or is damaged."""


class SecretStore(Protocol):
    """Where a seat keeps each round's deck secrets before their first use."""

    def load(self, round_number: int) -> tuple[bytes, bytes] | None: ...
    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None: ...


class MemorySecrets:
    """A :class:`SecretStore` in memory (tests; a peer that never resumes)."""

    def __init__(self) -> None:
        self.rounds: dict[int, tuple[bytes, bytes]] = {}

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        return self.rounds.get(round_number)

    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None:
        self.rounds[round_number] = (secret_key, shuffle_seed)


def secrets_path(directory: Path, table_id: bytes, seat: int) -> Path:
    return directory / f"{table_id.hex()}-seat{seat}.secrets"


class FileSecrets:
    """A :class:`SecretStore` in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path, table_id: bytes, seat: int) -> None:
        self.directory = directory
        self.table_id = bytes(table_id)
        self.seat = seat
        self.path = secrets_path(directory, table_id, seat)
        self._rounds: dict[int, tuple[bytes, bytes]] = {}
        if self.path.exists():
            self._rounds = self._read()

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        return self._rounds.get(round_number)

    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None:
        """Keep the round's secrets; on disk (fsynced) when this returns."""
        kept = self._rounds.get(round_number)
        if kept == (secret_key, shuffle_seed):
            return
        rounds = dict(self._rounds)
        rounds[round_number] = (bytes(secret_key), bytes(shuffle_seed))
        self._write(rounds)
        self._rounds = rounds

    def _read(self) -> dict[int, tuple[bytes, bytes]]:
        try:
            data = decode(self.path.read_bytes())
        except (OSError, RemoteProtocolError, ValueError) as exc:
            raise SecretStoreError(f"{self.path}: cannot read the secrets: {exc}") from None
        if (
            not isinstance(data, dict)
            or data.get("type") != SECRETS_TYPE
            or data.get("version") != 1
            or data.get("table") != self.table_id
            or data.get("seat") != self.seat
            or not isinstance(data.get("rounds"), list)
        ):
            raise SecretStoreError(f"{self.path} is not the secrets file of this table and seat")
        rounds: dict[int, tuple[bytes, bytes]] = {}
        for row in data["rounds"]:
            if (
                not isinstance(row, list)
                or len(row) != 3
                or type(row[0]) is not int
                or type(row[1]) is not bytes
                or type(row[2]) is not bytes
            ):
                raise SecretStoreError(f"{self.path}: a damaged round entry")
            rounds[row[0]] = (row[1], row[2])
        return rounds

    def _write(self, rounds: dict[int, tuple[bytes, bytes]]) -> None:
        private_directory(self.directory)
        payload = encode(
            {
                "type": SECRETS_TYPE,
                "version": 1,
                "table": self.table_id,
                "seat": self.seat,
                "rounds": [[n, key, seed] for n, (key, seed) in sorted(rounds.items())],
            }
        )
        temporary = self.path.with_name(self.path.name + ".tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()  # a leftover of a crash in the middle of a save
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        _fsync_directory(self.directory)


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
