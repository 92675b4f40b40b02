"""Four peers play whole games over real loopback TCP, in one process."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from helpers import TIMEOUT, check_agreement, make_table, open_listeners, play_table

import belote_p2p.net.peer as peer_module
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.peer import (
    PeerConfig,
    PeerResult,
    PeerStatus,
    run_peer,
)
from belote_p2p.net.transport import Received
from belote_p2p.players.player import BotPlayer, Resigned
from belote_p2p.protocol.events import ActionTaken, RoundAudited
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.transcript import TranscriptWriter, read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope


@pytest.mark.parametrize("variant", sorted(RULE_SETS))
async def test_four_peers_play_a_whole_game_over_tcp(variant: str, tmp_path: Path) -> None:
    results, events = await play_table(variant, tmp_path)
    check_agreement(results)
    for seat in range(4):
        audits = [e for e in events[seat] if isinstance(e, RoundAudited)]
        assert audits and all(a.report.clean for a in audits)


async def test_bad_envelopes_are_dropped_and_the_game_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 3 sends garbage, a forged signature and another table's envelope before each
    real one for a while; the peers drop them and the honest game still finishes."""
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

        async def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == 3 and EvilMesh.injected < 3 * len(bad_frames):
                await super().broadcast(bad_frames[EvilMesh.injected % len(bad_frames)](payload))
                EvilMesh.injected += 1
            result: frozenset[int] = await super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", EvilMesh)
    results, _ = await play_table("coinche", tmp_path)
    check_agreement(results)
    assert EvilMesh.injected == 9
    for r in results[:3]:
        assert r.rejected == (0, 0, 0, 9)
    assert results[3].rejected == (0, 0, 0, 0)


async def test_too_many_bad_frames_end_the_game_without_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mesh = peer_module.Mesh

    class FloodMesh(real_mesh):  # type: ignore[misc, valid-type]
        async def broadcast(self, payload: bytes) -> frozenset[int]:
            if self.seat == 3:
                for _ in range(3):
                    await super().broadcast(b"junk")
            result: frozenset[int] = await super().broadcast(payload)
            return result

    monkeypatch.setattr(peer_module, "Mesh", FloodMesh)
    # Seat 3, left alone, waits for the others to come back, then gives up.
    quick = PeerConfig(max_rejected=4, step_deadline=0.5, person_deadline=0.5, grace=0.5)
    results, _ = await play_table("classic", tmp_path, config=quick)
    assert not any(r.ok for r in results)
    assert all(r.fault is None for r in results)
    assert any(r.error and "invalid frames" in r.error for r in results[:3])
    # What was accepted is still a readable record.
    for r in results:
        assert read_transcript(r.transcript).envelopes


class StoppingPlayer(BotPlayer):
    """Plays its first few decisions, then raises ``error`` (a closed terminal, or a person
    who resigns)."""

    def __init__(self, decisions: int, error: Exception) -> None:
        super().__init__("random", seed=5)
        self.left = decisions
        self.error = error

    async def decide(self, observation: Any) -> Any:
        self.left -= 1
        if self.left < 0:
            raise self.error
        return await super().decide(observation)


async def test_a_failed_player_resigns_and_the_game_ends_abandoned(tmp_path: Path) -> None:
    results, _ = await play_table(
        "classic", tmp_path, players={2: StoppingPlayer(6, EOFError("the terminal closed"))}
    )
    assert all(r.abandoned == 2 for r in results), [(r.abandoned, r.error) for r in results]
    assert not any(r.ok for r in results)
    assert "EOFError" in (results[2].error or "")
    assert all(r.error is None and r.fault is None for r in (results[0], results[1], results[3]))
    contents = [{Envelope.decode(e).hash for e in read_transcript(r.transcript).envelopes}
                for r in results]  # fmt: skip
    assert all(c == contents[0] for c in contents)


async def test_a_resignation_ends_the_game_abandoned_without_an_error(tmp_path: Path) -> None:
    results, _ = await play_table(
        "classic", tmp_path, players={1: StoppingPlayer(5, Resigned("the player resigned"))}
    )
    assert all(r.abandoned == 1 for r in results), [(r.abandoned, r.error) for r in results]
    assert results[1].resigned and results[1].error is None and not results[1].ok
    assert not any(r.resigned for r in (results[0], results[2], results[3]))
    assert all(r.error is None and r.fault is None for r in results)
    verdict = verify_transcript(results[0].transcript)
    assert verdict.ok and verdict.abandoned == 1


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps ahead whenever every task has waited 10 ms of real time: a
    silence of minutes passes in a moment, while the loopback traffic (microseconds) and the
    bots' threads keep their order."""
    return trio.testing.MockClock(autojump_threshold=0.01)


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

    async def one(seat: int) -> None:
        player = CrashingPlayer(3) if seat == 1 else BotPlayer("random", seed=seat)
        try:
            results[seat] = await run_peer(
                definition, seat, ids[seat], player,
                transcript=tmp_path / f"seat{seat}.transcript", listeners=[listeners[seat]],
                secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
                proposal=definition.propose(ids[0]),
                config=QUICK, on_status=statuses.append if seat == 0 else None,
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
    for seat in (0, 2, 3):
        result = results[seat]
        assert result is not None and result.abandoned == 1, result
        assert result.error is None
        verdict = verify_transcript(result.transcript)
        assert verdict.ok and verdict.abandoned == 1
        assert verdict.summary().startswith("ABANDONED by seat 1")
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
    with caplog.at_level(logging.WARNING, logger="belote_p2p.net.peer"):
        results, _ = await play_table(
            "classic", tmp_path, config=QUICK, players={2: SilentPlayer(5)},
            on_status=statuses, timeout=TIMEOUT * 10,
        )  # fmt: skip
    elapsed = trio.current_time() - started
    assert all(r.abandoned == 2 for r in results), [(r.abandoned, r.error) for r in results]
    assert all(r.error is None and r.fault is None for r in results)
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
    for r in results:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.abandoned == 2, verdict.summary()
        assert verdict.summary().startswith("ABANDONED by seat 2")


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
