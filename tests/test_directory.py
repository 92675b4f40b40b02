"""The public directory of tables, sans-io: advertisements, their checks, and a relay's
store of them (caps, expiry, queries), through the relay's own server with no socket and
no clock but the one passed in (``PROTOCOL.md`` §12)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from helpers import RelayClient, identities
from hypothesis import given, settings
from hypothesis import strategies as st

from belote_p2p.protocol.directory import (
    AD_LABEL,
    MAX_AD_SIZE,
    AdPlayer,
    Advertisement,
    Directory,
    DirectoryError,
    DirectoryLimits,
    Query,
    SignedAd,
    advertise_message,
    parse_listed,
    parse_tables,
    withdraw_message,
)
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import RelayLimits, RelayPhase, RelayServer, hello_message
from belote_p2p.protocol.wire import decode, encode

IDS = identities(41, 40)
HOST = IDS[0]


def make_ad(
    identity: Identity = HOST,
    nonce: bytes = bytes(32),
    *,
    table: bytes = b"T" * 16,
    **changes: Any,
) -> Advertisement:
    fields: dict[str, Any] = dict(
        host_key=identity.public_key_bytes, table_id=table, nonce=nonce, seq=0, ttl=60,
        name="Alice", variant="classic", target=501, seats=4, free=3, players=(),
        langs=("fr",), level=3, addresses=("198.51.100.7:7777",), relay="198.51.100.1:7779",
    )  # fmt: skip
    fields.update(changes)
    return Advertisement(**fields)


def server(**limits: Any) -> RelayServer:
    directory = Directory(DirectoryLimits(**limits))
    return RelayServer(RelayLimits(max_connections=10_000, max_per_source=1_000),
                       directory=directory)  # fmt: skip


class Host(RelayClient):
    """A host's connection to the directory: the challenge, then its ads."""

    def __init__(self, relay: RelayServer, now: float = 0.0, source: str = "a") -> None:
        super().__init__(relay, now, source)
        self.send(hello_message(), now)
        challenge = decode(self.inbox.pop())
        assert challenge["type"] == "relay-challenge"
        self.nonce: bytes = challenge["nonce"]

    def advertise(self, identity: Identity = HOST, now: float = 0.0, **changes: Any) -> Any:
        signed = make_ad(identity, self.nonce, **changes).sign(identity)
        self.actions = self.send(advertise_message(signed), now)
        return decode(self.inbox[-1]) if self.inbox else None


def listing(relay: RelayServer, query: Query | None = None, source: str = "q") -> Any:
    lister = RelayClient(relay, 0.0, source)
    lister.send(encode((query or Query()).to_wire()))
    assert lister.closed is None, lister.error()
    relay.closed(lister.number)
    return parse_tables(lister.inbox[-1])


# -- the advertisement itself ------------------------------------------------------------------


def test_an_ad_signs_parses_and_keeps_its_bytes() -> None:
    ad = make_ad(players=(AdPlayer("Bob", IDS[1].public_key_bytes, None),), free=2)
    signed = ad.sign(HOST)
    again = SignedAd.parse(decode(encode(signed.to_wire())))
    assert again.ad == ad and again.sig == signed.sig
    assert HOST.public_key_bytes == again.ad.host_key
    assert ad.keys == (HOST.public_key_bytes, IDS[1].public_key_bytes)
    assert len(signed.encoded) < MAX_AD_SIZE // 2


def test_only_the_key_it_names_signs_an_ad() -> None:
    with pytest.raises(DirectoryError, match="signed by the key it names"):
        make_ad().sign(IDS[1])
    forged = {"ad": make_ad().to_wire(), "sig": IDS[1].sign(AD_LABEL + make_ad().encode())}
    with pytest.raises(DirectoryError, match="not signed by the key it names"):
        SignedAd.parse(forged)


def test_any_change_to_a_signed_ad_breaks_its_signature() -> None:
    signed = make_ad().sign(HOST).to_wire()
    signed["ad"]["free"] = 1
    with pytest.raises(DirectoryError, match="not signed"):
        SignedAd.parse(signed)


