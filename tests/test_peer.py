"""Four peers play whole games over real loopback TCP, in one process."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import random
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from helpers import (
    TIMEOUT,
    StoppingPlayer,
    check_agreement,
    check_played_on,
    make_table,
    open_listeners,
    play_table,
    thread_aware_clock,
)

import belote_p2p.net.peer as peer_module
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.peer import (
    PeerConfig,
    PeerControl,
    PeerResult,
    PeerStatus,
    run_peer,
)
from belote_p2p.net.transport import ConnectionClosed, MeshConfig, Received
from belote_p2p.players.player import BotPlayer, Resigned
from belote_p2p.protocol.bodies import encode_sync
from belote_p2p.protocol.events import ActionTaken, RoundAudited, RoundDealt, SeatLeft
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.transcript import TranscriptWriter, read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope, encode

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


# Four-seat rule sets: the deck protocol and the session for two and three seats are the
# few-deck branch's.
@pytest.mark.parametrize("variant", sorted(n for n, r in RULE_SETS.items() if r.seats == 4))
async def test_four_peers_play_a_whole_game_over_tcp(variant: str, tmp_path: Path) -> None:
    results, events = await play_table(variant, tmp_path)
    check_agreement(results)
    assert len(results) == RULE_SETS[variant].seats
    for seat in range(len(results)):
        audits = [e for e in events[seat] if isinstance(e, RoundAudited)]
        assert audits and all(a.report.clean for a in audits)


async def test_bad_envelopes_are_dropped_and_the_game_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 3 sends garbage, a forged signature and another table's envelope before each
    real one for a while; each costs it the connection that carried it, it dials again, the
    peers sync, and the honest game still finishes."""
    real_mesh = peer_module.Mesh
    intruder = Identity.from_seed(bytes([77]) * 32)
    bad_frames: list[Callable[[bytes], bytes]] = [
        lambda good: b"\xc1 not msgpack",
        lambda good: good[:-1] + bytes([good[-1] ^ 1]),  # the signature no longer verifies
        lambda good: Envelope.create(
            intruder, bytes(16), 0, bytes(32), [bytes(32)] * 4, {"type": "table", "digest": b""}
        ).encode(),
    ]

    class EvilMesh(real_mesh):  # type: ignore[misc, valid-type]
        injected = 0

        def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == 3 and EvilMesh.injected < 3 * len(bad_frames):
                super().broadcast(bad_frames[EvilMesh.injected % len(bad_frames)](payload))
                EvilMesh.injected += 1
            result: frozenset[int] = super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", EvilMesh)
    results, _ = await play_table("coinche", tmp_path)
    check_agreement(results)
    assert EvilMesh.injected == 9
    for r in results[:3]:
        # The first bad frame surely reached everyone; later ones may have found the
        # connection down already.
        assert r.rejected[:3] == (0, 0, 0) and 1 <= r.rejected[3] <= 9, r.rejected
        assert r.reconnections >= 1
    assert results[3].rejected == (0, 0, 0, 0)


def junk_frames(good: bytes, rng: random.Random, intruder: Identity) -> list[bytes]:
    """Frames that are no envelope of the table: random bytes, ``good`` with a flipped bit
    (a forged signature), another table's envelope, a malformed sync request."""
    other_table = Envelope.create(
        intruder, bytes(16), 0, bytes(32), [bytes(32)] * 4, {"type": "table", "digest": b""}
    ).encode()
    flipped = bytearray(good)
    flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    sync = encode({"type": "sync", "have": [0, 0, 0], "want": []})
    return [rng.randbytes(rng.randrange(1, 200)), bytes(flipped), other_table, sync]


