"""A watcher's page in a real browser: the ``web`` lobby's Watch entry takes a host's watch
code, waits for the table, and shows the game live with every hand hidden, to its end.

Chromium and its driver as in ``test_web_browser.py`` (skipped, saying why, where they are
missing); the screenshot goes to a temporary folder (or ``$BELOTE_SCREENSHOTS``). Nothing
sleeps: every wait is for a condition of the page, a line of output or a process's end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_browser import (  # noqa: F401  (the fixtures, used by name)
    DESKTOP,
    WAIT_MS,
    Served,
    _missing,
    browser,
    screenshots,
    shot,
)

pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def peer(*args: object) -> Served:
    """A peer process (host, join) whose watch code :meth:`Served.page_url` waits for."""
    return Served(*args, told=WATCH_LINE, flags=())


WATCH_LINE = "Watch code (for spectators):  belote-p2p watch "


LIVE_TRICK = """() => {
  const t = document.querySelector('#table');
  return t && !t.hidden && t.dataset.phase === 'play'
    && document.querySelectorAll('#trick .slot[data-card]').length >= 2;
}"""
IMAGES_DRAWN = """() => Array.from(document.querySelectorAll('img'))
  .every((i) => i.complete && i.naturalWidth > 0)"""
OVER = """() => document.querySelector('#table').dataset.finished === 'true'"""


def test_the_lobby_watches_a_table_live_with_every_hand_hidden(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A host with two bot seats waits for a joiner; the lobby page watches its code, the
    joiner comes, and the page shows the game (names, tricks, no hand, no Resign) to its
    end, then goes back to the lobby."""
    host = peer(
        "host", "--port", "0", "--bots", "2", "--fill", "random", "--bot", "random",
        "--no-beacon", "--name", "Hana", "--home", tmp_path / "host", "--target", "200",
    )  # fmt: skip
    lobby = Served("web", "--name", "Wes", "--home", tmp_path / "watcher")
    joiner: Served | None = None
    try:
        code = host.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(lobby.page_url())
        page.locator("#lobby").wait_for(state="visible")
        page.locator("#watch-code").fill("not a code")
        page.locator("#watch-button").click()
        page.locator("#toast").wait_for(state="visible")
        assert "watch code" in page.locator("#toast").text_content().lower()
        page.locator("#watch-code").fill(code)
        page.locator("#watch-button").click()
        page.wait_for_function("() => document.querySelector('#lobby').dataset.busy === 'true'")
        # The watcher waits for the table: the game begins once the last seat joins.
        invitation = code.replace("belotew", "belote2", 1)
        joiner = peer(
            "join", invitation, "--bot", "random", "--name", "Jo", "--home", tmp_path / "joiner"
        )
        page.wait_for_function(LIVE_TRICK)
        assert page.locator("#table").get_attribute("data-watching") == "true"
        assert page.locator("#hand button.card").count() == 0
        assert page.locator("#resign").is_hidden()
        assert page.locator("#stop-watching").is_visible()
        names = page.locator("#felt .seat .name").all_text_contents()
        assert any("Hana" in n for n in names) and any("Jo" in n for n in names), names
        assert not any("You" in n for n in names), names
        shot(page, "watching-live")  # the game does not wait: a card may be mid-load
        page.wait_for_function(OVER)
        page.wait_for_function(IMAGES_DRAWN)
        shot(page, "watching-over")
        assert "Game over" in page.locator("#final").text_content()
        assert "envelopes all check" in (page.locator("#result-line").text_content() or "")
        page.locator("#leave").click()
        page.locator("#lobby").wait_for(state="visible")
        assert host.wait() == 0, host.output
        assert joiner.wait() == 0, joiner.output
    finally:
        for proc in (host, joiner):
            if proc is not None:
                proc.stop()
        lobby.stop()
