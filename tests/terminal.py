"""A person at a terminal, for the tests: a process on a pseudo-terminal of 80x24 and a
small screen that understands what the terminal table writes (cursor moves, clears, colours
ignored), so that a test reads what a person sees, not the bytes that drew it."""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path

from helpers import source_pythonpath

ROWS, COLUMNS = 24, 80
SESSION_DEADLINE = 120.0
"""Seconds a whole terminal session may take (a guard against a hang, not a timing)."""
CSI = re.compile(r"\x1b\[([0-?]*)([ -/]*)([@-~])")
CSI_CUT = re.compile(r"\x1b\[[0-?]*[ -/]*$")
"""The start of a control sequence whose final byte has not come yet."""
HOME = "\x1b[H"
"""The terminal table starts each redraw with it."""
FRAME_END = "\x1b[J"
"""And ends it with this (erasing what a longer frame before it left below)."""


class Screen:
    """An 80x24 screen: printable text, CR, LF (scrolling), backspace, bell, and the
    control sequences for cursor position, erase in line and erase in display."""

    def __init__(self, rows: int = ROWS, columns: int = COLUMNS) -> None:
        self.rows, self.columns = rows, columns
        self.cells = [[" "] * columns for _ in range(rows)]
        self.row = self.col = 0
        self.bells = 0
        self.pending = ""

    def text(self) -> str:
        return "\n".join("".join(r).rstrip() for r in self.cells).rstrip("\n")

    def lines(self) -> list[str]:
        return self.text().split("\n")

    def _scroll(self) -> None:
        self.cells.pop(0)
        self.cells.append([" "] * self.columns)

    def _newline(self) -> None:
        if self.row == self.rows - 1:
            self._scroll()
        else:
            self.row += 1

    def feed(self, data: str) -> None:
        data = self.pending + data
        self.pending = ""
        i = 0
        while i < len(data):
            ch = data[i]
            if ch == "\x1b":
                rest = data[i:]
                m = CSI.match(rest)
                if m:
                    self._csi(m.group(1), m.group(3))
                    i += m.end()
                    continue
                if rest.startswith("\x1b]"):
                    end = min((p for p in (rest.find("\x07"), rest.find("\x1b\\")) if p > 0),
                              default=-1)  # fmt: skip
                    if end < 0:
                        self.pending = rest
                        return
                    i += end + (1 if rest[end] == "\x07" else 2)
                    continue
                if len(rest) < 2 or (rest[1] == "(" and len(rest) < 3) or CSI_CUT.match(rest):
                    # A sequence cut between two reads: the rest comes with the next one.
                    self.pending = rest
                    return
                i += 3 if rest[1] in "()" else 2
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self._newline()
            elif ch == "\x08":
                self.col = max(0, self.col - 1)
            elif ch == "\x07":
                self.bells += 1
            elif ch >= " ":
                if self.col >= self.columns:
                    self.col = 0
                    self._newline()
                self.cells[self.row][self.col] = ch
                self.col += 1
            i += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith("?"):
            return
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        first = numbers[0] if numbers else 0
        if final in "Hf":
            row = (numbers[0] if numbers and numbers[0] else 1) - 1
            col = (numbers[1] if len(numbers) > 1 and numbers[1] else 1) - 1
            self.row, self.col = min(row, self.rows - 1), min(col, self.columns - 1)
        elif final == "J":
            if first == 2 or first == 3:
                self.cells = [[" "] * self.columns for _ in range(self.rows)]
            elif first == 0:
                self.cells[self.row][self.col :] = [" "] * (self.columns - self.col)
                for r in range(self.row + 1, self.rows):
                    self.cells[r] = [" "] * self.columns
        elif final == "K":
            if first == 0:
                self.cells[self.row][self.col :] = [" "] * (self.columns - self.col)
            elif first == 2:
                self.cells[self.row] = [" "] * self.columns
        elif final == "A":
            self.row = max(0, self.row - (first or 1))
        elif final == "B":
            self.row = min(self.rows - 1, self.row + (first or 1))
        elif final == "C":
            self.col = min(self.columns - 1, self.col + (first or 1))
        elif final == "D":
            self.col = max(0, self.col - (first or 1))
        elif final == "G":
            self.col = min(self.columns - 1, (first or 1) - 1)


