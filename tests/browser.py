"""What the tests that drive a real browser share: Chromium (Debian's ``/usr/bin/chromium``,
or ``$BELOTE_CHROMIUM``) through Playwright's Python API, a ``belote-p2p`` process serving a
page, and screenshots to a temporary folder (or ``$BELOTE_SCREENSHOTS``). The fixtures
(``chromium``, ``browser``, ``screenshots``) are in ``conftest.py``: one Chromium a worker,
whichever test module asks for it first (Playwright's sync API runs one at a time)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import cli_argv, source_pythonpath

CHROMIUM = Path(os.environ.get("BELOTE_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS: list[Path] = []
"""Where :func:`shot` writes (set once per session by :func:`screenshots`)."""
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000
"""Playwright's limit for one wait (a guard against a hung game, not a measure)."""


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    return None


needs_chromium = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
"""The mark of every test that drives Chromium: it skips, saying why, where it cannot."""

MY_DECISION_OR_OVER = """() => {
  const t = document.querySelector('#table');
  return t && !t.hidden && (t.dataset.decision !== '' || t.dataset.finished === 'true');
}"""


class Served:
    """``belote-p2p ARGS`` serving a page (``--no-browser``), in its own process group.
    ``told``: the line that names what :meth:`page_url` waits for (its rest), and
    ``flags``: what the command needs to print it (none: a process without a page of its own,
    such as a host whose watch code is read)."""

    def __init__(
        self, *args: object, told: str = "Table page: ", flags: tuple[str, ...] = ("--no-browser",)
    ) -> None:
        self.told = told
        self.proc = subprocess.Popen(
            cli_argv(*args, *flags),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, env={**os.environ, "PYTHONPATH": source_pythonpath()},
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.url: str | None = None
        self._served = threading.Event()
        self._more = threading.Condition()
        self._ended = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._more:
                self.lines.append(line)
                self._more.notify_all()
            if line.startswith(self.told):
                self.url = line[len(self.told) :].strip()
                self._served.set()
        with self._more:
            self._ended = True
            self._more.notify_all()
        self._served.set()  # the process ended (with or without a page)

    def line(self, pattern: str) -> re.Match[str]:
        """The first line of output that ``pattern`` matches (waited for)."""

        def found() -> re.Match[str] | None:
            return next(filter(None, (re.search(pattern, x) for x in self.lines)), None)

        with self._more:
            self._more.wait_for(lambda: found() is not None or self._ended, WAIT_MS / 1000)
        match = found()
        assert match is not None, self.output
        return match

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def page_url(self) -> str:
        self._served.wait()
        assert self.url is not None, self.output
        return self.url

    def wait(self) -> int:
        status = self.proc.wait(timeout=WAIT_MS / 1000 * 4)
        self._reader.join()
        return status

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait()


def shot(page: Any, name: str) -> None:
    folder = SCREENSHOTS[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))
