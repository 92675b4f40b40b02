"""The coach in a real browser (Chromium through Playwright, as ``test_web_browser.py``): the
replay page of ``analyse --html`` stepped through at desktop and phone sizes, every hand
open and each decision marked; the Hint button of a table whose rule allows hints.
Screenshots go to a temporary folder (or ``$BELOTE_SCREENSHOTS``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import DESKTOP, MY_DECISION_OR_OVER, PHONE, WAIT_MS, Served, needs_chromium, shot

from belote_p2p.app import cli

pytestmark = needs_chromium

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
NO_SIDEWAYS = "() => document.documentElement.scrollWidth <= window.innerWidth"
STEP = "() => document.querySelector('#where').textContent"


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replay")
    page = folder / "replay.html"
    argv = ["analyse", str(VECTORS / "game-classic.transcript"), "--html", str(page),
            "--home", str(folder), "--coach-bot", "expert:samples=6:bid_samples=6"]  # fmt: skip
    assert cli.main(argv) == 0
    return page


@pytest.mark.parametrize(("size", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_the_replay_page_steps_through_the_game_every_hand_open(
    browser: Any, replay_file: Path, size: str, viewport: dict[str, int]
) -> None:
    page = browser.new_context(viewport=viewport).new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(replay_file.as_uri())
    assert page.title().startswith("Replay: classic to ")
    assert page.locator("#summaries p").count() == 4
    first = page.evaluate(STEP)
    assert first.startswith("Round 1") and "Step 1 of" in first
    assert page.locator("#prev").is_disabled() and page.locator("#prevround").is_disabled()
    # Every hand is open: the four seats show their cards.
    for seat in range(4):
        assert page.locator(f"#seat{seat} .hand .card").count() >= 5
    # Card by card with the button, and with the arrow keys.
    page.locator("#next").click()
    assert "Step 2 of" in page.evaluate(STEP)
    page.keyboard.press("ArrowRight")
    assert "Step 3 of" in page.evaluate(STEP)
    page.keyboard.press("ArrowLeft")
    assert "Step 2 of" in page.evaluate(STEP)
    # A costly decision, from the round's strip: its cost said, and at a card the best
    # card marked in the hand beside the one played.
    marked = False
    while not marked:
        costly = page.locator("#strip button.l2, #strip button.l3")
        for i in range(costly.count()):
            costly.nth(i).click()
            verdict = page.locator("#verdict").text_content()
            assert " instead of " in verdict and "points lost" in verdict, verdict
            assert page.locator("#strip button.now").count() == 1
            if page.locator("#seat0 .card.best, #seat1 .card.best, #seat2 .card.best, "
                            "#seat3 .card.best").count():  # fmt: skip
                assert page.locator(".card.played").count() == 1
                marked = True
                break
        if marked or page.locator("#nextround").is_disabled():
            break
        page.locator("#nextround").click()
    assert marked
    shot(page, f"replay-{size}")
    assert page.evaluate(NO_SIDEWAYS)
    # Trick by trick, and to the end of the game.
    before = page.evaluate(STEP)
    page.keyboard.press("ArrowDown")
    assert page.evaluate(STEP) != before
    for _ in range(10):
        page.keyboard.press("PageDown")
    while not page.locator("#next").is_disabled():
        page.keyboard.press("ArrowDown")
    assert "game 106-420" in page.locator("#said").text_content()  # the game's end
    assert page.evaluate(NO_SIDEWAYS) and errors == []


ROWS = """seat => [...document.querySelectorAll(`#seat${seat} .hand .card`)].map(
    c => [c.classList.contains("down"), Math.round(c.getBoundingClientRect().top)])"""
"""Each card of a seat's hand on the page: whether face down, and the top of its line."""


@pytest.mark.parametrize(("size", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_a_two_handed_replay_shows_each_hand_above_its_face_down_cards(
    browser: Any, tmp_path: Path, size: str, viewport: dict[str, int]
) -> None:
    page_file = tmp_path / "two.html"
    argv = ["analyse", str(VECTORS / "game-two-handed.transcript"), "--html", str(page_file),
            "--home", str(tmp_path), "--coach-bot", "expert:samples=4"]  # fmt: skip
    assert cli.main(argv) == 0
    page = browser.new_context(viewport=viewport).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(page_file.as_uri())
    for seat in (0, 1):
        cards = page.evaluate(ROWS, seat)
        up = {top for down, top in cards if not down}
        down = {top for down, top in cards if down}
        # The face-down cards under the others, never mixed with them; on a desktop a line
        # each (a phone's 390 pixels may take two for eight cards).
        assert len(cards) == 16 and min(down) > max(up), (seat, cards)
        if size == "desktop":
            assert len(up) == 1 and len(down) == 1, (seat, cards)
    shot(page, f"replay-two-handed-{size}")
    assert page.evaluate(NO_SIDEWAYS)


def test_the_hint_button_at_a_table_whose_rule_allows_hints(browser: Any, tmp_path: Path) -> None:
    host = Served(
        "host", "--web", "--name", "Alice", "--target", 1000, "--bots", "3:random", "--port", 0,
        "--no-beacon", "--home", tmp_path / "home", "--hints",
    )  # fmt: skip
    try:
        page = browser.new_context(viewport=PHONE).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(host.page_url())
        page.wait_for_function(MY_DECISION_OR_OVER)
        assert page.locator("#hint-panel").is_visible()
        page.locator("#hint").click()
        page.wait_for_function(
            "() => document.querySelector('#hint-line').textContent.startsWith('Hint: ')"
        )
        shot(page, "hint-phone")
        page.locator("#resign").click()
        page.locator("#resign").click()
        page.wait_for_function("() => document.querySelector('#table').dataset.finished === 'true'")
        assert page.locator("#hint-panel").is_hidden()
        page.locator("#leave").click()
        assert host.wait() == 0, host.output
    finally:
        host.stop()
