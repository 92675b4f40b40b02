from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from functools import partial

import pytest
import trio
import trio.testing
from helpers import PLAYERS, ROSTER, TABLE, address_of, open_listeners

from belote_p2p.errors import LocalProtocolError
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.relay import RelayService, open_relay_link
from belote_p2p.net.serve import Gate, Ticket, serve_listeners
from belote_p2p.net.transport import (
    ConnectionClosed,
    DialFailed,
    Fallback,
    FramedStream,
    Link,
    Mesh,
    MeshConfig,
    MeshEvent,
    PeerConnected,
    PeerLost,
    Received,
    handshake,
    open_mesh,
)
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import RelayLimits
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import (
    DEFAULT_MAX_FRAME,
    HELLO_FRAMES,
    MAX_HELLO_FRAME,
    FrameDecoder,
    FrameTooLarge,
    Handshake,
    HandshakeError,
    frame,
)

IMPOSTOR = Identity.from_seed(b"\x99" * 32)


# ---------------------------------------------------------------------- framed stream


async def test_frames_cross_a_stream_in_pieces() -> None:
    with trio.fail_after(10):
        raw_send, raw_receive = trio.testing.memory_stream_one_way_pair()
        receiver = FramedStream(trio.StapledStream(raw_send, raw_receive), receive_size=3)
        payloads = [b"", b"one", b"two" * 100, bytes(1000)]
        data = b"".join(frame(p) for p in payloads)
        for i in range(0, len(data), 7):  # partial frames, split headers
            await raw_send.send_all(data[i : i + 7])
        assert [await receiver.receive() for _ in payloads] == payloads
        await raw_send.aclose()
        with pytest.raises(ConnectionClosed) as info:
            await receiver.receive()
        assert info.value.clean


async def test_concurrent_sends_do_not_interleave() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        sender, receiver = FramedStream(left), FramedStream(right)
        payloads = [bytes([i]) * (5000 + i) for i in range(20)]
        async with trio.open_nursery() as nursery:
            for p in payloads:
                nursery.start_soon(sender.send, p)
            got = [await receiver.receive() for _ in payloads]
        assert sorted(got) == sorted(payloads)


async def test_eof_inside_a_frame_is_unclean() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        await left.send_all(frame(b"abcdef")[:-2])
        await left.aclose()
        with pytest.raises(ConnectionClosed) as info:
            await FramedStream(right).receive()
        assert not info.value.clean


async def test_oversize_frame_is_refused_before_its_payload() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        receiver = FramedStream(right, max_frame=16)
        await left.send_all((17).to_bytes(4, "big"))  # the payload never comes
        with pytest.raises(FrameTooLarge):
            await receiver.receive()


async def test_send_on_a_closed_stream_is_connection_closed() -> None:
    with trio.fail_after(10):
        left, _right = trio.testing.memory_stream_pair()
        conn = FramedStream(left)
        await conn.aclose()
        with pytest.raises(ConnectionClosed):
            await conn.send(b"x")


# -------------------------------------------------------------------------- handshake


async def test_handshake_over_a_stream() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        results: dict[str, int] = {}

        async def side(name: str, conn: FramedStream, seat: int, peer: int | None) -> None:
            results[name] = await handshake(
                conn, PLAYERS[seat], TABLE, seat, ROSTER, peer_seat=peer
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, "listener", FramedStream(left), 0, None)
            nursery.start_soon(side, "dialer", FramedStream(right), 2, 0)
        assert results == {"listener": 2, "dialer": 0}


async def test_handshake_rejects_a_wrong_identity() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        fake_roster = [ROSTER[0], IMPOSTOR.public_key_bytes, *ROSTER[2:]]
        listener_error: list[HandshakeError] = []

        async def listener() -> None:
            async with FramedStream(left) as conn:
                with pytest.raises(HandshakeError) as info:
                    await handshake(conn, PLAYERS[0], TABLE, 0, ROSTER, peer_seat=None)
                listener_error.append(info.value)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(listener)
            with pytest.raises(HandshakeError):
                await handshake(FramedStream(right), IMPOSTOR, TABLE, 1, fake_roster, peer_seat=0)
        assert "does not hold seat 1" in str(listener_error[0])
        assert listener_error[0].sender == IMPOSTOR.public_key_bytes


