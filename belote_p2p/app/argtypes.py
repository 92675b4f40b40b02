"""The kinds of number a command-line option takes, each checked as it is parsed.

argparse's ``type=int`` takes ``--port 99999`` (the socket then binds the port modulo
65536) and ``--port -5`` (a traceback later); one function per kind says what is wrong in one
line, as argparse prints it: ``error: argument --port: a port is 0 to 65535 (0: any free
port), not 99999``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: Callable[[str], float], what: str) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what}, not {text!r}")
    return value


def port(text: str) -> int:
    """A TCP or UDP port, 0 to 65535; 0 lets the system choose a free one."""
    what = "a port is 0 to 65535 (0: any free port)"
    value = int(_number(text, int, what))
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{what}, not {text}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (a target score, a count of boards or jobs...)."""
    value = int(_number(text, int, "a whole number of at least 1"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text}")
    return value


def seconds(text: str) -> float:
    """A duration in seconds, 0 or more (0 where the option says what it means)."""
    value = _number(text, float, "a number of seconds, 0 or more")
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of seconds, 0 or more, not {text}")
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds, more than 0."""
    value = _number(text, float, "a number of seconds, more than 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a number of seconds, more than 0, not {text}")
    return value


def positive_number(text: str) -> float:
    """A quantity (KiB, a rate) more than 0."""
    value = _number(text, float, "a number more than 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a number more than 0, not {text}")
    return value


def seed(text: str) -> int:
    """A seed: any whole number."""
    return int(_number(text, int, "a seed is a whole number"))
