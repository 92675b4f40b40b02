"""The table in a terminal, for a person playing one seat.

Four parts, each usable on its own:

* :class:`TableView`, pure: fed the session's events (or observations), it keeps what the
  seat may know and draws it as one 80x24 frame (:meth:`TableView.render`, a rich
  renderable), the round screen after each round (:meth:`TableView.render_round`, from the
  :class:`~belote_p2p.app.roundview.RoundBreakdown` the browser table shares), the round's
  tricks (:meth:`TableView.render_tricks`), or as plain lines, one fact a line, for screen
  readers and logs (:meth:`TableView.plain_lines`).
* :func:`parse_input`, pure: what a person typed, as an :data:`~belote_p2p.game.engine.Action`
  or a :class:`Command` (help, last, tricks, quit, chat), or an :class:`InputError` that says
  what was wrong and what is legal now. A card's number (:func:`card_numbers`) stays the same
  for the whole round.
* :class:`TerminalUI`: a view on a terminal. It reads the keyboard all the time (a decision,
  a command or a chat line may be typed at any moment), keeps the frame on screen and redraws
  it in place every second while a countdown runs (:class:`Keyboard`: the terminal in cbreak
  mode, our own line editing, so that a redraw never loses what is being typed), holds the
  round screen until Enter or a few seconds, and answers the seat's decisions
  (:meth:`~TerminalUI.decide`). Not on a terminal (a log, a pipe) it prints a frame at each
  event; ``plain`` prints facts as lines and reads plain lines.
* :class:`TuiPlayer`: a :class:`~belote_p2p.players.player.Player` that answers through a
  :class:`TerminalUI`.

Every word is the reader's (English, French or Spanish, :mod:`belote_p2p.i18n`): cards in its
letters (``V♥`` in French and Spanish), bids and refusals in its words; what is typed is read
in any of the three (``prendre``, ``tomar``, ``aide``, ``salir``, ``VC``, ``JH``). Each
translation of a frame line fits the 76 columns inside the border (the tests draw every frame
of every variant in every language).

The frame is printed, never drawn on an alternate screen, so it works over SSH and in 80x24.
``belote-p2p host``, ``join``, ``resume`` and ``play`` (:mod:`belote_p2p.app.seat`,
:mod:`belote_p2p.app.local`) play a person's seat through this module (``--plain`` for the
plain lines).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import textwrap
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO, TYPE_CHECKING, Any, Protocol

import trio
from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from belote_p2p.errors import BeloteError, LocalProtocolError
from belote_p2p.game.cards import CARDS, SUIT_SYMBOLS, Card
from belote_p2p.game.engine import BID_VALUES, Action, Bid, BidKind, Phase, Trick
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet
from belote_p2p.game.scoring import CAPOT_POINTS, GENERALE_POINTS
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP
from belote_p2p.i18n import N_, _, pgettext
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    RoundAudited,
    RoundDealt,
)

from .chat import ChatLimiter, chat_line
from .seatview import (
    HIDDEN_MARK,
    LIVE_PHASES,
    MASTER_MARK,
    NEWS_LINES,
    TRICK_HOLD,
    WARN_SECONDS,
    Notice,
    SeatView,
    bid_options,
    card_numbers,
    display_hand,
    legal_text,
    play_reason,
)
from .wording import (
    WordError,
    action_text,
    bid_text,
    card_text,
    contract_text,
    is_yes,
    parse_bid,
    parse_card,
    suit_letter,
    suit_name,
    trump_text,
)

if TYPE_CHECKING:
    from belote_p2p.net.peer import PeerStatus

__all__ = [
    "Notice",
    "SeatView",
    "TableView",
    "TerminalUI",
    "TuiPlayer",
    "bid_options",
    "card_numbers",
    "display_hand",
    "legal_text",
    "parse_input",
]

WIDTH = 80
"""The frame fits an 80x24 terminal: 19 lines, which leaves room for messages and the
prompt."""
FRAME_ROWS = 17
"""Rows inside the frame's border."""
COMPASS_LINES = 5
RED = "red"
ROUND_HOLD = 8.0
"""Seconds the round screen stays up (unless Enter dismisses it first)."""


def card_style(c: Card) -> str:
    return RED if c >> 3 in (1, 2) else ""


def styled_card(c: Card, extra: str = "") -> Text:
    return Text(card_text(c), style=f"{card_style(c)} {extra}".strip())


PLAIN_MARKS = {MASTER_MARK: "", "▶": "", "…": "...", "·": ",", "×": "x", "–": "-"}


def to_plain(text: str) -> str:
    """``text`` for a plain log or a screen reader: the reader's suit letters (``C`` is
    cœur in French), no marks or arrows."""
    table = str.maketrans(
        {**{sym: suit_letter(i) for i, sym in enumerate(SUIT_SYMBOLS)}, **PLAIN_MARKS,
         "→": pgettext("arrow", "won by")}
    )  # fmt: skip
    return " ".join(text.translate(table).split())


# -- input --------------------------------------------------------------------------------


class CommandKind(Enum):
    """What a person may ask of the table besides an action."""

    HELP = "help"
    """Explain what to type."""
    LAST = "last"
    """Show the last trick."""
    TRICKS = "tricks"
    """Show every trick of the round just played."""
    QUIT = "quit"
    """Leave the game (after a confirmation): the seat resigns."""
    CHAT = "say"
    """Say something to the table (:attr:`Command.text`)."""
    HINT = "hint"
    """Ask the expert for its choice and why (where the table allows hints)."""
    MUTE = "mute"
    """Mute, or hear again, one seat's chat (:attr:`Command.text` names it)."""


@dataclass(frozen=True, slots=True)
class Command:
    kind: CommandKind
    text: str = ""
    """What to say, for :attr:`CommandKind.CHAT`."""


@dataclass(frozen=True, slots=True)
class Resign:
    """The person left the game: the driver signs it (``session.abandon(own_seat)``)."""


COMMANDS = {
    **dict.fromkeys(("help", "?", "aide", "ayuda"), CommandKind.HELP),
    **dict.fromkeys(("last", "dernier", "ultima"), CommandKind.LAST),
    **dict.fromkeys(("tricks", "plis", "bazas"), CommandKind.TRICKS),
    **dict.fromkeys(("hint", "indice", "pista"), CommandKind.HINT),
    **dict.fromkeys(
        ("quit", "exit", "resign", "quitter", "abandonner", "salir", "abandonar"), CommandKind.QUIT
    ),
}
"""The table's commands as typed in English, French or Spanish (lower case, no accents:
``última`` is ``ultima``)."""
COMMAND_ACCENTS = str.maketrans("áéíóú", "aeiou")
MUTE_WORDS = frozenset({"mute", "muet", "silence", "silenciar"})
"""``mute NAME`` in English, French or Spanish: that seat's chat is dropped here (again:
heard again)."""