# ------------------------------------------------------------------------------- mesh


def seat_mesh(
    seat: int, listeners: list[trio.SocketListener], config: MeshConfig | None = None
) -> AbstractAsyncContextManager[Mesh]:
    """Seat ``seat``'s mesh at a table whose first seats listen on ``listeners`` (one each)
    and whose other seats only dial."""
    addresses = {s: address_of(listener) for s, listener in enumerate(listeners)}
    own = listeners[seat : seat + 1] if seat < len(listeners) else None
    return open_mesh(PLAYERS[seat], TABLE, seat, ROSTER, addresses, listeners=own, config=config)


async def next_event(mesh: Mesh) -> MeshEvent:
    """The next event that is not a (re)connection."""
    while True:
        event = await mesh.receive()
        if not isinstance(event, PeerConnected):
            return event


async def test_four_peers_exchange_messages_over_loopback() -> None:
    with trio.fail_after(10):
        listeners = await open_listeners(3)
        inbox: dict[int, list[tuple[int, bytes]]] = {seat: [] for seat in range(4)}
        finished = 0
        all_finished = trio.Event()

        async def peer(seat: int) -> None:
            nonlocal finished
            async with seat_mesh(seat, listeners) as mesh:
                assert mesh.peers == frozenset(range(4)) - {seat}
                assert mesh.broadcast(b"all from %d" % seat) == frozenset()
                mesh.send((seat + 1) % 4, b"next from %d" % seat)
                while len(inbox[seat]) < 4:
                    event = await next_event(mesh)
                    assert isinstance(event, Received)
                    inbox[seat].append((event.seat, event.payload))
                finished += 1
                if finished == 4:
                    all_finished.set()
                await all_finished.wait()

        async with trio.open_nursery() as nursery:
            for seat in range(4):
                nursery.start_soon(peer, seat)

        for seat in range(4):
            previous = (seat - 1) % 4
            expected = {(s, b"all from %d" % s) for s in range(4) if s != seat}
            expected.add((previous, b"next from %d" % previous))
            assert set(inbox[seat]) == expected
            # one connection per pair keeps each sender's frames in order
            from_previous = [p for s, p in inbox[seat] if s == previous]
            assert from_previous == [b"all from %d" % previous, b"next from %d" % previous]


async def test_a_mesh_given_a_channel_sends_its_events_there() -> None:
    """A consumer that waits for other inputs too (the peer's driver) gives the mesh its own
    channel: the events arrive there with its own items, and the mesh closes only its clone."""
    with trio.fail_after(10):
        listeners = await open_listeners(3)
        addresses = {s: address_of(listener) for s, listener in enumerate(listeners)}
        send, inbox = trio.open_memory_channel[object](64)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, events=send.clone())
        done = trio.Event()
        got: list[object] = []

        async def other(seat: int) -> None:
            async with seat_mesh(seat, listeners) as theirs:
                theirs.send(0, b"hello from %d" % seat)
                await done.wait()

        async with trio.open_nursery() as nursery:
            for seat in (1, 2, 3):
                nursery.start_soon(other, seat)
            await nursery.start(partial(mesh.run, addresses, listeners=listeners[:1]))
            with pytest.raises(LocalProtocolError):
                await mesh.receive()
            send.send_nowait("ours")
            while sum(isinstance(e, Received) for e in got) < 3 or "ours" not in got:
                got.append(await inbox.receive())
            done.set()
            mesh.close()
        assert {e.seat for e in got if isinstance(e, PeerConnected)} == {1, 2, 3}
        received = {(e.seat, e.payload) for e in got if isinstance(e, Received)}
        assert received == {(s, b"hello from %d" % s) for s in (1, 2, 3)}
        send.send_nowait("after")  # the mesh closed its clone, not the consumer's channel
        assert inbox.receive_nowait() == "after"


