from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from helpers import PLAYERS, ROSTER, TABLE
from hypothesis import given, settings
from hypothesis import strategies as st

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.protocol.identity import Identity, verify
from belote_p2p.protocol.wire import (
    ENVELOPE_LABEL,
    MAX_DEPTH,
    ZERO_HASH,
    BadSignature,
    BrokenChain,
    ChainTracker,
    Envelope,
    Equivocation,
    FrameDecoder,
    FrameTooLarge,
    Handshake,
    HandshakeError,
    MalformedMessage,
    OutOfOrder,
    UnknownSender,
    WrongTable,
    decode,
    encode,
    frame,
)

OTHER_TABLE = bytes(range(1, 17))
STRANGER = Identity.from_seed(b"\x99" * 32)


def first_envelope(body: dict[str, Any] | None = None, who: int = 0) -> Envelope:
    return Envelope.create(
        PLAYERS[who], TABLE, 0, ZERO_HASH, [ZERO_HASH] * 4, body or {"type": "chat"}
    )


# ------------------------------------------------------------------ canonical msgpack


def test_encode_sorts_map_keys_at_every_depth() -> None:
    value = {"b": 1, "a": {"z": None, "y": [True, b"\x00", "é"]}}
    data = encode(value)
    assert data == msgpack.packb(
        {"a": {"y": [True, b"\x00", "é"], "z": None}, "b": 1}, use_bin_type=True
    )
    assert decode(data) == value


def test_tuples_encode_as_lists() -> None:
    assert decode(encode({"cards": (1, 2)})) == {"cards": [1, 2]}


@pytest.mark.parametrize(
    "value",
    [
        1.5,
        {"x": 0.0},
        {1: "int key"},
        {b"k": "bytes key"},
        bytearray(b"x"),
        {"s": {1, 2}},
        2**64,
        -(2**63) - 1,
        "\ud800",  # a lone surrogate is not UTF-8
        "x" * ((1 << 16) + 1),
        msgpack.ExtType(1, b"x"),
    ],
    ids=repr,
)
def test_encode_rejects_what_is_not_in_the_data_model(value: object) -> None:
    with pytest.raises(LocalProtocolError):
        encode(value)


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_is_limited_on_both_sides() -> None:
    assert decode(encode(nested(MAX_DEPTH))) == nested(MAX_DEPTH)
    with pytest.raises(LocalProtocolError):
        encode(nested(MAX_DEPTH + 1))
    too_deep = b"\x91" * (MAX_DEPTH + 1) + b"\x00"
    with pytest.raises(MalformedMessage):
        decode(too_deep)


def test_integer_extremes_round_trip() -> None:
    for n in (0, 1, -1, 127, 128, -32, -33, 255, 256, 2**63 - 1, 2**64 - 1, -(2**63)):
        assert decode(encode(n)) == n


@pytest.mark.parametrize(
    "data",
    [
        b"\x82\xa1b\x01\xa1a\x02",  # {"b": 1, "a": 2}: keys out of order
        b"\x82\xa1a\x01\xa1a\x02",  # duplicate key
        b"\xcd\x00\x01",  # 1 as uint16 rather than fixint
        b"\xd0\x05",  # 5 as int8
        b"\xd9\x01a",  # "a" as str8 rather than fixstr
        b"\xc5\x00\x01x",  # b"x" as bin16
        b"\xdc\x00\x01\x00",  # [0] as array16
        b"\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00",  # float 1.5
        b"\xca\x3f\xc0\x00\x00",  # float32 1.5
        b"\xd4\x01\x00",  # fixext
        b"\xd6\xff\x00\x00\x00\x00",  # timestamp ext
        b"\x81\x01\x02",  # int key
        b"\x81\xc4\x01k\x02",  # bytes key
        b"\xa2\xc3\x28",  # invalid UTF-8
        b"\x00\x00",  # trailing byte
        b"\x92\x00",  # truncated
        b"",  # empty
        b"\xc1",  # never-used byte
    ],
    ids=lambda d: d.hex(),
)
def test_decode_rejects_non_canonical_or_foreign_bytes(data: bytes) -> None:
    with pytest.raises(MalformedMessage) as info:
        decode(data)
    assert info.value.evidence == (data,)


