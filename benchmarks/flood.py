"""Four peers on loopback, one of them attacking: what each attack costs the honest peers
and the relay.

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

A relay runs beside the table, in its own process (its peak and growth are reported too):
seat 1 does not listen, so its links to seats 2 and 3 go through it. The attacker's seat
connects from 127.0.0.2 and its floods from 127.0.0.3 (as from another machine of its own:
a relay's caps are per source address, and a flood from the seat's own address would only
cut that seat off), the honest seats from 127.0.0.1.

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
  then it signs nothing more. The sessions bound them: the game stops with a fault of seat 3;
* ``resync``: it hangs up each connection half a second after its handshake, and before
  each of its envelopes; on each new one (it dials again), before anything else, a sync
  request for everything and one listing the hash of its largest envelope 64 times (the
  first request of a connection is answered). Each honest peer's answers to it come out of
  one byte budget across its connections, its own game's requests included: it falls
  behind, goes silent, and the game ends abandoned by seat 3;
* ``connect``: 200 bare TCP connections to each honest listener (seats 0 and 2), held and
  renewed every 10 s;
* ``prehello``: 16 connections at a time to each honest listener, each sending a 1 MiB
  frame before any hello, again and again;
* ``relay-bare``: 600 bare connections to the relay, held and renewed every 10 s;
* ``relay-tables``: 80 self-made two-seat tables at the relay (keys of its own, signed as a
  real host would), half of them paired, the others one seat waiting; each refused or cut
  join is tried again a second later.

Prints a readable report; the last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import contextvars
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
RELAYED = 1
"""The seat that does not listen: its links to the seats above it go through the relay."""
ATTACKER_SOURCE = "127.0.0.2"
FLOOD_SOURCE = "127.0.0.3"
ATTACKS = ("none", "junk", "oversized", "sync", "slow", "signed", "resync", "connect",
           "prehello", "relay-bare", "relay-tables")  # fmt: skip
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


class ResyncLink(AfterHandshake):
    """Asks for everything, and for one envelope 64 times, before its first frame after
    the handshake; hangs up half a second later (the mesh dials again)."""

    ends: float | None = None

    async def receive(self) -> bytes:
        if self.received < 2:
            return await super().receive()
        if self.ends is None:
            self.ends = trio.current_time() + 0.5
        with trio.move_on_at(self.ends):
            return await super().receive()
        raise ConnectionClosed("the resync attack hangs up")

    async def send(self, payload: bytes) -> None:
        if self.sent == 2:
            wanted = [AttackerMesh.largest] * 64 if AttackerMesh.largest else []
            await self.link.send(SYNC_ALL)
            await self.link.send(encode({"type": "sync", "have": [0] * 4, "want": wanted}))
        await super().send(payload)


class AttackerMesh(Mesh):
    attack = "none"
    rng = random.Random(3)
    flooded = False
    largest = b""
    """The hash of the largest envelope we signed (``resync`` asks for it 64 times)."""
    largest_size = 0

    async def attach(self, link: Link, *, peer_seat: int | None) -> None:
        if self.attack == "oversized":
            link = OversizedLink(link)
        elif self.attack == "resync":
            link = ResyncLink(link)
        elif self.attack == "slow" and peer_seat == 0:
            if isinstance(link, FramedStream) and isinstance(link.stream, trio.SocketStream):
                # A small window: seat 0's frames pile up in its own queue, not in ours.
                link.stream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            link = DeafLink(link)
        await super().attach(link, peer_seat=peer_seat)

    def broadcast(self, payload: bytes) -> frozenset[int]:
        if self.attack == "signed":
            return self._signed_flood(payload)
        if self.attack == "resync":
            if len(payload) > AttackerMesh.largest_size:
                AttackerMesh.largest_size = len(payload)
                AttackerMesh.largest = Envelope.decode(payload).hash
            for seat in (0, 1, 2):
                self.disconnect(seat, "resync attack")
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


class CountingMesh(Mesh):
    """An honest peer's mesh, counting the bytes it queues for the attacker (its sync
    answers above all)."""

    to_attacker = 0

    def send(self, seat: int, payload: bytes) -> None:
        super().send(seat, payload)
        if seat == ATTACKER:
            CountingMesh.to_attacker += len(payload)


# -- floods from the attacker's process, beside its own seat ---------------------------------


FLOODING = contextvars.ContextVar("FLOODING", default=False)
"""Set in the flood's tasks: their connections leave from :data:`FLOOD_SOURCE`."""


