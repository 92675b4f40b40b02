"""The table in a real browser: a person plays a whole round by clicking, against three bot
processes, in classic and in coinche (``belote-p2p host --web --bots 3``), and against two
and one in three-handed and two-handed; and a whole game in French and in Spanish.

Chromium is Debian's (``/usr/bin/chromium``, or ``$BELOTE_CHROMIUM``), driven by
Playwright's Python API; ``.ci/run`` installs it when it can, and these tests skip, saying
why, where it is missing. Screenshots of the table (bidding, a trick under way, the round's
summary, a phone-sized screen; in French and Spanish too) go to a temporary folder, or to
``$BELOTE_SCREENSHOTS``: ``python docs/screenshots.py`` sets it to regenerate the ones
``docs/screenshots/`` keeps.

Nothing here sleeps: every wait is for a condition of the page or for the process to end.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser import (
    DESKTOP,
    MY_DECISION_OR_OVER,
    PHONE,
    WAIT_MS,
    Served,
    needs_chromium,
    shot,
)
from helpers import LOOPBACK

ROOT = Path(__file__).resolve().parent.parent
pytestmark = needs_chromium
# -- the page, as the tests read it -----------------------------------------------------------

BETWEEN_ROUNDS = """() => {
  const t = document.querySelector('#table');
  return t.dataset.decision === '' && t.dataset.finished !== 'true'
    && !document.querySelector('#summary').hidden && document.querySelector('#final').hidden;
}"""
DECISION_OR_SUMMARY = f"() => ({MY_DECISION_OR_OVER})() || ({BETWEEN_ROUNDS})()"
DECISION_GONE = """(d) => document.querySelector('#table').dataset.decision !== d"""
SNAPSHOT = """() => {
  const t = document.querySelector('#table');
  const cards = (sel) => Array.from(document.querySelectorAll(sel)).map((b) => b.dataset.code);
  return {
    phase: t.dataset.phase, decision: t.dataset.decision, round: t.dataset.round,
    hand: cards('#hand button.card'), legal: cards('#hand button.card.legal'),
    numbers: Object.fromEntries(Array.from(document.querySelectorAll('#hand button.card'))
      .map((b) => [b.dataset.code, b.dataset.number])),
    current: Number(document.querySelector('#trick').dataset.current || 0),
    trick: Array.from(document.querySelectorAll('#trick .slot')).map((s) => s.dataset.card),
    seats: Array.from(document.querySelectorAll('#felt .seat .name')).map((n) => n.textContent),
    contract: document.querySelector('#contract').textContent,
    scores: document.querySelector('#scores').textContent,
    lastTrick: document.querySelector('#last-trick').textContent,
  };
}"""
FITS = """() => {
  const w = window.innerWidth, h = window.innerHeight;
  const inside = Array.from(document.querySelectorAll(
      '#hand button.card, #bidding button, #trick .tag, #scores .side'))
    .every((b) => { const r = b.getBoundingClientRect();
                    return r.left >= 0 && r.right <= w + 0.5 && r.top >= -30; });
  return {noScroll: document.documentElement.scrollWidth <= w, inside, tall: h};
}"""


def check_fits(page: Any) -> None:
    fits = page.evaluate(FITS)
    assert fits["noScroll"] and fits["inside"], fits


def bid(page: Any, coinche: bool, state: dict[str, Any]) -> None:
    """Take the turned card, or name a suit, or bid the lowest contract once; else pass."""
    bidding = page.locator("#bidding")
    if not coinche:
        for code in ("take",):
            if bidding.locator(f'button[data-code="{code}"]').count():
                bidding.locator(f'button[data-code="{code}"]').click()
                return
        suits = bidding.locator('button[data-code^="choose "]')
        if suits.count():
            suits.first.click()
            return
    elif not state["bid"] and bidding.locator("button[data-value]").count():
        bidding.locator("button[data-value]").first.click()
        page.locator("#bidding button.suit:not([disabled])").first.click()
        state["bid"] = True
        return
    bidding.locator('button[data-code="pass"]').click()


def play_card(page: Any, turn: int) -> None:
    """The first legal card: by a click mostly, by its number or the arrows now and then."""
    legal = page.locator("#hand button.card.legal")
    if turn % 4 == 1:
        page.keyboard.press(legal.first.get_attribute("data-number"))
    elif turn % 4 == 2:
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
    else:
        legal.first.click()


def check_reload_and_second_tab(page: Any, url: str) -> None:
    """Mid-trick, a reload shows the same table, and a second tab too; the second tab
    plays the card, and the first sees it played."""
    before = page.evaluate(SNAPSHOT)
    page.reload()
    page.wait_for_function(MY_DECISION_OR_OVER)
    assert page.evaluate(SNAPSHOT) == before
    other = page.context.new_page()
    other.set_viewport_size(DESKTOP)
    other.goto(url.split("?")[0])  # no token in the URL: the cookie carries it
    other.wait_for_function(MY_DECISION_OR_OVER)
    assert other.evaluate(SNAPSHOT) == before
    other.locator("#hand button.card.legal").first.click()
    page.wait_for_function(DECISION_GONE, arg=before["decision"])
    other.close()


TRICK_WON = """(n) => {
  const t = document.querySelector('#trick');
  const filled = Array.from(t.querySelectorAll('.slot')).filter((s) => s.dataset.card).length;
  return t.dataset.won !== '' && filled === n
    && /won by/.test(document.querySelector('#trick-won').textContent);
}"""
HELD_UNTIL_NEXT = "() => document.querySelector('#trick').dataset.won === 'until-next'"
TAPPED = "() => document.querySelector('#turn-line').textContent.includes('tap a card')"
NO_TIMED_HOLD = "() => document.querySelector('#trick').dataset.won !== 'timed'"
TICKING = """(start) => {
  const line = document.querySelector('#turn-line');
  const left = Number(line.dataset.secondsLeft);
  return line.dataset.secondsLeft !== '' && left < start
    && line.textContent.includes(`(${left} s left)`)
    && document.querySelector('#countdown').textContent === `${left} s left`;
}"""
WARNED = """() => document.querySelector('#turn-line').classList.contains('warn')
  && Number(document.querySelector('#turn-line').dataset.secondsLeft) <= 10"""


def check_countdown(page: Any) -> None:
    """The prompt's countdown ticks with the clock and turns red under 10 s."""
    start = int(page.locator("#turn-line").get_attribute("data-seconds-left"))
    page.wait_for_function(TICKING, arg=start)
    page.wait_for_function(WARNED)