# ------------------------------------------------------------------------- envelopes


def test_envelope_round_trip() -> None:
    env = Envelope.create(
        PLAYERS[2],
        TABLE,
        0,
        ZERO_HASH,
        [b"\x01" * 32, ZERO_HASH, ZERO_HASH, ZERO_HASH],
        {"type": "bid", "level": 80, "suit": "H", "cards": (3, 4), "proof": b"\x00" * 10},
    )
    again = Envelope.decode(env.encode())
    assert again == env
    assert again.hash == env.hash == hashlib.sha256(env.encode()).digest()
    assert again.sender == ROSTER[2]
    assert again.body == {
        "type": "bid",
        "level": 80,
        "suit": "H",
        "cards": [3, 4],
        "proof": b"\x00" * 10,
    }
    assert env.body == again.body  # create stores the body as peers will decode it
    assert again.type == "bid"
    assert again.seen[0] == b"\x01" * 32
    assert again.encode() == encode(decode(env.encode()))
    assert verify(
        ROSTER[2],
        env.sig,
        ENVELOPE_LABEL + encode({k: v for k, v in decode(env.encode()).items() if k != "sig"}),
    )
    assert "seq=0" in repr(env) and PLAYERS[2].fingerprint in repr(env)


def test_envelope_field_order_is_the_sorted_key_order() -> None:
    keys = list(decode(first_envelope().encode()))
    assert keys == ["body", "prev", "seen", "sender", "seq", "sig", "table"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("table", b"x" * 15),
        ("seq", -1),
        ("seq", 2**63),
        ("prev", b"\x01" * 32),  # seq 0 must have a zero prev
        ("seen", [ZERO_HASH] * 1),
        ("body", {"kind": "chat"}),
        ("body", {"type": 1.0}),
    ],
)
def test_create_refuses_bad_fields(field: str, value: Any) -> None:
    args: dict[str, Any] = {
        "table": TABLE,
        "seq": 0,
        "prev": ZERO_HASH,
        "seen": [ZERO_HASH] * 4,
        "body": {"type": "chat"},
    }
    args[field] = value
    with pytest.raises(LocalProtocolError):
        Envelope.create(PLAYERS[0], **args)


def raw_envelope(signer: Identity = PLAYERS[0], **fields: Any) -> bytes:
    """An envelope built by hand, validly signed, so that only the field under test is wrong."""
    value: dict[str, Any] = {
        "sender": signer.public_key_bytes,
        "table": TABLE,
        "seq": 0,
        "prev": ZERO_HASH,
        "seen": [ZERO_HASH] * 4,
        "body": {"type": "chat"},
    }
    for k, v in fields.items():
        if k == "sig":
            continue
        if v is DROP:
            del value[k]
        else:
            value[k] = v
    if "sig" not in fields:
        value["sig"] = signer.sign(ENVELOPE_LABEL + encode(value))
    elif fields["sig"] is not DROP:
        value["sig"] = fields["sig"]
    return encode(value)


class _Drop:
    """A field left out (its repr names the test cases the same in every process)."""

    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()
