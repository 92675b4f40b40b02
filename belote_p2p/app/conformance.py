"""``belote-p2p conformance --verifier CMD``: check another implementation's verifier.

A second implementation of the protocol proves that it reads game records as this one does
by running its verifier over the recorded games of ``protocol/vectors/`` and over tampered
copies of each (a flipped byte, a re-signed lie or claim, a broken chain, a dropped,
duplicated, delayed or reordered record, a record cut short, an edited header), each a
point of the protocol a second implementer might read otherwise.
``conformance.json`` beside the vectors says what a verifier must answer for each case; this
command writes each case to a file, runs ``CMD FILE``, and reports every case the verifier
wrongly accepts, wrongly refuses or judges with the wrong verdict.

The verifier's contract (``protocol/README.md``):

* it is run as ``CMD FILE`` (``CMD`` split as a shell would, without a shell);
* the first line of its standard output is the verdict: ``OK: ... wins A-B after N rounds``,
  ``ABANDONED by seat S ... in round R at A-B``, ``FAULT by seat S ...``,
  ``INCOMPLETE: ... in round R at A-B``, ``INVALID: ...`` or ``NO GAME: ...``, as
  ``belote-p2p verify`` prints it (the scores are one per side: two teams, or each of the
  three or two players: ``A-B-C``; the rounds and the round as PROTOCOL.md §7.2 counts
  them);
* its exit status is 0 for ``OK`` and ``ABANDONED`` (a valid, complete record), 1 for the
  other verdicts, 2 when FILE is not a transcript at all (no verdict line is read then).

A verifier that can read several files in one run may be given them (``--batch N``: ``CMD
FILE...``, up to N files): it then prints one line per file, in order, the exit status
``CMD FILE`` would give, a space, and the verdict line. This spares the verifier's
start-up for each case (for ``belote-p2p verify``, the interpreter's and the package's: about
0.2 s of CPU, and many tampered copies take less to verify); the answers are the same.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from belote_p2p.app.argtypes import positive_int, positive_seconds
from belote_p2p.errors import BeloteError
from belote_p2p.i18n import N_, _, format_number
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.wire import Envelope, decode, encode

MANIFEST = "conformance.json"
"""The file of the vectors folder that lists the recorded games and what a verifier says."""
TRANSCRIPT_SUFFIX = ".transcript"

EXIT_VALID = 0
EXIT_NOT_VALID = 1
EXIT_UNREADABLE = 2
KINDS = ("OK", "ABANDONED", "FAULT", "INCOMPLETE", "INVALID", "NO GAME")
"""The verdicts, as the first words of the verdict line."""
VALID_KINDS = frozenset({"OK", "ABANDONED"})


class ConformanceError(BeloteError):
    """The kit cannot run: no manifest, an unreadable vector, a verifier that cannot start."""


# -- verdicts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """What a verifier said about one file: its exit status, and the verdict it printed."""

    status: int
    kind: str | None = None
    """One of :data:`KINDS`; ``None`` for exit status 2 or a line that names no verdict."""
    seat: int | None = None
    """The seat at fault (``FAULT``) or gone (``ABANDONED``)."""
    scores: tuple[int, ...] | None = None
    """The scores of ``OK`` (final), ``ABANDONED`` and ``INCOMPLETE`` (where the game
    stood): one per side (team, or player without teams)."""
    round: int | None = None
    """``OK``: the rounds played (``after N rounds``, redeals included); ``ABANDONED`` and
    ``INCOMPLETE``: the round the game stood in (``in round R``, from 1)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "exit": self.status,
            "verdict": self.kind,
            "seat": self.seat,
            "scores": list(self.scores) if self.scores is not None else None,
            "round": self.round,
        }

    @classmethod
    def from_json(cls, data: Any) -> Answer:
        scores = data.get("scores")
        return cls(
            data["exit"],
            data.get("verdict"),
            data.get("seat"),
            tuple(scores) if scores is not None else None,
            data.get("round"),
        )

    def __str__(self) -> str:
        """The answer in the reader's words around its verdict's name (``FAULT by seat 1
        (exit 1)``)."""
        if self.kind is None:
            what = _("no verdict") if self.status != EXIT_UNREADABLE else _("not a transcript")
        else:
            what = self.kind
            if self.seat is not None:
                what = _("{verdict} by seat {seat}").format(verdict=what, seat=self.seat)
            if self.round is not None:
                if self.kind == "OK":
                    what = _("{verdict} after {rounds} rounds").format(
                        verdict=what, rounds=self.round
                    )
                else:
                    what = _("{verdict} in round {round}").format(verdict=what, round=self.round)
            if self.scores is not None:
                score = "-".join(map(str, self.scores))
                what = _("{verdict} at {scores}").format(verdict=what, scores=score)
        return _("{answer} (exit {status})").format(answer=what, status=self.status)