async def test_a_departed_peer_is_reported_and_unreachable() -> None:
    with trio.fail_after(10):
        listeners = await open_listeners(3)
        leaving = trio.Event()

        async def peer(seat: int) -> None:
            async with seat_mesh(seat, listeners) as mesh:
                if seat == 3:
                    return  # closes its three connections
                event = await next_event(mesh)
                assert isinstance(event, PeerLost)
                assert event.seat == 3
                with pytest.raises(ConnectionClosed) as info:
                    mesh.send(3, b"anyone there?")
                assert info.value.seat == 3
                assert mesh.broadcast(b"still here") == frozenset({3})
                leaving.set()

        async with trio.open_nursery() as nursery:
            for seat in range(4):
                nursery.start_soon(peer, seat)
        assert leaving.is_set()


async def test_mesh_refuses_an_impostor_then_admits_the_real_peer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(10), caplog.at_level(logging.WARNING):
        listeners = await open_listeners(1)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER)
        async with trio.open_nursery() as nursery:
            await nursery.start(mesh.serve, listeners)
            fake_roster = [ROSTER[0], IMPOSTOR.public_key_bytes, *ROSTER[2:]]
            stream = await trio.testing.open_stream_to_socket_listener(listeners[0])
            async with FramedStream(stream) as conn:
                with pytest.raises(HandshakeError):
                    await handshake(conn, IMPOSTOR, TABLE, 1, fake_roster, peer_seat=0)
            assert mesh.peers == frozenset()

            stream = await trio.testing.open_stream_to_socket_listener(listeners[0])
            async with FramedStream(stream) as conn:
                assert await handshake(conn, PLAYERS[1], TABLE, 1, ROSTER, peer_seat=0) == 0
                await conn.send(b"hello seat 0")
                assert await mesh.receive() == PeerConnected(1, reconnected=False)
                assert await mesh.receive() == Received(1, b"hello seat 0")
                assert mesh.peers == frozenset({1})
                mesh.send(1, b"welcome")
                assert await conn.receive() == b"welcome"
            assert isinstance(await mesh.receive(), PeerLost)
            nursery.cancel_scope.cancel()
        assert "does not hold seat 1" in caplog.text


async def test_dialling_nobody_fails_after_bounded_retries() -> None:
    with trio.fail_after(10):
        # Bind a port and close it again: nobody listens there now.
        dead, own = await open_listeners(2)
        address = address_of(dead)
        await dead.aclose()
        config = MeshConfig(dial_attempts=3, dial_backoff=0.001)
        mesh = Mesh(PLAYERS[1], TABLE, 1, ROSTER, config)
        with pytest.RaisesGroup(pytest.RaisesExc(DialFailed, match="3 attempts")) as info:
            await mesh.run({0: address}, listeners=[own])
        error = info.value.exceptions[0]
        assert isinstance(error, DialFailed) and error.seat == 0
        with pytest.raises(ConnectionClosed):
            await mesh.receive()


async def test_a_silent_connection_is_dropped_at_the_handshake_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(10), caplog.at_level(logging.WARNING):
        listeners = await open_listeners(1)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, MeshConfig(handshake_timeout=0.05))
        async with trio.open_nursery() as nursery:
            await nursery.start(mesh.serve, listeners)
            async with await trio.testing.open_stream_to_socket_listener(listeners[0]) as s:
                received = b""
                while chunk := await s.receive_some():  # the listener's hello, then EOF
                    received += chunk
            nursery.cancel_scope.cancel()
        assert received[:4] == (len(received) - 4).to_bytes(4, "big")
        assert "no handshake within" in caplog.text