def command_of(text: str) -> CommandKind | None:
    """The command ``text`` names, in any language."""
    return COMMANDS.get(text.strip().lower().translate(COMMAND_ACCENTS))


class InputError(LocalProtocolError, ValueError):
    """What a person typed is not an action they may take now; the message says what was
    wrong (:attr:`reason`) and what is legal (:attr:`legal`)."""

    def __init__(self, text: str, reason: str, legal: str) -> None:
        self.text = text
        self.reason = reason
        self.legal = legal
        super().__init__(f"{reason} {legal}".strip())


def parse_input(text: str, observation: Observation) -> Action | Command:
    """What a person typed, as one of ``observation.legal`` or a :class:`Command`.

    Accepts a card in any language's letters (``JH``, ``jh``, ``10h``, ``T♥``; ``VC`` is
    the valet de cœur, :func:`~belote_p2p.app.wording.parse_card`) or its number
    (:func:`card_numbers`); ``take``/``prendre``/``tomar``, ``pass``/``passe``/``paso``, a
    suit (``H``), a bid (``90 H``, ``capot S``, ``generale D``), ``coinche``, ``surcoinche``
    (:func:`~belote_p2p.app.wording.parse_bid`); the commands ``help``, ``last``,
    ``tricks`` and ``quit`` in English, French or Spanish (:data:`COMMANDS`); chat: ``say
    TEXT`` (``dire``, ``decir``) and the quick words (``gg``, ``bravo``, ``oops``...).
    Raises :class:`InputError` saying, in the reader's language, what was wrong and what is
    legal now.
    """
    o = observation
    t = text.strip()
    command = command_of(t)
    if command is not None:
        return Command(command)
    said = chat_line(t)
    if said is not None:
        return Command(CommandKind.CHAT, said)
    word, _space, rest = t.partition(" ")
    if word.lower() in MUTE_WORDS and rest.strip():
        return Command(CommandKind.MUTE, rest.strip())
    legal = legal_text(o)
    if not t:
        raise InputError(text, _("Type a card, a bid or help."), legal)
    if not o.legal:
        raise InputError(text, _("It is not your turn."), "")
    playing = o.phase is Phase.PLAY
    if t.isdigit():
        number = int(t)
        if not playing:
            if any(isinstance(b, Bid) and b.value == number for b in o.legal):
                example = f"{number} {suit_letter(1)}"
                raise InputError(
                    text, _("A bid needs a suit too, e.g. '{bid}'.").format(bid=example), legal
                )
            raise InputError(text, _("Numbers choose a card, and this is the bidding."), legal)
        numbers = card_numbers(o)
        by_number = {n: c for c, n in numbers.items()}
        if number not in by_number:
            held = ", ".join(str(n) for n in sorted(by_number))
            raise InputError(
                text,
                _("There is no card {number}: your cards are {numbers}.").format(
                    number=number, numbers=held
                ),
                legal,
            )
        return _playable(by_number[number], text, o, legal)
    try:
        card = parse_card(t)
    except WordError:
        pass
    else:
        if not playing:
            raise InputError(text, _("This is the bidding: no card is played yet."), legal)
        return _playable(card, text, o, legal)
    try:
        bid = parse_bid(t)
    except WordError:
        words = t.split()
        if len(words) == 2 and words[0].isdigit():
            raise InputError(
                text,
                _(
                    "Bids go by tens: {first}, {second}... up to {last}, then {capot} and "
                    "{generale}."
                ).format(
                    first=BID_VALUES[0],
                    second=BID_VALUES[1],
                    last=BID_VALUES[-3],
                    capot=contract_text(CAPOT_POINTS),
                    generale=contract_text(GENERALE_POINTS),
                ),
                legal,
            ) from None
        raise InputError(
            text, _("{text!r} is not a card, a bid or a command (type help).").format(text=t), legal
        ) from None
    if playing:
        raise InputError(text, _("The bidding is over: play a card."), legal)
    for option in o.legal:
        if option == bid:
            return option
    raise InputError(text, _bid_reason(bid, o), legal)


def _playable(card: Card, text: str, o: Observation, legal: str) -> Card:
    name = card_text(card)
    if card not in o.hand:
        raise InputError(text, _("You do not hold {card}.").format(card=name), legal)
    if card not in o.legal:
        why = play_reason(o)
        refused = _("{card} cannot be played now.").format(card=name)
        raise InputError(text, f"{refused} {why}".strip(), legal)
    return card


def _bid_reason(bid: Bid, o: Observation) -> str:
    said = bid_text(bid, symbols=False)
    if o.phase is Phase.TAKE_FIRST and bid.kind is BidKind.CHOOSE:
        return _("In the first turn you take the turned card or pass; suits come in the second.")
    if o.phase is Phase.TAKE_SECOND and bid.kind is BidKind.CHOOSE:
        text = _("{suit} was the turned suit: name another.").format(suit=suit_name(bid.trump))
        return text[:1].upper() + text[1:]
    if o.phase is Phase.TAKE_SECOND and bid.kind is BidKind.TAKE:
        return _("Everybody refused the turned card: name another suit or pass.")
    if not o.rules.is_coinche and bid.kind in (BidKind.BID, BidKind.COINCHE, BidKind.SURCOINCHE):
        return _("{bid!r} is a coinche bid; this table plays classic.").format(bid=said)
    if o.rules.is_coinche and bid.kind in (BidKind.TAKE, BidKind.CHOOSE):
        return _("This is a coinche auction: bid a value with a suit, e.g. {bid}.").format(
            bid=f"{BID_VALUES[1]} {suit_letter(1)}"
        )
    if bid.kind is BidKind.BID:
        if bid.trump in (NO_TRUMP, ALL_TRUMP):
            return _("This table does not play {trump} bids.").format(trump=trump_text(bid.trump))
        if o.multiplier > 1:
            return _("After a coinche nobody may bid higher.")
        if bid.value <= o.contract:
            return _("A bid must beat {contract}.").format(contract=contract_text(o.contract))
    if bid.kind is BidKind.COINCHE:
        return _("Only an opponent of the last bidder may coinche, once, after a bid.")
    if bid.kind is BidKind.SURCOINCHE:
        return _("Only the coinched bidder's team may surcoinche.")
    return _("{bid!r} is not legal now.").format(bid=said)