_SEAT = re.compile(r"^(?:FAULT|ABANDONED) by seat ([0-3])\b")
_OK_SCORES = re.compile(r" wins (\d+(?:-\d+)+) after (\d+) rounds?$")
_STOOD = re.compile(r" in round (\d+) at (\d+(?:-\d+)+)(?= \(|$)")
"""Where an ``ABANDONED`` or ``INCOMPLETE`` line says the game stood (the last match: a
name may hold anything)."""


def parse_verdict(status: int, line: str) -> Answer:
    """The answer of a verifier that exited with ``status`` and printed ``line`` first."""
    if status == EXIT_UNREADABLE:
        return Answer(status)
    line = line.strip()
    kind = next((k for k in KINDS if line == k or line.startswith((k + ":", k + " "))), None)
    if kind is None:
        return Answer(status)
    seat = scores = number = None
    found = _SEAT.match(line)
    if found is not None:
        seat = int(found.group(1))
    if kind == "OK":
        match = _OK_SCORES.search(line)
        if match is not None:
            scores, number = match.group(1), match.group(2)
    elif kind in ("ABANDONED", "INCOMPLETE"):
        stood = _STOOD.findall(line)
        if stood:
            number, scores = stood[-1]
    return Answer(
        status,
        kind,
        seat,
        tuple(int(x) for x in scores.split("-")) if scores is not None else None,
        int(number) if number is not None else None,
    )


WRONG_WORDS = {
    "wrongly refused": N_("wrongly refused"),
    "wrongly accepted": N_("wrongly accepted"),
    "wrong verdict": N_("wrong verdict"),
}
"""What :func:`judge` finds wrong, as the report says it (its keys are the summary's order)."""


def judge(expected: Answer, got: Answer) -> str | None:
    """``None`` if ``got`` is the ``expected`` answer, else what is wrong with it."""
    if expected.status == EXIT_VALID and got.status != EXIT_VALID:
        return "wrongly refused"
    if expected.status != EXIT_VALID and got.status == EXIT_VALID:
        return "wrongly accepted"
    if got != expected:
        return "wrong verdict"
    return None


# -- transcripts as frames -------------------------------------------------------------------


def split_frames(data: bytes) -> list[bytes]:
    """The payloads of a transcript file: 4-byte big-endian lengths, each followed by that
    many bytes (``protocol/PROTOCOL.md`` §7.1). The first is the header."""
    out = []
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise ConformanceError(_("a frame header is cut at byte {pos}").format(pos=pos))
        length = int.from_bytes(data[pos : pos + 4], "big")
        if pos + 4 + length > len(data):
            raise ConformanceError(_("the frame at byte {pos} is cut").format(pos=pos))
        out.append(data[pos + 4 : pos + 4 + length])
        pos += 4 + length
    if not out:
        raise ConformanceError(_("an empty file"))
    return out


