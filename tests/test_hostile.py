"""What the hostile-network benchmark (``benchmarks/chaos.py``) found: each in the layer
where it was, the table sessions in memory, or four real peers on loopback in one process,
a seat killed (its nursery cancelled: as a killed process, as far as the table can tell)
and resumed with ``run_peer`` on its transcript."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import (
    HoldingNet,
    SeededSecrets,
    make_table,
    table_sessions,
)

from belote_p2p.app import cli
from belote_p2p.app.botprocs import bot_command
from belote_p2p.app.seat import seat_options
from belote_p2p.net.peer import PeerConfig
from belote_p2p.protocol.session import TableSession

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


def test_a_seat_that_signed_a_vote_resumes_from_its_record() -> None:
    """Seat 1 falls silent; seats 0, 2 and 3 sign that it left (votes their clocks decided),
    and seat 0 crashes once it has signed more (its release of seat 1's cards). Its record
    is rebuilt, its vote kept as it was signed and what followed derived again; the game
    goes on to its end with seat 1's hand open, alike at the three live seats. (The
    benchmark found resumed peers ending at once, "cannot resume: 10 recorded envelope(s)
    of ours were not derived again": nothing derives a vote, and the session tried to.)"""
    definition, ids = make_table("classic", target=151, seed=12)
    sessions = table_sessions(definition, ids, deal_seed=4)
    net = HoldingNet(sessions, random.Random(3), held=1, after=3)
    net.start()
    net.deliver_until(lambda: net.pending is not None and not net.in_flight())
    for seat in (0, 2, 3):
        assert sessions[seat].abandon(1)
        net.flush(seat)
    voted = len(sessions[0].tracker.chain(0))
    net.deliver_until(lambda: len(sessions[0].tracker.chain(0)) > voted)
    record = [e.encode() for e in sessions[0].transcript]
    resumed = TableSession.resume(definition, 0, ids[0], record, SeededSecrets(4, 0))
    assert [e.hash for e in resumed.transcript] == [e.hash for e in sessions[0].transcript]
    net.sessions[0] = resumed
    net.flush(0)
    net.sync()
    live = [net.sessions[s] for s in (0, 2, 3)]
    net.deliver_until(lambda: all(s.closed for s in live))
    assert all(s.finished and s.dummy == 1 and s.abandoned is None for s in live)
    assert len({s.state.scores for s in live}) == 1


def test_the_deadlines_of_the_command_line_reach_the_peer_and_its_bot_processes(
    tmp_path: Path,
) -> None:
    """A bot table on a slow network gives its seats longer deadlines than the defaults
    (the benchmark's 30 s per step): ``--step-deadline`` beside ``--person-deadline`` and
    ``--grace``, in the peer's own clock and in the command of ``host --bots``'s processes."""
    flags = ["--step-deadline", "30", "--person-deadline", "25", "--grace", "60"]
    args = cli.build_parser().parse_args(["join", "x", "--home", str(tmp_path), *flags])
    options = seat_options(args)
    config = options.peer_config(1)
    assert (config.step_deadline, config.person_deadline, config.grace) == (30, 25, 60)
    command = bot_command(2, "127.0.0.1:7777", options, "rules")
    assert command[command.index("--step-deadline") + 1] == "30.0"
    again = seat_options(cli.build_parser().parse_args(["join", "x", "--home", str(tmp_path)]))
    assert again.peer_config(1).step_deadline == PeerConfig().step_deadline
