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
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO, Any, Protocol

import trio
from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from belote_p2p.errors import BeloteError, LocalProtocolError
from belote_p2p.game.announcements import Announcement
from belote_p2p.game.cards import SUIT_LETTERS, SUIT_SYMBOLS, Card
from belote_p2p.game.engine import (
    BID_VALUES,
    Action,
    Bid,
    BidKind,
    Phase,
    RoundRecord,
    State,
    Trick,
    contract_word,
    other_belote_card,
)
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import RuleSet
from belote_p2p.game.scoring import CAPOT_POINTS, Outcome
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP, STRENGTH, TRUMP_LETTERS, winning_index
from belote_p2p.net.peer import PeerStatus
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
    ChatMessage,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    PeerFault,
    RoundAudited,
    RoundDealt,
    TableReady,
)
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.table import TableDefinition

from .chat import ChatLimiter, chat_line
from .display import format_sheet, seat_names
from .roundview import RoundBreakdown, round_breakdown
from .wording import (
    SUIT_NAMES,
    action_text,
    announcement_text,
    bid_contract_text,
    bid_text,
    card_text,
    sweep_text,
    trump_text,
)

WIDTH = 80
"""The frame fits an 80x24 terminal: 19 lines, which leaves room for messages and the
prompt."""
FRAME_ROWS = 17
"""Rows inside the frame's border."""
NEWS_LINES = 4
COMPASS_LINES = 5
DISPLAY_SUITS = (0, 1, 3, 2)
"""♠ ♥ ♣ ♦: black and red alternate in the hand."""
RED = "red"
MASTER_MARK = "★"
HIDDEN_MARK = "▪"
"""Two-handed: a face-down card still lies in this pile."""
LIVE_PHASES = (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY)
"""Phases of a round being bid or played (the table is drawn, not a summary)."""
ROUND_HOLD = 8.0
"""Seconds the round screen stays up (unless Enter dismisses it first)."""
WARN_SECONDS = 10
"""Seconds left on our turn when the countdown turns red and the bell rings."""


def card_style(c: Card) -> str:
    return RED if c >> 3 in (1, 2) else ""


def styled_card(c: Card, extra: str = "") -> Text:
    return Text(card_text(c), style=f"{card_style(c)} {extra}".strip())


PLAIN_TEXT = str.maketrans(
    {**{sym: SUIT_LETTERS[i] for i, sym in enumerate(SUIT_SYMBOLS)}, MASTER_MARK: "", "▶": "",
     "…": "...", "·": ",", "→": "won by", "×": "x", "–": "-"}
)  # fmt: skip


def to_plain(text: str) -> str:
    """``text`` for a plain log or a screen reader: suit letters, no marks or arrows."""
    return " ".join(text.translate(PLAIN_TEXT).split())


def display_hand(hand: Sequence[Card], trump: int) -> tuple[Card, ...]:
    """The hand in the order it is shown: by suit (♠ ♥ ♣ ♦), then weakest to strongest
    under the current trump (plain order before trump is known)."""
    strength = STRENGTH[trump if trump >= 0 else NO_TRUMP]
    return tuple(sorted(hand, key=lambda c: (DISPLAY_SUITS.index(c >> 3), strength[c])))


def round_hand(o: Observation) -> tuple[Card, ...]:
    """Every card the seat held when the play began: its hand and what it played since."""
    played: list[Card] = []
    for t in o.tricks:
        played.append(t.cards[(o.seat - t.leader) % o.seats])
    mine = (o.seat - o.leader) % o.seats
    if o.trick and mine < len(o.trick):
        played.append(o.trick[mine])
    return tuple(o.hand) + tuple(played)


def card_numbers(o: Observation) -> dict[Card, int]:
    """The number of each card of the seat's hand during the play: given once, when the
    play begins (the whole hand by suit, under the trump), and kept for the round, so that
    a number typed from memory never plays another card. Two-handed, a card's number is
    its pile's (1 to 8), which stays the pile's when the card below is turned up."""
    if o.phase is not Phase.PLAY:
        return {}
    piles = o.piles(o.seat)
    if piles:
        return {c: i for i, (c, _) in enumerate(piles, 1) if c is not None and c in o.hand}
    full = display_hand(round_hand(o), o.trump)
    return {c: i for i, c in enumerate(full, 1) if c in o.hand}


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


@dataclass(frozen=True, slots=True)
class Command:
    kind: CommandKind
    text: str = ""
    """What to say, for :attr:`CommandKind.CHAT`."""


@dataclass(frozen=True, slots=True)
class Resign:
    """The person left the game: the driver signs it (``session.abandon(own_seat)``)."""


COMMANDS = {
    "help": CommandKind.HELP,
    "?": CommandKind.HELP,
    "last": CommandKind.LAST,
    "tricks": CommandKind.TRICKS,
    "quit": CommandKind.QUIT,
    "exit": CommandKind.QUIT,
    "resign": CommandKind.QUIT,
}


class InputError(LocalProtocolError, ValueError):
    """What a person typed is not an action they may take now; the message says what was
    wrong (:attr:`reason`) and what is legal (:attr:`legal`)."""

    def __init__(self, text: str, reason: str, legal: str) -> None:
        self.text = text
        self.reason = reason
        self.legal = legal
        super().__init__(f"{reason} {legal}".strip())


def legal_text(o: Observation) -> str:
    """What the seat may do now, in the words it would type (letters, not symbols)."""
    if not o.legal:
        return "It is not your turn."
    if o.phase is Phase.PLAY:
        numbers = card_numbers(o)
        cards = ", ".join(
            f"{numbers[c]} {card_text(c, symbols=False)}"
            for c in display_hand(o.hand, o.trump)
            if c in o.legal
        )
        return f"Legal now: {cards}."
    return f"Legal now: {bid_options(o)}."