async def test_an_oversized_frame_costs_the_peer_its_connection() -> None:
    with trio.fail_after(10):
        listeners = await open_listeners(1)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, MeshConfig(max_frame=200))
        async with trio.open_nursery() as nursery:
            await nursery.start(mesh.serve, listeners)
            stream = await trio.testing.open_stream_to_socket_listener(listeners[0])
            async with FramedStream(stream) as conn:
                await handshake(conn, PLAYERS[2], TABLE, 2, ROSTER, peer_seat=0)
                await stream.send_all((201).to_bytes(4, "big"))
                event = await next_event(mesh)
                assert isinstance(event, PeerLost)
                assert event.seat == 2 and "exceeds" in event.reason and event.refused
                with pytest.raises(ConnectionClosed):
                    await conn.receive()
            nursery.cancel_scope.cancel()


async def test_a_frame_before_an_oversize_header_is_still_received() -> None:
    with trio.fail_after(10):
        left, right = trio.testing.memory_stream_pair()
        receiver = FramedStream(right, max_frame=16)
        await left.send_all(frame(b"fine") + (17).to_bytes(4, "big"))
        assert await receiver.receive() == b"fine"
        with pytest.raises(FrameTooLarge):
            await receiver.receive()


async def test_a_dropped_connection_is_dialled_again_by_the_higher_seat() -> None:
    with trio.fail_after(10):
        listeners = await open_listeners(3)
        config = MeshConfig(dial_backoff=0.01)
        seen: dict[int, list[MeshEvent]] = {0: [], 2: []}
        done = trio.Event()

        async def peer(seat: int) -> None:
            async with seat_mesh(seat, listeners, config) as mesh:
                if seat == 0:
                    await mesh.drop(2)
                if seat in (0, 2):
                    other = 2 - seat
                    while True:
                        event = await mesh.receive()
                        if event.seat != other:
                            continue
                        seen[seat].append(event)
                        if isinstance(event, PeerConnected) and event.reconnected:
                            break
                    mesh.send(other, b"again from %d" % seat)
                    event = await next_event(mesh)
                    while event.seat != other:
                        event = await next_event(mesh)
                    assert event == Received(other, b"again from %d" % other)
                    done.set()
                await done.wait()

        async with trio.open_nursery() as nursery:
            for seat in range(4):
                nursery.start_soon(peer, seat)
        for seat in (0, 2):
            kinds = [type(e) for e in seen[seat]]
            assert kinds == [PeerConnected, PeerLost, PeerConnected], seen[seat]


async def test_a_new_authenticated_connection_replaces_the_old_one() -> None:
    with trio.fail_after(10):
        listeners = await open_listeners(1)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER)
        async with trio.open_nursery() as nursery:
            await nursery.start(mesh.serve, listeners)
            first = FramedStream(await trio.testing.open_stream_to_socket_listener(listeners[0]))
            await handshake(first, PLAYERS[1], TABLE, 1, ROSTER, peer_seat=0)
            assert await mesh.receive() == PeerConnected(1, reconnected=False)
            second = FramedStream(await trio.testing.open_stream_to_socket_listener(listeners[0]))
            await handshake(second, PLAYERS[1], TABLE, 1, ROSTER, peer_seat=0)
            assert await mesh.receive() == PeerConnected(1, reconnected=True)
            with pytest.raises(ConnectionClosed):
                await first.receive()  # the old connection was closed
            mesh.send(1, b"to the new one")
            assert await second.receive() == b"to the new one"
            await second.send(b"from the new one")
            # The old connection's end is not a lost peer: the next event is the frame.
            assert await mesh.receive() == Received(1, b"from the new one")
            await first.aclose()
            await second.aclose()
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------ per-connection send queues


class PipeLink:
    """One end of an in-memory link that holds one frame each way: a second send waits
    until the other end reads (as a TCP connection whose buffers are full)."""

    def __init__(
        self, out: trio.MemorySendChannel[bytes], into: trio.MemoryReceiveChannel[bytes]
    ) -> None:
        self.out, self.into = out, into

    @staticmethod
    def pair() -> tuple[PipeLink, PipeLink]:
        a_out, b_in = trio.open_memory_channel[bytes](1)
        b_out, a_in = trio.open_memory_channel[bytes](1)
        return PipeLink(a_out, a_in), PipeLink(b_out, b_in)

    async def send(self, payload: bytes) -> None:
        try:
            await self.out.send(payload)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ConnectionClosed("the pipe is closed") from exc

    async def receive(self) -> bytes:
        try:
            return await self.into.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError) as exc:
            raise ConnectionClosed("the pipe is closed") from exc

    async def aclose(self) -> None:
        await self.out.aclose()
        await self.into.aclose()


