"""Fixtures only: the helpers that tests share are in ``helpers.py``."""

from __future__ import annotations

import random

import pytest


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)