def bid_options(o: Observation, *, short: bool = False) -> str:
    """The bids the seat may make, ``pass`` first (``short``: for the frame's one line)."""
    bids = [a for a in o.legal if isinstance(a, Bid)]
    kinds = {b.kind for b in bids}
    parts: list[str] = []
    if BidKind.PASS in kinds:
        parts.append("pass")
    if BidKind.TAKE in kinds and o.turned is not None:
        parts.append(f"take (the {card_text(o.turned, symbols=False)})")
    chosen = [b.trump for b in bids if b.kind is BidKind.CHOOSE]
    if chosen:
        parts.append("a suit: " + " ".join(SUIT_LETTERS[s] for s in chosen))
    for kind in (BidKind.COINCHE, BidKind.SURCOINCHE):
        if kind in kinds:
            parts.append(kind.value)
    values = sorted({b.value for b in bids if b.kind is BidKind.BID})
    if values:
        suits = sorted({b.trump for b in bids if b.kind is BidKind.BID})
        letters = "/".join(TRUMP_LETTERS[t] for t in suits)
        low = [v for v in values if v < CAPOT_POINTS]
        named = [contract_word(v) for v in values if v >= CAPOT_POINTS]
        span = ""
        if low:
            span = f"{low[0]}" if len(low) == 1 else f"{low[0]}-{low[-1]}"
            if not short and len(low) > 1:
                span += " by tens"
        what = ", ".join([span, *named] if span else named)
        example = low[0] if low else named[0]
        if short:
            parts.append(f"{what} + {letters} (e.g. {example} {TRUMP_LETTERS[suits[0]]})")
        else:
            parts.append(
                f"a bid {what} with a suit {letters} (e.g. {example} {TRUMP_LETTERS[suits[0]]})"
            )
    return ", ".join(parts)


def play_reason(o: Observation) -> str:
    """Why the legal cards are the only ones (from the legal set: always true)."""
    if not o.trick or o.trump < 0:
        return ""
    led = o.trick[0] >> 3
    legal = [c for c in o.legal if isinstance(c, Card)]
    trump = o.trump

    def is_trump(c: Card) -> bool:
        return trump == ALL_TRUMP or c >> 3 == trump

    if legal and all(c >> 3 == led for c in legal):
        if is_trump(o.trick[0]) and len(legal) < sum(1 for c in o.hand if c >> 3 == led):
            return f"Trump was led: you must play a higher trump ({SUIT_NAMES[led]})."
        return f"You must follow {SUIT_NAMES[led]}."
    if legal and all(is_trump(c) for c in legal) and trump < 4:
        return f"You have no {SUIT_NAMES[led]}: you must trump ({SUIT_NAMES[trump]})."
    return ""


def parse_input(text: str, observation: Observation) -> Action | Command:
    """What a person typed, as one of ``observation.legal`` or a :class:`Command`.

    Accepts a card (``JH``, ``jh``, ``10h``, ``T♥``) or its number (:func:`card_numbers`);
    ``take``, ``pass``, a suit (``H``), a bid (``90 H``, ``capot S``, ``generale D``),
    ``coinche``, ``surcoinche``; the commands ``help``, ``last``, ``tricks`` and ``quit``;
    chat: ``say TEXT`` and the quick words (``gg``, ``bravo``, ``oops``...). Raises
    :class:`InputError` saying what was wrong and what is legal now.
    """
    o = observation
    t = text.strip()
    command = COMMANDS.get(t.lower())
    if command is not None:
        return Command(command)
    said = chat_line(t)
    if said is not None:
        return Command(CommandKind.CHAT, said)
    legal = legal_text(o)
    if not t:
        raise InputError(text, "Type a card, a bid or help.", legal)
    if not o.legal:
        raise InputError(text, "It is not your turn.", "")
    playing = o.phase is Phase.PLAY
    if t.isdigit():
        number = int(t)
        if not playing:
            if any(isinstance(b, Bid) and b.value == number for b in o.legal):
                raise InputError(text, f"A bid needs a suit too, e.g. '{number} H'.", legal)
            raise InputError(text, "Numbers choose a card, and this is the bidding.", legal)
        numbers = card_numbers(o)
        by_number = {n: c for c, n in numbers.items()}
        if number not in by_number:
            held = ", ".join(str(n) for n in sorted(by_number))
            raise InputError(text, f"There is no card {number}: your cards are {held}.", legal)
        return _playable(by_number[number], text, o, legal)
    try:
        card = Card.parse(t)
    except ValueError:
        pass
    else:
        if not playing:
            raise InputError(text, "This is the bidding: no card is played yet.", legal)
        return _playable(card, text, o, legal)
    try:
        bid = Bid.parse(t)
    except ValueError:
        words = t.split()
        if len(words) == 2 and words[0].isdigit():
            raise InputError(
                text, f"Bids go by tens: {BID_VALUES[0]}, {BID_VALUES[1]}... up to 160, then "
                "capot and generale.", legal,
            ) from None  # fmt: skip
        raise InputError(
            text, f"{t!r} is not a card, a bid or a command (type help).", legal
        ) from None
    if playing:
        raise InputError(text, "The bidding is over: play a card.", legal)
    for option in o.legal:
        if option == bid:
            return option
    raise InputError(text, _bid_reason(bid, o), legal)


def _playable(card: Card, text: str, o: Observation, legal: str) -> Card:
    name = card_text(card, symbols=False)
    if card not in o.hand:
        raise InputError(text, f"You do not hold {name}.", legal)
    if card not in o.legal:
        why = play_reason(o)
        raise InputError(text, f"{name} cannot be played now. {why}".strip(), legal)
    return card


