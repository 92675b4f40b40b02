"""The catalogs' upkeep, with Babel: find every message of the code, bring each language's
``.po`` up to date, check and compile them.

    python -m belote_p2p.i18n.catalogs update    # new messages into every .po (untranslated)
    python -m belote_p2p.i18n.catalogs check     # what is missing or broken; exit 1 if any
    python -m belote_p2p.i18n.catalogs compile   # every .po to its .mo (the build does it)
    python -m belote_p2p.i18n.catalogs todo      # the untranslated messages, as JSON
    python -m belote_p2p.i18n.catalogs fill F    # translations from a JSON file into the .po
    python -m belote_p2p.i18n.catalogs merge BASE OURS THEIRS   # git's merge driver for .po

``todo`` writes a JSON list of the messages some language lacks (``{"msgid": ...,
"plural": ..., "context": ..., "where": [...]}``); ``fill`` takes the same list back with
each language's translation added (``"fr": "...", "es": "..."``; a list of forms for a
plural message), so that many translations go in at once without editing ``.po`` syntax.

Messages are found in the package's Python modules (``_``, ``N_``, ``ngettext``,
``pgettext``, ``npgettext``), in the browser's scripts (``_``, ``ngettext`` and ``pgettext``
of ``static/*.js``) and in its page (the text and spoken attributes of ``static/*.html``,
as :mod:`belote_p2p.app.web.page` translates them). A ``.po`` is written sorted by message,
with the files each message comes from and no line numbers, so that two changes to different
parts of the code rarely touch the same lines of a catalog.

:func:`check` is what ``tests/test_catalogs.py`` asserts empty: every message of the code has
a translation in every language (not fuzzy: a guess of Babel's is not a translation), with the
same placeholders (``{name}``), every plural form filled, and every catalog compiles.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

from . import DEFAULT, LANGUAGES, catalog_path
from .mo import DOMAIN, compile_po

PACKAGE = Path(__file__).resolve().parent.parent
METHODS = [
    ("i18n/catalogs.py", "ignore"),
    ("**.py", "python"),
    ("app/web/static/**.js", "javascript"),
    # the page's own words, as the server translates them (belote_p2p/app/web/page.py)
    ("app/web/static/**.html", "belote_p2p.app.web.page:extract"),
]
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None}
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}|%(\(\w+\))?[srd]")
"""A ``str.format`` field (``{name}``, ``{n:,}``; ``{{`` and ``}}`` are literal braces), or
a ``%`` one (``%(prog)s``, ``%s``: argparse's own words only)."""
PERCENT_ALLOWED = ("belote_p2p/i18n/argparse_words.py",)
"""Where a message may hold ``%`` placeholders: argparse's words, as argparse writes them."""
COMMENT_TAGS = ("TRANSLATORS:",)
"""A comment just before a message that starts so goes into the catalog for translators."""


def template() -> Catalog:
    """Every message of the code, as Babel extracts it."""
    found = Catalog(domain=DOMAIN, project="belote-p2p", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
        PACKAGE,
        method_map=METHODS,
        keywords=KEYWORDS,
        comment_tags=COMMENT_TAGS,
        strip_comment_tags=True,
    ):
        path = f"belote_p2p/{filename}"
        found.add(message, locations=[(path, lineno)], auto_comments=comments, context=context)
    return found


def load(language: str) -> Catalog:
    return load_file(language, catalog_path(language).read_bytes())


def load_file(language: str, po: bytes) -> Catalog:
    return read_po(io.BytesIO(po), locale=language, domain=DOMAIN, abort_invalid=True)


def write(language: str, found: Catalog, path: Path | None = None) -> None:
    """``found`` written as every catalog is (to the language's ``.po``, or ``path``)."""
    out = io.BytesIO()
    write_po(
        out,
        found,
        width=100,
        sort_output=True,
        include_lineno=False,
        ignore_obsolete=True,
        include_previous=False,
    )
    path = path or catalog_path(language)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())


PLURAL_FORMS = {"fr": "nplurals=2; plural=(n > 1);", "es": "nplurals=2; plural=(n != 1);"}
"""The plural rule of a catalog where the usual one differs from the CLDR's (which adds a
form for millions in French and Spanish that no translator of a game needs); any other
language takes the CLDR's."""
HEADER = """\
{name} messages of belote-p2p, kept with `python -m belote_p2p.i18n.catalogs update`.
This file is distributed under the same license as the belote-p2p project."""


def translated_languages() -> tuple[str, ...]:
    return tuple(language for language in LANGUAGES if language != DEFAULT)


