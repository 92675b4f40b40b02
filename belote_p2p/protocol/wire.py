"""The wire format: canonical msgpack, signed hash-chained envelopes, the hello
handshake and length-prefixed frames. Pure: bytes in, values or bytes out, no I/O.

``protocol/PROTOCOL.md`` is the language-neutral specification of everything here.

Errors follow h11 (:mod:`belote_p2p.errors`): :class:`LocalProtocolError` when this program
misused the API, a :class:`RemoteProtocolError` subclass when a peer sent something wrong; a
remote error names the sender where it is known and carries the offending bytes.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]  # ships no type information

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError

from .identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity, fingerprint, verify

ENVELOPE_LABEL = b"belote-p2p/envelope/v1\x00"
HELLO_LABEL = b"belote-p2p/hello/v1\x00"

SEATS = 4
"""The most seats a table has (classic, coinche); three-handed has 3, two-handed 2."""
MIN_SEATS = 2
KEY_SIZE = PUBLIC_KEY_SIZE
TABLE_ID_SIZE = 16
HASH_SIZE = 32
NONCE_SIZE = 32
ZERO_HASH = bytes(HASH_SIZE)
MAX_SEQ = 2**63 - 1

DEFAULT_MAX_FRAME = 1 << 20
"""Largest frame payload, and so largest encoded message: 1 MiB."""
MAX_MESSAGE_SIZE = DEFAULT_MAX_FRAME
MAX_HELLO_FRAME = 256
"""Largest frame of the hello handshake (a hello or its proof), the only frames a connection
reads before its peer proved its seat. Every field of both has a fixed size: a hello is 120
bytes, a proof 88; the cap leaves room and no more, so that a stranger's connection costs a
few hundred bytes, never a megabyte."""
HELLO_FRAMES = (MAX_HELLO_FRAME, MAX_HELLO_FRAME)
"""The caps of a mesh connection's first two frames, the peer's hello and its proof
(:class:`FrameDecoder`'s ``opening``)."""
MAX_DEPTH = 32
"""Deepest nesting of maps and arrays; the top-level value is depth 1."""
MAX_STR_LEN = 1 << 16
MAX_BIN_LEN = MAX_MESSAGE_SIZE
MAX_ARRAY_LEN = 1 << 16
MAX_MAP_LEN = 1 << 10

ENVELOPE_KEYS = frozenset({"sender", "table", "seq", "prev", "seen", "body", "sig"})

# ---------------------------------------------------------------------------- errors


class MalformedMessage(RemoteProtocolError):
    """Not canonical msgpack, or a field of the wrong type, size or value."""


class BadSignature(RemoteProtocolError):
    """The signature does not verify under the claimed sender's key."""


class WrongTable(RemoteProtocolError):
    """A well-signed envelope for another table."""


class UnknownSender(RemoteProtocolError):
    """A well-signed envelope from a key that is not in the table's roster."""


class OutOfOrder(RemoteProtocolError):
    """An envelope whose seq skips ahead of the next one expected from its sender."""

    def __init__(self, message: str, *, expected: int, got: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.expected = expected
        self.got = got


class BrokenChain(RemoteProtocolError):
    """An envelope whose ``prev`` (or own ``seen`` entry) is not its sender's last hash."""


class Equivocation(RemoteProtocolError):
    """Two different envelopes, both validly signed, from one sender at one seq.

    ``first`` and ``second`` together prove the misbehaviour to anyone: both carry the
    sender's signature, the same table and seq, and differ.
    """

    def __init__(self, message: str, *, first: Envelope, second: Envelope, seat: int) -> None:
        super().__init__(
            message, sender=first.sender, seat=seat, evidence=(first.encode(), second.encode())
        )
        self.first = first
        self.second = second


class FrameTooLarge(RemoteProtocolError):
    """A frame header announced more bytes than the receiver accepts."""

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"frame of {length} bytes exceeds the limit of {limit}")
        self.length = length
        self.limit = limit


class HandshakeError(RemoteProtocolError):
    """The peer at the other end of a connection failed to prove it holds a seat."""


# ----------------------------------------------------------------- canonical msgpack


def _normalize(value: object, depth: int) -> object:
    """Check ``value`` against the canonical data model; return it with maps sorted."""
    if value is None or type(value) is bool:
        return value
    if type(value) is str:
        if len(value.encode("utf-8")) > MAX_STR_LEN:
            raise ValueError(f"string longer than {MAX_STR_LEN} bytes")
        return value
    if type(value) is bytes:
        if len(value) > MAX_BIN_LEN:
            raise ValueError(f"bytes longer than {MAX_BIN_LEN}")
        return value
    if type(value) is int:
        if not -(2**63) <= value < 2**64:
            raise ValueError(f"integer out of the 64-bit range: {value}")
        return value
    # Exact types: a namedtuple (msgpack's own ExtType is one) is not an array.
    if type(value) in (list, tuple, dict):
        if depth >= MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH}")
        if type(value) is dict:
            if len(value) > MAX_MAP_LEN:
                raise ValueError(f"map longer than {MAX_MAP_LEN}")
            for key in value:
                if type(key) is not str:
                    raise ValueError(f"map key is not a str: {key!r}")
            return {k: _normalize(value[k], depth + 1) for k in sorted(value)}
        assert isinstance(value, list | tuple)
        if len(value) > MAX_ARRAY_LEN:
            raise ValueError(f"array longer than {MAX_ARRAY_LEN}")
        return [_normalize(v, depth + 1) for v in value]
    raise ValueError(f"not allowed on the wire: {type(value).__name__}")