def play_game(
    page: Any, variant: str, url: str, *, shots: bool = True, countdown: bool = False
) -> None:
    coinche = variant == "coinche"
    taken: set[str] = set()
    state: dict[str, Any] = {"bid": False}
    numbers: dict[str, str] = {}
    seats = len(page.evaluate(SNAPSHOT)["seats"]) or 4
    turn = 0
    while True:
        page.wait_for_function(DECISION_OR_SUMMARY)
        if page.evaluate(BETWEEN_ROUNDS):
            # A round's summary: it stays until the person closes it or has to act.
            if "between-rounds" not in taken:
                taken.add("between-rounds")
                shot(page, f"{variant}-between-rounds")
            page.wait_for_function(MY_DECISION_OR_OVER)
            assert page.locator("#summary").is_hidden() or page.locator("#final").is_visible()
        now = page.evaluate(SNAPSHOT)
        if page.locator("#table").get_attribute("data-finished") == "true":
            return
        if now["phase"] == "play":
            # A card keeps its number for the round (the README's promise, the terminal's).
            if numbers.get("round") != now["round"]:
                numbers = {"round": now["round"]}
            for code, number in now["numbers"].items():
                assert numbers.setdefault(code, number) == number, (code, numbers, now)
            on_table = [c for c in now["trick"] if c]
            if countdown and "countdown" not in taken:
                taken.add("countdown")
                check_countdown(page)
            if on_table and "mid-trick" not in taken and shots:
                page.wait_for_function(NO_TIMED_HOLD)
                now = page.evaluate(SNAPSHOT)
                taken.add("mid-trick")
                check_fits(page)
                shot(page, f"{variant}-mid-trick")
                page.set_viewport_size(PHONE)
                check_fits(page)
                page.wait_for_function(TAPPED)  # a phone taps its cards, no arrow keys
                assert "←" not in page.locator("#turn-line").text_content()
                shot(page, f"{variant}-phone")
                page.set_viewport_size(DESKTOP)
                if not coinche:
                    check_reload_and_second_tab(page, url)
                    continue
            if "put-away" not in taken and page.evaluate(HELD_UNTIL_NEXT):
                # The trick we won stays until our card: a click off the cards, or a key
                # (a tap on a phone), puts it away.
                taken.add("put-away")
                if turn % 2:
                    page.keyboard.press("Shift")
                else:
                    page.locator("#title").click()
                page.wait_for_function("() => document.querySelector('#trick').dataset.won === ''")
            dimmed = page.locator("#hand button.card:not(.legal)")
            if dimmed.count() and "dimmed" not in taken:
                # A dimmed card says why it cannot be played, and plays nothing.
                taken.add("dimmed")
                click_dimmed(dimmed.first)
                page.locator("#toast").wait_for(state="visible")
                assert "cannot be played now" in page.locator("#toast").text_content()
                assert page.evaluate(SNAPSHOT)["decision"] == now["decision"]
            turn += 1
            # Our card ends a trick that is not the round's last (after the last, the
            # round's screen comes: the deals are random, so it may be the first we end).
            last = now["current"] == seats - 1 and len(now["hand"]) > 1
            play_card(page, turn)
            if last and "trick-won" not in taken:
                # Our card ends the trick: the whole trick stays on show, and who won it.
                taken.add("trick-won")
                page.wait_for_function(TRICK_WON, arg=seats)
        else:
            if "bidding" not in taken and shots:
                taken.add("bidding")
                check_fits(page)
                shot(page, f"{variant}-bidding")
            bid(page, coinche, state)
        page.wait_for_function(DECISION_GONE, arg=now["decision"])


def click_dimmed(card: Any) -> None:
    """Click a dimmed card as a person does. ``force``: it is aria-disabled, which a plain
    click waits out; so wait first for what force skips, the card on show. The page may draw
    the hand again between the two (a reload's first states), so that the card found is gone
    at the click: then it is found again, a bounded number of times."""
    from playwright.sync_api import Error

    for attempt in range(3):
        card.wait_for(state="visible")
        try:
            card.click(force=True)
            return
        except Error as exc:
            gone = "not visible" in str(exc) or "not attached" in str(exc)
            if not gone or attempt == 2:
                raise


SHEET_FITS = """() => {
  const s = document.querySelector('#summary .sheet');
  const r = s.getBoundingClientRect();
  return {fits: s.scrollWidth <= s.clientWidth + 1 && r.right <= window.innerWidth + 0.5,
          scroll: s.scrollWidth, client: s.clientWidth, right: r.right};
}"""


@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_a_person_plays_a_round_in_the_browser(browser: Any, tmp_path: Path, variant: str) -> None:
    host = Served(
        "host", "--web", "--name", "Alice", "--variant", variant, "--target", 1, "--bots", 3,
        "--port", 0, "--no-beacon", "--home", tmp_path / "home", "--seed", 11,
        "--person-deadline", 14,
    )  # fmt: skip
    try:
        url = host.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        assert "token=" not in page.url  # the cookie holds it from here on
        play_game(page, variant, url, countdown=variant == "classic")
        # Target 1: the first round scored ends the game; its summary stays on screen.
        page.locator("#summary").wait_for(state="visible")
        final = page.locator("#final").text_content()
        assert "Game over" in final
        high, low = (int(x) for x in final.rstrip(".").rsplit(" ", 1)[1].split("-"))
        assert high >= low, final  # a result names the winner first
        assert page.locator("#summary-points td").count() >= 9  # card points, round, game
        shot(page, f"{variant}-round-summary")
        page.set_viewport_size(PHONE)
        sheet = page.evaluate(SHEET_FITS)
        assert sheet["fits"], sheet
        shot(page, f"{variant}-phone-summary")
        page.set_viewport_size(DESKTOP)
        page.locator("#leave").click()
        assert host.wait() == 0, host.output
        assert not errors, errors
    finally:
        host.stop()
    out = host.output
    assert "All 4 peers agree" in out, out
    assert "RESULT" in out