async def test_junk_frames_cost_the_connection_not_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: trio.testing.MockClock
) -> None:
    """Seat 3 plays honestly but sends seat 0 a burst of junk before each of its envelopes,
    on every connection it gets: hundreds of frames. Seat 0 drops each connection that
    carries junk, seat 3 dials again, and seat 0 finishes the game (seat 3's envelopes it
    lost come back through sync). Unsigned bytes eject nobody. (Virtual time: seat 0 may
    linger for seat 3's ``bye``, lost with a dropped connection after seat 3 left.)"""
    real_mesh = peer_module.Mesh
    rng = random.Random(3)
    intruder = Identity.from_seed(bytes([78]) * 32)

    class JunkMesh(real_mesh):  # type: ignore[misc, valid-type]
        queued = 0

        def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == 3:
                for _ in range(10):
                    for junk in junk_frames(payload, rng, intruder):
                        try:
                            self.send(0, junk)
                        except ConnectionClosed:
                            break  # seat 0 dropped us: the next envelope finds a new one
                        JunkMesh.queued += 1
            result: frozenset[int] = super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", JunkMesh)
    results, _ = await play_table("classic", tmp_path, target=301, timeout=TIMEOUT * 10)
    assert JunkMesh.queued >= 300
    victim = results[0]
    assert victim.error is None and victim.fault is None and victim.abandoned is None
    assert victim.rejected[:3] == (0, 0, 0) and victim.rejected[3] >= 3
    assert victim.reconnections >= 3
    for r in results[:3]:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok, verdict.summary()
        assert verdict.finished or verdict.abandoned == 3, verdict.summary()
    assert results[1].rejected == results[2].rejected == (0, 0, 0, 0)


class DeafLink:
    """A link that stops reading once the handshake is done (its two frames from the
    other side): the peer at the other end sees its frames pile up."""

    def __init__(self, link: Any) -> None:
        self.link = link
        self.received = 0

    async def send(self, payload: bytes) -> None:
        await self.link.send(payload)

    async def receive(self) -> bytes:
        if self.received >= 2:
            await trio.sleep_forever()
        self.received += 1
        payload: bytes = await self.link.receive()
        return payload

    async def aclose(self) -> None:
        await self.link.aclose()


