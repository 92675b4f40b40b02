"""Which language a person reads, and the lookup of its words (:mod:`belote_p2p.i18n`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio

from belote_p2p import i18n
from belote_p2p.app import cli
from belote_p2p.i18n import _


@pytest.mark.parametrize(
    ("code", "language"),
    [
        ("fr_FR.UTF-8", "fr"),
        ("es_AR", "es"),
        ("es-ES", "es"),
        ("FR", "fr"),
        ("en_GB.UTF-8@euro", "en"),
        ("C.UTF-8", None),
        ("POSIX", None),
        ("de_DE.UTF-8", None),
        ("", None),
    ],
)
def test_a_locale_or_tag_names_a_catalog_language(code: str, language: str | None) -> None:
    assert i18n.normalize(code) == language


def test_the_first_locale_variable_that_is_set_decides() -> None:
    assert i18n.from_locale({"LC_ALL": "", "LC_MESSAGES": "es_ES.UTF-8", "LANG": "fr_FR"}) == "es"
    assert i18n.from_locale({"LANG": "fr_FR.UTF-8"}) == "fr"
    # LC_ALL set to a language without a catalog: English, not the LANG below it.
    assert i18n.from_locale({"LC_ALL": "de_DE", "LANG": "fr_FR"}) is None
    assert i18n.from_locale({}) is None


def test_accept_language_by_quality_then_order() -> None:
    assert i18n.from_accept_language("de-DE,es;q=0.8,fr;q=0.9") == "fr"
    assert i18n.from_accept_language("es-ES,es;q=0.9,en;q=0.8") == "es"
    assert i18n.from_accept_language("de,fr;q=0") is None
    assert i18n.from_accept_language("fr;q=bad,es;q=0.5") == "es"
    assert i18n.from_accept_language(None) is None


def test_lang_then_the_home_then_the_locale_then_english(tmp_path: Path) -> None:
    env = {"LANG": "es_ES.UTF-8"}
    assert i18n.choose(None, tmp_path, env) == "es"
    i18n.remember(tmp_path, "fr")
    assert (tmp_path / "lang").read_text() == "fr\n"
    assert i18n.choose(None, tmp_path, env) == "fr"
    assert i18n.choose("en", tmp_path, env) == "en"
    assert i18n.choose(None, tmp_path / "none", {}) == "en"
    with pytest.raises(i18n.UnknownLanguage):
        i18n.choose("de", tmp_path, env)


def test_the_command_line_remembers_lang_in_the_home(tmp_path: Path) -> None:
    assert cli.choose_language(["replay", "--home", str(tmp_path), "--lang", "es", "3"]) == "es"
    assert cli.choose_language(["replay", f"--home={tmp_path}", "3"]) == "es"
    assert cli.choose_language(["--lang=fr", "replay", "--home", str(tmp_path)]) == "fr"
    # A --lang that names no catalog's language is left for the parser to refuse.
    assert cli.choose_language(["--lang", "xx", "--home", str(tmp_path)]) == "fr"
    assert cli._command_of(["--lang", "fr", "play"]) == "play"


def test_words_follow_the_language_in_use_and_a_block_may_use_another() -> None:
    with i18n.using("fr"):
        assert _("interrupted") == "interrompu"
        with i18n.using("es"):
            assert _("interrupted") == "interrumpido"
        assert i18n.current() == "fr"
    assert i18n.current() == "en"
    assert _("interrupted") == "interrupted"


async def test_concurrent_tasks_each_keep_their_language() -> None:
    seen: dict[str, str] = {}

    async def reader(language: str) -> None:
        with i18n.using(language):
            await trio.sleep(0)
            seen[language] = _("interrupted")

    async with trio.open_nursery() as nursery:
        for language in ("fr", "es", "en"):
            nursery.start_soon(reader, language)
    assert seen == {"fr": "interrompu", "es": "interrumpido", "en": "interrupted"}


def test_plural_forms_are_the_languages_own() -> None:
    """French puts 0 and 1 in the singular, English and Spanish only 1."""
    message = ("expected %s argument", "expected %s arguments")
    with i18n.using("fr"):
        assert [i18n.ngettext(*message, n) for n in (0, 1, 2)] == [
            "%s argument attendu",
            "%s argument attendu",
            "%s arguments attendus",
        ]
    with i18n.using("es"):
        assert i18n.ngettext(*message, 0) == "se esperaban %s argumentos"
    assert i18n.ngettext(*message, 0) == "expected %s arguments"


def test_the_browser_catalog_holds_messages_plurals_and_the_rule() -> None:
    found = i18n.browser_catalog("fr")
    assert found["lang"] == "fr"
    messages = found["messages"]
    assert isinstance(messages, dict) and messages["interrupted"] == "interrompu"
    plurals = found["plurals"]
    assert isinstance(plurals, dict)
    assert plurals["expected %s argument"] == ["%s argument attendu", "%s arguments attendus"]
    assert found["plural_forms"] == "nplurals=2; plural=(n > 1);"
    assert i18n.browser_catalog("en")["messages"] == {}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "belote_p2p", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_help_and_argument_errors_in_the_locales_language(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "LANG": "fr_FR.UTF-8"}
    shown = _run(["--help"], env)
    assert shown.returncode == 0
    assert shown.stdout.startswith("utilisation : belote-p2p")
    assert "affiche cette aide et quitte" in shown.stdout
    refused = _run(["--lang", "es", "tables", "--bogus"], env)
    assert refused.returncode == 2
    assert "argumentos no reconocidos: --bogus" in refused.stderr
    # --lang es was remembered in the home: the next command, with no --lang, is in Spanish.
    assert "muestra esta ayuda y sale" in _run(["--help"], env).stdout


def test_dates_numbers_and_ordinals_as_each_language_writes_them() -> None:
    from datetime import datetime

    moment = datetime(2026, 12, 3, 14, 5)
    shown = {}
    for language in i18n.LANGUAGES:
        with i18n.using(language):
            shown[language] = (
                i18n.format_date(moment),
                i18n.format_date(moment.date()),
                i18n.format_number(1234.5, 1, sign=True),
                i18n.format_number(0.05, 3, trailing_zeros=False),
                i18n.format_percent(0.4234),
                [i18n.format_ordinal(n) for n in (1, 2, 11, 21)],
            )
    # English keeps the ISO date (no country's), French and Spanish CLDR's short forms.
    assert shown["en"] == (
        "2026-12-03 14:05", "2026-12-03", "+1,234.5", "0.05", "42%",
        ["1st", "2nd", "11th", "21st"],
    )  # fmt: skip
    assert shown["fr"] == (
        "03/12/2026 14:05", "03/12/2026", "+1\u202f234,5", "0,05", "42\u00a0%",
        ["1er", "2e", "11e", "21e"],
    )  # fmt: skip
    assert shown["es"][0] == "3/12/26, 14:05" and shown["es"][2] == "+1.234,5"
    assert shown["es"][4] == "42\u00a0%" and shown["es"][5][1] == "2.º"