SEATS_SHOWN = """() => ({
  names: Array.from(document.querySelectorAll('#felt .seat:not([hidden]) .name'))
    .map((n) => n.textContent),
  slots: document.querySelectorAll('#trick .slot:not([hidden])').length,
  scores: Array.from(document.querySelectorAll('#scores .side')).map((x) => x.textContent),
  backs: document.querySelectorAll('#felt .seat .backs img').length,
  theirPiles: document.querySelectorAll('#felt .seat .pile').length,
  theirCards: document.querySelectorAll('#felt .seat .pile > img:not(.under)').length,
  theirUnder: document.querySelectorAll('#felt .seat .pile img.under').length,
  ourPiles: document.querySelectorAll('#hand .pile').length,
  ourCards: document.querySelectorAll('#hand .pile button.card').length,
  ourUnder: document.querySelectorAll('#hand .pile img.under').length,
  bids: !document.querySelector('#bids-panel').hidden,
})"""


@pytest.mark.parametrize(("variant", "seats"), [("three-handed", 3), ("two-handed", 2)])
def test_a_person_plays_a_round_at_a_table_of_few(
    browser: Any, tmp_path: Path, variant: str, seats: int
) -> None:
    """Three seats about the trick, or two face to face above their piles: a round played
    by clicking, to its summary with a column per player."""
    host = Served(
        "host", "--web", "--name", "Alice", "--variant", variant, "--target", 1,
        "--bots", seats - 1, "--port", 0, "--no-beacon", "--home", tmp_path / "home",
        "--seed", 11,
    )  # fmt: skip
    try:
        url = host.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.wait_for_function(MY_DECISION_OR_OVER)
        shown = page.evaluate(SEATS_SHOWN)
        assert len(shown["names"]) == seats and shown["names"][-1] == "You (Alice)", shown
        assert shown["slots"] == seats and len(shown["scores"]) == seats, shown
        assert shown["scores"][0].startswith("You "), shown
        if seats == 3:
            # The others' cards as backs (five each during the take, eight when the deal
            # is complete, less those on the table); no piles.
            phase = page.locator("#table").get_attribute("data-phase")
            on_table = sum(bool(c) for c in page.evaluate(SNAPSHOT)["trick"])
            assert shown["backs"] == (10 if phase != "play" else 16 - on_table), shown
            assert shown["bids"], shown
            assert shown["theirPiles"] == shown["ourPiles"] == 0, shown
        else:
            # No bidding; eight piles each, every face-down card a back under its pile's
            # top card (at most the one card on the table left its pile bare).
            assert shown["backs"] == 0 and not shown["bids"], shown
            assert shown["theirPiles"] == shown["ourPiles"] == 8, shown
            assert shown["theirUnder"] == shown["ourUnder"] == 8, shown
            assert shown["theirCards"] + shown["ourCards"] >= 15, shown
        play_game(page, variant, url)
        page.locator("#summary").wait_for(state="visible")
        assert "Game over" in page.locator("#final").text_content()
        head = page.locator("#summary-points tr").first.locator("th")
        assert head.count() == seats + 1
        assert "You" in head.nth(1).text_content()
        if seats == 2:
            assert "each player scores its points" in page.locator("#summary-title").text_content()
            assert "Nobody takes" in page.locator("#summary-points").text_content()
            assert page.locator("#hand .pile img.under").count() == 0  # all turned up
        else:
            assert "(taker)" in page.locator("#summary-points tr").first.text_content()
        shot(page, f"{variant}-round-summary")
        page.locator("#leave").click()
        assert host.wait() == 0, host.output
        assert not errors, errors
    finally:
        host.stop()
    out = host.output
    assert f"All {seats} peers agree" in out, out
    assert "RESULT" in out


def host_from_lobby(page: Any, variant: str, bots: int, *, target: int | None = None) -> None:
    """The lobby's Host form: ``variant`` to ``target`` (the form's own if None) with
    ``bots``, on a port the system chooses."""
    page.locator("#host-variant").select_option(variant)
    if target is not None:
        page.locator("#host-target").fill(str(target))
    page.locator("#host-port").fill("0")
    page.locator("#host-bots").select_option(str(bots))
    page.locator("#host-button").click()


def test_the_lobby_hosts_a_game_and_shows_it_after(browser: Any, tmp_path: Path) -> None:
    """``belote-p2p web``: host a table with three bots from the lobby, play a game of a few
    rounds on the same page (each round's summary stays until the person has to act),
    leave it, find it among the past games, quit."""
    lobby = Served("web", "--name", "Alice", "--home", tmp_path / "home")
    try:
        url = lobby.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.locator("#lobby").wait_for(state="visible")
        assert page.locator("#lobby-name").input_value() == "Alice"
        host_from_lobby(page, "classic", 3, target=300)
        page.locator("#table").wait_for(state="visible")
        play_game(page, "classic", url, shots=False)
        page.locator("#leave").click()
        page.locator("#lobby").wait_for(state="visible")
        page.locator("#games tbody tr").first.wait_for()
        page.wait_for_function("() => document.querySelector('#lobby').dataset.busy === 'false'")
        assert "classic to 300" in page.locator("#games").text_content()
        assert "Alice" in page.locator("#ranking").text_content()
        shot(page, "lobby")
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
    finally:
        lobby.stop()
    assert "All 4 peers agree" in lobby.output, lobby.output


def test_the_lobby_hosts_a_table_of_two(browser: Any, tmp_path: Path) -> None:
    """The lobby's bots follow the variant's seats; a two-handed table hosted from the
    page is played to its end, then listed among the past games."""
    lobby = Served("web", "--name", "Alice", "--home", tmp_path / "home")
    try:
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(lobby.page_url())
        page.locator("#lobby").wait_for(state="visible")
        bots = page.locator("#host-bots option")
        for variant, most in (("classic", 3), ("three-handed", 2), ("two-handed", 1)):
            page.locator("#host-variant").select_option(variant)
            assert bots.all_text_contents() == [str(n) for n in range(most + 1)]
            assert page.locator("#host-bots").input_value() == str(most)
        page.locator("#host-target").fill("1")
        page.locator("#host-port").fill("0")
        page.locator("#host-button").click()
        page.locator("#table").wait_for(state="visible")
        play_game(page, "two-handed", lobby.page_url(), shots=False)
        assert page.locator("#felt .seat:not([hidden]) .name").count() == 2
        page.locator("#leave").click()
        page.locator("#games tbody tr").first.wait_for()
        page.wait_for_function("() => document.querySelector('#lobby').dataset.busy === 'false'")
        assert "two-handed to 1" in page.locator("#games").text_content()
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
    finally:
        lobby.stop()
    assert "All 2 peers agree" in lobby.output, lobby.output