def encode(value: object) -> bytes:
    """The canonical msgpack encoding of ``value``.

    Allowed: ``None``, ``bool``, ``int`` (-2**63 .. 2**64-1), ``str``, ``bytes``, lists
    (tuples encode as lists) and dicts with ``str`` keys, within the module's limits.
    Dict keys are sorted. Raises :class:`LocalProtocolError` for anything else.
    """
    try:
        return _pack(_normalize(value, 0))
    except (ValueError, UnicodeEncodeError) as exc:
        raise LocalProtocolError(f"cannot encode canonically: {exc}") from exc


def encode_sorted(value: object) -> bytes:
    """The canonical msgpack encoding of ``value`` built only of values :func:`decode`
    returned (or :func:`encode` would keep as they are) and of maps whose keys are inserted
    in sorted order: not walked again, so that a large answer made of many checked parts
    (a directory's listing) costs one pass of msgpack. ``LocalProtocolError`` if too large."""
    try:
        return _pack(value)
    except (ValueError, TypeError) as exc:
        raise LocalProtocolError(f"cannot encode canonically: {exc}") from exc


def _pack(normal: object) -> bytes:
    """The msgpack bytes of a value :func:`_normalize` returned (or one built of such
    values in sorted order): canonical as it is, so not walked again; ``ValueError`` if
    too large."""
    packed: bytes = msgpack.packb(normal, use_bin_type=True)
    if len(packed) > MAX_MESSAGE_SIZE:
        raise ValueError(f"encoding of {len(packed)} bytes exceeds {MAX_MESSAGE_SIZE}")
    return packed


def decode(data: bytes) -> Any:
    """Decode canonical msgpack; raise :class:`MalformedMessage` unless re-encoding the
    value gives back exactly ``data``."""
    if len(data) > MAX_MESSAGE_SIZE:
        raise MalformedMessage(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_SIZE}")
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=MAX_STR_LEN,
            max_bin_len=MAX_BIN_LEN,
            max_array_len=MAX_ARRAY_LEN,
            max_map_len=MAX_MAP_LEN,
            max_ext_len=0,
        )
        again = msgpack.packb(_normalize(value, 0), use_bin_type=True)
    except Exception as exc:  # msgpack documents that "other exceptions" may escape
        raise MalformedMessage(f"not canonical msgpack: {exc}", evidence=(bytes(data),)) from exc
    if again != data:
        raise MalformedMessage("not in canonical form", evidence=(bytes(data),))
    return value


# ------------------------------------------------------------------------- envelopes