TAKE_HELP = N_("Bid: {take}, {pass_}, a suit ({suit}).")
AUCTION_HELP = N_("Coinche: {value}, {capot}, {generale}, {coinche}, {surcoinche}.")
HELP_LINES = (
    N_("Play a card: its number (kept all round) or its name: {examples}."),
    TAKE_HELP,
    AUCTION_HELP,
    N_("last: the last trick · tricks: every trick of the round just played."),
    N_("say TEXT: chat to the table; gg, bravo, oops say just that."),
    N_("mute NAME: no more chat from that player here (again: hear it)."),
    N_("hint (or Tab): the expert's choice and why, if the table allows hints."),
    N_("quit (or Ctrl-C): resign the game, after a confirmation."),
    N_("Enter closes a screen like this one. When your time runs out, a bot plays"),
    N_("that turn for you (unless --autoplay none); you play on at your next turn."),
)  # fmt: skip
"""The help, a line each (the frame cuts a line longer than 76 columns: so must each
translation be), the table's commands in the reader's words: a table's help leaves out the
bidding it does not play (:func:`help_text`)."""
JACK_OF_HEARTS = CARDS[8 + 4]


def help_text(o: Observation | None, rules: RuleSet | None = None) -> str:
    """The help in the reader's language, cards and bids in its letters, with the bidding
    words of the table's rules only (``o``'s, else ``rules``; every line without either:
    classic's take or pass, coinche's auction, none at two seats), and what is legal now,
    if it is our turn."""
    rules = o.rules if o is not None else rules
    left_out = set()
    if rules is not None and (rules.is_coinche or not rules.has_bidding):
        left_out.add(TAKE_HELP)
    if rules is not None and not (rules.is_coinche and rules.has_bidding):
        left_out.add(AUCTION_HELP)
    letters = [suit_letter(s) for s in range(4)]
    jack = card_text(JACK_OF_HEARTS, symbols=False)
    examples = ", ".join((jack, jack.lower(), "10" + letters[1].lower(), "10" + SUIT_SYMBOLS[1]))
    words = {
        "examples": examples,
        "take": pgettext("choice", "take"),
        "pass_": pgettext("choice", "pass"),
        "suit": letters[1],
        "value": f"{BID_VALUES[1]} {letters[1]}",
        "capot": f"{contract_text(CAPOT_POINTS)} {letters[0]}",
        "generale": f"{contract_text(GENERALE_POINTS)} {letters[2]}",
        "coinche": pgettext("choice", "coinche"),
        "surcoinche": pgettext("choice", "surcoinche"),
    }
    lines = [_(line).format(**words) for line in HELP_LINES if line not in left_out]
    if o is not None and o.legal:
        lines.append(legal_text(o))
    return "\n".join(lines)


# -- the terminal rendering of the seat view ----------------------------------------------


