"""Four peers on loopback, one of them attacking: what each attack costs the honest peers.

    python benchmarks/flood.py [--variant classic] [--target 501] [--attacks junk,...]

Each peer is its own process (``run_peer``, seeded random bots and deck secrets, so that
every table plays the same game; the real mesh and deck protocol),
so that each honest peer's memory is its own: its peak resident set (``VmHWM``) and how
much it grew during the game (from the resident set just before the mesh opens). Seat 3
attacks; seats 0 to 2 are honest. For each attack the report gives the honest peers' largest
peak and growth, whether each finished the game (every transcript is also checked with
``verify``), the time until the game was over for the last of them (and until the last
returned: a finished peer lingers a few seconds for a ``bye`` the attacker's dropped
connections lost), and the frames they refused and connections they saw come back.

The attacks (seat 3 plays its own game honestly meanwhile):

* ``none``: no attack, the reference;
* ``junk``: before each of its envelopes, 50 frames of random bytes to every peer, on every
  connection it gets (each costs it that connection);
* ``oversized``: on every connection, after a few frames, a frame header announcing more than
  the frame limit, then 64 KiB of filler;
* ``sync``: before each of its envelopes, 200 sync requests for everything (``have`` all 0)
  to every peer;
* ``slow``: never reads from seat 0 once connected (it hears of seat 0's moves from the
  others' sync answers) and keeps asking seat 0 for everything, so that seat 0's frames to
  it pile up;
* ``signed``: after its first bid or card, 100 validly signed envelopes chained after it, each a
  ``fault`` report carrying 60 KiB of padding (6 MiB to each peer, within the attacker's own
  send queue; each under the size cap of PROTOCOL.md §6.5, but more than its two per game);
  then it signs nothing more. The sessions bound them: the game stops with a fault of seat 3.

Prints a readable report; the last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import trio

import belote_p2p.net.peer as peer_module
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.peer import PeerConfig, run_peer
from belote_p2p.net.transport import ConnectionClosed, FramedStream, Link, Mesh
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.events import ActionTaken, GameOver
from belote_p2p.protocol.group import scalar_bytes
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import DEFAULT_MAX_FRAME, Envelope, decode, encode

ATTACKER = 3
ATTACKS = ("none", "junk", "oversized", "sync", "slow", "signed")
CONFIG = PeerConfig(linger=5.0)
"""The peers' settings: the defaults, but a finished peer waits 5 s (not 60) for a ``bye``."""
SYNC_ALL = encode({"type": "sync", "have": [0, 0, 0, 0], "want": []})


def identity(seat: int) -> Identity:
    return Identity.from_seed(bytes([200, seat]) * 16)


class SeededSecrets:
    """Each round's deck secrets drawn from a seed: every table of the benchmark deals the
    same cards, and with seeded bots plays the same game, attack or not."""

    def __init__(self, seat: int) -> None:
        self.seat = seat

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        rng = random.Random(f"flood/{self.seat}/{round_number}")
        return scalar_bytes(rng.randrange(1, 2**250)), rng.randbytes(32)

    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None:
        pass


def memory_kib() -> tuple[int, int]:
    """This process's resident set and its peak so far, in KiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


# -- the attacker's mesh -----------------------------------------------------------------------


class AfterHandshake:
    """A link that passes the handshake's frames (two each way) through untouched."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.sent = 0
        self.received = 0

    async def send(self, payload: bytes) -> None:
        self.sent += 1
        await self.link.send(payload)

    async def receive(self) -> bytes:
        self.received += 1
        return await self.link.receive()

    async def aclose(self) -> None:
        await self.link.aclose()


class OversizedLink(AfterHandshake):
    """Sends an oversized frame header (and filler) as its sixth frame."""

    async def send(self, payload: bytes) -> None:
        if self.sent == 5 and isinstance(self.link, FramedStream):
            header = (DEFAULT_MAX_FRAME + 1).to_bytes(4, "big")
            try:
                await self.link.stream.send_all(header + bytes(65536))
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise ConnectionClosed("closed") from exc
        await super().send(payload)


class DeafLink(AfterHandshake):
    """Stops reading once the handshake is done."""

    async def receive(self) -> bytes:
        if self.received >= 2:
            await trio.sleep_forever()
        return await super().receive()


