"""LAN discovery: the beacon format, the directory of tables heard, and beacons over loopback."""

from __future__ import annotations

import contextlib
import io

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from helpers import LOOPBACK, TABLE, free_udp_port
from hypothesis import given
from hypothesis import strategies as st

from belote_p2p.app import cli
from belote_p2p.app.lan import choose_table
from belote_p2p.net.discovery import (
    MAX_BEACON_SIZE,
    MAX_PER_SOURCE,
    MAX_TABLES,
    Beacon,
    BeaconError,
    TableAd,
    TableDirectory,
    decode_beacon,
    discover,
    encode_beacon,
    listen,
    open_listener,
    send_beacons,
)
from belote_p2p.protocol.wire import encode

OTHER = bytes(range(16, 32))
HOST_KEY = bytes(range(32))


def beacon(free: int = 3, table: bytes = TABLE, name: str = "Alice") -> Beacon:
    return Beacon(name, "classic", 501, free, 7777, table, HOST_KEY)


def wire(**changes: object) -> dict[str, object]:
    fields = beacon().to_wire()
    fields.update(changes)
    return fields


# -- the format ------------------------------------------------------------------------------


def test_a_beacon_round_trips_and_is_small() -> None:
    b = Beacon("Zoé", "coinche", 1000, 2, 40000, TABLE, HOST_KEY)
    data = encode_beacon(b)
    assert decode_beacon(data) == b
    assert len(data) < 200 < MAX_BEACON_SIZE
    longest = Beacon("N" * 32, "v" * 32, 100_000, 3, 65535, TABLE, HOST_KEY)
    assert len(encode_beacon(longest)) < MAX_BEACON_SIZE


@pytest.mark.parametrize(
    "fields",
    [
        wire(magic="belote-p2p/other"),
        wire(version=1),
        wire(key=bytes(31)),
        {k: v for k, v in wire().items() if k != "key"},
        wire(name="Eve\u202egnp"),
        wire(extra=1),
        {k: v for k, v in wire().items() if k != "port"},
        wire(name=""),
        wire(name="x" * 33),
        wire(name="evil\x1b[2J"),
        wire(name=b"Alice"),
        wire(variant=7),
        wire(target=0),
        wire(target=True),
        wire(free=4),
        wire(free=-1),
        wire(free=True),
        wire(port=0),
        wire(port=65536),
        wire(table=bytes(15)),
        wire(table="0" * 16),
    ],
)
def test_anything_but_a_well_formed_beacon_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(BeaconError):
        decode_beacon(encode(fields))


def test_non_canonical_oversized_and_non_map_datagrams_are_refused() -> None:
    good = encode_beacon(beacon())
    unsorted = msgpack.packb(dict(reversed(list(wire().items()))), use_bin_type=True)
    for data in (
        b"",
        b"\xc1",
        good[:-1],
        good + b"\x00",
        unsorted,
        encode([1, 2, 3]),
        encode("belote-p2p/beacon"),
        good + bytes(MAX_BEACON_SIZE),
    ):
        with pytest.raises(BeaconError):
            decode_beacon(data)


@given(st.binary(max_size=600))
def test_decoding_garbage_only_ever_raises_beacon_error(data: bytes) -> None:
    with contextlib.suppress(BeaconError):
        decode_beacon(data)


def test_a_beacon_checks_its_own_fields() -> None:
    with pytest.raises(ValueError):
        Beacon("Alice", "classic", 501, 5, 7777, TABLE, HOST_KEY)
    with pytest.raises(ValueError):
        Beacon("Al\nice", "classic", 501, 1, 7777, TABLE, HOST_KEY)


# -- the directory of tables heard -----------------------------------------------------------


