"""Does a watcher slow the table? One game between four bot peers on loopback (in this
process), played three times with the same deals and the same bots:

    python benchmarks/watch.py [--target 501] [--seed 9]

* alone: no watcher;
* readers: three watchers in this process that read every frame and check nothing (what
  serving watchers costs the host);
* watched: three ``belote-p2p watch`` processes follow it (one joins mid-game), each checking
  every envelope as ``verify`` does, on a core of their own as far as the machine has one;
* stuck: one watcher sends its hello and never reads again (it costs no CPU, so this run is
  the fair comparison with the first): the host's hub must drop it once its queue is full
  (:data:`~belote_p2p.net.watch.WATCH_QUEUE` envelopes past the kernel's buffers), never
  wait for it.

Reports each game's wall time, the watchers' lag (from the game's end at the host to each
watcher's last line), and the hub's counters. The deals are the same in every run: each
seat's deck secrets are derived from ``--seed`` (the tests' ``SeededSecrets``; a real
peer's are random). The machine's other load moves the times; compare the runs of one call.

Prints a readable report and, as its last line, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins", ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import trio
from helpers import LOOPBACK, SeededSecrets, make_table, open_listeners

from belote_p2p.net.invite import Invitation
from belote_p2p.net.peer import run_peer
from belote_p2p.net.relay import HostPort
from belote_p2p.net.watch import WatchHub, watch_code
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.watch import hello_message
from belote_p2p.protocol.wire import Envelope, frame


async def one_game(target: int, seed: int, mode: str, tmp: Path) -> dict[str, Any]:
    listeners = await open_listeners(4)
    definition, ids = make_table("classic", target, seed, listeners=listeners)
    hub = WatchHub(definition.table_id)
    watchers: list[trio.Process] = []
    lags: list[float] = []
    ended_at: list[float] = []
    mid = trio.Event()

    def step(envelopes: Sequence[Envelope]) -> None:
        hub.publish(envelopes)
        if hub.recorded >= 40:
            mid.set()

    async def peer(seat: int) -> None:
        await run_peer(
            definition, seat, ids[seat], BotPlayer("random", seed=seat),
            transcript=tmp / f"{mode}-seat{seat}.transcript", listeners=[listeners[seat]],
            secrets=SeededSecrets(seed, seat), proposal=definition.propose(ids[0]),
            on_step=step if seat == 0 else None,
        )  # fmt: skip

    async def watcher(code: str, when: trio.Event | None) -> None:
        if when is not None:
            await when.wait()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")])}
        proc = await trio.run_process(
            [sys.executable, "-m", "belote_p2p", "watch", code, "--plain"],
            capture_stdout=True, env=env, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        lags.append(time.perf_counter() - ended_at[0])
        watchers.append(proc)

    async def reader(port: int) -> None:
        stream = await trio.open_tcp_stream(LOOPBACK, port)
        await stream.send_all(frame(hello_message(definition.table_id[:8])))
        while await stream.receive_some(1 << 16):
            pass

    async def stuck(port: int) -> None:
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await sock.connect((LOOPBACK, port))
        await trio.SocketStream(sock).send_all(frame(hello_message(definition.table_id[:8])))
        await trio.sleep_forever()

    async with trio.open_nursery() as outer:
        service = HostPort()
        service.watch = hub.handle
        port_listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
        await outer.start(service.serve, port_listeners)
        port = port_listeners[0].socket.getsockname()[1]
        code = watch_code(Invitation.of(definition.table_id, ids[0].public_key_bytes,
                                        (f"{LOOPBACK}:{port}",)))  # fmt: skip
        if mode == "stuck":
            outer.start_soon(stuck, port)
        async with trio.open_nursery() as nursery:
            if mode == "watched":
                for when in (None, None, mid):
                    nursery.start_soon(watcher, code, when)
                while hub.stats.watching < 2:  # their start-up is not the game's time
                    await trio.sleep(0.05)
            if mode == "readers":
                for _ in range(3):
                    nursery.start_soon(reader, port)
            hub.open(definition, definition.propose(ids[0]))
            start = time.perf_counter()
            async with trio.open_nursery() as table:
                for seat in range(4):
                    table.start_soon(peer, seat)
            ended_at.append(time.perf_counter())
            hub.finish("the game is over")
        outer.cancel_scope.cancel()
    ok = all(p.returncode == 0 for p in watchers)
    return {
        "mode": mode,
        "seconds": round(ended_at[0] - start, 2),
        "envelopes": hub.recorded,
        "watchers_ok": ok,
        "watcher_lag_s": [round(x, 2) for x in sorted(lags)],
        "served": hub.stats.served,
        "dropped": hub.stats.dropped,
    }


async def main(target: int, seed: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="belote-watch-") as tmp:
        modes = ("alone", "readers", "watched", "stuck")
        return [await one_game(target, seed, mode, Path(tmp)) for mode in modes]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=int, default=501)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    runs = trio.run(main, args.target, args.seed)
    print(f"One classic game to {args.target} (seed {args.seed}), four bot peers in one process:")
    for run in runs:
        extra = ""
        if run["mode"] == "watched":
            lag, ok = run["watcher_lag_s"], run["watchers_ok"]
            extra = f", 3 watchers (lag after the end: {lag} s, all checked the game: {ok})"
        elif run["mode"] == "readers":
            extra = ", 3 in-process readers (the host's cost of serving, no checking)"
        elif run["mode"] == "stuck":
            extra = f", 1 watcher that never reads: dropped {run['dropped']}"
        print(f"  {run['mode']:8} {run['seconds']:6.2f} s, {run['envelopes']} envelopes{extra}")
    print(json.dumps({"target": args.target, "seed": args.seed, "runs": runs}))