class TableView(SeatView):
    """The seat view (:class:`~belote_p2p.app.seatview.SeatView`, the model every table
    renders) drawn in a terminal: rich frames and plain lines."""

    # -- rich ---------------------------------------------------------------------------

    def _panel(self, rows: list[RenderableType], width: int, title: str) -> Panel:
        return Panel(
            Group(*rows), title=title, title_align="left", box=box.ROUNDED, width=width,
            padding=(0, 1),
        )  # fmt: skip

    @staticmethod
    def _line(text: str | Text, style: str = "") -> Text:
        t = text if isinstance(text, Text) else Text(text, style=style)
        t.no_wrap = True
        t.overflow = "ellipsis"
        return t

    def render(
        self,
        width: int = WIDTH,
        *,
        now: float | None = None,
        warn: bool | None = None,
        hold: float = 0.0,
    ) -> RenderableType:
        """The frame: 19 lines of ``width`` columns (at most 80); ``warn``: our time is
        nearly out (the turn line turns red; None: the view's :meth:`warn`); ``hold``: keep
        a completed trick on show that long after it was won (:meth:`trick_on_show`)."""
        width = min(width, WIDTH)
        inner = width - 4
        line = self._line
        warn = self.warn(now) if warn is None else warn
        bids, header = self.bids_line(inner), self.trick_header(now, hold)
        open_hand = self.open_hand_text()
        if open_hand and self.phase is Phase.PLAY:
            bids = open_hand  # the dummy's cards face up, where the bids were
        elif open_hand:
            header = open_hand
        rows: list[RenderableType] = [
            line(self.score_line(), "bold"),
            line(self.contract_line()),
            line(bids, "bold" if bids == open_hand else ""),
            line(header, "bold" if header == open_hand else "dim"),
        ]
        if self.phase in LIVE_PHASES:
            rows.append(self._compass(inner, self.drawn_trick(now, hold)[:2]))
        else:
            area = list(self.summary) or [""]
            area = (area + [""] * COMPASS_LINES)[:COMPASS_LINES]
            rows += [line(a) for a in area]
        rows.append(line(self._last_trick_rich()))
        rows.append(line(self._hand_rich()))
        rows.append(line(self._legal_rich()))
        style = "bold yellow" if self.my_turn() else "bold"
        rows.append(line(self.turn_line(now), "bold white on red" if warn else style))
        news = list(self.news)
        news = [""] * (NEWS_LINES - len(news)) + news
        rows += [line(("· " + n) if n else "", "italic") for n in news]
        return self._panel(rows, width, self.title())

    def render_round(self, width: int = WIDTH, footer: str = "") -> RenderableType:
        """The round screen: the last round taken apart, its last trick, and ``footer``."""
        width = min(width, WIDTH)
        b = self.breakdown
        line = self._line
        if b is None:
            return self._panel([line(footer)], width, self.title())
        head = _("Round {number}: {contract}").format(
            number=b.number, contract=b.contract or _("redeal")
        )
        rows: list[RenderableType] = [line(head, "bold")]
        verdict = b.verdict
        if b.sweep:
            verdict = _("{verdict} ({sweep})").format(verdict=b.verdict, sweep=b.sweep)
        rows.append(line(verdict, "bold yellow" if b.outcome != "failed" else "bold red"))
        order = self.sides()
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=18, no_wrap=True)
        for _side in order:
            grid.add_column(width=(width - 4 - 20) // len(order) - 1, justify="right",
                            no_wrap=True, overflow="ellipsis")  # fmt: skip
        teams = [b.sides[t] for t in order]
        takers = [_("{side} (takers)").format(side=t.name) if t.takers else t.name for t in teams]
        grid.add_row("", *[Text(name, style="bold") for name in takers])
        if b.outcome != "redeal":
            for label, values, style in (
                (_("Tricks"), [t.tricks for t in teams], ""),
                (_("Card points"), [t.card_points for t in teams], ""),
                ("  " + _("with dix de der"), [t.dix_de_der for t in teams], ""),
                (_("Announcements"), [t.announcements for t in teams], ""),
                (_("Belote"), [t.belote for t in teams], ""),
                (_("Total"), [t.total for t in teams], ""),
                (_("Round score"), [t.score for t in teams], "bold"),
            ):
                grid.add_row(label, *[Text(str(v), style=style) for v in values])
        grid.add_row(
            Text(_("Game (to {target})").format(target=b.target), style="bold"),
            *[Text(str(t.game), style="bold") for t in teams],
        )
        rows.append(grid)
        extra: list[str] = []
        if b.pot:
            extra.append(
                _("Litige pot: {pot} points for the next round's winner.").format(pot=b.pot)
            )
        if b.declared:
            # One announcement is never cut: each says whether it scored, at its end.
            announced = _("Announced:")
            line_text = announced
            for said in b.declared:
                if len(line_text) + 3 + len(said) > width - 4 and line_text != announced:
                    extra.append(line_text)
                    line_text = " "
                line_text += (" " if line_text in (announced, " ") else " · ") + said
            extra.append(line_text)
        if b.audit:
            extra.append(b.audit)
        last = b.last_trick
        if last is not None:
            extra.append(_("Last trick: {trick}").format(trick=self.trick_text(last)))
        used = 2 + (len(grid.rows))
        room = FRAME_ROWS - used - 1
        rows += [line(text) for text in extra[:room]]
        used += min(len(extra), room)
        rows += [line("")] * max(0, FRAME_ROWS - used - 1)
        rows.append(line(footer, "bold"))
        return self._panel(rows, width, self.title())

    def render_tricks(self, width: int = WIDTH, footer: str = "") -> RenderableType:
        """Every trick of the round just played (or of this round so far)."""
        width = min(width, WIDTH)
        line = self._line
        b = self.breakdown
        tricks = self.tricks if self.tricks and self.phase is Phase.PLAY else ()
        if not tricks and b is not None:
            tricks = b.tricks
        if self.phase is Phase.PLAY and self.tricks:
            head = _("Tricks of this round")
        elif b is not None:
            head = _("Tricks of round {number}").format(number=b.number)
        else:
            head = _("Tricks")
        rows: list[RenderableType] = [line(head, "bold")]
        if not tricks:
            rows.append(line(_("No trick has been played yet.")))
        # Sixteen tricks (two-handed) go two to a line, to fit the frame.
        per_line = 1 if len(tricks) <= FRAME_ROWS - 2 else 2
        out = Text()
        for i, t in enumerate(tricks, 1):
            out.append(f"{i}. ")
            out.append_text(self._trick_rich(t))
            if i % per_line == 0 or i == len(tricks):
                rows.append(line(out))
                out = Text()
            else:
                out.pad_right((width - 4) // 2 - len(out))
        rows += [line("")] * max(0, FRAME_ROWS - len(rows) - 1)
        rows.append(line(footer, "bold"))
        return self._panel(rows, width, self.title())

    def render_text(self, lines: Sequence[str], width: int = WIDTH, footer: str = "") -> Panel:
        """Any lines (the help) in the frame, with ``footer``."""
        width = min(width, WIDTH)
        rows: list[RenderableType] = [self._line(text) for text in lines[: FRAME_ROWS - 1]]
        rows += [self._line("")] * max(0, FRAME_ROWS - len(rows) - 1)
        rows.append(self._line(footer, "bold"))
        return self._panel(rows, width, self.title())

    def _seat_label(self, seat: int) -> Text:
        t = Text()
        if seat == self.to_act:
            t.append("▶ ", style="bold yellow")
        ours = self.me is not None and self.side_of(seat) == self.side_of(self.me)
        t.append(self.name(seat), style="bold" if ours else "")
        if seat != self.me and self.fingerprints[seat]:
            t.append(" " + self.fingerprints[seat][:9], style="dim")
        if seat == self.dealer:
            t.append(" " + _("(dealer)"), style="dim")
        return t

    def _slot(self, seat: int, drawn: tuple[dict[int, Card], int | None]) -> Text:
        cards, master = drawn
        if seat not in cards:
            return Text("·", style="dim")
        c = cards[seat]
        if seat == master:
            t = styled_card(c, "bold reverse")
            t.append(" " + MASTER_MARK, style="bold yellow")
            return t
        return styled_card(c, "bold")

    def _compass(self, inner: int, drawn: tuple[dict[int, Card], int | None]) -> RenderableType:
        """The table seen from our seat: four seats about the trick, the next to play on
        our right; three with nobody across; two face to face, each above its piles."""
        s = self.seat
        if self.seats == 2:
            return self._face_to_face(inner, drawn)
        right = (s + 1) % self.seats
        top = (s + 2) % self.seats if self.seats == 4 else None
        left = (s + self.seats - 1) % self.seats
        grid = Table.grid(expand=True, padding=0)
        side = (inner - 24) // 2
        grid.add_column(width=side, justify="left", no_wrap=True, overflow="ellipsis")
        grid.add_column(width=24, justify="center", no_wrap=True)
        grid.add_column(width=inner - 24 - side, justify="right", no_wrap=True,
                        overflow="ellipsis")  # fmt: skip
        middle = Text.assemble(self._slot(left, drawn), "          ", self._slot(right, drawn))
        grid.add_row("", self._seat_label(top) if top is not None else "", "")
        grid.add_row("", self._slot(top, drawn) if top is not None else "", "")
        grid.add_row(self._seat_label(left), middle, self._seat_label(right))
        grid.add_row("", self._slot(s, drawn), "")
        grid.add_row("", self._seat_label(s), "")
        return grid

    def _face_to_face(
        self, inner: int, drawn: tuple[dict[int, Card], int | None]
    ) -> RenderableType:
        """Two-handed: the other player and its piles above the trick, ours below."""
        other = 1 - self.seat
        grid = Table.grid(expand=True, padding=0)
        grid.add_column(width=inner, justify="center", no_wrap=True, overflow="ellipsis")
        grid.add_row(self._seat_label(other))
        grid.add_row(self._piles_rich(other))
        grid.add_row(Text.assemble(self._slot(other, drawn), "   ", self._slot(self.seat, drawn)))
        grid.add_row(self._piles_rich(self.seat))
        grid.add_row(self._seat_label(self.seat))
        return grid

    def _piles_rich(self, seat: int) -> Text:
        """Two-handed: ``seat``'s eight piles, the card on top of each (numbered for ours,
        as it is played by number) and ``▪`` for a face-down card still under it."""
        out = Text()
        numbers = seat == self.me and self.phase is Phase.PLAY
        for i, (top, hidden) in enumerate(self.observation().piles(seat), 1):
            if i > 1:
                out.append("  ")
            if numbers:
                out.append(f"{i} ", style="dim")
            if top is None:
                out.append("·" if not hidden else "", style="dim")
            else:
                out.append_text(styled_card(top, "bold"))
            if hidden:
                out.append(HIDDEN_MARK, style="dim")
        return out

    def _last_trick_rich(self) -> Text:
        t = self.last_trick
        head, _sep, tail = _("Last trick: {trick}").partition("{trick}")
        out = Text(head, style="dim")
        if t is None:
            out.append(_("none yet"), style="dim")
        else:
            out.append_text(self._trick_rich(t))
        out.append(tail, style="dim")
        return out

    def _trick_rich(self, t: Trick) -> Text:
        """``Bob 7♥  You A♥  → You (11)``, the winner's card in bold."""
        out = Text()
        for i, c in enumerate(t.cards):
            seat = (t.leader + i) % self.seats
            out.append(f"{self.name(seat)} ")
            out.append_text(styled_card(c, "bold" if seat == t.winner else ""))
            out.append("  ")
        out.append(f"→ {self.name(t.winner)} ({t.points})")
        return out

    def _hand_rich(self) -> Text:
        whose = self.deciding_for()
        if whose == self.seat:
            label = _("Hand")
        else:
            label = _("{name}'s hand").format(name=self.names[whose])
        out = Text(label + " ", style="bold")
        hand = self.shown_hand()
        if not hand:
            out.append(_("(none)"), style="dim")
            return out
        numbers = self.numbers()
        marking = self.my_turn() and self.phase is Phase.PLAY
        previous = -1
        for c in hand:
            if previous >= 0 and c >> 3 != previous:
                out.append("│ ", style="dim")
            previous = c >> 3
            number = f"{numbers[c]} " if c in numbers else ""
            if marking and c not in self.legal:
                out.append(number, style="dim")
                out.append(card_text(c), style=f"{card_style(c)} dim".strip())
            else:
                style = "bold underline" if marking else "bold"
                out.append(number, style="cyan" if marking else "dim")
                out.append(card_text(c), style=f"{card_style(c)} {style}".strip())
            out.append(" ")
        if self.phase is Phase.PLAY and 0 <= self.trump < 4:
            trump = _("trump {trump}").format(trump=trump_text(self.trump))
            out.append(" " + trump, style=card_style(Card(self.trump * 8)))
        return out

    def _legal_rich(self) -> Text:
        if not self.my_turn():
            return Text("")
        if self.phase is Phase.PLAY:
            numbers = self.numbers()
            out = Text(_("Legal:") + " ", style="bold")
            for c in self.shown_hand():
                if c in self.legal:
                    out.append(f"{numbers[c]} ")
                    out.append_text(styled_card(c, "bold"))
                    out.append("  ")
            return out
        return Text(_("You may: {bids}").format(bids=self._bid_options_now()))

    # -- plain --------------------------------------------------------------------------

    def plain_lines(self, *, now: float | None = None) -> list[str]:
        """The table as plain lines, one fact a line (no colour, suit letters)."""

        def sentence(text: str) -> str:
            text = to_plain(text).rstrip(".")
            return text + "." if text else ""

        lines = [self.title().replace(" · ", ", ")]
        lines.append(_("Score: {scores}").format(scores=self.sides_text(self.scores)))
        lines.append(_("Target: {target}").format(target=self.rules.target))
        if self.pending:
            lines.append(_("Litige pot: {pot}.").format(pot=self.pending))
        lines.append(self.contract_line())
        if self.bids and self.phase is not Phase.PLAY:
            lines.append(self.bids_line(10_000).replace(" · ", "; "))
        if self.phase is Phase.PLAY:
            lines.append(self.trick_header(now).replace(" · ", ", "))
            cards = self.trick_cards()
            if cards:
                played = ", ".join(
                    f"{self.name((self.leader + i) % self.seats)} {card_text(c)}"
                    for i, c in enumerate(self.trick)
                )
                lines.append(_("On the table: {cards}").format(cards=played))
                master = self.trick_master()
                if master is not None:
                    lines.append(
                        _("Master: {name} with {card}").format(
                            name=self.name(master), card=card_text(cards[master])
                        )
                    )
        if self.last_trick is not None:
            lines.append(self.last_trick_text())
        if self.phase not in LIVE_PHASES:
            lines += list(self.summary)
        if self.phase is Phase.PLAY:
            lines += [self.piles_text(s) for s in (1 - self.seat, self.seat) if self.seats == 2]
        if self.dummy_line:
            lines.append(self.dummy_line)
        open_hand = self.open_hand_text()
        if open_hand and self.deciding_for() == self.seat:
            lines.append(open_hand)
        hand = self.shown_hand()
        if hand:
            numbers = self.numbers()
            shown = ", ".join(
                f"{numbers[c]} {card_text(c)}" if c in numbers else card_text(c) for c in hand
            )
            whose = self.deciding_for()
            if whose == self.seat:
                lines.append(_("Hand: {cards}").format(cards=shown))
            else:
                lines.append(
                    _("{name}'s open hand: {cards}").format(name=self.names[whose], cards=shown)
                )
        if self.my_turn():
            lines.append(legal_text(self.observation()))
        lines.append(self.turn_line(now))
        return [sentence(line) for line in lines if line]


# -- the terminal -------------------------------------------------------------------------


class TerminalGone(BeloteError, OSError):
    """The terminal closed under us (reading it fails): the person is gone."""


def detach_output() -> None:
    """The terminal is gone: what is still printed (the game's end, the XP) goes nowhere
    instead of failing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    os.close(devnull)


async def _readable(fd: int) -> None:
    """Wait until ``fd`` can be read without blocking (a regular file always can; epoll
    refuses to watch one)."""
    try:
        await trio.lowlevel.wait_readable(fd)
    except OSError:
        await trio.lowlevel.checkpoint()


class Keyboard:
    """The terminal's keys as they are pressed: cbreak mode (no echo, no line editing by
    the terminal, Ctrl-C still a signal), so that the table can redraw while a line is
    typed and show it again. A context manager: the terminal's mode comes back on exit."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self._saved: list[Any] | None = None

    @staticmethod
    def available(fd: int = 0) -> bool:
        try:
            import termios  # noqa: F401  (POSIX only)
        except ImportError:
            return False
        return os.isatty(fd)

    def __enter__(self) -> Keyboard:
        import termios
        import tty

        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc: object) -> None:
        import termios

        if self._saved is not None:
            with contextlib.suppress(OSError, termios.error):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    async def chunks(self) -> AsyncIterator[str]:
        """What is typed, as it comes; ends when the terminal closes."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while True:
            await _readable(self.fd)
            try:
                data = os.read(self.fd, 1024)
            except OSError as exc:
                raise TerminalGone(str(exc)) from None
            if not data:  # no end-of-file key in cbreak mode: the terminal hung up
                raise TerminalGone("the terminal closed")
            yield decoder.decode(data)


async def read_lines(fd: int = 0) -> AsyncIterator[str]:
    """Lines from ``fd`` (the terminal in its own line mode, a pipe or a file); ends at
    the end of input."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buffer = ""
    while True:
        await _readable(fd)
        try:
            data = os.read(fd, 4096)
        except OSError as exc:
            raise TerminalGone(str(exc)) from None
        if not data:
            if buffer:
                yield buffer
            return
        buffer += decoder.decode(data)
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            yield line.rstrip("\r")