def from_attacker_source() -> None:
    """Every TCP connection of this process leaves from :data:`ATTACKER_SOURCE` (its own
    seat's) or :data:`FLOOD_SOURCE` (its floods')."""
    real = trio.open_tcp_stream

    async def open_from(host: Any, port: int, **kw: Any) -> trio.SocketStream:
        kw.setdefault("local_address", FLOOD_SOURCE if FLOODING.get() else ATTACKER_SOURCE)
        return await real(host, port, **kw)

    trio.open_tcp_stream = open_from


async def hold_bare(targets: list[tuple[str, int]], count: int, renew: float) -> None:
    """``count`` connections to each target that send nothing, renewed every ``renew`` s."""
    while True:
        streams = []
        for host, port in targets:
            for _ in range(count):
                try:
                    streams.append(await trio.open_tcp_stream(host, port))
                except OSError:
                    break
        await trio.sleep(renew)
        for stream in streams:
            await trio.aclose_forcefully(stream)


async def big_frames_first(targets: list[tuple[str, int]], at_once: int) -> None:
    """Connections that each send a 1 MiB frame before any hello, again and again."""
    big = DEFAULT_MAX_FRAME.to_bytes(4, "big") + bytes(DEFAULT_MAX_FRAME)

    async def one(host: str, port: int) -> None:
        while True:
            try:
                stream = await trio.open_tcp_stream(host, port)
            except OSError:
                await trio.sleep(0.1)
                continue
            try:
                with trio.move_on_after(5):
                    await stream.send_all(big)
                    while await stream.receive_some(1 << 16):
                        pass
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                await trio.aclose_forcefully(stream)

    async with trio.open_nursery() as nursery:
        for host, port in targets:
            for _ in range(at_once):
                nursery.start_soon(one, host, port)


async def self_made_tables(relay: tuple[str, int], count: int) -> None:
    """``count`` two-seat tables of the attacker's own keys at the relay, half paired."""
    from belote_p2p.net.relay import open_relay_link
    from belote_p2p.protocol.relay import RelayError

    async def seat_of(definition: TableDefinition, ids: list[Identity], seat: int) -> None:
        proposal = definition.propose(ids[0])
        while True:
            try:
                link = await open_relay_link(relay, ids[seat], definition, proposal, seat, 1 - seat)
            except (RelayError, ConnectionClosed, OSError, trio.TooSlowError):
                await trio.sleep(1.0)
                continue
            try:
                while True:
                    await link.receive()
            except ConnectionClosed:
                await trio.sleep(1.0)

    rules = RULE_SETS["two-handed"]
    async with trio.open_nursery() as nursery:
        for k in range(count):
            ids = [Identity.from_seed(bytes([201, k % 256, s]) * 8 + bytes(8)) for s in (0, 1)]
            seats = tuple(Seat(f"x{s}", ids[s].public_key_bytes, "") for s in (0, 1))
            definition = TableDefinition(bytes([k % 256, 9]) * 8, rules, seats)
            for seat in (0, 1) if k % 2 == 0 else (1,):
                nursery.start_soon(seat_of, definition, ids, seat)


async def flood(attack: str, definition: TableDefinition, relay: tuple[str, int]) -> None:
    FLOODING.set(True)  # this task's and its children's
    listeners = []
    for s in definition.seats[:ATTACKER]:
        if s.address:
            host, _, port = s.address.rpartition(":")
            listeners.append((host, int(port)))
    if attack == "connect":
        await hold_bare(listeners, 200, 10.0)
    elif attack == "prehello":
        await big_frames_first(listeners, 16)
    elif attack == "relay-bare":
        await hold_bare([relay], 600, 10.0)
    elif attack == "relay-tables":
        await self_made_tables(relay, 80)


