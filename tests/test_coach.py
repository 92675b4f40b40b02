"""The coach's shells (``belote_p2p.app.coach``, ``analyse``, the hints and the coach line,
the replay page as served, the profile's progress) and the table rule of hints: signed in
the definition, omitted at its default, shown to every seat, kept in the record."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import trio
from helpers import (
    Net,
    cli_argv,
    cookie,
    dealt,
    http,
    make_table,
    table_sessions,
    write_transcript,
)
from terminal import Terminal, answered, at_decision, environment

from belote_p2p.app import cli
from belote_p2p.app.coach import choice_text, coach_line, hint_text
from belote_p2p.app.home import Home
from belote_p2p.app.output import hints_rule_text, print_roster
from belote_p2p.app.profile import (
    AnalysedSeat,
    analysed_losses,
    open_db,
    progress_text,
    record_analysis,
    sparkline,
)
from belote_p2p.app.tui import TableView
from belote_p2p.app.web.lobby import WebLobby
from belote_p2p.app.web.replay import SCRIPT, STYLE, content_security_policy, replay_page
from belote_p2p.app.web.server import WebServer
from belote_p2p.app.web.table import WebPlayer, WebTable
from belote_p2p.game.observation import observe
from belote_p2p.i18n import using
from belote_p2p.players.analysis import Coach, Hint, Reason, evaluator
from belote_p2p.players.bots import make_bot
from belote_p2p.players.hindsight import Hindsight
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.verify import verify_transcript

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
CHEAP = "expert:samples=6:bid_samples=6"


def analyse(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, list[str]]:
    status = cli.main(["analyse", *map(str, argv), "--coach-bot", CHEAP])
    return status, capsys.readouterr().out.splitlines()


# -- analyse ---------------------------------------------------------------------------------


def test_analyse_reports_every_seat_and_ends_with_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = VECTORS / "game-classic.transcript"
    status, lines = analyse(capsys, game, "--home", tmp_path)
    assert status == 0
    figures = json.loads(lines[-1])
    assert [s["seat"] for s in figures["seats"]] == [0, 1, 2, 3] and figures["hints"] is False
    for s in figures["seats"]:
        assert s["points_lost"] >= 0 and s["hindsight_points_lost"] >= 0
        assert s["mean_loss"] == round(s["points_lost"] / s["valued"], 2)
        assert s["decisions"] >= s["valued"] > 0
    text = "\n".join(lines[:-1])
    assert text.startswith("Analysis of a classic game to ")
    assert "every hand seen" in text and "Costliest decisions:" in text
    assert re.search(
        r"^  1\. Round \d, (trick \d|bidding): .* instead of .*points lost", text, re.M
    )
    assert re.search(r"^     hand .*(trump|turned)", text, re.M)
    # The figures are kept in the profile, a row a seat.
    with open_db(Home.at(str(tmp_path)).profile_db) as conn:
        rows = conn.execute("SELECT seat, decisions, valued, points_lost FROM analyses").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (s["seat"], s["decisions"], s["valued"]) for s in figures["seats"]
    ]
    # --seat: one seat's decisions only; the same figures for it.
    status, lines = analyse(capsys, game, "--home", tmp_path, "--seat", "2")
    (alone,) = json.loads(lines[-1])["seats"]
    assert alone == figures["seats"][2]
    assert not any(line.startswith("p0 (seat 0)") for line in lines)
    with pytest.raises(SystemExit):
        cli.main(["analyse", str(game), "--seat", "7"])


def test_analyse_speaks_the_readers_language_and_its_json_stays_english(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = VECTORS / "game-three-handed.transcript"
    status, lines = analyse(capsys, game, "--home", tmp_path, "--lang", "fr")
    assert status == 0
    text = "\n".join(lines[:-1])
    assert text.startswith("Analyse d'une partie") and "décisions" in text
    assert "Toutes les mains vues" in text and "points lost" not in text
    figures = json.loads(lines[-1])
    assert len(figures["seats"]) == 3 and "mean_loss" in figures["seats"][0]


def test_analyse_refuses_a_file_that_is_no_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.transcript"
    bad.write_bytes(b"nothing")
    assert cli.main(["analyse", str(bad), "--home", str(tmp_path)]) == 2
    assert "belote-p2p analyse: " in capsys.readouterr().err


# -- the table rule of hints -----------------------------------------------------------------


def test_hints_are_a_signed_rule_omitted_at_its_default() -> None:
    definition, ids = make_table("classic")
    assert "hints" not in definition.to_wire()  # the records of before keep their bytes
    on = TableDefinition(definition.table_id, definition.rules, definition.seats, hints=True)
    assert on.to_wire()["hints"] is True and on.digest != definition.digest
    assert TableDefinition.from_wire(on.to_wire()) == on
    assert TableDefinition.from_wire(definition.to_wire()) == definition
    # The host signs the rule with the table: a joiner given the other definition sees
    # the proposal fail.
    proposal = on.propose(ids[0])
    assert on.proposed_by_host(proposal) and not definition.proposed_by_host(proposal)
    with pytest.raises(ValueError, match="hints"):
        TableDefinition.from_wire({**on.to_wire(), "hints": 1})


def test_every_seat_reads_the_rule_and_the_record_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, ids = make_table("classic", target=151, seed=4)
    definition = TableDefinition(plain.table_id, plain.rules, plain.seats, hints=True)
    for seat in range(4):
        print_roster(definition, seat)
        assert hints_rule_text() in capsys.readouterr().out
    print_roster(plain, 1)
    assert hints_rule_text() not in capsys.readouterr().out
    sessions = table_sessions(definition, ids, deal_seed=4)
    Net(sessions, random.Random(4)).run()
    path = write_transcript(tmp_path / "hints.transcript", sessions[2])
    verdict = verify_transcript(path)
    assert verdict.ok and verdict.definition.hints
    status, lines = analyse(capsys, path, "--home", tmp_path)
    assert status == 0 and json.loads(lines[-1])["hints"] is True
    assert "Hints were on at this table" in "\n".join(lines)


# -- at the table ----------------------------------------------------------------------------


def test_a_hint_and_a_coach_line_in_words() -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 3)
    obs = observe(state, state.to_act)
    first, second = obs.legal[0], obs.legal[1]
    hint = Hint(first, 12.4, (second, -3.0), Reason.TAKE_CONTRACT)
    assert hint_text(hint) == (
        f"Hint: {choice_text(first)}. That contract pays more on average than passing. "
        f"(+12 on average; next best {choice_text(second)}: -3)"
    )
    with using("es"):
        assert hint_text(hint).startswith(f"Consejo: {choice_text(first)}.")
    assert hint_text(Hint(first, 0.0, None, Reason.ONLY)).endswith(
        "Every choice is worth the same here."
    )
    (record,) = play_round(3)[:1]
    analysis = Coach(evaluator(make_bot(CHEAP)), Hindsight(make_bot("rules"))).analyse_round(
        record, None, {0}
    )
    line = coach_line(analysis, 0)
    lost = [d for d in analysis.decisions if (d.loss("informed") or 0) > 0]
    seen = [d for d in analysis.decisions if (d.loss("hindsight") or 0) > 0]
    if lost or seen:
        assert line.startswith("Coach: your costliest decision this round, "), line
    else:
        assert line == "Coach: none of your decisions this round lost points."


def play_round(seed: int) -> list[Any]:
    definition, _ = make_table("classic")
    rng = random.Random(seed)
    state = dealt(definition.rules, seed)
    while state.number == 0:
        state = state.apply(rng.choice(state.legal_actions()))
    return list(state.history)


async def test_the_page_asks_for_a_hint_only_where_the_table_allows_it() -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    seat = state.to_act
    table = WebTable(TableView.from_definition(definition, seat))
    asked: list[Any] = []

    async def hints(observation: Any) -> str:
        asked.append(observation)
        return "Hint: take."

    assert await table.handle({"type": "hint"}) is not None  # off at this table
    table.hints = hints
    assert await table.handle({"type": "hint"}) == "A hint is for your turn."
    player = WebPlayer(table)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(player.decide, observe(state, seat))
        await table.hub.wait_past(0)
        assert table.model()["hints_enabled"] and table.model()["hint"] == ""
        assert await table.handle({"type": "hint"}) is None
        assert table.model()["hint"] == "Hint: take." and asked[0].seat == seat
        assert table.submit("take", table.model()["decision"]) is None
    assert table.model()["hint"] == ""  # the hint was for that decision only


# -- the replay page, as the lobby serves it -------------------------------------------------


async def test_the_lobby_serves_a_past_games_replay_with_its_own_policy(tmp_path: Path) -> None:
    home = Home.at(str(tmp_path / "home"))
    home.games.mkdir(parents=True)
    game = home.games / "game-two-handed.transcript"
    game.write_bytes((VECTORS / game.name).read_bytes())
    assert cli.main(["import", str(game), "--home", str(home.root)]) == 0
    verdict = verify_transcript(game)
    web = WebServer()
    lobby = WebLobby(web, home, beacon=[])
    web.lobby, web.replays = lobby, lobby.replay
    async with trio.open_nursery() as nursery:
        await nursery.start(web.run)
        table = verdict.definition.table_id.hex()
        status, headers, body = await http(web, f"/replay/{table}", cookie(web))
        assert status == 200 and headers["content-type"].startswith("text/html")
        policy = headers["content-security-policy"]
        assert policy == content_security_policy() and "'unsafe-inline'" not in policy
        page = body.decode()
        assert f"<script>{SCRIPT}</script>" in page and f"<style>{STYLE}</style>" in page
        assert (await http(web, f"/replay/{'0' * 32}", cookie(web)))[0] == 404
        assert (await http(web, "/replay/nothing", cookie(web)))[0] == 404
        assert (await http(web, f"/replay/{table}"))[0] == 403  # no token, no page
        web.close()
    # Made once, kept in the home; the game's figures went to the profile.
    assert list((home.root / "replays").glob(f"{table}.*.html"))
    await lobby.refresh()
    assert lobby.model()["games"][0]["table_id"] == table
    with open_db(home.profile_db) as conn:
        kept = conn.execute("SELECT seat FROM analyses WHERE table_id = ?", (table,)).fetchall()
    assert sorted(kept) == [(0,), (1,)]


def test_the_replay_page_holds_every_step_in_the_readers_words() -> None:
    verdict = verify_transcript(VECTORS / "game-coinche.transcript")
    coach = Coach(evaluator(make_bot(CHEAP)), Hindsight(make_bot("rules")))
    rounds = [(r.record, r.deck) for r in verdict.rounds if r.deck]
    analysis = coach.analyse_game(verdict.definition.rules, rounds)
    page = replay_page(verdict, analysis, "fr")
    data = json.loads(re.search(r'id="replay-data">(.*?)</script>', page, re.S).group(1))
    assert page.startswith("<!DOCTYPE html>") and '<html lang="fr">' in page
    assert data["words"]["next"] == "Suivant" and len(data["rounds"]) == len(rounds)
    steps = [s for r in data["rounds"] for s in r["steps"]]
    marked = [s["decision"] for s in steps if s["decision"]]
    assert len(marked) == len(analysis.decisions)
    for d in marked:
        assert d["level"] in (0, 1, 2, 3) and (d["loss"] is None or d["loss"] >= 0)
    assert all(r["steps"][-1].get("end") for r in data["rounds"])
    assert "</script" not in page.split('id="replay-data">')[1].split("</script>")[0]


# -- progress --------------------------------------------------------------------------------


def test_profile_shows_the_progress_of_the_games_analysed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home.at(str(tmp_path))
    game = VECTORS / "game-classic.transcript"
    assert cli.main(["import", str(game), "--home", str(tmp_path)]) == 0
    verdict = verify_transcript(game)
    fp = verdict.definition.seats[0]
    from belote_p2p.protocol.identity import fingerprint

    me = fingerprint(fp.key)
    capsys.readouterr()
    assert cli.main(["profile", me, "--home", str(tmp_path)]) == 0
    assert "no game analysed yet" in capsys.readouterr().out
    for day, loss in enumerate((9.0, 6.0, 4.5, 2.0), 1):
        record_analysis(
            home.profile_db, bytes([day]) * 16, f"2026-01-0{day}T00:00:00Z",
            [AnalysedSeat(1, me, 20, 10, loss * 10, 10, 100.0)],
        )  # fmt: skip
    with open_db(home.profile_db) as conn:
        assert analysed_losses(conn, me) == [9.0, 6.0, 4.5, 2.0]
    assert cli.main(["profile", me, "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "average loss a decision 5.4 over 4 analysed games" in out
    bars = sparkline([9.0, 6.0, 4.5, 2.0])
    assert f"(oldest first: {bars}, last 2.0)" in out
    assert len(bars) == 4 and list(bars) == sorted(bars, reverse=True) and bars[0] == "█"
    assert sparkline([]) == "" and sparkline([0.0, 0.0]) == "▁▁"
    assert progress_text([]) is None
    with sqlite3.connect(home.profile_db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 4


# -- at a terminal ---------------------------------------------------------------------------


def test_a_hint_at_the_terminal_and_the_coach_line_after_each_round(tmp_path: Path) -> None:
    """``play --coach``: Tab (or hint) asks the expert at our turn; after each round a line
    names our costliest decision; the person's stand-in plays the rest quickly."""
    argv = cli_argv("play", "--target", "51", "--seed", "5", "--name", "Ann", "--pace", "0",
                    "--coach", "--coach-bot", CHEAP, "--home", tmp_path / "home")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        term.wait(at_decision, "the first bid")
        term.type("\t")  # Tab: a hint
        term.expect_raw(r"Hint: (take|pass)\. ")
        term.send("pass")
        term.wait(answered, "the bid taken")
        seen = 0
        while "Coach: " not in term.plain():
            text = term.wait(
                lambda t: at_decision(t) or "Coach: " in term.plain() or "Enter: the table" in t,
                "a decision or the coach's line",
            )
            if "Coach: " in term.plain():
                break
            if "Enter: the table" in text:  # a round screen (a redeal's too)
                term.send("")
                term.wait(
                    lambda t: "Enter: the table" not in t or "Coach: " in term.plain(),
                    "the table again",
                )
                continue
            legal = re.search(r"Legal: (\d)", text) or re.search(r"You may: (\w+)", text)
            assert legal is not None, text
            term.send(legal.group(1))
            term.wait(lambda t: answered(t) or "Coach: " in term.plain(), "the answer taken")
            seen += 1
            assert seen < 200
        # Read on until the whole line is in (the loop stops at its first piece).
        term.expect_raw(r"Coach: (your costliest decision this round|none of your)")
        term.interrupt()
        term.expect(r"Ctrl-C: resign the game\?")
        term.interrupt()
        assert term.finish() == 0
        assert "Traceback" not in term.plain()
    finally:
        term.close()


