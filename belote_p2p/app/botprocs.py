"""Local bot peers: ``host --bots N`` and ``demo`` start each bot seat as its own process
(``belote-p2p join ... --bot NAME``) with its own identity and home, and compare the final
scores every process reports.

Each process runs in its own session (its own process group), with its output in files
of its home (``output.txt``, ``process.log``), not in pipes: a Ctrl-C at the host's terminal
does not reach it, and a crash of the host's process leaves it playing, so that ``resume``
brings the whole table back (and starts again, with ``resume --bot``, a bot process that
died too: :func:`restart_bot_processes`). The host stops its bot processes itself: when it
leaves the lobby, or when they outstay the game.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from belote_p2p.i18n import _
from belote_p2p.net.peer import PeerResult
from belote_p2p.players.bots import failed, fallback_text
from belote_p2p.protocol.private import open_private, private_directory
from belote_p2p.protocol.table import TableDefinition

from .home import Home, unfinished_games
from .output import parse_result
from .seat import SeatOptions
from .wording import error_text

BOT_PROCESS_GRACE = 60.0
"""Seconds the host waits for its bot processes once its own game is over."""
PROCESS_FILE = "process.json"


def bot_name(seat: int) -> str:
    """A bot's name, by its seat (one rule for ``host --bots``, ``demo`` and the web
    lobby's bots): ``Bot0`` the host's own (the demo's), ``Bot2`` the bot process at seat 2,
    so that "Bot0 & Bot2 win" names a team and the seats read as the names."""
    return f"Bot{seat}"


def bot_seats(seats: int, bots: int) -> range:
    """The seats of ``host --bots``'s bot processes at a table of ``seats``: the last
    ``bots`` (each asks for its own, ``join --seat``); the people who join take the seats
    before them."""
    return range(seats - bots, seats)


@dataclass
class BotProcess:
    number: int
    command: list[str]
    home: Home
    status: int | None = None
    output: str = ""
    hold_log: bool = False
    """Show the process's log only if it fails (a person plays at our terminal)."""
    process: trio.Process | None = None

    @property
    def result(self) -> dict[str, Any] | None:
        return parse_result(self.output)

    @property
    def output_file(self) -> Path:
        return self.home.root / "output.txt"

    @property
    def log_file(self) -> Path:
        return self.home.root / "process.log"

    def terminate(self) -> None:
        """Stop the process (SIGTERM: a bot seat resigns, then exits)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(OSError):
                self.process.send_signal(signal.SIGTERM)


async def start_detached(command: Sequence[str], home: Home) -> trio.Process:
    """Start ``command`` in its own session, its output in ``home``'s files."""
    private_directory(home.root)
    with (
        open_private(home.root / "output.txt", "wb") as out,
        open_private(home.root / "process.log", "ab") as log,
    ):
        process = await trio.lowlevel.open_process(
            list(command), stdin=subprocess.DEVNULL, stdout=out, stderr=log,
            start_new_session=True,
        )  # fmt: skip
    return process


async def run_bot_process(proc: BotProcess, spec: str) -> None:
    """Start the bot process and wait for it (a cancelled wait leaves it running)."""
    proc.process = await start_detached(proc.command, proc.home)
    with contextlib.suppress(OSError):
        (proc.home.root / PROCESS_FILE).write_text(
            json.dumps({"pid": proc.process.pid, "bot": spec, "command": proc.command})
        )
    await proc.process.wait()
    proc.status = proc.process.returncode
    with contextlib.suppress(OSError):
        proc.output = proc.output_file.read_text("utf-8", "replace")
    if proc.hold_log and proc.status not in (0, None):
        with contextlib.suppress(OSError):
            tail = proc.log_file.read_text("utf-8", "replace").splitlines()[-20:]
            said = _("bot process {number}: {line}")
            print(
                "\n".join(said.format(number=proc.number, line=line) for line in tail),
                file=sys.stderr,
            )


def bot_command(
    k: int, lobby: str, options: SeatOptions, bot: str, *, rematch: bool = False
) -> list[str]:
    """The command line of the bot process of seat ``k`` (:func:`bot_seats`), which asks
    for that seat under its name (:func:`bot_name`); ``rematch``: it says yes to another
    game."""
    cmd = [sys.executable, "-m", "belote_p2p", "join", lobby, "--bot", bot, "--json"]
    cmd.append("--rematch" if rematch else "--no-rematch")
    cmd += ["--name", bot_name(k), "--seat", str(k), "--home", str(options.home.bot(k))]
    cmd += ["--bind", options.bind, "--quiet", "--bot-deadline", str(options.bot_deadline)]
    cmd += ["--person-deadline", str(options.person_deadline), "--grace", str(options.grace)]
    cmd += ["--connect-timeout", str(options.connect_timeout)]
    cmd += ["--step-deadline", str(options.step_deadline)]
    if options.seed is not None:
        cmd += ["--seed", str(options.seed + k)]
    if options.timing_log is not None:
        cmd += ["--timing-log", str(options.timing_log)]
    return cmd


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is gone
    return True


async def restart_bot_processes(home: Home, definition: TableDefinition) -> list[int]:
    """After a crash of the host: start again (``resume --bot``) each bot process of
    ``home`` whose process is gone while its game of ``definition`` is unfinished; the
    numbers of those restarted. A bot process still running needs nothing: it waits for
    the host within its deadlines."""
    restarted = []
    bots = home.root / "bots"
    for folder in sorted(bots.iterdir()) if bots.is_dir() else []:
        bot_home = Home(folder)
        try:
            info = json.loads((folder / PROCESS_FILE).read_text())
            pid, spec = int(info["pid"]), str(info["bot"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if alive(pid):
            continue
        try:
            identity = bot_home.identity()
        except (OSError, ValueError):
            continue
        games = [g for g in unfinished_games(bot_home, identity) if g.definition == definition]
        if not games:
            continue
        command = [sys.executable, "-m", "belote_p2p", "resume", "--bot", spec, "--json",
                   "--quiet", "--home", str(folder)]  # fmt: skip
        process = await start_detached(command, bot_home)
        (folder / PROCESS_FILE).write_text(
            json.dumps({"pid": process.pid, "bot": spec, "command": command})
        )
        restarted.append(int(folder.name) if folder.name.isdigit() else 0)
    return restarted


def check_agreement(
    result: PeerResult, others: Mapping[int, dict[str, Any] | None], quiet: bool
) -> int:
    """1 unless every bot process (``others``: its result by its number, which is its
    seat) reported the host's final scores. The seat that left a game its partner played
    on (``result.left``) owes none: its record ends where it left. A bot process whose bot
    failed some decisions (a stand-in played them) is named with its counts."""
    for k, r in others.items():
        counts = r.get("fallbacks") if r else None
        if isinstance(counts, dict) and failed(counts):
            print(
                _("Bot process {number}: {counts}").format(number=k, counts=fallback_text(counts)),
                flush=True,
            )
    live = {k: r for k, r in others.items() if k != result.left}
    ours = list(result.state.scores)
    scores = [ours] + [r.get("scores") if r else None for r in live.values()]
    if all(s == ours for s in scores) and all(r and r.get("ok") for r in live.values()):
        if not quiet:
            final = "-".join(str(x) for x in ours)
            if result.left is None:
                line = _("All {n} peers agree: final scores {scores}").format(
                    n=len(scores), scores=final
                )
            else:
                line = _(
                    "All {n} live peers agree: final scores {scores} (seat {seat} left; its "
                    "partner played on)"
                ).format(n=len(scores), scores=final, seat=result.left)
            print(line, flush=True)
        return 0
    print(
        error_text(_("the peers' final scores differ: {scores}").format(scores=scores)),
        file=sys.stderr,
        flush=True,
    )
    return 1