@dataclass(frozen=True, slots=True, eq=False)
class Envelope:
    """One signed message of a table. Equal envelopes have equal encodings.

    Make one with :meth:`create` or :meth:`decode`, never with the constructor. Treat
    ``body`` as read-only: the signed bytes are the truth.
    """

    sender: bytes
    table: bytes
    seq: int
    prev: bytes
    seen: tuple[bytes, ...]
    body: dict[str, Any]
    sig: bytes
    raw: bytes = field(repr=False)
    hash: bytes = field(repr=False)

    @classmethod
    def create(
        cls,
        identity: Identity,
        table: bytes,
        seq: int,
        prev: bytes,
        seen: Sequence[bytes],
        body: Mapping[str, Any],
    ) -> Envelope:
        """Sign a new envelope; raise :class:`LocalProtocolError` on a bad field."""
        fields = {
            "sender": identity.public_key_bytes,
            "table": table,
            "seq": seq,
            "prev": prev,
            "seen": list(seen),
            "body": body,
        }
        try:
            if isinstance(body, Mapping):
                # Store the body as a peer will decode it: sorted dicts, lists for tuples
                # (what decoding its encoding gives), checked once, at its depth.
                fields["body"] = _normalize(dict(body), 1)
            _check_fields(fields)
            # Every field is now a canonical value: the two encodings only sort the keys.
            fields["sig"] = identity.sign(ENVELOPE_LABEL + _pack(_sorted(fields)))
            raw = _pack(_sorted(fields))
        except MalformedMessage as exc:
            raise LocalProtocolError(str(exc)) from None
        except (ValueError, UnicodeEncodeError) as exc:
            raise LocalProtocolError(f"cannot encode canonically: {exc}") from exc
        return cls._from_checked(fields, raw)

    @classmethod
    def decode(cls, data: bytes) -> Envelope:
        """Parse and verify an encoded envelope.

        Raises :class:`MalformedMessage` or :class:`BadSignature`. Checks the envelope
        alone; the chain and the roster are :class:`ChainTracker`'s job.
        """
        data = bytes(data)
        value = decode(data)
        if not isinstance(value, dict):
            raise MalformedMessage("an envelope is a map", evidence=(data,))
        sender: Any = value.get("sender")
        try:
            if value.keys() != ENVELOPE_KEYS:
                raise MalformedMessage(f"an envelope has exactly the keys {sorted(ENVELOPE_KEYS)}")
            _check_fields(value)
            sig = value["sig"]
            if type(sig) is not bytes or len(sig) != SIGNATURE_SIZE:
                raise MalformedMessage(f"sig must be {SIGNATURE_SIZE} bytes")
        except MalformedMessage as exc:
            known = sender if type(sender) is bytes and len(sender) == KEY_SIZE else None
            raise MalformedMessage(str(exc), sender=known, evidence=(data,)) from None
        # ``value`` decoded from canonical bytes is canonical, in sorted order: without its
        # ``sig`` it packs as it is.
        unsigned = {k: v for k, v in value.items() if k != "sig"}
        if not verify(sender, sig, ENVELOPE_LABEL + msgpack.packb(unsigned, use_bin_type=True)):
            raise BadSignature(
                "envelope signature does not verify", sender=sender, evidence=(data,)
            )
        return cls._from_checked(value, data)

    @classmethod
    def _from_checked(cls, fields: dict[str, Any], raw: bytes) -> Envelope:
        return cls(
            sender=fields["sender"],
            table=fields["table"],
            seq=fields["seq"],
            prev=fields["prev"],
            seen=tuple(fields["seen"]),
            body=fields["body"],
            sig=fields["sig"],
            raw=raw,
            hash=hashlib.sha256(raw).digest(),
        )

    def encode(self) -> bytes:
        return self.raw

    def __repr__(self) -> str:
        return (
            f"<Envelope from {fingerprint(self.sender)} seq={self.seq} "
            f"type={self.body['type']!r} hash={self.hash[:8].hex()}>"
        )

    @property
    def type(self) -> str:
        """The body's ``"type"``."""
        kind: str = self.body["type"]
        return kind

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Envelope):
            return NotImplemented
        return self.raw == other.raw

    def __hash__(self) -> int:
        return hash(self.raw)


def _sorted(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: fields[k] for k in sorted(fields)}


def _check_fields(f: Mapping[str, Any]) -> None:
    """Check every envelope field but ``sig``; raise :class:`MalformedMessage`."""

    def fixed_bytes(name: str, size: int) -> bytes:
        v = f[name]
        if type(v) is not bytes or len(v) != size:
            raise MalformedMessage(f"{name} must be {size} bytes")
        return v

    fixed_bytes("sender", KEY_SIZE)
    fixed_bytes("table", TABLE_ID_SIZE)
    prev = fixed_bytes("prev", HASH_SIZE)
    seq = f["seq"]
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        raise MalformedMessage(f"seq must be an int in 0..{MAX_SEQ}")
    if (seq == 0) != (prev == ZERO_HASH):
        raise MalformedMessage("prev must be all zeros exactly when seq is 0")
    seen = f["seen"]
    if (
        type(seen) is not list
        or not MIN_SEATS <= len(seen) <= SEATS
        or any(type(h) is not bytes or len(h) != HASH_SIZE for h in seen)
    ):
        raise MalformedMessage(
            f"seen must be a list of {MIN_SEATS}..{SEATS} hashes of {HASH_SIZE} bytes"
        )
    body = f["body"]
    if type(body) is not dict or type(body.get("type")) is not str or not body["type"]:
        raise MalformedMessage('body must be a map with a non-empty str "type"')


