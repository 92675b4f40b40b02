"""What a seat prints as its game goes (a bot's seat; a person's has the terminal
table), and the ``RESULT`` line every peer ends with.

Every peer ends its output with one line ``RESULT {json}`` (seat, table id, final scores,
whether the game finished cleanly, whether our seat resigned, the XP recorded), which is
what ``host --bots`` and ``demo`` read from their bot processes.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, TypeVar

from belote_p2p.game.cards import Card
from belote_p2p.i18n import N_, _
from belote_p2p.net.peer import PeerResult, PeerStatus
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    PeerFault,
    RoundAudited,
    RoundDealt,
    SeatLeft,
    TableReady,
)
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import Envelope

from .display import fault_text, format_round, format_sheet, seat_names
from .wording import left_line, team_name, variant_name

T = TypeVar("T")

RESULT_PREFIX = "RESULT "
SIGNED = {
    2: N_("The 2 peers signed the table. Dealing."),
    3: N_("The 3 peers signed the table. Dealing."),
    4: N_("All four peers signed the table. Dealing."),
}
REDEALS_NOTICE = 20
"""A bot seat says every this many redeals in a row that nothing ends them."""


@dataclass
class Printer:
    """Prints a bot seat's game as it goes: rounds after their audit, the sheet at the end
    (a person's seat has the terminal UI, :mod:`belote_p2p.app.tui`)."""

    definition: TableDefinition
    seat: int
    quiet: bool = False
    out: IO[str] = sys.stdout
    _shown: dict[int, float] = field(default_factory=dict)
    _redeals: int = 0
    """Rounds in a row that everybody passed (RULES.md §3: no limit)."""

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The seats' names as shown: made once (the definition never changes), not for
        every event, most of which (each bid and card) print nothing."""
        return seat_names(self.definition)

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.out, flush=True)

    def __call__(self, event: Event) -> None:
        names = self.names
        if isinstance(event, TableReady):
            self.say(_(SIGNED.get(len(names), SIGNED[4])))
        elif isinstance(event, RoundAudited):
            self.say(format_round(event.record, names))
            self._redeals = self._redeals + 1 if event.record.score is None else 0
            if self._redeals and self._redeals % REDEALS_NOTICE == 0:
                self.say(
                    "  "
                    + _(
                        "{deals} deals in a row passed out: the rules set no limit (RULES.md §3), "
                        "and a table whose players never take never ends."
                    ).format(deals=self._redeals)
                )
            if event.report.fault is not None:
                f = event.report.fault
                self.say("  " + fault_text(f, names[f.seat]))
        elif isinstance(event, GameOver):
            self.say(format_sheet(event.state, names))
        elif isinstance(event, SeatLeft):
            self.say(safe_text(left_line(names[event.seat], names[event.by]) + "."))
        elif isinstance(event, GameAbandoned):
            self.say(_("The game is abandoned: {name} left it.").format(name=names[event.seat]))
            self.say(format_sheet(event.state, names))
        elif isinstance(event, PeerFault):
            who = names[event.seat] if 0 <= event.seat < len(names) else "?"
            self.say(
                safe_text(
                    _("{name} broke the protocol: {reason}").format(name=who, reason=event.reason)
                )
            )
        elif isinstance(event, DecisionNeeded):
            pass

    def status(self, status: PeerStatus, *, every: float = 10.0) -> None:
        """A countdown line for each overdue seat: when it becomes overdue, then every
        ``every`` seconds."""
        shown = self._shown
        for wait in status.overdue:
            last = shown.get(wait.seat)
            if wait.seat != self.seat and (last is None or last - wait.abandon_in >= every):
                shown[wait.seat] = wait.abandon_in
                self.say(safe_text(wait.describe()))
        for seat in list(shown):
            if seat not in {w.seat for w in status.overdue}:
                del shown[seat]


IDLE_WORK_CPU = 0.002
"""Seconds of CPU that make a step that accepted no envelope worth a row of the timing log."""


class TimingLog:
    """``--timing-log DIR``: one JSON line per table event and per step of the session, with
    its wall-clock time and this process's CPU time, for ``benchmarks/p2p_game.py`` (the
    wall clock is shared by processes on one machine).

    A step row (``"kind": "step"``) lists the envelopes the step accepted (the first 8 bytes
    of each hash, hex), ours included: the benchmark tells from them which step sent and
    which received each envelope, and so the chain of dependent steps and its CPU."""

    def __init__(self, directory: Path, seat: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._file = open(directory / f"seat{seat}.jsonl", "w")  # noqa: SIM115
        self._actions = 0
        self._cpu = time.process_time()

    def __call__(self, event: Event) -> None:
        now, cpu = time.time(), time.process_time()
        row: dict[str, Any] | None = None
        if isinstance(event, TableReady):
            row = {"kind": "ready"}
        elif isinstance(event, ActionTaken):
            row = {
                "kind": "action",
                "index": self._actions,
                "seat": event.seat,
                "card": isinstance(event.action, Card),
            }
            self._actions += 1
        elif isinstance(event, RoundDealt):
            row = {"kind": "dealt", "round": event.number}
        elif isinstance(event, RoundAudited):
            row = {"kind": "audited", "round": event.record.number}
        elif isinstance(event, GameOver):
            row = {"kind": "over"}
        if row is not None:
            row["t"] = now
            row["cpu"] = cpu
            self._file.write(json.dumps(row) + "\n")

    def step(self, envelopes: Sequence[Envelope]) -> None:
        # A step that accepted nothing is logged too when it used CPU (a shuffle checked
        # while idle): the benchmark must not charge that work to the step after it.
        cpu = time.process_time()
        if envelopes or cpu - self._cpu >= IDLE_WORK_CPU:
            row = {
                "kind": "step",
                "t": time.time(),
                "cpu": cpu,
                "env": [e.hash[:8].hex() for e in envelopes],
            }
            self._file.write(json.dumps(row) + "\n")
        self._cpu = cpu

    def close(self) -> None:
        self._file.close()


def both(*callbacks: Callable[[T], None]) -> Callable[[T], None]:
    """One callback that calls each of ``callbacks`` in turn (events, steps...)."""

    def call(value: T) -> None:
        for callback in callbacks:
            callback(value)

    return call


def hints_rule_text() -> str:
    """The table rule of hints, as every seat reads it in the lobby and at the table."""
    return _("Rule of this table: hints are on (every seat may ask the expert, with hint).")


def print_roster(definition: TableDefinition, seat: int) -> None:
    rules = definition.rules
    names = seat_names(definition)
    print(
        _("Table {table}: {variant} to {target}").format(
            table=definition.table_id.hex(), variant=variant_name(rules.name), target=rules.target
        ),
        flush=True,
    )
    if definition.hints:
        print("  " + hints_rule_text(), flush=True)

    def seat_line(i: int) -> str:
        s = definition.seats[i]
        fields = {"name": names[i], "key": fingerprint(s.key), "address": safe_text(s.address)}
        if i == seat:
            return _("{name} [{key}] at {address}  (you)").format(**fields)
        return _("{name} [{key}] at {address}").format(**fields)

    if not rules.has_teams:
        for i in range(len(definition.seats)):
            print("  " + _("seat {number}: {seat}").format(number=i, seat=seat_line(i)))
        return
    for team in (0, 1):
        print(f"  {team_name(names, team)}:")
        for i in (team, team + 2):
            print(f"    {seat_line(i)}")


def result_line(
    result: PeerResult,
    definition: TableDefinition,
    *,
    xp: int | None = None,
    fallbacks: dict[str, int] | None = None,
) -> str:
    """The ``RESULT`` line; ``fallbacks``: a bot seat's decisions and failures by cause."""
    data = {
        "seat": result.seat,
        "table": definition.table_id.hex(),
        "scores": list(result.state.scores),
        "ok": result.ok,
        "abandoned": result.abandoned,
        "left": result.left,
        "resigned": result.resigned,
        "error": result.error
        or (result.fault and f"seat {result.fault.seat}: {result.fault.reason}"),
        "transcript": str(result.transcript),
        "xp": xp,
        "relayed": result.relayed,
        "fallbacks": fallbacks,
    }
    return RESULT_PREFIX + json.dumps(data)


def parse_result(output: str) -> dict[str, Any] | None:
    """The ``RESULT`` line of a peer's output, or None."""
    for line in reversed(output.splitlines()):
        if line.startswith(RESULT_PREFIX):
            try:
                data = json.loads(line[len(RESULT_PREFIX) :])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None