def test_a_person_resigns_from_the_page(browser: Any, tmp_path: Path) -> None:
    """Resign (asked twice): our game ends; the others play on with our open hand."""
    host = Served(
        "host", "--web", "--name", "Alice", "--target", 1000, "--bots", 3, "--port", 0,
        "--no-beacon", "--home", tmp_path / "home",
    )  # fmt: skip
    try:
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(host.page_url())
        page.wait_for_function(MY_DECISION_OR_OVER)
        page.locator("#resign").click()
        assert "Really" in page.locator("#resign").text_content()
        page.locator("#resign").click()
        page.wait_for_function("() => document.querySelector('#table').dataset.finished === 'true'")
        # At four seats the others play on: our partner plays our open hand.
        assert "You left the game: your partner plays" in page.locator("#final").text_content()
        assert "your open hand" in page.locator("#result-line").text_content()
        assert page.locator("#rematch").is_hidden()  # no rematch after a resignation
        page.locator("#leave").click()
        assert host.wait() == 0, host.output
    finally:
        host.stop()
    assert '"resigned": true' in host.output


LOBBY_SETTLED = """(text) => document.querySelector('#lobby').dataset.busy === 'false'
  && document.querySelector('#lobby-status').textContent.includes(text)"""


def test_a_rematch_the_host_does_not_offer_is_said_in_the_lobby(
    browser: Any, tmp_path: Path
) -> None:
    """``belote-p2p web`` joins a bots' table whose host offers no other game: after the
    game, Rematch shows what the seat waits for, then that there is no other game; no step
    stays greyed, Quit works all along, and a reload shows the same lobby line."""
    host = Served(
        "host", "--bot", "random", "--bots", 2, "--name", "Bob", "--target", 1, "--port", 0,
        "--no-beacon", "--bind", LOOPBACK, "--home", tmp_path / "host", flags=(),
    )  # fmt: skip
    lobby = Served("web", "--name", "Alice", "--home", tmp_path / "home", "--bind", LOOPBACK)
    try:
        address = host.line(r"Lobby listening on (\S+)")[1]
        url = lobby.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.locator("#lobby").wait_for(state="visible")
        page.locator("#join-address").fill(address)
        page.locator("#join-button").click()
        page.locator("#table").wait_for(state="visible")
        play_game(page, "classic", url, shots=False)
        page.locator("#rematch").click()
        page.locator("#lobby").wait_for(state="visible")
        assert page.locator("#quit-button").is_enabled()
        page.wait_for_function(LOBBY_SETTLED, arg="No other game: the host")
        said = page.locator("#lobby-status").text_content()
        assert "offers no other game" in said and "Joining" not in said, said
        assert page.locator("#join-button").is_enabled()
        page.reload()
        page.wait_for_function(LOBBY_SETTLED, arg="offers no other game")
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
        assert host.wait() == 0, host.output
    finally:
        lobby.stop()
        host.stop()
    assert "Asking Bob (the host) for another game" in lobby.output, lobby.output
    # The host's bot processes take the last seats, each named for its own; Alice the first.
    for name, seat in (("Alice", 1), ("Bot2", 2), ("Bot3", 3)):
        assert re.search(rf"{name} \[[0-9a-f-]{{19}}\] joined: seat {seat}\b", host.output)


OPENING = """() => /Waiting for Bot1 \\(seat 1\\), Bot2 \\(seat 2\\) and Bot3 \\(seat 3\\) to/
  .test(document.querySelector('#turn-line').textContent)"""


def test_a_resumed_game_whose_peers_are_gone_says_so_in_the_open_tab(
    browser: Any, tmp_path: Path
) -> None:
    """The host's process dies mid-game and its bot processes with it (nobody restarts
    them); ``resume --web`` on the same page port: the tab left open reconnects by itself,
    says whom the seat waits for (not "Waiting for the peers…" for ever), then that the game
    cannot go on, and stays until the person leaves it."""
    home = tmp_path / "home"
    host = Served(
        "host", "--web", "--name", "Alice", "--target", 1000, "--bots", 3, "--port", 0,
        "--no-beacon", "--home", home,
    )  # fmt: skip
    try:
        url = host.page_url()
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.wait_for_function(MY_DECISION_OR_OVER)
        os.killpg(host.proc.pid, signal.SIGKILL)
        host.proc.wait()
        for info in (home / "bots").glob("*/process.json"):
            os.kill(json.loads(info.read_text())["pid"], signal.SIGKILL)
            info.unlink()  # gone for good: resume does not start them again
    finally:
        host.stop()
    web_port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
    again = Served(
        "resume", "--web", "--web-port", web_port, "--home", home, "--connect-timeout", 8
    )
    try:
        assert again.page_url().split("?")[0] == url.split("?")[0]  # the same page
        page.wait_for_function(OPENING)
        page.wait_for_function("() => document.querySelector('#table').dataset.finished === 'true'")
        said = page.locator("#result-line").text_content()
        assert "The game could not go on" in said and "did not connect in 8 s" in said, said
        assert page.locator("#rematch").is_hidden()
        page.locator("#leave").click()
        assert again.wait() == 1, again.output
    finally:
        again.stop()
    assert "error: seat 0: the mesh did not open" in again.output, again.output


HAND_APART = """() => {
  const w = window.innerWidth;
  const rects = Array.from(document.querySelectorAll('#hand button.card'))
    .map((b) => b.getBoundingClientRect()).sort((a, b) => a.left - b.left);
  const apart = rects.every((r, i) => i === 0 || rects[i - 1].right <= r.left + 0.5);
  const inside = rects.every((r) => r.left >= 0 && r.right <= w + 0.5);
  const tags = Array.from(document.querySelectorAll('#trick .tag')).every((t) => {
    const r = t.getBoundingClientRect(); return r.left >= 0 && r.right <= w + 0.5; });
  return {apart, inside, tags, cards: rects.length, widths: rects.map((r) => r.width)};
}"""
A_CARD_ON_THE_TABLE = f"""() => ({MY_DECISION_OR_OVER})()
  && document.querySelector('#table').dataset.phase === 'play'
  && Number(document.querySelector('#trick').dataset.current) > 0"""