# --------------------------------------------------------------------------- chains


class ChainTracker:
    """Accepts each sender's envelopes in order and keeps the table's transcript.

    Sans-io: feed it envelopes as they arrive from any connection. It checks table,
    roster, seq, ``prev`` and the sender's own ``seen`` entry; it ignores exact
    duplicates and turns a second, different envelope at a seq into
    :class:`Equivocation`. It does not look inside bodies and does not require the
    other ``seen`` hashes to be known (another connection may still carry them).
    """

    def __init__(self, table: bytes, roster: Sequence[bytes]) -> None:
        if len(table) != TABLE_ID_SIZE:
            raise LocalProtocolError(f"a table id is {TABLE_ID_SIZE} bytes")
        if not MIN_SEATS <= len(roster) <= SEATS or len(set(roster)) != len(roster):
            raise LocalProtocolError(f"a roster is {MIN_SEATS}..{SEATS} distinct public keys")
        if any(len(k) != KEY_SIZE for k in roster):
            raise LocalProtocolError(f"a public key is {KEY_SIZE} bytes")
        self.table = bytes(table)
        self.roster: tuple[bytes, ...] = tuple(bytes(k) for k in roster)
        self.seats = len(self.roster)
        """The table's seats: one ``seen`` entry each."""
        self._chains: list[list[Envelope]] = [[] for _ in range(self.seats)]
        self._transcript: list[Envelope] = []

    def seat_of(self, public_key: bytes) -> int:
        """The seat of ``public_key``; raise :class:`UnknownSender` if it has none."""
        try:
            return self.roster.index(public_key)
        except ValueError:
            raise UnknownSender("key is not in the roster", sender=public_key) from None

    def next_seq(self, seat: int) -> int:
        return len(self._chains[seat])

    def last_hash(self, seat: int) -> bytes:
        chain = self._chains[seat]
        return chain[-1].hash if chain else ZERO_HASH

    def seen(self) -> tuple[bytes, ...]:
        """The latest accepted hash per seat: the ``seen`` of our next envelope."""
        return tuple(self.last_hash(s) for s in range(self.seats))

    def chain(self, seat: int) -> Sequence[Envelope]:
        """The envelopes accepted from ``seat``, by seq."""
        return tuple(self._chains[seat])

    @property
    def transcript(self) -> Sequence[Envelope]:
        """Every accepted envelope, in the order this tracker accepted them."""
        return tuple(self._transcript)

    def accept_bytes(self, data: bytes) -> Envelope | None:
        """Decode, verify and :meth:`accept` an encoded envelope."""
        return self.accept(Envelope.decode(data))

    def accept(self, envelope: Envelope) -> Envelope | None:
        """Append ``envelope`` to its sender's chain and return it; return ``None`` for
        a duplicate of one already accepted. Raise a :class:`RemoteProtocolError`."""
        evidence = (envelope.encode(),)
        if envelope.table != self.table:
            raise WrongTable(
                "envelope for another table", sender=envelope.sender, evidence=evidence
            )
        try:
            seat = self.seat_of(envelope.sender)
        except UnknownSender as exc:
            exc.evidence = evidence
            raise
        if len(envelope.seen) != self.seats:
            raise MalformedMessage(
                f"seen must list {self.seats} hashes at this table",
                sender=envelope.sender,
                seat=seat,
                evidence=evidence,
            )
        chain = self._chains[seat]
        if envelope.seq < len(chain):
            earlier = chain[envelope.seq]
            if earlier.hash == envelope.hash:
                return None
            raise Equivocation(
                f"seat {seat} signed two envelopes at seq {envelope.seq}",
                first=earlier,
                second=envelope,
                seat=seat,
            )
        if envelope.seq > len(chain):
            raise OutOfOrder(
                f"seat {seat} sent seq {envelope.seq}, expected {len(chain)}",
                expected=len(chain),
                got=envelope.seq,
                sender=envelope.sender,
                seat=seat,
                evidence=evidence,
            )
        last = self.last_hash(seat)
        if envelope.prev != last or envelope.seen[seat] != last:
            raise BrokenChain(
                f"seat {seat} seq {envelope.seq} does not follow its previous envelope",
                sender=envelope.sender,
                seat=seat,
                evidence=evidence + ((chain[-1].encode(),) if chain else ()),
            )
        chain.append(envelope)
        self._transcript.append(envelope)
        return envelope

    def create(self, identity: Identity, body: Mapping[str, Any]) -> Envelope:
        """Sign our next envelope (seq, prev and seen filled in) and accept it."""
        if identity.public_key_bytes not in self.roster:
            raise LocalProtocolError("this identity has no seat at the table")
        seat = self.roster.index(identity.public_key_bytes)
        envelope = Envelope.create(
            identity, self.table, self.next_seq(seat), self.last_hash(seat), self.seen(), body
        )
        self.accept(envelope)
        return envelope