TYPE_ERRORS: list[tuple[str, Any]] = [
    ("sender", b"x" * 31),
    ("sender", b"x" * 33),
    ("sender", "k" * 32),
    ("sender", None),
    ("table", b"x" * 15),
    ("table", b"x" * 17),
    ("table", "t" * 16),
    ("table", 7),
    ("seq", -1),
    ("seq", 2**63),
    ("seq", True),
    ("seq", "0"),
    ("seq", b"\x00"),
    ("seq", None),
    ("prev", b"\x00" * 31),
    ("prev", b"\x00" * 33),
    ("prev", [0] * 32),
    ("prev", b"\x01" * 32),
    ("seen", [ZERO_HASH] * 1),
    ("seen", [ZERO_HASH] * 5),
    ("seen", [ZERO_HASH] * 3 + [b"x"]),
    ("seen", [ZERO_HASH] * 3 + ["0" * 32]),
    ("seen", {"0": ZERO_HASH}),
    ("seen", ZERO_HASH * 4),
    ("body", []),
    ("body", {}),
    ("body", {"type": ""}),
    ("body", {"type": 3}),
    ("body", {"type": b"chat"}),
    ("body", "chat"),
    ("sig", b"\x00" * 63),
    ("sig", b"\x00" * 65),
    ("sig", "s" * 64),
    ("sig", None),
    ("sender", DROP),
    ("table", DROP),
    ("seq", DROP),
    ("prev", DROP),
    ("seen", DROP),
    ("body", DROP),
    ("sig", DROP),
    ("extra", 1),
]


@pytest.mark.parametrize(("field", "value"), TYPE_ERRORS, ids=repr)
def test_decode_rejects_every_bad_field(field: str, value: Any) -> None:
    data = raw_envelope(**{field: value})
    with pytest.raises(MalformedMessage) as info:
        Envelope.decode(data)
    assert info.value.evidence == (data,)
    if field != "sender" and value is not DROP:
        assert info.value.sender == ROSTER[0]


def test_decode_rejects_a_nonzero_seq_with_a_zero_prev() -> None:
    with pytest.raises(MalformedMessage, match="prev"):
        Envelope.decode(raw_envelope(seq=1))
    Envelope.decode(raw_envelope(seq=1, prev=b"\x07" * 32))


def test_decode_rejects_a_non_map_envelope() -> None:
    with pytest.raises(MalformedMessage):
        Envelope.decode(encode([1, 2]))


def test_a_changed_body_breaks_the_signature() -> None:
    value = decode(first_envelope().encode())
    value["body"]["type"] = "fold"
    with pytest.raises(BadSignature) as info:
        Envelope.decode(encode(value))
    assert info.value.sender == ROSTER[0]


def test_a_signature_by_another_key_is_forgery() -> None:
    data = raw_envelope(sender=ROSTER[1])  # signed by seat 0, claims seat 1
    with pytest.raises(BadSignature) as info:
        Envelope.decode(data)
    assert info.value.sender == ROSTER[1]
    assert info.value.evidence == (data,)


def test_a_signature_without_the_domain_label_is_refused() -> None:
    value = decode(raw_envelope(sig=DROP))
    value["sig"] = PLAYERS[0].sign(encode(value))
    with pytest.raises(BadSignature):
        Envelope.decode(encode(value))


ENCODED = first_envelope({"type": "play", "card": 12, "proof": b"\xab" * 40}).encode()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(ENCODED) - 1), st.integers(1, 255))
def test_any_flipped_byte_is_rejected(position: int, mask: int) -> None:
    data = bytearray(ENCODED)
    data[position] ^= mask
    with pytest.raises(RemoteProtocolError):
        Envelope.decode(bytes(data))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, len(ENCODED)))
def test_any_truncation_is_rejected(length: int) -> None:
    with pytest.raises(RemoteProtocolError):
        Envelope.decode(ENCODED[:length] if length < len(ENCODED) else ENCODED + b"\x00")


# ----------------------------------------------------------------------------- chains


def test_chain_tracker_accepts_in_order_and_builds_the_transcript() -> None:
    trackers = [ChainTracker(TABLE, ROSTER) for _ in range(4)]
    sent = []
    for rnd in range(3):
        for seat in range(4):
            env = trackers[seat].create(PLAYERS[seat], {"type": "tick", "n": rnd})
            sent.append(env)
            for other in range(4):
                if other != seat:
                    assert trackers[other].accept_bytes(env.encode()) == env
    for tracker in trackers:
        assert list(tracker.transcript) == sent
        assert tracker.seen() == tuple(sent[-4 + s].hash for s in range(4))
        assert [e.seq for e in tracker.chain(1)] == [0, 1, 2]
    # the seat-3 envelope of round 2 had seen everything before it
    assert sent[-1].seen[:3] == tuple(e.hash for e in sent[-4:-1])
    assert sent[-1].seen[3] == sent[-1].prev == sent[-5].hash


