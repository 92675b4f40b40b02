"""The one accept loop: a failing accept only delays accepting, a failing handler closes its
own connection, and the unproven connections are capped; then every listener of the package
(mesh, relay, lobby, the host's port) under arbitrary bytes, early closes and slow reads,
with an honest handshake after."""

from __future__ import annotations

import errno
import logging
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from helpers import PLAYERS, ROSTER, TABLE, address_of, identities, open_listeners
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.lobby import JoinRequest, Lobby, host_lobby, join_table
from belote_p2p.net.relay import HostPort, RelayService, open_relay_link
from belote_p2p.net.serve import Gate, Ticket, accept_loop, peer_source, serve_listeners
from belote_p2p.net.transport import FramedStream, Mesh, handshake
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import encode, frame


class FlakyListener(trio.abc.Listener[trio.abc.Stream]):
    """A listener whose accepts fail with ``errors`` (errno values) first, then hand out
    the given streams, then wait forever."""

    def __init__(self, errors: list[int], streams: list[trio.abc.Stream]) -> None:
        self.errors = errors
        self.streams = streams
        self.calls = 0

    async def accept(self) -> trio.abc.Stream:
        self.calls += 1
        await trio.lowlevel.checkpoint()
        if self.errors:
            code = self.errors.pop(0)
            raise OSError(code, "the test's accept failure")
        if self.streams:
            return self.streams.pop(0)
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


async def test_out_of_descriptors_only_delays_accepting(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    ours, theirs = trio.testing.memory_stream_pair()
    listener = FlakyListener([errno.EMFILE, errno.EMFILE, errno.ENFILE, errno.ENOBUFS], [ours])
    accepted: list[trio.abc.Stream] = []
    got = trio.Event()

    async def handler(stream: trio.abc.Stream, ticket: Ticket) -> None:
        accepted.append(stream)
        got.set()

    gate = Gate("test", backoff=0.1, max_backoff=0.4)
    with trio.fail_after(10), caplog.at_level(logging.WARNING):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_listeners, [listener], handler, gate)
            await got.wait()
            nursery.cancel_scope.cancel()
    assert accepted == [ours]
    assert gate.accept_errors == 4 and listener.calls == 6  # the sixth waits
    # Said once for the whole run of failures (and once when accepting again).
    assert caplog.text.count("cannot accept a connection (out of descriptors") == 1
    assert "accepting again" in caplog.text
    # The backoff grew: 0.1 + 0.2 + 0.4 + 0.4 seconds of (virtual) sleep.
    assert trio.current_time() == pytest.approx(1.1)
    del theirs


async def test_a_handler_that_raises_closes_its_connection_only() -> None:
    pairs = [trio.testing.memory_stream_pair() for _ in range(3)]
    listener = FlakyListener([], [ours for ours, _ in pairs])
    served: list[int] = []
    done = trio.Event()

    async def handler(stream: trio.abc.Stream, ticket: Ticket) -> None:
        served.append(len(served))
        if len(served) == 2:
            raise ValueError("a bug, or bad luck, of one connection")
        if len(served) == 3:
            done.set()

    gate = Gate("test")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_listeners, [listener], handler, gate)
            await done.wait()
            nursery.cancel_scope.cancel()
    assert served == [0, 1, 2]
    assert gate.failed == 1 and gate.unproven == 0
    # The failed connection was closed: its peer reads the end of the stream.
    with trio.fail_after(10):
        assert await pairs[1][1].receive_some() == b""


async def test_past_the_cap_new_connections_are_closed_at_once() -> None:
    pairs = [trio.testing.memory_stream_pair() for _ in range(4)]
    listener = FlakyListener([], [ours for ours, _ in pairs[:3]])
    holding: list[Ticket] = []
    running = trio.Event()

    async def handler(stream: trio.abc.Stream, ticket: Ticket) -> None:
        holding.append(ticket)
        if len(holding) == 2:
            running.set()
        await trio.sleep_forever()

    gate = Gate("test", limit=2)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(accept_loop, listener, handler, nursery, gate)
            await running.wait()
            # The third is closed at once, unserved.
            assert await pairs[2][1].receive_some() == b""
            assert gate.turned_away == 1 and gate.unproven == 2
            # One proves itself: there is room again.
            holding[0].release()
            holding[0].release()  # idempotent
            assert gate.unproven == 1
            listener.streams.append(pairs[3][0])
            while len(holding) < 3:
                await trio.sleep(0.01)
            assert gate.unproven == 2 and gate.turned_away == 1
            nursery.cancel_scope.cancel()


def test_a_gate_bounds_the_strangers_of_one_source() -> None:
    """The host's port: one address cannot take every place that others must reach."""
    gate = Gate("test", limit=4, per_source=2)
    mine = [gate.enter("198.51.100.7") for _ in range(3)]
    assert mine[2] is None and gate.turned_away == 1
    other = gate.enter("2001:db8::/64")
    assert other is not None and gate.unproven == 3
    ticket = mine[0]
    assert ticket is not None
    ticket.release()
    assert gate.enter("198.51.100.7") is not None  # its place came back
    assert gate.enter(None) is not None  # a fourth, of no known source
    assert gate.enter("203.0.113.9") is None and gate.unproven == 4  # the whole gate is full


