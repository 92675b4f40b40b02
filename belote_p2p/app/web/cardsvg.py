"""The 32 cards and a card back as SVG, drawn by code: no image file, no font beyond the
browser's sans-serif, nothing fetched.

Each image is drawn in a reader's language: its corners and figures say the rank as that
language writes it (``V D R`` for valet, dame, roi in French and Spanish; ``J Q K`` in
English), and its name for a screen reader is that language's (``valet de cœur``). The page
asks for a language's images by their address (``cards/fr/JH.svg``), drawn once each.

Suits are told apart by shape first (hand-drawn paths for ♠ ♥ ♦ ♣) and by colour second,
in four colours (black spades, red hearts, blue diamonds, green clubs) so that red/green
colour blindness never leaves two suits alike.
"""

from __future__ import annotations

from functools import cache
from html import escape

from belote_p2p.game.cards import RANK_LETTERS, SUIT_LETTERS, Card
from belote_p2p.i18n import _, using

from ..wording import card_name, rank_text, suit_name

SUIT_COLOURS = ("#1b1b1b", "#c62828", "#1f5fbf", "#1e7b34")
"""♠ ♥ ♦ ♣ in the four-colour deck's colours."""

# Each suit drawn in a 100x100 box.
SUIT_PATHS = (
    # spade: an upside-down heart on a flared stem
    "M50 3C64 20 97 40 97 63C97 77 87 85 75 85C66 85 59 81 54 74C55 86 60 93 69 98H31"
    "C40 93 45 86 46 74C41 81 34 85 25 85C13 85 3 77 3 63C3 40 36 20 50 3Z",
    # heart
    "M50 92C22 68 3 50 3 29C3 13 15 4 28 4C38 4 46 10 50 19C54 10 62 4 72 4C85 4 97 13 97 29"
    "C97 50 78 68 50 92Z",
    # diamond
    "M50 2L88 50L50 98L12 50Z",
    # club: three leaves on a flared stem
    "M50 5A21 21 0 1 1 49.9 5ZM27 40A21 21 0 1 1 26.9 40ZM73 40A21 21 0 1 1 72.9 40Z"
    "M46 58C46 78 41 90 32 98H68C59 90 54 78 54 58Z",
)

WIDTH, HEIGHT = 100, 140


def _suit(suit: int, x: float, y: float, size: float, *, flip: bool = False) -> str:
    scale = size / 100
    transform = f"translate({x:g} {y:g}) scale({scale:g})"
    if flip:
        transform = f"translate({x + size:g} {y + size:g}) rotate(180) scale({scale:g})"
    return f'<path transform="{transform}" d="{SUIT_PATHS[suit]}"/>'


def _corner(c: Card, *, flip: bool = False) -> str:
    rank = rank_text(c)
    size = 24 if len(rank) == 1 else 21
    body = (
        f'<text x="13" y="27" font-size="{size}" text-anchor="middle" '
        f'font-family="DejaVu Sans, Arial, sans-serif" font-weight="bold">{rank}</text>'
        + _suit(c >> 3, 4, 32, 18)
    )
    if flip:
        return f'<g transform="rotate(180 50 70)">{body}</g>'
    return body


@cache
def card_svg(c: Card, language: str = "en") -> str:
    """The face of card ``c`` in ``language``: its rank and suit in two corners, a large
    suit (or the figure's letter) in the middle."""
    with using(language):
        return _card_svg(c)


def _card_svg(c: Card) -> str:
    suit, rank = c >> 3, c & 7
    colour = SUIT_COLOURS[suit]
    letter = rank_text(c)
    if RANK_LETTERS[rank] in "JQK":
        middle = (
            f'<rect x="25" y="30" width="50" height="80" rx="6" fill="none" '
            f'stroke="{colour}" stroke-width="2.5"/>'
            f'<text x="50" y="70" font-size="34" text-anchor="middle" '
            f'font-family="DejaVu Serif, Georgia, serif" font-weight="bold">{letter}</text>'
            + _suit(suit, 38, 76, 24)
        )
    elif RANK_LETTERS[rank] == "A":
        middle = _suit(suit, 22, 42, 56)
    else:
        middle = _suit(suit, 29, 49, 42)
    name = escape(card_name(c))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{name}">'
        f"<title>{name}</title>"
        f'<rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="#fffdf7" '
        f'stroke="#555" stroke-width="2"/>'
        f'<g fill="{colour}">{_corner(c)}{middle}{_corner(c, flip=True)}</g>'
        "</svg>"
    )


@cache
def back_svg(language: str = "en") -> str:
    """The back of a card: a blue lattice."""
    with using(language):
        name = escape(_("a card, face down"))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{name}">'
        '<defs><pattern id="l" width="12" height="12" patternUnits="userSpaceOnUse">'
        '<path d="M6 0L12 6L6 12L0 6Z" fill="#3f6fb5"/></pattern></defs>'
        '<rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="#1d3f78" '
        'stroke="#555" stroke-width="2"/>'
        '<rect x="9" y="9" width="82" height="122" rx="5" fill="url(#l)"/>'
        "</svg>"
    )


@cache
def suit_svg(suit: int, language: str = "en") -> str:
    """One suit's shape alone (the trump and bid buttons show it)."""
    with using(language):
        name = escape(suit_name(suit))
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" '
        f'height="100" role="img" aria-label="{name}"><title>{name}</title>'
        f'<g fill="{SUIT_COLOURS[suit]}">{_suit(suit, 0, 0, 100)}</g></svg>'
    )


def image(name: str, language: str = "en") -> str | None:
    """The SVG called ``name`` (``JH``, ``TS``, ``back``, ``suit-H``) in ``language``, or
    None."""
    if name == "back":
        return back_svg(language)
    if name.startswith("suit-") and len(name) == 6 and name[5] in SUIT_LETTERS:
        return suit_svg(SUIT_LETTERS.index(name[5]), language)
    try:
        c = Card.parse(name)
    except ValueError:
        return None
    return card_svg(c, language) if str(c) == name else None
