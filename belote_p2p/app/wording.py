"""The words of the game, in one place for every printer (the terminal table, the browser,
the replay, the round accounts of bot seats): cards, suits, trumps, bids, announcements,
contracts and sweeps, in the language in use (:mod:`belote_p2p.i18n`), and what a person
types for them in any language.

Cards are written as a person may type them, with the letters of the reader's language:
``V♥`` and ``10♠`` in French and Spanish (roi, dame, valet: ``R D V``, as the rules' own
card table writes them), ``J♥`` in English; without symbols the suit is a letter too
(English ``S H D C``, French ``P C K T``: pique, cœur, carreau, trèfle; Spanish ``P C D T``:
picas, corazones, diamantes, tréboles).

What a person types is read in every language at once (:func:`parse_card`,
:func:`parse_bid`): a rank letter of any language (``J`` or ``V``, ``K`` or ``R``, ``Q`` or
``D``, ``T`` or ``10``), a suit symbol or letter, the bidding words (``take``, ``prendre``,
``tomar``; ``pass``, ``passe``, ``paso``...). One letter means two suits: ``C`` is clubs in
English and hearts (cœur, corazones) in French and Spanish; it is read in the reader's
language. A refusal says, in the reader's language, what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from belote_p2p.errors import BeloteError
from belote_p2p.game.announcements import Announcement, AnnouncementKind
from belote_p2p.game.audit import FaultKind
from belote_p2p.game.cards import CARDS, SUIT_SYMBOLS, Card
from belote_p2p.game.engine import (
    BID_VALUES,
    CHOOSE,
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    Action,
    Bid,
    BidKind,
)
from belote_p2p.game.scoring import CAPOT_POINTS, GENERALE_POINTS, RoundScore
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP
from belote_p2p.i18n import N_, _, current, pgettext

SUIT_NAMES = (N_("spades"), N_("hearts"), N_("diamonds"), N_("clubs"))
"""The suits in the engine's order S H D C, in English (:func:`suit_name` in the reader's)."""
RANK_NAMES = (
    N_("seven"),
    N_("eight"),
    N_("nine"),
    N_("ten"),
    N_("jack"),
    N_("queen"),
    N_("king"),
    N_("ace"),
)
"""The ranks in the engine's order 7 8 9 T J Q K A, in English (:func:`card_name`)."""

RANK_LETTERS = {"en": "789TJQKA", "fr": "789TVDRA", "es": "789TVDRA"}
"""Each language's rank letters in the engine's order (``T`` is written ``10``)."""
SUIT_LETTERS = {"en": "SHDC", "fr": "PCKT", "es": "PCDT"}
"""Each language's suit letters in the engine's order S H D C (French bridge's ``P C K T``;
Spanish picas, corazones, diamantes, tréboles)."""
OTHER_SUIT_SYMBOLS = "♤♡♢♧"
PLAIN_STRENGTH_ORDER = (7, 3, 6, 5, 4, 2, 1, 0)
"""The ranks strongest first outside trump (A 10 K Q J 9 8 7), as the rules' table lists them."""

# What a person may type, in any language, for each bidding word (lower case, no accents).
PASS_WORDS = frozenset({"pass", "passe", "passer", "paso", "pasar"})
TAKE_WORDS = frozenset({"take", "prendre", "prends", "prend", "tomar", "tomo", "toma"})
COINCHE_WORDS_TYPED = frozenset({"coinche", "coincher", "contre", "contrer"})
SURCOINCHE_WORDS_TYPED = frozenset({"surcoinche", "surcoincher", "surcontre"})
CHOOSE_WORDS = frozenset({"choose", "a", "elegir", "elijo", "elige", "atout", "triunfo"})
CONTRACT_WORDS_TYPED = {
    "capot": CAPOT_POINTS,
    "capote": CAPOT_POINTS,
    "generale": GENERALE_POINTS,
}
NO_TRUMP_WORDS = frozenset({"nt", "sa", "st", "notrump", "sans-atout", "sin-triunfo"})
ALL_TRUMP_WORDS = frozenset({"at", "ta", "tt", "alltrump", "tout-atout", "todo-triunfo"})
ACCENTS = str.maketrans("éèêàáíóúñ", "eeeaaioun")