def test_the_table_on_a_phone(browser: Any, tmp_path: Path) -> None:
    """A touch screen of 390x844: the hand's cards side by side (none over another, all on
    screen), the trick's tags on screen, 'tap a card' and no arrow keys in the prompt, the
    round's sheet within the screen; screenshots of each (in the temporary folder)."""
    host = Served(
        "host", "--web", "--name", "Alice", "--target", 1, "--bots", 3, "--port", 0,
        "--no-beacon", "--home", tmp_path / "home", "--seed", 11,
    )  # fmt: skip
    try:
        url = host.page_url()
        context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.wait_for_function(MY_DECISION_OR_OVER)
        shot(page, "phone-first-decision")
        while not page.evaluate(A_CARD_ON_THE_TABLE):
            # Pass or play the first legal card (a tap) until others' cards lie on the felt.
            before = page.locator("#table").get_attribute("data-decision")
            if page.locator("#table").get_attribute("data-phase") == "play":
                page.locator("#hand button.card.legal").first.tap()
            else:
                bid(page, False, {"bid": False})
            page.wait_for_function(DECISION_GONE, arg=before)
            page.wait_for_function(MY_DECISION_OR_OVER)
        laid = page.evaluate(HAND_APART)
        assert laid["apart"] and laid["inside"] and laid["tags"], laid
        assert min(laid["widths"]) >= 40, laid  # a card is still a finger's width
        check_fits(page)
        line = page.locator("#turn-line").text_content()
        assert "tap a card" in line and "arrow" not in line and "←" not in line, line
        shot(page, "phone-mid-trick")
        play_game(page, "classic", url, shots=False)
        page.locator("#summary").wait_for(state="visible")
        sheet = page.evaluate(SHEET_FITS)
        assert sheet["fits"], sheet
        shot(page, "phone-summary")
        page.locator("#leave").tap()
        assert host.wait() == 0, host.output
    finally:
        host.stop()


HOSTING = """() => document.querySelector('#lobby').dataset.busy === 'true'
  && /waiting for 1 more player\\.\\nOthers join with: +belote-p2p join belote2/
    .test(document.querySelector('#lobby-status').textContent)"""


def test_the_lobby_quits_while_its_table_waits_for_a_player(browser: Any, tmp_path: Path) -> None:
    """Hosting with two bots: the lobby counts the person missing (not the bots) and shows
    the invitation code; Quit works while the table waits."""
    home = tmp_path / "home"
    lobby = Served("web", "--name", "Alice", "--home", home)
    try:
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(lobby.page_url())
        page.locator("#lobby").wait_for(state="visible")
        page.locator("#host-port").fill("0")
        page.locator("#host-bots").select_option("2")
        page.locator("#host-button").click()
        page.wait_for_function(HOSTING)
        assert page.locator("#quit-button").is_enabled()
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
    finally:
        lobby.stop()


# -- a watcher's page ---------------------------------------------------------------------------
# The ``web`` lobby's Watch entry takes a host's watch code, waits for the table, and shows
# the game live with every hand hidden, to its end (``belote_p2p.app.watch``).


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
    browser: Any, tmp_path: Path
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


# -- the dummy: a seat that left plays on, open, decided by its partner --------------------------


def test_the_partner_plays_the_dummy_s_open_hand_from_the_page(browser: Any) -> None:
    """Four table sessions play (in memory) until seat 1 resigns in round 2 and its partner,
    seat 3, owes the dummy's card; seat 3's events feed its page, served in a thread: every
    seat box shows the dummy's cards face up, the page says who left and who plays the open
    hand, the turn says whose card it is, the hand to click is the dummy's, and the click
    answers the dummy's decision."""
    import random

    import trio
    from helpers import Net, make_table, table_sessions

    from belote_p2p.app.tui import TableView
    from belote_p2p.app.web.server import WebServer
    from belote_p2p.app.web.table import WebTable
    from belote_p2p.game.engine import Phase
    from belote_p2p.protocol.events import DecisionNeeded

    leaver, partner = 1, 3
    definition, ids = make_table("classic", target=501, seed=3)
    net = Net(table_sessions(definition, ids), random.Random(3))
    sessions = net.sessions
    wanted: list[DecisionNeeded] = []

    def decide(seat: int, event: DecisionNeeded) -> None:
        o = event.observation
        if seat == leaver and o.number >= 1 and sessions[leaver].dummy is None:
            sessions[leaver].abandon(leaver)  # resigns at its turn in round 2
            net.flush(leaver)
        elif seat == partner and o.seat == leaver and o.phase is Phase.PLAY:
            wanted.append(event)  # the page answers this one
        else:
            Net.decide(net, seat, event)

    net.decide = decide  # type: ignore[method-assign]
    net.start()
    while not wanted:
        net.step()
    decision = wanted[0]
    events = [e for e in net.events[partner] if e is not decision]
    web = WebServer()
    web.table = table = WebTable(TableView.from_definition(definition, partner), web.hub)
    answer: list[object] = []
    ready = threading.Event()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(web.run)
            for event in events:
                table.on_event(event)  # type: ignore[arg-type]
            ready.set()
            answer.append(await table.decide(decision.observation))
            web.close()

    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    ready.wait(WAIT_MS / 1000)
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(web.url)
    page.wait_for_function(MY_DECISION_OR_OVER)
    dummy_box = page.locator(f'.seat[data-seat="{leaver}"]')
    faces = dummy_box.locator(".open-hand img")
    assert faces.count() == len(decision.observation.hand)
    assert "p1 left; you play p1's open hand" in dummy_box.text_content()
    assert "for p1 (open hand)" in page.locator("#turn-line").text_content()
    now = page.evaluate(SNAPSHOT)
    assert sorted(now["hand"]) == sorted(str(c) for c in decision.observation.hand)
    legal = {str(c) for c in decision.observation.legal}
    assert set(now["legal"]) == legal
    check_fits(page)
    shot(page, "classic-dummy")
    page.locator("#hand button.card.legal").first.click()
    thread.join(WAIT_MS / 1000)
    assert not thread.is_alive()
    assert len(answer) == 1 and str(answer[0]) in legal


