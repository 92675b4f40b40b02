"""The relay's protocol and bookkeeping, sans-io: no socket, no clock but the one passed in."""

from __future__ import annotations

import pytest
from helpers import identities

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.rules import rule_set
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import (
    Action,
    Close,
    RelayError,
    RelayLimits,
    RelayPhase,
    RelayServer,
    Send,
    check_paired,
    hello_message,
    join_message,
)
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import FrameDecoder, decode, encode, frame

IDS = identities(21, 5)


def table(table_id: bytes = b"T" * 16, ids: list[Identity] = IDS) -> TableDefinition:
    seats = tuple(Seat(f"p{i}", ids[i].public_key_bytes, "") for i in range(4))
    return TableDefinition(table_id, rule_set("classic"), seats)


class Client:
    """One connection to a :class:`RelayServer`, speaking the client's side by hand."""

    numbers = iter(range(1, 10_000))

    def __init__(self, server: RelayServer, now: float = 0.0) -> None:
        self.server = server
        self.number = next(Client.numbers)
        self.inbox: list[bytes] = []
        self.closed: str | None = None
        self._decoder = FrameDecoder()
        self.take(server.connected(self.number, now))

    def take(self, actions: list[Action]) -> list[Action]:
        """Keep what the actions do to this connection; return them all."""
        for a in actions:
            if a.conn != self.number:
                continue
            if isinstance(a, Send):
                self.inbox += self._decoder.feed(a.data)
            else:
                self.closed = a.reason
        return actions

    def send(self, payload: bytes, now: float = 0.0) -> list[Action]:
        return self.take(self.server.data_received(self.number, frame(payload), now))

    def join(
        self,
        seat: int,
        peer: int,
        definition: TableDefinition | None = None,
        *,
        identity: Identity | None = None,
        proposal: bytes | None = None,
        now: float = 0.0,
    ) -> list[Action]:
        definition = definition or table()
        self.send(hello_message(), now)
        challenge = self.inbox.pop()
        proposal = definition.propose(IDS[0]) if proposal is None else proposal
        if identity is None:
            identity = next(i for i in IDS if i.public_key_bytes == definition.seats[seat].key)
        if identity.public_key_bytes != definition.seats[seat].key:
            # An impostor signs with its own key: build the join by hand.
            message = decode(join_message(challenge, _holder(definition, seat), definition,
                                          proposal, seat, peer))  # fmt: skip
            message["sig"] = identity.sign(b"anything")
            return self.send(encode(message), now)
        return self.send(join_message(challenge, identity, definition, proposal, seat, peer), now)

    def error(self) -> str:
        msg = decode(self.inbox[-1])
        assert msg["type"] == "relay-error", msg
        reason: str = msg["reason"]
        return reason


def _holder(definition: TableDefinition, seat: int) -> Identity:
    return next(i for i in IDS if i.public_key_bytes == definition.seats[seat].key)


def pair(server: RelayServer, a: int = 1, b: int = 3, **kw: object) -> tuple[Client, Client]:
    x, y = Client(server), Client(server)
    x.join(a, b, **kw)  # type: ignore[arg-type]
    assert server.phase(x.number) is RelayPhase.WAITING and not x.inbox
    actions = y.join(b, a, **kw)  # type: ignore[arg-type]
    x.take(actions)
    assert x.inbox == [encode({"type": "relay-paired"})]
    assert y.inbox == [encode({"type": "relay-paired"})]
    x.inbox.clear()
    y.inbox.clear()
    return x, y


def test_two_seats_are_paired_and_frames_cross_unchanged() -> None:
    server = RelayServer()
    x, y = pair(server)
    y.take(x.send(b"any bytes at all"))
    x.take(y.send(b"\x00" * 1000))
    assert y.inbox == [b"any bytes at all"] and x.inbox == [b"\x00" * 1000]
    assert server.stats.paired == 1 and server.stats.forwarded_frames == 2
    assert server.stats.forwarded_bytes == 4 + 16 + 4 + 1000
    # Either side leaving closes the other.
    actions = server.closed(x.number)
    assert Close(y.number, "seat 1's side of the pair closed") in actions
    assert server.connections == 0 and server.tables == 0


def test_the_client_side_reads_challenges_and_answers() -> None:
    with pytest.raises(RelayError, match="refused us: 'full'"):
        join_message(encode({"type": "relay-error", "reason": "full"}), IDS[1], table(),
                     b"", 1, 2)  # fmt: skip
    with pytest.raises(RelayError, match="challenge"):
        join_message(encode({"type": "relay-challenge"}), IDS[1], table(), b"", 1, 2)
    with pytest.raises(RelayError, match="msgpack"):
        join_message(b"\xc1", IDS[1], table(), b"", 1, 2)
    good = encode({"type": "relay-challenge", "version": 1, "nonce": bytes(32)})
    with pytest.raises(LocalProtocolError):
        join_message(good, IDS[2], table(), b"", 1, 2)
    check_paired(encode({"type": "relay-paired"}))
    with pytest.raises(RelayError, match="refused us: nope"):
        check_paired(encode({"type": "relay-error", "reason": "nope"}))
    with pytest.raises(RelayError):
        check_paired(encode({"type": "hello"}))
    assert issubclass(RelayError, RemoteProtocolError)


@pytest.mark.parametrize(
    "payload",
    [b"\xc1garbage", encode([1, 2]), encode({"type": "relay-join"}), encode({"type": "hello"})],
)
def test_garbage_before_the_join_costs_the_sender_its_connection(payload: bytes) -> None:
    server = RelayServer()
    x, y = pair(server)  # another table's pair, already forwarding
    bad = Client(server)
    bad.send(payload)
    assert bad.closed is not None and server.phase(bad.number) is None
    assert server.phase(x.number) is server.phase(y.number) is RelayPhase.PAIRED
    assert server.stats.refused == {"not the relay protocol": 1}


