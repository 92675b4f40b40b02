"""The words people read, in their language: English, French or Spanish, through gettext.

Every text meant for a person (the terminal table, the browser pages, ``--help``, prompts,
errors shown to players, ``replay``, ``profile``...) is written in English in the code and
looked up here, in the catalog of the language in use::

    from belote_p2p.i18n import _, ngettext

    print(_("{name} takes").format(name=name))
    print(ngettext("{n} trick", "{n} tricks", n).format(n=n))

Conventions (``tests/test_catalogs.py`` checks them on every catalog):

- **Named placeholders only** (``{name}``, never ``{}`` nor ``%s``), and a translation holds
  exactly the placeholders of its message, so that a translator may reorder them.
- **A word that means two things** takes a context: ``pgettext("bid", "pass")``.
- **A text defined before a language is chosen** (a module constant, a table of words) is
  marked with :func:`N_` where it is written and looked up with ``_()`` where it is shown.
- **What programs read stays English**: the protocol, transcripts, JSON output, the
  ``RESULT`` line and the peer's log never go through this module, so that a French and a
  Spanish player at one table sign and record the same bytes.

Which language (:func:`choose`): ``--lang`` on the command line, else the one last chosen
from the home (``<home>/lang``: ``--lang`` and the browser's switch remember it, as
``--name`` is remembered), else the locale (the first of ``LC_ALL``, ``LC_MESSAGES``,
``LANG`` that is set), else English. A browser page follows its own switch, else its
``Accept-Language`` (:func:`from_accept_language`).

Dates and numbers are written as the reader's language writes them, by one helper each for
every printer (Babel, with the language in use): :func:`format_date` (``03/12/2026 14:05``,
``3/12/26, 14:05``; ISO in English), :func:`format_number` (``+1 234,5``) and
:func:`format_percent` (``42 %``), :func:`format_ordinal` (``2e``, ``2.º``). A value a
person types back (a seed, a port, an option's default in ``--help``) stays as it is typed.

The language is the process's (:func:`set_language`), and a block of code may use another
(:func:`using`: a page rendered for its own reader); it is held in a context variable, so
that concurrent tasks each keep their own.

The catalogs are ``belote_p2p/locale/<lang>/LC_MESSAGES/belote_p2p.po``; the package's build
compiles each into its ``.mo`` (``setup.py``), and a source checkout without them compiles the
``.po`` in memory at first use (with Babel). English is the code's own words: it loads
nothing. Adding a language is adding one ``.po`` file and its code to :data:`LANGUAGES`
(``docs/translating.md``).
"""

from __future__ import annotations

import contextlib
import gettext as _gettext
import io
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import date, datetime, timedelta
from functools import cache
from pathlib import Path

from belote_p2p.errors import BeloteError

from .mo import DOMAIN, compile_po

LANGUAGES = ("en", "fr", "es")
"""The languages of the catalogs, English (the code's own words) first."""
LANGUAGE_NAMES = {"en": "English", "fr": "Français", "es": "Español"}
"""Each language in its own words (the browser's switch, ``--help``)."""
DEFAULT = "en"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The environment variables that name the locale, in the order POSIX reads them."""
LANG_FILE_NAME = "lang"
"""The file of a home that remembers the language last chosen (``<home>/lang``)."""

_process_language = DEFAULT
_language: ContextVar[str | None] = ContextVar("belote_p2p_language", default=None)


class UnknownLanguage(BeloteError, ValueError):
    """A language code none of the catalogs is for."""

    def __init__(self, code: str) -> None:
        super().__init__(f"unknown language {code!r}: one of {', '.join(LANGUAGES)}")
        self.code = code


# -- which language ------------------------------------------------------------------------


def normalize(code: str | None) -> str | None:
    """The catalog language a locale or language tag names (``fr_FR.UTF-8``, ``es-AR``,
    ``FR``), or ``None`` (``C``, ``POSIX``, a language without a catalog)."""
    if not code:
        return None
    base = code.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return base if base in LANGUAGES else None


def from_locale(environ: Mapping[str, str] | None = None) -> str | None:
    """The language of the locale: the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that
    is set decides (as POSIX says), ``None`` when it names no catalog's language."""
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return normalize(value)
    return None


