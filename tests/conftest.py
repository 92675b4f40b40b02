"""Fixtures and the suite's run settings only: the helpers that tests share are in
``helpers.py``.

How the suite runs (``python -m pytest``, the README's test command):

- **Workers**: two per core (:func:`pytest_xdist_auto_num_workers`).
- **Order**: the test files that take longest (whole games over sockets, subprocesses,
  Chromium, the conformance kit) are handed out first (:data:`LONG_FIRST`), so that the last
  workers finish on short tests rather than one worker finishing a long one alone.
- **Bytecode**: the suite starts hundreds of ``python -m belote_p2p`` processes (bots, hosts,
  verifiers). Where ``PYTHONDONTWRITEBYTECODE`` is set, none of them writes a ``.pyc`` and
  each compiled the whole package from source again (0.13 s of CPU of a 0.67 s ``verify``);
  :func:`pytest_configure` compiles this source tree's bytecode once (``__pycache__``, as
  Python itself would without that variable), which every process then reads.
- **Proofs**: the modules and tests that play whole games in one process, or verify the
  tampered copies of one record, without being about the deck's proof checks, check each
  proof of shuffle and of a share once per exact input in a worker
  (:func:`proofs_checked_once`, ``once.py``): four sessions and the records they verify
  check the same proofs up to seven times.
- **Hypothesis**: the ``dev`` profile (the default) draws new random examples at each run,
  so that runs by hand keep exploring, and replays a failing example first at the next run
  (the ``.hypothesis`` database); the ``ci`` profile, loaded when ``CI`` is set (``.ci/run``
  sets it) or with ``HYPOTHESIS_PROFILE=ci``, is derandomized, as Hypothesis' own ``ci``
  profile: the same examples at every run and no database, so that a rare example fails no
  CI run at random while the developers' runs still look for it. Both print the
  ``@reproduce_failure`` line of a failing example, and neither times anything (no deadline,
  no ``too_slow`` health check: the suite runs on loaded machines, and speed is measured by
  the benchmarks). Each test's ``@settings`` sets its own example count.
"""

from __future__ import annotations

import compileall
import os
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import once
import pytest

SOURCE = Path(__file__).resolve().parents[1]

# The suite reads English unless a test asks for another language, whatever the locale of the
# machine it runs on, and no command it runs finds the default home of the person running it
# (where a remembered language, name or identity would change what the tests see).
for _name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="belote-suite-home-")


@pytest.fixture(autouse=True)
def _the_next_test_reads_english() -> Iterator[None]:
    """A command run in this process in another language (``main([..., "--lang", "fr"])``)
    sets the process's language, as it should for a command: the next test of the same worker
    starts in English again."""
    yield
    from belote_p2p import i18n

    i18n.set_language(i18n.DEFAULT)


UNTIMED = {"deadline": None, "suppress_health_check": [hypothesis.HealthCheck.too_slow]}
hypothesis.settings.register_profile("dev", print_blob=True, **UNTIMED)
hypothesis.settings.register_profile(
    "ci", derandomize=True, database=None, print_blob=True, **UNTIMED
)
hypothesis.settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

LONG_FIRST = (
    "test_peer.py", "test_fuzz.py", "test_web_browser.py", "test_session_dummy.py",
    "test_watch.py", "test_tournament.py", "test_peer_leaves.py", "test_netplay.py",
    "test_vectors.py", "test_cheaters.py", "test_deck.py", "test_deck_dummy.py",
    "test_session.py", "test_cheaters_few.py", "test_terminal_play.py", "test_conformance.py",
    "test_resume.py", "test_relay.py", "test_internet.py", "test_deal_attacks.py",
    "test_deal_overlap.py", "test_profile.py", "test_mutations.py", "test_verify.py",
    "test_relay_dummy.py", "test_netplay_few.py", "test_deck_few.py", "test_program.py",
)  # fmt: skip
"""Test files by the wall time of their longest test on 2 cores (test_peer's reader that
stops reading, test_fuzz's hundred thousand frames), then of all their tests: a long test
handed out last would end the run alone. The other files follow in their usual order."""


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package and the built-in bots once, before the workers start (only the
    files changed since the last run are compiled again)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    for package in (SOURCE / "belote_p2p", SOURCE / "plugins" / "belote_bots"):
        compileall.compile_dir(package, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long test files first (every worker collects the same order, as xdist needs)."""
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))


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


@pytest.fixture
def proofs_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deck's proof checks, each run once per exact input in this worker (``once.py``),
    for the test modules that are not about them (``pytestmark``)."""
    once.install(monkeypatch.setattr)


# -- Chromium, for the tests that drive a browser (tests/browser.py) ------------------------


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One Chromium for all the browser tests of a worker (starting one costs about a
    second of CPU); each test has contexts of its own (:func:`browser`)."""
    from browser import CHROMIUM
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as p:
        try:
            launched = p.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
            )
        except Error as exc:
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {exc}")
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def browser(chromium: Any, screenshots: Path) -> Iterator[Any]:
    """The worker's Chromium; the test's contexts (and their pages) close at its end, so
    that no page of one test goes on talking to its table during the next."""
    yield chromium
    for context in chromium.contexts:
        context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$BELOTE_SCREENSHOTS``, else a temporary folder: a test run rewrites no tracked file."""
    from browser import SCREENSHOTS

    given = os.environ.get("BELOTE_SCREENSHOTS")
    folder = Path(given) if given else tmp_path_factory.mktemp("screenshots")
    SCREENSHOTS[:] = [folder]
    return folder