# -- the table in the reader's language ------------------------------------------------------
# French and Spanish pages: the browser's Accept-Language chooses (a context's locale), or
# the page's switch does (remembered in the home). What is asserted is the pages' own words
# (the page, its script, the view model's), so that a reader of either language sees them.

WORDS = {
    "fr": {
        "locale": "fr-FR", "take": "Prendre", "pass": "Passer", "side": ["Dernier pli", "Enchères"],
        "turned": "carte retournée", "how": "cliquez sur une carte ou tapez son numéro",
        "cards": r"^\d+ cartes?$", "round": "Donne 1 : ", "rows": ["Plis", "Points des cartes"],
        "leave": "Quitter la table", "result": "vérifiée par les quatre pairs",
        "host": "Ouvrir une table", "three": "à trois (3 joueurs)", "quit": "Quitter",
    },
    "es": {
        "locale": "es-ES", "take": "Tomar", "pass": "Pasar", "side": ["Última baza", "Apuestas"],
        "turned": "carta descubierta", "how": "haga clic en una carta o escriba su número",
        "cards": r"^\d+ cartas?$", "round": "Ronda 1: ", "rows": ["Bazas", "Puntos de cartas"],
        "leave": "Salir de la mesa", "result": "la han verificado los cuatro pares",
        "host": "Abrir una mesa", "three": "a tres (3 jugadores)", "quit": "Salir",
    },
}  # fmt: skip
SLAVIC = (
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);"
)
"""A plural rule of three forms (Russian's), for the script's reader of plural rules."""
LANG_IS = """(lang) => !!document.documentElement && document.documentElement.lang === lang
  && !!document.querySelector('#langs')"""


def switch_language(page: Any, language: str, within: str = "") -> None:
    """Click the page's switch to ``language`` (in ``within``, a selector) and wait for the
    page it loads (a predicate run while the old page unloads would see no document)."""
    with page.expect_navigation():
        page.locator(f'{within} #langs a[hreflang="{language}"]'.strip()).click()


SIDE_HEADINGS = "() => Array.from(document.querySelectorAll('#side h2')).map((h) => h.textContent)"
BACKS_LABELS = """() => Array.from(document.querySelectorAll('#felt .seat .backs'))
  .map((b) => b.getAttribute('aria-label'))"""


@contextmanager
def first_bid_served() -> Iterator[tuple[Any, Any, list[object], threading.Thread]]:
    """A classic table's first bid, served in this process (its server, the dealt state,
    the answer given once decided, the server's thread); the table resigned if no answer
    came, and the process's language as it was before."""
    import trio
    from helpers import dealt, make_table

    from belote_p2p import i18n
    from belote_p2p.app.tui import TableView
    from belote_p2p.app.web.server import WebServer
    from belote_p2p.app.web.table import WebTable
    from belote_p2p.game.observation import observe

    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    seat = state.to_act
    web = WebServer()
    web.table = table = WebTable(TableView.from_definition(definition, seat), web.hub)
    answer: list[object] = []
    tokens: list[trio.lowlevel.TrioToken] = []
    ready = threading.Event()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(web.run)
            tokens.append(trio.lowlevel.current_trio_token())
            ready.set()
            answer.append(await table.decide(observe(state, seat)))
            web.close()

    with i18n.using(None) as before:
        pass
    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    try:
        assert ready.wait(WAIT_MS / 1000)
        yield web, state, answer, thread
    finally:
        if thread.is_alive() and tokens:
            trio.from_thread.run_sync(table.resign, trio_token=tokens[0])
            thread.join(WAIT_MS / 1000)
        i18n.set_language(before)


@pytest.mark.parametrize("language", ["fr", "es"])
def test_the_bidding_buttons_say_prendre_and_passer(browser: Any, language: str) -> None:
    """A seat's first bid, served in this process, on a page whose browser prefers French
    (or Spanish): the page is made in it, the buttons say Prendre and Passer (Tomar and
    Pasar), the hand's cards are named in it and drawn in its letters; Passer answers the
    decision with a pass."""
    from belote_p2p import i18n
    from belote_p2p.app.wording import card_name
    from belote_p2p.game.engine import PASS
    from belote_p2p.game.observation import observe

    words = WORDS[language]
    with first_bid_served() as (web, state, answer, thread):
        seat = state.to_act
        page = browser.new_context(viewport=DESKTOP, locale=words["locale"]).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(web.url)
        page.wait_for_function(LANG_IS, arg=language)
        page.wait_for_function(MY_DECISION_OR_OVER)
        bidding = page.locator("#bidding")
        assert bidding.locator('button[data-code="take"]').text_content() == words["take"]
        assert bidding.locator('button[data-code="pass"]').text_content() == words["pass"]
        assert page.evaluate(SIDE_HEADINGS)[:2] == words["side"]
        assert words["turned"] in page.locator("#turned").text_content()
        assert (
            page.locator(f'#langs a[hreflang="{language}"]').get_attribute("aria-current") == "true"
        )
        with i18n.using(language):
            names = {str(c): card_name(c) for c in observe(state, seat).hand}
        for card in page.locator("#hand button.card").all():
            code = card.get_attribute("data-code")
            assert card.get_attribute("aria-label").endswith(names[code])
            assert card.locator("img").get_attribute("src") == f"cards/{language}/{code}.svg"
        check_fits(page)
        shot(page, f"{language}-bidding")
        bidding.locator('button[data-code="pass"]').click()
        thread.join(WAIT_MS / 1000)
        assert not thread.is_alive() and answer == [PASS]