def _bid_reason(bid: Bid, o: Observation) -> str:
    said = bid_text(bid, symbols=False)
    if o.phase is Phase.TAKE_FIRST and bid.kind is BidKind.CHOOSE:
        return "In the first turn you take the turned card or pass; suits come in the second."
    if o.phase is Phase.TAKE_SECOND and bid.kind is BidKind.CHOOSE:
        return f"{SUIT_NAMES[bid.trump].capitalize()} was the turned suit: name another."
    if o.phase is Phase.TAKE_SECOND and bid.kind is BidKind.TAKE:
        return "Everybody refused the turned card: name another suit or pass."
    if not o.rules.is_coinche and bid.kind in (BidKind.BID, BidKind.COINCHE, BidKind.SURCOINCHE):
        return f"{said!r} is a coinche bid; this table plays classic."
    if o.rules.is_coinche and bid.kind in (BidKind.TAKE, BidKind.CHOOSE):
        return "This is a coinche auction: bid a value with a suit, e.g. 90 H."
    if bid.kind is BidKind.BID:
        if bid.trump in (NO_TRUMP, ALL_TRUMP):
            return f"This table does not play {trump_text(bid.trump)} bids."
        if o.multiplier > 1:
            return "After a coinche nobody may bid higher."
        if bid.value <= o.contract:
            return f"A bid must beat {o.contract}."
    if bid.kind is BidKind.COINCHE:
        return "Only an opponent of the last bidder may coinche, once, after a bid."
    if bid.kind is BidKind.SURCOINCHE:
        return "Only the coinched bidder's team may surcoinche."
    return f"{said!r} is not legal now."


HELP_LINES = (
    "Play a card: its number (it keeps it all round) or its name: JH, jh, 10h, T♥.",
    "Bid: take, pass, a suit (H), 90 H, capot S, generale D, coinche, surcoinche.",
    "last: the last trick · tricks: every trick of the round just played.",
    "say TEXT: chat to the table; gg, bravo, oops say just that.",
    "quit (or Ctrl-C): resign the game, after a confirmation.",
    "Enter closes a screen like this one. When your time runs out, a bot plays",
    "that turn for you (unless --autoplay none); you play on at your next turn.",
)


def help_text(o: Observation | None) -> str:
    lines = list(HELP_LINES)
    if o is not None and o.legal:
        lines.append(legal_text(o))
    return "\n".join(lines)


# -- the view -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notice:
    """One fact an event brought: every one goes to a plain log; the ``notable`` ones
    (contract, announcements, belote, round results, chat) also to the frame's news lines."""

    text: str
    notable: bool = False