class Terminal:
    """A command on a pseudo-terminal of 80x24, read through a :class:`Screen`. Every wait
    shares one deadline for the whole session (a guard against a hang)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))

        def controlling_terminal() -> None:
            # Its own session, with the pseudo-terminal as its controlling terminal, as a
            # login shell has: Ctrl-C and a hang-up then signal it as they would a person's.
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            preexec_fn=controlling_terminal, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.fd: int | None = master
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.screen = Screen()
        self.raw = ""
        self.backlog: list[str] = []
        self.deadline = time.monotonic() + SESSION_DEADLINE

    def _read(self, wait: float) -> list[str] | None:
        """What the process wrote (waiting up to ``wait`` s), cut before each redraw (a
        cursor home), so that every whole screen is seen; None once it is gone."""
        assert self.fd is not None
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return []
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the process and every holder of the tty are gone
            data = b""
        if not data:
            return None
        text = self.decoder.decode(data)
        self.raw += text
        pieces = text.split(HOME)
        return [pieces[0]] + [HOME + piece for piece in pieces[1:]]

    def drawing(self) -> bool:
        """A redraw began and the rest of it is still to be read: the screen shows the top
        of the new frame over the bottom of the old one, which no test may take for a
        frame (a round screen's footer under the top of the table, an old prompt under a
        new hand)."""
        home = self.raw.rfind(HOME)
        return home >= 0 and self.raw.find(FRAME_END, home) < 0

    def plain(self) -> str:
        """Everything written, without the control sequences."""
        return CSI.sub("", self.raw).replace("\r", "")

    def wait(self, found: Callable[[str], bool], what: str) -> str:
        """Read until ``found(screen text)`` holds on a whole screen (just before a redraw,
        or once nothing more comes for now and the last redraw was read to its end); that
        screen."""
        while True:
            while self.backlog:
                piece = self.backlog.pop(0)
                if piece.startswith(HOME) and not self.screen.pending:
                    text = self.screen.text()
                    if found(text):
                        self.backlog.insert(0, piece)
                        return text
                self.screen.feed(piece)
            text = self.screen.text()
            if not self.screen.pending and not self.drawing() and found(text):
                return text
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{what} did not show; the screen:\n{text}")
            pieces = self._read(min(left, 1.0))
            if pieces is None:
                raise AssertionError(f"the process ended before {what}:\n{text}")
            self.backlog += pieces

    def expect(self, pattern: str) -> re.Match[str]:
        """Read until ``pattern`` shows on the screen; its match."""
        rx = re.compile(pattern)
        text = self.wait(lambda t: rx.search(t) is not None, repr(pattern))
        found = rx.search(text)
        assert found is not None
        return found

    def expect_raw(self, pattern: str) -> re.Match[str]:
        """Read until ``pattern`` shows in everything written (scrolled away or not)."""
        rx = re.compile(pattern)
        self.wait(lambda _: rx.search(self.plain()) is not None, repr(pattern))
        found = rx.search(self.plain())
        assert found is not None
        return found

    def prompt(self) -> str:
        """The line the cursor is on (where the person types)."""
        return "".join(self.screen.cells[self.screen.row]).rstrip()

    def send(self, line: str) -> None:
        """Type ``line`` and Enter (what was read before is taken in first: every screen
        seen from now on comes after it)."""
        self.type(line + "\r")

    def catch_up(self) -> None:
        for piece in self.backlog:
            self.screen.feed(piece)
        self.backlog = []

    def type(self, keys: str) -> None:
        assert self.fd is not None
        self.catch_up()
        os.write(self.fd, keys.encode())

    def interrupt(self) -> None:
        """Ctrl-C, as the terminal sends it."""
        self.type("\x03")

    def hang_up(self) -> None:
        """Close the terminal: the process reads the end of its input (and SIGHUP)."""
        assert self.fd is not None
        os.close(self.fd)
        self.fd = None

    def finish(self) -> int:
        """Read to the end; the exit status."""
        for piece in self.backlog:
            self.screen.feed(piece)
        self.backlog = []
        while self.fd is not None:
            pieces = self._read(min(1.0, max(0.0, self.deadline - time.monotonic())))
            if pieces is None:
                break
            for piece in pieces:
                self.screen.feed(piece)
            if time.monotonic() > self.deadline:
                raise AssertionError(f"the process did not end:\n{self.screen.text()}")
        return self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# -- what the terminal table shows ---------------------------------------------------------

DECISION = re.compile(r"Your (card|bid)(?: \((\d+) s left\))?>$")
CARD = r"(\d) (10|[7-9JQKA])([♠♥♦♣])"
DECISIONS = {
    "en": DECISION,
    "fr": re.compile(r"Votre (carte|annonce)(?: \((\d+) s\))?>$"),
    "es": re.compile(r"Su (carta|apuesta)(?: \((\d+) s\))?>$"),
}
"""The prompt of a decision in each language; group 1 is the card's or the bid's word."""
CARDS_IN = {
    "en": CARD,
    "fr": r"(\d) (10|[7-9VDRA])([♠♥♦♣])",
    "es": r"(\d) (10|[7-9VDRA])([♠♥♦♣])",
}
"""A numbered card of the frame in each language's rank letters."""


def environment() -> dict[str, str]:
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="80", LINES="24")
    env.pop("NO_COLOR", None)
    env["PYTHONPATH"] = source_pythonpath()
    return env


def last_line(text: str) -> str:
    return text.rstrip("\n").split("\n")[-1].rstrip()


def at_decision(text: str, lang: str = "en") -> bool:
    return DECISIONS[lang].search(last_line(text)) is not None


def answered(text: str) -> bool:
    return last_line(text) == ">"


def frame_fits(text: str) -> None:
    lines = text.split("\n")
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), text
    top = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("╰"))
    assert bottom - top + 1 == 19, text