class AttackerMesh(Mesh):
    attack = "none"
    rng = random.Random(3)
    flooded = False

    async def attach(self, link: Link, *, peer_seat: int | None) -> None:
        if self.attack == "oversized":
            link = OversizedLink(link)
        elif self.attack == "slow" and peer_seat == 0:
            if isinstance(link, FramedStream) and isinstance(link.stream, trio.SocketStream):
                # A small window: seat 0's frames pile up in its own queue, not in ours.
                link.stream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            link = DeafLink(link)
        await super().attach(link, peer_seat=peer_seat)

    def broadcast(self, payload: bytes) -> frozenset[int]:
        if self.attack == "signed":
            return self._signed_flood(payload)
        extra: list[tuple[int, bytes]] = []
        if self.attack == "junk":
            extra = [(s, self.rng.randbytes(self.rng.randrange(1, 300))) for s in (0, 1, 2)] * 50
        elif self.attack == "sync":
            extra = [(s, SYNC_ALL) for s in (0, 1, 2)] * 200
        elif self.attack == "slow":
            extra = [(0, SYNC_ALL)]
        for seat, frame in extra:
            try:
                self.send(seat, frame)
            except ConnectionClosed:
                continue
        return super().broadcast(payload)

    def _signed_flood(self, payload: bytes) -> frozenset[int]:
        if AttackerMesh.flooded:
            return frozenset()  # signs nothing more: its own next envelopes would clash
        missed = super().broadcast(payload)
        last = Envelope.decode(payload)
        if last.type not in ("bid", "play"):
            return missed
        AttackerMesh.flooded = True
        body = {"type": "fault", "seat": 1, "evidence": [], "pad": bytes(60 << 10)}
        for _ in range(100):
            seen = list(last.seen)
            seen[ATTACKER] = last.hash
            last = Envelope.create(self.identity, self.table, last.seq + 1, last.hash, seen, body)
            super().broadcast(last.encode())
        return missed


# -- one peer (a child process) ----------------------------------------------------------------


async def play_peer(seat: int, attack: str, directory: Path, fd: int | None) -> dict[str, Any]:
    definition = TableDefinition.from_wire(decode((directory / "table").read_bytes()))
    listeners = None
    if fd is not None:
        sock = trio.socket.from_stdlib_socket(socket.socket(fileno=fd))
        listeners = [trio.SocketListener(sock)]
    config = CONFIG
    if seat == ATTACKER:
        AttackerMesh.attack = attack
        peer_module.Mesh = AttackerMesh  # type: ignore[misc]
        if attack == "slow":
            # Deaf to seat 0, it hears of seat 0's moves through the others' sync answers:
            # it asks them often, so that its own game does not crawl.
            config = PeerConfig(linger=CONFIG.linger, sync_interval=0.25)
    over: list[float] = []
    actions: list[tuple[int, float]] = []

    def on_event(event: object) -> None:
        if isinstance(event, GameOver) and not over:
            over.append(time.perf_counter())
        elif isinstance(event, ActionTaken):
            actions.append((event.seat, time.monotonic()))  # one clock for every process

    rss_before, _ = memory_kib()
    start = time.perf_counter()
    result = await run_peer(
        definition, seat, identity(seat), BotPlayer("random", seed=seat),
        transcript=directory / f"seat{seat}.transcript", listeners=listeners,
        secrets=SeededSecrets(seat), proposal=definition.propose(identity(0)),
        on_event=on_event, config=config,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    _, peak = memory_kib()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    verdict = verify_transcript(result.transcript)
    return {
        "seat": seat,
        "finished": result.finished,
        "verdict": verdict.summary().split(":")[0],
        "abandoned": result.abandoned,
        "error": result.error,
        "fault": None if result.fault is None else result.fault.reason,
        "rejected": list(result.rejected),
        "reconnections": result.reconnections,
        "sync_ignored": result.sync_ignored,
        "over_s": round(over[0] - start, 2) if over else None,
        "returned_s": round(elapsed, 2),
        "rss_peak_kib": peak,
        "rss_growth_kib": peak - rss_before,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "actions": actions,
    }


def child(args: argparse.Namespace) -> None:
    out = trio.run(play_peer, args.peer, args.attack, Path(args.dir), args.fd)
    print(json.dumps(out), flush=True)


# -- one table (four child processes) ----------------------------------------------------------


def run_table(attack: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="belote-flood-") as tmp:
        directory = Path(tmp)
        socks = []
        for _ in range(3):  # seat 3 only dials
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(16)
            socks.append(s)
        ports = [s.getsockname()[1] for s in socks] + [1]
        seats = tuple(
            Seat(f"p{k}", identity(k).public_key_bytes, f"127.0.0.1:{ports[k]}") for k in range(4)
        )
        rules = RULE_SETS[args.variant].with_(target=args.target)
        definition = TableDefinition(bytes([7]) * 16, rules, seats)
        (directory / "table").write_bytes(encode(definition.to_wire()))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "plugins")])
        procs = []
        for seat in range(4):
            cmd = [sys.executable, __file__, "--peer", str(seat), "--attack", attack,
                   "--dir", str(directory)]  # fmt: skip
            fds: tuple[int, ...] = ()
            if seat < 3:
                cmd += ["--fd", str(socks[seat].fileno())]
                fds = (socks[seat].fileno(),)
            procs.append(
                subprocess.Popen(
                    cmd,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    pass_fds=fds,
                    env=env,
                )
            )
        for s in socks:
            s.close()
        start = time.perf_counter()
        honest = []
        try:
            for proc in procs[:3]:
                left = max(1.0, args.timeout - (time.perf_counter() - start))
                out, _ = proc.communicate(timeout=left)
                lines = [line for line in out.splitlines() if line.startswith("{")]
                honest.append(json.loads(lines[-1]) if lines else {"error": "no result"})
        except subprocess.TimeoutExpired:
            honest.append({"error": f"no result within {args.timeout} s"})
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return summarise(attack, honest)