def from_accept_language(header: str | None) -> str | None:
    """The catalog language a browser prefers most (``Accept-Language: es-ES,es;q=0.9,
    en;q=0.8``), or ``None``."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        tag, _sep, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _eq, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        language = normalize(tag)
        if language and quality > 0:
            ranked.append((-quality, index, language))
    return min(ranked)[2] if ranked else None


def remembered(home: Path | None) -> str | None:
    """The language last chosen from ``home`` (``<home>/lang``), if any."""
    if home is None:
        return None
    try:
        return normalize((home / LANG_FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def remember(home: Path, language: str) -> None:
    """Keep ``language`` as the home's choice (what ``--lang`` and the browser's switch do)."""
    with contextlib.suppress(OSError):
        home.mkdir(parents=True, exist_ok=True)
        (home / LANG_FILE_NAME).write_text(f"{checked(language)}\n", encoding="utf-8")


def choose(
    requested: str | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """``requested`` (``--lang``), else the home's remembered choice, else the locale, else
    English."""
    if requested:
        return checked(requested)
    return remembered(home) or from_locale(environ) or DEFAULT


def checked(code: str) -> str:
    """``code`` as a catalog language (``fr_FR`` is ``fr``), or :class:`UnknownLanguage`."""
    language = normalize(code)
    if language is None:
        raise UnknownLanguage(code)
    return language


def set_language(language: str) -> None:
    """The language of this process from now on (outside a :func:`using` block)."""
    global _process_language
    _process_language = checked(language)


def current() -> str:
    """The language in use here: the :func:`using` block's, else the process's."""
    return _language.get() or _process_language


@contextlib.contextmanager
def using(language: str | None) -> Iterator[str]:
    """Run a block in ``language`` (``None``: the process's), for instance a page rendered
    for its own reader, and give the language it uses."""
    token = _language.set(checked(language) if language else None)
    try:
        yield current()
    finally:
        _language.reset(token)


# -- the catalogs --------------------------------------------------------------------------


def catalog_path(language: str, suffix: str = ".po") -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


@cache
def translations(language: str) -> _gettext.NullTranslations:
    """The compiled catalog of ``language`` (English: the code's own words)."""
    if language == DEFAULT:
        return _gettext.NullTranslations()
    source, compiled = catalog_path(language), catalog_path(language, ".mo")
    if compiled.is_file() and not (
        source.is_file() and source.stat().st_mtime > compiled.stat().st_mtime
    ):
        with compiled.open("rb") as mo:
            return _gettext.GNUTranslations(mo)
    if not source.is_file():
        raise UnknownLanguage(language)
    # A source checkout (or a .po edited since its .mo was built): compiled in memory.
    return _gettext.GNUTranslations(io.BytesIO(compile_po(source.read_bytes(), language)))


# -- looking words up ----------------------------------------------------------------------


def gettext(message: str) -> str:
    """``message`` in the language in use."""
    return translations(current()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of ``singular`` / ``plural`` for ``n``, in the language in use (French
    says ``1 pli``, ``0 pli``; English ``0 tricks``)."""
    return translations(current()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` as meant in ``context`` (``pgettext("bid", "pass")``)."""
    return translations(current()).pgettext(context, message)


def npgettext(context: str, singular: str, plural: str, n: int) -> str:
    return translations(current()).npgettext(context, singular, plural, n)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs where it is written, and look it up later with
    ``_()`` where it is shown (a module constant, a table of words)."""
    return message


_ = gettext


# -- dates and numbers ---------------------------------------------------------------------

ISO_MINUTE = "yyyy-MM-dd HH:mm"
ISO_DAY = "yyyy-MM-dd"
NUMERIC_PATTERNS = {"en": (ISO_MINUTE, ISO_DAY)}
"""The languages whose dates are not the CLDR's short form: the catalogs' English is no
country's, and CLDR's ``en`` is the United States' ``12/3/26``, which a reader in London
takes for the 12th of March; English keeps the ISO form the commands always printed."""


def format_date(moment: datetime | date, *, time: bool = True) -> str:
    """A date (with its time to the minute, unless ``time`` is false) as the reader's
    language writes it: ``03/12/2026 14:05`` in French, ``3/12/26, 14:05`` in Spanish
    (CLDR's short forms, by Babel), ``2026-12-03 14:05`` in English."""
    from babel import dates

    language = current()
    patterns = NUMERIC_PATTERNS.get(language)
    if time and isinstance(moment, datetime):
        return dates.format_datetime(moment, patterns[0] if patterns else "short", locale=language)
    return dates.format_date(moment, patterns[1] if patterns else "short", locale=language)


def format_number(
    value: float, decimals: int = 0, *, sign: bool = False, trailing_zeros: bool = True
) -> str:
    """``value`` as the reader's language writes a number: ``1,234.5`` in English,
    ``1 234,5`` in French, ``1234,5`` in Spanish (Babel); ``decimals`` places (at most, and
    no trailing zeros, unless ``trailing_zeros``), with its sign (``+12,5``) if ``sign``."""
    from babel import numbers

    fraction = ("0" if trailing_zeros else "#") * decimals
    pattern = "#,##0" + (f".{fraction}" if decimals else "")
    if sign:
        pattern = f"+{pattern};-{pattern}"
    return numbers.format_decimal(value, format=pattern, locale=current())


def format_milliseconds(seconds: float) -> str:
    """``seconds`` in milliseconds as the reader's language writes the number, with the
    places that keep it readable: ``0.004``, ``0.31``, ``11.6``, ``1,023`` (three places
    below 0.1 ms, two below 1 ms, one below 100 ms)."""
    ms = 1000 * seconds
    decimals = 3 if ms < 0.1 else 2 if ms < 1 else 1 if ms < 100 else 0
    return format_number(ms, decimals)


def format_duration(seconds: float) -> str:
    """``seconds`` as the reader's language says a rough duration, in its largest unit:
    ``45 sec``, ``3 min``, ``2 hr`` in English, ``3 min``, ``2 h`` in French (Babel's short
    units)."""
    from babel import dates

    return dates.format_timedelta(
        timedelta(seconds=max(seconds, 0.0)), format="short", locale=current()
    )


def format_percent(ratio: float, decimals: int = 0) -> str:
    """``ratio`` as a percentage the reader's language writes it: ``42%``, ``42 %``
    (French and Spanish put a no-break space before the sign), with ``decimals`` places."""
    from babel import Locale, numbers

    locale = Locale.parse(current())
    pattern = numbers.parse_pattern(locale.percent_formats[None].pattern)
    pattern.frac_prec = (decimals, decimals)
    shown: str = pattern.apply(ratio, locale)
    return shown


def format_ordinal(n: int) -> str:
    """``n`` as the reader's language writes an ordinal in figures: ``1st``, ``2nd``,
    ``11th``, ``21st`` in English; ``1er``, ``2e`` in French; ``1.º`` in Spanish."""
    language = current()
    if language == "fr":
        return f"{n}er" if n == 1 else f"{n}e"
    if language == "es":
        return f"{n}.º"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def browser_catalog(language: str | None = None) -> dict[str, object]:
    """The catalog of ``language`` (the one in use by default) for a browser page, as JSON:
    ``messages`` maps a ``msgid`` (``context\x04msgid`` with a context) to its translation,
    ``plurals`` a singular ``msgid`` to its plural forms, and ``plural_forms`` is the
    catalog's rule for choosing a form (``nplurals=2; plural=(n > 1);``)."""
    code = checked(language) if language else current()
    found = translations(code)
    messages: dict[str, str] = {}
    plurals: dict[str, list[str]] = {}
    for key, value in getattr(found, "_catalog", {}).items():
        if isinstance(key, tuple):
            forms = plurals.setdefault(key[0], [])
            forms.extend([""] * (key[1] + 1 - len(forms)))
            forms[key[1]] = value
        elif key:
            messages[key] = value
    header = getattr(found, "_info", {}).get("plural-forms", "nplurals=2; plural=(n != 1);")
    return {"lang": code, "messages": messages, "plurals": plurals, "plural_forms": header}
