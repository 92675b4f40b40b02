"""A person at the terminal table, through a pseudo-terminal of 80x24, against three bot
processes: a whole game, the round screen, resigning, Ctrl-C, a closed terminal, a crash
of the host and its resume. No test sleeps: each waits for what the screen shows."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli_argv
from terminal import (
    CARD,
    CARDS_IN,
    DECISION,
    DECISIONS,
    Terminal,
    answered,
    at_decision,
    environment,
    frame_fits,
    last_line,
)

from belote_p2p.app.seatview import RESIGNED_OPEN
from belote_p2p.protocol.verify import verify_transcript


def host(tmp_path: Path, *more: object) -> Terminal:
    """``belote-p2p host --bots 3`` on a pseudo-terminal; seat 3 deals first, so that the
    person bids first."""
    argv = cli_argv("host", "--bots", "3", "--first-dealer", "3", "--port", "0", "--bind",
                    "127.0.0.1", "--no-beacon", "--home", tmp_path / "home", "--seed", 7,
                    *more)  # fmt: skip
    return Terminal(argv, environment(), tmp_path)


def inside(text: str, words: str) -> None:
    """``words`` are on a line of the frame (between its borders), not under it."""
    line = next(line for line in text.split("\n") if words in line)
    assert line.startswith("│") and line.rstrip().endswith("│"), text


def resign_with_ctrl_c(term: Terminal) -> None:
    """Two Ctrl-C at ``play``: asked, then resigned cleanly."""
    term.interrupt()
    term.expect(r"Ctrl-C: resign the game\?")
    term.interrupt()
    assert term.finish() == 0
    final = term.plain()
    assert "You resigned." in final and "Traceback" not in final


def run_at_terminal(tmp_path: Path, *argv: object) -> str:
    """A command's whole output at the pseudo-terminal; it must succeed."""
    term = Terminal(cli_argv(*argv), environment(), tmp_path)
    try:
        assert term.finish() == 0, term.plain()
        return term.plain()
    finally:
        term.close()


def transcript_of(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "home" / "games").glob("*.transcript")
    return path


def test_a_person_plays_a_whole_game_at_80x24(tmp_path: Path) -> None:
    term = host(tmp_path, "--target", "101", "--name", "Ann", "--json")
    try:
        bids = plays = rounds_seen = 0
        numbers: dict[str, str] = {}
        chatted = False
        while True:
            text = term.wait(
                lambda t: at_decision(t) or "Enter: the table" in t or "RESULT {" in t,
                "a decision, the round screen or the result",
            )
            if "RESULT {" in text:
                break
            frame_fits(text)
            if "Enter: the table" in text and "Game over" not in text:
                # The round screen: it stays until Enter (or a few seconds). A redeal has
                # no cards to take apart.
                redeal = "Everybody passed" in text
                labels = ("Card points", "with dix de der", "Announcements", "Belote",
                          "Round score", "Last trick: ")  # fmt: skip
                for label in () if redeal else labels:
                    assert label in text, text
                assert "Game (to 101)" in text
                assert re.search(r"(made|failed) the contract|Litige|Everybody passed", text)
                if rounds_seen == 0 and not redeal:
                    term.send("tricks")
                    # Whole frames only: a frame caught half drawn lacks its footer.
                    shown = term.wait(
                        lambda t: "Tricks of round" in t and "Enter: the table" in t,
                        "the round's tricks",
                    )
                    if "Game over" not in shown:  # the game may end with this round
                        assert len(re.findall(r"^│ [1-8]\. ", shown, re.MULTILINE)) == 8, shown
                rounds_seen += not redeal
                term.send("")
                term.wait(
                    lambda t: "Enter: the table" not in t and "Tricks of round" not in t,
                    "the table again",
                )
                numbers.clear()  # a new round, new numbers
                continue
            kind = DECISION.search(last_line(text))
            assert kind is not None
            assert "You & " in text and "to 101" in text and "Us (" not in text
            if kind.group(1) == "bid":
                assert "You may: pass" in text
                if bids == 0:
                    assert "Bids: none yet" in text and "Turned card: " in text
                    term.send("JH")
                    term.expect(r"This is the bidding: no card is played yet\. Legal now: ")
                    term.send("90 H")
                    term.expect(r"'90 H' is a coinche bid; this table plays classic\.")
                    term.send("say gg")
                    term.expect(r"· You: gg")
                    chatted = True
                bids += 1
                term.send("pass")
                term.wait(answered, "the bid taken")
                continue
            hand = dict((n, r + s) for n, r, s in re.findall(CARD, text.split("Hand ")[-1]))
            legal = re.findall(CARD, text.split("Legal: ")[-1].split("\n")[0])
            assert legal, text
            for number, name in hand.items():
                assert numbers.setdefault(number, name) == name, "a card changed its number"
            if plays == 0:
                term.send("zz")
                term.expect(r"'zz' is not a card, a bid or a command \(type help\)\.")
                term.send("9")
                term.expect(r"There is no card 9: your cards are ")
            number, rank, suit = legal[plays % len(legal)]
            # Alternate the number and the card's name (lower case, 10 for a ten).
            term.send(number if plays % 2 else (rank + "SHDC"["♠♥♦♣".index(suit)]).lower())
            term.wait(answered, "the card taken")
            if plays == 0:
                # The trick ends with the others' cards: it stays on show, and who won it.
                shown = term.wait(
                    lambda t: (
                        re.search(r"Trick \d of 8 won by \w+ \(\d+\)", t) is not None
                        or "Enter: the table" in t
                    ),
                    "the completed trick",
                )
                if "Enter: the table" not in shown:
                    inside(shown, " won by ")
            plays += 1
        term.expect_raw(r"Play again, same players and seats, the deal passed on\? \[y/N\] ")
        term.send("n")
        assert term.finish() == 0
        final = term.plain()
        assert "Ann does not." in final
        result = json.loads(re.findall(r"RESULT (\{.*\})", final)[-1])
        assert result["ok"] and chatted and plays >= 8
        # The last round's screen is the game's (no Enter asked for it; a game of one round
        # shows no other).
        assert "Round score" in final and "Game over" in final
        assert "Score sheet" in final and re.search(r"Game over: (You|Bot\d & Bot\d) win", final)
        assert "team 0" not in final and "Traceback" not in final
        assert re.search(r"All 4 peers agree: final scores \d+-\d+", final)
    finally:
        term.close()


