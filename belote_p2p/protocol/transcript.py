"""Transcripts: the game record every peer writes as the game goes.

A transcript file is a sequence of frames, each a 4-byte big-endian length and that many
bytes. The first frame is a header, a canonical msgpack map::

    {"type": "belote-p2p/transcript", "version": 1, "seat": s, "definition": {...}}

(``definition`` as :meth:`belote_p2p.protocol.session.TableDefinition.to_wire`; ``seat`` is the
writer's seat). Every following frame is one signed envelope, exactly as received or sent,
in the order the writer accepted them. The file is only ever appended to; a frame cut short
by a crash or a power cut is reported by :func:`read_transcript`, and everything before it
still verifies.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from belote_p2p.errors import BeloteError, RemoteProtocolError

from .private import open_private, private_directory
from .table import TableDefinition
from .wire import MAX_MESSAGE_SIZE, decode, encode

HEADER_TYPE = "belote-p2p/transcript"
_LENGTH = struct.Struct(">I")


class TranscriptError(BeloteError, ValueError):
    """The file is not a transcript (bad header, or a frame larger than any message)."""


@dataclass(frozen=True, slots=True)
class Transcript:
    definition: TableDefinition
    seat: int
    envelopes: tuple[bytes, ...]
    truncated: bool
    """The last frame was cut short (and is not in ``envelopes``)."""


def _frame(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


def header(definition: TableDefinition, seat: int) -> bytes:
    return encode(
        {"type": HEADER_TYPE, "version": 1, "seat": seat, "definition": definition.to_wire()}
    )


class TranscriptWriter:
    """Appends envelopes to a transcript file, creating it with its header if needed."""

    def __init__(self, path: Path, definition: TableDefinition, seat: int) -> None:
        self.path = path
        private_directory(path.parent)
        exists = path.exists() and path.stat().st_size > 0
        if exists:
            existing = read_transcript(path)
            if existing.definition != definition or existing.seat != seat:
                raise TranscriptError(f"{path} is the transcript of another table or seat")
            if existing.truncated:
                _cut_after(path, existing)
        self._file: IO[bytes] = open_private(path, "ab")  # closed by close()
        if not exists:
            self._file.write(_frame(header(definition, seat)))
            self.sync()

    def append(self, envelope: bytes) -> None:
        self._file.write(_frame(envelope))
        self._file.flush()

    def sync(self) -> None:
        """Flush and fsync: called at least at every round end."""
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _frames(data: bytes) -> tuple[list[bytes], bool]:
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            return out, True
        (length,) = _LENGTH.unpack_from(data, pos)
        if length > MAX_MESSAGE_SIZE:
            raise TranscriptError(f"frame of {length} bytes at offset {pos}: not a transcript")
        if pos + 4 + length > len(data):
            return out, True
        out.append(data[pos + 4 : pos + 4 + length])
        pos += 4 + length
    return out, False


def read_transcript(path: Path) -> Transcript:
    """Read a transcript; raise :class:`TranscriptError` if it is not one."""
    frames, truncated = _frames(path.read_bytes())
    if not frames:
        raise TranscriptError(f"{path} has no header")
    try:
        head: Any = decode(frames[0])
    except (ValueError, RemoteProtocolError) as exc:
        raise TranscriptError(f"bad header: {exc}") from None
    if not isinstance(head, dict) or head.get("type") != HEADER_TYPE or head.get("version") != 1:
        raise TranscriptError(f"{path} is not a belote-p2p transcript")
    seat = head.get("seat")
    if type(seat) is not int or not 0 <= seat < 4:
        raise TranscriptError("bad seat in the header")
    try:
        definition = TableDefinition.from_wire(head.get("definition"))
    except ValueError as exc:
        raise TranscriptError(f"bad table definition: {exc}") from None
    if seat >= len(definition.seats):
        raise TranscriptError("bad seat in the header")
    return Transcript(definition, seat, tuple(frames[1:]), truncated)


def _cut_after(path: Path, transcript: Transcript) -> None:
    """Drop a truncated last frame so that appending goes on from a clean end."""
    size = len(_frame(header(transcript.definition, transcript.seat)))
    size += sum(4 + len(e) for e in transcript.envelopes)
    with open(path, "r+b") as f:
        f.truncate(size)
