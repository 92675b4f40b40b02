"""Local bot peers: ``host --bots N`` and ``demo`` start each bot seat as its own
process (``belote-p2p join ... --bot NAME``) with its own identity and home, and compare
the final scores every process reports.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.net.peer import PeerResult

from .output import parse_result
from .seat import SeatOptions

BOT_PROCESS_GRACE = 60.0
"""Seconds the host waits for its bot processes once its own game is over."""


@dataclass
class BotProcess:
    number: int
    command: list[str]
    status: int | None = None
    output: str = ""
    hold_log: bool = False
    """Keep the process's log (stderr) off our terminal, where a person plays the
    terminal table; it is shown only if the process fails."""

    @property
    def result(self) -> dict[str, Any] | None:
        return parse_result(self.output)


async def run_bot_process(proc: BotProcess) -> None:
    completed = await trio.run_process(
        proc.command, capture_stdout=True, capture_stderr=proc.hold_log, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    proc.status = completed.returncode
    proc.output = completed.stdout.decode("utf-8", "replace")
    if proc.hold_log and completed.returncode != 0 and completed.stderr:
        tail = completed.stderr.decode("utf-8", "replace").splitlines()[-20:]
        print("\n".join(f"bot process {proc.number}: {line}" for line in tail), file=sys.stderr)


def bot_command(k: int, lobby: str, options: SeatOptions, bot: str) -> list[str]:
    cmd = [sys.executable, "-m", "belote_p2p", "join", lobby, "--bot", bot]
    cmd += ["--name", f"Bot{k}", "--home", str(options.home.bot(k))]
    cmd += ["--bind", options.bind, "--quiet", "--bot-deadline", str(options.bot_deadline)]
    cmd += ["--person-deadline", str(options.person_deadline), "--grace", str(options.grace)]
    if options.seed is not None:
        cmd += ["--seed", str(options.seed + k)]
    if options.timing_log is not None:
        cmd += ["--timing-log", str(options.timing_log)]
    return cmd


def check_agreement(
    result: PeerResult, others: Sequence[dict[str, Any] | None], quiet: bool
) -> int:
    """1 unless every bot process reported the host's final scores."""
    ours = list(result.state.scores)
    scores = [ours] + [r.get("scores") if r else None for r in others]
    if all(s == ours for s in scores) and all(r and r.get("ok") for r in others):
        if not quiet:
            final = "-".join(str(x) for x in ours)
            print(f"All {len(scores)} peers agree: final scores {final}", flush=True)
        return 0
    print(f"error: the peers' final scores differ: {scores}", file=sys.stderr, flush=True)
    return 1
