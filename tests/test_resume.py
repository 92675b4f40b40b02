"""Crash and resume: the deck secrets on disk, a peer killed and restarted in-process, and a
peer process killed with SIGKILL mid-round and restarted with ``belote-p2p resume``."""

from __future__ import annotations

import random
import signal
import stat
from pathlib import Path
from typing import Any

import pytest
import trio
from cheaters import Equivocate, Table
from helpers import (
    TABLE,
    Net,
    Process,
    SeededSecrets,
    check_agreement,
    cli_argv,
    make_table,
    open_listeners,
    start,
    table_sessions,
    until_seen,
)

from belote_p2p.app.home import Home, game_ended, unfinished_games
from belote_p2p.app.output import parse_result
from belote_p2p.game.rules import rule_set
from belote_p2p.net.peer import PeerResult, run_peer
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.events import ActionTaken
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.secretstore import FileSecrets, SecretStoreError, secrets_path
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import TranscriptError, TranscriptWriter, read_transcript
from belote_p2p.protocol.verify import verify_record, verify_transcript
from belote_p2p.protocol.wire import ZERO_HASH, Envelope

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


def test_file_secrets_are_kept_private_and_survive_a_restart(tmp_path: Path) -> None:
    store = FileSecrets(tmp_path / "secrets", TABLE, 2)
    assert store.load(0) is None
    store.save(0, b"k" * 32, b"s" * 32)
    store.save(1, b"K" * 32, b"S" * 32)
    path = secrets_path(tmp_path / "secrets", TABLE, 2)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700
    assert not list((tmp_path / "secrets").glob("*.tmp"))
    again = FileSecrets(tmp_path / "secrets", TABLE, 2)
    assert again.load(0) == (b"k" * 32, b"s" * 32)
    assert again.load(1) == (b"K" * 32, b"S" * 32)
    assert again.load(2) is None
    # Another seat's or table's file is not ours; a damaged one is refused.
    path.rename(secrets_path(tmp_path / "secrets", TABLE, 3))
    with pytest.raises(SecretStoreError, match="not the secrets file"):
        FileSecrets(tmp_path / "secrets", TABLE, 3)
    path.write_bytes(b"\xc1")
    with pytest.raises(SecretStoreError):
        FileSecrets(tmp_path / "secrets", TABLE, 2)


@pytest.mark.parametrize("variant", ["classic", "three-handed", "two-handed"])
async def test_a_peer_killed_in_process_resumes_and_the_game_finishes(
    variant: str, tmp_path: Path
) -> None:
    """Seat 1's nursery is cancelled after the tenth action (the process dies, as far as the
    table can tell); run_peer on the same transcript resumes it on the same port. At a
    table of four, three or two seats alike."""
    seats = rule_set(variant).seats
    listeners = await open_listeners(seats)
    definition, ids = make_table(variant, target=151, seed=9, listeners=listeners)
    transcripts = [tmp_path / "games" / f"seat{s}.transcript" for s in range(seats)]

    def secrets_of(seat: int) -> FileSecrets:
        return FileSecrets(tmp_path / "secrets", definition.table_id, seat)

    results: dict[int, PeerResult] = {}
    kill = trio.CancelScope()
    actions = 0

    def watch(event: object) -> None:
        nonlocal actions
        if isinstance(event, ActionTaken):
            actions += 1
            if actions == 10:
                kill.cancel()

    async def one(seat: int) -> None:
        player = BotPlayer("random", seed=seat)
        if seat != 1:
            results[seat] = await run_peer(
                definition, seat, ids[seat], player,
                transcript=transcripts[seat], listeners=[listeners[seat]],
                secrets=secrets_of(seat),
                proposal=definition.propose(ids[0]),
            )  # fmt: skip
            return
        with kill:
            await run_peer(
                definition, 1, ids[1], player,
                transcript=transcripts[1], listeners=[listeners[1]], on_event=watch,
                secrets=secrets_of(1),
                proposal=definition.propose(ids[0]),
            )  # fmt: skip
        assert kill.cancelled_caught
        before = read_transcript(transcripts[1]).envelopes
        assert not game_ended(definition, before)
        # Restarted: a new player, the same transcript and secrets (<home>/secrets).
        results[1] = await run_peer(
            definition, 1, ids[1], BotPlayer("random", seed=101), transcript=transcripts[1],
            secrets=secrets_of(1),
            proposal=definition.propose(ids[0]),
        )  # fmt: skip
        after = read_transcript(transcripts[1]).envelopes
        assert after[: len(before)] == before  # the record was only appended to

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for seat in range(seats):
                nursery.start_soon(one, seat)
    assert results[1].resumed and not results[0].resumed
    ordered = [results[s] for s in range(seats)]
    check_agreement(ordered)
    for r in ordered:
        verdict = verify_transcript(r.transcript)
        assert verdict.ok and verdict.finished, verdict.summary()
        assert verdict.state.scores == r.state.scores
    secrets = secrets_path(tmp_path / "secrets", definition.table_id, 1)
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600