def test_hints_are_off_at_a_networked_table_unless_its_host_said_so(tmp_path: Path) -> None:
    argv = cli_argv("host", "--bots", "3:random", "--first-dealer", "3", "--port", "0",
                    "--bind", "127.0.0.1", "--no-beacon", "--home", tmp_path / "home",
                    "--seed", 7, "--target", "101", "--name", "Ann", "--hints")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        term.expect_raw(re.escape(hints_rule_text()))
        term.wait(at_decision, "the first bid")
        term.send("hint")
        term.expect_raw(r"Hint: (take|pass)\. ")
        term.send("quit")
        term.expect_raw(r"Resign and leave the game\? Type yes to confirm> ")
        term.send("yes")
        assert term.finish() == 0
    finally:
        term.close()
    argv = [a for a in argv if a != "--hints"]
    (tmp_path / "again").mkdir()
    term = Terminal(argv, environment(), tmp_path / "again")
    try:
        term.wait(at_decision, "the first bid")
        term.send("hint")
        term.expect_raw(r"Hints are off at this table")
        term.send("quit")
        term.expect_raw(r"Resign and leave the game\? Type yes to confirm> ")
        term.send("yes")
        assert term.finish() == 0
        assert hints_rule_text() not in term.plain()
    finally:
        term.close()