class Control(Protocol):
    """What the table asks of the game besides decisions (a peer's
    :class:`~belote_p2p.net.peer.PeerControl`, or a local game's)."""

    def resign(self) -> None: ...
    def chat(self, text: str) -> None: ...


@dataclass
class _Pending:
    """A decision the person owes."""

    observation: Observation
    deadline: float | None
    answer: trio.MemorySendChannel[Action | Resign]


class TerminalUI:
    """A :class:`TableView` on a terminal (see the module docstring).

    :meth:`run` reads the input and keeps the clock (run it as a task for the whole game);
    :meth:`on_event` and :meth:`on_status` are the peer's callbacks; :meth:`decide` asks
    for a decision; ``control`` (the peer's) carries a resignation or a chat line; Ctrl-C
    goes to :meth:`interrupt`, a closed terminal to :meth:`hangup`.

    ``live``: redraw the frame in place every second (default: on a real terminal, not
    ``plain``). Otherwise a frame is printed at each event, or, ``plain``, each event's
    facts as lines. ``deadline_for(seat)``: a seat's decision deadline in seconds, for the
    countdown of the seat to act; ``standin``: the bot that plays for us when our time runs
    out (None: nobody does), for what we tell the person.
    """

    def __init__(
        self,
        view: TableView,
        *,
        console: Console | None = None,
        plain: bool = False,
        live: bool | None = None,
        control: Control | None = None,
        clock: Callable[[], float] = time.monotonic,
        hold: float = ROUND_HOLD,
        deadline_for: Callable[[int], float] | None = None,
        standin: str | None = None,
        fd: int = 0,
        hints: Callable[[Observation], Awaitable[str]] | None = None,
    ) -> None:
        self.view = view
        self.hints = hints
        """The hint of a decision, in words (None: this table allows none)."""
        self._nursery: trio.Nursery | None = None
        self.plain = plain
        self.console = console or Console(
            highlight=False, no_color=plain, emoji=False, soft_wrap=plain
        )
        self.live = (not plain and self.console.is_terminal) if live is None else live
        self.control = control
        self.clock = clock
        self.hold = hold
        self.deadline_for = deadline_for
        self.standin = standin
        self.fd = fd
        self.messages: deque[str] = deque(maxlen=40)
        self.overlay: str | None = None
        """``round``, ``tricks``, ``help`` or ``game``: a screen over the table."""
        self.overlay_until: float | None = None
        self.pending: _Pending | None = None
        self.confirming = False
        """A resignation was asked: the next line (or Ctrl-C) confirms it."""
        self.resigning = False
        self.buffer = ""
        """What is being typed (live keyboard)."""
        self.limiter = ChatLimiter(clock)
        self._warned = False
        self._cleared: tuple[int, int] | None = None
        self._gone = False
        self._escape = ""

    # -- output -------------------------------------------------------------------------

    @property
    def out(self) -> IO[str]:
        return self.console.file

    def _write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:
            self._gone = True  # the terminal is gone: nothing more to show

    def _print(self, text: str | RenderableType) -> None:
        if self._gone:
            return
        try:
            if isinstance(text, str):
                self.console.print(Text(to_plain(text) if self.plain else text), highlight=False)
            else:
                self.console.print(text)
        except OSError:
            self._gone = True

    def say(self, text: str) -> None:
        """A message for the person: under the frame (live), else a line."""
        self.messages.append(text)
        if self.live:
            self.redraw()
        else:
            self._print(text)
            self._prompt_again()

    def prompt(self) -> str:
        if self.confirming:
            return _("Resign and leave the game? Type yes to confirm> ")
        if self.pending is not None:
            card = self.pending.observation.phase is Phase.PLAY
            if self.pending.deadline is None:
                return _("Your card> ") if card else _("Your bid> ")
            left = max(0, round(self.pending.deadline - self.clock()))
            if card:
                return _("Your card ({seconds} s left)> ").format(seconds=left)
            return _("Your bid ({seconds} s left)> ").format(seconds=left)
        return "> "

    def _prompt_again(self) -> None:
        if not self.live and (self.pending is not None or self.confirming):
            self._write(self.prompt())

    def _footer(self) -> str:
        now = self.clock()
        if self.overlay == "game":
            return self.view.ended or _("Game over.")
        parts = []
        if self.pending is not None:
            left = self.view.seconds_left(now)
            turn = _("Your turn")
            if left is not None:
                turn = _("{turn} ({seconds} s left)").format(turn=turn, seconds=left)
            parts.append(turn)
        if self.overlay_until is not None:
            left = max(0, round(self.overlay_until - now))
            parts.append(_("table in {seconds} s").format(seconds=left))
        parts.append(_("Enter: the table"))
        if self.overlay == "round":
            parts.append(_("tricks: all tricks"))
        return " · ".join(parts)

    def renderable(self, width: int = WIDTH) -> RenderableType:
        """What the frame shows now: a screen over the table, or the table."""
        view, footer = self.view, self._footer()
        if self.overlay in ("round", "game"):
            return view.render_round(width, footer)
        if self.overlay == "tricks":
            return view.render_tricks(width, footer)
        if self.overlay == "help":
            o = self.pending.observation if self.pending else None
            return view.render_text(help_text(o, view.rules).split("\n"), width, footer)
        hold = TRICK_HOLD if self.live else 0.0
        return view.render(width, now=self.clock(), warn=self._warning(), hold=hold)

    def _warning(self) -> bool:
        p = self.pending
        if p is None or p.deadline is None:
            return False
        return p.deadline - self.clock() <= WARN_SECONDS

    def redraw(self, *, clear: bool = False) -> None:
        """Draw the frame: in place (live), or printed anew."""
        if self._gone:
            return
        if self.plain:
            return
        width = min(self.console.width, WIDTH)
        if not self.live:
            self._print(self.renderable(width))
            return
        height = self.console.height
        try:
            with self.console.capture() as capture:
                self.console.print(self.renderable(width))
        except OSError:
            self._gone = True
            return
        frame = capture.get().rstrip("\n").split("\n")
        room = max(0, height - len(frame) - 1)
        lines: list[str] = []
        for message in self.messages:
            for part in message.split("\n"):
                lines += textwrap.wrap(part, width) or [""]
        shown = lines[-room:] if room else []
        size = (width, height)
        head = "\x1b[H"
        if clear or self._cleared != size:
            head = "\x1b[2J\x1b[H"
            self._cleared = size
        body = "".join(line + "\x1b[K\r\n" for line in frame + shown)
        self._write(head + body + self.prompt() + self.buffer + "\x1b[K\x1b[J")

    def _echo(self) -> None:
        """The prompt line again, with what is being typed (live)."""
        self._write("\r" + self.prompt() + self.buffer + "\x1b[K")

    def finish(self) -> None:
        """The game is over for this seat: the last frame, then the sheet, as lines."""
        if self.live:
            self.redraw()
            self._write("\r\n")
        if self.view.sheet and not self.plain:
            self._print(self.view.sheet)

    # -- events -------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """Show one session event (the peer's ``on_event``)."""
        notices = self.view.apply(event)
        if isinstance(event, ActionTaken) and self.deadline_for is not None:
            nxt = event.state.to_act
            if nxt != self.view.seat and 0 <= nxt < self.view.seats and not event.state.is_over:
                self.view.set_deadline(nxt, self.clock() + self.deadline_for(nxt))
        if isinstance(event, RoundAudited) and self.live and not event.state.is_over:
            self.overlay = "round"
            self.overlay_until = self.clock() + self.hold if self.hold > 0 else None
        if isinstance(event, GameOver) or (isinstance(event, RoundAudited) and event.state.is_over):
            # The last round's screen is the game's at once: no "Enter: the table" in
            # it, whose Enter would answer the rematch question that comes next.
            self.overlay = "game"
            self.overlay_until = None
        if self.plain:
            for notice in notices:
                self._print(notice.text)
            if isinstance(event, GameOver | GameAbandoned) and self.view.sheet:
                self._print(self.view.sheet)
            return
        if isinstance(event, DecisionNeeded):
            return  # decide() draws it
        if not self.live:
            if isinstance(event, RoundAudited):
                self._print(self.view.render_round(min(self.console.width, WIDTH)))
            elif not isinstance(event, RoundDealt | GameOver):
                self.redraw()
            return
        self.redraw()

    def on_status(self, status: PeerStatus) -> None:
        """What the game waits on (the peer's ``on_status``): countdowns, late seats,
        lost and regained connections, by name (:meth:`SeatView.apply_status`)."""
        notices = self.view.apply_status(status, self.clock())
        if self.live:
            if notices:
                self.redraw()
            return
        for notice in notices:
            self.say(notice.text)

    # -- decisions ----------------------------------------------------------------------

    async def decide(
        self, observation: Observation, deadline: float | None = None
    ) -> Action | Resign:
        """Ask the person for this decision; ``deadline`` is a ``clock()`` instant (shown as
        a countdown). Cancel the call to stop asking (the stand-in then plays)."""
        self.view.observe(observation)
        self.view.set_deadline(observation.seat, deadline)
        send, receive = trio.open_memory_channel[Action | Resign](1)
        self.pending = _Pending(observation, deadline, send)
        self._warned = False
        if self.plain:
            for line in self.view.plain_lines(now=self.clock()):
                self._print(line)
        elif not self.live:
            self.redraw()
        else:
            self.redraw()
        self._prompt_again()
        try:
            return await receive.receive()
        finally:
            self.pending = None
            self.view.set_deadline(observation.seat, None)

    def autoplayed(self, observation: Observation, action: Action) -> None:
        """Our time ran out and the stand-in played ``action``: say so."""
        self.overlay = None
        self.say(
            _(
                "Time's up: the {bot} bot played {action} for you. You play on at your next turn."
            ).format(bot=self.standin or _("stand-in"), action=action_text(action))
        )

    # -- input --------------------------------------------------------------------------

    def handle_line(self, line: str) -> None:
        """One line the person typed."""
        if self.confirming:
            self.confirming = False
            if is_yes(line):
                self._resign()
            else:
                self.say(_("Not resigning: the game goes on."))
            return
        if not line.strip():
            self.view.dismiss_trick()
            if self.overlay is not None and self.overlay != "game":
                self.overlay = None
                self.overlay_until = None
            self.redraw()
            self._prompt_again()
            return
        pending = self.pending
        observation = pending.observation if pending else self.view.observation(legal=())
        try:
            answer = parse_input(line, observation)
        except InputError as exc:
            self.say(str(exc))
            return
        if isinstance(answer, Command):
            self._command(answer)
            return
        if pending is not None:
            self.overlay = None
            self.overlay_until = None
            self.pending = None
            self.messages.clear()  # what was said about the typing is done with
            pending.answer.send_nowait(answer)
            self.redraw()

    def _command(self, command: Command) -> None:
        kind = command.kind
        if kind is CommandKind.HELP:
            if self.live:
                self._show("help")
            else:
                o = self.pending.observation if self.pending else None
                self.say(help_text(o, self.view.rules))
        elif kind is CommandKind.LAST:
            self.say(self.view.last_trick_text(symbols=not self.plain))
        elif kind is CommandKind.TRICKS:
            if self.live:
                self._show("tricks")
            else:
                self.say("\n".join(self._tricks_lines()))
        elif kind is CommandKind.HINT:
            self._ask_hint()
        elif kind is CommandKind.MUTE:
            self.say(self.view.toggle_mute(command.text))
        elif kind is CommandKind.QUIT:
            self.confirming = True
            if self.live:
                self.redraw()
            else:
                self._write(self.prompt())
        else:
            why = self.limiter.check(command.text)
            if why is not None:
                self.say(why)
            elif self.control is None:
                self.say(_("Nobody hears you here."))
            else:
                self.control.chat(command.text)

    def _ask_hint(self) -> None:
        """Ask for a hint on the decision we owe; it is said when it comes (the search runs
        apart, and the person may play meanwhile: a hint for a decision already made is
        dropped)."""
        if self.hints is None:
            self.say(_("Hints are off at this table (the host's --hints turns them on)."))
            return
        pending = self.pending
        if pending is None or self._nursery is None:
            self.say(_("A hint is for your turn."))
            return
        asking = _("Asking the expert...")
        self.say(asking)
        self._nursery.start_soon(self._hint, pending, asking)

    async def _hint(self, pending: _Pending, asking: str) -> None:
        assert self.hints is not None
        text = await self.hints(pending.observation)
        if self.pending is pending:
            if asking in self.messages:  # under the frame, the hint takes the wait's place
                self.messages.remove(asking)
            self.say(text)

    def _show(self, overlay: str) -> None:
        self.overlay = overlay
        self.overlay_until = None
        self.redraw()

    def _tricks_lines(self) -> list[str]:
        view = self.view
        b = view.breakdown
        tricks = view.tricks if view.phase is Phase.PLAY and view.tricks else ()
        if not tricks and b is not None:
            tricks = b.tricks
        if not tricks:
            return [_("No trick has been played yet.")]
        symbols = not self.plain
        return [
            _("Trick {number}: {trick}").format(number=i, trick=view.trick_text(t, symbols=symbols))
            for i, t in enumerate(tricks, 1)
        ]

    def _resign(self) -> None:
        if self.resigning:
            return
        self.resigning = True
        self.view.resign()
        self.confirming = False
        self.say(_("You resign: leaving the game."))
        if self.control is not None:
            self.control.resign()
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.answer.send_nowait(Resign())

    def interrupt(self) -> None:
        """Ctrl-C: the first asks whether to resign, the second resigns."""
        if self.confirming or self.resigning:
            self._resign()
            return
        self.confirming = True
        self.buffer = ""
        self.messages.append(
            _("Ctrl-C: resign the game? Ctrl-C again or yes resigns; Enter plays on.")
        )
        if self.live:
            self.redraw()
        else:
            self._print(self.messages[-1])
            self._write(self.prompt())

    def hangup(self) -> None:
        """The terminal closed: nothing more is shown; the seat resigns."""
        if not self._gone and self.fd == 0:
            detach_output()
        self._gone = True
        self._resign()

    def input_closed(self) -> None:
        """The end of input (the terminal or the pipe closed): a resignation."""
        if not self.resigning:
            self.say(_("The input closed: you resign."))
            self._resign()

    def _key(self, ch: str) -> str | None:
        """One key of the live keyboard; a finished line, if Enter."""
        if self._escape:
            self._escape += ch
            if len(self._escape) > 1 and (ch.isalpha() or ch == "~" or len(self._escape) > 8):
                self._escape = ""  # an arrow or function key: ignored
            return None
        if ch == "\x1b":
            self._escape = ch
            return None
        if ch in "\r\n":
            line, self.buffer = self.buffer, ""
            return line
        if ch == "\t":
            return "hint"
        if ch in "\x7f\x08":
            self.buffer = self.buffer[:-1]
        elif ch == "\x15":
            self.buffer = ""
        elif ch == "\x0c":
            self.redraw(clear=True)
        elif ch == "\x04":
            if not self.buffer:
                return "quit"
        elif ch.isprintable() and len(self.buffer) < 300:
            self.buffer += ch
        return None

    async def run(
        self,
        lines: AsyncIterator[str] | None = None,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Read the person's input (``lines``, else the terminal) and keep the clock, until
        cancelled; the end of input is a resignation (:meth:`input_closed`)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._ticker)
            task_status.started()
            try:
                await self._read_input(lines)
            except TerminalGone:
                self.hangup()
            else:
                self.input_closed()
            await trio.sleep_forever()

    async def _read_input(self, lines: AsyncIterator[str] | None) -> None:
        if lines is not None:
            async for line in lines:
                self.handle_line(line)
        elif self.live and Keyboard.available(self.fd):
            with Keyboard(self.fd) as keyboard:
                async for chunk in keyboard.chunks():
                    self.key_pressed()
                    for ch in chunk:
                        typed = self._key(ch)
                        if typed is not None:
                            self.handle_line(typed)
                    self._echo()
        else:
            async for line in read_lines(self.fd):
                self.handle_line(line)

    def key_pressed(self) -> None:
        """Any key puts the completed trick on show away (the person saw it); the key
        itself goes on to the line being typed."""
        if self.view.trick_on_show(self.clock(), TRICK_HOLD) is not None:
            self.view.dismiss_trick()
            self.redraw()

    async def _ticker(self) -> None:
        """Every second: the countdowns, the round screen's time, the warning."""
        while True:
            await trio.sleep(self._next_tick())
            self.tick()

    def _next_tick(self) -> float:
        """A second, or less when a completed trick on show is to leave the table sooner."""
        view = self.view
        if not self.live or view.completed_at is None or not view.trick:
            return 1.0
        return min(1.0, max(0.05, view.completed_at + TRICK_HOLD - self.clock()))

    def tick(self) -> None:
        now = self.clock()
        if self.overlay_until is not None and now >= self.overlay_until:
            self.overlay = None
            self.overlay_until = None
        p = self.pending
        if p is not None and p.deadline is not None and not self._warned:
            left = p.deadline - now
            if left <= WARN_SECONDS:
                self._warned = True
                seconds = max(0, round(left))
                if self.standin:
                    text = _("{seconds} s left, then the {bot} bot plays for you.").format(
                        seconds=seconds, bot=self.standin
                    )
                else:
                    text = _("{seconds} s left, then you are late.").format(seconds=seconds)
                if self.live:
                    self._write("\a")
                    self.messages.append(text)
                else:
                    self.say(text)
        if self.live and (self.view.ended is None or self.overlay is not None):
            self.redraw()


class TuiPlayer:
    """A :class:`~belote_p2p.players.player.Player` answered by a person through a
    :class:`TerminalUI`.

    ``turn_seconds``: the time a person has for a decision, shown as a countdown (None:
    no countdown). A resignation raises :class:`Resigned`, which the peer treats as a
    resignation: it signs its own seat as gone.
    """

    def __init__(self, ui: TerminalUI, *, turn_seconds: float | None = None) -> None:
        self.ui = ui
        self.turn_seconds = turn_seconds

    def new_game(self, rules: RuleSet, seat: int) -> None:
        pass

    def new_round(self, observation: Observation) -> None:
        pass

    async def decide(self, observation: Observation) -> Action:
        deadline = None if self.turn_seconds is None else self.ui.clock() + self.turn_seconds
        answer = await self.ui.decide(observation, deadline)
        if isinstance(answer, Resign):
            raise Resigned("the player resigned")
        return answer
