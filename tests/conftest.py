"""Fixtures only: the helpers that tests share are in ``helpers.py``."""

from __future__ import annotations

import random

import pytest


def pytest_report_collectionfinish(
    config: pytest.Config, start_path: object, items: list[pytest.Item]
) -> str:
    """Say how many tests were collected, even with ``-q`` (so a run that collects too few
    shows it at once)."""
    return f"collected {len(items)} tests"


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)