# -- the relay (a child process) ---------------------------------------------------------------


async def serve_relay(fd: int) -> dict[str, Any]:
    from belote_p2p.net.relay import RelayService

    sock = trio.socket.from_stdlib_socket(socket.socket(fileno=fd))
    relay = RelayService()
    rss_before, _ = memory_kib()
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve, [trio.SocketListener(sock)])
        await trio.to_thread.run_sync(sys.stdin.readline)  # the table is over
        nursery.cancel_scope.cancel()
    _, peak = memory_kib()
    return {"rss_peak_kib": peak, "rss_growth_kib": peak - rss_before, **relay.stats}


# -- one peer (a child process) ----------------------------------------------------------------


async def play_peer(seat: int, attack: str, directory: Path, fd: int | None) -> dict[str, Any]:
    definition = TableDefinition.from_wire(decode((directory / "table").read_bytes()))
    relay_host, _, relay_port = (directory / "relay").read_text().rpartition(":")
    relay = (relay_host, int(relay_port))
    listeners = None
    if fd is not None:
        sock = trio.socket.from_stdlib_socket(socket.socket(fileno=fd))
        listeners = [trio.SocketListener(sock)]
    config = CONFIG
    if seat == ATTACKER:
        from_attacker_source()
        AttackerMesh.attack = attack
        peer_module.Mesh = AttackerMesh  # type: ignore[misc]
        if attack == "slow":
            # Deaf to seat 0, it hears of seat 0's moves through the others' sync answers:
            # it asks them often, so that its own game does not crawl.
            config = PeerConfig(linger=CONFIG.linger, sync_interval=0.25)
    else:
        peer_module.Mesh = CountingMesh  # type: ignore[misc]
    over: list[float] = []
    actions: list[tuple[int, float]] = []

    def on_event(event: object) -> None:
        if isinstance(event, GameOver) and not over:
            over.append(time.perf_counter())
        elif isinstance(event, ActionTaken):
            actions.append((event.seat, time.monotonic()))  # one clock for every process

    rss_before, _ = memory_kib()
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        if seat == ATTACKER:
            nursery.start_soon(flood, attack, definition, relay)
        result = await run_peer(
            definition, seat, identity(seat), BotPlayer("random", seed=seat),
            transcript=directory / f"seat{seat}.transcript", listeners=listeners,
            secrets=SeededSecrets(seat), proposal=definition.propose(identity(0)),
            on_event=on_event, config=config, relay=relay,
        )  # fmt: skip
        nursery.cancel_scope.cancel()
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
        "to_attacker_bytes": CountingMesh.to_attacker,
        "over_s": round(over[0] - start, 2) if over else None,
        "returned_s": round(elapsed, 2),
        "rss_peak_kib": peak,
        "rss_growth_kib": peak - rss_before,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "actions": actions,
    }


def child(args: argparse.Namespace) -> None:
    if args.peer < 0:
        out = trio.run(serve_relay, args.fd)
    else:
        out = trio.run(play_peer, args.peer, args.attack, Path(args.dir), args.fd)
    print(json.dumps(out), flush=True)


# -- one table (four child processes) ----------------------------------------------------------