@pytest.mark.parametrize(
    "changes",
    [
        {"host_key": b"k" * 31},
        {"table_id": b"t" * 15},
        {"nonce": b""},
        {"seq": -1},
        {"seq": True},
        {"ttl": 5},
        {"ttl": 601},
        {"target": 0},
        {"seats": 5},
        {"free": 0},
        {"free": 4},
        {"seats": 2, "free": 2},
        {"name": ""},
        {"name": "a\x1b[2Jb"},
        {"name": "x" * 33},
        {"variant": "Classic"},
        {"variant": "a" * 33},
        {"level": -1},
        {"level": 2_000_000},
        {"players": (AdPlayer("Bob", IDS[1].public_key_bytes),)},
        {"free": 2, "players": (AdPlayer("Bob", HOST.public_key_bytes),)},
        {"free": 2, "players": (AdPlayer("Bob\u202e", IDS[1].public_key_bytes),)},
        {"free": 2, "players": (AdPlayer("Bob", IDS[1].public_key_bytes, -3),)},
        {"langs": ("FR",)},
        {"langs": ("fr", "fr")},
        {"langs": ("fr", "es", "en", "de", "it")},
        {"addresses": ()},
        {"addresses": ("a:1",) * 9},
        {"addresses": ("no-port",)},
        {"addresses": ("host:0",)},
        {"addresses": ("ho st:7777",)},
        {"addresses": ("::1:7777",)},
        {"relay": "x" * 300 + ":1"},
    ],
)
def test_an_ad_out_of_its_bounds_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(DirectoryError):
        make_ad(**changes)


def test_an_ad_from_the_wire_has_exactly_its_keys() -> None:
    wire = make_ad().to_wire()
    for broken in ({**wire, "extra": 1}, {k: v for k, v in wire.items() if k != "level"}):
        with pytest.raises(DirectoryError, match="exactly"):
            Advertisement.from_wire(broken)
    with pytest.raises(DirectoryError, match="players"):
        Advertisement.from_wire({**wire, "players": [{"name": "Bob"}]})
    with pytest.raises(DirectoryError, match="version 1"):
        Advertisement.from_wire({**wire, "version": 2})


def test_an_ad_too_large_to_list_is_not_signed() -> None:
    names = {"name": "Ω" * 32, "relay": "r" * 240 + ":1", "addresses": ("a" * 240 + ":1",) * 8}
    with pytest.raises(DirectoryError, match="at most 2048"):
        make_ad(**names).sign(HOST)


# -- listing at a relay ------------------------------------------------------------------------


def test_a_host_lists_its_table_and_a_stranger_finds_it_signed() -> None:
    relay = server()
    host = Host(relay)
    answer = host.advertise()
    assert answer == {"type": "dir-listed", "seq": 0, "expires": 60}
    assert parse_listed(encode(answer)) == (0, 60)
    assert relay.phase(host.number) is RelayPhase.ADVERTISING
    found = listing(relay)
    assert [s.ad for s in found.ads] == [make_ad(HOST, host.nonce)]
    assert found.more is False and found.refused == 0
    assert relay.stats.to_dict()["directory"]["listed"] == 1


def test_a_relay_without_a_directory_says_so() -> None:
    relay = RelayServer()
    lister = RelayClient(relay)
    lister.send(encode(Query().to_wire()))
    assert lister.closed is not None and "no directory" in lister.error()
    host = RelayClient(relay)
    host.send(hello_message())
    nonce = decode(host.inbox.pop())["nonce"]
    host.send(advertise_message(make_ad(HOST, nonce).sign(HOST)))
    assert host.closed is not None and "no directory" in host.error()


def test_a_forged_ad_is_refused_and_costs_its_connection() -> None:
    relay = server()
    host = Host(relay)
    wire = make_ad(HOST, host.nonce).sign(HOST).to_wire()
    wire["sig"] = IDS[1].sign(AD_LABEL + encode(wire["ad"]))
    host.send(encode({"type": "dir-advertise", **wire}))
    assert host.closed is not None and "not signed by the key it names" in host.error()
    assert listing(relay).ads == ()
    assert relay.stats.refused == {"bad ad": 1}


def test_an_ad_naming_another_hosts_key_does_not_verify() -> None:
    """Mallory lists Alice's key with Mallory's addresses: signed by Mallory, it fails under
    Alice's key; signed by nobody, it fails too."""
    relay = server()
    host = Host(relay)
    ad = make_ad(HOST, host.nonce, addresses=("203.0.113.66:7777",))
    for sig in (IDS[9].sign(AD_LABEL + ad.encode()), bytes(64)):
        host = Host(relay)
        wire = {"ad": dataclasses.replace(ad, nonce=host.nonce).to_wire(), "sig": sig}
        host.send(encode({"type": "dir-advertise", **wire}))
        assert host.closed is not None, host.inbox
    assert listing(relay).ads == ()


