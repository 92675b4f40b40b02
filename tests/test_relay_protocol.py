"""The relay's protocol and bookkeeping, sans-io: no socket, no clock but the one passed in."""

from __future__ import annotations

import pytest
from helpers import RelayClient, identities
from hypothesis import given, settings
from hypothesis import strategies as st

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.rules import rule_set
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import (
    PAIRED,
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
    join_statement,
    source_of,
    watch_key,
    watch_message,
)
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import decode, encode

IDS = identities(21, 5)


def table(
    table_id: bytes = b"T" * 16, ids: list[Identity] = IDS, variant: str = "classic"
) -> TableDefinition:
    rules = rule_set(variant)
    seats = tuple(Seat(f"p{i}", ids[i].public_key_bytes, "") for i in range(rules.seats))
    return TableDefinition(table_id, rules, seats)


class Client(RelayClient):
    """One connection to a :class:`RelayServer`, joining tables of :data:`IDS`."""

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


def _holder(definition: TableDefinition, seat: int) -> Identity:
    return next(i for i in IDS if i.public_key_bytes == definition.seats[seat].key)


def pair(
    server: RelayServer, a: int = 1, b: int = 3, *, source: str = "", **kw: object
) -> tuple[Client, Client]:
    now = kw.get("now", 0.0)
    assert isinstance(now, float)
    x, y = Client(server, now, source), Client(server, now, source)
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
    server = RelayServer(RelayLimits(max_connections=4, max_tables=1, max_per_table=2))
    x, y = pair(server)
    a, b = Client(server), Client(server)
    d = Client(server)
    assert d.closed == "the relay is full"  # one source: nobody holds more than it
    a.join(0, 1)
    assert "too many connections for this table" in a.error()
    b.join(0, 1, table(b"V" * 16))
    assert "too many tables" in b.error()  # the only table paired: nothing to evict
    assert server.stats.refused == {
        "too many connections": 1,
        "too many connections for the table": 1,
        "too many tables": 1,
    }
    assert server.phase(x.number) is server.phase(y.number) is RelayPhase.PAIRED


def test_deadlines_for_the_join_and_for_the_peer() -> None:
    server = RelayServer(RelayLimits(join_timeout=10, pair_timeout=30, wait_timeout=60))
    silent = Client(server, now=0.0)
    waiting = Client(server, now=0.0)
    waiting.join(1, 2, now=1.0)
    assert server.next_deadline() == 10.0
    assert server.tick(9.0) == []
    silent.take(server.tick(10.0))
    assert silent.closed == "no join in time" and waiting.closed is None
    # The table never paired: its slot lasts 30 s from its first join.
    assert server.next_deadline() == 31.0
    waiting.take(server.tick(31.0))
    assert waiting.closed == "seat 2 did not come in time"
    assert server.next_deadline() is None and server.tables == 0
    # A table that paired: a new connection of it waits for its peer 60 s.
    x, _ = pair(server, now=40.0)
    later = Client(server, now=50.0)
    later.join(1, 2, now=50.0)
    assert server.next_deadline() == 110.0
    later.take(server.tick(109.0))
    assert later.closed is None
    later.take(server.tick(110.0))
    assert later.closed == "seat 2 did not come in time"
    assert server.phase(x.number) is RelayPhase.PAIRED


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


# -- item 1: a join is checked against its own table, and costs only its connection --------


def _raw_join(c: Client, of: TableDefinition, **fields: object) -> dict[str, object]:
    """A well-formed join of seat 1 for seat 0 on ``c``'s challenge, with ``fields``
    replaced (signed over the replaced seats when both are ints)."""
    c.send(hello_message())
    nonce = decode(c.inbox.pop())["nonce"]
    msg: dict[str, object] = {
        "type": "relay-join", "definition": of.to_wire(),
        "proposal": of.propose(IDS[0]), "seat": 1, "peer": 0,
    }  # fmt: skip
    msg.update({k: v for k, v in fields.items() if k != "sig"})
    seat, peer = msg["seat"], msg["peer"]
    statement = join_statement(
        nonce, of, seat if type(seat) is int else 1, peer if type(peer) is int else 0
    )
    msg["sig"] = fields.get("sig", IDS[1].sign(statement))
    return msg


TWO = table(b"2" * 16, variant="two-handed")