# ------------------------------------------------------------------------ handshake


class Handshake:
    """One side of the hello handshake that opens a connection (sans-io).

    Both sides send :meth:`hello` at once, feed the peer's hello to
    :meth:`receive_hello` and send the proof it returns, then feed the peer's proof to
    :meth:`receive_proof`, which returns the peer's authenticated seat. The dialer
    passes the seat it dialled as ``peer_seat``; the listener passes ``None`` and
    accepts only a higher seat, since higher seats dial lower ones.
    """

    def __init__(
        self,
        identity: Identity,
        table: bytes,
        seat: int,
        roster: Sequence[bytes],
        *,
        peer_seat: int | None,
        nonce: bytes | None = None,
    ) -> None:
        if not 0 <= seat < len(roster) or roster[seat] != identity.public_key_bytes:
            raise LocalProtocolError(f"this identity does not hold seat {seat}")
        if peer_seat is not None and not 0 <= peer_seat < seat:
            raise LocalProtocolError("a seat dials only lower seats")
        if len(table) != TABLE_ID_SIZE:
            raise LocalProtocolError(f"a table id is {TABLE_ID_SIZE} bytes")
        self.identity = identity
        self.table = bytes(table)
        self.seat = seat
        self.roster = tuple(roster)
        self.peer_seat = peer_seat
        self.nonce = secrets.token_bytes(NONCE_SIZE) if nonce is None else nonce
        self._peer_nonce: bytes | None = None

    def hello(self) -> bytes:
        return encode(
            {
                "type": "hello",
                "table": self.table,
                "seat": self.seat,
                "key": self.identity.public_key_bytes,
                "nonce": self.nonce,
            }
        )

    def receive_hello(self, data: bytes) -> bytes:
        """Check the peer's hello; return our proof to send."""
        if self._peer_nonce is not None:
            raise LocalProtocolError("hello already received")
        msg = self._decode(data, {"type", "table", "seat", "key", "nonce"}, "hello")
        seat, key, nonce = msg["seat"], msg["key"], msg["nonce"]
        if type(key) is not bytes or len(key) != KEY_SIZE:
            raise HandshakeError(f"key must be {KEY_SIZE} bytes", evidence=(data,))
        if msg["table"] != self.table:
            raise HandshakeError("hello for another table", sender=key, evidence=(data,))
        if type(seat) is not int or not 0 <= seat < len(self.roster):
            raise HandshakeError(f"hello claims seat {seat!r}", sender=key, evidence=(data,))
        if self.peer_seat is None and seat <= self.seat:
            raise HandshakeError(f"seat {seat} must not dial seat {self.seat}", seat=seat)
        if self.peer_seat is not None and seat != self.peer_seat:
            raise HandshakeError(f"dialled seat {self.peer_seat}, seat {seat} answered", seat=seat)
        if key != self.roster[seat]:
            raise HandshakeError(
                f"key does not hold seat {seat}", sender=key, seat=seat, evidence=(data,)
            )
        if type(nonce) is not bytes or len(nonce) != NONCE_SIZE:
            raise HandshakeError(f"nonce must be {NONCE_SIZE} bytes", seat=seat)
        self.peer_seat = seat
        self._peer_nonce = nonce
        sig = self.identity.sign(self._statement(self.seat, seat, self.nonce, nonce))
        return encode({"type": "hello-proof", "sig": sig})

    def receive_proof(self, data: bytes) -> int:
        """Check the peer's proof; return its seat, now authenticated."""
        if self._peer_nonce is None or self.peer_seat is None:
            raise LocalProtocolError("proof before hello")
        seat = self.peer_seat
        msg = self._decode(data, {"type", "sig"}, "hello-proof")
        statement = self._statement(seat, self.seat, self._peer_nonce, self.nonce)
        if type(msg["sig"]) is not bytes or not verify(self.roster[seat], msg["sig"], statement):
            raise HandshakeError(
                f"seat {seat} failed to prove its key",
                sender=self.roster[seat],
                seat=seat,
                evidence=(data,),
            )
        return seat

    def _statement(self, signer: int, peer: int, signer_nonce: bytes, peer_nonce: bytes) -> bytes:
        return HELLO_LABEL + encode(
            {
                "table": self.table,
                "signer_seat": signer,
                "signer_key": self.roster[signer],
                "peer_seat": peer,
                "peer_key": self.roster[peer],
                "signer_nonce": signer_nonce,
                "peer_nonce": peer_nonce,
            }
        )

    def _decode(self, data: bytes, keys: set[str], kind: str) -> dict[str, Any]:
        try:
            msg = decode(data)
        except MalformedMessage as exc:
            raise HandshakeError(f"{kind}: {exc}", seat=self.peer_seat, evidence=(data,)) from None
        if not isinstance(msg, dict) or msg.keys() != keys or msg["type"] != kind:
            raise HandshakeError(
                f"expected a {kind} map with keys {sorted(keys)}",
                seat=self.peer_seat,
                evidence=(data,),
            )
        return msg