def test_plain_mode_resigns_and_prints_no_machine_line(tmp_path: Path) -> None:
    term = host(tmp_path, "--target", "101", "--name", "Ann", "--plain")
    try:
        term.expect_raw(r"Your bid \(\d+ s left\)> ")
        before = term.plain()
        assert "\x1b[" not in term.raw, "plain mode prints no escape sequences"
        assert "Score: You & " in before and "Legal now: pass" in before
        term.send("quit")
        term.expect_raw(r"Resign and leave the game\? Type yes to confirm> ")
        term.send("yes")
        assert term.finish() == 0
        final = term.plain()
        assert RESIGNED_OPEN in final  # the three others play on, its open hand too
        assert "RESULT" not in final and "Traceback" not in final
        assert re.search(r"^\+0 XP, level 0$", final, re.MULTILINE), final[-2000:]
    finally:
        term.close()


def test_ctrl_c_asks_then_resigns_and_the_clock_plays_for_a_slow_person(
    tmp_path: Path,
) -> None:
    term = host(tmp_path, "--variant", "coinche", "--name", "Ann", "--person-deadline", "4")
    try:
        text = term.wait(at_decision, "the first bid")
        frame_fits(text)
        line = next(x for x in text.split("\n") if "You may: " in x)
        assert "You may: pass" in line and "…" not in line, line
        term.send("95 H")
        term.expect(r"Bids go by tens")
        # Nobody answers: the rules bot bids for the person, and says so.
        term.expect(r"Time's up: the rules bot played \w+.* for you\. You play on at your")
        term.interrupt()
        term.expect(r"Ctrl-C: resign the game\? Ctrl-C again or yes resigns; Enter plays on\.")
        term.send("")
        term.expect(r"Not resigning: the game goes on\.")
        term.interrupt()
        term.wait(lambda t: last_line(t).startswith("Resign and leave"), "the question")
        term.interrupt()
        assert term.finish() == 0
        final = term.plain()
        assert RESIGNED_OPEN in final  # the three others play on, its open hand too
        assert "Traceback" not in final and "Interrupted" not in final
        assert verify_transcript(transcript_of(tmp_path)).left_here
    finally:
        term.close()


def test_ctrl_c_in_the_lobby_leaves_cleanly(tmp_path: Path) -> None:
    argv = cli_argv("host", "--port", "0", "--bind", "127.0.0.1", "--no-beacon", "--home",
                    tmp_path / "home", "--name", "Ann")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        term.expect(r"where this address reaches us:  belote-p2p join 127\.0\.0\.1:\d+")
        term.interrupt()
        assert term.finish() == 130
        final = term.plain()
        assert "Interrupted: you left the table." in final and "Traceback" not in final
    finally:
        term.close()