def test_the_switch_s_own_page_loads_once_though_the_new_state_comes_first(
    browser: Any,
) -> None:
    """The switch (ES) makes the server take the choice and tell every open page, this one
    too, whose state then says ``chosen: "es"``. When that state comes before the page the
    switch asked for (whose answer is held here until the old page has read the state), the
    old page does not load again: a reload would abort the switch's navigation. The page
    asked for comes, in Spanish, and no request of the page failed."""
    with first_bid_served() as (web, _state, _answer, _thread):
        page = browser.new_context(viewport=DESKTOP, locale="en-US").new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(web.url)
        page.wait_for_function(MY_DECISION_OR_OVER)
        # A second listener on the page's socket: listeners run in the order they were
        # added, so when it has seen the state, the page's own has read it before.
        page.evaluate("""() => socket.addEventListener("message", (ev) => {
          if (JSON.parse(ev.data).chosen === "es") console.debug("chosen: es"); })""")
        answered: list[str] = []

        def hold(route: Any) -> None:
            with page.expect_console_message(lambda message: message.text == "chosen: es"):
                answer = route.fetch(max_redirects=0)  # the server takes the choice
            route.fulfill(response=answer)
            answered.append(route.request.url)

        page.route(re.compile(r"[?]lang=es$"), hold)
        failed: list[str] = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        with page.expect_navigation():
            page.locator('#langs a[hreflang="es"]').click()
        page.wait_for_function(LANG_IS, arg="es")
        assert len(answered) == 1 and failed == [], (answered, failed)


def play_in(page: Any, language: str) -> set[str]:
    """Play the game on ``page`` to its end (a bid as :func:`bid` makes it, a card by its
    first legal one), checking the words of each stage in ``language``, the play's with its
    screenshot (the bidding's is taken by the test of the buttons: the deal decides whether
    the seat bids at all); the stages seen."""
    words = WORDS[language]
    seen: set[str] = set()
    bids: dict[str, Any] = {"bid": False}
    while True:
        page.wait_for_function(DECISION_OR_SUMMARY)
        if page.evaluate(BETWEEN_ROUNDS):
            if "between-rounds" not in seen:  # a redeal (all passed): the game goes on
                seen.add("between-rounds")
                assert page.locator("#summary-title").text_content().startswith(words["round"])
            page.wait_for_function(MY_DECISION_OR_OVER)
        if page.locator("#table").get_attribute("data-finished") == "true":
            return seen
        now = page.evaluate(SNAPSHOT)
        if now["phase"] == "play":
            if "play" not in seen:
                seen.add("play")
                assert words["how"] in page.locator("#turn-line").text_content()
                assert page.evaluate(SIDE_HEADINGS)[:2] == words["side"]
                backs = page.evaluate(BACKS_LABELS)
                assert backs and all(re.match(words["cards"], b) for b in backs), backs
                shot(page, f"{language}-play")
            page.locator("#hand button.card.legal").first.click()
        else:
            if "bidding" not in seen:  # the deal decides whether a bot takes first
                seen.add("bidding")
                passing = page.locator('#bidding button[data-code="pass"]')
                assert passing.text_content() == words["pass"]
            bid(page, False, bids)
        page.wait_for_function(DECISION_GONE, arg=now["decision"])


def check_game_over(page: Any, language: str) -> None:
    """The end of the game (target 1: the round scored is the game's last): the round's
    summary and the game's end in ``language``."""
    words = WORDS[language]
    page.locator("#summary").wait_for(state="visible")
    page.wait_for_function(IMAGES_DRAWN)
    title = page.locator("#summary-title").text_content()
    assert title.startswith(words["round"]), title
    rows = page.locator("#summary-points td").all_text_contents()
    assert all(row in rows for row in words["rows"]), rows
    assert page.locator("#leave").text_content() == words["leave"]
    assert page.locator("#final").is_visible() and page.locator("#final").text_content()
    assert words["result"] in page.locator("#result-line").text_content()
    shot(page, f"{language}-end-of-game")


@pytest.mark.parametrize(("language", "switched"), [("fr", False), ("es", True)])
def test_a_person_plays_a_whole_game_in_french_or_spanish(
    browser: Any, tmp_path: Path, language: str, switched: bool
) -> None:
    """``host --web`` with three bots, in French for a browser that prefers French, or in
    Spanish by the switch (ES) of an English page, which loads again in it and is remembered
    in the home: the play, the end of the round and of the game in that language, the
    process's last words too."""
    from belote_p2p import i18n

    home = tmp_path / "home"
    host = Served(
        "host", "--web", "--name", "Alice", "--target", 1, "--bots", 3, "--port", 0,
        "--no-beacon", "--home", home, "--seed", 11,
    )  # fmt: skip
    try:
        locale = "en-US" if switched else WORDS[language]["locale"]
        page = browser.new_context(viewport=DESKTOP, locale=locale).new_page()
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(host.page_url())
        if switched:
            page.wait_for_function(MY_DECISION_OR_OVER)
            assert page.evaluate(SIDE_HEADINGS)[0] == "Last trick"
            switch_language(page, language, "#top")
        page.wait_for_function(LANG_IS, arg=language)
        # A switch is a choice, kept for the next commands; a browser's preference is not.
        assert i18n.remembered(home) == (language if switched else None)
        assert "play" in play_in(page, language)
        check_game_over(page, language)
        page.locator("#leave").click()
        assert host.wait() == 0, host.output
        assert not errors, errors
    finally:
        host.stop()
    assert "RESULT" in host.output


def test_the_lobby_in_spanish_then_french(browser: Any, tmp_path: Path) -> None:
    """``belote-p2p web`` for a browser that prefers Spanish: the lobby in Spanish (its
    variants with their players counted, ngettext of the script's catalog); its switch
    makes it French, remembered in the home; Quit says Quitter."""
    home = tmp_path / "home"
    lobby = Served("web", "--name", "Alice", "--home", home)
    try:
        page = browser.new_context(viewport=DESKTOP, locale="es-ES").new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(lobby.page_url())
        for language in ("es", "fr"):
            words = WORDS[language]
            page.wait_for_function(LANG_IS, arg=language)
            page.locator("#lobby").wait_for(state="visible")
            assert words["host"] in page.locator("#host-form h2").text_content()
            assert words["three"] in page.locator("#host-variant").text_content()
            assert page.locator("#quit-button").text_content() == words["quit"]
            assert page.locator("#lobby .lobby-head #langs").count() == 1
            shot(page, f"{language}-lobby")
            if language == "es":
                switch_language(page, "fr")
        assert (home / "lang").read_text().strip() == "fr"
        # The script reads a catalog's plural rule without eval, as gettext does.
        for n, form in ((0, 0), (1, 0), (2, 1)):
            assert page.evaluate("(n) => pluralIndex(n)", n) == form  # French: n > 1
        for n, form in ((1, 0), (2, 1), (5, 2), (11, 2), (21, 0), (22, 1), (112, 2)):
            assert page.evaluate(f"(n) => pluralRule({json.dumps(SLAVIC)})(n)", n) == form
        assert page.evaluate("() => pluralRule('plural=(n ? 1')(1)") == 0  # unreadable: English's
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
    finally:
        lobby.stop()