# -- cards as text -----------------------------------------------------------------------


def rank_letters() -> str:
    return RANK_LETTERS.get(current(), RANK_LETTERS["en"])


def suit_letters() -> str:
    return SUIT_LETTERS.get(current(), SUIT_LETTERS["en"])


def rank_text(c: Card) -> str:
    """The rank as the reader's language writes it: ``10``, ``V`` (French), ``J`` (English)."""
    letter = rank_letters()[c & 7]
    return "10" if letter == "T" else letter


def suit_letter(suit: int) -> str:
    """A suit's letter in the reader's language (``C`` is clubs in English, cœur in French)."""
    return suit_letters()[suit]


def suit_name(suit: int) -> str:
    """``hearts``, ``cœur``, ``corazones``."""
    return _(SUIT_NAMES[suit])


def card_text(c: Card, *, symbols: bool = True) -> str:
    """``10♥``, ``V♠`` (``symbols``), else ``10C``, ``VP`` (French letters): both are what a
    person may type."""
    suit = c >> 3
    return rank_text(c) + (SUIT_SYMBOLS[suit] if symbols else suit_letter(suit))


def card_name(c: Card) -> str:
    """``jack of hearts``, ``valet de cœur``: what a screen reader says for a card."""
    return _("{rank} of {suit}").format(rank=_(RANK_NAMES[c & 7]), suit=suit_name(c >> 3))


NO_TRUMP_LETTERS = {"en": "NT", "fr": "SA", "es": "ST"}
ALL_TRUMP_LETTERS = {"en": "AT", "fr": "TA", "es": "TT"}
"""No trump and all trump as a bid writes them in each language: sans atout, tout atout; sin
triunfo, todo triunfo (:func:`parse_trump_word` reads every language's)."""


def trump_letter(mode: int) -> str:
    """A trump as typed in the reader's language: a suit's letter (``C``), or ``NT`` /
    ``SA`` / ``ST`` for no trump, ``AT`` / ``TA`` / ``TT`` for all trump."""
    if mode == NO_TRUMP:
        return NO_TRUMP_LETTERS.get(current(), NO_TRUMP_LETTERS["en"])
    if mode == ALL_TRUMP:
        return ALL_TRUMP_LETTERS.get(current(), ALL_TRUMP_LETTERS["en"])
    return suit_letter(mode)


def trump_text(mode: int, *, symbols: bool = True) -> str:
    if mode < 0:
        return "?"
    if mode == NO_TRUMP:
        return _("no trump")
    if mode == ALL_TRUMP:
        return _("all trump")
    return SUIT_SYMBOLS[mode] if symbols else suit_letter(mode)


def contract_text(value: int) -> str:
    """A coinche contract's value: ``90``, ``capot``, ``générale``."""
    if value == CAPOT_POINTS:
        return pgettext("contract", "capot")
    if value == GENERALE_POINTS:
        return pgettext("contract", "générale")
    return str(value)


def bid_text(bid: Bid, *, symbols: bool = True) -> str:
    """What a seat said in the bidding, as the table shows it: ``pass``, ``take``,
    ``choose ♥``, ``90 ♥`` (French ``passe``, ``prend``, ``prend à ♥``)."""
    trump = trump_text(bid.trump, symbols=symbols)
    if bid.kind is BidKind.CHOOSE:
        return pgettext("said", "choose {trump}").format(trump=trump)
    if bid.kind is BidKind.BID:
        return _("{contract} {trump}").format(contract=contract_text(bid.value), trump=trump)
    if bid.kind is BidKind.PASS:
        return pgettext("said", "pass")
    if bid.kind is BidKind.TAKE:
        return pgettext("said", "take")
    if bid.kind is BidKind.COINCHE:
        return pgettext("said", "coinche")
    return pgettext("said", "surcoinche")


