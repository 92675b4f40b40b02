"""The commands in the reader's language: ``replay``, ``games``, ``profile`` and ``ranking``
in French and Spanish (cards with the language's letters, dates and numbers as it writes
them), every command's ``--help`` translated with its defaults still shown, the tournament's
report in French; and what programs read stays English whatever the language (``verify``'s
verdict line, the ``--json`` output)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import played_game

from belote_p2p import i18n
from belote_p2p.app import cli
from belote_p2p.i18n import argparse_words
from belote_p2p.players.tournament import run_tournament, tournament_html

SUITS = "♠♥♦♣"
FRENCH_CARD = re.compile(rf"(?<![\w])(10|[7-9VDRA])[{SUITS}]")
ENGLISH_FACE = re.compile(rf"(?<![\w])[JQK][{SUITS}]")


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    """``cli.main`` sets the process's language: the next test reads English again."""
    yield
    i18n.set_language(i18n.DEFAULT)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding one game (numbered 1 by ``games``), imported into its profile."""
    home = tmp_path_factory.mktemp("home")
    played_game(home, 3)
    assert cli.main(["import", "1", "--home", str(home), "--lang", "en"]) == 0
    return home


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "belote_p2p", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def test_replay_in_french_writes_the_cards_with_french_letters(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["replay", "1", "--home", str(recorded), "--lang", "fr"]) == 0
    out = capsys.readouterr().out
    first, *_rest, last = out.splitlines()
    assert re.fullmatch(r"Table [0-9a-f]+ : classique en 151", first), first
    assert re.fullmatch(r"OK : l'équipe p[0-3] & p[0-3] gagne \d+-\d+ en \d+ donnes?", last), last
    assert len(FRENCH_CARD.findall(out)) >= 32  # a round's tricks at least
    assert re.search(r"^Donne 1, donneur p\d", out, re.M) and re.search(
        r"^  pli 8 : p\d", out, re.M
    )
    assert ENGLISH_FACE.search(out) is None, out
    # Only the person's words changed: verify's verdict line is the one programs read.
    assert cli.main(["verify", "1", "--home", str(recorded), "--lang", "fr"]) == 0
    assert re.match(r"OK: team [01] \(p\d", capsys.readouterr().out)


def test_replay_follows_a_spanish_locale(recorded: Path) -> None:
    transcript = next((recorded / "games").glob("*.transcript"))
    # A home without a remembered language: the locale decides.
    env = {"LANG": "es_ES.UTF-8", "XDG_DATA_HOME": str(recorded.parent / "nobody")}
    shown = _run(["replay", str(transcript)], env)
    assert shown.returncode == 0, shown.stderr
    first, *_rest, last = shown.stdout.splitlines()
    assert re.fullmatch(r"Mesa [0-9a-f]+: clásica a 151", first), first
    assert re.fullmatch(r"OK: la pareja p[0-3] & p[0-3] gana \d+-\d+ en \d+ rondas?", last), last
    assert len(FRENCH_CARD.findall(shown.stdout)) >= 32
    assert re.search(r"^Ronda 1, ", shown.stdout, re.M) and "\nHoja de puntos\n" in shown.stdout
    assert ENGLISH_FACE.search(shown.stdout) is None


def test_games_profile_and_ranking_in_french_and_spanish(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(recorded)
    assert cli.main(["games", "--home", home, "--lang", "fr"]) == 0
    out = capsys.readouterr().out
    head, game, *_ = out.splitlines()
    assert head.split()[:3] == ["#", "date", "joueurs"]
    # A French date (day/month/year, 24 hours), the teams against each other, the result.
    assert re.match(
        r"1\s+\d\d/\d\d/\d{4} \d\d:\d\d\s+p0 & p2 contre p1 & p3\s+classique en 151\s+"
        r"victoire de p[0-3] & p[0-3] \d+-\d+\s+vérifié$",
        game,
    ), game
    assert cli.main(["profile", "p0", "--home", home, "--lang", "es"]) == 0
    profile = capsys.readouterr().out
    assert profile.startswith("p0 [")
    assert re.search(r"^  nivel \d+: \d+ XP \(nivel \d+ con \d+ XP\)$", profile, re.M), profile
    assert re.search(r"^  partidas 1, ganadas [01] \((0|100)\xa0%\)$", profile, re.M), profile
    assert "retos:" in profile and "[pendiente] Ganar tres partidas seguidas" in profile
    assert cli.main(["ranking", "--home", home, "--lang", "fr"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["rang", "nom", "empreinte"]
    assert re.search(r"\s(0|100)\xa0%$", table[1]), table[1]
    assert table[-1].startswith("(Pas d'identité dans ")


def test_json_stays_english_in_every_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A --lang given is remembered in the default home: this test's own, not the suite's.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert cli.main(["bots", "--json", "--lang", "es"]) == 0
    names = {bot["name"] for bot in json.loads(capsys.readouterr().out)}
    assert {"random", "rules"} <= names
    assert cli.main(["bots", "--lang", "es"]) == 0
    assert capsys.readouterr().out.split()[:3] == ["NOMBRE", "VERSIÓN", "PAQUETE"]


def _helps(language: str) -> dict[str, dict[str, str]]:
    """Each command's option and argument help texts as its ``--help`` shows them, in
    ``language``, by command and option (its first option string, or its name)."""
    argparse_words.install()
    with i18n.using(language):
        parser = cli.build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        shown: dict[str, dict[str, str]] = {}
        for name, command in sub.choices.items():
            formatter = command._get_formatter()
            shown[name] = {
                (action.option_strings or [action.dest])[0]: formatter._expand_help(action)
                for action in command._actions
                if action.help not in (None, argparse.SUPPRESS)
            }
            shown[name]["(description)"] = command.description or ""
            command.format_help()  # the whole page is made without an error
    return shown


@pytest.mark.parametrize("language", ["fr", "es"])
def test_every_commands_help_is_translated_and_shows_its_defaults(language: str) -> None:
    english, translated = _helps("en"), _helps(language)
    assert english.keys() == translated.keys()
    for command, helps in english.items():
        for option, text in helps.items():
            there = translated[command][option]
            assert there != text, (language, command, option, text)
            # The default the English help shows, the translated one shows too, once.
            for default in re.findall(r"\(([^()]*)\)$", text):
                if default.replace(".", "").isdigit():
                    assert there.count(f"({default}") >= 1, (language, command, option, there)
            assert re.search(r"\(([^()]+)\)\s+\(\1\)", there) is None, there


def test_play_help_follows_a_french_locale(tmp_path: Path) -> None:
    shown = _run(["play", "--help"], {"LANG": "fr_FR.UTF-8", "XDG_DATA_HOME": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert text.startswith("utilisation : belote-p2p play [-h]")
    assert "Jouez une partie entière à ce terminal contre des bots" in text
    assert "--target POINTS score à atteindre pour gagner la partie (501)" in text
    assert "--plain lignes simples, sans couleur (lecteurs d'écran, journaux) (non)" in text


def test_an_option_value_refused_in_spanish(tmp_path: Path) -> None:
    shown = _run(
        ["host", "--port", "99999"], {"LANG": "es_ES.UTF-8", "XDG_DATA_HOME": str(tmp_path)}
    )
    assert shown.returncode == 2
    assert "argumento --port: un puerto va de 0 a 65535 (0: cualquier puerto libre), no 99999" in (
        shown.stderr
    )


def test_the_tournament_report_in_french() -> None:
    summary = run_tournament(["random", "rules"], boards=3, seed=1).summary(resamples=20)
    with i18n.using("fr"):
        page = tournament_html(summary, "classique")
    assert page.startswith('<!DOCTYPE html>\n<html lang="fr">')
    assert "<title>Tournoi : 2 bots, classique, 3 donnes</title>" in page
    assert "<h2>Classement</h2>" in page and "points par donne" in page
    # Numbers as French writes them: a decimal comma, a space before the percent sign.
    assert re.search(r"<td>[+-]\d+,\d</td>", page), page
    assert re.search(r"<td>\d+\u00a0%</td>", page), page
    english = tournament_html(summary)
    assert '<html lang="en">' in english and re.search(r"<td>[+-]\d+\.\d</td>", english)


def test_an_arena_board_shown_in_french(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # where --lang fr is remembered
    argv = ["arena", "--bots", "rules,random", "--show", "0", "--lang", "fr"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("Donne 0 : rules contre random, classique, graine 0 : ")
    hands = [line for line in out.splitlines() if re.match(r"  (rules|random) \d\s*:", line)]
    assert (
        len(hands) % 4 == 0
        and len(hands) > 0
        and all(re.match(r"  \w+ \d : ", line) for line in hands)
    ), hands
    assert all(FRENCH_CARD.search(line) for line in hands)
    assert not any(ENGLISH_FACE.search(line) for line in hands)