def test_closing_the_terminal_resigns_cleanly(tmp_path: Path) -> None:
    term = host(tmp_path, "--name", "Ann")
    try:
        term.wait(at_decision, "the first bid")
        term.hang_up()
        assert term.proc.wait(timeout=60) == 0
        verdict = verify_transcript(transcript_of(tmp_path))
        # The host's bots play on with its open hand: its own record ends as left.
        assert verdict.ok and verdict.left_here, verdict.summary()
    finally:
        term.close()


def test_a_crashed_host_resumes_with_its_bot_processes(tmp_path: Path) -> None:
    term = host(tmp_path, "--name", "Ann")
    try:
        term.wait(at_decision, "the first bid")
        os.kill(term.proc.pid, signal.SIGKILL)
        term.proc.wait(timeout=30)
    finally:
        term.close()
    pids = [
        json.loads((tmp_path / "home" / "bots" / str(k) / "process.json").read_text())["pid"]
        for k in (1, 2, 3)
    ]
    for pid in pids:
        os.kill(pid, 0)  # still there: a crash of the host does not take them down
    argv = cli_argv("resume", "--home", tmp_path / "home")
    again = Terminal(argv, environment(), tmp_path)
    try:
        text = again.wait(at_decision, "the game again, with every bot")
        assert "Resuming table " not in text  # the frame took the screen
        again.send("quit")
        again.wait(lambda t: last_line(t).startswith("Resign and leave"), "the question")
        again.send("yes")
        assert again.finish() == 0
    finally:
        again.close()
    verdict = verify_transcript(transcript_of(tmp_path))
    assert verdict.left_here and verdict.ok


def test_another_game_with_the_same_players_and_the_deal_passed_on(tmp_path: Path) -> None:
    # The person's own peer plays every turn (a deadline of half a second): the game is
    # over quickly, and the person answers the question of another game.
    term = host(tmp_path, "--target", "51", "--name", "Ann", "--person-deadline", "0.5")
    try:
        term.expect_raw(r"Play again, same players and seats, the deal passed on\? \[y/N\] ")
        term.send("y")
        term.expect_raw(r"A new game: (\w+) deals first\.")
        text = term.wait(at_decision, "the new game's first decision")
        assert "round 1 · dealer" in text
        term.send("quit")
        term.wait(lambda t: last_line(t).startswith("Resign and leave"), "the question")
        term.send("yes")
        assert term.finish() == 0
        final = term.plain()
        assert "Traceback" not in final
        assert final.count("wants another game.") == 4  # the host and its three bots
    finally:
        term.close()
    games = sorted((tmp_path / "home" / "games").glob("*.transcript"),
                   key=lambda p: p.stat().st_mtime)  # fmt: skip
    assert len(games) == 2
    first, second = (verify_transcript(g) for g in games)
    assert first.ok and first.finished and second.left_here
    a, b = first.definition, second.definition
    assert b.table_id != a.table_id
    assert b.rules == a.rules.with_(first_dealer=(a.rules.first_dealer + 1) % 4)
    assert [(s.name, s.key) for s in b.seats] == [(s.name, s.key) for s in a.seats]
    # The home's games, newest first, each with the number it keeps (the first game is 1);
    # replay takes a number.
    listing = run_at_terminal(tmp_path, "games", "--home", tmp_path / "home")
    rows = re.findall(r"^([12]) +\d{4}-\d\d-\d\d \d\d:\d\d +Ann & (\w+) v (\w+) & (\w+) +classic "
                      r"to 51 +(.+?) +(verified|not checked)", listing, re.MULTILINE)  # fmt: skip
    assert [r[0] for r in rows] == ["2", "1"], listing
    assert rows[0][4].startswith("abandoned by Ann") and rows[0][5] == "verified", listing
    assert re.search(r"won \d+-\d+", rows[1][4]) and rows[1][5] == "verified", listing
    replay = run_at_terminal(tmp_path, "replay", "1", "--home", tmp_path / "home")
    assert re.search(r"^  bids: \w+ (pass|take)", replay, re.MULTILINE), replay
    assert re.search(r"leads (10|[7-9JQKA])[♠♥♦♣]", replay) and "team 0" not in replay
    assert not re.search(r"\b(T|10)[SHDC]\b", replay), replay
    verified = run_at_terminal(tmp_path, "verify", "1", "--home", tmp_path / "home")
    fp = r"\[[0-9a-f-]+\]"
    line = rf"OK: team [01] \(\w+ {fp} and \w+ {fp}\) wins \d+-\d+ after \d+ rounds?"
    assert re.fullmatch(line, verified.strip()), verified