def test_an_ad_copied_from_a_listing_is_worthless_on_another_connection() -> None:
    relay = server()
    host = Host(relay)
    host.advertise()
    copied = listing(relay).ads[0]
    replayer = Host(relay, source="elsewhere")
    replayer.send(advertise_message(copied))
    assert replayer.closed is not None and "nonce" in replayer.error()
    host.send(withdraw_message())
    assert host.closed is not None
    again = Host(relay, source="elsewhere")
    again.send(advertise_message(copied))
    assert again.closed is not None and listing(relay).ads == ()


def test_an_oversized_ad_is_refused() -> None:
    relay = server()
    host = Host(relay)
    wire = make_ad(HOST, host.nonce).to_wire()
    wire["addresses"] = ["a" * 250 + ":1"] * 8  # 2 KiB of addresses: under the frame cap
    sig = HOST.sign(AD_LABEL + encode(wire))
    host.send(encode({"type": "dir-advertise", "ad": wire, "sig": sig}))
    assert host.closed is not None and "at most 2048" in host.error()
    huge = Host(relay)
    wire["name"] = "x" * 20_000
    host_frame = encode({"type": "dir-advertise", "ad": wire, "sig": sig})
    huge.send(host_frame)
    assert huge.closed is not None  # over the relay's 16 KiB cap before the pairing
    assert listing(relay).ads == ()


def test_an_ad_not_refreshed_in_time_expires() -> None:
    relay = server()
    host = Host(relay)
    host.advertise(ttl=10)
    fresh = Host(relay, source="b")
    fresh.advertise(IDS[1], ttl=10, table=b"U" * 16)
    assert relay.next_deadline() == 10.0
    fresh.advertise(IDS[1], now=8.0, seq=1, ttl=10, table=b"U" * 16)
    assert relay.tick(9.9) == []
    host.take(relay.tick(10.0))
    assert host.closed is not None and "expired" in host.error()
    assert [s.ad.host_key for s in listing(relay).ads] == [IDS[1].public_key_bytes]
    assert relay.next_deadline() == 18.0
    assert relay.stats.to_dict()["directory"]["expired"] == 1


def test_the_relay_lists_an_ad_no_longer_than_its_own_cap() -> None:
    relay = server(max_ttl=30)
    assert Host(relay).advertise(ttl=600)["expires"] == 30


def test_ads_are_capped_per_source_and_the_rest_of_the_relay_goes_on() -> None:
    relay = server(max_ads_per_source=3)
    for k in range(3):
        assert Host(relay, source="nat").advertise(IDS[k])["type"] == "dir-listed"
    extra = Host(relay, source="nat")
    extra.advertise(IDS[3])
    assert extra.closed is not None and "too many tables" in extra.error()
    assert Host(relay, source="other").advertise(IDS[3])["type"] == "dir-listed"
    assert len(listing(relay).ads) == 4


def test_a_keys_third_ad_pushes_out_its_oldest() -> None:
    """Only the key's holder signs its ads, so it alone can push its own tables out."""
    relay = server(max_ads_per_key=2)
    first, second, third = Host(relay), Host(relay), Host(relay)
    first.advertise(table=b"1" * 16)
    second.advertise(table=b"2" * 16)
    third.advertise(table=b"3" * 16)
    first.take(third.actions)
    assert first.closed is not None and "newer ad of the same key" in first.error()
    assert second.closed is None
    tables = sorted(s.ad.table_id for s in listing(relay).ads)
    assert tables == [b"2" * 16, b"3" * 16]


def test_one_table_is_listed_once() -> None:
    relay = server()
    Host(relay).advertise()
    twice = Host(relay, source="b")
    twice.advertise()
    assert twice.closed is not None and "already listed" in twice.error()


def test_the_directory_refuses_past_its_size() -> None:
    relay = server(max_ads=2)
    Host(relay).advertise(IDS[0])
    Host(relay, source="b").advertise(IDS[1])
    full = Host(relay, source="c")
    full.advertise(IDS[2])
    assert full.closed is not None and "full" in full.error()


