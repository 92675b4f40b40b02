"""The tests' own process helper (``tests/helpers.py``): a test that fails or runs out of
time while a child process it started still runs leaves no child behind."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import trio
from helpers import start, until_seen

WAITS = "import signal; print('ready', flush=True); signal.pause()"
"""A child that runs until a signal ends it."""


async def test_a_child_of_a_test_that_runs_out_of_time_is_killed(tmp_path: Path) -> None:
    # The test's deadline (``trio.fail_after``) cancels its scope as this one is cancelled;
    # here, once the child is seen running.
    with trio.CancelScope() as deadline:
        async with trio.open_nursery() as nursery:
            proc = await start(nursery, "child", [sys.executable, "-c", WAITS], tmp_path)
            await until_seen(proc, "ready")
            deadline.cancel()
            await trio.sleep_forever()
    assert deadline.cancelled_caught
    try:
        with trio.fail_after(30):  # killed: it has already ended; else the test fails here
            assert await proc.process.wait() == -signal.SIGKILL
    finally:
        proc.process.kill()


async def test_a_child_that_ends_by_itself_is_left_to_end(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        proc = await start(
            nursery, "child", [sys.executable, "-c", "print('done', flush=True)"], tmp_path
        )
    assert await proc.process.wait() == 0
    assert proc.output == "done\n"
