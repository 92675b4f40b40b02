"""Games of bot peer processes on a hostile network, with peers, hosts and relays that vanish.

    python benchmarks/chaos.py [--games 40] [--seed 1] [--target 501] [--lanes 1]
                               [--loss 5] [--delay 150] [--jitter 100] [--reorder 5]
                               [--duplicate 1] [--partition 20] [--gap 40] [--clean 2]

Every game is four real peer processes (``belote-p2p host --bot rules`` and three ``join
--bot rules``), each in a network namespace of its own, and a standalone ``belote-p2p
relay`` in a fifth, which every table names (``--relay``); each seat is drawn to listen or
not (``--no-listen``: only the relay reaches it), at least one not. A lane (``--lanes``) is
one such set of namespaces; its games are played one after the other, with one relay
process for all of them (an evening of a relay), and the lanes side by side.

**The network.** Each namespace's only interface is a TUN device whose other end is this
script: every IPv4 packet from one namespace to another goes through its emulator, which
does to it what ``tc netem`` does on the sender's link (the kernels this was written on
have no ``sch_netem``): it drops it (``--loss`` %), delays it by ``--delay`` ms ±
``--jitter`` ms (uniform, so that packets overtake each other), sends it at once instead
(``--reorder`` %: ahead of those delayed) and sends it twice (``--duplicate`` %). A
partition of a seat drops every packet to and from it for ``--partition`` seconds.

**The faults.** From the moment every seat's record holds a bid, a schedule drawn from
the seed (``--seed``, then the game's number) injects one fault after another, one every
``--gap`` seconds on average (the first within half of that), until a peer's game is over:
a joiner killed (SIGKILL of its process group) and, up to ``--downtime`` seconds later,
``belote-p2p resume`` on its home (``kill``); the host likewise (``host``); the relay
killed and started again on its port (``relay``); a seat cut off by a partition
(``partition``); or, at most once a game, a seat killed for good (``gone``: the others sign
it gone after its deadline and grace, and its partner plays its open hand to the end).
``--kinds`` draws from some of them only.

**What counts.** A game is *finished* when every live seat's record verifies as a finished
game (``belote-p2p verify``'s own check), *gone on with a dummy* when they name the leaver,
*abandoned* when they say so (which, with at most one seat killed for good, means that an
honest seat was signed out: a finding). It is **lost** when it does not end in time, a live
seat's process ends with an error, a record does not verify, or the live seats' records
do not say the same (``verified_alike`` counts the games whose live records verify alike).
The report gives, per game and in all: the faults injected by kind, the packets the
emulator dropped, duplicated and sent ahead, the game's time per round against the same
table's on a clean network (``--clean`` games first, with no fault and no impairment), the
longest a seat waited for a turn that was not its own (from the peers' ``--timing-log``:
the longest time between two table events, the next one not its own action), the resident
memory of each peer and of the relay at its end, and the CPU of all processes.

Deadlines: a bot table plays at once, so the seats give each other ``--deadline`` seconds
for a decision and for a protocol step (``--person-deadline``, ``--step-deadline``) and
``--grace`` seconds more before they sign a silent seat gone: long enough for a seat that is
killed and resumed, or cut off for a partition and its TCP retransmissions, to come back
within them, short enough that a seat gone for good costs the table little.

Needs root (network namespaces, TUN devices, ``ip`` of iproute2); without them it says why
and exits with status 3. Every namespace it makes is named ``chaos<pid>-...``; they are
removed when it ends, whatever ends it, and those of an earlier run whose process is gone
are removed (their processes killed) when it starts.

Prints a readable report and, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import heapq
import itertools
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import trio

from belote_p2p.app.botprocs import alive
from belote_p2p.protocol.transcript import TranscriptError, read_transcript
from belote_p2p.protocol.verify import Verdict, verify_transcript
from belote_p2p.protocol.wire import Envelope

SEATS = 4
HOST_PORT = 7777
RELAY_PORT = 7779
PREFIX = "chaos"
"""The prefix of every namespace and interface this script makes."""
UNAVAILABLE = 3
"""The exit status when this machine cannot make the namespaces (not root, no TUN)."""

# -- the network -------------------------------------------------------------------------

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


@dataclass(frozen=True)
class Impairment:
    """What a link does to each packet (as ``tc netem``'s options of the same names)."""

    loss: float = 0.0
    """The probability that a packet is dropped."""
    delay: float = 0.0
    """Seconds a packet takes, on average."""
    jitter: float = 0.0
    """Seconds either side of :attr:`delay` (uniform)."""
    reorder: float = 0.0
    """The probability that a packet is sent at once, ahead of those delayed."""
    duplicate: float = 0.0
    """The probability that a packet is sent twice."""


CLEAN = Impairment()


@dataclass
class PacketCounts:
    packets: int = 0
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    partitioned: int = 0
    """Dropped because their sender or receiver was cut off."""

    def minus(self, other: PacketCounts) -> PacketCounts:
        return PacketCounts(
            *(getattr(self, f) - getattr(other, f) for f in self.__dataclass_fields__)
        )

    def to_json(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def open_tun() -> tuple[int, str]:
    """A new TUN device (IPv4 packets, no header), non-blocking; its descriptor and name."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    try:
        ifr = fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"chaos%d", IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd, ifr[:16].rstrip(b"\0").decode()


class Network:
    """The emulator between the namespaces: reads every packet from each one's TUN device
    and writes it, impaired, to the device of the namespace it is addressed to."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.impairment: dict[bytes, Impairment] = {}
        """Each address's link (applied to what it sends)."""
        self.ports: dict[bytes, int] = {}
        self.cut: set[bytes] = set()
        """Addresses partitioned off."""
        self.counts = PacketCounts()
        self._heap: list[tuple[float, int, bytes, bytes]] = []
        self._order = itertools.count()
        self._wake = trio.Event()

    def attach(self, address: str, fd: int, impairment: Impairment) -> None:
        key = ip_bytes(address)
        self.ports[key] = fd
        self.impairment[key] = impairment

    def set_impairment(self, addresses: list[str], impairment: Impairment) -> None:
        for address in addresses:
            self.impairment[ip_bytes(address)] = impairment

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            for fd in self.ports.values():
                nursery.start_soon(self._read, fd)
            nursery.start_soon(self._deliver)

    async def _read(self, fd: int) -> None:
        while True:
            await trio.lowlevel.wait_readable(fd)
            while True:
                try:
                    packet = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                self._route(packet)

    def _route(self, packet: bytes) -> None:
        if len(packet) < 20 or packet[0] >> 4 != 4:
            return  # IPv6 neighbour discovery and the like: nobody here needs it
        source, target = packet[12:16], packet[16:20]
        if target not in self.ports:
            return
        counts = self.counts
        counts.packets += 1
        if source in self.cut or target in self.cut:
            counts.partitioned += 1
            return
        link = self.impairment.get(source, CLEAN)
        rng = self.rng
        if link.loss and rng.random() < link.loss:
            counts.lost += 1
            return
        copies = 1
        if link.duplicate and rng.random() < link.duplicate:
            counts.duplicated += 1
            copies = 2
        now = trio.current_time()
        for _ in range(copies):
            delay = 0.0
            if link.reorder and rng.random() < link.reorder:
                counts.reordered += 1
            elif link.delay:
                delay = max(0.0, link.delay + rng.uniform(-link.jitter, link.jitter))
            if delay:
                heapq.heappush(self._heap, (now + delay, next(self._order), target, packet))
                self._wake.set()
            else:
                self._write(target, packet)

    def _write(self, target: bytes, packet: bytes) -> None:
        with contextlib.suppress(OSError):  # a full queue drops it, as a link would
            os.write(self.ports[target], packet)

    async def _deliver(self) -> None:
        heap = self._heap
        while True:
            if not heap:
                await self._wake.wait()
                self._wake = trio.Event()
                continue
            due = heap[0][0]
            if due > trio.current_time():
                with trio.move_on_at(due):
                    await self._wake.wait()
                    self._wake = trio.Event()
                continue
            _, _, target, packet = heapq.heappop(heap)
            if packet[12:16] in self.cut or target in self.cut:
                self.counts.partitioned += 1  # in flight when the partition began
                continue
            self._write(target, packet)


def ip_bytes(address: str) -> bytes:
    return bytes(int(part) for part in address.split("."))


# -- namespaces -------------------------------------------------------------------------------


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=check, timeout=60)


def why_unavailable() -> str | None:
    """Why this machine cannot run the benchmark, or None."""
    if shutil.which("ip") is None:
        return "ip is not installed (apt-get install -y iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "there is no /dev/net/tun"
    probe = f"{PREFIX}{os.getpid()}-probe"
    made = sh("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()}"
    try:
        fd, name = open_tun()
    except OSError as exc:
        sh("ip", "netns", "del", probe, check=False)
        return f"cannot make a TUN device: {exc}"
    try:
        moved = sh("ip", "link", "set", name, "netns", probe, check=False)
        if moved.returncode != 0:
            return f"cannot move a TUN device into a namespace: {moved.stderr.strip()}"
    finally:
        os.close(fd)
        sh("ip", "netns", "del", probe, check=False)
    return None


def our_namespaces() -> dict[str, int]:
    """Every namespace named by a run of this script, with the pid of that run."""
    listed = sh("ip", "netns", "list", check=False).stdout
    found = {}
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        match = re.fullmatch(rf"{PREFIX}(\d+)-.*", name)
        if match:
            found[name] = int(match.group(1))
    return found


def remove_namespace(name: str) -> None:
    """Kill every process in namespace ``name``, then remove it."""
    pids = sh("ip", "netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    sh("ip", "netns", "del", name, check=False)


def remove_leftovers() -> list[str]:
    """The namespaces of earlier runs whose process is gone: removed; their names."""
    gone = [name for name, pid in our_namespaces().items() if not alive(pid)]
    for name in gone:
        remove_namespace(name)
    return gone


@dataclass
class Lane:
    """One table's namespaces: the four seats (``p0``..``p3``) and the relay (``r``)."""

    index: int
    names: dict[str, str]
    addresses: dict[str, str]
    fds: list[int] = field(default_factory=list)

    @property
    def relay_address(self) -> str:
        return self.addresses["r"]

    def seat_address(self, seat: int) -> str:
        return self.addresses[f"p{seat}"]


def make_lane(index: int, network: Network) -> Lane:
    leaves = [f"p{k}" for k in range(SEATS)] + ["r"]
    names = {leaf: f"{PREFIX}{os.getpid()}-{index}-{leaf}" for leaf in leaves}
    addresses = {f"p{k}": f"10.99.{index}.{10 + k}" for k in range(SEATS)}
    addresses["r"] = f"10.99.{index}.20"
    lane = Lane(index, names, addresses)
    for leaf in leaves:
        ns, address = names[leaf], addresses[leaf]
        sh("ip", "netns", "add", ns)
        fd, device = open_tun()
        lane.fds.append(fd)
        sh("ip", "link", "set", device, "netns", ns)
        sh("ip", "-n", ns, "link", "set", device, "name", f"{PREFIX}0")
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{PREFIX}0.disable_ipv6=1")
        sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", f"{PREFIX}0")
        sh("ip", "-n", ns, "link", "set", f"{PREFIX}0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        network.attach(address, fd, CLEAN)
    return lane


def remove_lane(lane: Lane) -> None:
    for ns in lane.names.values():
        remove_namespace(ns)
    for fd in lane.fds:
        with contextlib.suppress(OSError):
            os.close(fd)


# -- processes ---------------------------------------------------------------------------------


@dataclass
class Proc:
    """One peer or relay process, in its namespace."""

    name: str
    process: trio.Process
    out: Path
    err: Path
    started: float
    status: int | None = None
    ended: float | None = None
    killed: bool = False
    rss_kib: int = 0
    """Its resident memory at the last look (every second while it runs)."""
    peak_kib: int = 0

    @property
    def running(self) -> bool:
        return self.status is None

    def output(self) -> str:
        try:
            return self.out.read_text("utf-8", "replace")
        except OSError:
            return ""

    def result(self) -> dict[str, Any] | None:
        for line in reversed(self.output().splitlines()):
            if line.startswith("RESULT "):
                with contextlib.suppress(ValueError):
                    data = json.loads(line[len("RESULT ") :])
                    return data if isinstance(data, dict) else None
        return None

    def look(self) -> None:
        """Note its memory (VmRSS, VmHWM) while it runs."""
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.rss_kib = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    self.peak_kib = int(line.split()[1])

    def kill(self) -> None:
        """SIGKILL to its whole process group (it is the leader of its own session)."""
        self.killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(ROOT / "plugins"), env.get("PYTHONPATH", "")) if p
    )
    for name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        env.pop(name, None)
    env["LANG"] = "C.UTF-8"  # the peers' words in English (the report quotes them)
    return env


async def spawn(nursery: trio.Nursery, ns: str, name: str, args: list[str], folder: Path) -> Proc:
    """``belote-p2p args`` in namespace ``ns``, in a session of its own, its output in
    ``folder/<name>.out`` and ``.err``; watched until it exits."""
    folder.mkdir(parents=True, exist_ok=True)
    out, err = folder / f"{name}.out", folder / f"{name}.err"
    command = ["ip", "netns", "exec", ns, sys.executable, "-m", "belote_p2p", *args]
    with out.open("wb") as sink, err.open("wb") as errors:
        process = await trio.lowlevel.open_process(
            command, stdin=subprocess.DEVNULL, stdout=sink, stderr=errors, env=environment(),
            start_new_session=True,
        )  # fmt: skip
    proc = Proc(name, process, out, err, time.monotonic())

    async def watch() -> None:
        try:
            proc.status = await process.wait()
        finally:
            if proc.status is None:  # the game or the run is ending (a timeout, a signal)
                proc.kill()
                with trio.CancelScope(shield=True):
                    proc.status = await process.wait()
            proc.ended = time.monotonic()

    async def looks() -> None:
        while proc.running:
            proc.look()
            await trio.sleep(1.0)

    nursery.start_soon(watch)
    nursery.start_soon(looks)
    return proc


async def wait_for_text(proc: Proc, text: str, timeout: float) -> str:
    """Until ``proc``'s standard output holds ``text``; its output."""
    with trio.fail_after(timeout):
        while True:
            output = proc.output()
            if text in output:
                return output
            if not proc.running:
                raise RuntimeError(f"{proc.name} exited ({proc.status}) before {text!r}")
            await trio.sleep(0.1)


# -- one game -----------------------------------------------------------------------------------


KINDS = ("kill", "host", "relay", "partition", "gone")
"""The faults, by the name the report counts them under."""
WEIGHTS = tuple(zip(KINDS, (4, 2, 2, 3, 1), strict=True))
"""How often each comes, against the others."""


@dataclass
class Seat:
    number: int
    home: Path
    listen: bool
    procs: list[Proc] = field(default_factory=list)
    gone: bool = False
    """Killed for good: never resumed."""
    down: bool = False
    """Killed, its resume still to come."""

    @property
    def current(self) -> Proc | None:
        return self.procs[-1] if self.procs else None

    @property
    def running(self) -> bool:
        return self.down or (self.current is not None and self.current.running)


@dataclass
class GameReport:
    game: int
    lane: int
    clean: bool
    listening: list[int]
    seconds: float = 0.0
    rounds: int = 0
    outcome: str = "lost"
    """finished, dummy, abandoned or lost."""
    verified_alike: bool = False
    verdict: str = ""
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    events: list[str] = field(default_factory=list)
    """What was injected and when (seconds into the game)."""
    packets: dict[str, int] = field(default_factory=dict)
    resumed: int = 0
    gone: int | None = None
    max_wait: float = 0.0
    """The longest a live seat waited for a turn not its own (seconds)."""
    max_wait_at: str = ""
    max_clear_wait: float = 0.0
    """The longest such wait while no other fault was under way."""
    max_clear_wait_at: str = ""
    rss_mib: dict[str, float] = field(default_factory=dict)
    """Each peer process's resident memory at its end (its last incarnation)."""
    problems: list[str] = field(default_factory=list)

    @property
    def lost(self) -> bool:
        return self.outcome == "lost"


class Game:
    """One game of a lane: its peers, its faults, and what its records say."""

    def __init__(
        self,
        args: argparse.Namespace,
        lane: Lane,
        network: Network,
        relay: RelayKeeper,
        number: int,
        folder: Path,
        *,
        clean: bool,
    ) -> None:
        self.args = args
        self.lane = lane
        self.network = network
        self.relay = relay
        self.number = number
        self.folder = folder
        self.clean = clean
        self.rng = random.Random(f"{args.seed}/{number}")
        listen = [self.rng.random() < 0.5 for _ in range(SEATS)]
        listen[0] = True if self.rng.random() < 0.75 else listen[0]
        if all(listen):
            listen[self.rng.randrange(1, SEATS)] = False
        self.seats = [Seat(k, folder / f"h{k}", listen[k]) for k in range(SEATS)]
        self.report = GameReport(number, lane.index, clean, [k for k in range(SEATS) if listen[k]])
        self.start = 0.0
        self.busy = False
        """A fault is under way (a seat or the relay is down)."""
        self.windows: list[tuple[float, float]] = []
        """When each fault but the seat gone for good lasted (wall clock, as the timing
        logs), from its start to the end of its recovery (the resumed process started)."""

    def log(self, text: str) -> None:
        when = time.monotonic() - self.start
        self.report.events.append(f"{when:6.1f}s {text}")
        if self.args.verbose:
            print(f"  game {self.number} @{when:6.1f}s: {text}", flush=True)

    def timing(self, seat: int, incarnation: int) -> Path:
        """The timing log folder of one incarnation of a seat's process."""
        return self.folder / "timing" / f"seat{seat}-{incarnation}"

    def common(self, seat: int, incarnation: int) -> list[str]:
        args = self.args
        deadline = str(args.deadline)
        options = ["--bot", "rules", "--seed", str(args.seed * 100 + self.number * 4 + seat),
                   "--relay", f"{self.lane.relay_address}:{RELAY_PORT}",
                   "--home", str(self.seats[seat].home), "--json", "--no-rematch",
                   "--person-deadline", deadline, "--step-deadline", deadline,
                   "--bot-deadline", "10", "--grace", str(args.grace),
                   "--timing-log", str(self.timing(seat, incarnation))]  # fmt: skip
        if not self.seats[seat].listen:
            options.append("--no-listen")
        return options

    async def launch(self, nursery: trio.Nursery, seat: int) -> Proc:
        """Start seat ``seat``: host or join the first time, resume after."""
        state = self.seats[seat]
        incarnation = len(state.procs)
        if incarnation:
            args = ["resume", "--quiet", *self.common(seat, incarnation)]
        elif seat == 0:
            args = ["host", "--port", str(HOST_PORT), "--name", "Bot0", "--target",
                    str(self.args.target), "--no-beacon", *self.common(0, 0)]  # fmt: skip
        else:
            host = f"{self.lane.seat_address(0)}:{HOST_PORT}"
            args = ["join", host, "--seat", str(seat), "--name", f"Bot{seat}", "--quiet",
                    *self.common(seat, 0)]  # fmt: skip
        name = f"seat{seat}" + (f"-resume{incarnation}" if incarnation else "")
        proc = await spawn(nursery, self.lane.names[f"p{seat}"], name, args, self.folder)
        state.procs.append(proc)
        return proc

    async def play(self) -> GameReport:
        args = self.args
        report = self.report
        self.start = time.monotonic()
        before = PacketCounts(**self.network.counts.to_json())
        addresses = list(self.lane.addresses.values())
        impairment = CLEAN if self.clean else args.impairment
        self.network.set_impairment(addresses, impairment)
        try:
            with trio.move_on_after(args.game_timeout) as timer:
                async with trio.open_nursery() as nursery:
                    host = await self.launch(nursery, 0)
                    await wait_for_text(host, "Others join with", 120)
                    for seat in range(1, SEATS):
                        await self.launch(nursery, seat)
                    async with trio.open_nursery() as faults:
                        if not self.clean:
                            faults.start_soon(self.inject, nursery)
                        while any(s.running for s in self.seats) or self.busy:
                            await trio.sleep(0.5)
                        faults.cancel_scope.cancel()
                    nursery.cancel_scope.cancel()
            if timer.cancelled_caught:
                report.problems.append(f"not over in {args.game_timeout:g} s")
        finally:
            for state in self.seats:
                if state.current is not None and state.current.running:
                    state.current.kill()
            self.network.cut.clear()
            self.network.set_impairment(addresses, CLEAN)
        report.seconds = time.monotonic() - self.start
        report.packets = self.network.counts.minus(before).to_json()
        self.judge()
        return report

    # -- the faults ---------------------------------------------------------------------------

    def over(self) -> bool:
        """A live seat's game is over (its process ended by itself): no more faults."""
        return any(p.status is not None and not p.killed for s in self.seats for p in s.procs[-1:])

    async def inject(self, nursery: trio.Nursery) -> None:
        await self.until_dealt()
        self.log("every seat holds a bid: faults begin")
        gap = self.args.gap
        first = True
        while True:
            # The first one soon (within the game's first round), then one every gap.
            low, high = (0.25, 0.75) if first else (0.5, 1.5)
            first = False
            await trio.sleep(self.rng.uniform(low * gap, high * gap))
            if self.over():
                return
            kind = self.rng.choices(KINDS, [w * (k in self.args.kinds) for k, w in WEIGHTS])[0]
            live = [s.number for s in self.seats if not s.gone]
            if kind == "gone" and any(s.gone for s in self.seats):
                continue  # at most one a game
            self.busy = True
            began = time.time()
            try:
                if kind in ("kill", "host"):
                    joiners = [s for s in live if s != 0]
                    seat = 0 if kind == "host" and 0 in live else self.rng.choice(joiners)
                    await self.kill_and_resume(nursery, seat, "host" if seat == 0 else "kill")
                elif kind == "gone":
                    await self.kill_for_good(self.rng.choice(live))
                elif kind == "relay":
                    await self.restart_relay()
                else:
                    await self.partition(self.rng.choice(live))
            finally:
                self.busy = False
                if kind != "gone":
                    self.windows.append((began, time.time()))

    def downtime(self) -> float:
        return self.rng.uniform(2.0, self.args.downtime)

    async def kill_and_resume(self, nursery: trio.Nursery, seat: int, kind: str) -> None:
        state = self.seats[seat]
        proc = state.current
        if proc is None or not proc.running:
            return
        down = self.downtime()
        state.down = True
        try:
            proc.kill()
            self.report.faults[kind] += 1
            self.log(f"seat {seat} killed ({kind}); resumed in {down:.1f} s")
            await trio.sleep(down)
            await self.launch(nursery, seat)
            self.report.resumed += 1
        finally:
            state.down = False

    async def kill_for_good(self, seat: int) -> None:
        state = self.seats[seat]
        proc = state.current
        if proc is None or not proc.running:
            return
        state.gone = True
        proc.kill()
        self.report.faults["gone"] += 1
        self.report.gone = seat
        self.log(f"seat {seat} killed for good")

    async def restart_relay(self) -> None:
        down = self.downtime()
        self.report.faults["relay"] += 1
        self.log(f"relay killed; started again in {down:.1f} s")
        await self.relay.restart(down)

    async def partition(self, seat: int) -> None:
        address = ip_bytes(self.lane.seat_address(seat))
        seconds = self.args.partition
        self.report.faults["partition"] += 1
        self.log(f"seat {seat} cut off for {seconds:g} s")
        self.network.cut.add(address)
        try:
            await trio.sleep(seconds)
        finally:
            self.network.cut.discard(address)

    async def until_dealt(self) -> None:
        """Until every seat's record holds a bid (the first round is under way)."""
        waiting = set(range(SEATS))
        while waiting:
            for seat in sorted(waiting):
                if any(e.type == "bid" for e in self.envelopes(seat)):
                    waiting.discard(seat)
            await trio.sleep(0.5)

    def transcript(self, seat: int) -> Path | None:
        found = sorted((self.seats[seat].home / "games").glob("*.transcript"))
        return found[0] if found else None

    def envelopes(self, seat: int) -> list[Envelope]:
        path = self.transcript(seat)
        if path is None:
            return []
        try:
            return [Envelope.decode(data) for data in read_transcript(path).envelopes]
        except (OSError, TranscriptError):
            return []  # created, its header not yet written

    # -- the verdict --------------------------------------------------------------------------

    def judge(self) -> None:
        """What the live seats' records and processes say (see the module docstring)."""
        report = self.report
        live = [s for s in self.seats if not s.gone]
        verdicts: dict[int, Verdict] = {}
        for state in live:
            proc = state.current
            if proc is None:
                report.problems.append(f"seat {state.number}: never started")
                continue
            if proc.status not in (0, None) and not proc.killed:
                status = proc.status
                ended_already = "no unfinished game" in read(proc.err)
                if not (ended_already and state.procs[:-1]):
                    tail = " | ".join(read(proc.err).strip().splitlines()[-3:])
                    report.problems.append(f"seat {state.number}: exit status {status}: {tail}")
            report.rss_mib[str(state.number)] = round(proc.rss_kib / 1024, 1)
            path = self.transcript(state.number)
            if path is None:
                report.problems.append(f"seat {state.number}: no record")
                continue
            verdict = verify_transcript(path)
            verdicts[state.number] = verdict
            if not verdict.ok:
                report.problems.append(f"seat {state.number}: {verdict.summary()}")
        summaries = {v.summary() for v in verdicts.values()}
        alike = len(verdicts) == len(live) and len(summaries) == 1
        if len(summaries) > 1:
            report.problems.append(f"the live records differ: {sorted(summaries)}")
        report.verified_alike = alike and all(v.ok for v in verdicts.values())
        if verdicts:
            first = next(iter(verdicts.values()))
            report.verdict = first.summary()
            report.rounds = len(first.state.history)
            if report.verified_alike:
                if first.finished and first.left is not None:
                    report.outcome = "dummy"
                elif first.finished:
                    report.outcome = "finished"
                elif first.abandoned is not None:
                    report.outcome = "abandoned"
        if report.problems and report.outcome != "abandoned":
            report.outcome = "lost"
        if report.outcome == "abandoned":
            report.problems.append(f"an honest seat was signed out: {report.verdict}")
        self.waits(live)

    def waits(self, live: list[Seat]) -> None:
        """The longest a live seat waited for a turn not its own (its timing logs): of all
        waits, and of those during which no other fault was under way (only the seat gone
        for good, if any, silent), which the deadlines bound."""
        report = self.report
        for state in live:
            for incarnation in range(len(state.procs)):
                log = self.timing(state.number, incarnation) / f"seat{state.number}.jsonl"
                for wait in waits_of(log, state.number, report.gone):
                    where = f"seat {state.number} ({incarnation}): {wait.what}"
                    if wait.seconds > report.max_wait:
                        report.max_wait, report.max_wait_at = wait.seconds, where
                    clear = not any(a < wait.end and wait.start < b for a, b in self.windows)
                    if clear and wait.seconds > report.max_clear_wait:
                        report.max_clear_wait, report.max_clear_wait_at = wait.seconds, where


EVENT_KINDS = {"ready", "dealt", "action", "audited", "over"}
VOTE_SLACK = 15.0
"""Seconds a seat gone for good may cost beyond its deadline and grace: the others' votes,
their releases of its cards and its partner's decision crossing the network."""


@dataclass(frozen=True)
class Wait:
    start: float
    end: float
    what: str

    @property
    def seconds(self) -> float:
        return self.end - self.start


def waits_of(log: Path, seat: int, gone: int | None) -> list[Wait]:
    """The times between two table events of one peer's timing log, the later one not an
    action of its own (nor of the dummy it plays)."""
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return []
    rows = []
    for line in lines:
        with contextlib.suppress(ValueError):
            row = json.loads(line)
            if isinstance(row, dict) and row.get("kind") in EVENT_KINDS:
                rows.append(row)
    ours = {seat}
    if gone is not None and (gone + 2) % SEATS == seat:
        ours.add(gone)
    waits = []
    for before, row in itertools.pairwise(rows):
        if row["kind"] == "action" and row.get("seat") in ours:
            continue
        start, end = float(before["t"]), float(row["t"])
        what = row["kind"] + (f" of seat {row['seat']}" if row["kind"] == "action" else "")
        waits.append(Wait(start, end, f"{end - start:.1f} s before the {what}"))
    return waits


def read(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


class RelayKeeper:
    """The lane's relay process, for all its games: killed and started again on its port."""

    def __init__(self, lane: Lane, nursery: trio.Nursery, folder: Path) -> None:
        self.lane = lane
        self.nursery = nursery
        self.folder = folder
        self.procs: list[Proc] = []

    async def start(self) -> None:
        name = f"relay{self.lane.index}-{len(self.procs)}"
        proc = await spawn(
            self.nursery, self.lane.names["r"], name,
            ["relay", "--port", str(RELAY_PORT), "--report", "60"], self.folder,
        )  # fmt: skip
        self.procs.append(proc)
        await wait_for_text(proc, "Tables use it with", 60)

    async def restart(self, down: float) -> None:
        proc = self.procs[-1]
        proc.kill()
        await trio.sleep(down)
        await self.start()

    def stop(self) -> dict[str, Any] | None:
        """SIGINT to the running relay; the counts it prints as it ends are read later."""
        proc = self.procs[-1] if self.procs else None
        if proc is not None and proc.running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.process.pid, signal.SIGINT)
        return None


def relay_counts(proc: Proc) -> dict[str, Any] | None:
    lines = [x for x in proc.output().splitlines() if x.startswith("RELAY ")]
    return json.loads(lines[-1][len("RELAY ") :]) if lines else None


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Run:
    reports: list[GameReport] = field(default_factory=list)
    relays: list[RelayKeeper] = field(default_factory=list)
    seconds: float = 0.0
    cpu: float = 0.0
    packets: PacketCounts = field(default_factory=PacketCounts)


async def run_lanes(args: argparse.Namespace, folder: Path, run: Run) -> None:
    network = Network(random.Random(f"{args.seed}/network"))
    lanes: list[Lane] = []
    try:
        for index in range(args.lanes):
            lanes.append(make_lane(index, network))
        clean = list(range(args.clean))
        games = list(range(args.clean, args.clean + args.games))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(network.run)
            async with trio.open_nursery() as players:
                for lane in lanes:
                    keeper = RelayKeeper(lane, nursery, folder)
                    run.relays.append(keeper)
                    mine = [g for g in clean if g % args.lanes == lane.index]
                    mine += [g for g in games if (g - args.clean) % args.lanes == lane.index]
                    players.start_soon(play_lane, args, lane, network, keeper, mine, folder, run)
            for keeper in run.relays:
                keeper.stop()
            with trio.move_on_after(10):
                while any(p.running for k in run.relays for p in k.procs):
                    await trio.sleep(0.1)
            nursery.cancel_scope.cancel()
        run.packets = network.counts
    finally:
        for lane in lanes:
            remove_lane(lane)


async def play_lane(
    args: argparse.Namespace,
    lane: Lane,
    network: Network,
    relay: RelayKeeper,
    numbers: list[int],
    folder: Path,
    run: Run,
) -> None:
    await relay.start()
    for number in numbers:
        clean = number < args.clean
        game = Game(args, lane, network, relay, number, folder / f"game{number:03d}", clean=clean)
        report = await game.play()
        run.reports.append(report)
        say_game(report)


def say_game(r: GameReport) -> None:
    what = "clean" if r.clean else ", ".join(f"{n} {k}" for k, n in r.faults.items() if n)
    state = r.outcome.upper() if r.lost or r.outcome == "abandoned" else r.outcome
    print(f"game {r.game:3d} (lane {r.lane}, listening {r.listening}): {state}, "
          f"{r.rounds} rounds in {r.seconds:.0f} s, faults: {what or 'none'}, "
          f"longest wait {r.max_wait:.1f} s ({r.max_clear_wait:.1f} s with no other fault "
          "under way)", flush=True)  # fmt: skip
    for problem in r.problems:
        print(f"    {problem}", flush=True)


def per_round(reports: list[GameReport]) -> float | None:
    rounds = sum(r.rounds for r in reports)
    return sum(r.seconds for r in reports) / rounds if rounds else None


def figures(args: argparse.Namespace, run: Run) -> dict[str, Any]:
    chaos = sorted((r for r in run.reports if not r.clean), key=lambda r: r.game)
    clean = [r for r in run.reports if r.clean]
    faults = {kind: sum(r.faults[kind] for r in chaos) for kind in KINDS}
    clean_round, chaos_round = per_round(clean), per_round(chaos)
    relays = [relay_counts(p) for k in run.relays for p in k.procs[-1:]]
    waits = [r.max_wait for r in chaos]
    clear = [r.max_clear_wait for r in chaos]
    bound = args.deadline + args.grace + VOTE_SLACK
    return {
        "games": len(chaos),
        "seed": args.seed,
        "target": args.target,
        "finished": sum(r.outcome in ("finished", "dummy") for r in chaos),
        "resumed": sum(r.resumed > 0 for r in chaos),
        "resumes": sum(r.resumed for r in chaos),
        "dummy": sum(r.outcome == "dummy" for r in chaos),
        "abandoned": sum(r.outcome == "abandoned" for r in chaos),
        "lost": sum(r.lost for r in chaos),
        "verified_alike": sum(r.verified_alike for r in chaos),
        "faults": faults,
        "faults_total": sum(faults.values()),
        "packets": run.packets.to_json(),
        "impairment": {
            "loss": args.loss,
            "delay_ms": args.delay,
            "jitter_ms": args.jitter,
            "reorder": args.reorder,
            "duplicate": args.duplicate,
            "partition_s": args.partition,
        },
        "deadline_s": args.deadline,
        "grace_s": args.grace,
        "rounds": sum(r.rounds for r in chaos),
        "clean_games": len(clean),
        "clean_round_s": round(clean_round, 2) if clean_round else None,
        "chaos_round_s": round(chaos_round, 2) if chaos_round else None,
        "slowdown": round(chaos_round / clean_round, 2) if clean_round and chaos_round else None,
        "game_s": [round(r.seconds, 1) for r in chaos],
        "max_wait_s": round(max(waits), 1) if waits else None,
        "max_clear_wait_s": round(max(clear), 1) if clear else None,
        "stalls": sum(w > bound for w in clear),
        "stall_bound_s": bound,
        "peer_rss_mib_max": max((m for r in chaos for m in r.rss_mib.values()), default=None),
        "relay_rss_mib": [round(p.rss_kib / 1024, 1) for k in run.relays for p in k.procs[-1:]],
        "relay_restarts": sum(len(k.procs) - 1 for k in run.relays),
        "relay_counts": relays,
        "seconds": round(run.seconds, 1),
        "cpu_s": round(run.cpu, 1),
        "problems": {str(r.game): r.problems for r in run.reports if r.problems},
    }


def say_figures(f: dict[str, Any]) -> None:
    print()
    print(f"Chaos: {f['games']} games to {f['target']} (seed {f['seed']}), "
          f"{f['seconds']:.0f} s, {f['cpu_s']:.0f} s of CPU")  # fmt: skip
    imp = f["impairment"]
    print(f"  network: loss {imp['loss']:g}%, delay {imp['delay_ms']:g} ± {imp['jitter_ms']:g} ms, "
          f"reorder {imp['reorder']:g}%, duplicate {imp['duplicate']:g}%, "
          f"partitions of {imp['partition_s']:g} s; deadlines {f['deadline_s']:g} s "
          f"+ grace {f['grace_s']:g} s")  # fmt: skip
    print(f"  finished {f['finished']} (with a dummy {f['dummy']}), abandoned {f['abandoned']}, "
          f"LOST {f['lost']}; records verifying alike {f['verified_alike']}/{f['games']}; "
          f"games with a resume {f['resumed']} ({f['resumes']} resumes)")  # fmt: skip
    print(f"  faults: {f['faults_total']} ("
          + ", ".join(f"{k} {n}" for k, n in f["faults"].items()) + ")")  # fmt: skip
    p = f["packets"]
    print(f"  packets: {p['packets']}, lost {p['lost']}, duplicated {p['duplicated']}, "
          f"sent ahead {p['reordered']}, dropped in partitions {p['partitioned']}")  # fmt: skip
    if f["slowdown"] is not None:
        print(f"  time per round: {f['chaos_round_s']} s against {f['clean_round_s']} s on a "
              f"clean network ({f['slowdown']}x)")  # fmt: skip
    print(f"  longest wait for another seat's turn: {f['max_wait_s']} s; with no other fault "
          f"under way {f['max_clear_wait_s']} s ({f['stalls']} games past deadline + grace "
          f"+ {VOTE_SLACK:g} s, {f['stall_bound_s']:g} s)")  # fmt: skip
    print(f"  memory at the end: peers at most {f['peer_rss_mib_max']} MiB, relay "
          f"{f['relay_rss_mib']} MiB ({f['relay_restarts']} relay restarts)")  # fmt: skip


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games with faults (40)")
    parser.add_argument("--clean", type=int, default=2,
                        help="games first on a clean network, with no fault (2)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", type=int, default=501)
    parser.add_argument("--lanes", type=int, default=1, help="tables side by side (1)")
    parser.add_argument("--loss", type=float, default=5.0, help="%% of packets dropped (5)")
    parser.add_argument("--delay", type=float, default=150.0, help="ms per packet (150)")
    parser.add_argument("--jitter", type=float, default=100.0, help="± ms per packet (100)")
    parser.add_argument("--reorder", type=float, default=5.0, help="%% sent at once (5)")
    parser.add_argument("--duplicate", type=float, default=1.0, help="%% sent twice (1)")
    parser.add_argument("--partition", type=float, default=20.0, help="seconds cut off (20)")
    parser.add_argument("--gap", type=float, default=40.0,
                        help="mean seconds between two faults of a game (40)")  # fmt: skip
    parser.add_argument("--downtime", type=float, default=15.0,
                        help="most seconds a killed process stays down (15)")  # fmt: skip
    parser.add_argument("--deadline", type=float, default=30.0,
                        help="seconds for a decision or a protocol step (30)")  # fmt: skip
    parser.add_argument(
        "--grace",
        type=float,
        default=60.0,
        help="seconds past a deadline before a seat is signed gone (60)",
    )
    parser.add_argument(
        "--game-timeout",
        type=float,
        default=1800.0,
        help="seconds a game may take before it counts as lost (1800)",
    )
    parser.add_argument("--folder", type=Path, help="where the games are kept (a new one)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="the faults drawn (" + ",".join(KINDS) + ")")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="say each fault as it comes")
    args = parser.parse_args(argv)
    args.kinds = set(args.kinds.split(","))
    if not args.kinds or args.kinds - set(KINDS):
        parser.error(f"--kinds: some of {', '.join(KINDS)}")
    args.impairment = Impairment(
        loss=args.loss / 100, delay=args.delay / 1000, jitter=args.jitter / 1000,
        reorder=args.reorder / 100, duplicate=args.duplicate / 100,
    )  # fmt: skip
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    reason = why_unavailable()
    if reason is not None:
        print(f"chaos: cannot run here: {reason}", file=sys.stderr)
        print(json.dumps({"games": args.games, "unavailable": reason}))
        return UNAVAILABLE
    removed = remove_leftovers()
    if removed:
        print(f"Removed {len(removed)} namespaces of an earlier run: {', '.join(removed)}")
    folder = args.folder or Path(tempfile.mkdtemp(prefix="belote-chaos-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"Chaos: {args.games} games (+{args.clean} clean) to {args.target} in {args.lanes} "
          f"lane(s), seed {args.seed}; the games are kept in {folder}", flush=True)  # fmt: skip
    run = Run()
    start = time.monotonic()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)

    async def guarded() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:

                async def body() -> None:
                    await run_lanes(args, folder, run)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(body)
                async for signum in signals:
                    print(f"chaos: stopped by signal {signum}", file=sys.stderr, flush=True)
                    nursery.cancel_scope.cancel()

    try:
        trio.run(guarded)
    finally:
        for name, pid in our_namespaces().items():
            if pid == os.getpid():
                remove_namespace(name)
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.seconds = time.monotonic() - start
    run.cpu = (now.ru_utime - cpu.ru_utime) + (now.ru_stime - cpu.ru_stime)
    result = figures(args, run)
    say_figures(result)
    print(json.dumps(result))
    return 0 if result["lost"] == 0 and result["verified_alike"] == result["games"] else 1


if __name__ == "__main__":
    sys.exit(main())