def bid_choice_text(bid: Bid, *, symbols: bool = True) -> str:
    """A bid offered to the seat to act, as a button or a list of choices says it:
    ``take``, ``pass``, ``choose ♥`` (French ``prendre``, ``passer``, ``prendre à ♥``)."""
    trump = trump_text(bid.trump, symbols=symbols)
    if bid.kind is BidKind.CHOOSE:
        return pgettext("choice", "choose {trump}").format(trump=trump)
    if bid.kind is BidKind.BID:
        return bid_text(bid, symbols=symbols)
    if bid.kind is BidKind.PASS:
        return pgettext("choice", "pass")
    if bid.kind is BidKind.TAKE:
        return pgettext("choice", "take")
    if bid.kind is BidKind.COINCHE:
        return pgettext("choice", "coinche")
    return pgettext("choice", "surcoinche")


def action_text(action: Action, *, symbols: bool = True) -> str:
    """A card or a bid, as the table writes it."""
    if isinstance(action, Bid):
        return bid_text(action, symbols=symbols)
    return card_text(action, symbols=symbols)


ANNOUNCEMENT_NAMES = {
    AnnouncementKind.TIERCE: N_("tierce"),
    AnnouncementKind.QUARTE: N_("quarte"),
    AnnouncementKind.QUINTE: N_("quinte"),
    AnnouncementKind.CARRE: N_("carré"),
}
"""The announcements by the rules' names (French calls a quarte *cinquante* and a quinte
*cent*; Spanish *tercia*, *cuarta*, *quinta*)."""


def announcement_name(kind: AnnouncementKind) -> str:
    return _(ANNOUNCEMENT_NAMES[kind])


def announcement_text(a: Announcement, *, symbols: bool = True) -> str:
    """``tierce 8♥ 9♥ 10♥ (20)``."""
    cards = " ".join(card_text(c, symbols=symbols) for c in a.card_list)
    return _("{announcement} {cards} ({points})").format(
        announcement=announcement_name(a.kind), cards=cards, points=a.points
    )


def coinche_text(multiplier: int, *, factor: bool = False) -> str:
    """``coinched`` or ``surcoinched`` (``×2 coinched`` with ``factor``); empty if neither."""
    if multiplier == 2:
        word = _("coinched")
    elif multiplier == 4:
        word = _("surcoinched")
    else:
        return ""
    return _("×{factor} {coinched}").format(factor=multiplier, coinched=word) if factor else word


def bid_contract_text(
    who: str, contract: int, trump: str, multiplier: int, *, sep: str = " ", factor: bool = False
) -> str:
    """A coinche contract: ``Bob bids 90 ♥, coinched`` (``who`` carries the verb, if any)."""
    x = coinche_text(multiplier, factor=factor)
    return f"{who} {contract_text(contract)} {trump}" + (f"{sep}{x}" if x else "")


def game_text(variant: str, target: int) -> str:
    """A game by its rules and target: ``classic to 501``, ``classique en 501 points``."""
    return _("{variant} to {target}").format(variant=variant_name(variant), target=target)


FAULT_KIND_NAMES = {
    FaultKind.ILLEGAL_PLAY: N_("illegal play"),
    FaultKind.FALSE_BELOTE: N_("false belote"),
    FaultKind.FALSE_ANNOUNCEMENT: N_("false announcement"),
    FaultKind.ILLEGAL_BID: N_("illegal bid"),
}
"""What a round's audit found wrong (RULES.md §10), as a person says it."""


def fault_kind_text(kind: FaultKind) -> str:
    return _(FAULT_KIND_NAMES[kind])