def test_the_directory_keeps_the_latest_beacon_of_each_table() -> None:
    d = TableDirectory()
    assert d.receive(encode_beacon(beacon(3)), "10.0.0.5", 1.0) is not None
    d.receive(encode_beacon(beacon(3, OTHER, "Bob")), "10.0.0.6", 1.5)
    d.receive(encode_beacon(beacon(1)), "10.0.0.5", 2.0)
    assert d.receive(b"garbage", "10.0.0.9", 2.5) is None
    assert d.ignored == 1
    ads = d.ads()
    assert [(ad.beacon.name, ad.beacon.free, ad.host, ad.seen) for ad in ads] == [
        ("Alice", 1, "10.0.0.5", 2.0),
        ("Bob", 3, "10.0.0.6", 1.5),
    ]
    assert ads[0].address == "10.0.0.5:7777"
    # A table that filled up says so once and is no longer offered.
    d.receive(encode_beacon(beacon(0, OTHER, "Bob")), "10.0.0.6", 3.0)
    assert [ad.beacon.name for ad in d.ads()] == ["Alice"]


def test_a_table_heard_at_several_addresses_is_listed_at_the_one_that_reaches_furthest() -> None:
    d = TableDirectory()
    d.receive(encode_beacon(beacon()), "fe80::1%eth0", 1.0)
    d.receive(encode_beacon(beacon()), "192.168.1.20", 1.1)
    d.receive(encode_beacon(beacon()), "fe80::1%eth0", 2.0)
    d.receive(encode_beacon(beacon()), "127.0.0.1", 2.1)
    assert [ad.host for ad in d.ads()] == ["192.168.1.20"]


def test_a_listing_is_a_host_key_and_a_table() -> None:
    d = TableDirectory()
    d.receive(encode_beacon(beacon()), "10.0.0.5", 1.0)
    # Someone else announces the same table at its own address: another listing (its key
    # is not the host's, or, if it copied the key, join refuses the table at its lobby).
    spoof = Beacon("Alice", "classic", 501, 3, 9999, TABLE, bytes(32))
    d.receive(encode_beacon(spoof), "10.0.0.66", 2.0)
    assert [(ad.host, ad.beacon.host_key) for ad in d.ads()] == [
        ("10.0.0.5", HOST_KEY), ("10.0.0.66", bytes(32)),
    ]  # fmt: skip


def test_the_directory_is_bounded_overall_and_per_source() -> None:
    d = TableDirectory()
    for i in range(30_000):
        table = i.to_bytes(16, "big")
        d.receive(encode_beacon(beacon(table=table)), f"10.{i % 200}.{i // 200 % 250}.1", i)
    assert len(d.ads()) == MAX_TABLES and d.forgotten == 30_000 - MAX_TABLES
    # The latest heard stay.
    assert d.ads()[-1].table_id == (29_999).to_bytes(16, "big")
    one = TableDirectory()
    for i in range(100):
        one.receive(encode_beacon(beacon(table=i.to_bytes(16, "big"))), "10.0.0.66", i)
    one.receive(encode_beacon(beacon(table=OTHER, name="Bob")), "10.0.0.5", 100)
    assert len(one.ads()) == MAX_PER_SOURCE + 1
    assert [ad.table_id for ad in one.ads()][:MAX_PER_SOURCE] == [
        i.to_bytes(16, "big") for i in range(100 - MAX_PER_SOURCE, 100)
    ]


# -- over loopback ---------------------------------------------------------------------------


async def test_listen_reads_beacons_and_ignores_garbage_over_loopback() -> None:
    with trio.fail_after(5):
        listener = await open_listener((LOOPBACK, 0))
        with listener:
            port = listener.getsockname()[1]
            sender = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
            with sender:
                for data in (
                    b"\x00" * 2000,
                    b"hello",
                    encode_beacon(beacon(3)),
                    encode(wire(version=9)),
                    encode_beacon(beacon(2, OTHER, "Bob")),
                    encode_beacon(beacon(2)),
                ):
                    await sender.sendto(data, (LOOPBACK, port))
            # The datagrams are queued already: listening reads them, then times out.
            ads = await listen(listener, 0.2)
    assert [(ad.beacon.name, ad.beacon.free, ad.address) for ad in ads] == [
        ("Alice", 2, "127.0.0.1:7777"),
        ("Bob", 2, "127.0.0.1:7777"),
    ]