def chain_of(seat: int, length: int) -> list[Envelope]:
    tracker = ChainTracker(TABLE, ROSTER)
    return [tracker.create(PLAYERS[seat], {"type": "tick", "n": i}) for i in range(length)]


def test_duplicates_are_ignored() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    a, b = chain_of(1, 2)
    assert tracker.accept(a) == a
    assert tracker.accept(a) is None
    assert tracker.accept(b) == b
    assert tracker.accept(a) is None
    assert tracker.accept_bytes(b.encode()) is None
    assert list(tracker.transcript) == [a, b]


def test_a_gap_is_out_of_order() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    a, b, c = chain_of(2, 3)
    tracker.accept(a)
    with pytest.raises(OutOfOrder) as info:
        tracker.accept(c)
    assert (info.value.expected, info.value.got, info.value.seat) == (1, 2, 2)
    assert info.value.sender == ROSTER[2] and info.value.evidence == (c.encode(),)
    assert tracker.next_seq(2) == 1
    tracker.accept(b)
    tracker.accept(c)


def test_a_wrong_prev_is_a_broken_chain() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    a = chain_of(0, 1)[0]
    tracker.accept(a)
    bad = Envelope.create(
        PLAYERS[0], TABLE, 1, b"\x05" * 32, [a.hash, *[ZERO_HASH] * 3], {"type": "x"}
    )
    with pytest.raises(BrokenChain) as info:
        tracker.accept(bad)
    assert info.value.seat == 0 and info.value.evidence == (bad.encode(), a.encode())


def test_own_seen_entry_must_be_prev() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    a = chain_of(0, 1)[0]
    tracker.accept(a)
    bad = Envelope.create(PLAYERS[0], TABLE, 1, a.hash, [ZERO_HASH] * 4, {"type": "x"})
    with pytest.raises(BrokenChain):
        tracker.accept(bad)


def test_two_envelopes_at_one_seq_are_equivocation_with_evidence() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    honest = first_envelope({"type": "play", "card": 1}, who=3)
    forked = first_envelope({"type": "play", "card": 2}, who=3)
    tracker.accept(honest)
    with pytest.raises(Equivocation) as info:
        tracker.accept_bytes(forked.encode())
    err = info.value
    assert isinstance(err, RemoteProtocolError)
    assert (err.first, err.second, err.seat, err.sender) == (honest, forked, 3, ROSTER[3])
    # the evidence convinces a third party on its own
    first, second = (Envelope.decode(d) for d in err.evidence)
    assert first.sender == second.sender and first.seq == second.seq
    assert first.table == second.table and first.hash != second.hash
    assert list(tracker.transcript) == [honest]


def test_equivocation_on_an_older_seq_is_caught() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    for env in chain_of(1, 3):
        tracker.accept(env)
    with pytest.raises(Equivocation):
        tracker.accept(first_envelope({"type": "other"}, who=1))


def test_strangers_and_other_tables_are_refused() -> None:
    tracker = ChainTracker(TABLE, ROSTER)
    stranger = Envelope.create(STRANGER, TABLE, 0, ZERO_HASH, [ZERO_HASH] * 4, {"type": "x"})
    with pytest.raises(UnknownSender) as info:
        tracker.accept(stranger)
    assert info.value.sender == STRANGER.public_key_bytes
    assert info.value.evidence == (stranger.encode(),)
    elsewhere = Envelope.create(
        PLAYERS[0], OTHER_TABLE, 0, ZERO_HASH, [ZERO_HASH] * 4, {"type": "x"}
    )
    with pytest.raises(WrongTable):
        tracker.accept(elsewhere)
    with pytest.raises(LocalProtocolError):
        tracker.create(STRANGER, {"type": "x"})