def test_play_against_three_bots_without_a_network(tmp_path: Path) -> None:
    argv = cli_argv("play", "--target", "101", "--seed", "3", "--name", "Ann", "--pace", "0",
                    "--home", tmp_path / "home")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        text = term.wait(at_decision, "the first bid")
        frame_fits(text)
        assert "You & North 0 · East & West 0 · to 101" in text
        term.send("say hello")
        term.expect(r"· You: hello")
        term.send("pass")
        term.wait(answered, "the bid taken")
        resign_with_ctrl_c(term)
    finally:
        term.close()


def test_a_lost_connection_names_the_player_inside_the_frame(tmp_path: Path) -> None:
    # --bots 3:random: the bot processes play the bot named there.
    term = host(tmp_path, "--name", "Ann", "--bots", "3:random")
    bot_home = tmp_path / "home" / "bots" / "2"
    try:
        term.wait(at_decision, "the first bid")
        info = json.loads((bot_home / "process.json").read_text())
        assert info["bot"] == "random" and "random" in info["command"]
        os.kill(info["pid"], signal.SIGKILL)
        text = term.wait(lambda t: "Bot2 lost the connection" in t, "the lost connection")
        inside(text, "Bot2 lost the connection")
        assert "seat 2" not in text and "seat 0:" not in text
        said = (tmp_path / "resumed.err").open("w")
        # The game may end before the resumed bot reaches every peer: it then gives up
        # after --connect-timeout, not after the default minute.
        again = subprocess.Popen(
            cli_argv("resume", "--bot", "random", "--quiet", "--connect-timeout", "10",
                     "--home", bot_home),
            env=environment(), stdout=subprocess.DEVNULL, stderr=said,
        )  # fmt: skip
        try:
            text = term.wait(lambda t: "Bot2 is back." in t, "the player back")
            inside(text, "Bot2 is back.")
            term.send("quit")
            term.wait(lambda t: last_line(t).startswith("Resign and leave"), "the question")
            term.send("yes")
            assert term.finish() == 0
            again.wait(timeout=90)  # it ends by itself: the game is over
        finally:
            if again.poll() is None:
                again.kill()
                again.wait()
            said.close()
        assert "Traceback" not in term.plain()
        # The resumed bot may end before the others reach it: in one line, never a traceback.
        assert "Traceback" not in (tmp_path / "resumed.err").read_text()
    finally:
        term.close()
    assert verify_transcript(transcript_of(tmp_path)).left_here


def at_terminal(tmp_path: Path, *argv: object) -> tuple[int, str]:
    """A command run at the pseudo-terminal: its exit status and its whole output."""
    term = Terminal([str(a) for a in argv], environment(), tmp_path)
    try:
        status = term.finish()
        return status, term.plain()
    finally:
        term.close()


def test_commands_speak_plainly_at_the_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    outputs = []
    status, out = at_terminal(tmp_path, *cli_argv("host", "--help"))
    assert status == 0 and "(7777" in out and "(default: 60" not in out and "(60)" in out
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        status, out = at_terminal(tmp_path, *cli_argv("host", "--port", port, "--bind",
                                                      "127.0.0.1", "--home", home))  # fmt: skip
    finally:
        taken.close()
    outputs.append(out)
    assert status == 1 and f"port {port} is in use (another table?); choose another" in out
    status, out = at_terminal(tmp_path, *cli_argv(
        "join", "no-such-host.invalid:7777", "--home", home, "--bot", "random"))  # fmt: skip
    outputs.append(out)
    assert status == 1 and "no such host name" in out
    status, out = at_terminal(tmp_path, *cli_argv(
        "arena", "--bots", "pimc:iterations=abc,random", "--boards", "2"))  # fmt: skip
    outputs.append(out)
    assert status == 2 and "option iterations='abc' is not a whole number" in out
    status, out = at_terminal(tmp_path, *cli_argv(
        "tables", "--listen", "0.05", "--beacon-address", "127.0.0.1:9"))  # fmt: skip
    outputs.append(out)
    assert status == 1 and "No open table heard on 127.0.0.1:9 in 0.05 s." in out
    # The test command says how many tests it collected.
    cards = Path(__file__).parent / "test_cards.py"
    status, out = at_terminal(tmp_path, sys.executable, "-m", "pytest", "--collect-only", "-q",
                              "-p", "no:randomly", cards)  # fmt: skip
    assert status == 0 and re.search(r"collected ([1-9]\d*) tests", out), out
    for out in outputs:
        assert "Traceback" not in out and "Errno" not in out and "gaierror" not in out, out