# -------------------------------------------------------------------------- framing

FRAME_HEADER_SIZE = 4


def frame(payload: bytes, max_frame: int = DEFAULT_MAX_FRAME) -> bytes:
    """``payload`` behind its 4-byte big-endian length."""
    if len(payload) > max_frame:
        raise LocalProtocolError(f"payload of {len(payload)} bytes exceeds {max_frame}")
    return len(payload).to_bytes(FRAME_HEADER_SIZE, "big") + payload


class FrameDecoder:
    """Splits a byte stream into frames (sans-io).

    At most one partial frame is buffered (``4 + max_frame`` bytes). A header announcing
    more than ``max_frame`` is never buffered past: it raises :class:`FrameTooLarge` from
    this :meth:`feed` if it completes no frame, else from the next call (so the frames
    before it are delivered), and from every call after that.

    ``opening`` caps the first frames one by one (:data:`HELLO_FRAMES`: a connection's
    handshake), each under its own cap rather than ``max_frame``: what a peer sends before
    it proved who it is never costs more than those caps, even when its first frames and
    the larger ones that follow the handshake arrive in one read.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME, *, opening: Sequence[int] = ()) -> None:
        if not all(0 <= cap < 2**32 for cap in (max_frame, *opening)):
            raise LocalProtocolError("max_frame must fit the 4-byte header")
        self.max_frame = max_frame
        self._opening = tuple(opening)
        self._frames = 0
        self._buffer = bytearray()
        self._error: FrameTooLarge | None = None

    @property
    def limit(self) -> int:
        """The cap of the next frame."""
        if self._frames < len(self._opening):
            return self._opening[self._frames]
        return self.max_frame

    @property
    def buffered(self) -> int:
        """Bytes held of a frame not yet complete."""
        return len(self._buffer)

    @property
    def error(self) -> FrameTooLarge | None:
        """The oversized header that broke the stream, if one did."""
        return self._error

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Add received bytes; return the frames they complete, in order."""
        if self._error is not None:
            raise self._error
        self._buffer += data
        frames: list[bytes] = []
        start = 0
        buf = self._buffer
        while len(buf) - start >= FRAME_HEADER_SIZE:
            length = int.from_bytes(buf[start : start + FRAME_HEADER_SIZE], "big")
            limit = self.limit
            if length > limit:
                self._error = FrameTooLarge(length, limit)
                self._buffer = bytearray()
                if frames:
                    return frames
                raise self._error
            end = start + FRAME_HEADER_SIZE + length
            if len(buf) < end:
                break
            frames.append(bytes(buf[start + FRAME_HEADER_SIZE : end]))
            self._frames += 1
            start = end
        del buf[:start]
        return frames