def test_roster_and_table_are_checked() -> None:
    with pytest.raises(LocalProtocolError):
        ChainTracker(TABLE, ROSTER[:1])
    with pytest.raises(LocalProtocolError):
        ChainTracker(TABLE, [*ROSTER, b"\x05" * 32])
    with pytest.raises(LocalProtocolError):
        ChainTracker(TABLE, [ROSTER[0]] * 4)
    with pytest.raises(LocalProtocolError):
        ChainTracker(b"short", ROSTER)


def test_a_three_seat_chain_takes_three_seen_entries_only() -> None:
    trackers = [ChainTracker(TABLE, ROSTER[:3]) for _ in range(2)]
    first = trackers[0].create(PLAYERS[0], {"type": "tick"})
    assert len(first.seen) == 3
    assert trackers[1].accept(first) == first
    four = Envelope.create(PLAYERS[1], TABLE, 0, ZERO_HASH, [ZERO_HASH] * 4, {"type": "tick"})
    with pytest.raises(MalformedMessage, match="3 hashes") as info:
        trackers[1].accept(four)
    assert info.value.seat == 1


# -------------------------------------------------------------------------- handshake


def run_handshake(a: Handshake, b: Handshake) -> tuple[int, int]:
    proof_a = a.receive_hello(b.hello())
    proof_b = b.receive_hello(a.hello())
    return a.receive_proof(proof_b), b.receive_proof(proof_a)


def test_handshake_authenticates_both_seats() -> None:
    listener = Handshake(PLAYERS[1], TABLE, 1, ROSTER, peer_seat=None)
    dialer = Handshake(PLAYERS[3], TABLE, 3, ROSTER, peer_seat=1)
    assert run_handshake(listener, dialer) == (3, 1)


def test_handshake_refuses_an_impostor() -> None:
    # The impostor believes in a roster where it holds seat 3.
    fake_roster = [*ROSTER[:3], STRANGER.public_key_bytes]
    listener = Handshake(PLAYERS[1], TABLE, 1, ROSTER, peer_seat=None)
    impostor = Handshake(STRANGER, TABLE, 3, fake_roster, peer_seat=1)
    with pytest.raises(HandshakeError, match="does not hold seat 3"):
        listener.receive_hello(impostor.hello())


def test_handshake_refuses_a_replayed_proof() -> None:
    # An eavesdropper records seat 3's hello and proof in one session...
    old_listener = Handshake(PLAYERS[1], TABLE, 1, ROSTER, peer_seat=None)
    real = Handshake(PLAYERS[3], TABLE, 3, ROSTER, peer_seat=1)
    recorded_hello = real.hello()
    recorded_proof = real.receive_hello(old_listener.hello())
    # ...and replays them to seat 1, which has picked a fresh nonce.
    new_listener = Handshake(PLAYERS[1], TABLE, 1, ROSTER, peer_seat=None)
    new_listener.receive_hello(recorded_hello)
    with pytest.raises(HandshakeError, match="failed to prove"):
        new_listener.receive_proof(recorded_proof)


@pytest.mark.parametrize(
    ("listener_seat", "dialer_seat", "dialled", "message"),
    [
        (2, 1, 2, None),  # a lower seat must not dial a higher one (refused by Handshake)
        (1, 3, 2, "dialled seat 2"),
    ],
)
def test_handshake_checks_who_dials_whom(
    listener_seat: int, dialer_seat: int, dialled: int, message: str | None
) -> None:
    if message is None:
        with pytest.raises(LocalProtocolError):
            Handshake(PLAYERS[dialer_seat], TABLE, dialer_seat, ROSTER, peer_seat=dialled)
        # and a listener refuses a lower seat's hello
        lower = Handshake(PLAYERS[0], TABLE, 0, ROSTER, peer_seat=None)
        listener = Handshake(PLAYERS[listener_seat], TABLE, listener_seat, ROSTER, peer_seat=None)
        with pytest.raises(HandshakeError, match="must not dial"):
            listener.receive_hello(lower.hello())
        return
    listener = Handshake(PLAYERS[listener_seat], TABLE, listener_seat, ROSTER, peer_seat=None)
    dialer = Handshake(PLAYERS[dialer_seat], TABLE, dialer_seat, ROSTER, peer_seat=dialled)
    with pytest.raises(HandshakeError, match=message):
        dialer.receive_hello(listener.hello())


