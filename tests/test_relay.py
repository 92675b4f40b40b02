"""Games through a relay, in one process over loopback TCP: seats that do not listen, a
relay that records, drops or damages frames, a link that moves to the relay and back, and
garbage sent to the relay while a table plays on it."""

from __future__ import annotations

import random
import socket
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from helpers import (
    TABLE,
    TIMEOUT,
    check_agreement,
    has_ipv6_loopback,
    identities,
    thread_aware_clock,
)

import belote_p2p.net.peer as peer_module
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.address import format_address
from belote_p2p.net.peer import PeerConfig, PeerResult, run_peer
from belote_p2p.net.relay import NOT_READING, SEND_TIMEOUT, RelayService, open_relay_link
from belote_p2p.net.transport import ConnectionClosed, MeshConfig
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.deck import TURNED_POSITION
from belote_p2p.protocol.events import ActionTaken
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import (
    Action,
    RelayLimits,
    RelayServer,
    Send,
    join_statement,
)
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope, decode, encode, frame

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


async def play_relayed(
    tmp_path: Path,
    *,
    listening: tuple[int, ...] = (),
    relay: RelayService | None = None,
    variant: str = "classic",
    target: int = 151,
    seed: int = 31,
    host: str = "127.0.0.1",
    mesh_config: MeshConfig | None = None,
    config: PeerConfig | None = None,
    watch: Any = None,
    timeout: float = TIMEOUT,
    players: dict[int, BotPlayer] | None = None,
) -> tuple[list[PeerResult], TableDefinition]:
    """Four peers play (``random`` bots unless ``players`` says otherwise); the seats in
    ``listening`` accept direct connections on ``host``, the others do not (their address
    is empty) and are reached through ``relay`` (a :class:`RelayService` on ``host``, made
    here if not given)."""
    relay = relay or RelayService()
    relay_listener = (await trio.open_tcp_listeners(0, host=host))[0]
    relay_address = (host, relay_listener.socket.getsockname()[1])
    listeners = {s: (await trio.open_tcp_listeners(0, host=host))[0] for s in listening}
    ids = identities(seed)
    seats = tuple(
        Seat(
            f"p{s}",
            ids[s].public_key_bytes,
            format_address(host, listeners[s].socket.getsockname()[1]) if s in listeners else "",
        )
        for s in range(4)
    )
    definition = TableDefinition(TABLE, RULE_SETS[variant].with_(target=target), seats)
    proposal = definition.propose(ids[0])
    results: list[PeerResult | None] = [None] * 4

    async def one(seat: int) -> None:
        results[seat] = await run_peer(
            definition, seat, ids[seat],
            (players or {}).get(seat) or BotPlayer("random", seed=seat),
            transcript=tmp_path / f"seat{seat}.transcript",
            listeners=[listeners[seat]] if seat in listeners else [],
            secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
            proposal=proposal, relay=relay_address, mesh_config=mesh_config, config=config,
            on_event=watch if seat == 0 else None,
        )  # fmt: skip

    with trio.fail_after(timeout):
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve, [relay_listener])
            async with trio.open_nursery() as peers:
                for seat in range(4):
                    peers.start_soon(one, seat)
            nursery.cancel_scope.cancel()
    done = [r for r in results if r is not None]
    assert len(done) == 4
    return done, definition


async def test_four_peers_that_do_not_listen_play_through_a_relay(tmp_path: Path) -> None:
    results, _ = await play_relayed(tmp_path, variant="coinche")
    check_agreement(results)
    assert all(r.relayed == 3 for r in results), [r.relayed for r in results]


async def test_only_the_pairs_that_need_it_go_through_the_relay(tmp_path: Path) -> None:
    """Seat 0 listens: the others dial it directly; their own three pairs are relayed."""
    relay = RelayService()
    results, _ = await play_relayed(tmp_path, listening=(0,), relay=relay)
    check_agreement(results)
    assert [r.relayed for r in results] == [0, 2, 2, 2]
    assert relay.stats["paired"] == 3


class RecordingServer(RelayServer):
    """A relay that keeps a copy of every frame it forwards."""

    def __init__(self) -> None:
        super().__init__()
        self.record: list[bytes] = []

    def _forward(self, c: Any, payload: bytes) -> list[Action]:
        self.record.append(payload)
        actions: list[Action] = super()._forward(c, payload)
        return actions