def action_latencies(honest: list[dict[str, Any]]) -> list[float]:
    """For each bid or card of an honest seat: seconds from its own peer applying it to the
    last of the two other honest peers applying it (the pace between honest seats)."""
    seen = [h.get("actions", []) for h in honest]
    out = []
    for k in range(min(len(s) for s in seen)):
        actor = seen[0][k][0]
        if actor == ATTACKER:
            continue
        times = {h["seat"]: seen[i][k][1] for i, h in enumerate(honest)}
        out.append(max(t for seat, t in times.items() if seat != actor) - times[actor])
    return sorted(out)


def summarise(attack: str, honest: list[dict[str, Any]]) -> dict[str, Any]:
    complete = len(honest) == 3 and all("seat" in h for h in honest)
    latencies = action_latencies(honest) if complete else []
    peaks = [h.get("rss_peak_kib", 0) for h in honest]
    growths = [h.get("rss_growth_kib", 0) for h in honest]
    overs = [h.get("over_s") for h in honest]
    return {
        "attack": attack,
        "finished": complete and all(h["finished"] for h in honest),
        "verdicts": [h.get("verdict") for h in honest],
        "over_s": max(o for o in overs if o is not None) if all(overs) else None,
        "returned_s": max(h.get("returned_s", 0) for h in honest),
        "peak_rss_mib": round(max(peaks) / 1024, 1),
        "peak_growth_mib": round(max(growths) / 1024, 1),
        "cpu_s": max(h.get("cpu_s", 0) for h in honest),
        "honest_actions": len(latencies),
        "latency_median_ms": round(1000 * latencies[len(latencies) // 2], 1) if latencies else None,
        "latency_max_ms": round(1000 * latencies[-1], 1) if latencies else None,
        "rejected": sum(h.get("rejected", [0] * 4)[ATTACKER] for h in honest),
        "reconnections": sum(h.get("reconnections", 0) for h in honest),
        "sync_ignored": sum(h.get("sync_ignored", 0) for h in honest),
        "errors": [h.get("error") for h in honest if h.get("error")],
    }


# -- the report --------------------------------------------------------------------------------


def report(rows: list[dict[str, Any]]) -> None:
    """The table; ``growth`` is the largest honest peer's peak resident set minus its size
    before the game, ``CPU`` the busiest honest peer's CPU time (the attacker's own CPU
    shares the machine's two cores: the times include it), ``pace`` the median and largest
    delay of an honest seat's action to the other two honest peers."""
    print(f"{'attack':<10} {'finished':<9} {'over':>7} {'returned':>9} {'peak RSS':>9} "
          f"{'growth':>8} {'CPU':>7} {'pace':>15} {'refused':>8} {'reconn.':>8} "
          f"{'sync ign.':>9}")  # fmt: skip
    for r in rows:
        over = f"{r['over_s']:.1f} s" if r["over_s"] is not None else "-"
        memory = f"{r['peak_rss_mib']:>5.1f} MiB {r['peak_growth_mib']:>4.1f} MiB"
        pace = "-"
        if r["latency_median_ms"] is not None:
            pace = f"{r['latency_median_ms']:.0f}/{r['latency_max_ms']:.0f} ms"
        print(
            f"{r['attack']:<10} {'yes' if r['finished'] else 'NO':<9} {over:>7} "
            f"{r['returned_s']:>7.1f} s {memory} {r['cpu_s']:>5.1f} s {pace:>15} "
            f"{r['rejected']:>8} {r['reconnections']:>8} {r['sync_ignored']:>9}"
        )
        for error in r["errors"]:
            print(f"{'':<10} error: {error}")
        if set(r["verdicts"]) != {"OK"}:
            print(f"{'':<10} verdicts: {r['verdicts']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic", choices=sorted(RULE_SETS))
    parser.add_argument("--target", type=int, default=501)
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per table")
    parser.add_argument("--peer", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer is not None:
        child(args)
        return
    attacks = [a for a in args.attacks.split(",") if a]
    unknown = set(attacks) - set(ATTACKS)
    if unknown:
        parser.error(f"unknown attacks: {', '.join(sorted(unknown))}")
    print(f"Flood benchmark: {args.variant} to {args.target}, seat {ATTACKER} attacking, "
          f"seats 0-2 honest (one process each, random bots, loopback)", flush=True)  # fmt: skip
    rows = []
    for attack in attacks:
        print(f"  {attack}...", flush=True)
        rows.append(run_table(attack, args))
    print()
    report(rows)
    print(json.dumps({"variant": args.variant, "target": args.target, "attacks": rows}))


if __name__ == "__main__":
    main()