async def test_send_beacons_every_interval_and_discover_them(
    autojump_clock: trio.abc.Clock,
) -> None:
    sent: list[float] = []

    def beacon_fn() -> Beacon | None:
        sent.append(trio.current_time())
        # The table fills as the beacons go: seats 3, 2, 1 free, then none to announce.
        free = 3 - len(sent) + 1
        return beacon(free) if free > 0 else None

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            found: list[TableAd] = []

            async def run_discover(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
                found.extend(
                    await discover(address=(LOOPBACK, 0), duration=10.5, task_status=task_status)
                )
                nursery.cancel_scope.cancel()

            bound = await nursery.start(run_discover)
            start = trio.current_time()
            await nursery.start(
                lambda task_status: send_beacons(
                    beacon_fn, address=bound, interval=1.0, task_status=task_status
                )
            )
    assert [t - start for t in sent] == [float(i) for i in range(11)]
    [ad] = found
    assert ad.beacon.free == 1
    assert ad.host == LOOPBACK
    assert ad.seen - start == 2.0


async def test_a_failing_send_does_not_stop_the_beacons(autojump_clock: trio.abc.Clock) -> None:
    calls = 0

    def beacon_fn() -> Beacon:
        nonlocal calls
        calls += 1
        return beacon()

    with trio.fail_after(60), trio.move_on_after(3.5):
        # Port 0 cannot be sent to: every send fails, and is logged.
        await send_beacons(beacon_fn, address=(LOOPBACK, 0), interval=1.0)
    assert calls == 4


# -- choosing a table ------------------------------------------------------------------------


def ads() -> list[TableAd]:
    return [
        TableAd(beacon(3), "192.168.1.20", 0.0),
        TableAd(Beacon("Bob", "coinche", 1000, 1, 7800, OTHER, HOST_KEY), "192.168.1.21", 0.0),
    ]


def test_choose_table_asks_until_a_number_in_range() -> None:
    answers = iter(["x", "0", "3", " 2 "])
    out = io.StringIO()
    chosen = choose_table(ads(), ask=lambda _: next(answers), out=out)
    assert chosen is not None and chosen.beacon.name == "Bob"
    text = out.getvalue()
    assert "1  Alice  classic  501     3     192.168.1.20:7777" in text
    assert "2  Bob    coinche  1000    1     192.168.1.21:7800" in text
    assert text.count("Answer a number from 1 to 2.") == 3


def test_choose_table_gives_up_on_enter_eof_or_no_table() -> None:
    out = io.StringIO()
    assert choose_table(ads(), ask=lambda _: "", out=out) is None

    def eof(_: str) -> str:
        raise EOFError

    assert choose_table(ads(), ask=eof, out=out) is None
    assert choose_table([], ask=eof, out=out) is None
    assert "No open table" in out.getvalue()


# -- the command -----------------------------------------------------------------------------


def test_tables_command_lists_what_it_hears(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from belote_p2p.app import lan

    async def heard(addresses: list[tuple[str, int]], duration: float) -> list[TableAd]:
        assert addresses == [("239.255.42.99", 7000)] and duration == 2.0
        return ads()

    monkeypatch.setattr(lan, "_discover_for", heard)
    status = cli.main(["tables", "--seconds", "2", "--port", "7000", "--group", "239.255.42.99"])
    assert status == 0
    assert "192.168.1.21:7800" in capsys.readouterr().out


def test_tables_command_with_nothing_heard(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_udp_port()
    status = cli.main(["tables", "--seconds", "0.05", "--port", str(port), "--group", LOOPBACK])
    assert status == 1
    assert "No open table heard" in capsys.readouterr().out
    assert cli.main(["tables", "--group", "nowhere"]) == 2