def join_frames(payloads: Iterable[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


# -- the tampered copies ---------------------------------------------------------------------

Tamper = Callable[[list[bytes], Sequence[bytes]], list[bytes] | None]
"""Frames of a transcript (header first) and the seats' private keys -> the frames of a
tampered copy, or ``None`` where the tamper does not apply (no record to change)."""


@functools.lru_cache(maxsize=1 << 14)
def _envelope(record: bytes) -> Envelope:
    """``Envelope.decode(record)``, once per record: the tampers look up the same records of
    a game again and again (the first bid, seat 1's records, what names what), and a decode
    checks a signature. The envelopes are shared: a tamper copies a body before changing it."""
    return Envelope.decode(record)


@functools.lru_cache(maxsize=1 << 14)
def _type_of(record: bytes) -> str:
    """The body type of a record (read, not verified: the verifier's job)."""
    body = decode(record).get("body")
    kind = body.get("type") if isinstance(body, dict) else None
    return kind if isinstance(kind, str) else ""


def _first(frames: list[bytes], *kinds: str) -> int | None:
    """The index in ``frames`` of the first record whose body is of the first of ``kinds``
    that has one."""
    types = [_type_of(r) for r in frames[1:]]
    for kind in kinds:
        if kind in types:
            return 1 + types.index(kind)
    return None


def flip_signature(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``bid`` record (else the first ``deck`` record) with the lowest bit of the
    first byte of its signature flipped."""
    index = _first(frames, "bid", "deck")
    if index is None:
        return None
    envelope = decode(frames[index])
    sig = envelope["sig"]
    envelope["sig"] = bytes([sig[0] ^ 1]) + sig[1:]
    return [*frames[:index], encode(envelope), *frames[index + 1 :]]


def flip_body(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``deck`` record with the lowest bit of the last byte of its body flipped (the
    body is the first value of the envelope map, right after ``87 a4 'body'``)."""
    index = _first(frames, "deck")
    if index is None:
        return None
    record = frames[index]
    end = 6 + len(encode(decode(record)["body"]))
    if record[:6] != b"\x87\xa4body":
        raise ConformanceError(_("an envelope that does not start with its body"))
    flipped = record[: end - 1] + bytes([record[end - 1] ^ 1]) + record[end:]
    return [*frames[:index], flipped, *frames[index + 1 :]]


def flip_header(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The header with the lowest bit of the first character of seat 1's name flipped (and
    the header encoded again, canonically)."""
    header = decode(frames[0])
    seat = header["definition"]["seats"][1]
    seat["name"] = chr(ord(seat["name"][0]) ^ 1) + seat["name"][1:]
    return [encode(header), *frames[1:]]


def drop_record(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Without its first ``play`` record (else its first ``bid`` record)."""
    index = _first(frames, "play", "bid")
    if index is None:
        return None
    return frames[:index] + frames[index + 1 :]


def duplicate_record(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """With a copy of its first ``deck`` record added at the end."""
    index = _first(frames, "deck")
    if index is None:
        return None
    return [*frames, frames[index]]


def swap_records(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Records 1 and 2 swapped, 3 and 4, 5 and 6... wherever the two have different senders
    (so every sender's records keep their order, and the record order is less causal)."""
    records = frames[1:]
    senders = [_envelope(r).sender for r in records]
    for i in range(0, len(records) - 1, 2):
        if senders[i] != senders[i + 1]:
            records[i], records[i + 1] = records[i + 1], records[i]
    return [frames[0], *records]


def _references(envelope: Envelope) -> list[bytes]:
    """The hashes ``envelope`` names: its ``prev``, its ``seen``, a fault report's evidence."""
    named = [envelope.prev, *envelope.seen]
    evidence = envelope.body.get("evidence") if envelope.type == "fault" else None
    if isinstance(evidence, list):
        named += [_envelope(piece).hash for piece in evidence]
    return named


def _causal_order(envelopes: Sequence[Envelope]) -> list[int]:
    """The indices of ``envelopes``, each after every one of them it names (the file order
    is not causal, PROTOCOL.md §5.5)."""
    position = {e.hash: i for i, e in enumerate(envelopes)}
    order: list[int] = []
    placed: set[int] = set()
    for first in range(len(envelopes)):
        stack = [(first, False)]
        while stack:
            i, ready = stack.pop()
            if i in placed:
                continue
            if ready:
                placed.add(i)
                order.append(i)
                continue
            stack.append((i, True))
            for h in _references(envelopes[i]):
                j = position.get(h)
                if j is not None and j not in placed:
                    stack.append((j, False))
    return order


def _resigned(
    frames: list[bytes],
    keys: Sequence[bytes],
    index: int,
    change: Callable[[dict[str, Any], list[bytes]], None],
) -> list[bytes]:
    """Record ``index`` with its body and ``seen`` changed in place by ``change`` and signed
    again by its sender; every record that names a changed one (``prev``, ``seen``, a fault
    report's evidence), wherever it is in the file, names the new one and is signed again by
    its own sender. The records keep their places."""
    signers = {i.public_key_bytes: i for i in (Identity.from_seed(k) for k in keys)}
    envelopes = [_envelope(r) for r in frames[1:]]
    new: dict[bytes, Envelope] = {}  # old hash -> the envelope signed in its place
    out = list(frames)
    for i in _causal_order(envelopes):
        envelope = envelopes[i]
        body = dict(envelope.body)
        prev = new[envelope.prev].hash if envelope.prev in new else envelope.prev
        seen = [new[h].hash if h in new else h for h in envelope.seen]
        if i + 1 == index:
            change(body, seen)
        if body.get("type") == "fault" and isinstance(body.get("evidence"), list):
            evidence = [_envelope(piece) for piece in body["evidence"]]
            body["evidence"] = [new[e.hash].encode() if e.hash in new else e.raw for e in evidence]
        if body == envelope.body and prev == envelope.prev and seen == list(envelope.seen):
            continue
        again = Envelope.create(
            signers[envelope.sender], envelope.table, envelope.seq, prev, seen, body
        )
        new[envelope.hash] = again
        out[i + 1] = again.encode()
    return out


def _lie(
    frames: list[bytes], keys: Sequence[bytes], kind: str, change: Callable[[dict[str, Any]], None]
) -> list[bytes] | None:
    """The first record of ``kind`` with its body changed by ``change``, re-signed and
    re-chained (:func:`_resigned`)."""
    index = _first(frames, kind)
    if index is None:
        return None
    return _resigned(frames, keys, index, lambda body, seen: change(body))


def _find(frames: list[bytes], wanted: Callable[[Envelope], bool]) -> int | None:
    """The index in ``frames`` of the first record that is ``wanted``."""
    return next((i for i, r in enumerate(frames[1:], 1) if wanted(_envelope(r))), None)


def _header(frames: list[bytes]) -> dict[str, Any]:
    header: dict[str, Any] = decode(frames[0])
    return header


def _seat_key(frames: list[bytes], seat: int) -> bytes:
    key: bytes = _header(frames)["definition"]["seats"][seat]["key"]
    return key


def _claim(envelope: Envelope) -> dict[str, Any]:
    claim = envelope.body.get("claim") if envelope.type == "play" else None
    return claim if isinstance(claim, dict) else {}


def lie_state(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``bid`` record (else, in a game without bidding, the first ``play`` record)
    with the lowest bit of the last byte of its ``state`` digest flipped, signed again by its
    sender; every later record that names a changed record
    (``prev``, ``seen``, a fault report's evidence) names the new one, signed again by its
    own sender."""

    def change(body: dict[str, Any]) -> None:
        state = body["state"]
        body["state"] = state[:-1] + bytes([state[-1] ^ 1])

    return _lie(frames, keys, "bid" if _first(frames, "bid") is not None else "play", change)


def lie_score(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``done`` record with 10 more points for the first side (team 0, or seat 0
    without teams), signed again by its sender;
    every later record that names a changed record (``prev``, ``seen``, a fault report's
    evidence) names the new one, signed again by its own sender."""

    def change(body: dict[str, Any]) -> None:
        first, *others = body["scores"]
        body["scores"] = [first + 10, *others]

    return _lie(frames, keys, "done", change)


def unclaim_belote(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``play`` record whose claim has ``belote`` true with ``belote`` false,
    re-signed and re-chained as in lie-state. Four and three seats: an unclaimed belote is
    no fault, the round scores 20 less, and the first ``done`` processed then signs other
    scores than the verifier's; two-handed: the claim is checked exactly, the player's
    fault (PROTOCOL.md §6.2.3)."""
    index = _find(frames, lambda e: _claim(e).get("belote") is True)
    if index is None:
        return None

    def change(body: dict[str, Any], seen: list[bytes]) -> None:
        body["claim"] = {**body["claim"], "belote": False}

    return _resigned(frames, keys, index, change)


def repeat_in_sequence(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The first ``play`` record that claims a sequence (tierce to quinte), with the first
    card of that sequence listed again at its end, re-signed and re-chained as in lie-state:
    a sequence with a repeated card is no announcement, a fault of its sender on receipt
    (a carré may repeat a card, PROTOCOL.md §6.2.3)."""

    def sequence_at(envelope: Envelope) -> int | None:
        for i, cards in enumerate(_claim(envelope).get("announcements") or ()):
            if isinstance(cards, list) and len({str(c)[-1:] for c in cards}) == 1:
                return i
        return None

    index = _find(frames, lambda e: sequence_at(e) is not None)
    if index is None:
        return None
    which = sequence_at(_envelope(frames[index]))
    assert which is not None

    def change(body: dict[str, Any], seen: list[bytes]) -> None:
        announcements = [list(a) for a in body["claim"]["announcements"]]
        announcements[which].append(announcements[which][0])
        body["claim"] = {**body["claim"], "announcements": announcements}

    return _resigned(frames, keys, index, change)


def position_outside(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Three-handed only (a deck of 24): the first ``play`` record with its deck message's
    ``position`` set to 30, a position outside the round's deck, re-signed and re-chained
    as in lie-state: a fault of its sender at once, never held as a position whose owner is
    not known yet (DECK.md §7)."""
    if _header(frames)["definition"]["rules"].get("variant") != "three-handed":
        return None
    index = _first(frames, "play")
    if index is None:
        return None

    def change(body: dict[str, Any], seen: list[bytes]) -> None:
        body["deck"] = {**body["deck"], "position": 30}

    return _resigned(frames, keys, index, change)


def _seat_1_after_seq_0(frames: list[bytes]) -> int | None:
    key = _seat_key(frames, 1)
    return _find(frames, lambda e: e.sender == key and e.seq > 0)


def bad_own_seen(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Seat 1's first record after its seq 0 with its own entry of ``seen`` (``seen[1]``)
    set to 32 zero bytes, its ``prev`` unchanged, re-signed and re-chained as in lie-state:
    the envelope does not follow its sender's chain (a broken chain), the sender's fault,
    not an invalid record (PROTOCOL.md §5.5)."""
    index = _seat_1_after_seq_0(frames)
    if index is None:
        return None

    def change(body: dict[str, Any], seen: list[bytes]) -> None:
        seen[1] = bytes(32)

    return _resigned(frames, keys, index, change)


def seen_length(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Seat 1's first record after its seq 0 with one entry of ``seen`` too many or too few
    (the last dropped at four and three seats, a zero hash added at two), signed again by
    seat 1: refused as bytes, an invalid record, not a fault (PROTOCOL.md §5.4)."""
    index = _seat_1_after_seq_0(frames)
    if index is None:
        return None
    envelope = _envelope(frames[index])
    seen = list(envelope.seen)
    seen = seen[:-1] if len(seen) > 2 else [*seen, bytes(32)]
    signer = next(i for i in map(Identity.from_seed, keys) if i.public_key_bytes == envelope.sender)
    again = Envelope.create(
        signer, envelope.table, envelope.seq, envelope.prev, seen, dict(envelope.body)
    )
    return [*frames[:index], again.encode(), *frames[index + 1 :]]


def table_as_chat(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Seat 1's first record (its ``table``, at seq 0) with the body ``{"type": "chat",
    "text": "bonjour"}`` instead, re-signed and re-chained as in lie-state: seat 1 never
    signs the table, which is no fault; nothing is processed, the record is incomplete
    (PROTOCOL.md §6.2)."""
    key = _seat_key(frames, 1)
    index = _find(frames, lambda e: e.sender == key and e.seq == 0)
    if index is None:
        return None

    def change(body: dict[str, Any], seen: list[bytes]) -> None:
        body.clear()
        body.update({"type": "chat", "text": "bonjour"})

    return _resigned(frames, keys, index, change)


def _equivocation(frames: list[bytes], keys: Sequence[bytes]) -> bytes:
    """A second envelope of seat 1 at the seq of its last record (same ``prev`` and
    ``seen``), with the body ``{"type": "chat", "text": "bonjour bonjour"}``."""
    key = _seat_key(frames, 1)
    last = [e for e in map(_envelope, frames[1:]) if e.sender == key][-1]
    signer = next(i for i in map(Identity.from_seed, keys) if i.public_key_bytes == key)
    body = {"type": "chat", "text": "bonjour bonjour"}
    return Envelope.create(signer, last.table, last.seq, last.prev, last.seen, body).encode()


def equivocate_after_abandon(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Only in a record that holds an ``abandon``: a second envelope of seat 1 at the seq of
    its last record (same ``prev`` and ``seen``, a ``chat`` body) added at the end. An
    abandonment does not stop the replay: the equivocation is seat 1's fault (PROTOCOL.md
    §6.6)."""
    if _first(frames, "abandon") is None:
        return None
    return [*frames, _equivocation(frames, keys)]


def dispute_then_equivocate(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """flip-header's header, and the second envelope of seat 1 of
    equivocate-after-abandon added at the end: after a disputed table the records are still
    checked as envelopes, but no fault counts (PROTOCOL.md §6.2)."""
    flipped = flip_header(frames, keys)
    assert flipped is not None
    return [*flipped, _equivocation(frames, keys)]


def drop_before_fault(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Only in a record that holds a ``fault`` report: without the record that the first
    report's ``seen`` names for the first seat that is neither its sender nor the seat it
    accuses. The report is accepted, never processed, and its evidence is taken in when it
    is accepted: the fault it proves still counts (PROTOCOL.md §6.4, §7.2)."""
    index = _first(frames, "fault")
    if index is None:
        return None
    report = _envelope(frames[index])
    roster = [s["key"] for s in _header(frames)["definition"]["seats"]]
    accused = report.body.get("seat")
    hashes = {_envelope(r).hash: i for i, r in enumerate(frames[1:], 1)}
    for seat, named in enumerate(report.seen):
        if roster[seat] != report.sender and seat != accused and named in hashes:
            drop = hashes[named]
            return frames[:drop] + frames[drop + 1 :]
    return None


def _first_round_with_plays(frames: list[bytes]) -> int | None:
    rounds = [_envelope(r).body.get("round") for r in frames[1:] if _type_of(r) == "play"]
    return rounds[0] if rounds else None


def _cut_after_last(frames: list[bytes], kind: str) -> list[bytes] | None:
    """The record up to its last ``kind`` record of the first round that has plays."""
    number = _first_round_with_plays(frames)
    if number is None:
        return None
    last = None
    for i, record in enumerate(frames[1:], 1):
        envelope = _envelope(record)
        if envelope.type == kind and envelope.body.get("round") == number:
            last = i
    return None if last is None else frames[: last + 1]


def cut_after_round(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The record up to the last ``play`` record of the first round that has plays, the
    rest left out: the round is over and scored from its claims, its reveals and audit are
    missing (PROTOCOL.md §7.2, 'Round and scores')."""
    return _cut_after_last(frames, "play")


def cut_after_reveals(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The record up to the last ``deck`` record of the first round that has plays (its
    reveals among them), the rest left out: the round is audited, its score corrected if
    the audit found a fault (PROTOCOL.md §7.2, 'Round and scores')."""
    return _cut_after_last(frames, "deck")


def late_record(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Seat 1's record at seq 1 moved to the end of the file: its later records wait for
    it, at most 64; a later one is dropped, as a peer drops it (PROTOCOL.md §6.4, §7.2)."""
    key = _seat_key(frames, 1)
    index = _find(frames, lambda e: e.sender == key and e.seq == 1)
    if index is None:
        return None
    return [*frames[:index], *frames[index + 1 :], frames[index]]


def bid_in_deal(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """Only where a seat takes (classic, three-handed): the records of the first ``take``
    or ``choose`` and of its causal past, the others left out, and a ``pass`` of the next
    seat signed after it (naming in ``seen`` the last kept record of each seat). The
    completion deal never ends: the bid waits for it, for ever (PROTOCOL.md §6.3)."""
    index = _find(
        frames, lambda e: e.type == "bid" and str(e.body.get("bid")).startswith(("take", "choose"))
    )
    if index is None:
        return None
    envelopes = [_envelope(r) for r in frames[1:]]
    position = {e.hash: i for i, e in enumerate(envelopes)}
    kept: set[int] = set()
    todo = [index - 1]
    while todo:
        i = todo.pop()
        if i in kept:
            continue
        kept.add(i)
        todo += [position[h] for h in _references(envelopes[i]) if h in position]
    out = [frames[0]] + [frames[i + 1] for i in sorted(kept)]
    roster = [s["key"] for s in _header(frames)["definition"]["seats"]]
    take = envelopes[index - 1]
    seat = (roster.index(take.sender) + 1) % len(roster)
    last: dict[int, Envelope] = {}
    for i in sorted(kept):
        last[roster.index(envelopes[i].sender)] = envelopes[i]
    seen = [last[s].hash if s in last else bytes(32) for s in range(len(roster))]
    signer = next(i for i in map(Identity.from_seed, keys) if i.public_key_bytes == roster[seat])
    own = last[seat]
    body = {"type": "bid", "round": take.body["round"], "bid": "pass", "state": take.body["state"]}
    bid = Envelope.create(signer, take.table, own.seq + 1, own.hash, seen, body)
    return [*out, bid.encode()]


def header_seat(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The header with the writer's ``seat`` changed to the next seat and an extra key
    ``"note": "edited"``: nothing signs the header's seat, and other keys are ignored; as
    the original (PROTOCOL.md §7.1)."""
    header = _header(frames)
    header["seat"] = (header["seat"] + 1) % len(header["definition"]["seats"])
    header["note"] = "edited"
    return [encode(header), *frames[1:]]


def _with_rules(frames: list[bytes], **changes: Any) -> list[bytes]:
    header = _header(frames)
    header["definition"]["rules"].update(changes)
    return [encode(header), *frames[1:]]


def flag_as_int(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The header's rule set with ``must_overtrump_on_trump_lead`` given as the integer 1:
    read as true, but kept as 1 in the definition whose digest is computed, which is not
    the one the seats signed: no game (PROTOCOL.md §6.1)."""
    return _with_rules(frames, must_overtrump_on_trump_lead=1)


def first_dealer_true(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The header's rule set with ``first_dealer`` given as true: read as seat 1, not
    refused, and kept as true (another digest): no game (PROTOCOL.md §6.1)."""
    return _with_rules(frames, first_dealer=True)


def refused_rules(frames: list[bytes], keys: Sequence[bytes]) -> list[bytes] | None:
    """The header's rule set with a value its variant refuses: ``sans_atout`` true in
    classic, ``first_dealer`` 4 in coinche, ``partner_master_frees`` false in three-handed,
    ``announcements`` true in two-handed. The definition is refused: not a transcript
    (PROTOCOL.md §6.1)."""
    variant = _header(frames)["definition"]["rules"].get("variant")
    refused: dict[str, dict[str, Any]] = {
        "classic": {"sans_atout": True},
        "coinche": {"first_dealer": 4},
        "three-handed": {"partner_master_frees": False},
        "two-handed": {"announcements": True},
    }
    return _with_rules(frames, **refused[variant])


TAMPERS: dict[str, Tamper] = {
    "flip-signature": flip_signature,
    "flip-body": flip_body,
    "flip-header": flip_header,
    "drop": drop_record,
    "duplicate": duplicate_record,
    "swap": swap_records,
    "lie-state": lie_state,
    "lie-score": lie_score,
    "unclaim-belote": unclaim_belote,
    "repeat-in-sequence": repeat_in_sequence,
    "position-outside": position_outside,
    "bad-own-seen": bad_own_seen,
    "seen-length": seen_length,
    "table-as-chat": table_as_chat,
    "equivocate-after-abandon": equivocate_after_abandon,
    "dispute-then-equivocate": dispute_then_equivocate,
    "drop-before-fault": drop_before_fault,
    "cut-after-round": cut_after_round,
    "cut-after-reveals": cut_after_reveals,
    "late-record": late_record,
    "bid-in-deal": bid_in_deal,
    "header-seat": header_seat,
    "flag-as-int": flag_as_int,
    "first-dealer-true": first_dealer_true,
    "refused-rules": refused_rules,
}
"""Every tampered copy the kit makes, by name (``original`` is the vector itself)."""


def describe(tamper: Tamper) -> str:
    """A tamper's definition, in plain words (for the manifest)."""
    text = " ".join((tamper.__doc__ or "").split())
    return re.sub(r"``([^`]*)``", r"\1", text)


def copies(data: bytes, keys: Sequence[bytes]) -> dict[str, bytes]:
    """The vector itself (``original``) and each tampered copy that applies to it."""
    frames = split_frames(data)
    out = {"original": data}
    for name, tamper in TAMPERS.items():
        changed = tamper(list(frames), keys)
        if changed is not None:
            out[name] = join_frames(changed)
    return out


# -- the manifest and the cases ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    vector: str
    tamper: str
    data: bytes
    expected: Answer

    @property
    def name(self) -> str:
        return f"{self.vector} [{self.tamper}]"

    @property
    def file_name(self) -> str:
        stem = self.vector.removesuffix(TRANSCRIPT_SUFFIX)
        return f"{stem}.{self.tamper}{TRANSCRIPT_SUFFIX}"


def load_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConformanceError(
            _("cannot read {file}: {error}").format(file=path, error=exc)
        ) from None
    return manifest


def cases(directory: Path, only: Sequence[str] = ()) -> list[Case]:
    """Every case of the manifest in ``directory`` (or of the vectors named in ``only``)."""
    manifest = load_manifest(directory)
    out = []
    for vector in manifest["vectors"]:
        name = vector["file"]
        if only and name not in only and name.removesuffix(TRANSCRIPT_SUFFIX) not in only:
            continue
        try:
            data = (directory / name).read_bytes()
        except OSError as exc:
            raise ConformanceError(
                _("cannot read the vector {name}: {error}").format(name=name, error=exc)
            ) from None
        try:
            made = copies(data, [bytes.fromhex(k) for k in vector["keys"]])
        except (BeloteError, KeyError, ValueError) as exc:
            raise ConformanceError(
                _("cannot make the cases of {name}: {error}").format(name=name, error=exc)
            ) from None
        expected = vector["expected"]
        if set(made) != set(expected):
            raise ConformanceError(
                _("{manifest} is out of date for {name}: it expects {expected}, the kit makes "
                  "{made}").format(
                    manifest=MANIFEST, name=name, expected=sorted(expected), made=sorted(made)
                )
            )  # fmt: skip
        out += [Case(name, t, made[t], Answer.from_json(expected[t])) for t in made]
    if only and not out:
        raise ConformanceError(
            _("no vector named {names} in {manifest}").format(
                names=", ".join(only), manifest=MANIFEST
            )
        )
    return out


# -- running a verifier ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    case: Case
    got: Answer
    line: str
    """The verdict line as printed (or what went wrong running the verifier)."""

    @property
    def wrong(self) -> str | None:
        return judge(self.case.expected, self.got)


def _run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str] | None:
    """Run ``argv`` to its end; ``None`` if it takes longer than ``timeout``."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise ConformanceError(_("cannot run the verifier: {error}").format(error=exc)) from None
    except subprocess.TimeoutExpired:
        return None


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def run_verifier(command: Sequence[str], path: Path, timeout: float) -> tuple[Answer, str]:
    """Run ``command path``; its answer and its first line of output."""
    done = _run([*command, str(path)], timeout)
    if done is None:
        return Answer(-1), _("no answer within {seconds} s").format(seconds=_seconds(timeout))
    lines = _lines(done.stdout)
    first = lines[0] if lines else ""
    return parse_verdict(done.returncode, first), first


_BATCH_LINE = re.compile(r"([0-9]+) (.*)")
"""A verifier's line for one file of a batch: the exit status ``CMD FILE`` would give, a
space, and the verdict line ``CMD FILE`` would print first."""


def run_batch(
    command: Sequence[str], paths: Sequence[Path], timeout: float
) -> list[tuple[Answer, str]]:
    """Run ``command path...`` once for all ``paths`` (``--batch``): the answer and the verdict
    line of each file, read from the verifier's line for it (:data:`_BATCH_LINE`). A file
    without a line of that form has no answer; so has every file of a batch that took
    longer than ``timeout`` per file."""
    done = _run([*command, *map(str, paths)], timeout * len(paths))
    if done is None:
        late = _("no answer within {seconds} s per file").format(seconds=_seconds(timeout))
        return [(Answer(-1), late)] * len(paths)
    lines = _lines(done.stdout)
    out = []
    for i in range(len(paths)):
        found = _BATCH_LINE.fullmatch(lines[i].strip()) if i < len(lines) else None
        if found is None:
            line = lines[i] if i < len(lines) else ""
            missing = _("no batch line (STATUS VERDICT) for this file: {line!r}").format(line=line)
            out.append((Answer(-1), missing))
        else:
            status, line = int(found.group(1)), found.group(2)
            out.append((parse_verdict(status, line), line))
    return out


def _seconds(value: float) -> str:
    return format_number(value, 3, trailing_zeros=False)


def batches(all_cases: Sequence[Case], *, jobs: int, batch: int) -> list[list[Case]]:
    """``all_cases`` in order, cut into runs of at most ``batch`` cases, and into at least
    ``jobs`` runs where there are that many cases, so that every job has work."""
    size = max(1, min(batch, -(-len(all_cases) // max(1, jobs))))
    return [list(all_cases[i : i + size]) for i in range(0, len(all_cases), size)]


def check(
    command: Sequence[str],
    all_cases: Sequence[Case],
    folder: Path,
    *,
    jobs: int,
    timeout: float,
    batch: int = 1,
) -> list[Result]:
    """Write each case to ``folder`` and run the verifier on it (``jobs`` at a time), one
    case per run, or up to ``batch`` cases per run where ``batch`` is more than 1."""

    def run(cases: list[Case]) -> list[Result]:
        paths = [folder / case.file_name for case in cases]
        for case, path in zip(cases, paths, strict=True):
            path.write_bytes(case.data)
        if batch > 1:
            answers = run_batch(command, paths, timeout)
        else:
            answers = [run_verifier(command, path, timeout) for path in paths]
        return [Result(case, got, line) for case, (got, line) in zip(cases, answers, strict=True)]

    runs = batches(all_cases, jobs=jobs, batch=batch)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return [result for results in pool.map(run, runs) for result in results]


def report(results: Sequence[Result], out: Any) -> int:
    """Print one line per case and a summary; the exit status: 0 if every answer is right."""
    counts: dict[str, int] = {}
    for r in results:
        wrong = r.wrong
        if wrong is None:
            print(_("right  {case}: {answer}").format(case=r.case.name, answer=r.got), file=out)
        else:
            counts[wrong] = counts.get(wrong, 0) + 1
            line = _("WRONG  {case}: {wrong}: expected {expected}, got {answer}").format(
                case=r.case.name, wrong=_(WRONG_WORDS[wrong]), expected=r.case.expected,
                answer=r.got,
            )  # fmt: skip
            print(line + (f": {r.line}" if r.line else ""), file=out)
    right = len(results) - sum(counts.values())
    parts = [_("{n} right").format(n=right)]
    parts += [f"{n} {_(WRONG_WORDS[what])}" for what, n in sorted(counts.items())]
    print(_("{n} cases: {parts}").format(n=len(results), parts=", ".join(parts)), file=out)
    return 0 if not counts else 1


def default_vectors() -> Path | None:
    """``protocol/vectors`` of the current directory, else of the source tree."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        candidate = root / "protocol" / "vectors"
        if (candidate / MANIFEST).is_file():
            return candidate
    return None


def command(args: argparse.Namespace) -> int:
    prog = "belote-p2p conformance"
    verifier = shlex.split(args.verifier)
    if not verifier:
        print(f"{prog}: " + _("--verifier names no command"), file=sys.stderr)
        return 2
    directory = Path(args.vectors) if args.vectors is not None else default_vectors()
    if directory is None:
        print(f"{prog}: " + _("no protocol/vectors here: give --vectors DIR"), file=sys.stderr)
        return 2
    how: dict[str, Any] = {"jobs": args.jobs, "timeout": args.timeout, "batch": args.batch}
    try:
        selected = cases(directory, args.only or ())
        if args.keep is not None:
            folder = Path(args.keep)
            folder.mkdir(parents=True, exist_ok=True)
            results = check(verifier, selected, folder, **how)
        else:
            with tempfile.TemporaryDirectory(prefix="belote-conformance-") as tmp:
                results = check(verifier, selected, Path(tmp), **how)
    except ConformanceError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as exc:
        print(
            f"{prog}: "
            + _("a malformed {manifest}: {error!r}").format(manifest=MANIFEST, error=exc),
            file=sys.stderr,
        )
        return 2
    return report(results, sys.stdout)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "conformance",
        help=_("check another implementation's verifier against the recorded games"),
        description=_(
            "Run a verifier (CMD FILE) over every recorded game of protocol/vectors and over "
            "tampered copies of each (flipped bytes, a re-signed lie, a broken chain, a "
            "dropped, duplicated, delayed or reordered record, a cut record, an edited "
            "header), and report each case it wrongly accepts, wrongly refuses or judges "
            "wrongly. The verifier prints its verdict first, as belote-p2p verify does, and "
            "exits 0 for a valid complete record (OK, ABANDONED), 1 for any other verdict, 2 "
            "for a file that is not a transcript. Exit status: 0 if every answer is right, 1 "
            "if any is wrong, 2 if the kit cannot run."
        ),
    )
    p.add_argument(
        "--verifier",
        required=True,
        metavar=_("CMD"),
        help=_(
            "the verifier's command line; the file is added as its last argument (e.g. "
            '"belote-p2p verify")'
        ),
    )
    p.add_argument(
        "--vectors",
        metavar=_("DIR"),
        help=_("the vectors folder (protocol/vectors here or in the source tree)"),
    )
    p.add_argument(
        "--only",
        action="append",
        metavar=_("NAME"),
        help=_("check only this vector (a file name, with or without .transcript); repeatable"),
    )
    p.add_argument("--jobs", type=positive_int, default=2, help=_("verifiers run at once (2)"))
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=300,
        metavar=_("S"),
        help=_("seconds one verification may take"),
    )
    p.add_argument(
        "--batch",
        type=positive_int,
        default=1,
        metavar="N",
        help=_(
            "give the verifier up to N files per run (CMD FILE...), for a verifier that then "
            "prints one line per file, in order: the exit status CMD FILE would give, a "
            "space, and the verdict line (1: CMD FILE, one run per file)"
        ),
    )
    p.add_argument(
        "--keep", metavar=_("DIR"), help=_("write the files checked to DIR and keep them")
    )
    p.set_defaults(func=command)