def listed(items: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C`` (``A, B et C``, ``A, B y C``)."""
    if len(items) <= 1:
        return "".join(items)
    return _("{items} and {last}").format(items=", ".join(items[:-1]), last=items[-1])


def team_name(names: Sequence[str], team: int) -> str:
    """A team by its players: ``Alice & Carol`` (team 0 is seats 0 and 2)."""
    return f"{names[team]} & {names[team + 2]}"


def side_names(names: Sequence[str]) -> tuple[str, ...]:
    """The sides that score, named by their players: the two teams with four seats
    (``Alice & Carol``, ``Bob & Dee``), else every player by name."""
    if len(names) == 4:
        return (team_name(names, 0), team_name(names, 1))
    return tuple(names)


def sweep_text(
    score: RoundScore, seat_name: Callable[[int], str], team_label: Callable[[int], str]
) -> str:
    """``, générale by Alice`` or ``, capot by Us``: who took every trick; empty otherwise."""
    if score.generale is not None:
        return _(", générale by {name}").format(name=seat_name(score.generale))
    if score.capot is not None:
        return _(", capot by {side}").format(side=team_label(score.capot))
    return ""


def left_line(leaver: str, partner: str | None) -> str:
    """``Bob left; Carol plays Bob's open hand`` (``partner`` ``None``: we play it)."""
    if partner is None:
        return _("{leaver} left; you play {leaver}'s open hand").format(leaver=leaver)
    return _("{leaver} left; {partner} plays {leaver}'s open hand").format(
        leaver=leaver, partner=partner
    )


def error_text(message: object) -> str:
    """``error: ...``, the line a command prints for what stops it, in the reader's
    language."""
    return _("error: {message}").format(message=message)


VARIANT_NAMES = {
    "classic": N_("classic"),
    "classic-no-announcements": N_("classic-no-announcements"),
    "coinche": N_("coinche"),
    "three-handed": N_("three-handed"),
    "two-handed": N_("two-handed"),
}
"""The variants as a person reads them (``classique``, ``à trois``); the rule set's own name
(:attr:`~belote_p2p.game.rules.RuleSet.name`) is what programs and records read."""


def variant_name(name: str) -> str:
    """A variant's name in the reader's language (an unknown one as it is)."""
    return _(VARIANT_NAMES[name]) if name in VARIANT_NAMES else name


# -- what a person types ------------------------------------------------------------------

YES_WORDS = frozenset({"y", "yes", "o", "oui", "s", "si"})
"""What a person types for yes to a question, in any language (``sí`` without its accent)."""


def is_yes(text: str) -> bool:
    """``text`` answers yes, in any language: ``y``, ``yes``, ``o``, ``oui``, ``s``, ``sí``."""
    return text.strip().lower().translate(ACCENTS) in YES_WORDS


class WordError(BeloteError, ValueError):
    """What was typed is not a card (or not a bid); the message, in the reader's language,
    says what was expected."""


def _suit_of_letter(letter: str) -> int | None:
    """A suit from a symbol or a letter: the reader's language first (``C``), then every
    language's letters that mean one suit only."""
    if letter in SUIT_SYMBOLS:
        return SUIT_SYMBOLS.index(letter)
    if letter in OTHER_SUIT_SYMBOLS:
        return OTHER_SUIT_SYMBOLS.index(letter)
    up = letter.upper()
    mine = suit_letters()
    if up in mine:
        return mine.index(up)
    meanings = {letters.index(up) for letters in SUIT_LETTERS.values() if up in letters}
    return meanings.pop() if len(meanings) == 1 else None


def _rank_of_letter(text: str) -> int | None:
    up = text.upper()
    if up == "10":
        up = "T"
    if len(up) != 1:
        return None
    for letters in (rank_letters(), *RANK_LETTERS.values()):
        if up in letters:
            return letters.index(up)
    return None


def card_hint() -> str:
    """What a card is typed as, in the reader's language: ``V♥, 10P, 7K``."""
    letters = suit_letters()
    ranks = rank_letters()
    examples = [ranks[4] + SUIT_SYMBOLS[1], "10" + letters[0], "7" + letters[2]]
    strongest_first = [ranks[r] for r in PLAIN_STRENGTH_ORDER]
    return _(
        "a card is its rank ({ranks}) then its suit ({suits} or {symbols}), e.g. {examples}"
    ).format(
        ranks=" ".join("10" if r == "T" else r for r in strongest_first),
        suits=" ".join(letters),
        symbols=" ".join(SUIT_SYMBOLS),
        examples=", ".join(examples),
    )


def parse_card(text: str) -> Card:
    """A card typed in any language's letters or with its symbol: ``VH``, ``jh``, ``10♥``,
    ``T♥``, ``RC`` (French: roi de cœur). Raises :class:`WordError`."""
    t = "".join(text.split())
    if 2 <= len(t) <= 3:
        rank, suit = _rank_of_letter(t[:-1]), _suit_of_letter(t[-1])
        if rank is not None and suit is not None:
            return CARDS[suit * 8 + rank]
    raise WordError(_("{text!r} is not a card: {hint}").format(text=text, hint=card_hint()))


def parse_trump_word(text: str) -> int:
    """A trump typed in any language: a suit's symbol or letter, or no trump (``NT``,
    ``SA``, ``ST``), all trump (``AT``, ``TA``, ``TT``). Raises :class:`WordError`."""
    t = text.strip().lower().translate(ACCENTS)
    if t in NO_TRUMP_WORDS:
        return NO_TRUMP
    if t in ALL_TRUMP_WORDS:
        return ALL_TRUMP
    suit = _suit_of_letter(text.strip()) if len(text.strip()) == 1 else None
    if suit is None:
        raise WordError(
            _("{text!r} is not a suit: one of {suits} or {symbols}").format(
                text=text, suits=" ".join(suit_letters()), symbols=" ".join(SUIT_SYMBOLS)
            )
        )
    return suit


def bid_hint() -> str:
    """What a bid is typed as, in the reader's language."""
    letters = suit_letters()
    return _(
        "a bid is {take}, {pass_}, a suit ({suit}), a value and a suit ({value}), "
        "{capot}, {coinche} or {surcoinche}"
    ).format(
        take=pgettext("choice", "take"),
        pass_=pgettext("choice", "pass"),
        suit=letters[1],
        value=f"{BID_VALUES[1]} {letters[1]}",
        capot=f"{contract_text(CAPOT_POINTS)} {letters[0]}",
        coinche=pgettext("choice", "coinche"),
        surcoinche=pgettext("choice", "surcoinche"),
    )


def parse_bid(text: str) -> Bid:
    """A bid typed in any language: ``pass``/``passe``/``paso``, ``take``/``prendre``/
    ``tomar``, a suit (``H``, ``♥``, ``à ♥``), ``90 H``, ``capot P``, ``générale ♦``,
    ``coinche``/``contre``, ``surcoinche``. Raises :class:`WordError`."""
    words = text.strip().lower().translate(ACCENTS).split()
    if len(words) == 1:
        word = words[0]
        if word in PASS_WORDS:
            return PASS
        if word in TAKE_WORDS:
            return TAKE
        if word in COINCHE_WORDS_TYPED:
            return COINCHE
        if word in SURCOINCHE_WORDS_TYPED:
            return SURCOINCHE
    raw = text.split()
    try:
        if len(words) == 1:
            return CHOOSE[_suit_only(raw[0])]
        if len(words) == 2 and (words[0] in CHOOSE_WORDS or words[0] in TAKE_WORDS):
            return CHOOSE[_suit_only(raw[1])]
        if len(words) == 2:
            value = CONTRACT_WORDS_TYPED.get(words[0])
            if value is None and words[0].isdigit():
                value = int(words[0])
            if value in BID_VALUES:
                return Bid(BidKind.BID, parse_trump_word(raw[1]), value)
    except WordError:
        pass
    raise WordError(_("{text!r} is not a bid: {hint}").format(text=text, hint=bid_hint()))


def _suit_only(text: str) -> int:
    mode = parse_trump_word(text)
    if mode in (NO_TRUMP, ALL_TRUMP):
        raise WordError(text)
    return mode