@pytest.mark.parametrize(
    ("fields", "cause"),
    [
        ({"seat": 3}, "not the relay protocol"),  # issue 22: an IndexError killed the relay
        ({"peer": 3}, "not the relay protocol"),
        ({"seat": 2, "peer": 3}, "not the relay protocol"),
        ({"seat": -1}, "not the relay protocol"),
        ({"seat": 1, "peer": 1}, "not the relay protocol"),
        ({"seat": True}, "not the relay protocol"),
        ({"seat": "1"}, "not the relay protocol"),
        ({"peer": None}, "not the relay protocol"),
        ({"seat": 2**64 - 1}, "not the relay protocol"),
        ({"definition": {"version": 1}}, "bad table"),
        ({"definition": [1, 2]}, "bad table"),
        ({"definition": table().to_wire()}, "bad table"),  # a proposal for another table
        ({"proposal": b"short"}, "bad table"),
        ({"proposal": 7}, "bad table"),
        ({"sig": b"\x00" * 64}, "no key for the seat"),
        ({"sig": b"short"}, "no key for the seat"),
        ({"sig": [1]}, "no key for the seat"),
        ({"type": "relay-joined"}, "not the relay protocol"),
    ],
)
def test_a_malformed_join_costs_only_its_connection(fields: dict[str, object], cause: str) -> None:
    server = RelayServer()
    x, y = pair(server, 0, 1, definition=TWO)  # an honest two-seat table, forwarding
    c = Client(server)
    c.send(encode(_raw_join(c, TWO, **fields)))
    assert c.closed is not None and decode(c.inbox[-1])["type"] == "relay-error"
    assert server.stats.refused == {cause: 1} and server.tables == 1
    y.take(x.send(b"still forwarding"))
    assert y.inbox == [b"still forwarding"]
    # And another honest table still pairs.
    pair(server, 0, 2, definition=table(b"W" * 16))
    assert server.tables == 2


def test_a_seat_beyond_a_two_seat_table_is_refused_with_the_tables_count() -> None:
    server = RelayServer()
    c = Client(server)
    c.send(encode(_raw_join(c, TWO, seat=3)))
    assert "two different seats 0..1" in c.error()


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.binary(max_size=70), st.text(max_size=8), st.lists(st.integers(0, 5), max_size=4),
    st.dictionaries(st.sampled_from(["version", "table_id", "rules", "seats"]),
                    st.integers(0, 2), max_size=4),
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    field=st.sampled_from(["type", "definition", "proposal", "seat", "peer", "sig", "extra"]),
    value=_VALUES,
)
def test_any_value_in_any_join_field_is_a_typed_refusal(field: str, value: object) -> None:
    server = RelayServer()
    c = Client(server)
    msg = _raw_join(c, TWO)
    msg[field] = value
    actions = c.send(encode(msg))
    assert all(isinstance(a, Send | Close) for a in actions)
    if server.phase(c.number) is None:
        assert decode(c.inbox[-1])["type"] == "relay-error"
    else:  # only a value that happens to be the right one (seat 1, say) is let through
        assert server.phase(c.number) is RelayPhase.WAITING


# -- item 9: floods from one address, self-made tables ---------------------------------------


def test_one_address_cannot_fill_the_relay() -> None:
    server = RelayServer(RelayLimits(max_connections=100, max_per_source=5))
    flood = [Client(server, source="203.0.113.9") for _ in range(8)]
    assert [c.closed for c in flood].count("too many connections from this address") == 3
    assert server.stats.refused == {"too many connections from one address": 3}
    x, _ = pair(server, source="198.51.100.1")
    assert server.phase(x.number) is RelayPhase.PAIRED


def test_a_full_relay_evicts_the_biggest_sources_idle_connections_first() -> None:
    server = RelayServer(RelayLimits(max_connections=10, max_per_source=8))
    flood = [Client(server, now=float(k), source="203.0.113.9") for k in range(8)]
    x, _ = pair(server, source="198.51.100.1")
    assert server.connections == 10
    # Two newcomers from elsewhere take the places of the flood's oldest bare connections.
    u, v = Client(server, 9.0, "192.0.2.7"), Client(server, 9.0, "192.0.2.7")
    assert [c.number for c in flood if server.phase(c.number) is None] == [
        flood[0].number, flood[1].number,
    ]  # fmt: skip
    assert all(server.phase(c.number) is RelayPhase.HELLO for c in flood[2:])
    u.join(0, 2, table(b"U" * 16))
    v.take(u.take(v.join(2, 0, table(b"U" * 16))))
    assert server.phase(u.number) is server.phase(v.number) is RelayPhase.PAIRED
    assert server.phase(x.number) is RelayPhase.PAIRED
    assert server.stats.refused == {"evicted": 2}
    # Paired connections are never evicted: once only they are left, a newcomer is refused.
    small = RelayServer(RelayLimits(max_connections=2))
    pair(small)
    assert Client(small, source="192.0.2.7").closed == "the relay is full"


