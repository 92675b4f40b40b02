"""What the hostile-network benchmark (``benchmarks/chaos.py``) found: each in the layer
where it was, the table sessions in memory, or four real peers on loopback in one process,
a seat killed (its nursery cancelled: as a killed process, as far as the table can tell)
and resumed with ``run_peer`` on its transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from belote_p2p.app import cli
from belote_p2p.app.botprocs import bot_command
from belote_p2p.app.seat import seat_options
from belote_p2p.net.peer import PeerConfig

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


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
