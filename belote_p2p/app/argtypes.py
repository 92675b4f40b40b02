"""The kinds of number a command-line option takes, each checked as it is parsed.

argparse's ``type=int`` takes ``--port 99999`` (the socket then binds the port modulo
65536) and ``--port -5`` (a traceback later); one function per kind says what is wrong in one
line, as argparse prints it, in the reader's language: ``error: argument --port: a port is 0
to 65535 (0: any free port), not 99999``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from belote_p2p.i18n import _


def _refused(what: str, text: str) -> argparse.ArgumentTypeError:
    """What an option takes, and what it was given instead."""
    return argparse.ArgumentTypeError(_("{what}, not {text}").format(what=what, text=text))


def _number(text: str, kind: Callable[[str], float], what: str) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise _refused(what, repr(text)) from None
    if not math.isfinite(value):
        raise _refused(what, repr(text))
    return value


def port(text: str) -> int:
    """A TCP or UDP port, 0 to 65535; 0 lets the system choose a free one."""
    what = _("a port is 0 to 65535 (0: any free port)")
    value = int(_number(text, int, what))
    if not 0 <= value <= 65535:
        raise _refused(what, text)
    return value


def seat_number(text: str) -> int:
    """A seat, 0 to 3 (a table's own seat count is checked once it is known)."""
    what = _("a seat is 0 to 3")
    value = int(_number(text, int, what))
    if not 0 <= value <= 3:
        raise _refused(what, text)
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (a target score, a count of boards or jobs...)."""
    what = _("a whole number of at least 1")
    value = int(_number(text, int, what))
    if value < 1:
        raise _refused(what, text)
    return value


def board_number(text: str) -> int:
    """A board of a match, 0 or more (the first board is 0)."""
    what = _("a board is a whole number, 0 or more")
    value = int(_number(text, int, what))
    if value < 0:
        raise _refused(what, text)
    return value


def seconds(text: str) -> float:
    """A duration in seconds, 0 or more (0 where the option says what it means)."""
    what = _("a number of seconds, 0 or more")
    value = _number(text, float, what)
    if value < 0:
        raise _refused(what, text)
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds, more than 0."""
    what = _("a number of seconds, more than 0")
    value = _number(text, float, what)
    if value <= 0:
        raise _refused(what, text)
    return value


def positive_number(text: str) -> float:
    """A quantity (KiB, a rate) more than 0."""
    what = _("a number more than 0")
    value = _number(text, float, what)
    if value <= 0:
        raise _refused(what, text)
    return value


def seed(text: str) -> int:
    """A seed: any whole number."""
    return int(_number(text, int, _("a seed is a whole number")))