async def attached_peers(
    nursery: trio.Nursery, mesh: Mesh, seats: tuple[int, ...] = (1, 2, 3)
) -> dict[int, PipeLink]:
    """Connect ``seats`` to seat 0's ``mesh`` over :class:`PipeLink` (links other than TCP
    streams go through :meth:`Mesh.attach`); their ends, once authenticated and reported."""
    ends = {}
    for seat in seats:
        ours, theirs = PipeLink.pair()
        nursery.start_soon(partial(mesh.attach, ours, peer_seat=None))
        ends[seat] = theirs
        assert await handshake(ends[seat], PLAYERS[seat], TABLE, seat, ROSTER, peer_seat=0) == 0
        assert await mesh.receive() == PeerConnected(seat, reconnected=False)
    return ends


async def test_a_peer_that_does_not_read_is_dropped_once_its_queue_is_full() -> None:
    with trio.fail_after(10):
        config = MeshConfig(max_frame=1000, send_queue_bytes=4000, send_queue_frames=100)
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, config)
        payloads = [bytes([i]) * 500 for i in range(40)]
        got: dict[int, list[bytes]] = {1: [], 2: []}

        async def read(seat: int, end: PipeLink) -> None:
            with suppress(ConnectionClosed):
                while True:
                    got[seat].append(await end.receive())

        async with trio.open_nursery() as nursery:
            ends = await attached_peers(nursery, mesh)
            for seat in (1, 2):
                nursery.start_soon(read, seat, ends[seat])
            missed = []
            for payload in payloads:  # seat 3 never reads
                missed.append(mesh.broadcast(payload))
                assert mesh.backlog(1) <= 4000 and mesh.backlog(3) <= 4000
                await trio.testing.wait_all_tasks_blocked()
            lost = await mesh.receive()
            assert isinstance(lost, PeerLost) and lost.seat == 3, lost
            assert "not reading" in lost.reason
            assert mesh.peers == frozenset({1, 2})
            # One frame waits in the pipe; the queue's 4000 bytes hold seven frames of 504
            # (the one being sent included): the ninth overfills it.
            dropped_at = missed.index(frozenset({3}))
            assert dropped_at == 8 and not any(missed[:dropped_at])
            assert all(m == frozenset({3}) for m in missed[dropped_at:])
            await mesh.flush()
            for end in ends.values():
                await end.aclose()
            nursery.cancel_scope.cancel()
        assert got[1] == got[2] == payloads  # everything, in order


async def test_a_frame_stuck_past_the_send_timeout_drops_its_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(100):
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, MeshConfig(send_timeout=30))
        async with trio.open_nursery() as nursery:
            ends = await attached_peers(nursery, mesh, (1, 2))
            start = trio.current_time()
            mesh.send(2, b"the pipe holds this one")
            mesh.send(2, b"nobody reads this one")
            mesh.send(1, b"one")
            assert await ends[1].receive() == b"one"
            lost = await mesh.receive()
            assert isinstance(lost, PeerLost) and lost.seat == 2
            assert "stopped reading" in lost.reason
            assert trio.current_time() - start == pytest.approx(30)
            with pytest.raises(ConnectionClosed):
                mesh.send(2, b"too late")
            mesh.send(1, b"two")  # the other connection never noticed
            assert await ends[1].receive() == b"two"
            nursery.cancel_scope.cancel()