def update(languages: Iterable[str] | None = None) -> None:
    """Bring each catalog up to date with the code: new messages in (untranslated), the
    messages the code no longer has out. A new language's catalog is made empty."""
    pot = template()
    for language in languages or translated_languages():
        path = catalog_path(language)
        if path.is_file():
            found = load(language)
        else:
            found = Catalog(locale=language, domain=DOMAIN, project="belote-p2p", fuzzy=False)
            found.header_comment = "# " + HEADER.format(
                name=found.locale.english_name if found.locale else language
            ).replace("\n", "\n# ")
        if language in PLURAL_FORMS:
            found.mime_headers = [*found.mime_headers, ("Plural-Forms", PLURAL_FORMS[language])]
        # No fuzzy matching: a near message's translation is a guess, not a translation. The
        # catalog's dates stay as they were, so that an update changes only its messages.
        found.update(
            pot, no_fuzzy_matching=True, update_header_comment=False, update_creation_date=False
        )
        write(language, found)


def fields(text: str) -> list[str]:
    """The placeholders of a message, each once, sorted (``{name}`` and ``{n:,}`` give name
    and n): a translation may say a name once where the English says it twice."""
    bare = text.replace("{{", "").replace("}}", "").replace("%%", "")
    found = {m.group(0) if m.group(0)[0] == "%" else m.group(1) for m in PLACEHOLDER.finditer(bare)}
    return sorted(found)


def ids_of(message: Message) -> list[str]:
    """A message's ``msgid`` (and its plural)."""
    return [message.id] if isinstance(message.id, str) else list(message.id)


def strings_of(message: Message | None) -> list[str]:
    """A message's translation (each plural form), empty where there is none."""
    if message is None or message.string is None:
        return []
    return [message.string] if isinstance(message.string, str) else list(message.string)


def _message_problems(language: str, message: Message) -> list[str]:
    ids = ids_of(message)
    where = f"{language}: {ids[0]!r}" + (
        f" (context {message.context!r})" if message.context else ""
    )
    strings = strings_of(message)
    if message.fuzzy:
        return [f"{where}: fuzzy (a guess, not a translation)"]
    if not all(strings) or not strings:
        return [f"{where}: not translated"]
    problems = []
    wanted = fields(ids[-1])
    for text in strings:
        got = fields(text)
        # A singular form may leave out the count (French "un pli" for n = 1).
        if got != wanted and not (len(ids) > 1 and set(got) <= set(wanted)):
            problems.append(f"{where}: placeholders {got} in {text!r}, wanted {wanted}")
    return problems


def check(languages: Sequence[str] | None = None) -> list[str]:
    """Every problem of the catalogs (empty: all is well)."""
    pot = template()
    problems = []
    for message in pot:
        if not message.id:
            continue
        ids = ids_of(message)
        names = [name for i in ids for name in fields(i)]
        where = ", ".join(sorted({path for path, _line in message.locations}))
        if any(name.startswith("%") for name in names):
            if not all(path in PERCENT_ALLOWED for path, _line in message.locations):
                problems.append(f"code: {ids[0]!r} ({where}): a %-placeholder (use {{name}})")
        elif any(not re.fullmatch(r"[A-Za-z_]\w*", name) for name in names):
            problems.append(f"code: {ids[0]!r} ({where}): a placeholder without a name ({{}})")
    for language in languages or translated_languages():
        path = catalog_path(language)
        if not path.is_file():
            problems.append(f"{language}: no catalog at {path}")
            continue
        try:
            compile_po(path.read_bytes(), language)
            found = load(language)
        except Exception as exc:  # what Babel raises on a broken catalog varies
            problems.append(f"{language}: does not compile ({exc})")
            continue
        for message in pot:
            if not message.id:
                continue
            translated = found.get(message.id, context=message.context)
            if translated is None:
                problems.append(f"{language}: {ids_of(message)[0]!r} is missing (run `update`)")
                continue
            problems += _message_problems(language, translated)
    return problems


def compile_all(destination: Path | None = None) -> list[Path]:
    """Every ``.po`` compiled to its ``.mo``, beside it or under ``destination`` (the build's
    copy of the package); the ``.mo`` files made."""
    made = []
    for language in translated_languages():
        source = catalog_path(language)
        if not source.is_file():
            continue
        relative = source.relative_to(PACKAGE).with_suffix(".mo")
        target = (destination or PACKAGE) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(compile_po(source.read_bytes(), language))
        made.append(target)
    return made


