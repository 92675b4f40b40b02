"""Garbage at a session: random and mutated frames are refused with typed errors, change
nothing, cost bounded memory, and the honest game still completes. Then the same over
loopback TCP against live peers."""

from __future__ import annotations

import gc
import os
import random
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
import trio.testing
from cheaters import Table
from helpers import TIMEOUT, make_table, open_listeners, play_table

import belote_p2p.net.peer as peer_module
from belote_p2p.errors import RemoteProtocolError
from belote_p2p.net.peer import PeerConfig, PeerResult, run_peer
from belote_p2p.net.transport import ConnectionClosed, FramedStream, handshake
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.events import PeerFault
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import HandshakeError, encode

FRAMES = 100_000
TRACED = 10_000
MEMORY_BUDGET = 4 << 20
TRACEBACK = 2
"""Frames kept of an allocation's stack: enough to reach the package's code or this file's
from within the libraries they call, and few, as tracemalloc's cost grows with them. The
10,000 traced frames keep the same 48,996 bytes at 2, 4 and 8 frames (48,945 at 1), and
take 4.3 s at 2 frames, 6.8 s at 4, 12.5 s at 8 (one core, the test alone); a session
that kept every frame it was sent would keep 10.9 MB there, at 2 frames as at 8."""


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.randrange(-(2**63), 2**64)
    if kind == 1:
        return rng.randbytes(rng.choice((0, 16, 32, 64, rng.randrange(200))))
    if kind == 2:
        return "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(12)))
    if kind == 3:
        return rng.choice((None, True, False))
    if kind == 4:
        return rng.random()  # floats are outside the data model
    if kind == 5:
        return rng.choice(("type", "sync", "body", "seq", "play", "deck"))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(6))]
    keys = ["type", "sender", "table", "seq", "prev", "seen", "body", "sig", "have", "want"]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(8))}


def wrong_types(rng: random.Random, envelope: dict[str, object]) -> bytes:
    """A real envelope with one field of the wrong type or size, canonically encoded."""
    fields = dict(envelope)
    key = rng.choice(sorted(fields))
    fields[key] = random_value(rng, 1)
    try:
        return bytes(encode(fields))
    except Exception:
        packed: bytes = msgpack.packb(fields, use_bin_type=True)
        return packed


def mutations(seeds: list[bytes], rng: random.Random) -> Iterator[bytes]:
    """Endless frames derived from real envelopes, plus random bytes and values."""
    decoded = [msgpack.unpackb(s, raw=False) for s in seeds]

    def flip(data: bytes) -> bytes:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)

    def truncate(data: bytes) -> bytes:
        return data[: rng.randrange(len(data))]

    def splice(data: bytes) -> bytes:
        other = rng.choice(seeds)
        return data[: rng.randrange(len(data))] + other[rng.randrange(len(other)) :]

    def extend(data: bytes) -> bytes:
        return data + rng.randbytes(rng.randrange(1, 9))

    def byte_set(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.choice((0x00, 0xC0, 0xC1, 0xFF, 0x7F, 0x80))]) + data[i + 1 :]

    def random_bytes(_: bytes) -> bytes:
        return rng.randbytes(rng.choice((0, 1, 2, 7, 64, rng.randrange(1, 2000))))

    def value(_: bytes) -> bytes:
        packed: bytes = msgpack.packb(random_value(rng), use_bin_type=True)
        return packed

    def typed(_: bytes) -> bytes:
        return wrong_types(rng, rng.choice(decoded))

    ops: list[Callable[[bytes], bytes]] = [
        flip, flip, flip, truncate, splice, extend, byte_set, random_bytes, value, typed, typed,
    ]  # fmt: skip
    while True:
        yield rng.choice(ops)(rng.choice(seeds))


def snapshot(session: TableSession) -> tuple[object, ...]:
    return (
        session.state,
        session._digest,
        len(session.transcript),
        tuple(session.tracker.next_seq(s) for s in range(4)),
        session.fault,
        len(session._pending),
        len(session._processed),
        sum(len(e) for e in session._early.values()),
    )


def test_a_session_survives_a_hundred_thousand_bad_frames() -> None:
    t = Table(None, variant="coinche", target=151, seed=4)
    t.start()
    for _ in range(120):  # into the first round: table signed, deck dealt, bidding on
        assert t.deliver_one()
    target = t.sessions[0]
    seeds = [e.encode() for e in target.transcript]
    assert len(seeds) > 8
    before = snapshot(target)
    errors: dict[str, int] = {}
    faults = 0
    frames = mutations(seeds, random.Random(2024))

    def throw(count: int) -> None:
        nonlocal faults
        for _ in range(count):
            data = next(frames)
            try:
                target.receive(data)
            except RemoteProtocolError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            for event in target.take_events():
                assert isinstance(event, PeerFault), event
                faults += 1
            assert not target.take_outbox()

    throw(FRAMES - TRACED)
    # tracemalloc slows everything down several times: watch the last stretch only (what a
    # session keeps of garbage would show as a steady growth there). What is kept counts the
    # blocks still held, garbage collected, that the package's code or this file allocated
    # (a session that kept the frames it was sent, as this file made them): the process
    # may have threads of its own left by other tests (the suite's workers run many files),
    # and what they allocate meanwhile is not the session's.
    gc.collect()
    tracemalloc.start(TRACEBACK)
    base = tracemalloc.get_traced_memory()[0]
    throw(TRACED)
    peak = tracemalloc.get_traced_memory()[1]
    gc.collect()
    ours = tracemalloc.Filter(True, f"*{os.sep}belote_p2p{os.sep}*", all_frames=True)
    frames_kept = tracemalloc.Filter(True, __file__, all_frames=True)  # the raw frames
    kept = tracemalloc.take_snapshot().filter_traces([ours, frames_kept])
    tracemalloc.stop()
    kept_bytes = sum(trace.size for trace in kept.traces)
    assert peak - base < MEMORY_BUDGET, f"peak memory grew by {peak - base} bytes"
    assert kept_bytes < MEMORY_BUDGET // 8, (
        f"{kept_bytes} bytes kept: {kept.statistics('lineno')[:5]}"
    )
    assert faults == 0  # a mutation cannot carry a valid signature
    assert snapshot(target) == before
    assert sum(errors.values()) > FRAMES * 0.9, errors
    assert {"MalformedMessage", "BadSignature"} <= set(errors), errors
    # The honest game goes on from there, the fuzzed peer included.
    t.run()
    assert all(s.finished and s.fault is None for s in t.sessions)
    assert len({s.state.scores for s in t.sessions}) == 1