async def test_flush_waits_until_the_queued_frames_have_left() -> None:
    with trio.fail_after(10):
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER)
        async with trio.open_nursery() as nursery:
            (end,) = (await attached_peers(nursery, mesh, (1,))).values()
            flushed = trio.Event()
            for i in range(3):
                mesh.send(1, b"frame %d" % i)

            async def flush() -> None:
                await mesh.flush()
                flushed.set()

            nursery.start_soon(flush)
            await trio.testing.wait_all_tasks_blocked()
            assert not flushed.is_set() and mesh.backlog(1) > 0
            assert [await end.receive() for _ in range(3)] == [b"frame 0", b"frame 1", b"frame 2"]
            await flushed.wait()
            assert mesh.backlog(1) == 0
            nursery.cancel_scope.cancel()


async def test_an_oversized_payload_is_the_callers_error_and_a_small_queue_is_refused() -> None:
    mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, MeshConfig(max_frame=100))
    with pytest.raises(LocalProtocolError):
        mesh.send(1, bytes(101))
    with pytest.raises(LocalProtocolError):
        Mesh(PLAYERS[0], TABLE, 0, ROSTER, MeshConfig(max_frame=100, send_queue_bytes=100))


# ------------------------------------------------------------------ before the handshake


@asynccontextmanager
async def serving_mesh(
    config: MeshConfig | None = None,
) -> AsyncIterator[tuple[Mesh, trio.SocketListener]]:
    """Seat 0's mesh accepting on a loopback listener, for the block."""
    (listener,) = await open_listeners(1)
    mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER, config)
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.serve, [listener])
        yield mesh, listener
        nursery.cancel_scope.cancel()


def test_a_hello_and_its_proof_fit_the_handshake_cap() -> None:
    us = Handshake(PLAYERS[0], TABLE, 0, ROSTER, peer_seat=None)
    them = Handshake(PLAYERS[3], TABLE, 3, ROSTER, peer_seat=0)
    assert len(them.hello()) <= MAX_HELLO_FRAME
    assert len(us.receive_hello(them.hello())) <= MAX_HELLO_FRAME


def test_the_first_frames_are_capped_one_by_one() -> None:
    # An oversized announcement among the first frames is refused from its header alone.
    decoder = FrameDecoder(DEFAULT_MAX_FRAME, opening=HELLO_FRAMES)
    with pytest.raises(FrameTooLarge) as info:
        decoder.feed((1 << 20).to_bytes(4, "big") + bytes(1000))
    assert info.value.limit == MAX_HELLO_FRAME and decoder.buffered == 0
    # A hello, a proof and a large frame after them, in one read: all three come through.
    decoder = FrameDecoder(DEFAULT_MAX_FRAME, opening=HELLO_FRAMES)
    big = bytes(50_000)
    assert decoder.feed(frame(b"h" * 120) + frame(b"p" * 88) + frame(big)) == [
        b"h" * 120,
        b"p" * 88,
        big,
    ]