def test_handshake_refuses_another_table_and_garbage() -> None:
    listener = Handshake(PLAYERS[0], TABLE, 0, ROSTER, peer_seat=None)
    other = Handshake(PLAYERS[2], OTHER_TABLE, 2, ROSTER, peer_seat=0)
    with pytest.raises(HandshakeError, match="another table"):
        listener.receive_hello(other.hello())
    for garbage in (b"", b"\xc1", encode({"type": "hello"}), encode([1])):
        with pytest.raises(HandshakeError):
            Handshake(PLAYERS[0], TABLE, 0, ROSTER, peer_seat=None).receive_hello(garbage)


# ---------------------------------------------------------------------------- framing


def test_frames_survive_any_split() -> None:
    payloads = [b"", b"a", b"hello world", bytes(300)]
    stream = b"".join(frame(p) for p in payloads)
    for chunk in (1, 2, 3, 5, 7, len(stream)):
        decoder = FrameDecoder()
        got: list[bytes] = []
        for i in range(0, len(stream), chunk):
            got += decoder.feed(stream[i : i + chunk])
        assert got == payloads
        assert decoder.buffered == 0


def test_oversize_frame_fails_on_its_header() -> None:
    decoder = FrameDecoder(max_frame=10)
    assert decoder.feed(frame(b"x" * 10)) == [b"x" * 10]
    with pytest.raises(FrameTooLarge) as info:
        decoder.feed((11).to_bytes(4, "big"))  # no payload sent: nothing is buffered
    assert (info.value.length, info.value.limit) == (11, 10)
    assert decoder.buffered == 0
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"more")
    with pytest.raises(LocalProtocolError):
        frame(b"x" * 11, max_frame=10)


def test_frames_before_an_oversize_header_are_delivered_first() -> None:
    decoder = FrameDecoder(max_frame=10)
    assert decoder.feed(frame(b"ok") + (11).to_bytes(4, "big") + b"junk") == [b"ok"]
    assert decoder.error is not None and decoder.buffered == 0
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"")


def test_decoder_buffers_at_most_one_partial_frame() -> None:
    decoder = FrameDecoder(max_frame=100)
    data = frame(b"a" * 100) * 3
    decoder.feed(data[:-1])
    assert decoder.buffered == 103


# ------------------------------------------------------------------------ test vector

PROTOCOL = Path(__file__).parent.parent / "protocol" / "PROTOCOL.md"


def protocol_vectors() -> dict[str, bytes]:
    text = PROTOCOL.read_text(encoding="utf-8")
    block = text.split("<!-- vectors -->")[1].split("<!-- /vectors -->")[0]
    vectors = {}
    for name, hexes in re.findall(r"^(\w[\w-]*):\s*((?:[0-9a-f]+\s*)+)$", block, re.M):
        vectors[name] = bytes.fromhex("".join(hexes.split()))
    return vectors


def test_protocol_md_vectors() -> None:
    v = protocol_vectors()
    identity = Identity.from_seed(v["seed"])
    assert identity.public_key_bytes == v["public-key"]
    assert identity.fingerprint == "5647-5aa7-5463-474c"
    assert set(v) == {"seed", "public-key", "table", "envelope-0", "hash-0", "envelope-1", "hash-1"}
    tracker = ChainTracker(v["table"], [v["public-key"], *ROSTER[1:]])
    env0 = tracker.create(identity, {"type": "chat", "text": "bonjour"})
    env1 = tracker.create(
        identity, {"type": "chat", "n": -1, "data": b"\x00\xff", "list": [True, None]}
    )
    assert env0.encode() == v["envelope-0"]
    assert env0.hash == v["hash-0"]
    assert env1.encode() == v["envelope-1"]
    assert env1.hash == v["hash-1"]
    assert ChainTracker(v["table"], tracker.roster).accept_bytes(v["envelope-0"]) == env0