class TableView:
    """What one seat may know of the game, fed events; drawn by :meth:`render`."""

    def __init__(
        self,
        seat: int,
        names: Sequence[str],
        rules: RuleSet,
        fingerprints: Sequence[str] | None = None,
    ) -> None:
        self.seat = seat
        self.names = tuple(names)
        self.rules = rules
        self.seats = rules.seats
        self.fingerprints = tuple(fingerprints) if fingerprints else ("",) * self.seats
        self.ready = False
        self.number: int | None = None
        self.dealer = rules.first_dealer
        self.scores: tuple[int, ...] = (0,) * (2 if rules.has_teams else self.seats)
        self.pending = 0
        self.news: deque[str] = deque(maxlen=NEWS_LINES)
        self.summary: tuple[str, ...] = ()
        """The last round's summary, shown between rounds (plain lines)."""
        self.breakdown: RoundBreakdown | None = None
        """The last round, taken apart (the round screen)."""
        self.sheet: str | None = None
        self.ended: str | None = None
        self.deadline: tuple[int, float] | None = None
        """``(seat, time.monotonic() instant)`` of the turn's deadline, if one is known."""
        self.late: tuple[int, float] | None = None
        """``(seat, instant)`` by which a seat past its deadline is signed gone."""
        self._reset_round()

    @classmethod
    def from_definition(cls, definition: TableDefinition, seat: int) -> TableView:
        return cls(
            seat,
            seat_names(definition),
            definition.rules,
            [fingerprint(s.key) for s in definition.seats],
        )

    def _reset_round(self) -> None:
        self.phase: Phase | None = None
        self.hand: tuple[Card, ...] = ()
        self.legal: tuple[Action, ...] = ()
        self.to_act = -1
        self.turned: Card | None = None
        self.bids: tuple[tuple[int, Bid], ...] = ()
        self.trump = -1
        self.taker = -1
        self.contract = 0
        self.multiplier = 1
        self.leader = -1
        self.trick: tuple[Card, ...] = ()
        self.tricks: tuple[Trick, ...] = ()
        self.tricks_done = 0
        self.last_trick: Trick | None = None
        self.declared: tuple[tuple[Announcement, ...] | None, ...] = (None,) * self.seats
        self.belote: tuple[tuple[int, Card], ...] = ()
        self.open_deck: tuple[Card | None, ...] = ()
        """Two-handed: the deck as both players see it (:attr:`Observation.open_deck`)."""

    # -- names ------------------------------------------------------------------------

    def name(self, seat: int) -> str:
        if seat == self.seat:
            return "You"
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def seat_names(self) -> tuple[str, ...]:
        """Every seat's name as this view says it (``You`` for ours)."""
        return tuple(self.name(s) for s in range(self.seats))

    def does(self, seat: int, verb: str) -> str:
        """``Bob plays`` / ``You play``: ``verb`` in the third person."""
        if seat == self.seat:
            base = verb[:-2] if verb.endswith("es") and verb[-3] in "sx" else verb[:-1]
            return f"You {'have' if verb == 'has' else base}"
        return f"{self.name(seat)} {verb}"

    def team_label(self, team: int) -> str:
        """A team by its players: ``You & Cid``, ``Bob & Dee``."""
        return f"{self.name(team)} & {self.name(team + 2)}"

    def side_of(self, seat: int) -> int:
        """The side ``seat`` scores with: its team with four seats, itself otherwise (the
        index of its entry in :attr:`scores`)."""
        return seat % 2 if self.rules.has_teams else seat

    def side_label(self, side: int) -> str:
        """A side by its players: ``You & Cid`` (a team), ``Bob`` (a player)."""
        return self.team_label(side) if self.rules.has_teams else self.name(side)

    def sides(self) -> tuple[int, ...]:
        """Every side, ours first, then the others in playing order."""
        n = len(self.scores)
        me = self.side_of(self.seat)
        return tuple((me + i) % n for i in range(n))

    def sides_text(self, values: Sequence[int], sep: str = ", ") -> str:
        """``You & Cid 120, Bob & Dee 42``: ``values`` (one per side) named, ours first."""
        return sep.join(f"{self.side_label(t)} {values[t]}" for t in self.sides())

    # -- feeding ----------------------------------------------------------------------

    def observe(self, o: Observation) -> None:
        """Take everything from an observation of this seat (a decision, or a state)."""
        self.number = o.number
        self.dealer = o.dealer
        self.phase = o.phase
        self.hand = o.hand
        self.legal = o.legal
        self.to_act = o.to_act
        self.turned = o.turned
        self.bids = o.bids
        self.trump = o.trump
        self.taker = o.taker
        self.contract = o.contract
        self.multiplier = o.multiplier
        self.leader = o.leader
        self.trick = o.trick
        self.tricks = o.tricks
        self.tricks_done = len(o.tricks)
        if o.tricks:
            self.last_trick = o.tricks[-1]
        self.declared = o.declared
        self.belote = o.belote
        self.open_deck = o.open_deck
        self.scores = o.scores
        self.pending = o.pending
        if self.deadline is not None and self.deadline[0] != o.to_act:
            self.deadline = None
        if self.late is not None and self.late[0] != o.to_act:
            self.late = None

    def set_deadline(self, seat: int, deadline: float | None) -> None:
        """The ``time.monotonic()`` instant by which ``seat`` must act (None: unknown)."""
        self.deadline = None if deadline is None else (seat, deadline)
        if self.late is not None and self.late[0] == seat:
            self.late = None

    def set_late(self, seat: int, gone_at: float | None) -> None:
        """``seat`` is past its deadline and will be signed gone at ``gone_at``."""
        self.late = None if gone_at is None else (seat, gone_at)

    def apply(self, event: Event) -> list[Notice]:
        """Take in one session event; the facts it brought, as notices."""
        if isinstance(event, TableReady):
            self.ready = True
            peers = {2: "Both peers", 3: "All three peers"}.get(self.seats, "All four peers")
            return [Notice(f"{peers} signed the table.")]
        if isinstance(event, RoundDealt):
            return self._dealt(event)
        if isinstance(event, ActionTaken):
            return self._action(event.seat, event.action, event.state)
        if isinstance(event, DecisionNeeded):
            self.observe(event.observation)
            return []
        if isinstance(event, RoundAudited):
            return self._audited(event.record, event.state, event)
        if isinstance(event, GameOver):
            return self._over(event.state)
        if isinstance(event, ChatMessage):
            return self._say(f"{self.name(event.seat)}: {safe_text(event.text)}")
        if isinstance(event, GameAbandoned):
            self.scores = event.state.scores
            self.sheet = format_sheet(event.state, self.seat_names())
            self.ended = f"The game is abandoned: {self.name(event.seat)} left it."
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        if isinstance(event, PeerFault):
            who = self.name(event.seat) if 0 <= event.seat < self.seats else "?"
            self.ended = f"The game stopped: {who} broke the protocol ({event.reason})."
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        return []

    def _say(self, text: str) -> list[Notice]:
        self.news.append(text)
        return [Notice(text, notable=True)]

    def _dealt(self, event: RoundDealt) -> list[Notice]:
        self._reset_round()
        self.summary = ()
        self.observe(observe(event.state, self.seat))
        text = f"Round {event.number + 1}: {self.does(event.dealer, 'deals')}."
        if event.turned is not None:
            text += f" Turned card: {card_text(event.turned)}."
        elif self.phase is Phase.PLAY:
            text += f" Trump {trump_text(self.trump)}, the suit of the last card dealt."
        return [Notice(text)]

    def _action(self, seat: int, action: Action, state: State) -> list[Notice]:
        who = self.name(seat)
        notices: list[Notice] = []
        round_over = state.phase in (Phase.DEAL, Phase.GAME_OVER)
        record = state.history[-1] if round_over and state.history else None
        if isinstance(action, Bid):
            notices.append(Notice(f"{who}: {bid_text(action)}."))
            if state.phase is Phase.PLAY and self.phase is not Phase.PLAY:
                notices += self._say(f"Contract: {self._contract_words(state)}.")
            # A redeal is announced once, by the round's summary.
        else:
            before_tricks = self.tricks_done
            notices.append(Notice(f"{self.does(seat, 'plays')} {card_text(action)}."))
            declared = record.declared if record else state.declared
            anns = declared[seat] if seat < len(declared) else None
            if self.declared[seat] is None and anns:
                shown = ", ".join(announcement_text(a) for a in anns)
                notices += self._say(f"{self.does(seat, 'announces')} {shown}.")
            belote = record.belote if record else state.belote
            trump = record.trump if record else state.trump
            if (seat, action) in belote and (seat, action) not in self.belote:
                notices += self._say(f"{who}: belote!")
            elif any(s == seat and c == other_belote_card(action) for s, c in belote) and (
                trump == action >> 3 or trump == ALL_TRUMP
            ):
                notices += self._say(f"{who}: rebelote!")
            tricks = record.tricks if record else state.tricks
            if len(tricks) > before_tricks:
                t = tricks[-1]
                notices.append(Notice(f"{self.does(t.winner, 'wins')} the trick ({t.points})."))
        if record is not None:
            # The round is over: keep its last trick on show until the next deal.
            self.phase = state.phase
            self.hand = ()
            self.legal = ()
            self.to_act = -1
            self.trick = ()
            self.tricks = record.tricks
            if record.tricks:
                self.last_trick = record.tricks[-1]
                self.tricks_done = len(record.tricks)
            self.declared = tuple(record.declared)
            self.belote = record.belote
            self.scores = state.scores
            self.pending = state.pending
        else:
            self.observe(observe(state, self.seat))
        return notices

    def _contract_words(self, state: State | RoundRecord) -> str:
        trump = trump_text(state.trump)
        if state.taker < 0:
            return f"trump {trump}, nobody takes"
        if state.contract:
            return bid_contract_text(
                self.does(state.taker, "bids"), state.contract, trump, state.multiplier, sep=", "
            )
        return f"{self.does(state.taker, 'takes')} {trump}"

    def _audited(self, record: RoundRecord, state: State, event: RoundAudited) -> list[Notice]:
        self.scores = state.scores
        self.pending = state.pending
        self.phase = state.phase
        self.to_act = -1
        self.legal = ()
        self.tricks = record.tricks
        self.summary = tuple(self.round_summary(record))
        notices = [Notice(line) for line in self.summary]
        fault = event.report.fault
        audit = ""
        if fault is not None:
            audit = f"Audit: {self.name(fault.seat)} {fault.kind.value}: {fault.reason}."
            self.summary += (audit,)
            notices.append(Notice(audit))
        self.breakdown = round_breakdown(record, self.seat_names(), self.rules.target, audit)
        self.news.append(self.summary[0])
        notices[0] = Notice(notices[0].text, notable=True)
        return notices

    def round_summary(self, record: RoundRecord) -> list[str]:
        """A few lines on a finished round: contract and outcome, points, score."""
        head = f"Round {record.number + 1}"
        sc = record.score
        if sc is None:
            return [f"{head}: everybody passed, the next dealer deals again."]
        extra = sweep_text(sc, self.name, self.side_label)
        lines = [f"{head}: {self._contract_words(record)} - {sc.outcome.value}{extra}."]
        points = f"Card points {self.sides_text(sc.card_points)}"
        if any(sc.announcements):
            points += f"; announcements {self.sides_text(sc.announcements)}"
        if any(sc.belote):
            points += f"; belote {self.sides_text(sc.belote)}"
        lines.append(points + ".")
        gained = ", ".join(f"{self.side_label(t)} +{sc.score[t]}" for t in self.sides())
        game = "-".join(str(record.scores_after[t]) for t in self.sides())
        lines.append(f"Round score {gained}; game {game}.")
        if sc.outcome is Outcome.LITIGE:
            lines.append(
                f"Litige: the points of {self.team_label(record.taker % 2)} wait in the pot "
                f"({sc.pending})."
            )
        elif sc.pending:
            lines.append(f"Litige pot: {sc.pending}.")
        return lines

    def _over(self, state: State) -> list[Notice]:
        self.scores = state.scores
        self.sheet = format_sheet(state, self.seat_names())
        self.to_act = -1
        self.legal = ()
        me = self.side_of(self.seat)
        if state.winner is None:
            self.ended = "Game over."
        else:
            label = self.side_label(state.winner)
            verb = "win" if self.rules.has_teams or state.winner == me else "wins"
            won = "You win" if state.winner == me else f"{label} {verb}"
            score = "-".join(str(state.scores[t]) for t in self.sides())
            self.ended = f"Game over: {won} {score}."
        return self._say(self.ended)

    # -- what is shown ----------------------------------------------------------------

    def trick_master(self) -> int | None:
        """The seat winning the trick on the table, or None."""
        if not self.trick or self.trump < 0:
            return None
        return (self.leader + winning_index(self.trick, self.trump)) % self.seats

    def trick_cards(self) -> dict[int, Card]:
        return {(self.leader + i) % self.seats: c for i, c in enumerate(self.trick)}

    def seconds_left(self, now: float | None = None) -> int | None:
        if self.deadline is None or self.deadline[0] != self.to_act:
            return None
        now = time.monotonic() if now is None else now
        return max(0, round(self.deadline[1] - now))

    def seconds_to_sign_out(self, now: float | None = None) -> int | None:
        if self.late is None or self.late[0] != self.to_act:
            return None
        now = time.monotonic() if now is None else now
        return max(0, round(self.late[1] - now))

    def my_turn(self) -> bool:
        return self.to_act == self.seat and bool(self.legal)

    def shown_hand(self) -> tuple[Card, ...]:
        """The hand in the order it is shown."""
        return display_hand(self.hand, self.trump if self.phase is Phase.PLAY else -1)

    def numbers(self) -> dict[Card, int]:
        """Each card's number for this round (:func:`card_numbers`); none before the play."""
        return card_numbers(self.observation())

    def last_trick_text(self, *, symbols: bool = True) -> str:
        t = self.last_trick
        if t is None:
            return "No trick yet."
        return "Last trick: " + self.trick_text(t, symbols=symbols)

    def piles_text(self, seat: int) -> str:
        """Two-handed: ``Bob's piles: 1 A♥ and a face-down card, 2 none, ...``."""
        parts = []
        for i, (top, hidden) in enumerate(self.observation().piles(seat), 1):
            card = card_text(top) if top is not None else ""
            under = "a face-down card" if hidden else ""
            parts.append(f"{i} " + (" on ".join(p for p in (card, under) if p) or "empty"))
        whose = "Your" if seat == self.seat else f"{self.name(seat)}'s"
        return f"{whose} piles: " + ", ".join(parts)

    def trick_text(self, t: Trick, *, symbols: bool = True) -> str:
        plays = ", ".join(
            f"{self.name((t.leader + i) % self.seats)} {card_text(c, symbols=symbols)}"
            for i, c in enumerate(t.cards)
        )
        return f"{plays}; {self.name(t.winner)} won it ({t.points})."

    def title(self) -> str:
        head = f"Belote {self.rules.name} to {self.rules.target}"
        if self.number is not None:
            head += f" · round {self.number + 1} · dealer {self.name(self.dealer)}"
        return head

    def contract_line(self) -> str:
        if self.phase is None:
            return "Waiting for the deal." if self.ready else "Waiting for the peers."
        turned = card_text(self.turned) if self.turned is not None else None
        if self.phase is Phase.PLAY:
            if self.taker < 0:
                return f"Trump {trump_text(self.trump)} (the last card dealt); nobody takes"
            text = f"Contract: {self._contract_words_now()}"
            if turned and not self.rules.is_coinche:
                text += f" (turned {turned})"
            return text
        if self.phase is Phase.AUCTION:
            if self.taker >= 0 and self.contract:
                return f"Best bid: {self._contract_words_now()}"
            return "Auction: no bid yet"
        if self.phase in (Phase.TAKE_FIRST, Phase.TAKE_SECOND):
            turn = "first" if self.phase is Phase.TAKE_FIRST else "second"
            return f"Turned card: {turned} ({turn} turn)"
        return "Round over"

    def _contract_words_now(self) -> str:
        taker = self.name(self.taker)
        trump = trump_text(self.trump)
        if self.contract:
            return bid_contract_text(taker, self.contract, trump, self.multiplier, factor=True)
        return f"{taker}, trump {trump}"

    def bids_line(self, width: int) -> str:
        if not self.rules.has_bidding:
            return f"No bidding · {HIDDEN_MARK} a face-down card, turned up when its trick ends"
        if not self.bids:
            return "Bids: none yet"
        parts = [f"{self.name(s)} {bid_text(b)}" for s, b in self.bids]
        text = "Bids: " + " · ".join(parts)
        while len(text) > width and len(parts) > 1:
            parts.pop(0)
            text = "Bids: … " + " · ".join(parts)
        return text

    def score_line(self) -> str:
        text = f"{self.sides_text(self.scores, ' · ')} · to {self.rules.target}"
        if self.pending:
            text += f" · litige pot {self.pending}"
        return text

    def turn_line(self, now: float | None = None) -> str:
        if self.ended:
            return self.ended
        left = self.seconds_left(now)
        clock = "" if left is None else f" ({left} s left)"
        if self.my_turn():
            if self.phase is Phase.PLAY:
                return f"▶ Your turn{clock}: play a card (its number or name, e.g. 3 or 10h)"
            return f"▶ Your turn{clock}: {self._bid_hint()}"
        if self.to_act == self.seat and self.phase in LIVE_PHASES:
            return "▶ Your turn…"
        if self.to_act >= 0 and self.phase not in (None, Phase.DEAL, Phase.GAME_OVER):
            gone = self.seconds_to_sign_out(now)
            if gone is not None:
                return f"Waiting for {self.name(self.to_act)}: late, signed out in {gone} s"
            return f"Waiting for {self.name(self.to_act)}{clock}…"
        return "Waiting for the next deal…" if self.ready else "Waiting for the peers…"

    def _bid_hint(self) -> str:
        if self.phase is Phase.TAKE_FIRST:
            return "take or pass"
        if self.phase is Phase.TAKE_SECOND:
            suits = [b.trump for b in self.legal if isinstance(b, Bid) and b.kind is BidKind.CHOOSE]
            return f"name a suit ({' '.join(SUIT_LETTERS[s] for s in suits)}) or pass"
        return "bid (e.g. 90 H), pass" + (
            ", coinche" if any(b == Bid(BidKind.COINCHE) for b in self.legal) else ""
        )

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
        self, width: int = WIDTH, *, now: float | None = None, warn: bool = False
    ) -> RenderableType:
        """The frame: 19 lines of ``width`` columns (at most 80); ``warn``: our time is
        nearly out (the turn line turns red)."""
        width = min(width, WIDTH)
        inner = width - 4
        line = self._line
        rows: list[RenderableType] = [
            line(self.score_line(), "bold"),
            line(self.contract_line()),
            line(self.bids_line(inner)),
            line(self._trick_header(), "dim"),
        ]
        if self.phase in LIVE_PHASES:
            rows.append(self._compass(inner))
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
        rows: list[RenderableType] = [line(f"Round {b.number}: {b.contract or 'redeal'}", "bold")]
        verdict = b.verdict + (f" ({b.sweep})" if b.sweep else "")
        rows.append(line(verdict, "bold yellow" if b.outcome != "failed" else "bold red"))
        order = self.sides()
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=18, no_wrap=True)
        for _ in order:
            grid.add_column(width=(width - 4 - 20) // len(order) - 1, justify="right",
                            no_wrap=True, overflow="ellipsis")  # fmt: skip
        teams = [b.sides[t] for t in order]
        grid.add_row("", *[Text(t.name + (" (takers)" if t.takers else ""), style="bold")
                           for t in teams])  # fmt: skip
        if b.outcome != "redeal":
            for label, values in (
                ("Tricks", [t.tricks for t in teams]),
                ("Card points", [t.card_points for t in teams]),
                ("  with dix de der", [t.dix_de_der for t in teams]),
                ("Announcements", [t.announcements for t in teams]),
                ("Belote", [t.belote for t in teams]),
                ("Total", [t.total for t in teams]),
                ("Round score", [t.score for t in teams]),
            ):
                style = "bold" if label == "Round score" else ""
                grid.add_row(label, *[Text(str(v), style=style) for v in values])
        grid.add_row(
            Text(f"Game (to {b.target})", style="bold"),
            *[Text(str(t.game), style="bold") for t in teams],
        )
        rows.append(grid)
        extra: list[str] = []
        if b.pot:
            extra.append(f"Litige pot: {b.pot} points for the next round's winner.")
        if b.declared:
            extra.append("Announced: " + " · ".join(b.declared))
        if b.audit:
            extra.append(b.audit)
        last = b.last_trick
        if last is not None:
            extra.append("Last trick: " + self.trick_text(last))
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
        head = (
            "Tricks of this round"
            if self.phase is Phase.PLAY and self.tricks
            else (f"Tricks of round {b.number}" if b is not None else "Tricks")
        )
        rows: list[RenderableType] = [line(head, "bold")]
        if not tricks:
            rows.append(line("No trick has been played yet."))
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

    def _trick_header(self) -> str:
        if self.phase is not Phase.PLAY:
            return ""
        total = self.rules.tricks_per_round
        number = min(self.tricks_done + 1, total)
        text = f"Trick {number} of {total}"
        if self.trick:
            text += f" · {self.name(self.leader)} led"
            master = self.trick_master()
            if master is not None:
                text += f" · master {self.name(master)} {MASTER_MARK}"
        elif self.to_act >= 0:
            text += f" · {self.does(self.to_act, 'leads')}"
        return text

    def _seat_label(self, seat: int) -> Text:
        t = Text()
        if seat == self.to_act:
            t.append("▶ ", style="bold yellow")
        ours = self.side_of(seat) == self.side_of(self.seat)
        t.append(self.name(seat), style="bold" if ours else "")
        if seat != self.seat and self.fingerprints[seat]:
            t.append(" " + self.fingerprints[seat][:9], style="dim")
        if seat == self.dealer:
            t.append(" (dealer)", style="dim")
        return t

    def _slot(self, seat: int) -> Text:
        cards = self.trick_cards()
        if seat not in cards:
            return Text("·", style="dim")
        c = cards[seat]
        if seat == self.trick_master():
            t = styled_card(c, "bold reverse")
            t.append(" " + MASTER_MARK, style="bold yellow")
            return t
        return styled_card(c, "bold")

    def _compass(self, inner: int) -> RenderableType:
        """The table seen from our seat: four seats about the trick, the next to play on
        our right; three with nobody across; two face to face, each above its piles."""
        s = self.seat
        if self.seats == 2:
            return self._face_to_face(inner)
        right = (s + 1) % self.seats
        top = (s + 2) % self.seats if self.seats == 4 else None
        left = (s + self.seats - 1) % self.seats
        grid = Table.grid(expand=True, padding=0)
        side = (inner - 24) // 2
        grid.add_column(width=side, justify="left", no_wrap=True, overflow="ellipsis")
        grid.add_column(width=24, justify="center", no_wrap=True)
        grid.add_column(width=inner - 24 - side, justify="right", no_wrap=True,
                        overflow="ellipsis")  # fmt: skip
        middle = Text.assemble(self._slot(left), "          ", self._slot(right))
        grid.add_row("", self._seat_label(top) if top is not None else "", "")
        grid.add_row("", self._slot(top) if top is not None else "", "")
        grid.add_row(self._seat_label(left), middle, self._seat_label(right))
        grid.add_row("", self._slot(s), "")
        grid.add_row("", self._seat_label(s), "")
        return grid

    def _face_to_face(self, inner: int) -> RenderableType:
        """Two-handed: the other player and its piles above the trick, ours below."""
        other = 1 - self.seat
        grid = Table.grid(expand=True, padding=0)
        grid.add_column(width=inner, justify="center", no_wrap=True, overflow="ellipsis")
        grid.add_row(self._seat_label(other))
        grid.add_row(self._piles_rich(other))
        grid.add_row(Text.assemble(self._slot(other), "   ", self._slot(self.seat)))
        grid.add_row(self._piles_rich(self.seat))
        grid.add_row(self._seat_label(self.seat))
        return grid

    def _piles_rich(self, seat: int) -> Text:
        """Two-handed: ``seat``'s eight piles, the card on top of each (numbered for ours,
        as it is played by number) and ``▪`` for a face-down card still under it."""
        out = Text()
        numbers = seat == self.seat and self.phase is Phase.PLAY
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
        out = Text("Last trick: ", style="dim")
        if t is None:
            out.append("none yet", style="dim")
            return out
        out.append_text(self._trick_rich(t))
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
        out = Text("Hand ", style="bold")
        hand = self.shown_hand()
        if not hand:
            out.append("(none)", style="dim")
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
            out.append(f" trump {trump_text(self.trump)}", style=card_style(Card(self.trump * 8)))
        return out

    def _legal_rich(self) -> Text:
        if not self.my_turn():
            return Text("")
        if self.phase is Phase.PLAY:
            numbers = self.numbers()
            out = Text("Legal: ", style="bold")
            for c in self.shown_hand():
                if c in self.legal:
                    out.append(f"{numbers[c]} ")
                    out.append_text(styled_card(c, "bold"))
                    out.append("  ")
            return out
        return Text(f"You may: {self._bid_options_now()}")

    def _bid_options_now(self) -> str:
        return bid_options(self.observation(), short=True)

    def observation(self, legal: tuple[Action, ...] | None = None) -> Observation:
        """What the view knows, as an observation (``legal``: the view's own if None)."""
        played = 0
        for c in (*(c for t in self.tricks for c in t.cards), *self.trick):
            played |= 1 << c
        return Observation(
            self.seat, self.rules, self.phase or Phase.DEAL, self.number or 0, self.dealer,
            self.hand, self.legal if legal is None else legal, self.to_act, self.turned,
            self.bids, self.trump, self.taker, self.contract, self.multiplier, self.leader,
            self.trick, self.tricks, played, self.declared, self.belote, (0, 0, 0, 0),
            (0, 0, 0, 0), self.scores, self.pending, self.open_deck,
        )  # fmt: skip

    # -- plain --------------------------------------------------------------------------

    def plain_lines(self, *, now: float | None = None) -> list[str]:
        """The table as plain lines, one fact a line (no colour, suit letters)."""

        def sentence(text: str) -> str:
            text = to_plain(text).rstrip(".")
            return text + "." if text else ""

        lines = [self.title().replace(" · ", ", ")]
        lines.append(f"Score: {self.sides_text(self.scores)}")
        lines.append(f"Target: {self.rules.target}")
        if self.pending:
            lines.append(f"Litige pot: {self.pending}")
        lines.append(self.contract_line())
        if self.bids and self.phase is not Phase.PLAY:
            lines.append(self.bids_line(10_000).replace(" · ", "; "))
        if self.phase is Phase.PLAY:
            lines.append(self._trick_header().replace(" · ", ", "))
            cards = self.trick_cards()
            if cards:
                played = ", ".join(
                    f"{self.name((self.leader + i) % self.seats)} {card_text(c)}"
                    for i, c in enumerate(self.trick)
                )
                lines.append(f"On the table: {played}")
                master = self.trick_master()
                if master is not None:
                    lines.append(f"Master: {self.name(master)} with {card_text(cards[master])}")
        if self.last_trick is not None:
            lines.append(self.last_trick_text())
        if self.phase not in LIVE_PHASES:
            lines += list(self.summary)
        if self.phase is Phase.PLAY:
            lines += [self.piles_text(s) for s in (1 - self.seat, self.seat) if self.seats == 2]
        hand = self.shown_hand()
        if hand:
            numbers = self.numbers()
            shown = ", ".join(
                f"{numbers[c]} {card_text(c)}" if c in numbers else card_text(c) for c in hand
            )
            lines.append(f"Hand: {shown}")
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
    ) -> None:
        self.view = view
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
        self._disconnected: frozenset[int] = frozenset()
        self._overdue: set[int] = set()

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

    def table_news(self, text: str) -> None:
        """News of the table (a player late, gone or back): in the frame's news lines
        (live), else a line."""
        if self.live:
            self.view.news.append(text)
            self.redraw()
        else:
            self.say(text)

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
            return "Resign and leave the game? Type yes to confirm> "
        if self.pending is not None:
            noun = "card" if self.pending.observation.phase is Phase.PLAY else "bid"
            left = ""
            if self.pending.deadline is not None:
                left = f" ({max(0, round(self.pending.deadline - self.clock()))} s left)"
            return f"Your {noun}{left}> "
        return "> "

    def _prompt_again(self) -> None:
        if not self.live and (self.pending is not None or self.confirming):
            self._write(self.prompt())

    def _footer(self) -> str:
        now = self.clock()
        if self.overlay == "game":
            return self.view.ended or "Game over."
        parts = []
        if self.pending is not None:
            left = self.view.seconds_left(now)
            parts.append("Your turn" + (f" ({left} s left)" if left is not None else ""))
        if self.overlay_until is not None:
            parts.append(f"table in {max(0, round(self.overlay_until - now))} s")
        parts.append("Enter: the table")
        if self.overlay == "round":
            parts.append("tricks: all tricks")
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
            return view.render_text(help_text(o).split("\n"), width, footer)
        return view.render(width, now=self.clock(), warn=self._warning())

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
        if isinstance(event, RoundAudited) and self.live:
            self.overlay = "round"
            self.overlay_until = self.clock() + self.hold if self.hold > 0 else None
        if isinstance(event, GameOver):
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
        lost and regained connections, by name."""
        now = self.clock()
        view = self.view
        for wait in status.waiting_for:
            if wait.seat == view.seat or not wait.decision:
                continue
            if wait.deadline_in > 0:
                view.set_deadline(wait.seat, now + wait.deadline_in)
            else:
                view.set_late(wait.seat, now + max(0.0, wait.abandon_in))
        overdue = {w.seat for w in status.overdue if w.seat != view.seat}
        for wait in status.overdue:
            if wait.seat in overdue - self._overdue:
                left = max(0, round(wait.abandon_in))
                name = view.names[wait.seat]
                self.table_news(f"{name} is late: signed out in {left} s if silent.")
        self._overdue = overdue
        lost = status.disconnected - self._disconnected
        back = self._disconnected - status.disconnected
        self._disconnected = status.disconnected
        for seat in sorted(lost):
            name = view.names[seat]
            self.table_news(f"{name} lost the connection; waiting for them to come back.")
        for seat in sorted(back):
            self.table_news(f"{view.names[seat]} is back.")

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
            f"Time's up: the {self.standin or 'stand-in'} bot played {action_text(action)} "
            "for you. "
            "You play on at your next turn."
        )

    # -- input --------------------------------------------------------------------------

    def handle_line(self, line: str) -> None:
        """One line the person typed."""
        if self.confirming:
            self.confirming = False
            if line.strip().lower() in ("y", "yes"):
                self._resign()
            else:
                self.say("Not resigning: the game goes on.")
            return
        if not line.strip():
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
                self.say(help_text(o))
        elif kind is CommandKind.LAST:
            self.say(self.view.last_trick_text(symbols=not self.plain))
        elif kind is CommandKind.TRICKS:
            if self.live:
                self._show("tricks")
            else:
                self.say("\n".join(self._tricks_lines()))
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
                self.say("Nobody hears you here.")
            else:
                self.control.chat(command.text)

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
            return ["No trick has been played yet."]
        return [f"Trick {i}: {view.trick_text(t, symbols=not self.plain)}"
                for i, t in enumerate(tricks, 1)]  # fmt: skip

    def _resign(self) -> None:
        if self.resigning:
            return
        self.resigning = True
        self.confirming = False
        self.say("You resign: leaving the game.")
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
            "Ctrl-C: resign the game? Ctrl-C again or yes resigns; Enter plays on."
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
            self.say("The input closed: you resign.")
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
                    for ch in chunk:
                        typed = self._key(ch)
                        if typed is not None:
                            self.handle_line(typed)
                    self._echo()
        else:
            async for line in read_lines(self.fd):
                self.handle_line(line)

    async def _ticker(self) -> None:
        """Every second: the countdowns, the round screen's time, the warning."""
        while True:
            await trio.sleep(1.0)
            self.tick()

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
                then = f"the {self.standin} bot plays for you" if self.standin else "you are late"
                text = f"{max(0, round(left))} s left, then {then}."
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