async def test_a_stranger_announcing_a_big_frame_is_refused_before_the_handshake(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(10), caplog.at_level(logging.WARNING):
        async with serving_mesh() as (mesh, listener):
            async with await trio.testing.open_stream_to_socket_listener(listener) as s:
                await s.send_all((1 << 20).to_bytes(4, "big") + bytes(4096))
                with suppress(trio.BrokenResourceError):
                    while await s.receive_some():  # our hello, then the end
                        pass
            assert mesh.peers == frozenset()
        assert f"exceeds the limit of {MAX_HELLO_FRAME}" in caplog.text


async def test_past_the_cap_of_strangers_new_connections_close_and_an_honest_peer_gets_in() -> None:
    """Three silent strangers hold every place of a mesh capped at three; a fourth is closed
    at once (counted); the honest seat, dialling with its usual retries, gets in once the
    strangers' handshake deadline has passed."""
    config = MeshConfig(max_unproven=3, handshake_timeout=0.5, dial_backoff=0.05)
    with trio.fail_after(20):
        async with serving_mesh(config) as (mesh, listener):
            strangers = [
                await trio.testing.open_stream_to_socket_listener(listener) for _ in range(3)
            ]
            while mesh.gate.unproven < 3:
                await trio.sleep(0.01)
            extra = await trio.testing.open_stream_to_socket_listener(listener)
            assert await extra.receive_some() == b""  # closed unserved: not even a hello
            assert mesh.gate.turned_away == 1
            honest = Mesh(PLAYERS[1], TABLE, 1, ROSTER, config)
            async with trio.open_nursery() as dialler:
                dialler.start_soon(partial(honest._dial, 0, address_of(listener)))
                assert await mesh.receive() == PeerConnected(1, reconnected=False)
                dialler.cancel_scope.cancel()
            assert mesh.gate.turned_away >= 1
            for s in [*strangers, extra]:
                await s.aclose()


# ------------------------------------------------------------------ a relay that fails


@pytest.mark.parametrize("failure", ["down", "full", "hangs up", "silent"])
async def test_a_relayed_link_is_retried_until_the_relay_serves(
    failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither seat of a two-handed table listens: their one link goes through the relay,
    which first fails them (it is down; it is full; it hangs up; it never answers), twice
    for each seat, then serves. A failure is said once, not at every try; nothing leaves
    ``Mesh.run``; the mesh opens once the relay is back."""
    rules = RULE_SETS["two-handed"]
    seats = tuple(Seat(f"p{s}", PLAYERS[s].public_key_bytes, "") for s in range(2))
    definition = TableDefinition(TABLE, rules, seats)
    proposal = definition.propose(PLAYERS[0])
    front = (await open_listeners(1))[0]
    address = address_of(front)
    if failure == "down":
        await front.aclose()  # nobody listens there until the relay comes back
    relay = RelayService()
    full = RelayService(RelayLimits(max_connections=0))
    failed = [0, 0]
    failed_enough = trio.Event()
    served = 0

    def fallback(seat: int) -> Fallback:
        async def open_link(peer: int) -> Link:
            try:
                return await open_relay_link(
                    address, PLAYERS[seat], definition, proposal, seat, peer, connect_timeout=0.2
                )
            except Exception:
                failed[seat] += 1
                if min(failed) >= 2:
                    failed_enough.set()
                raise

        return open_link

    async def relay_front(stream: trio.abc.Stream, ticket: Ticket) -> None:
        nonlocal served
        if not failed_enough.is_set():
            if failure == "full":
                await full.handle(stream)
            elif failure == "silent":
                await trio.sleep_forever()
            await stream.aclose()  # hangs up
            return
        served += 1
        await relay.handle(stream, ticket=ticket)

    config = MeshConfig(dial_backoff=0.01, relay_retry=0.05, handshake_timeout=5)
    meshes = [Mesh(PLAYERS[s], TABLE, s, definition.roster, config) for s in range(2)]
    with trio.fail_after(30), caplog.at_level(logging.WARNING):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(relay.run_clock)
            if failure != "down":
                nursery.start_soon(serve_listeners, [front], relay_front, Gate("front"))
            async with trio.open_nursery() as peers:
                for s in range(2):
                    peers.start_soon(partial(meshes[s].run, {}, listeners=[], fallback=fallback(s)))
                await failed_enough.wait()
                if failure == "down":
                    listener = (await trio.open_tcp_listeners(address[1], host=address[0]))[0]
                    nursery.start_soon(serve_listeners, [listener], relay_front, Gate("front"))
                while not all(m.peers for m in meshes):
                    await meshes[0].receive()
                relayed = [m.relayed for m in meshes]
                peers.cancel_scope.cancel()
            nursery.cancel_scope.cancel()
    assert served >= 2 and min(failed) >= 2
    assert relayed == [frozenset({1}), frozenset({0})]
    # One line per change of state, not per try: a failure like the last is not said again.
    said = [
        r.getMessage().split("; ")[0]
        for r in caplog.records
        if "waiting for seat 0" in r.getMessage()
    ]
    assert said and all(a != b for a, b in itertools.pairwise(said)), said
    assert "Traceback" not in caplog.text