async def test_a_peer_that_stops_reading_slows_nobody_else(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seat 3 keeps its connection to seat 0 open and keeps asking it for everything, but
    never reads from it (small socket buffers make the backlog show at once). Seat 0's
    queue to seat 3 fills and that connection is dropped (again after each redial); its
    frames to seats 1 and 2 leave as usual and the game between the honest seats finishes.
    The send timeout is set beyond the test's reach: only the full queue can drop seat 3."""
    real_mesh = peer_module.Mesh

    class DeafMesh(real_mesh):  # type: ignore[misc, valid-type]
        async def attach(self, link: Any, *, peer_seat: int | None, **kw: Any) -> None:
            stream = getattr(link, "stream", None)
            if self.seat in (0, 3) and isinstance(stream, trio.SocketStream):
                stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
                stream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            if self.seat == 3 and peer_seat == 0:
                link = DeafLink(link)
            await super().attach(link, peer_seat=peer_seat, **kw)

        def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == 3:
                with contextlib.suppress(ConnectionClosed):
                    self.send(0, encode({"type": "sync", "have": [0, 0, 0, 0], "want": []}))
            result: frozenset[int] = super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", DeafMesh)
    mesh_config = MeshConfig(max_frame=8192, send_queue_bytes=16384, send_timeout=1e9)
    # To 501: under the load of the whole suite, a game to 151 ended once before seat 0's
    # queue to seat 3 filled, and the drop asked for below never came.
    with caplog.at_level(logging.WARNING, logger="belote_p2p.net.transport"):
        results, _ = await play_table(
            "classic", tmp_path, target=501, config=QUICK, mesh_config=mesh_config,
            timeout=TIMEOUT * 10, until=3,
        )  # fmt: skip
    for r in results:
        assert r.error is None and r.fault is None and r.abandoned is None, r
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.finished, verdict.summary()
    assert "seat 0: dropping the connection to seat 3 is not reading" in caplog.text
    assert results[0].reconnections >= 1


async def test_a_failed_player_resigns_and_its_partner_plays_on(tmp_path: Path) -> None:
    results, events = await play_table(
        "classic", tmp_path, players={2: StoppingPlayer(6, EOFError("the terminal closed"))}
    )
    assert "EOFError" in (results[2].error or "")
    check_played_on(results, events, 2)


async def test_a_resignation_in_round_2_leaves_a_dummy_and_the_game_finishes(
    tmp_path: Path,
) -> None:
    # To 501: seat 1's 12th decision is in round 2 or 3, and a round 1 can reach 301 (a
    # capot with belote and announcements: the deals are random), ending the game first.
    results, events = await play_table(
        "classic", tmp_path, target=501,
        players={1: StoppingPlayer(12, Resigned("the player resigned"))},
    )  # fmt: skip
    assert results[1].resigned and results[1].error is None
    assert not any(r.resigned for r in (results[0], results[2], results[3]))
    check_played_on(results, events, 1)
    left = next(e for e in events[0] if isinstance(e, SeatLeft))
    assert left.round >= 1 and left.by == 3


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> trio.testing.MockClock:
    """Virtual time that jumps ahead whenever every task has waited 10 ms of real time, but
    never while a bot's thread runs (:func:`helpers.thread_aware_clock`)."""
    return thread_aware_clock(monkeypatch)


QUICK = PeerConfig(person_deadline=20.0, step_deadline=10.0, grace=30.0, sync_interval=2.0)


async def test_a_lost_peer_is_waited_for_then_signed_gone(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """Seat 1 crashes mid-game (its player's failure is not caught) and never comes back:
    the others wait for it to reconnect, report it overdue, and after the grace period the
    three of them sign that it left."""

    class Crash(Exception):
        pass

    class CrashingPlayer(StoppingPlayer):
        """Its fourth decision crashes the driver itself (see ``crash_through``)."""

        def __init__(self, decisions: int) -> None:
            super().__init__(decisions, EOFError("the terminal closed"))

    listeners = await open_listeners()
    definition, ids = make_table("coinche", target=151, seed=9, listeners=listeners)
    results: dict[int, PeerResult | None] = {}
    statuses: list[PeerStatus] = []
    events: list[list[object]] = [[] for _ in range(4)]

    async def one(seat: int) -> None:
        player = CrashingPlayer(3) if seat == 1 else BotPlayer("random", seed=seat)
        try:
            results[seat] = await run_peer(
                definition, seat, ids[seat], player,
                transcript=tmp_path / f"seat{seat}.transcript", listeners=[listeners[seat]],
                secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
                proposal=definition.propose(ids[0]),
                config=QUICK, on_status=statuses.append if seat == 0 else None,
                on_event=events[seat].append,
            )  # fmt: skip
        except BaseException:
            results[seat] = None

    monkey = peer_module._Driver._decide

    async def crash_through(self: Any, observation: Any) -> None:
        if isinstance(self.player, CrashingPlayer) and self.player.left == 0:
            raise Crash  # escapes run_peer, as a bug would: the process would die
        await monkey(self, observation)

    peer_module._Driver._decide = crash_through  # type: ignore[method-assign]
    try:
        with trio.fail_after(TIMEOUT * 10):  # virtual seconds
            async with trio.open_nursery() as nursery:
                for seat in range(4):
                    nursery.start_soon(one, seat)
    finally:
        peer_module._Driver._decide = monkey  # type: ignore[method-assign]
    assert results[1] is None
    # Killed and never resumed: signed gone, its partner plays its open hand to the end.
    others = [results[seat] for seat in (0, 2, 3)]
    assert all(r is not None for r in others)
    check_agreement([r for r in others if r is not None])
    for seat in (0, 2, 3):
        result = results[seat]
        assert result is not None and result.left == 1 and result.abandoned is None, result
        assert result.error is None
        verdict = verify_transcript(result.transcript)
        assert verdict.ok and verdict.finished and verdict.left is not None
        assert verdict.summary().startswith("OK: ") and "(seat 1 (p1 [" in (verdict.summary())
    assert any(isinstance(e, ActionTaken) and e.seat == 1 for e in events[3])
    waits = [w for st in statuses for w in st.waiting_for if w.seat == 1]
    assert any(1 in st.disconnected for st in statuses)
    overdue = [w for w in waits if w.overdue]
    assert overdue and "p1, disconnected): " in overdue[0].describe()
    assert min(w.abandon_in for w in waits) <= 1.0
    assert max(w.abandon_in for w in overdue) <= QUICK.grace + 1.0


class SilentPlayer(BotPlayer):
    """Plays its first few decisions, then never answers (a person gone for coffee)."""

    def __init__(self, decisions: int) -> None:
        super().__init__("random", seed=8)
        self.left = decisions

    async def decide(self, observation: Any) -> Any:
        self.left -= 1
        if self.left < 0:
            await trio.sleep_forever()
        return await super().decide(observation)


async def test_a_silent_seat_is_reported_then_abandoned_after_the_grace(
    tmp_path: Path, clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    statuses: list[list[PeerStatus]] = [[] for _ in range(4)]
    started = trio.current_time()
    left_at: list[float] = []

    def watch(event: object) -> None:
        if isinstance(event, SeatLeft):
            left_at.append(trio.current_time())

    with caplog.at_level(logging.WARNING, logger="belote_p2p.net.peer"):
        results, events = await play_table(
            "classic", tmp_path, config=QUICK, players={2: SilentPlayer(5)},
            on_status=statuses, timeout=TIMEOUT * 10, watch={0: watch},
        )  # fmt: skip
    elapsed = left_at[0] - started
    check_played_on(results, events, 2)
    # Deadline then grace: the others signed it gone once both had passed, not before.
    assert QUICK.person_deadline + QUICK.grace <= elapsed < QUICK.person_deadline + QUICK.grace + 60
    for seat in (0, 1, 3):
        overdue = [w for st in statuses[seat] for w in st.overdue]
        assert overdue and all(w.seat == 2 and w.decision and w.connected for w in overdue)
        assert any(w.describe().startswith("waiting for seat 2 (p2): ") for w in overdue)
    # Seat 2 sees its own countdown while it "thinks".
    assert any(w.seat == 2 for st in statuses[2] for w in st.waiting_for)
    assert "waiting for seat 2 (p2): 30 s left" in caplog.text
    assert "signing that it left" in caplog.text


class ChattingStaller(BotPlayer):
    """Plays its first few decisions, then never answers but sends a chat line every few
    seconds: filler that must not restart its deadline (a stall of hours, before)."""

    def __init__(self, decisions: int, control: PeerControl, every: float) -> None:
        super().__init__("random", seed=8)
        self.left, self.control, self.every = decisions, control, every
        self.chats = 0

    async def decide(self, observation: Any) -> Any:
        self.left -= 1
        while self.left < 0:
            await trio.sleep(self.every)
            self.control.chat(f"hmm {self.chats}")
            self.chats += 1
        return await super().decide(observation)


async def test_filler_does_not_restart_a_deadline(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    control = PeerControl()
    staller = ChattingStaller(5, control, every=QUICK.person_deadline / 2)
    started = trio.current_time()
    left_at: list[float] = []

    def watch(event: object) -> None:
        if isinstance(event, SeatLeft):
            left_at.append(trio.current_time())

    results, events = await play_table(
        "classic", tmp_path, config=QUICK, players={2: staller}, controls={2: control},
        timeout=TIMEOUT * 10, watch={0: watch},
    )  # fmt: skip
    assert staller.chats >= 3
    # Signed gone a deadline and a grace after its last delivery, chats or not.
    assert left_at[0] - started < QUICK.person_deadline + QUICK.grace + 60
    check_played_on(results, events, 2)


class LatePlayer(BotPlayer):
    """Answers its ``late``-th decision only after ``delay`` seconds."""

    def __init__(self, late: int, delay: float) -> None:
        super().__init__("random", seed=8)
        self.count, self.late, self.delay = 0, late, delay

    async def decide(self, observation: Any) -> Any:
        self.count += 1
        if self.count == self.late:
            await trio.sleep(self.delay)
        return await super().decide(observation)


async def test_a_lone_vote_is_kept_and_its_signer_plays_on(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """Seat 1's clock gives up on seat 3 long before the others' (a short grace stands for
    a clock that ran ahead, or a move it got late): it signs seat 3 gone alone. Seat 3 then
    plays: the vote lapses, seat 1 does not stop itself, nobody is signed out, and the game
    finishes with every record valid."""
    impatient = PeerConfig(
        person_deadline=QUICK.person_deadline, step_deadline=QUICK.step_deadline, grace=2.0,
        sync_interval=QUICK.sync_interval,
    )  # fmt: skip
    late = LatePlayer(5, QUICK.person_deadline + 10.0)
    results, _ = await play_table(
        "classic", tmp_path, target=101, config=QUICK, configs={1: impatient},
        players={3: late}, timeout=TIMEOUT * 10,
    )  # fmt: skip
    assert all(r.error is None and r.abandoned is None and r.fault is None for r in results), [
        (r.error, r.abandoned) for r in results
    ]
    record = read_transcript(results[1].transcript)
    votes = [Envelope.decode(e) for e in record.envelopes]
    assert any(e.type == "abandon" and e.body["seat"] == 3 for e in votes)
    for r in results:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.abandoned is None, verdict.summary()


async def test_dropped_connections_come_back_and_the_game_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test cuts TCP connections mid-game (0-2 in the first round, 1-3 and 0-3 later):
    the higher seat dials again, both sides sync, and the game ends as usual."""
    meshes: dict[int, Any] = {}
    real_mesh = peer_module.Mesh

    class RecordedMesh(real_mesh):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            meshes[self.seat] = self

    monkeypatch.setattr(peer_module, "Mesh", RecordedMesh)
    cut_points = {4: (0, 2), 12: (3, 1), 25: (0, 3)}  # after N actions seen by seat 0
    cuts: trio.MemorySendChannel[tuple[int, int]]
    cuts, cut_orders = trio.open_memory_channel[tuple[int, int]](10)
    actions = 0

    def watch(event: object) -> None:
        nonlocal actions
        if isinstance(event, ActionTaken):
            actions += 1
            if actions in cut_points:
                cuts.send_nowait(cut_points[actions])

    async def cutter() -> None:
        async for a, b in cut_orders:
            await meshes[a].drop(b)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(cutter)
        results, _ = await play_table("classic", tmp_path, watch={0: watch})
        nursery.cancel_scope.cancel()
    check_agreement(results)
    assert actions > max(cut_points)
    assert sum(r.reconnections for r in results) >= 2 * len(cut_points)
    for r in results:
        assert verify_transcript(r.transcript).ok


async def test_the_transcript_is_fsynced_once_per_step_that_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of our envelopes is fsynced before it leaves, and every round at its audit; a
    step that does both (the audit sends our key of the next round, or our ``done``) waits
    for the disk once: between two fsyncs of a game something was written."""
    log: dict[int, list[str]] = {}
    real_append, real_sync = TranscriptWriter.append, TranscriptWriter.sync

    def append(self: TranscriptWriter, envelope: bytes) -> None:
        log.setdefault(id(self), []).append("append")
        real_append(self, envelope)

    def sync(self: TranscriptWriter) -> None:
        log.setdefault(id(self), []).append("sync")
        real_sync(self)

    monkeypatch.setattr(TranscriptWriter, "append", append)
    monkeypatch.setattr(TranscriptWriter, "sync", sync)
    # To 501: the test needs two rounds, and with random deals a round 1 can reach 301.
    results, events = await play_table("classic", tmp_path, target=501)
    check_agreement(results)
    audits = sum(isinstance(e, RoundAudited) for e in events[0])
    assert audits >= 2 and len(log) == len(results)
    for calls in log.values():
        during = calls[1:-1]  # the header's fsync at the start, the close's at the end
        assert during.count("sync") >= audits
        assert not any(a == b == "sync" for a, b in itertools.pairwise(during))


async def test_each_rounds_secrets_are_kept_ahead_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save of deck secrets waits for the disk: the next round's are kept in a worker
    thread while a round is played, so that its start (our key) does not wait for it. Each
    round's are saved once, and the game uses them (it verifies)."""
    saves: list[tuple[int, int, bool]] = []  # (seat, round, in the main thread)
    real_save = FileSecrets.save

    def save(self: FileSecrets, round_number: int, key: bytes, seed: bytes) -> None:
        main = threading.current_thread() is threading.main_thread()
        saves.append((self.seat, round_number, main))
        real_save(self, round_number, key, seed)

    monkeypatch.setattr(FileSecrets, "save", save)
    results, events = await play_table("classic", tmp_path, target=501)  # two rounds at least
    check_agreement(results)
    for r in results:
        assert verify_transcript(r.transcript).ok
    played = {e.number for e in events[0] if isinstance(e, RoundDealt)}
    assert len(played) >= 2
    for seat in range(4):
        rounds = [n for s, n, _ in saves if s == seat]
        assert len(rounds) == len(set(rounds)) and set(rounds) >= played
    # Kept ahead off the main thread (a round's own save there remains, should the worker
    # be late: the lock keeps the two from racing, and each round is saved once).
    assert sum(not main for _, n, main in saves if n >= 1) >= 4


async def test_a_peer_that_keeps_asking_to_sync_is_answered_once_in_a_while(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """An answer can be the whole transcript: sync requests from one peer are answered at
    most every ``sync_answer_interval`` seconds; other frames are not affected."""
    definition, ids = make_table("classic")
    session = TableSession(definition, 0, ids[0])
    other = TableSession(definition, 1, ids[1], proposal=definition.propose(ids[0]))
    with TranscriptWriter(tmp_path / "t", definition, 0) as writer:
        config = PeerConfig(sync_answer_interval=0.5)
        driver = peer_module._Driver(session, 0, None, writer, config, None, None, [])  # type: ignore[arg-type]
        request = other.sync_request()
        assert not driver._too_soon_for_sync(Received(1, request))
        assert driver._too_soon_for_sync(Received(1, request))
        assert not driver._too_soon_for_sync(Received(2, request))  # another peer
        other.start()
        envelope = other.take_outbox()[0]
        assert not driver._too_soon_for_sync(Received(1, envelope))  # not a sync request
        autojump_clock.jump(0.6)
        assert not driver._too_soon_for_sync(Received(1, request))


async def test_sync_answers_to_one_seat_are_bounded_in_bytes_across_reconnections(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 22: the first request on each new connection is answered, so a peer that
    reconnects to ask again fetched a whole transcript each time. Its answers now come out
    of one byte budget per seat: the burst at once, then the rate."""
    definition, ids = make_table("classic")
    session = TableSession(definition, 0, ids[0], proposal=definition.propose(ids[0]))
    session.start()
    size = len(session.take_outbox()[0])  # what each answer holds: our table envelope
    with TranscriptWriter(tmp_path / "t", definition, 0) as writer:
        config = PeerConfig(sync_answer_burst=10 * size, sync_answer_rate=size)
        driver = peer_module._Driver(session, 0, None, writer, config, None, None, [])  # type: ignore[arg-type]
        request = encode_sync([0, 0, 0, 0], [])

        def ask(connections: range) -> int:
            driver._replies.clear()
            for connection in connections:
                driver._handle(Received(1, request, connection=connection))
            return sum(len(reply) for _, reply in driver._replies)

        assert ask(range(1, 41)) == 10 * size
        assert driver.counters.sync_ignored == 30
        autojump_clock.jump(3.0)
        assert ask(range(41, 81)) == 3 * size
        assert ask(range(81, 82)) == 0
        # Another seat has its own budget.
        driver._handle(Received(2, request, connection=100))
        assert [seat for seat, _ in driver._replies] == [2]


async def test_a_seat_that_times_a_silent_seat_late_joins_the_others_vote_within_its_grace(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """Seat 2 gives a silent seat far longer than the others (a deadline of 1,000 s: the
    clock of a seat resumed late, which starts timing afresh). Once seat 0 signed the
    silent seat gone at its point, seat 2 waits for it no longer than its grace: the seat
    is gone at every peer well before seat 2's own deadline, and only the others signed
    it (PROTOCOL.md §6.6)."""
    late = dataclasses.replace(QUICK, person_deadline=1000.0, step_deadline=1000.0)
    began = trio.current_time()
    results, _ = await play_table(
        "three-handed", tmp_path, config=QUICK, configs={2: late},
        players={1: SilentPlayer(5)}, timeout=3 * late.person_deadline,
    )  # fmt: skip
    took = trio.current_time() - began
    assert all(r.abandoned == 1 and r.error is None for r in results), [
        (r.abandoned, r.error) for r in results
    ]
    assert took < late.person_deadline, took
    for r in results:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.abandoned == 1, verdict.summary()


@pytest.mark.parametrize(("variant", "silent"), [("three-handed", 1), ("two-handed", 1)])
async def test_a_silent_seat_of_three_or_two_is_abandoned_by_all_the_others(
    variant: str, silent: int, tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    results, _ = await play_table(
        variant, tmp_path, config=QUICK, players={silent: SilentPlayer(5)},
        timeout=TIMEOUT * 10,
    )  # fmt: skip
    assert len(results) == RULE_SETS[variant].seats
    assert all(r.abandoned == silent for r in results), [(r.abandoned, r.error) for r in results]
    assert all(r.error is None and r.fault is None for r in results)
    for r in results:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.abandoned == silent, verdict.summary()
        abandons = [
            Envelope.decode(e).sender
            for e in read_transcript(r.transcript).envelopes
            if Envelope.decode(e).type == "abandon"
        ]
        # Every other seat signed it gone, and only they did.
        others = {s.key for i, s in enumerate(verdict.definition.seats) if i != silent}
        assert set(abandons) == others
