"""Fixtures only: the helpers that tests share are in ``helpers.py``."""

from __future__ import annotations

import os
import random

import pytest


def pytest_report_collectionfinish(
    config: pytest.Config, start_path: object, items: list[pytest.Item]
) -> str:
    """Say how many tests were collected, even with ``-q`` (so a run that collects too few
    shows it at once)."""
    return f"collected {len(items)} tests"


@pytest.hookimpl(optionalhook=True)  # the hook exists only with pytest-xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the suite's addopts) starts two workers per core: about half of a
    worker's time is spent waiting (for subprocesses, sockets, terminals and browsers
    playing games in real time), which another worker fills with work.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return 2 * len(os.sched_getaffinity(0))


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)
