"""A whole game between bot peer processes on loopback, timed (four; three for
``--variant three-handed``, two for ``two-handed``).

    python benchmarks/p2p_game.py [--variant V] [--target 501] [--bot random] [--seed S]
                                  [--relay] [--leave N]

Runs ``belote-p2p host --bots 3`` (four processes, four identities, the real lobby, mesh
(``--bots 2`` or ``--bots 1`` with three or two seats: the figures below count the others)
and deck protocol) with the peers' hidden ``--timing-log`` option: each peer writes a
wall-clock time for every table event (the clock is shared by the processes of one
machine). Reports:

* time per round, deal included: from the end of the previous round's audit (or from the
  table being signed) to the end of this round's audit, as seat 0 sees it; and its parts:
  the deal (to seat 0's cards), the bidding and play (to the round's last action), the
  reveal and audit;
* messages (signed envelopes) and bytes per round: each envelope goes to three peers, so the
  bytes sent on the wire are three times its framed size;
* card to all verified: from the moment a player's own session has played a card to the
  moment the last of the three other peers has checked it (signature, chain, the deck
  protocol's decryption proof, legality) and applied it; likewise for bids;
* CPU per peer per round (each process's ``process_time`` between two audits), and the
  **critical path** of each round: what the round would take with one machine per peer and
  no network delay. The timing log has a row per step of each session (a frame received, an
  action, a shuffle checked while no frame waited...) with its CPU and the envelopes it
  accepted; the step that first holds an envelope sent it. Replaying the steps in order, a
  step starts once its peer's previous step is done and every envelope it accepted from
  another peer was sent, and lasts its own CPU;
  the round's critical path is the time from the last peer's end of the previous round to the
  last peer's audit. On a machine where the peers share fewer cores than they are, the wall
  time is bounded below by the CPU of all peers divided by the cores, whatever the path;
* the same, **replayed**: the table's sessions play a game again in this one process, one
  step at a time (each step's CPU measured while no other peer runs, a clock per peer, a
  frame arriving when the step that sent it ends, each peer taking its frames in arrival
  order and doing its put-off work while none waits). It leaves out what the timing log
  holds besides the sessions (the network stack, trio, the transcript file, the log itself)
  and what four peers on fewer cores do to each other's CPU time and to the order in which
  each takes its frames: the path of the protocol itself, and the gap to the timing log's
  figure is what those cost here.

With ``--relay`` the same game is played a second time with every pair of peers through a
standalone relay (``belote-p2p relay``; the host and its three joiners all ``--no-listen``),
and the report puts its round times next to the direct game's, with the bytes the relay
forwarded per round (every frame of every pair, handshakes and sync requests included).

With ``--leave N`` (four seats) the game is played instead by four bot peers of one process
over loopback (``run_peer``, as the tests do), and seat 1 resigns at its first decision of
round N: its partner plays its open hand to the end (PROTOCOL.md §6.7). The report gives the
time from the leave (each live peer processing the resignation) to the next action of the
game at the last of them, and to the dummy's first action, as the peers' own clock sees them
(the release of the leaver's cards and the partner's decision between them), and checks that
the three live records verify alike.

Prints a readable report and, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from belote_p2p.game.rules import rule_set
from belote_p2p.players.bots import call_bot, make_bot
from belote_p2p.protocol.events import DecisionNeeded, RoundAudited, RoundDealt
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.wire import Envelope

WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}


def run_game(home: Path, timing: Path, args: argparse.Namespace) -> tuple[float, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(ROOT / "plugins"), env.get("PYTHONPATH", "")) if p
    )
    cmd = [sys.executable, "-m", "belote_p2p", "host", "--name", "Bench", "--bot", args.bot,
           "--bots", str(args.seats - 1), "--port", "0", "--bind", "127.0.0.1", "--home", str(home),
           "--variant", args.variant, "--target", str(args.target), "--quiet",
           "--timing-log", str(timing), "--seed", str(args.seed)]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=args.timeout, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"the game failed (exit status {done.returncode})")
    return elapsed, done.stdout


def run_relayed_game(home: Path, timing: Path, args: argparse.Namespace) -> tuple[float, int]:
    """The game with four --no-listen peers and a standalone relay; its duration and the
    bytes the relay forwarded."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(ROOT / "plugins"), env.get("PYTHONPATH", "")) if p
    )
    home.mkdir(parents=True)
    base = [sys.executable, "-m", "belote_p2p"]
    common = ["--bot", args.bot, "--bind", "127.0.0.1", "--no-listen",
              "--timing-log", str(timing)]  # fmt: skip

    def spawn(name: str, cmd: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
        out = home / f"{name}.out"
        with out.open("wb") as sink:
            proc = subprocess.Popen(cmd, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)  # fmt: skip
        return proc, out

    def wait_for(out: Path, text: str) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            content = out.read_text()
            if text in content:
                return content
            time.sleep(0.05)
        raise SystemExit(f"no {text!r} in {out}")

    relay, relay_out = spawn("relay", base + ["relay", "--port", "0", "--bind", "127.0.0.1"])
    procs = []
    try:
        port = wait_for(relay_out, "Tables use it with").split("(port ")[1].split(")")[0]
        start = time.perf_counter()
        host, host_out = spawn("host", base + [
            "host", "--name", "Bench", "--port", "0", "--home", str(home / "h0"),
            "--variant", args.variant, "--target", str(args.target), "--seed", str(args.seed),
            "--relay", f"127.0.0.1:{port}", *common])  # fmt: skip
        procs.append(host)
        code = wait_for(host_out, "Others join with").split("Invitation code:\n")[1].split()[0]
        for k in range(1, args.seats):
            procs.append(spawn(f"join{k}", base + [
                "join", code, "--name", f"Bot{k}", "--home", str(home / f"h{k}"), "--quiet",
                "--seed", str(args.seed + k), *common])[0])  # fmt: skip
        for proc in procs:
            if proc.wait(timeout=args.timeout) != 0:
                raise SystemExit(f"a relayed peer failed; see {home}/*.out")
        elapsed = time.perf_counter() - start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        relay.send_signal(signal.SIGINT)
        relay.wait(timeout=30)
    lines = [x for x in relay_out.read_text().splitlines() if x.startswith("RELAY ")]
    forwarded: int = json.loads(lines[-1][len("RELAY ") :])["forwarded_bytes"]
    return elapsed, forwarded


def round_times(rows: list[list[dict[str, Any]]]) -> list[float]:
    """Time per round, deal included, as seat 0 saw it."""
    ours = rows[0]
    ready = next(r["t"] for r in ours if r["kind"] == "ready")
    audited = [r["t"] for r in ours if r["kind"] == "audited"]
    return [b - a for a, b in itertools.pairwise([ready, *audited])]


def round_phases(rows: list[list[dict[str, Any]]]) -> dict[str, list[float]]:
    """Each round's wall time as seat 0 saw it, in three parts: the deal (from the end of
    the previous round to its cards), the bidding and play (to the last action's event)
    and the end (the reveal and the audit)."""
    phases: dict[str, list[float]] = {"deal": [], "bidding_and_play": [], "reveal_and_audit": []}
    start = next(r["t"] for r in rows[0] if r["kind"] == "ready")
    dealt: float | None = None
    last: float | None = None
    for r in rows[0]:
        if r["kind"] == "dealt":
            dealt = r["t"]  # a redeal's cards replace the ones before
        elif r["kind"] == "action":
            last = r["t"]
        elif r["kind"] == "audited":
            if dealt is not None and last is not None and start <= dealt <= last:
                phases["deal"].append(dealt - start)
                phases["bidding_and_play"].append(last - dealt)
                phases["reveal_and_audit"].append(r["t"] - last)
            start, dealt, last = r["t"], None, None
    return phases


def load_timing(timing: Path, seats: int) -> list[list[dict[str, Any]]]:
    rows = []
    for seat in range(seats):
        lines = (timing / f"seat{seat}.jsonl").read_text().splitlines()
        rows.append([json.loads(line) for line in lines])
    return rows


def critical_paths(
    rows: list[list[dict[str, Any]]],
) -> tuple[list[float], list[float], list[list[float]]]:
    """Per round: the critical path (seconds of CPU on the longest chain of dependent steps,
    see the module docstring), the part of it until every peer has its cards (the deal), and
    each seat's CPU."""
    steps = [
        (r["t"], seat, r)
        for seat, seat_rows in enumerate(rows)
        for r in seat_rows
        if r["kind"] in ("step", "ready", "dealt", "audited")
    ]
    steps.sort(key=lambda x: (x[0], x[1]))
    sender: dict[str, int] = {}
    for _, seat, r in steps:
        for h in r.get("env", ()):
            sender.setdefault(h, seat)
    sent: dict[str, float] = {}  # envelope -> simulated time its step ended
    clock = [0.0] * len(rows)  # simulated time each seat's last step ended
    last_cpu: list[float | None] = [None] * len(rows)  # CPU at that step (None before ready)
    ends: dict[int, dict[int, float]] = defaultdict(dict)  # round -> seat -> its audit's end
    dealt: dict[int, list[float]] = defaultdict(list)  # round -> each seat's time with cards
    cpu_at: dict[int, dict[int, float]] = defaultdict(dict)  # round -> seat -> CPU at audit
    ready_cpu = [0.0] * len(rows)
    for _, seat, r in steps:
        if r["kind"] == "ready":
            last_cpu[seat] = ready_cpu[seat] = r["cpu"]
            continue
        previous = last_cpu[seat]
        if previous is None:
            continue  # before the table was signed
        if r["kind"] == "audited":
            ends[r["round"]][seat] = clock[seat]
            cpu_at[r["round"]][seat] = r["cpu"]
            continue
        if r["kind"] == "dealt":
            dealt[r["round"]].append(clock[seat])
            continue
        start = max([clock[seat]] + [sent.get(h, 0.0) for h in r["env"] if sender[h] != seat])
        clock[seat] = start + r["cpu"] - previous
        last_cpu[seat] = r["cpu"]
        for h in r["env"]:
            if sender[h] == seat:
                sent[h] = clock[seat]
    return per_round(ends, dealt, cpu_at, ready_cpu)


def per_round(
    ends: dict[int, dict[int, float]],
    dealt: dict[int, list[float]],
    cpu_at: dict[int, dict[int, float]],
    start_cpu: list[float],
) -> tuple[list[float], list[float], list[list[float]]]:
    """From each seat's simulated time at each round's audit (``ends``), with its cards
    (``dealt``) and its CPU at the audit (``cpu_at``, ``start_cpu`` before the first round):
    per round that every seat audited, the critical path (from the last audit of the round
    before), its deal part and each seat's CPU."""
    paths, deals, cpus = [], [], []
    before, before_cpu = 0.0, start_cpu
    for number in sorted(ends):
        if len(ends[number]) != len(start_cpu):
            continue
        end = max(ends[number].values())
        paths.append(end - before)
        deals.append(max(dealt[number], default=before) - before)
        at = [cpu_at[number][seat] for seat in range(len(start_cpu))]
        cpus.append([b - a for a, b in zip(before_cpu, at, strict=True)])
        before, before_cpu = end, at
    return paths, deals, cpus


def replayed_paths(
    variant: str, target: int, bot: str, seed: int
) -> tuple[list[float], list[float], list[list[float]]]:
    """A game of the same table played again by its sessions in this one process, one step at
    a time: each step's CPU is measured alone (no other peer shares the core, no network
    stack, no transcript file), on a clock per peer, a frame arriving when the step that sent
    it ends, each peer taking its frames in arrival order and doing its work put off while
    none waits (as its driver). Per round, as :func:`critical_paths`: the critical path, its
    deal part and each seat's CPU. The deck secrets are fresh (``secrets``), the bots seeded."""
    rules = rule_set(variant).with_(target=target)
    n = rules.seats
    ids = [Identity.from_seed(bytes([seed % 256, i]) * 16) for i in range(n)]
    seats = tuple(Seat(f"p{i}", ids[i].public_key_bytes, f"127.0.0.1:{7000 + i}") for i in range(n))
    definition = TableDefinition(bytes(16), rules, seats)
    proposal = definition.propose(ids[0])
    sessions = [TableSession(definition, i, ids[i], proposal=proposal) for i in range(n)]
    for s in sessions:
        s.overlap = True  # as a live peer's driver makes it
    bots = [make_bot(bot) for _ in range(n)]
    rngs = [random.Random(f"{seed}/{i}") for i in range(n)]
    clock = [0.0] * n
    cpu = [0.0] * n
    inbox: list[list[tuple[float, int, int, bytes]]] = [[] for _ in range(n)]
    order = itertools.count()
    ends: dict[int, dict[int, float]] = defaultdict(dict)  # round -> seat -> its audit's end
    dealt: dict[int, list[float]] = defaultdict(list)  # round -> each seat's time with cards
    cpu_at: dict[int, dict[int, float]] = defaultdict(dict)  # round -> seat -> CPU at audit

    def post(seat: int, to: range | list[int], frames: list[bytes]) -> None:
        for frame in frames:
            for other in to:
                if other != seat:
                    heapq.heappush(inbox[other], (clock[seat], next(order), seat, frame))

    def run(seat: int, start: float, call: Callable[[], list[bytes]], sender: int) -> None:
        session = sessions[seat]
        clock[seat] = start
        t0 = time.process_time()
        replies = call()
        while True:
            spent = time.process_time() - t0
            clock[seat] += spent
            cpu[seat] += spent
            post(seat, [sender], replies)
            post(seat, range(n), session.take_outbox())
            replies = []
            decisions = []
            for event in session.take_events():
                if isinstance(event, RoundDealt):
                    dealt[event.number].append(clock[seat])
                elif isinstance(event, RoundAudited):
                    ends[event.record.number][seat] = clock[seat]
                    cpu_at[event.record.number][seat] = cpu[seat]
                elif isinstance(event, DecisionNeeded):
                    decisions.append(event)
            if not decisions:
                return
            t0 = time.process_time()
            for event in decisions:  # the bot's decision and our action, in the same step
                obs = event.observation
                session.act(call_bot(bots[seat], obs, rngs[seat]))

    def nothing_back(step: Callable[[], None]) -> Callable[[], list[bytes]]:
        def call() -> list[bytes]:
            step()
            return []

        return call

    for seat in range(n):
        run(seat, 0.0, nothing_back(sessions[seat].start), seat)
    while not all(s.closed for s in sessions):
        events: list[tuple[float, int, bool]] = []  # (start, seat, a frame rather than work)
        for seat, session in enumerate(sessions):
            waiting = inbox[seat]
            if waiting:
                events.append((max(clock[seat], waiting[0][0]), seat, True))
            if session.has_work and (not waiting or waiting[0][0] > clock[seat]):
                events.append((clock[seat], seat, False))
        if not events:
            raise SystemExit("the replayed game stalled")
        start, seat, frame = min(events)
        session = sessions[seat]
        if frame:
            _, _, sender, data = heapq.heappop(inbox[seat])
            run(seat, start, partial(session.receive, data), sender)
        else:
            run(seat, start, nothing_back(session.work), seat)
    return per_round(ends, dealt, cpu_at, [0.0] * n)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(values: list[float]) -> dict[str, float]:
    """Milliseconds: median, 90th percentile and max."""
    return {
        "median_ms": round(1000 * statistics.median(values), 3),
        "p90_ms": round(1000 * percentile(values, 0.9), 3),
        "max_ms": round(1000 * max(values), 3),
    }


LEAVER = 1


def leave_game(args: argparse.Namespace) -> dict[str, Any]:
    """Four in-process bot peers over loopback; seat :data:`LEAVER` resigns at its first
    decision of round ``args.leave`` (counted from 1). The figures of the leave."""
    import trio

    from belote_p2p.game.observation import Observation
    from belote_p2p.net.peer import PeerResult, run_peer
    from belote_p2p.players.player import BotPlayer, Resigned
    from belote_p2p.protocol.events import ActionTaken, SeatLeft
    from belote_p2p.protocol.identity import Identity
    from belote_p2p.protocol.secretstore import MemorySecrets
    from belote_p2p.protocol.table import Seat, TableDefinition
    from belote_p2p.protocol.verify import verify_transcript

    class Leaver(BotPlayer):
        async def decide(self, observation: Observation) -> Any:
            if observation.number + 1 >= args.leave:
                raise Resigned("the benchmark's leave")
            return await super().decide(observation)

    rules = rule_set(args.variant).with_(target=args.target)
    ids = [Identity.from_seed(bytes([args.seed % 256, k]) * 16) for k in range(4)]
    times: dict[int, dict[str, float]] = defaultdict(dict)
    results: dict[int, PeerResult] = {}

    async def game(tmp: Path) -> None:
        listeners = [(await trio.open_tcp_listeners(0, host="127.0.0.1"))[0] for _ in range(4)]
        seats = tuple(
            Seat(f"p{k}", ids[k].public_key_bytes,
                 f"127.0.0.1:{listeners[k].socket.getsockname()[1]}")
            for k in range(4)
        )  # fmt: skip
        definition = TableDefinition(bytes(range(16)), rules, seats)

        async def one(seat: int) -> None:
            def on_event(event: object) -> None:
                now, mine = time.perf_counter(), times[seat]
                if isinstance(event, SeatLeft):
                    mine.setdefault("left", now)
                elif isinstance(event, ActionTaken) and "left" in mine:
                    mine.setdefault("next_action", now)
                    if event.seat == LEAVER:
                        mine.setdefault("dummy_action", now)

            player = (Leaver if seat == LEAVER else BotPlayer)(args.bot, seed=args.seed + seat)
            results[seat] = await run_peer(
                definition, seat, ids[seat], player, transcript=tmp / f"seat{seat}.transcript",
                listeners=[listeners[seat]], secrets=MemorySecrets(),
                proposal=definition.propose(ids[0]), on_event=on_event,
            )  # fmt: skip

        with trio.fail_after(args.timeout):
            async with trio.open_nursery() as nursery:
                for seat in range(4):
                    nursery.start_soon(one, seat)

    with tempfile.TemporaryDirectory(prefix="belote-p2p-leave-") as tmp:
        started = time.perf_counter()
        trio.run(game, Path(tmp))
        elapsed = time.perf_counter() - started
        live = [s for s in range(4) if s != LEAVER]
        summaries = {verify_transcript(results[s].transcript).summary() for s in live}
        own = verify_transcript(results[LEAVER].transcript).summary()
    assert len(summaries) == 1 and all(results[s].ok for s in live), (summaries, results)
    left = max(times[s]["left"] for s in live)
    return {
        "leave_round": args.leave,
        "game_s": round(elapsed, 3),
        "leave_to_next_action_ms": round(
            1000 * (max(times[s]["next_action"] for s in live) - left), 3
        ),
        "leave_to_dummy_action_ms": round(
            1000 * (max(times[s]["dummy_action"] for s in live) - left), 3
        ),
        "leave_seen_spread_ms": round(1000 * (left - min(times[s]["left"] for s in live)), 3),
        "verdict": summaries.pop(),
        "leaver_verdict": own,
        "scores": list(results[0].state.scores),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--target", type=int, default=501)
    parser.add_argument("--bot", default="random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument(
        "--relay", action="store_true",
        help="also play the game with every pair through a standalone relay, and compare",
    )  # fmt: skip
    parser.add_argument(
        "--leave", type=int, metavar="N",
        help="four in-process peers; seat 1 resigns in round N: time the open hand's start",
    )  # fmt: skip
    args = parser.parse_args()
    args.seats = seats = rule_set(args.variant).seats
    if args.leave is not None:
        print(f"== four {args.bot} peers in one process, {args.variant} to {args.target}; "
              f"seat {LEAVER} resigns in round {args.leave}", flush=True)  # fmt: skip
        figures = leave_game(args)
        print(f"  leave -> next action at every live peer: "
              f"{figures['leave_to_next_action_ms']:.1f} ms; -> the dummy's first action "
              f"(its cards released, its partner's decision): "
              f"{figures['leave_to_dummy_action_ms']:.1f} ms")  # fmt: skip
        print(
            f"  the leave reached the three live peers within "
            f"{figures['leave_seen_spread_ms']:.1f} ms; game {figures['game_s']:.1f} s"
        )
        print(f"  {figures['verdict']}")
        print(f"  the leaver's own record: {figures['leaver_verdict']}")
        print(json.dumps(figures))
        return 0
    others = seats - 1

    # Other work on the machine shares the cores with the four peers: say how much there was.
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="belote-p2p-bench-") as tmp:
        home, timing = Path(tmp) / "home", Path(tmp) / "timing"
        print(f"== {WORDS[seats]} {args.bot} peer processes, {args.variant} to {args.target}",
              flush=True)  # fmt: skip
        elapsed, _ = run_game(home, timing, args)
        rows = load_timing(timing, seats)
        transcripts = sorted(home.glob("games/*.transcript"))
        assert len(transcripts) == 1, transcripts
        envelopes = [Envelope.decode(e) for e in read_transcript(transcripts[0]).envelopes]
        relayed: dict[str, Any] | None = None
        if args.relay:
            print("== the same, every pair through a standalone relay (all --no-listen)",
                  flush=True)  # fmt: skip
            relay_timing = Path(tmp) / "relay-timing"
            relay_elapsed, forwarded = run_relayed_game(Path(tmp) / "relay", relay_timing, args)
            relay_rounds = round_times(load_timing(relay_timing, seats))
            relayed = {
                "rounds": len(relay_rounds),
                "command_s": round(relay_elapsed, 3),
                "round": summarise(relay_rounds),
                "relay_forwarded_bytes": forwarded,
                "relay_bytes_per_round": round(forwarded / len(relay_rounds)),
            }

    # Rounds, from seat 0's clock.
    ours = rows[0]
    ready = next(r["t"] for r in ours if r["kind"] == "ready")
    over = next(r["t"] for r in ours if r["kind"] == "over")
    durations = round_times(rows)

    # Card (and bid) to all verified: the actor's own event, then the last of the others.
    seen: dict[int, dict[int, float]] = defaultdict(dict)
    kinds: dict[int, tuple[int, bool]] = {}
    for seat, seat_rows in enumerate(rows):
        for r in seat_rows:
            if r["kind"] == "action":
                seen[r["index"]][seat] = r["t"]
                kinds[r["index"]] = (r["seat"], r["card"])
    card_lat: list[float] = []
    bid_lat: list[float] = []
    for index, times in seen.items():
        actor, is_card = kinds[index]
        if len(times) != seats:
            continue
        lag = max(t for s, t in times.items() if s != actor) - times[actor]
        (card_lat if is_card else bid_lat).append(lag)

    # Messages and bytes per round, from the record.
    per_round: dict[int, list[int]] = defaultdict(list)
    other = 0
    for e in envelopes:
        number = e.body.get("round")
        if isinstance(number, int):
            per_round[number].append(len(e.encode()))
        else:
            other += 1
    messages = [len(v) for v in per_round.values()]
    wire_bytes = [others * sum(4 + n for n in v) for v in per_round.values()]

    rounds = summarise(durations)
    phases = {k: summarise(v) for k, v in round_phases(rows).items() if v}
    paths, deal_paths, round_cpus = critical_paths(rows)
    critical = summarise(paths)
    critical_deal = summarise(deal_paths)
    per_peer = summarise([c for r in round_cpus for c in r])
    slowest = summarise([max(r) for r in round_cpus])
    all_peers = summarise([sum(r) for r in round_cpus])
    cores = os.cpu_count() or 1
    floor_ms = all_peers["median_ms"] / min(cores, seats)
    verifiers = "the other" if others == 1 else f"all {WORDS[others]} others"
    cards = summarise(card_lat)
    bids = summarise(bid_lat) if bid_lat else None
    print(f"== the same table replayed in this process, one step at a time ({args.variant} to "
          f"{args.target})", flush=True)  # fmt: skip
    r_paths, r_deals, r_cpus = replayed_paths(args.variant, args.target, args.bot, args.seed)
    replayed: dict[str, Any] = {
        "rounds": len(r_paths),
        "critical_path_per_round": summarise(r_paths),
        "critical_path_deal": summarise(r_deals),
        "cpu_per_peer_per_round": summarise([c for r in r_cpus for c in r]),
    }
    print(f"  load average before/after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")  # fmt: skip
    print(f"  rounds played: {len(durations)} (redeals included), game {over - ready:.2f} s "
          f"from the signed table to game over; {elapsed:.2f} s for the whole command")  # fmt: skip
    print(f"  time per round (deal, bidding, play, reveal, audit): median "
          f"{rounds['median_ms']:.0f} ms, p90 {rounds['p90_ms']:.0f} ms, max "
          f"{rounds['max_ms']:.0f} ms")  # fmt: skip
    if phases:
        print("  of which (medians): " + ", ".join(
            f"{k.replace('_', ' ')} {v['median_ms']:.0f} ms" for k, v in phases.items()
        ))  # fmt: skip
    print(f"  CPU per peer per round: median {per_peer['median_ms']:.0f} ms (slowest peer of a "
          f"round: median {slowest['median_ms']:.0f} ms); all {WORDS[seats]} peers: median "
          f"{all_peers['median_ms']:.0f} ms, i.e. at least {floor_ms:.0f} ms of wall time per "
          f"round on {cores} cores")  # fmt: skip
    print(f"  critical path per round (one machine per peer, no network delay): median "
          f"{critical['median_ms']:.0f} ms, p90 {critical['p90_ms']:.0f} ms, max "
          f"{critical['max_ms']:.0f} ms; of which the deal (until every peer has its cards) "
          f"median {critical_deal['median_ms']:.0f} ms")  # fmt: skip
    rp, rd = replayed["critical_path_per_round"], replayed["critical_path_deal"]
    rc = replayed["cpu_per_peer_per_round"]
    print(f"  replayed ({replayed['rounds']} rounds; each step's CPU measured alone, no network "
          f"stack, no transcript file): critical path median {rp['median_ms']:.0f} ms, p90 "
          f"{rp['p90_ms']:.0f} ms, of which the deal median {rd['median_ms']:.0f} ms; CPU per "
          f"peer per round median {rc['median_ms']:.0f} ms")  # fmt: skip
    print(f"  messages per round: median {statistics.median(messages):.0f}, max {max(messages)}"
          f" (+{other} table/done messages per game)")  # fmt: skip
    print(
        f"  bytes sent per round (all peers, framed): median "
        f"{statistics.median(wire_bytes) / 1024:.1f} KiB, max {max(wire_bytes) / 1024:.1f} KiB"
    )
    print(
        f"  card played -> verified by {verifiers}: median {cards['median_ms']:.2f} ms, "
        f"p90 {cards['p90_ms']:.2f} ms, max {cards['max_ms']:.2f} ms ({len(card_lat)} cards)"
    )
    if bids:
        print(f"  bid -> verified by all: median {bids['median_ms']:.2f} ms, max "
              f"{bids['max_ms']:.2f} ms ({len(bid_lat)} bids)")  # fmt: skip
    if relayed is not None:
        r = relayed["round"]
        print(f"  through the relay: {relayed['rounds']} rounds, time per round median "
              f"{r['median_ms']:.0f} ms (direct {rounds['median_ms']:.0f} ms), p90 "
              f"{r['p90_ms']:.0f} ms, max {r['max_ms']:.0f} ms")  # fmt: skip
        print(f"  bytes through the relay: {relayed['relay_bytes_per_round'] / 1024:.1f} KiB "
              f"per round ({relayed['relay_forwarded_bytes'] / 1024:.0f} KiB in all, "
              "every pair, handshakes and syncs included)")  # fmt: skip
    figures = {
        "variant": args.variant,
        "target": args.target,
        "bot": args.bot,
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "rounds": len(durations),
        "game_s": round(over - ready, 3),
        "command_s": round(elapsed, 3),
        "round": rounds,
        "round_phases": phases,
        "cpu_per_peer_per_round": per_peer,
        "cpu_slowest_peer_per_round": slowest,
        "cpu_all_peers_per_round": all_peers,
        "critical_path_per_round": critical,
        "critical_path_deal": critical_deal,
        "replayed": replayed,
        "messages_per_round_median": statistics.median(messages),
        "messages_per_round_max": max(messages),
        "wire_bytes_per_round_median": statistics.median(wire_bytes),
        "wire_bytes_per_round_max": max(wire_bytes),
        "card_to_all_verified": cards,
        "bid_to_all_verified": bids,
        "relayed": relayed,
        "bars": {
            "round_median_under_400ms": rounds["median_ms"] < 400,
            "critical_path_median_under_150ms": critical["median_ms"] < 150,
            "card_verified_median_under_5ms": cards["median_ms"] < 5,
        },
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
