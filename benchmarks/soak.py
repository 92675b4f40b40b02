"""Soak: many tables of four bot peers at once on loopback, with connections dropped at random.

    python benchmarks/soak.py [--tables 25] [--target 501] [--procs N] [--drop-every 2.0]
                              [--variant classic] [--seed S] [--timeout 900]

Every peer is a real :func:`belote_p2p.net.peer.run_peer` (TCP mesh, handshake, signed envelopes,
the deck protocol, transcripts on disk, fsync) with a random bot. The tables are spread over
``--procs`` processes (default: one per core, at most one per table), each running its
tables concurrently in one trio loop: the work is CPU-bound (Ed25519 and the deck protocol's
group operations) and one process is one core, so a few processes are the honest way to run
100 peers at once on one machine, while each process still holds dozens of peers side by
side.

Connection drops: the mesh reconnects a lost connection (the higher seat dials again and
both sides exchange sync requests), so a chaos task per table closes one of its live
connections (``Mesh.drop``) every ``--drop-every`` seconds on average (0: no drops). A drop
that the game survives is a fault survived; a table that does not finish is reported.

Records: after the games, every transcript is verified offline
(:func:`belote_p2p.protocol.verify.verify_transcript`); a transcript that does not verify as a
finished game, or holds fewer audited rounds than the peer played, is a record lost (it must
be 0). Memory: the peak resident set of each process divided by the peers it ran (an upper
bound per peer: the interpreter and libraries are counted in it).

Prints a readable report and, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import trio

import belote_p2p.net.peer as peer_module
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.peer import PeerConfig, PeerResult, run_peer
from belote_p2p.net.transport import Mesh
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.verify import verify_transcript


@dataclass
class TableReport:
    table: int
    finished: bool
    seconds: float
    rounds: int
    scores: list[int]
    drops: int
    errors: list[str] = field(default_factory=list)
    records_lost: int = 0


@dataclass
class ProcessReport:
    tables: list[TableReport]
    peers: int
    peak_rss_bytes: int


class _Meshes:
    """The meshes of this process, by table id, as run_peer makes them."""

    by_table: dict[bytes, list[Mesh]] = {}  # noqa: RUF012


class RecordingMesh(Mesh):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Meshes.by_table.setdefault(self.table, []).append(self)


async def chaos(table_id: bytes, rng: random.Random, every: float, report: TableReport) -> None:
    """Close a random live connection of the table now and then."""
    while True:
        await trio.sleep(rng.expovariate(1 / every))
        meshes = [m for m in _Meshes.by_table.get(table_id, []) if m.peers]
        if not meshes:
            continue
        mesh = rng.choice(meshes)
        await mesh.drop(rng.choice(sorted(mesh.peers)))
        report.drops += 1


async def play_table(
    index: int, args: argparse.Namespace, home: Path, report: TableReport
) -> list[PeerResult | None]:
    listeners = [(await trio.open_tcp_listeners(0, host="127.0.0.1"))[0] for _ in range(4)]
    ids = [Identity.from_seed(bytes([index % 256, index // 256, i]) + bytes(29)) for i in range(4)]
    seats = tuple(
        Seat(f"t{index}p{i}", ids[i].public_key_bytes,
             f"127.0.0.1:{listeners[i].socket.getsockname()[1]}")
        for i in range(4)
    )  # fmt: skip
    table_id = index.to_bytes(16, "big")
    rules = RULE_SETS[args.variant].with_(target=args.target)
    definition = TableDefinition(table_id, rules, seats)
    config = PeerConfig(
        bot_seats=frozenset(range(4)), bot_deadline=30.0, step_deadline=30.0, grace=120.0
    )
    results: list[PeerResult | None] = [None] * 4
    rng = random.Random(f"{args.seed}/{index}")

    async def one(seat: int) -> None:
        try:
            results[seat] = await run_peer(
                definition, seat, ids[seat], BotPlayer("random", seed=rng.randrange(2**32)),
                transcript=home / f"table{index}-seat{seat}.transcript",
                listeners=[listeners[seat]], config=config,
                secrets=FileSecrets(home / "secrets", definition.table_id, seat),
                proposal=definition.propose(ids[0]),
            )  # fmt: skip
        except Exception as exc:  # reported, not raised: one table must not stop the others
            report.errors.append(f"seat {seat}: {exc!r}")

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        if args.drop_every > 0:
            nursery.start_soon(
                chaos, table_id, random.Random(rng.random()), args.drop_every, report
            )
        async with trio.open_nursery() as players:
            for seat in range(4):
                players.start_soon(one, seat)
        nursery.cancel_scope.cancel()
    report.seconds = time.perf_counter() - start
    _Meshes.by_table.pop(table_id, None)
    return results


def check_records(results: list[PeerResult | None], report: TableReport) -> None:
    finals = set()
    for seat, r in enumerate(results):
        if r is None:
            report.records_lost += 1
            continue
        if not r.ok:
            report.errors.append(f"seat {seat}: fault={r.fault} error={r.error}")
        verdict = verify_transcript(r.transcript)
        played = len(r.state.history)
        if not verdict.ok or not verdict.finished or len(verdict.rounds) < played:
            report.records_lost += 1
            report.errors.append(f"seat {seat}: transcript: {verdict.summary()}")
        finals.add(tuple(verdict.state.scores))
        report.rounds = max(report.rounds, played)
        report.scores = list(r.state.scores)
    report.finished = all(r is not None and r.ok for r in results) and len(finals) == 1


def run_process(tables: list[int], args: argparse.Namespace) -> ProcessReport:
    logging.basicConfig(level=logging.ERROR)
    peer_module.Mesh = RecordingMesh  # type: ignore[misc]
    home = Path(tempfile.mkdtemp(prefix="belote-soak-"))
    reports = [TableReport(i, False, 0.0, 0, [0, 0], 0) for i in tables]

    async def main() -> None:
        with trio.fail_after(args.timeout):
            async with trio.open_nursery() as nursery:
                for index, report in zip(tables, reports, strict=True):

                    async def table(index: int = index, report: TableReport = report) -> None:
                        results = await play_table(index, args, home, report)
                        check_records(results, report)

                    nursery.start_soon(table)

    trio.run(main)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return ProcessReport(reports, 4 * len(tables), rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=25)
    parser.add_argument("--target", type=int, default=501)
    parser.add_argument("--variant", default="classic", choices=sorted(RULE_SETS))
    parser.add_argument("--procs", type=int, default=0, help="processes (default: cores)")
    parser.add_argument(
        "--drop-every", type=float, default=2.0,
        help="mean seconds between two dropped connections per table (0: none)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    procs = args.procs or min(os.cpu_count() or 1, args.tables)
    shares = [list(range(args.tables))[p::procs] for p in range(procs)]
    start = time.perf_counter()
    if procs == 1:
        processes = [run_process(shares[0], args)]
    else:
        with multiprocessing.get_context("spawn").Pool(procs) as pool:
            processes = pool.starmap(run_process, [(s, args) for s in shares])
    elapsed = time.perf_counter() - start
    tables = sorted((t for p in processes for t in p.tables), key=lambda t: t.table)
    finished = sum(t.finished for t in tables)
    drops = sum(t.drops for t in tables)
    survived = sum(t.drops for t in tables if t.finished)
    lost = sum(t.records_lost for t in tables)
    per_peer = max(p.peak_rss_bytes / p.peers for p in processes)
    print(f"Soak: {args.tables} tables of 4 bot peers ({4 * args.tables} peers) to "
          f"{args.target}, {args.variant}, {procs} process(es), {elapsed:.1f} s")  # fmt: skip
    for t in tables:
        state = "finished" if t.finished else "NOT FINISHED"
        print(f"  table {t.table:3d}: {state}, {t.rounds} rounds, {t.scores[0]}-{t.scores[1]}, "
              f"{t.seconds:.1f} s, {t.drops} drops, {t.records_lost} records lost")  # fmt: skip
        for e in t.errors[:4]:
            print(f"      {e}")
    print(f"Games finished: {finished}/{len(tables)}")
    print(f"Connection drops injected: {drops}; survived (in finished games): {survived}")
    print(f"Records lost (transcripts that fail to verify or miss rounds): {lost}")
    print(f"Peak memory per peer (process peak RSS / its peers): {per_peer / 2**20:.1f} MiB")
    figures = {
        "tables": args.tables,
        "peers": 4 * args.tables,
        "target": args.target,
        "variant": args.variant,
        "processes": procs,
        "seconds": round(elapsed, 2),
        "games_finished": finished,
        "rounds": sum(t.rounds for t in tables),
        "drops_injected": drops,
        "drops_survived": survived,
        "records_lost": lost,
        "peak_rss_per_peer_mib": round(per_peer / 2**20, 2),
        "peak_rss_per_process_mib": [round(p.peak_rss_bytes / 2**20, 1) for p in processes],
        "table_seconds": [round(t.seconds, 2) for t in tables],
        "unfinished": [asdict(t) for t in tables if not t.finished],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