async def test_what_a_relay_records_opens_no_card_before_it_is_played(tmp_path: Path) -> None:
    """Every frame the relay forwarded, replayed into an observer as they came: until a
    round's reveals, the observer knows only the turned card and the cards played. The
    record holds nothing else than handshakes, sync requests and signed envelopes."""
    server = RecordingServer()
    results, definition = await play_relayed(
        tmp_path, relay=RelayService(server=server), target=301
    )
    check_agreement(results)
    observer = TableSession(definition, None, None)
    observer.start()
    kinds: set[str] = set()
    checked_plays = 0
    revealed: set[int] = set()
    for payload in server.record:
        message = decode(payload)
        if "sig" in message and "seq" in message:
            envelope = Envelope.decode(payload)
            body = envelope.body
            if body["type"] == "deck" and body["msg"]["type"] == "deck.reveal":
                revealed.add(body["round"])
            observer.receive(payload)
            kinds.add("envelope")
        else:
            kinds.add(message["type"])
            continue
        deck = observer.deck
        if deck is None or deck.round_number in revealed:
            continue
        public = set(deck.played()) | (
            {TURNED_POSITION} if not definition.rules.is_coinche else set()
        )
        known = {p for p, card in enumerate(deck.known_cards()) if card is not None}
        assert known <= public, (deck.round_number, sorted(known - public))
        checked_plays = max(checked_plays, len(deck.played()))
    assert kinds <= {"hello", "hello-proof", "sync", "envelope"}, kinds
    assert checked_plays >= 31  # the check ran through whole rounds of play
    assert observer.completed  # the record held the whole game


