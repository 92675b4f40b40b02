"""The installed package as a user meets it: entry points and console commands.

CI installs the project and the example bot package (``.ci/run``); there these tests must
run. In a source tree without the example installed they are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from importlib.metadata import entry_points

import pytest
from helpers import cli_argv

EXAMPLE_INSTALLED = any(ep.name == "example" for ep in entry_points(group="belote_p2p.bots"))
needs_example = pytest.mark.skipif(
    not EXAMPLE_INSTALLED and not os.environ.get("CI"),
    reason="the example bot package is not installed (CI installs it)",
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args),
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_builtin_bots_come_through_the_entry_point_group() -> None:
    names = {ep.name for ep in entry_points(group="belote_p2p.bots")}
    assert "builtin" in names


@needs_example
def test_the_installed_example_bot_is_listed() -> None:
    done = run("bots", "--json")
    assert done.returncode == 0, done.stderr
    listed = {b["name"]: b for b in json.loads(done.stdout)}
    assert {"random", "rules", "pimc", "example-greedy"} <= set(listed)
    assert "belote-bot-example" in listed["example-greedy"]["package"]


@needs_example
def test_the_installed_example_bot_plays_in_the_arena() -> None:
    done = run("arena", "--bots", "example-greedy,random", "--boards", "4", "--json",
               "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["boards"] == 4