def test_the_coinche_bidding_at_80x24(tmp_path: Path) -> None:
    term = host(tmp_path, "--name", "Ann", "--variant", "coinche")
    try:
        text = term.wait(at_decision, "the first bid")
        frame_fits(text)
        may = next(line for line in text.split("\n") if "You may: " in line)
        assert "You may: pass" in may and may.rstrip().endswith("│"), text
        term.send("95 H")
        term.expect(r"Bids go by tens: 80, 90\.\.\. up to 160")
        term.send("quit")
        term.wait(lambda t: last_line(t).startswith("Resign and leave"), "the question")
        term.send("yes")
        assert term.finish() == 0
    finally:
        term.close()


def test_play_offers_another_game_with_the_deal_passed_on(tmp_path: Path) -> None:
    # The person's own stand-in plays every turn (half a second each): a short game.
    argv = cli_argv("play", "--target", "51", "--seed", "5", "--name", "Ann", "--pace", "0",
                    "--person-deadline", "0.5", "--home", tmp_path / "home")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    try:
        term.expect_raw(r"Play again, same players and seats, the deal passed on\? \[y/N\] ")
        assert re.search(r"Game over: (You|East & West) win", term.plain())
        term.send("y")
        term.expect_raw(r"A new game: Ann deals first\.")  # West dealt the first game
        text = term.wait(lambda t: "dealer You" in t, "the new game's first frame")
        assert "You & North 0 · East & West 0 · to 51" in text
        resign_with_ctrl_c(term)
    finally:
        term.close()


PLAYED_IN = {
    "fr": {
        "argv": ("--lang", "fr"),
        "locale": "C.UTF-8",
        "score": "Vous & Nord 0 · Est & Ouest 0 · en 301",
        "may": "Choix : passer",
        "turned": "Retourne : ",
        "first turn": "(premier tour)",
        "take": "prendre",
        "pass": "passer",
        "card word": "carte",
        "suits": "PCKT",
        "bidding": r"Ce sont les enchères : aucune carte ne se joue encore\. Possible : ",
        "help": ("aide", "Carte : son numéro (fixe pour la donne)"),
        "say": ("dire salut", "· Vous : salut"),
        "legal": "Jouables : ",
        "trick": r"Pli \d sur 8",
        "contract": r"Contrat : (Vous prenez|\w+ prend) à ",
        "round screen": "Entrée : la table",
        "tricks": ("plis", "Plis de la donne"),
        "round": (
            "Points des cartes",
            "dont dix de der",
            "Annonces",
            "Score de la donne",
            "Partie (en 301)",
            "Dernier pli : ",
        ),
        "verdict": r"Contrat (réussi|chuté) pour|Litige|Tout le monde a passé",
        "redeal": "Tout le monde a passé",
        "again": r"Rejouer, mêmes joueurs et mêmes places, la donne passée au suivant \? \[o/N\] ",
        "over": r"Partie terminée : (vous gagnez|victoire de Est & Ouest, )\d+-\d+\.",
        "sheet": "Feuille de marque",
        "english": ("Your card", "Your bid", "Legal", "Round score", "Game over", "Waiting for"),
    },
    "es": {
        "argv": (),
        "locale": "es_ES.UTF-8",
        "score": "Usted & Norte 0 · Este & Oeste 0 · a 301",
        "may": "Opciones: pasar",
        "turned": "Carta boca arriba: ",
        "first turn": "(primera vuelta)",
        "take": "tomar",
        "pass": "paso",
        "card word": "carta",
        "suits": "PCDT",
        "bidding": r"Esto es la subasta: aún no se juega ninguna carta\. Posible ahora: ",
        "help": ("ayuda", "Carta: su número (fijo toda la ronda)"),
        "say": ("decir hola", "· Usted: hola"),
        "legal": "Jugables: ",
        "trick": r"Baza \d de 8",
        "contract": r"Contrato: (Usted toma|\w+ toma) ",
        "round screen": "Intro: la mesa",
        "tricks": ("bazas", "Bazas de la ronda"),
        "round": (
            "Puntos de cartas",
            "diez de últimas",
            "Anuncios",
            "Puntos de la ronda",
            "Partida (a 301)",
            "Última baza: ",
        ),
        "verdict": r"Contrato (cumplido|fallado) por|Litigio|Todos pasaron",
        "redeal": "Todos pasaron",
        "again": r"¿Jugar otra vez, mismos jugadores y asientos, el reparto pasa al siguiente\? "
        r"\[s/N\] ",
        "over": r"Partida terminada: (usted gana|ganan Este & Oeste, )\d+-\d+\.",
        "sheet": "Hoja de puntos",
        "english": ("Your card", "Your bid", "Legal", "Round score", "Game over", "Waiting for"),
    },
}
"""A whole game at the terminal in French (``--lang fr``) and in Spanish (the locale says
so): what the person reads, and what they type in their own words."""


