"""The catalogs: every message of the code translated in every language, with its
placeholders, and every catalog compiles (:func:`belote_p2p.i18n.catalogs.check`); and the
check itself fails where it must."""

from __future__ import annotations

import gettext
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import write_po

from belote_p2p import i18n
from belote_p2p.i18n import catalogs


def test_every_message_of_the_code_is_translated_with_its_placeholders() -> None:
    problems = catalogs.check()
    assert problems == [], "\n".join(problems[:40])


def test_the_catalogs_hold_no_message_the_code_lost() -> None:
    """A catalog is the code's messages and nothing more (``update`` drops the others)."""
    wanted = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in catalogs.template()}
    for language in catalogs.translated_languages():
        have = {
            (m.id if isinstance(m.id, str) else m.id[0], m.context)
            for m in catalogs.load(language)
            if m.id
        }
        assert have - wanted == set(), language


def _broken_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str) -> list[str]:
    """The check's problems with one French translation changed as ``edit`` says."""
    source = catalogs.load("fr")
    message = next(m for m in source if m.id and isinstance(m.id, str) and "{" in m.id)
    if edit == "drop a placeholder":
        message.string = "rien"
    elif edit == "add a placeholder":
        message.string = message.string + " {extra}"
    elif edit == "untranslate":
        message.string = ""
    elif edit == "fuzzy":
        message.flags.add("fuzzy")
    with (tmp_path / "fr" / "LC_MESSAGES").joinpath(f"{i18n.DOMAIN}.po").open("wb") as out:
        write_po(out, source)
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    return catalogs.check(["fr"])


@pytest.mark.parametrize(
    "edit", ["drop a placeholder", "add a placeholder", "untranslate", "fuzzy"]
)
def test_the_check_finds_a_broken_translation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    (tmp_path / "fr" / "LC_MESSAGES").mkdir(parents=True)
    problems = _broken_copy(tmp_path, monkeypatch, edit)
    assert len(problems) == 1, problems
    assert problems[0].startswith("fr: ")


def test_the_check_finds_a_catalog_that_does_not_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    text = i18n.catalog_path("fr").read_text(encoding="utf-8")
    (folder / f"{i18n.DOMAIN}.po").write_text(text + '\nmsgid "unterminated\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    problems = catalogs.check(["fr"])
    assert any("does not compile" in p for p in problems), problems


def test_the_check_finds_a_message_of_the_code_without_a_catalog_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pot = catalogs.template()
    pot.add("a message nobody translated yet", locations=[("belote_p2p/app/cli.py", 1)])
    monkeypatch.setattr(catalogs, "template", lambda: pot)
    problems = catalogs.check(["es"])
    assert problems == ["es: 'a message nobody translated yet' is missing (run `update`)"]


def test_the_catalogs_are_written_as_update_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorted by message, no line numbers: what ``update`` writes, so that running it again
    changes nothing and two branches rarely touch the same lines."""
    for language in catalogs.translated_languages():
        committed = i18n.catalog_path(language).read_bytes()
        monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
        catalogs.write(language, catalogs.load_file(language, committed))
        monkeypatch.undo()
        assert (tmp_path / language / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").read_bytes() == committed


def test_the_build_compiles_the_catalogs_with_the_compiler_alone(tmp_path: Path) -> None:
    """setup.py loads ``i18n/mo.py`` by itself (the build's environment has Babel, not the
    package): that file must import nothing of the package, and compile what ``.mo``
    readers read."""
    source = Path(i18n.__file__).with_name("mo.py")
    po = catalogs.catalog_path("fr")
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('alone', {str(source)!r})\n"
        "mo = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mo)\n"
        "assert not [m for m in sys.modules if m.startswith('belote_p2p')], sys.modules\n"
        f"out = mo.compile_po(open({str(po)!r}, 'rb').read(), 'fr')\n"
        f"open({str(tmp_path / 'fr.mo')!r}, 'wb').write(out)\n"
    )
    subprocess.run([sys.executable, "-I", "-c", script], check=True, cwd=tmp_path)
    with (tmp_path / "fr.mo").open("rb") as f:
        french = gettext.GNUTranslations(f)
    assert french.gettext("none yet") == "pas encore"