def test_withdrawing_or_hanging_up_unlists_at_once() -> None:
    relay = server()
    leaving, quitting = Host(relay), Host(relay, source="b")
    leaving.advertise(IDS[0])
    quitting.advertise(IDS[1])
    leaving.send(withdraw_message())
    assert leaving.closed is not None
    relay.closed(quitting.number)
    assert listing(relay).ads == () and relay.next_deadline() is None


def test_a_new_version_moves_the_ad_and_keeps_the_rules() -> None:
    relay = server()
    host = Host(relay)
    host.advertise()
    other = Host(relay, source="b")
    other.advertise(IDS[1], table=b"U" * 16)
    assert listing(relay).ads[0].ad.host_key == HOST.public_key_bytes
    player = (AdPlayer("Bob", IDS[5].public_key_bytes, 7),)
    other.advertise(IDS[1], table=b"U" * 16, seq=1, free=2, players=player)
    ads = listing(relay).ads
    assert [s.ad.host_key for s in ads] == [IDS[1].public_key_bytes, HOST.public_key_bytes]
    assert ads[0].ad.players == player
    for changes, reason in (
        ({"seq": 1}, "not above"),
        ({"seq": 2, "variant": "coinche"}, "keeps its variant"),
        ({"seq": 3, "table": b"V" * 16}, "one table"),
    ):
        other.advertise(IDS[1], **{"table": b"U" * 16, "free": 2, **changes})
        assert other.closed is not None and reason in other.error(), changes
        other = Host(relay, source="b")
        other.advertise(IDS[1], table=b"U" * 16)


def test_new_versions_of_an_ad_come_at_a_bounded_rate() -> None:
    relay = server(update_rate=1.0, update_burst=3)
    host = Host(relay)
    host.advertise()
    for seq in (1, 2, 3):
        assert host.advertise(seq=seq)["seq"] == seq
    host.advertise(seq=4)
    assert host.closed is not None and "too fast" in host.error()


def test_queries_filter_by_variant_and_language_the_fullest_first() -> None:
    relay = server()
    ads = [
        (IDS[0], "classic", ("fr",), 3),
        (IDS[1], "coinche", ("es", "fr"), 3),
        (IDS[2], "coinche", ("en",), 1),
        (IDS[3], "classic", ("es",), 2),
    ]
    for k, (identity, variant, langs, free) in enumerate(ads):
        players = tuple(
            AdPlayer(f"p{j}", IDS[20 + 3 * k + j].public_key_bytes) for j in range(3 - free)
        )
        Host(relay, source=str(k)).advertise(identity, variant=variant, langs=langs, free=free,
                                             players=players)  # fmt: skip

    def names(query: Query) -> list[bytes]:
        return [s.ad.host_key for s in listing(relay, query, source=repr(query)).ads]

    keys = [i.public_key_bytes for i in IDS[:4]]
    assert names(Query()) == [keys[2], keys[3], keys[0], keys[1]]
    assert names(Query(variant="coinche")) == [keys[2], keys[1]]
    assert names(Query(lang="es")) == [keys[3], keys[1]]
    assert names(Query(variant="classic", lang="en")) == []
    two = listing(relay, Query(limit=2), source="limit")
    assert len(two.ads) == 2 and two.more is True


def test_queries_from_one_source_are_rate_limited() -> None:
    relay = server(query_rate=1.0, query_burst=3)
    lister = RelayClient(relay, 0.0, "greedy")
    for _ in range(3):
        lister.send(encode(Query().to_wire()))
    assert lister.closed is None and len(lister.inbox) == 3
    lister.send(encode(Query().to_wire()))
    assert lister.closed is not None and "too many queries" in lister.error()
    assert listing(relay, source="patient").ads == ()  # another source asks on


def test_an_idle_lister_is_let_go() -> None:
    relay = server()
    lister = RelayClient(relay, 0.0, "q")
    lister.send(encode(Query().to_wire()), 5.0)
    assert relay.next_deadline() == 35.0
    lister.take(relay.tick(35.0))
    assert lister.closed is not None