@pytest.mark.parametrize("lang", sorted(PLAYED_IN))
def test_a_person_plays_a_whole_game_in_french_or_spanish(lang: str, tmp_path: Path) -> None:
    words = PLAYED_IN[lang]
    argv = cli_argv("play", *words["argv"], "--target", "301", "--seed", "3", "--name", "Ann",
                    "--pace", "0", "--home", tmp_path / "home")  # fmt: skip
    env = dict(environment(), LANG=words["locale"])
    term = Terminal(argv, env, tmp_path)
    decision = DECISIONS[lang]
    again = re.compile(words["again"])
    try:
        bids = plays = rounds = 0
        took = False
        while True:
            text = term.wait(
                lambda t: (
                    at_decision(t, lang)
                    or words["round screen"] in t
                    or again.search(term.plain()) is not None
                ),
                "a decision, the round screen or the question of another game",
            )
            if again.search(term.plain()):
                break
            frame_fits(text)
            for english in words["english"]:
                assert english not in text, text
            if words["round screen"] in text:
                for label in () if words["redeal"] in text else words["round"]:
                    assert label in text, text
                assert re.search(words["verdict"], text), text
                if rounds == 0 and words["redeal"] not in text:
                    command, head = words["tricks"]
                    term.send(command)
                    shown = term.wait(
                        lambda t, head=head: head in t and words["round screen"] in t,
                        "the round's tricks",
                    )
                    assert len(re.findall(r"^│ [1-8]\. ", shown, re.MULTILINE)) == 8, shown
                rounds += words["redeal"] not in text
                term.send("")
                term.wait(lambda t: words["round screen"] not in t, "the table again")
                continue
            kind = decision.search(last_line(text))
            assert kind is not None and words["score"].split(" 0 ")[0] in text, text
            if kind.group(1) != words["card word"]:
                assert words["may"] in text, text
                if bids == 0:
                    assert words["score"] in text and words["turned"] in text, text
                    command, help_line = words["help"]
                    term.send(command)
                    term.expect(re.escape(help_line))
                    term.send("")
                    # A card in the reader's letters, refused in the reader's words.
                    hand = re.findall(r"(10|[7-9VDRA])([♠♥♦♣])", text.split("\n")[11])
                    rank, suit = hand[0]
                    term.send(rank + words["suits"]["♠♥♦♣".index(suit)])
                    term.expect(words["bidding"])
                    said, echoed = words["say"]
                    term.send(said)
                    term.expect(re.escape(echoed))
                bids += 1
                # The person takes the first card turned to them, then passes.
                take = not took and words["first turn"] in text
                took = took or take
                term.send(words["take"] if take else words["pass"])
                term.wait(answered, "the bid taken")
                continue
            assert re.search(words["trick"], text) and re.search(words["contract"], text), text
            legal = re.findall(CARDS_IN[lang], text.split(words["legal"])[-1].split("\n")[0])
            assert legal, text
            number, rank, suit = legal[plays % len(legal)]
            # Alternate the number and the card's name in the reader's letters.
            letter = words["suits"]["♠♥♦♣".index(suit)]
            term.send(number if plays % 2 else (rank + letter).lower())
            term.wait(answered, "the card taken")
            plays += 1
        final = term.plain()
        assert re.search(words["over"], final), final[-3000:]
        assert words["sheet"] in final and "Traceback" not in final
        # A round screen between two rounds was read (the last round's is the game's), the
        # person took once and played each round's cards.
        assert rounds >= 1 and took and plays >= 16, (rounds, took, plays)
        term.send("n")
        assert term.finish() == 0
    finally:
        term.close()
