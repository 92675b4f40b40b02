"""The words of the game, in one place for every printer (the terminal table, the replay,
the round accounts of bot seats): cards, trumps, bids, announcements, contracts and sweeps.

Cards are written as a person may type them (``10♥``, or ``10H`` without symbols).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from belote_p2p.game.announcements import Announcement
from belote_p2p.game.cards import RANK_LETTERS, SUIT_LETTERS, SUIT_SYMBOLS, Card
from belote_p2p.game.engine import Action, Bid, BidKind, contract_word
from belote_p2p.game.scoring import RoundScore
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP

SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
COINCHE_WORDS = {2: "coinched", 4: "surcoinched"}


# -- cards as text -----------------------------------------------------------------------


def rank_text(c: Card) -> str:
    letter = RANK_LETTERS[c & 7]
    return "10" if letter == "T" else letter


def card_text(c: Card, *, symbols: bool = True) -> str:
    """``10♥``, ``J♠`` (``symbols``), else ``10H``, ``JS``: both are what a person may type."""
    suit = c >> 3
    return rank_text(c) + (SUIT_SYMBOLS[suit] if symbols else SUIT_LETTERS[suit])


def trump_text(mode: int, *, symbols: bool = True) -> str:
    if mode < 0:
        return "?"
    if mode == NO_TRUMP:
        return "no trump"
    if mode == ALL_TRUMP:
        return "all trump"
    return SUIT_SYMBOLS[mode] if symbols else SUIT_LETTERS[mode]


def bid_text(bid: Bid, *, symbols: bool = True) -> str:
    if bid.kind is BidKind.CHOOSE:
        return f"choose {trump_text(bid.trump, symbols=symbols)}"
    if bid.kind is BidKind.BID:
        return f"{contract_word(bid.value)} {trump_text(bid.trump, symbols=symbols)}"
    return str(bid.kind.value)


def action_text(action: Action, *, symbols: bool = True) -> str:
    """A card or a bid, as the table writes it."""
    if isinstance(action, Bid):
        return bid_text(action, symbols=symbols)
    return card_text(action, symbols=symbols)


def announcement_text(a: Announcement, *, symbols: bool = True) -> str:
    cards = " ".join(card_text(c, symbols=symbols) for c in a.card_list)
    kind = "carré" if a.kind.value == "carre" else a.kind.value
    return f"{kind} {cards} ({a.points})"


def coinche_text(multiplier: int, *, factor: bool = False) -> str:
    """``coinched`` or ``surcoinched`` (``×2 coinched`` with ``factor``); empty if neither."""
    word = COINCHE_WORDS.get(multiplier, "")
    return f"×{multiplier} {word}" if word and factor else word


def bid_contract_text(
    who: str, contract: int, trump: str, multiplier: int, *, sep: str = " ", factor: bool = False
) -> str:
    """A coinche contract: ``Bob bids 90 ♥, coinched`` (``who`` carries the verb, if any)."""
    x = coinche_text(multiplier, factor=factor)
    return f"{who} {contract_word(contract)} {trump}" + (f"{sep}{x}" if x else "")


def listed(items: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


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
        return f", générale by {seat_name(score.generale)}"
    if score.capot is not None:
        return f", capot by {team_label(score.capot)}"
    return ""


def left_line(leaver: str, partner: str) -> str:
    """``Bob left; Carol plays Bob's open hand`` (``you play`` when the partner is us)."""
    who = "you play" if partner == "You" else f"{partner} plays"
    return f"{leaver} left; {who} {leaver}'s open hand"