# -- over loopback TCP ----------------------------------------------------------------------

CHEATER = 3


async def test_a_peer_shrugs_off_thousands_of_bad_frames_over_tcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 3 plays honestly but sends 3000 mutated frames along the way: each bad frame
    costs it the connection that delivered it (the rest of what it queued there is lost);
    it dials again, the peers sync, and the game completes."""
    real_mesh = peer_module.Mesh
    rng = random.Random(7)
    seeds: list[bytes] = []
    per_envelope = 250

    class NoisyMesh(real_mesh):  # type: ignore[misc, valid-type]
        sent_garbage = 0

        def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == CHEATER and NoisyMesh.sent_garbage < 3000:
                seeds.append(payload)
                frames = mutations(seeds, rng)
                for _ in range(per_envelope):
                    super().broadcast(next(frames))
                NoisyMesh.sent_garbage += per_envelope
            result: frozenset[int] = super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", NoisyMesh)
    config = PeerConfig(peer_timeout=20)
    results, _ = await play_table("coinche", tmp_path, seed=41, config=config)
    assert NoisyMesh.sent_garbage >= 3000
    for r in results:
        assert r is not None and r.ok, r
        assert verify_transcript(r.transcript).ok
    for r in results[:3]:
        assert r is not None
        assert r.rejected[:3] == (0, 0, 0)
        assert r.rejected[CHEATER] >= 1
        assert r.reconnections >= 1


async def test_an_impostor_flooding_garbage_loses_each_connection_and_proves_nothing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """An impostor holding seat 3's key connects to seats 0..2 again and again (once a
    second) and floods each connection with garbage. Each peer drops every such connection
    at its first bad frame, counts it, and goes on; with no signed word from seat 3 the
    table is never signed, and each peer ends on that silence at its deadline: never on the
    garbage itself, and nobody is voted out."""
    listeners = await open_listeners()
    definition, ids = make_table("coinche", target=151, seed=41, listeners=listeners)
    results: list[PeerResult | None] = [None] * 3
    connections = [0, 0, 0]
    closed_on_us = [0, 0, 0]
    stop = trio.Event()
    config = PeerConfig(connect_timeout=60, step_deadline=10, grace=30)

    async def one(seat: int) -> None:
        results[seat] = await run_peer(
            definition, seat, ids[seat], BotPlayer("random", seed=seat),
            transcript=tmp_path / f"seat{seat}.transcript",
            listeners=[listeners[seat]],
            secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
            proposal=definition.propose(ids[0]),
            config=config,
        )  # fmt: skip
        if all(r is not None for r in results):
            stop.set()

    async def flood_once(peer: int, rng: random.Random) -> None:
        host, port = definition.seats[peer].address.split(":")
        try:
            stream = await trio.open_tcp_stream(host, int(port))
        except OSError:
            return
        async with FramedStream(stream) as conn:
            try:
                await handshake(
                    conn, ids[CHEATER], definition.table_id, CHEATER, definition.roster,
                    peer_seat=peer,
                )  # fmt: skip
            except HandshakeError:
                return  # the peer is gone (the game is over for it)
            connections[peer] += 1
            try:
                for _ in range(300):
                    await conn.send(rng.randbytes(rng.randrange(1, 300)))
                while True:  # the peer must close on us
                    await conn.receive()
            except ConnectionClosed:
                closed_on_us[peer] += 1

    async def flood(peer: int) -> None:
        rng = random.Random(peer)
        while not stop.is_set():
            await flood_once(peer, rng)
            await trio.sleep(1)  # the attacker's pace: virtual seconds

    await listeners[CHEATER].aclose()
    with trio.fail_after(TIMEOUT * 10):  # virtual seconds
        async with trio.open_nursery() as nursery:
            for seat in range(3):
                nursery.start_soon(one, seat)
            for peer in range(3):
                nursery.start_soon(flood, peer)
    assert min(connections) >= 3
    assert closed_on_us == connections
    for r in results:
        assert r is not None and not r.ok
        assert r.error is not None and "did not sign the table" in r.error, r.error
        assert r.fault is None and r.abandoned is None
        assert r.rejected[:3] == (0, 0, 0)
        assert r.rejected[CHEATER] >= 3
        assert read_transcript(r.transcript).envelopes