def run_table(attack: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="belote-flood-") as tmp:
        directory = Path(tmp)
        socks = []
        for _ in range(4):  # seats 0 to 2 (seat 3 only dials), and the relay
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(128)
            socks.append(s)
        ports = [s.getsockname()[1] for s in socks]
        seats = tuple(
            Seat(f"p{k}", identity(k).public_key_bytes,
                 f"127.0.0.1:{ports[k]}" if k not in (RELAYED, ATTACKER) else "")
            for k in range(4)
        )  # fmt: skip
        (directory / "relay").write_text(f"127.0.0.1:{ports[3]}")
        rules = RULE_SETS[args.variant].with_(target=args.target)
        definition = TableDefinition(bytes([7]) * 16, rules, seats)
        (directory / "table").write_bytes(encode(definition.to_wire()))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "plugins")])
        procs = []
        relay_fd = socks[3].fileno()
        relay_proc = subprocess.Popen(
            [sys.executable, __file__, "--peer", "-1", "--fd", str(relay_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, pass_fds=(relay_fd,), env=env,
        )  # fmt: skip
        for seat in range(4):
            cmd = [sys.executable, __file__, "--peer", str(seat), "--attack", attack,
                   "--dir", str(directory)]  # fmt: skip
            fds: tuple[int, ...] = ()
            if seat < 3 and seat != RELAYED:
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
            relay: dict[str, Any] = {}
            try:
                out, _ = relay_proc.communicate("stop\n", timeout=30)
                lines = [line for line in out.splitlines() if line.startswith("{")]
                relay = json.loads(lines[-1]) if lines else {}
            except subprocess.TimeoutExpired:
                relay_proc.kill()
                relay_proc.wait()
    return summarise(attack, honest, relay)


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


def summarise(attack: str, honest: list[dict[str, Any]], relay: dict[str, Any]) -> dict[str, Any]:
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
        "to_attacker_mib": round(max(h.get("to_attacker_bytes", 0) for h in honest) / (1 << 20), 1),
        "errors": [h.get("error") for h in honest if h.get("error")],
        "relay_peak_rss_mib": round(relay.get("rss_peak_kib", 0) / 1024, 1),
        "relay_growth_mib": round(relay.get("rss_growth_kib", 0) / 1024, 1),
        "relay_paired": relay.get("paired"),
        "relay_forwarded_mib": round(relay.get("forwarded_bytes", 0) / (1 << 20), 1),
        "relay_refused": relay.get("refused", {}),
    }


# -- the report --------------------------------------------------------------------------------


def report(rows: list[dict[str, Any]]) -> None:
    """The table; ``growth`` is the largest honest peer's peak resident set minus its size
    before the game, ``to seat 3`` the most bytes one honest peer sent the attacker (its
    sync answers above all), ``relayed`` the bytes the relay forwarded (seat 1's links),
    ``CPU`` the busiest honest peer's CPU time (the attacker's own CPU
    shares the machine's two cores: the times include it), ``pace`` the median and largest
    delay of an honest seat's action to the other two honest peers."""
    print(f"{'attack':<12} {'finished':<9} {'over':>7} {'returned':>9} {'peak RSS':>9} "
          f"{'growth':>8} {'CPU':>7} {'pace':>15} {'refused':>8} {'reconn.':>8} "
          f"{'sync ign.':>9} {'to seat 3':>9} {'relay RSS':>9} {'growth':>8} "
          f"{'relayed':>9}")  # fmt: skip
    for r in rows:
        over = f"{r['over_s']:.1f} s" if r["over_s"] is not None else "-"
        memory = f"{r['peak_rss_mib']:>5.1f} MiB {r['peak_growth_mib']:>4.1f} MiB"
        pace = "-"
        if r["latency_median_ms"] is not None:
            pace = f"{r['latency_median_ms']:.0f}/{r['latency_max_ms']:.0f} ms"
        relay = f"{r['relay_peak_rss_mib']:>5.1f} MiB {r['relay_growth_mib']:>4.1f} MiB"
        print(
            f"{r['attack']:<12} {'yes' if r['finished'] else 'NO':<9} {over:>7} "
            f"{r['returned_s']:>7.1f} s {memory} {r['cpu_s']:>5.1f} s {pace:>15} "
            f"{r['rejected']:>8} {r['reconnections']:>8} {r['sync_ignored']:>9} "
            f"{r['to_attacker_mib']:>5.1f} MiB {relay} "
            f"{r['relay_forwarded_mib']:>5.1f} MiB"
        )
        for error in r["errors"]:
            print(f"{'':<12} error: {error}")
        if set(r["verdicts"]) != {"OK"}:
            print(f"{'':<12} verdicts: {r['verdicts']}")
        if r["relay_refused"]:
            print(f"{'':<12} relay refused: {r['relay_refused']}")


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