class DamagingServer(RelayServer):
    """A relay that drops some forwarded frames and flips a bit in others (seeded), past
    the handshakes, for a bounded number of frames."""

    def __init__(self, seed: int, *, drop: float, flip: float, budget: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.drop, self.flip, self.budget = drop, flip, budget
        self.dropped = self.flipped = 0

    def _forward(self, c: Any, payload: bytes) -> list[Action]:
        actions: list[Action] = super()._forward(c, payload)
        if self.budget <= 0 or len(payload) < 200:  # handshakes and sync requests pass
            return actions
        roll = self.rng.random()
        if roll < self.drop:
            self.budget -= 1
            self.dropped += 1
            return []
        if roll < self.drop + self.flip:
            self.budget -= 1
            self.flipped += 1
            damaged = bytearray(payload)
            damaged[self.rng.randrange(len(damaged))] ^= 1 << self.rng.randrange(8)
            (send,) = actions
            assert isinstance(send, Send)
            return [Send(send.conn, frame(bytes(damaged)))]
        return actions


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> trio.testing.MockClock:
    """Virtual time that jumps when every task has waited 10 ms of real time (the sync
    requests after a dropped frame come at once), never while a bot's thread runs."""
    return thread_aware_clock(monkeypatch)


async def test_a_relay_that_drops_and_damages_frames_only_delays_the_game(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    server = DamagingServer(5, drop=0.05, flip=0.05, budget=40)
    results, _ = await play_relayed(
        tmp_path, relay=RelayService(server=server), timeout=TIMEOUT * 20
    )
    # A ``bye`` the relay dropped may never reach a peer whose others had all left: the game
    # is the same for all (every ``done`` is in), only the farewells may differ.
    assert len({r.state.scores for r in results}) == 1
    games = [
        {e.hash for e in map(Envelope.decode, read_transcript(r.transcript).envelopes)
         if e.body["type"] != "bye"}
        for r in results
    ]  # fmt: skip
    assert all(g == games[0] for g in games)
    assert server.dropped >= 5 and server.flipped >= 5, (server.dropped, server.flipped)
    for r in results:
        assert r.fault is None and r.abandoned is None and r.error is None
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.finished, verdict.summary()
    # Damaged frames are refused by the receiver (a bad signature, or not msgpack): they cost
    # the relayed connection, which comes back.
    assert sum(sum(r.rejected) for r in results) >= 1
    assert sum(r.reconnections for r in results) >= 1


async def test_a_link_moves_to_the_relay_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everybody listens, but seat 3 cannot reach seat 1 directly at first: their link goes
    through the relay. Once the path opens (after some plays), seat 3's next direct attempt
    succeeds and replaces the relayed link. Nothing is lost or counted twice: the four
    records are the same and verify."""
    real_mesh = peer_module.Mesh
    blocked = trio.Event()  # set: the path is open
    back = trio.Event()  # set: seat 3 reached seat 1 directly
    attempts: list[bool] = []

    class CutMesh(real_mesh):  # type: ignore[misc, valid-type]
        async def open_direct(self, host: str, port: int) -> Any:
            if self.seat == 3 and port == ports[1]:
                attempts.append(blocked.is_set())
                if not blocked.is_set():
                    raise OSError("no route to seat 1 (the test)")
                stream = await super().open_direct(host, port)
                back.set()
                return stream
            return await super().open_direct(host, port)

    class Patient(BotPlayer):
        """Seat 0 waits, once the path is open, for seat 3's direct attempt to get through:
        a game that would end sooner (a round can reach the target) still sees it."""

        async def decide(self, observation: Any) -> Any:
            if blocked.is_set():
                await back.wait()
            return await super().decide(observation)

    ports: dict[int, int] = {}
    monkeypatch.setattr(peer_module, "Mesh", CutMesh)
    actions = 0

    def watch(event: object) -> None:
        nonlocal actions
        if isinstance(event, ActionTaken):
            actions += 1
            if actions == 10:
                blocked.set()

    real_open = trio.open_tcp_listeners

    async def record_ports(port: int, **kw: Any) -> Any:
        listeners = await real_open(port, **kw)
        ports[len(ports) - 1] = listeners[0].socket.getsockname()[1]  # -1: the relay's
        return listeners

    monkeypatch.setattr(trio, "open_tcp_listeners", record_ports)
    # The relay after 1.5 s without a link: the other links, direct, must be up by then
    # even on a loaded machine (only seats 3 and 1 may be relayed).
    config = MeshConfig(fallback_after=1.5, direct_retry=0.5, dial_max_backoff=0.2)
    results, _ = await play_relayed(
        tmp_path, listening=(0, 1, 2, 3), mesh_config=config, watch=watch, target=301,
        players={0: Patient("random", seed=0)},
    )  # fmt: skip
    check_agreement(results)
    assert actions > 10
    assert results[1].relayed == results[3].relayed == 1
    assert results[0].relayed == results[2].relayed == 0
    assert attempts[0] is False and attempts[-1] is True


async def test_garbage_and_impostors_at_the_relay_do_not_disturb_a_table(
    tmp_path: Path,
) -> None:
    """While a table plays through the relay, other clients send it garbage, a flood, and
    a join for the table's seat without its key: each is cut, and the game is not touched."""
    relay = RelayService()
    cut: list[str] = []
    game_over = trio.Event()

    async def attack(address: tuple[str, int]) -> None:
        impostor = Identity.from_seed(b"\x66" * 32)
        ids = identities(31)
        seats = tuple(Seat(f"p{s}", ids[s].public_key_bytes, "") for s in range(4))
        definition = TableDefinition(TABLE, RULE_SETS["classic"].with_(target=151), seats)
        attempts = [
            b"\x00\x00\x00\x05garbage!",
            frame(encode({"type": "relay-hello", "version": 1})) + bytes(200_000),
        ]
        for data in attempts:
            stream = await trio.open_tcp_stream(*address)
            await stream.send_all(data)
            cut.append(await read_to_end(stream))
        stream = await trio.open_tcp_stream(*address)
        await stream.send_all(frame(encode({"type": "relay-hello", "version": 1})))
        await read_frame(stream)
        join = {
            "type": "relay-join", "definition": definition.to_wire(),
            "proposal": definition.propose(ids[0]), "seat": 1, "peer": 2,
            "sig": impostor.sign(b"x" * 64),
        }  # fmt: skip
        await stream.send_all(frame(encode(join)))
        cut.append(await read_to_end(stream))
        game_over.set()

    real_serve = relay.serve

    async def serve(listeners: Any, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        address = listeners[0].socket.getsockname()[:2]
        async with trio.open_nursery() as nursery:
            await nursery.start(real_serve, listeners)
            nursery.start_soon(attack, address)
            task_status.started()

    relay.serve = serve  # type: ignore[method-assign]
    results, _ = await play_relayed(tmp_path, relay=relay)
    check_agreement(results)
    assert game_over.is_set()
    assert "not canonical msgpack" in cut[0] or "expected" in cut[0]
    assert "not signed by seat 1's key" in cut[2]
    refused = relay.stats["refused"]
    assert refused.get("no key for the seat") == 1 and sum(refused.values()) >= 3


async def read_to_end(stream: trio.abc.Stream, timeout: float = 10) -> str:
    data = b""
    with trio.fail_after(timeout):
        try:
            while chunk := await stream.receive_some():
                data += chunk
        except trio.BrokenResourceError:
            pass  # reset: the relay closed with our bytes unread
    await stream.aclose()
    return data.decode("latin-1")


async def read_frame(stream: trio.abc.Stream) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        data += await stream.receive_some()
    return data[4:]


@pytest.mark.skipif(not has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
async def test_a_game_over_ipv6_loopback(tmp_path: Path) -> None:
    """Two seats listen on [::1], two are reached through a relay on [::1]."""
    results, definition = await play_relayed(tmp_path, listening=(0, 1), host="::1")
    check_agreement(results)
    assert definition.seats[0].address.startswith("[::1]:")
    assert [r.relayed for r in results] == [0, 0, 1, 1]


# -- issue 22: what a hostile client can and cannot do to the relay ---------------------------


async def start_relay(nursery: trio.Nursery, relay: RelayService) -> tuple[str, int]:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    await nursery.start(relay.serve, [listener])
    host, port = listener.socket.getsockname()[:2]
    return host, port


def small_table(table_id: bytes, seed: int, variant: str = "two-handed") -> TableDefinition:
    ids = identities(seed)
    rules = RULE_SETS[variant]
    seats = tuple(Seat(f"p{s}", ids[s].public_key_bytes, "") for s in range(rules.seats))
    return TableDefinition(table_id, rules, seats)


async def send_join(
    stream: trio.abc.Stream,
    definition: TableDefinition,
    seed: int,
    seat: int,
    peer: int,
    fields: dict[str, object] | None = None,
) -> None:
    """Pass the challenge and send a join of ``seat`` for ``peer``, ``fields`` replaced."""
    ids = identities(seed)
    await stream.send_all(frame(encode({"type": "relay-hello", "version": 1})))
    nonce = decode(await read_frame(stream))["nonce"]
    signer = ids[seat] if 0 <= seat < len(ids) else ids[0]
    join: dict[str, object] = {
        "type": "relay-join", "definition": definition.to_wire(),
        "proposal": definition.propose(ids[0]), "seat": seat, "peer": peer,
        "sig": signer.sign(join_statement(nonce, definition, seat, peer)),
    }  # fmt: skip
    join.update(fields or {})
    await stream.send_all(frame(encode(join)))


async def relayed_pair(
    address: tuple[str, int], definition: TableDefinition, seed: int, a: int, b: int
) -> None:
    """Seats ``a`` and ``b`` of ``definition`` pair through the relay and a frame crosses."""
    ids = identities(seed)
    proposal = definition.propose(ids[0])
    links: dict[int, Any] = {}

    async def one(seat: int, peer: int) -> None:
        links[seat] = await open_relay_link(address, ids[seat], definition, proposal, seat, peer)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, a, b)
        nursery.start_soon(one, b, a)
    await links[a].send(b"through the relay")
    assert await links[b].receive() == b"through the relay"
    for link in links.values():
        await link.aclose()


async def test_a_join_beyond_a_two_seat_table_costs_only_its_connection() -> None:
    """Issue 22, item 1: a join for seat 3 of a two-seat table raised IndexError out of the
    relay's nursery (a standalone relay ended; a host's port ended with its game). Every
    malformed join field is now a relay-error on its own connection; the relay lives and an
    honest table still pairs on it, while another pair of it goes on forwarding."""
    relay = RelayService()
    two = small_table(b"2" * 16, 41)
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            address = await start_relay(nursery, relay)
            ids = identities(41)
            proposal = two.propose(ids[0])
            honest: list[Any] = []
            first_paired = trio.Event()

            async def first() -> None:  # waits at the relay while the attacks go on
                honest.append(await open_relay_link(address, ids[1], two, proposal, 1, 0))
                first_paired.set()

            nursery.start_soon(first)
            bad_fields: list[tuple[int, int, dict[str, object]]] = [
                (3, 0, {}), (0, 3, {}), (2, 3, {}), (-1, 0, {}), (1, 1, {}),
                (1, 0, {"seat": True}), (1, 0, {"peer": "0"}), (1, 0, {"definition": [1]}),
                (1, 0, {"proposal": b"x"}), (1, 0, {"sig": b"\x00" * 64}),
                (1, 0, {"sig": None}), (1, 0, {"extra": 1}),
            ]  # fmt: skip
            for seat, peer, fields in bad_fields:
                stream = await trio.open_tcp_stream(*address)
                await send_join(stream, two, 41, seat, peer, fields)
                assert "relay-error" in await read_to_end(stream), (seat, peer, fields)
            await relayed_pair(address, small_table(b"3" * 16, 42, "three-handed"), 42, 2, 0)
            second = await open_relay_link(address, ids[0], two, proposal, 0, 1)
            await first_paired.wait()
            await honest[0].send(b"the first table is fine")
            assert await second.receive() == b"the first table is fine"
            nursery.cancel_scope.cancel()
    refused = relay.stats["refused"]
    assert sum(refused.values()) == len(bad_fields), refused
    assert relay.stats["paired"] == 2


async def test_a_flood_from_one_address_does_not_keep_a_real_table_from_pairing(
    clock: trio.testing.MockClock,
) -> None:
    """Issue 22, item 9: one address held every connection and every table slot of the
    relay (bare connections renewed, self-made tables). Now it is capped, a full relay makes
    room by evicting what proved nothing or never paired, and an unpaired slot goes after
    ``pair_timeout`` (virtual time)."""
    limits = RelayLimits(
        max_connections=24, max_per_source=22, max_tables=3, max_tables_per_source=3,
        join_timeout=1000, pair_timeout=30, wait_timeout=1000,
    )  # fmt: skip
    relay = RelayService(limits)
    cheater = "127.0.0.2"
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            address = await start_relay(nursery, relay)
            unpaired = []
            for k in range(2):  # two self-made tables, one seat each: never paired
                stream = await trio.open_tcp_stream(*address, local_address=cheater)
                await send_join(stream, small_table(bytes([k]) * 16, 50 + k), 50 + k, 1, 0)
                unpaired.append(stream)
            fake = small_table(b"F" * 16, 52)
            # One self-made table that pairs: it keeps its slot, within the address's cap.
            fake_links = []
            for seat in (0, 1):
                stream = await trio.open_tcp_stream(*address, local_address=cheater)
                await send_join(stream, fake, 52, seat, 1 - seat)
                fake_links.append(stream)
            for stream in fake_links:
                assert decode(await read_frame(stream)) == {"type": "relay-paired"}
            bare = [await trio.open_tcp_stream(*address, local_address=cheater) for _ in range(18)]
            assert relay.server.connections == 22
            # The 23rd connection from the same address is refused at once.
            over = await trio.open_tcp_stream(*address, local_address=cheater)
            assert await read_to_end(over) == ""
            # A real table from elsewhere: its second connection makes the relay full, and
            # its table takes the slot of the oldest self-made table that never paired.
            await relayed_pair(address, small_table(b"R" * 16, 53), 53, 1, 0)
            assert "evicted" in await read_to_end(unpaired[0])
            # The other unpaired slot lasts 30 s (virtual) from its join, then goes.
            assert "did not come in time" in await read_to_end(unpaired[1], timeout=60)
            assert relay.server.tables == 1  # the paired self-made one (the real one left)
            nursery.cancel_scope.cancel()
    for stream in bare:
        await stream.aclose()
    refused = relay.stats["refused"]
    assert refused["too many connections from one address"] == 1
    assert refused["evicted"] == 1 and refused["peer never came"] == 1
    assert relay.stats["paired"] == 2


async def test_a_cheaters_requests_cost_its_link_not_the_victims_links_to_honest_seats() -> None:
    """Issue 22, item 10: the byte budget was per seat over all its links, so seat 3
    asking seat 1 for everything made the relay cut seat 1's links to the honest seats. Now
    each link has its own budget: the link 3-1 is cut, 1-0 and 1-2 carry on."""
    limits = RelayLimits(rate=10_000, burst=200_000)
    relay = RelayService(limits)
    definition = small_table(b"C" * 16, 31, "classic")
    ids = identities(31)
    proposal = definition.propose(ids[0])
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            address = await start_relay(nursery, relay)
            links: dict[tuple[int, int], Any] = {}

            async def one(seat: int, peer: int) -> None:
                links[seat, peer] = await open_relay_link(
                    address, ids[seat], definition, proposal, seat, peer
                )

            async with trio.open_nursery() as opening:
                for a, b in ((1, 3), (1, 0), (1, 2)):
                    opening.start_soon(one, a, b)
                    opening.start_soon(one, b, a)
            for a, b in ((1, 3), (1, 0), (1, 2)):  # stand-ins for the handshake's frames
                for x, y in ((a, b), (b, a)):
                    for _ in range(2):
                        await links[x, y].send(b"hello")
                        assert await links[y, x].receive() == b"hello"
            answers = 0
            with pytest.raises(ConnectionClosed):
                for _ in range(50):
                    await links[3, 1].send(encode({"type": "sync", "have": [0] * 4, "want": []}))
                    await links[1, 3].receive()
                    await links[1, 3].send(bytes(60_000))  # the answer: a whole transcript
                    await links[3, 1].receive()
                    answers += 1
            assert answers <= 4
            for honest in (0, 2):
                await links[1, honest].send(bytes(150_000))
                assert len(await links[honest, 1].receive()) == 150_000
            nursery.cancel_scope.cancel()
    assert relay.stats["refused"] == {"over the byte rate": 1}


async def test_a_seat_that_stops_reading_is_cut_by_the_relay_after_its_send_timeout(
    clock: trio.testing.MockClock,
) -> None:
    """A relayed link whose one end stops reading: what the relay forwards to it fills the
    kernel's buffers, the relay's send waits, and after ``SEND_TIMEOUT`` (virtual time) the
    relay cuts that pair and counts it under ``did not read``. Its queue stays under its cap
    (that would be the other cause, ``not reading``), and the relay goes on pairing others."""
    relay = RelayService(RelayLimits(rate=64 << 20, burst=64 << 20))
    definition = small_table(b"S" * 16, 61)
    ids = identities(61)
    proposal = definition.propose(ids[0])
    chunk = 512 << 10
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            address = await start_relay(nursery, relay)
            links: dict[int, Any] = {}

            async def one(seat: int) -> None:
                links[seat] = await open_relay_link(
                    address, ids[seat], definition, proposal, seat, 1 - seat
                )

            async with trio.open_nursery() as opening:
                opening.start_soon(one, 0)
                opening.start_soon(one, 1)
            await links[0].send(b"hello")
            assert await links[1].receive() == b"hello"
            # Seat 1 reads no more, through a small receive window.
            links[1].stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            start = trio.current_time()
            with pytest.raises(ConnectionClosed):
                for _ in range(12):  # 6 MiB: more than the kernel holds, less than the cap
                    await links[0].send(bytes(chunk))
                await links[0].receive()  # the relay closes seat 0's side of the pair too
            assert trio.current_time() - start >= SEND_TIMEOUT
            await relayed_pair(address, small_table(b"T" * 16, 62), 62, 0, 1)
            nursery.cancel_scope.cancel()
    assert relay.stats["refused"] == {NOT_READING: 1}
    assert relay.stats["paired"] == 2


async def test_bare_connections_from_a_few_addresses_do_not_turn_a_real_table_away() -> None:
    """More bare connections than a mesh lets strangers hold (from two addresses, each
    within the relay's cap per address): a real table from a third still pairs."""
    relay = RelayService()
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            address = await start_relay(nursery, relay)
            bare = [
                await trio.open_tcp_stream(*address, local_address=source)
                for source in ("127.0.0.2", "127.0.0.3")
                for _ in range(relay.server.limits.max_per_source)
            ]
            await relayed_pair(address, small_table(b"R" * 16, 54), 54, 1, 0)
            assert relay.server.connections >= len(bare)  # the flood is still held
            nursery.cancel_scope.cancel()
    for stream in bare:
        await stream.aclose()
    assert relay.stats["paired"] == 1