# -- what counts as over ---------------------------------------------------------------------


def played(steps: int | None) -> tuple[TableDefinition, list[Identity], list[TableSession]]:
    """Four sessions of a classic table to 151 in memory: the whole game (``steps=None``)
    or its first ``steps`` deliveries."""
    definition, ids = make_table("classic", target=151, seed=12)
    sessions = table_sessions(definition, ids, deal_seed=4)
    net = Net(sessions, random.Random(3))
    if steps is None:
        net.run()
    else:
        net.start()
        for _ in range(steps):
            net.step()
    return definition, ids, sessions


def junk_fault(definition: TableDefinition, record: TableSession, signer: Identity) -> bytes:
    """A fault report validly signed by ``signer`` as its next envelope in ``record``'s
    view, accusing seat 1 with evidence that proves nothing."""
    seat = definition.roster.index(signer.public_key_bytes)
    chains = [record.tracker.chain(s) for s in range(4)]
    seen = [chain[-1].hash if chain else ZERO_HASH for chain in chains]
    body = {"type": "fault", "seat": 1, "evidence": [b"junk", bytes(64)]}
    return Envelope.create(
        signer, definition.table_id, len(chains[seat]), seen[seat], seen, body
    ).encode()


def record_of(session: TableSession) -> list[bytes]:
    return [e.encode() for e in session.transcript]


def test_a_finished_record_with_a_junk_fault_report_is_still_over() -> None:
    definition, ids, sessions = played(None)
    record = [*record_of(sessions[0]), junk_fault(definition, sessions[0], ids[2])]
    verdict = verify_record(definition, record)
    assert verdict.finished and verdict.fault is None, verdict.summary()
    assert game_ended(definition, record)


def test_an_unfinished_record_with_a_junk_fault_report_can_be_resumed(tmp_path: Path) -> None:
    definition, ids, sessions = played(150)
    assert sessions[0].ready and not sessions[0].finished
    record = [*record_of(sessions[0]), junk_fault(definition, sessions[0], ids[2])]
    assert not game_ended(definition, record)  # a peer's claim proves nothing
    home = Home(tmp_path)
    with TranscriptWriter(home.transcript(definition, 0), definition, 0) as writer:
        for data in record:
            writer.append(data)
    (found,) = unfinished_games(home, ids[0])
    assert found.envelopes == tuple(record)
    assert unfinished_games(home, ids[1]) == []  # another identity's game
    # The seat can indeed be rebuilt from it and play on.
    session = TableSession.resume(definition, 0, ids[0], record, SeededSecrets(4, 0))
    assert not session.finished and session.fault is None


def test_a_record_ends_on_what_it_proves() -> None:
    definition, _, sessions = played(150)
    base = record_of(sessions[0])
    assert not game_ended(definition, base)
    sessions[0].abandon(0)  # our own resignation: the others play on, our record ends
    assert game_ended(definition, record_of(sessions[0]), writer=0)
    assert not game_ended(definition, record_of(sessions[0]), writer=1)
    # A fault the replay finds itself: the cheater's own two signatures at one seq.
    t = Table(Equivocate())
    t.run()
    assert t.sessions[0].fault is not None
    assert game_ended(t.definition, record_of(t.sessions[0]))
    # Only two seats signing that a third left: not over.
    _, _, sessions = played(150)
    for seat in (0, 2):
        sessions[seat].abandon(1)
    votes = [e for e in record_of(sessions[2]) if Envelope.decode(e).type == "abandon"]
    assert not game_ended(definition, [*record_of(sessions[0]), *votes])


# -- real processes -------------------------------------------------------------------------


async def wait_for_play(transcript_dir: Path) -> None:
    """Until a transcript in ``transcript_dir`` holds a bid: the first round is under way.
    A transcript the peer has just created may hold nothing yet, not even its header."""
    while True:
        for path in transcript_dir.glob("*.transcript"):
            try:
                envelopes = read_transcript(path).envelopes
            except TranscriptError:
                continue  # created, its header not written yet: read it again later
            for data in envelopes:
                if Envelope.decode(data).type in ("bid", "play"):
                    return
        await trio.sleep(0.02)


COMMON = ["--bot", "random", "--bind", "127.0.0.1", "--quiet"]
"""The options of every peer process of these tests."""


async def start_host(
    nursery: trio.Nursery, tmp_path: Path, home: Path, *options: str
) -> tuple[Process, str]:
    """``belote-p2p host`` (a random bot, seed 1, any port) with ``options``, once its lobby
    is open; and the lobby's address."""
    args = cli_argv("host", "--port", "0", *COMMON[:4], "--seed", "1", "--name", "Host",
                    "--home", home, *options)  # fmt: skip
    host = await start(nursery, "host", args, tmp_path)
    await until_seen(host, "Others join with")
    return host, host.output.split("Lobby listening on ")[1].split()[0]


async def kill(proc: Process) -> None:
    """SIGKILL, and until the process is gone."""
    proc.process.send_signal(signal.SIGKILL)
    assert await proc.process.wait() == -signal.SIGKILL