async def test_a_connection_counts_against_its_peer_address() -> None:
    listener = (await open_listeners(1))[0]
    host, port = address_of(listener)
    with trio.fail_after(10):
        client = await trio.open_tcp_stream(host, port)
        server = await listener.accept()
        assert peer_source(server) == "127.0.0.1"
        assert peer_source(trio.testing.memory_stream_pair()[0]) is None
        await client.aclose()
        await server.aclose()
        await listener.aclose()


# -- every listener of the package under garbage ------------------------------------------

TWO_HANDED = RULE_SETS["two-handed"]


def relay_table() -> tuple[TableDefinition, bytes, list[Any]]:
    ids = identities(41, 2)
    seats = tuple(Seat(f"p{s}", ids[s].public_key_bytes, "") for s in range(2))
    definition = TableDefinition(TABLE, TWO_HANDED, seats)
    return definition, definition.propose(ids[0]), ids


async def honest_mesh_handshake(address: tuple[str, int]) -> None:
    """Seat 1 of the mesh tests' table dials seat 0 and passes the handshake."""
    stream = await trio.open_tcp_stream(*address)
    async with FramedStream(stream) as conn:
        assert await handshake(conn, PLAYERS[1], TABLE, 1, ROSTER, peer_seat=0) == 0


async def honest_relay_pair(address: tuple[str, int]) -> None:
    """Two seats of a signed table are paired by the relay."""
    definition, proposal, ids = relay_table()
    links: list[Any] = []

    async def side(seat: int) -> None:
        links.append(
            await open_relay_link(address, ids[seat], definition, proposal, seat, 1 - seat)
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(side, 0)
        nursery.start_soon(side, 1)
    for link in links:
        await link.aclose()


Attack = tuple[bytes, bool, bool]
"""What one hostile connection does: the bytes it sends, whether it hangs up at once after
them, whether it then reads slowly (one byte at a time) instead of at all."""

attacks = st.lists(
    st.tuples(
        st.one_of(
            st.binary(max_size=300),
            st.sampled_from(
                [
                    (1 << 20).to_bytes(4, "big"),  # announces a 1 MiB frame
                    (200).to_bytes(4, "big") + b"x" * 100,  # a hello cut short
                    frame(encode({"type": "hello"})),  # a port's "hello", and no more
                    frame(encode({"type": "hello"})) + (1 << 20).to_bytes(4, "big"),
                    b"\x00\x00\x00\x05garbage!",
                ]
            ),
        ),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=6,
)


async def attack(address: tuple[str, int], what: Attack) -> None:
    data, hang_up, slow = what
    try:
        stream = await trio.open_tcp_stream(*address)
    except OSError:
        return
    async with stream:
        try:
            await stream.send_all(data)
            if hang_up:
                return
            with trio.move_on_after(0.05):
                while await stream.receive_some(1 if slow else 1 << 16):
                    if slow:
                        await trio.sleep(0.001)
        except trio.BrokenResourceError:
            pass


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(attacks)
async def test_every_listener_outlives_garbage_and_still_serves(what: list[Attack]) -> None:
    """The mesh's port, the relay's, the lobby's and the host's one port each take the
    attacks, then an honest peer: each listener's task is still running and serves it."""
    with trio.fail_after(30):
        mesh_l, relay_l, lobby_l, host_l = await open_listeners(4)
        addresses = [address_of(x) for x in (mesh_l, relay_l, lobby_l, host_l)]
        mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER)
        host_mesh = Mesh(PLAYERS[0], TABLE, 0, ROSTER)
        host_port = HostPort()
        host_port.set_mesh(host_mesh.incoming)
        ids = identities(42, 2)
        lobby = Lobby(JoinRequest("host", ids[0].public_key_bytes, 0), TWO_HANDED)
        async with trio.open_nursery() as nursery:
            await nursery.start(mesh.serve, [mesh_l])
            await nursery.start(RelayService().serve, [relay_l])
            await nursery.start(host_port.serve, [host_l])
            nursery.start_soon(partial(host_mesh.run, {}, listeners=[]))

            nursery.start_soon(partial(host_lobby, lobby, [lobby_l], ids[0], wait=30))
            async with trio.open_nursery() as attackers:
                for address in addresses:
                    for one in what:
                        attackers.start_soon(attack, address, one)
            await honest_mesh_handshake(addresses[0])
            await honest_relay_pair(addresses[1])
            await honest_relay_pair(addresses[3])  # the host's port is a relay too
            await honest_mesh_handshake(addresses[3])  # and the host's mesh
            answer = await join_table(*addresses[2], "joiner", ids[1], 0)
            assert answer.seat == 1 and answer.definition.seats[1].name == "joiner"
            nursery.cancel_scope.cancel()
