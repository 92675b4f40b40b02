"""Text that comes from other peers: what a seat's name may hold, and how any text from a
record or the network is made safe to write to a terminal.

A name travels in the lobby's join request, the LAN beacon and the table definition, and is
then printed by every command that shows a game. A terminal obeys what it is written: an
escape sequence in a name could set the window title, write the clipboard (OSC 52), blink,
or reverse the text that follows (U+202E). So new names are refused where they are parsed
(:func:`name_problem`, the rule of ``protocol/PROTOCOL.md`` §6.1), and whatever reaches a
terminal from a record or a peer goes through :func:`safe_text`, which also bounds its width
in terminal cells (a wide character takes two).
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 32
"""A name is 1 to this many code points..."""
MAX_NAME_CELLS = 32
"""... and at most this many terminal cells wide (:func:`cells`)."""
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
"""Unicode general categories no name holds and :func:`safe_text` never writes: control and
format characters (bidi overrides are format characters), line and paragraph separators,
surrogates, private use and unassigned code points."""
ELLIPSIS = "…"


def _refused(ch: str) -> bool:
    """A code point no name holds: a refused category, or a space other than U+0020 (a
    no-break or ideographic space looks like a space and is not one)."""
    category = unicodedata.category(ch)
    return category in REFUSED_CATEGORIES or (category == "Zs" and ch != " ")


def char_cells(ch: str) -> int:
    """Terminal cells one code point takes: 2 for East Asian wide and fullwidth characters,
    0 for combining marks (they sit on the character before), 1 for the rest."""
    if unicodedata.category(ch) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes (:func:`char_cells` of each code point)."""
    return sum(char_cells(ch) for ch in text)


def name_problem(name: object) -> str | None:
    """Why ``name`` may not be a seat's name (PROTOCOL.md §6.1), or None if it may."""
    if type(name) is not str or not 0 < len(name) <= MAX_NAME:
        return f"a name is 1 to {MAX_NAME} characters"
    bad = next((ch for ch in name if _refused(ch)), None)
    if bad is not None:
        what = unicodedata.name(bad, unicodedata.category(bad))
        return f"a name may not hold the character U+{ord(bad):04X} ({what})"
    if cells(name) > MAX_NAME_CELLS:
        return f"a name is at most {MAX_NAME_CELLS} terminal cells wide (a wide character is 2)"
    return None


def _escaped(ch: str) -> str:
    """``\\x1b``, ``\\u202e``, ``\\U000f0000``: as Python writes the code point."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def safe_text(text: str, width: int | None = None) -> str:
    """``text`` as a terminal may be given it: white space (tabs, newlines, separators)
    becomes one space, every other refused code point is written as its escape (``\\x1b``,
    ``\\u202e``), and, with ``width``, the result is cut to at most that many cells, an
    ellipsis marking the cut."""
    out = []
    for ch in text:
        if ch.isspace():
            out.append(" ")
        elif _refused(ch):
            out.append(_escaped(ch))
        else:
            out.append(ch)
    shown = " ".join("".join(out).split())
    if width is None or cells(shown) <= width:
        return shown
    room = width - cells(ELLIPSIS)
    kept, used = [], 0
    for ch in shown:
        used += char_cells(ch)
        if used > room:
            break
        kept.append(ch)
    return "".join(kept) + ELLIPSIS if width >= cells(ELLIPSIS) else ""