async def resume(nursery: trio.Nursery, tmp_path: Path, home: Path, name: str) -> Process:
    """``belote-p2p resume`` of the unfinished game in ``home``."""
    return await start(nursery, name, cli_argv("resume", "--home", home, "--seed", "99", *COMMON),
                       tmp_path)  # fmt: skip


def exited_cleanly(procs: list[Process], tmp_path: Path) -> dict[str, str]:
    """Every process exited with 0; their standard errors."""
    statuses = {p.name: p.process.returncode for p in procs}
    stderr = {p.name: (tmp_path / f"{p.name}.stderr").read_text() for p in procs}
    assert all(code == 0 for code in statuses.values()), (statuses, stderr)
    return stderr


async def test_a_peer_process_killed_mid_round_restarts_and_the_game_finishes(
    tmp_path: Path,
) -> None:
    homes = [tmp_path / f"home{k}" for k in range(4)]
    procs: list[Process] = []
    with trio.fail_after(50):
        async with trio.open_nursery() as nursery:
            host, lobby = await start_host(nursery, tmp_path, homes[0], "--target", "301")
            procs.append(host)
            for k in (1, 2, 3):
                args = cli_argv("join", lobby, "--name", f"P{k}", "--home", homes[k], "--seed", k)
                procs.append(await start(nursery, f"join{k}", args + COMMON, tmp_path))
            await wait_for_play(homes[2] / "games")
            await kill(procs[2])
            procs[2] = await resume(nursery, tmp_path, homes[2], "resumed2")
            for proc in procs:
                await proc.process.wait()
    exited_cleanly(procs, tmp_path)
    results: list[dict[str, Any]] = []
    for proc in procs[1:]:
        result = parse_result(proc.output)
        assert result is not None and result["ok"], proc.output
        results.append(result)
    assert len({tuple(r["scores"]) for r in results}) == 1
    assert max(results[0]["scores"]) >= 301
    assert len({r["seat"] for r in results}) == 3
    transcripts = [Path(r["transcript"]) for r in results]
    transcripts += list((homes[0] / "games").glob("*.transcript"))
    assert len(transcripts) == 4
    for path in transcripts:
        verdict = verify_transcript(path)
        assert verdict.ok and verdict.finished, (path, verdict.summary())
        assert list(verdict.state.scores) == results[0]["scores"]


async def test_joiners_outlive_their_host_and_relay_and_play_on_after_its_resume(
    tmp_path: Path,
) -> None:
    """A three-handed table whose two joiners do not listen: their link goes through the
    host's port, which is also their relay. The host is killed (SIGKILL) mid-round: the
    joiners do not end; each says, one line per try, that it waits for the relay; once
    ``belote-p2p resume`` brings the host back on its port, the game finishes and the three
    records verify alike."""
    homes = [tmp_path / f"home{k}" for k in range(3)]
    procs: list[Process] = []
    with trio.fail_after(150):
        async with trio.open_nursery() as nursery:
            host, lobby = await start_host(
                nursery, tmp_path, homes[0], "--variant", "three-handed", "--target", "151",
                "--no-beacon",
            )  # fmt: skip
            procs.append(host)
            for k in (1, 2):
                args = cli_argv("join", lobby, "--name", f"P{k}", "--home", homes[k], "--seed", k,
                                "--no-listen", *COMMON)  # fmt: skip
                procs.append(await start(nursery, f"join{k}", args, tmp_path))
            await wait_for_play(homes[0] / "games")
            await kill(host)
            # Each joiner waits for the relay (the host's port), said once (not per try).
            for k in (1, 2):
                await wait_for_text(tmp_path / f"join{k}.stderr", "1st try")
            assert all(p.process.returncode is None for p in procs[1:])
            procs[0] = await resume(nursery, tmp_path, homes[0], "resumed0")
            for proc in procs:
                await proc.process.wait()
    stderr = exited_cleanly(procs, tmp_path)
    for k in (1, 2):
        lines = [line for line in stderr[f"join{k}"].splitlines() if "waiting for seat" in line]
        assert lines and all("the relay at 127.0.0.1:" in line for line in lines), lines
        assert len(lines) <= 3, lines  # a change of state each, not a line per try
        assert "Traceback" not in stderr[f"join{k}"]
    results = [parse_result(proc.output) for proc in procs]
    assert all(r is not None and r["ok"] for r in results), [p.output for p in procs]
    transcripts = [Path(r["transcript"]) for r in results if r is not None]
    verdicts = [verify_transcript(path) for path in transcripts]
    assert all(v.ok and v.finished for v in verdicts), [v.summary() for v in verdicts]
    assert len({tuple(v.state.scores) for v in verdicts}) == 1


async def wait_for_text(path: Path, text: str) -> None:
    """Until the file at ``path`` (a child's standard error) holds ``text``."""
    while not path.exists() or text not in path.read_text(errors="replace"):
        await trio.sleep(0.05)