@pytest.mark.parametrize(
    "query",
    [
        {"type": "dir-query", "version": 1, "variant": None, "lang": None},
        {"type": "dir-query", "version": 2, "variant": None, "lang": None, "limit": 5},
        {"type": "dir-query", "version": 1, "variant": "X", "lang": None, "limit": 5},
        {"type": "dir-query", "version": 1, "variant": None, "lang": "fra!", "limit": 5},
        {"type": "dir-query", "version": 1, "variant": None, "lang": None, "limit": 51},
        {"type": "dir-query", "version": 1, "variant": None, "lang": None, "limit": True},
    ],
)
def test_a_bad_query_is_refused(query: dict[str, Any]) -> None:
    lister = RelayClient(server(), 0.0, "q")
    lister.send(encode(query))
    assert lister.closed is not None and lister.error()


# -- a lying directory -------------------------------------------------------------------------


def test_a_lister_keeps_only_what_the_hosts_signed() -> None:
    """A directory that alters an ad, makes one up or sends an old version beside a newer
    one: the lister drops the first two and keeps the newest version."""
    old = make_ad(seq=1).sign(HOST)
    new = make_ad(seq=2, free=1, players=tuple(
        AdPlayer(f"p{j}", IDS[10 + j].public_key_bytes) for j in range(2)
    )).sign(HOST)  # fmt: skip
    altered = old.to_wire()
    altered["ad"]["addresses"] = ["203.0.113.66:7777"]
    made_up = {"ad": make_ad(IDS[3]).to_wire(), "sig": bytes(64)}
    answer = {"more": False, "tables": [old.to_wire(), altered, made_up, new.to_wire(), 7],
              "type": "dir-tables"}  # fmt: skip
    found = parse_tables(encode(answer))
    assert [s.ad for s in found.ads] == [new.ad] and found.refused == 3


@pytest.mark.parametrize(
    "answer",
    [
        {"type": "dir-tables", "tables": []},
        {"type": "dir-tables", "tables": {}, "more": False},
        {"type": "relay-error", "reason": "no"},
        [1, 2],
    ],
)
def test_a_lister_refuses_an_answer_that_is_none(answer: object) -> None:
    with pytest.raises(DirectoryError):
        parse_tables(encode(answer))
    with pytest.raises(DirectoryError):
        parse_listed(encode(answer))


# -- floods ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8), st.sampled_from(["hello", "none"]))
def test_nothing_a_client_sends_ends_the_relay_or_lists_an_ad(
    frames: list[bytes], opening: str
) -> None:
    relay = server()
    client = RelayClient(relay, 0.0, "fuzz")
    if opening == "hello":
        client.send(hello_message())
    for payload in frames:
        client.send(encode({"type": "dir-advertise", "ad": payload, "sig": payload[:64]}))
        client.send(payload)
    assert listing(relay).ads == ()


def test_a_flood_of_forged_oversized_and_expired_ads_leaves_the_real_one_listed() -> None:
    relay = server(max_ads_per_source=4)
    real = Host(relay, source="alice")
    real.advertise(ttl=600)
    cut = 0
    for k in range(300):
        flooder = Host(relay, now=float(k), source=f"m{k % 5}")
        kind = k % 3
        if kind == 0:  # forged: Alice's key, Mallory's signature
            wire = make_ad(HOST, flooder.nonce, table=bytes([k % 256]) * 16).to_wire()
            wire["sig"] = IDS[7].sign(b"x")
            flooder.send(encode({"type": "dir-advertise", "ad": wire, "sig": wire.pop("sig")}))
        elif kind == 1:  # oversized
            wire = make_ad(IDS[7], flooder.nonce).to_wire()
            wire["addresses"] = ["a" * 250 + ":1"] * 8
            flooder.send(encode({"type": "dir-advertise", "ad": wire,
                                 "sig": IDS[7].sign(AD_LABEL + encode(wire))}))  # fmt: skip
        else:  # valid, short-lived, from few sources: expires, or is capped per source
            flooder.advertise(IDS[8 + k % 30], now=float(k), ttl=10, table=bytes([k % 256]) * 16)
        cut += flooder.closed is not None
        relay.tick(float(k))
        if k == 200:
            real.advertise(now=200.0, seq=1, ttl=600)
    relay.tick(400.0)
    assert [s.ad.host_key for s in listing(relay).ads] == [HOST.public_key_bytes]
    refused = relay.stats.refused
    assert refused["bad ad"] == 200 and cut >= 200
    assert relay.stats.to_dict()["directory"]["expired"] >= 1
    assert relay.directory is not None and len(relay.directory) == 1