def test_one_address_holds_few_tables_and_unpaired_slots_go_first() -> None:
    limits = RelayLimits(max_tables=3, max_tables_per_source=2, pair_timeout=30)
    server = RelayServer(limits)
    cheater = "203.0.113.9"
    fakes = [Client(server, now=float(k), source=cheater) for k in range(3)]
    fakes[0].join(1, 2, table(b"A" * 16), now=0.0)
    pair(server, 0, 1, definition=table(b"B" * 16), source=cheater, now=1.0)
    fakes[2].join(1, 2, table(b"C" * 16), now=2.0)
    assert "too many tables" in fakes[2].error()
    assert server.stats.refused == {"too many tables from one address": 1}
    # Two more tables from elsewhere: the relay is full with three; the fourth takes the
    # slot of the one that never paired (A), not of the paired one (B).
    one = Client(server, now=3.0)
    one.join(1, 2, table(b"D" * 16), now=3.0)
    e = Client(server, now=4.0)
    fakes[0].take(e.join(0, 1, table(b"E" * 16), now=4.0))
    assert fakes[0].closed == "evicted: the relay is full"
    assert "evicted" in fakes[0].error()
    assert server.phase(e.number) is RelayPhase.WAITING
    assert server.tables == 3 and server.stats.refused["evicted"] == 1
    # D never pairs: its slot is freed 30 s after its first join (E's, 30 s after its own).
    one.take(server.tick(33.0))
    assert one.closed == "seat 2 did not come in time" and server.tables == 2


def test_sources_are_addresses_and_ipv6_networks() -> None:
    assert source_of("192.0.2.7") == "192.0.2.7"
    assert source_of("2001:db8:1:2:3:4:5:6") == source_of("2001:db8:1:2:ffff::1")
    assert source_of("2001:db8:1:2::1") != source_of("2001:db8:1:3::1")
    assert source_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert source_of("fe80::1%eth0") == "fe80::/64"
    assert source_of("not an address") == "not an address"


# -- item 10: the byte budget is per link -----------------------------------------------------


def test_a_flood_of_requests_costs_the_requesters_link_not_the_answerers_others() -> None:
    """Seat 3 asks seat 1 for everything, again and again; seat 1 answers (big frames).
    The link 1-3 runs out of budget and is cut; seat 1's links to the honest seats 0 and 2
    keep their whole burst."""
    limits = RelayLimits(rate=1000, burst=100_000)
    server = RelayServer(limits)
    cheat, victim = pair(server, 3, 1)
    to_0, from_0 = pair(server, 1, 0)
    to_2, from_2 = pair(server, 1, 2)
    answers = 0
    now = 0.0
    while victim.closed is None:
        now += 0.01
        victim.take(cheat.send(b"sync: everything", now=now))
        cheat.take(victim.send(bytes(20_000), now=now))
        answers += 1
    assert answers <= 6 and cheat.closed is not None
    assert server.stats.refused == {"over the byte rate": 1}
    # The honest links still carry a burst each, at once.
    from_0.take(to_0.send(bytes(90_000), now=now))
    from_2.take(to_2.send(bytes(90_000), now=now))
    assert len(from_0.inbox) == len(from_2.inbox) == 1
    # Coming back does not refill the link's budget: the cheater's link is cut again.
    cheat2, victim2 = pair(server, 3, 1, now=now)
    victim2.take(cheat2.send(bytes(20_000), now=now))
    assert cheat2.closed == "over the byte rate"


# -- watchers: a seat's feed, paired with one watcher at a time -------------------------------


def feed(server: RelayServer, seat: int, definition: TableDefinition | None = None) -> Client:
    """A watch feed of ``seat`` (its key's, the host's proposal), waiting or paired."""
    definition = definition or table()
    c = Client(server)
    c.send(hello_message())
    challenge = c.inbox.pop()
    proposal = definition.propose(IDS[0])
    c.send(join_message(challenge, _holder(definition, seat), definition, proposal, seat, None))
    return c


def watcher(
    server: RelayServer, definition: TableDefinition | None = None, *, source: str = "", **kw: bytes
) -> Client:
    """A watcher naming ``definition`` as its watch code does (``kw``: other fields)."""
    definition = definition or table()
    c = Client(server, source=source)
    prefix, host = watch_key(definition)
    c.send(watch_message(kw.get("table", prefix), kw.get("host", host)))
    return c