def todo() -> list[dict[str, object]]:
    """The messages of the code that some catalog lacks or has untranslated (or fuzzy)."""
    pot = template()
    catalogs = {language: load(language) for language in translated_languages()}
    out: list[dict[str, object]] = []
    for message in pot:
        if not message.id:
            continue
        missing = []
        for language, found in catalogs.items():
            have = found.get(message.id, context=message.context)
            strings = strings_of(have)
            if have is None or have.fuzzy or not strings or not all(strings):
                missing.append(language)
        if missing:
            ids = ids_of(message)
            entry: dict[str, object] = {"msgid": ids[0]}
            if len(ids) > 1:
                entry["plural"] = ids[1]
            if message.context:
                entry["context"] = message.context
            entry["where"] = sorted({path for path, _line in message.locations})
            entry["missing"] = missing
            out.append(entry)
    return out


def fill(entries: Sequence[dict[str, object]]) -> int:
    """Put the translations of ``entries`` (as :func:`todo` lists them, with ``"fr"``,
    ``"es"``... added) into the catalogs; the number of translations put in."""
    update()
    count = 0
    for language in translated_languages():
        found = load(language)
        for entry in entries:
            text = entry.get(language)
            if text is None:
                continue
            msgid = str(entry["msgid"])
            context = str(entry["context"]) if entry.get("context") else None
            key: str | tuple[str, str] = msgid
            if "plural" in entry:
                key = (msgid, str(entry["plural"]))
            message = found.get(key if isinstance(key, str) else key[0], context=context)
            if message is None:
                raise KeyError(f"{language}: {msgid!r} is not a message of the code")
            if isinstance(key, tuple):
                forms = list(text) if isinstance(text, list | tuple) else [str(text)]
                message.string = tuple(str(f) for f in forms)
            else:
                message.string = str(text)
            message.flags.discard("fuzzy")
            count += 1
        write(language, found)
    return count


def merge(base: Path, ours: Path, theirs: Path) -> None:
    """Two branches' versions of one catalog merged into ``ours`` (git's merge driver:
    ``.gitattributes`` names it, ``git config merge.catalogs.driver 'python -m
    belote_p2p.i18n.catalogs merge %O %A %B'`` sets it up): every message of either, and of
    two different translations of one message the one that changed since ``base``. Run
    ``update`` after the merge to drop the messages the merged code no longer has."""
    language = checked_language(ours)
    mine, other = load_file(language, ours.read_bytes()), load_file(language, theirs.read_bytes())
    try:
        old = load_file(language, base.read_bytes())
    except Exception:  # no common version (a catalog both branches made)
        old = Catalog(locale=language, domain=DOMAIN)
    for message in other:
        if not message.id:
            continue
        have = mine.get(message.id, context=message.context)
        was = old.get(message.id, context=message.context)
        theirs_ok = bool(strings_of(message)) and all(strings_of(message)) and not message.fuzzy
        if have is None:
            mine[message.id] = message
        elif theirs_ok and (
            not all(strings_of(have))
            or not strings_of(have)
            or have.fuzzy
            or (strings_of(was) == strings_of(have) and strings_of(message) != strings_of(have))
        ):
            have.string = message.string
            have.flags.discard("fuzzy")
    write(language, mine, ours)


def checked_language(po: Path) -> str:
    """The language a ``.po`` file says it is in (its ``Language`` header)."""
    match = re.search(rb'^"Language: ([\w-]+)\\n"$', po.read_bytes(), re.MULTILINE)
    if not match:
        raise ValueError(f"{po}: no Language header")
    return match.group(1).decode()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m belote_p2p.i18n.catalogs")
    parser.add_argument("job", choices=("update", "check", "compile", "todo", "fill", "merge"))
    parser.add_argument("file", nargs="*", help="fill: the JSON file; merge: BASE OURS THEIRS")
    parser.add_argument("--lang", action="append", choices=translated_languages())
    args = parser.parse_args(argv)
    if args.job == "todo":
        print(json.dumps(todo(), ensure_ascii=False, indent=1))
        return 0
    if args.job == "merge":
        if len(args.file) != 3:
            parser.error("merge takes BASE OURS THEIRS")
        merge(*(Path(f) for f in args.file))
        return 0
    if args.job == "fill":
        if len(args.file) != 1:
            parser.error("fill takes the JSON file of translations")
        entries = json.loads(Path(args.file[0]).read_text(encoding="utf-8"))
        print(f"{fill(entries)} translation(s) put in", file=sys.stderr)
        return 0
    if args.job == "update":
        update(args.lang)
        return 0
    if args.job == "compile":
        for path in compile_all():
            print(path)
        return 0
    problems = check(args.lang)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
