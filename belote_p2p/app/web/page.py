"""The page in its reader's language: ``index.html`` translated as it is served, and the
catalog its script reads.

``index.html`` is written in English, as the code is. Its words are the text of its elements
and the attributes a person reads or hears (``aria-label``, ``placeholder``, ``title``,
``alt``), except where HTML's own ``translate="no"`` says otherwise (the game's name, a code's
example). :func:`extract` finds them for the catalogs (``belote_p2p.i18n.catalogs`` names it
for ``static/*.html``) and :func:`render` puts each one's translation in its place, with
``<html lang>`` set: one walk through the page (:class:`_Walk`) serves both, so that what is
translated is what is extracted.

The script's own words (``_()``, ``ngettext()`` and ``pgettext()`` in ``static/app.js``) come
with the page: :func:`render` writes the catalog of the language into the page's
``<script id="catalog" type="application/json">``, a data block the browser never runs (the
Content-Security-Policy allows no inline script), holding only the messages of the script
(:func:`script_catalog`).
"""

from __future__ import annotations

import html
import io
import json
from collections.abc import Callable, Iterator
from functools import cache
from html.parser import HTMLParser
from importlib import resources
from typing import IO, Any

from belote_p2p import i18n

SPOKEN_ATTRIBUTES = frozenset({"aria-label", "placeholder", "title", "alt"})
"""The attributes of an element that a person reads or hears."""
VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
CATALOG_ID = "catalog"
"""The ``id`` of the page's data block that receives the script's catalog."""
SCRIPTS = ("app.js",)
"""The page's scripts, whose messages the page's catalog holds."""


def _words(text: str) -> bool:
    """Whether ``text`` is something to translate (it has a letter: not ``#`` nor ``→``)."""
    return any(c.isalpha() for c in text)


class _Walk(HTMLParser):
    """One walk through a page: each text to translate goes through ``say(text, line)``,
    whose answer takes its place in :attr:`out`; ``lang`` sets ``<html lang>``, ``catalog``
    fills the catalog's data block."""

    def __init__(
        self, say: Callable[[str, int], str], lang: str | None = None, catalog: str = ""
    ) -> None:
        super().__init__(convert_charrefs=True)
        self.say = say
        self.lang = lang
        self.catalog = catalog
        self.out: list[str] = []
        self._kept: list[tuple[str, bool]] = []
        """The open elements, each with whether its content stays as written."""
        self._raw = False
        """In a ``<script>`` or ``<style>``: its content is no text to read."""
        self._drop = False
        """In the catalog's data block: its placeholder content gives way to the catalog."""

    def _keeps(self) -> bool:
        return bool(self._kept) and self._kept[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        keep = self._keeps() or dict(attrs).get("translate") == "no"
        if tag == "html" and self.lang is not None:
            attrs = [(k, v) for k, v in attrs if k != "lang"] + [("lang", self.lang)]
        if tag in ("script", "style"):
            self._raw = True
        if tag == "script" and dict(attrs).get("id") == CATALOG_ID:
            self.out.append(self._tag(tag, attrs) + self.catalog.replace("<", "\\u003c"))
            self._drop = True
        else:
            said = attrs if keep else [(k, self._spoken(k, v)) for k, v in attrs]
            self.out.append(self._tag(tag, said))
        if tag not in VOID_ELEMENTS:
            self._kept.append((tag, keep))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def _spoken(self, name: str, value: str | None) -> str | None:
        """An attribute's value, translated if a person reads or hears it."""
        if name not in SPOKEN_ATTRIBUTES or not value or not _words(value):
            return value
        return self.say(" ".join(value.split()), self.getpos()[0])

    @staticmethod
    def _tag(tag: str, attrs: list[tuple[str, str | None]]) -> str:
        inside = "".join(
            f" {k}" if v is None else f' {k}="{html.escape(v, quote=True)}"' for k, v in attrs
        )
        return f"<{tag}{inside}>"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._raw = self._drop = False
        while self._kept:
            if self._kept.pop()[0] == tag:
                break
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if self._drop:
            return
        if self._raw:
            self.out.append(data)
            return
        text = data.strip()
        if not text or not _words(text) or self._keeps():
            self.out.append(html.escape(data, quote=False))
            return
        head = data[: len(data) - len(data.lstrip())]
        tail = data[len(data.rstrip()) :]
        said = self.say(" ".join(text.split()), self.getpos()[0])
        self.out.append(head + html.escape(said, quote=False) + tail)

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")


def extract(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: dict[str, Any]
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel's extraction method for a page (``belote_p2p.app.web.page:extract``): every text
    :func:`render` translates, with its line."""
    found: list[tuple[int, str]] = []

    def say(text: str, line: int) -> str:
        found.append((line, text))
        return text

    walk = _Walk(say)
    walk.feed(fileobj.read().decode(options.get("encoding", "utf-8")))
    walk.close()
    for line, text in found:
        yield line, None, text, []


@cache
def script_messages() -> frozenset[str]:
    """The catalog keys of the script's messages (``context\\x04msgid`` with a context; a
    plural by its singular), as the catalogs' extraction finds them."""
    from babel.messages.extract import DEFAULT_KEYWORDS
    from babel.messages.extract import extract as babel_extract

    keys: set[str] = set()
    for name in SCRIPTS:
        source = resources.files(__package__).joinpath("static", name).read_bytes()
        for _line, message, _comments, context in babel_extract(
            "javascript", io.BytesIO(source), keywords=DEFAULT_KEYWORDS
        ):
            msgid = message if isinstance(message, str) else message[0]
            keys.add(f"{context}\x04{msgid}" if context else msgid)
    return frozenset(keys)


def script_catalog(language: str) -> dict[str, object]:
    """:func:`belote_p2p.i18n.browser_catalog` of ``language``, with the script's messages
    only (the rest are the terminal's, the command line's...)."""
    full = i18n.browser_catalog(language)
    wanted = script_messages()
    messages = full["messages"]
    plurals = full["plurals"]
    assert isinstance(messages, dict) and isinstance(plurals, dict)
    return {
        **full,
        "messages": {k: v for k, v in messages.items() if k in wanted},
        "plurals": {k: v for k, v in plurals.items() if k in wanted},
    }


@cache
def render(language: str) -> bytes:
    """``index.html`` in ``language``: its words translated, ``<html lang>`` set, and the
    script's catalog in its data block."""
    source = resources.files(__package__).joinpath("static", "index.html").read_text("utf-8")
    with i18n.using(language):
        catalog = json.dumps(script_catalog(language), ensure_ascii=False, sort_keys=True)
        walk = _Walk(lambda text, _line: i18n.gettext(text), language, catalog)
        walk.feed(source)
        walk.close()
    return "".join(walk.out).encode()