def test_a_watcher_is_paired_with_a_seats_feed_and_each_feed_serves_one() -> None:
    """A feed waits with no deadline; the first watcher takes it (both are told, frames
    cross both ways unchanged); a second waits until another seat's feed comes."""
    server = RelayServer()
    f2 = feed(server, 2)
    assert server.phase(f2.number) is RelayPhase.FEED and not f2.inbox
    assert server.next_deadline() is None
    assert server.tick(10_000.0) == [] and f2.closed is None
    w1 = Client(server)
    f2.take(w1.send(watch_message(*watch_key(table()))))
    assert w1.inbox == [PAIRED[4:]]
    assert f2.inbox == [PAIRED[4:]]
    f2.take(w1.send(b"the watch hello"))
    w1.take(f2.send(b"an envelope"))
    assert f2.inbox[-1] == b"the watch hello" and w1.inbox[-1] == b"an envelope"
    w2 = watcher(server)
    assert server.phase(w2.number) is RelayPhase.WATCHER and not w2.inbox
    f1 = feed(server, 1)
    assert f1.inbox == [PAIRED[4:]]
    assert server.partner(w2.number) == f1.number
    assert server.watcher_of(f1.number) == w2.number and server.watcher_of(w2.number) is None
    assert server.stats.watchers == 2 and server.stats.paired == 0
    # A watcher that goes takes its feed with it (the seat opens another), and only it.
    f2.take(server.closed(w1.number))
    assert f2.closed is not None and server.phase(f1.number) is RelayPhase.PAIRED


def test_a_watcher_naming_another_host_is_not_paired_and_waits_only_so_long() -> None:
    """The table id's prefix is not enough: the host key's digest must match too. A
    watcher no feed came for is told after the watch timeout."""
    server = RelayServer(RelayLimits(watch_timeout=30.0))
    feed(server, 1)
    stranger = watcher(server, host=b"\x00" * 16)
    assert server.phase(stranger.number) is RelayPhase.WATCHER
    assert server.next_deadline() == 30.0
    stranger.take(server.tick(29.0))
    assert stranger.closed is None
    stranger.take(server.tick(30.0))
    assert "no seat of that table offers it" in stranger.error()
    assert server.stats.refused == {"no feed in time": 1}


def test_watchers_are_capped_per_table_and_per_address() -> None:
    server = RelayServer(RelayLimits(max_watchers_per_table=3, max_watchers_per_source=2))
    mine = [watcher(server, source="203.0.113.9") for _ in range(3)]
    assert [c.closed is None for c in mine] == [True, True, False]
    assert "too many watchers" in mine[2].error()
    other = table(b"O" * 16)
    assert watcher(server, other, source="203.0.113.9").closed is not None
    more = [watcher(server, source=f"198.51.100.{i}") for i in range(2)]
    assert [c.closed is None for c in more] == [True, False]
    assert "the table has too many watchers" in more[1].error()
    assert server.stats.refused == {
        "too many watchers from one address": 2,
        "too many watchers for the table": 1,
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"table": b"short"},
        {"host": b"\x00" * 32},
        {"host": "text"},
        {"version": 2},
        {"extra": 1},
    ],
)
def test_a_malformed_watch_or_feed_costs_only_its_connection(fields: dict[str, object]) -> None:
    server = RelayServer()
    waiting = feed(server, 1)
    prefix, host = watch_key(table())
    msg: dict[str, object] = {"type": "relay-watch", "version": 1, "table": prefix, "host": host}
    c = Client(server)
    c.send(encode({**msg, **fields}))
    assert "relay-watch" in c.error() and c.closed is not None
    assert server.phase(waiting.number) is RelayPhase.FEED
    # A feed signed by another key than its seat's, and a frame before the pairing.
    impostor = Client(server)
    impostor.send(hello_message())
    challenge = impostor.inbox.pop()
    definition = table()
    bad = decode(join_message(challenge, IDS[2], definition, definition.propose(IDS[0]), 2, None))
    bad["seat"] = 3
    impostor.send(encode(bad))
    assert "not signed by seat 3" in impostor.error()
    waiting.send(b"too early")
    assert waiting.closed is not None


def test_a_newer_feed_of_a_seat_replaces_its_waiting_one() -> None:
    server = RelayServer()
    old = feed(server, 1)
    new = feed(server, 1)
    assert server.phase(old.number) is None and server.phase(new.number) is RelayPhase.FEED
    w = watcher(server)
    assert server.partner(w.number) == new.number
    assert server.tables == 1
    w.take(server.closed(new.number))
    assert w.closed is not None and server.phase(w.number) is None
    assert server.tables == 0 and server.connections == 0