# -- the lobby's own steps: Stop hosting, the join field, the rematch asked on the page -------

STATUS_HAS = """(text) => document.querySelector('#lobby-status').textContent.includes(text)"""
JOIN_ERROR = """(text) => { const e = document.querySelector('#join-error');
  return !e.hidden && e.textContent.includes(text); }"""


def lobby_page(browser: Any, url: str) -> Any:
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    page.locator("#lobby").wait_for(state="visible")
    return page


def test_stop_hosting_closes_the_table_and_its_joiner_hears_why(
    browser: Any, tmp_path: Path
) -> None:
    """Alice hosts from the lobby (one bot, so the table waits); Bob's lobby is told under
    its field what is neither a code nor an address, then joins with the invitation code
    pasted; Alice's Stop hosting closes the table: Bob's page says the host closed it, her
    port refuses connections, both lobbies are back at their start and quit."""
    host = Served("web", "--name", "Alice", "--home", tmp_path / "alice", "--bind", LOOPBACK)
    joiner = Served("web", "--name", "Bob", "--home", tmp_path / "bob", "--bind", LOOPBACK)
    try:
        alice = lobby_page(browser, host.page_url())
        assert alice.locator("#stop-hosting").is_hidden()  # nothing hosted yet
        host_from_lobby(alice, "classic", 1)
        alice.wait_for_function(STATUS_HAS, arg="belote-p2p join belote2")
        alice.locator("#stop-hosting").wait_for(state="visible")
        found = re.search(r"belote-p2p join (\S+)", alice.locator("#lobby-status").text_content())
        assert found is not None
        code = found[1]
        port = int(host.line(r"Lobby listening on \S+:(\d+)")[1])

        bob = lobby_page(browser, joiner.page_url())
        label = bob.locator("label:has(#join-address)").text_content()
        assert "Invitation code or address" in label
        assert "belote2" in bob.locator("#join-address").get_attribute("placeholder")
        assert bob.locator("#join-error").is_hidden()
        # One letter of the middle changed for another (the code is lowercase base32: an
        # upper-case copy of the same letter would read the same), so its check fails.
        middle = len(code) // 2
        damaged = code[:middle] + ("b" if code[middle] != "b" else "c") + code[middle + 1 :]
        bob.locator("#join-address").fill(damaged)
        bob.locator("#join-button").click()
        bob.wait_for_function(JOIN_ERROR, arg="This invitation code cannot be read")
        bob.locator("#join-address").fill("my friend's table")
        bob.locator("#join-button").click()
        bob.wait_for_function(JOIN_ERROR, arg="neither an invitation code nor an address")
        assert bob.locator("#lobby").get_attribute("data-busy") == "false"  # no step began
        shot(bob, "lobby-join-error")
        bob.locator("#join-address").fill(code)
        bob.locator("#join-button").click()
        bob.locator("#join-error").wait_for(state="hidden")
        host.line(r"Bob \[[0-9a-f-]+\] joined: seat")  # (her page shows the last news only)
        # Bob's page hears that his join began from his own server, on its own time: the
        # host's line above may come first.
        bob.wait_for_function("() => document.querySelector('#lobby').dataset.busy === 'true'")

        alice.locator("#stop-hosting").click()
        alice.wait_for_function(LOBBY_SETTLED, arg="You closed the table")
        assert alice.locator("#stop-hosting").is_hidden()
        assert alice.locator("#host-button").is_enabled()
        bob.wait_for_function(LOBBY_SETTLED, arg="The host closed the table before its game")
        assert bob.locator("#join-button").is_enabled()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((LOOPBACK, port), timeout=WAIT_MS / 1000).close()
        for page, served in ((alice, host), (bob, joiner)):
            page.locator("#quit-button").click()
            assert served.wait() == 0, served.output
    finally:
        host.stop()
        joiner.stop()
    assert "You closed the table: the players who had joined are told." in host.output


ANOTHER_GAME = """() => { const t = document.querySelector('#table');
  return !t.hidden && t.dataset.finished !== 'true'; }"""


def test_the_rematch_is_asked_on_the_page_played_then_declined(
    browser: Any, tmp_path: Path
) -> None:
    """A lobby's table of three bots to 1: once the game is over the page asks whether to
    offer another game (to whom, its rules, who deals first); Play again starts the next
    game on the same page, and No after it ends the table (the bots hear it at once)."""
    lobby = Served("web", "--name", "Alice", "--home", tmp_path / "home")
    try:
        url = lobby.page_url()
        page = lobby_page(browser, url)
        host_from_lobby(page, "classic", 3, target=1)
        page.locator("#table").wait_for(state="visible")
        play_game(page, "classic", url, shots=False)
        question = page.locator("#rematch-question")
        question.wait_for(state="visible")
        asked = question.text_content()
        assert asked.startswith("Offer another game to Bot1, Bot2 and Bot3? classic to 1"), asked
        assert "deals first" in asked
        assert page.locator("#rematch").text_content() == "Play again"
        shot(page, "rematch-question")
        page.locator("#rematch").click()
        page.wait_for_function(ANOTHER_GAME)
        play_game(page, "classic", url, shots=False)
        question.wait_for(state="visible")
        page.locator("#rematch-decline").click()
        page.wait_for_function(LOBBY_SETTLED, arg="No other game: Alice does not want")
        page.wait_for_function("() => document.querySelectorAll('#games tbody tr').length === 2")
        page.locator("#quit-button").click()
        assert lobby.wait() == 0, lobby.output
    finally:
        lobby.stop()
    out = lobby.output
    assert out.count("RESULT {") == 2 and "All 4 peers agree" in out, out
    assert "Bot1 wants another game." in out and "Alice does not." in out, out