def test_a_join_without_the_seats_key_is_refused() -> None:
    server = RelayServer()
    impostor = Identity.from_seed(b"\x77" * 32)
    c = Client(server)
    c.join(2, 1, identity=impostor)
    assert "not signed by seat 2's key" in c.error() and c.closed is not None
    assert server.stats.refused == {"no key for the seat": 1} and server.tables == 0


def test_a_table_not_signed_by_its_host_is_refused() -> None:
    server = RelayServer()
    c = Client(server)
    c.join(2, 1, proposal=IDS[1].sign(b"not the proposal"))
    assert "host's signature" in c.error() and server.tables == 0
    # A table whose host is someone else entirely: the proposal signs another digest.
    other = table(ids=[IDS[4], *IDS[1:4]])
    c = Client(server)
    c.join(2, 1, other, proposal=table().propose(IDS[0]))
    assert "host's signature" in c.error()
    assert server.stats.refused == {"bad table": 2}


def test_a_replayed_join_does_not_open_another_connection() -> None:
    """The join signs the relay's nonce: recorded on one connection, it is worthless on
    the next one."""
    server = RelayServer()
    first = Client(server)
    first.send(hello_message())
    challenge = first.inbox.pop()
    definition = table()
    join = join_message(challenge, IDS[1], definition, definition.propose(IDS[0]), 1, 2)
    first.send(join)
    assert server.phase(first.number) is RelayPhase.WAITING
    replay = Client(server)
    replay.send(hello_message())
    replay.send(join)
    assert "not signed by seat 1's key" in replay.error()


def test_two_tables_do_not_mix_and_a_flood_cuts_only_its_sender() -> None:
    limits = RelayLimits(rate=1000, burst=5000)
    server = RelayServer(limits)
    x, y = pair(server)
    other = table(b"U" * 16)
    u, v = pair(server, 0, 2, definition=other)
    assert server.tables == 2
    # Within the burst, then the rate: fine.
    y.take(x.send(bytes(4000), now=0.0))
    y.take(x.send(bytes(900), now=1.0))
    assert len(y.inbox) == 2
    # A flood: past the bucket, the sender and its partner are cut; the other table goes on.
    actions = x.send(bytes(8000), now=1.5)
    y.take(actions)
    assert x.closed == "over the byte rate" and y.closed is not None
    assert server.stats.refused["over the byte rate"] == 1
    assert server.stats.dropped_frames == 1
    v.take(u.send(b"still here", now=2.0))
    assert v.inbox == [b"still here"]


def test_a_frame_over_the_cap_is_refused_before_its_payload() -> None:
    server = RelayServer(RelayLimits(max_frame=100))
    x, y = pair(server)
    actions = server.data_received(x.number, (101).to_bytes(4, "big"), 0.0)
    x.take(actions)
    y.take(actions)
    assert x.closed is not None and y.closed is not None
    assert server.stats.refused == {"frame too large": 1}
    # Before the join the cap is the control frame's (16 KiB).
    c = Client(server)
    c.take(server.data_received(c.number, (1 << 20).to_bytes(4, "big"), 0.0))
    assert c.closed is not None


def test_caps_on_connections_tables_and_connections_per_table() -> None:
    server = RelayServer(RelayLimits(max_connections=3, max_tables=1, max_per_table=2))
    a, b, c = Client(server), Client(server), Client(server)
    d = Client(server)
    assert d.closed == "the relay is full"
    a.join(1, 2)
    b.join(1, 3)
    c.join(2, 3)
    assert "too many connections for this table" in c.error()
    e = Client(server)
    e.join(0, 1, table(b"V" * 16))
    assert "too many tables" in e.error()
    assert server.stats.refused == {
        "too many connections": 1,
        "too many connections for the table": 1,
        "too many tables": 1,
    }


def test_deadlines_for_the_join_and_for_the_peer() -> None:
    server = RelayServer(RelayLimits(join_timeout=10, pair_timeout=60))
    silent = Client(server, now=0.0)
    waiting = Client(server, now=0.0)
    waiting.join(1, 2, now=1.0)
    assert server.next_deadline() == 10.0
    assert server.tick(9.0) == []
    silent.take(server.tick(10.0))
    assert silent.closed == "no join in time" and waiting.closed is None
    assert server.next_deadline() == 61.0
    waiting.take(server.tick(61.0))
    assert waiting.closed == "seat 2 did not come in time"
    assert server.next_deadline() is None and server.tables == 0


def test_a_new_connection_of_a_seat_replaces_its_old_one() -> None:
    server = RelayServer()
    x, y = pair(server)
    x2 = Client(server)
    actions = x2.join(1, 3)
    x.take(actions)
    y.take(actions)
    assert x.closed == "replaced by a newer connection"
    assert y.closed is not None  # its pair is gone: the seat's client opens a new link
    y2 = Client(server)
    x2.take(y2.join(3, 1))
    assert x2.inbox == [encode({"type": "relay-paired"})]
    assert server.stats.paired == 2


def test_a_frame_before_the_pairing_is_refused() -> None:
    server = RelayServer()
    c = Client(server)
    c.join(1, 2)
    c.send(b"too early")
    assert c.closed is not None


def test_stats_are_plain_data() -> None:
    server = RelayServer()
    pair(server)
    stats = server.stats.to_dict()
    assert stats["paired"] == 1 and stats["connections"] == 2 and stats["refused"] == {}
