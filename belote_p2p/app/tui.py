"""The table in a terminal, for a person playing one seat.

Four parts, each usable on its own:

* :class:`TableView`, pure: fed the session's events (or observations), it keeps what the
  seat may know and draws it as one 80x24 frame (:meth:`TableView.render`, a rich
  renderable) or as plain lines, one fact a line, for screen readers and logs
  (:meth:`TableView.plain_lines`).
* :func:`parse_input`, pure: what a person typed, as an :data:`~belote_p2p.game.engine.Action`
  or a :class:`Command`, or an :class:`InputError` that says what was wrong and what is legal
  now; :func:`prompt_action` asks until it gets an answer, through an ``ask`` callable.
* :class:`TerminalUI`: a view and a rich :class:`~rich.console.Console`; its
  :meth:`~TerminalUI.on_event` redraws after every event and :meth:`~TerminalUI.decide`
  (called from a worker thread) prompts for the seat's decision.
* :class:`TuiPlayer`: a :class:`~belote_p2p.net.peer.Player` that answers through a
  :class:`TerminalUI`.

The frame is printed, never drawn on an alternate screen, so it works over SSH, in a log and
on a dumb terminal (rich drops the colours there); the screen is cleared first only when the
console is a real terminal. A countdown is shown as its value when the frame is drawn and in
each prompt; nothing redraws on a timer.

``belote-p2p host``, ``join`` and ``resume`` (:mod:`belote_p2p.app.seat`) play a person's seat
through this module (``--plain`` for the plain lines); ``host --bots 3`` is the quickest way
to try it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import trio
from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from belote_p2p.errors import LocalProtocolError
from belote_p2p.game.announcements import Announcement
from belote_p2p.game.cards import SUIT_LETTERS, SUIT_SYMBOLS, Card
from belote_p2p.game.engine import (
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
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
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
from belote_p2p.protocol.table import TableDefinition

from .display import format_sheet
from .wording import (
    SUIT_NAMES,
    announcement_text,
    bid_contract_text,
    bid_text,
    card_text,
    sweep_text,
    trump_text,
)

SEATS = 4
WIDTH = 80
"""The frame fits an 80x24 terminal: 19 lines, which leaves room for the prompt."""
NEWS_LINES = 4
COMPASS_LINES = 5
DISPLAY_SUITS = (0, 1, 3, 2)
"""♠ ♥ ♣ ♦: black and red alternate in the hand."""
RED = "red"
MASTER_MARK = "★"
LIVE_PHASES = (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY)
"""Phases of a round being bid or played (the table is drawn, not a summary)."""


def card_style(c: Card) -> str:
    return RED if c >> 3 in (1, 2) else ""


def styled_card(c: Card, extra: str = "") -> Text:
    return Text(card_text(c), style=f"{card_style(c)} {extra}".strip())


PLAIN_TEXT = str.maketrans(
    {**{sym: SUIT_LETTERS[i] for i, sym in enumerate(SUIT_SYMBOLS)}, MASTER_MARK: "", "▶": "",
     "…": "...", "·": ",", "→": "won by", "×": "x"}
)  # fmt: skip


def to_plain(text: str) -> str:
    """``text`` for a plain log or a screen reader: suit letters, no marks or arrows."""
    return " ".join(text.translate(PLAIN_TEXT).split())


def display_hand(hand: Sequence[Card], trump: int) -> tuple[Card, ...]:
    """The hand in the order it is shown and numbered: by suit (♠ ♥ ♣ ♦), then weakest to
    strongest under the current trump (plain order before trump is known)."""
    strength = STRENGTH[trump if trump >= 0 else NO_TRUMP]
    return tuple(sorted(hand, key=lambda c: (DISPLAY_SUITS.index(c >> 3), strength[c])))


# -- input --------------------------------------------------------------------------------


class CommandKind(Enum):
    """What a person may ask of the table besides an action."""

    HELP = "help"
    """Explain what to type."""
    LAST = "last"
    """Show the last trick."""
    QUIT = "quit"
    """Leave the game (after a confirmation): the seat resigns."""


@dataclass(frozen=True, slots=True)
class Command:
    kind: CommandKind


@dataclass(frozen=True, slots=True)
class Resign:
    """The person left the game: the driver signs it (``session.abandon(own_seat)``)."""


COMMANDS = {
    "help": CommandKind.HELP,
    "?": CommandKind.HELP,
    "last": CommandKind.LAST,
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
        hand = display_hand(o.hand, o.trump)
        cards = ", ".join(
            f"{hand.index(c) + 1} {card_text(c, symbols=False)}" for c in hand if c in o.legal
        )
        return f"Legal now: {cards}."
    return f"Legal now: {bid_options(o)}."


def bid_options(o: Observation) -> str:
    bids = [a for a in o.legal if isinstance(a, Bid)]
    kinds = {b.kind for b in bids}
    parts: list[str] = []
    if BidKind.TAKE in kinds and o.turned is not None:
        parts.append(f"take (the {card_text(o.turned, symbols=False)})")
    chosen = [b.trump for b in bids if b.kind is BidKind.CHOOSE]
    if chosen:
        parts.append("a suit: " + " ".join(SUIT_LETTERS[s] for s in chosen))
    values = sorted({b.value for b in bids if b.kind is BidKind.BID})
    if values:
        suits = sorted({b.trump for b in bids if b.kind is BidKind.BID})
        letters = "/".join(TRUMP_LETTERS[t] for t in suits)
        low = [v for v in values if v < CAPOT_POINTS]
        named = [contract_word(v) for v in values if v >= CAPOT_POINTS]
        if low:
            span = f"{low[0]}" if len(low) == 1 else f"{low[0]} to {low[-1]}"
            what = f"a bid {span}"
            if named:
                what += ", " + " or ".join(named)
        else:
            what = "a bid: " + " or ".join(named)
        example = low[0] if low else named[0]
        parts.append(f"{what} with a suit {letters} (e.g. {example} {TRUMP_LETTERS[suits[0]]})")
    for kind in (BidKind.COINCHE, BidKind.SURCOINCHE, BidKind.PASS):
        if kind in kinds:
            parts.append(kind.value)
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

    Accepts a card (``JH``, ``jh``, ``10h``, ``T♥``) or its number in the hand as displayed
    (:func:`display_hand`); ``take``, ``pass``, a suit (``H``), a bid (``90 H``, ``capot S``,
    ``generale D``), ``coinche``, ``surcoinche``; the commands ``help``, ``last`` and
    ``quit``. Raises :class:`InputError` saying what was wrong and what is legal now.
    """
    o = observation
    t = text.strip()
    command = COMMANDS.get(t.lower())
    if command is not None:
        return Command(command)
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
        hand = display_hand(o.hand, o.trump)
        if not 1 <= number <= len(hand):
            raise InputError(text, f"There is no card {number}: your cards are 1 to {len(hand)}.",
                             legal)  # fmt: skip
        return _playable(hand[number - 1], text, o, legal)
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


def help_text(o: Observation | None) -> str:
    lines = [
        "Type a card (JH, jh, 10h, T♥) or its number in your hand,",
        "a bid (take, pass, a suit like H, 90 H, capot S, generale D, coinche, surcoinche),",
        "or a command: help, last (the last trick), quit (resign the game).",
    ]
    if o is not None and o.legal:
        lines.append(legal_text(o))
    return "\n".join(lines)


def prompt_action(
    observation: Observation,
    ask: Callable[[str], str],
    say: Callable[[str], None],
    *,
    last_trick: Callable[[], str] | None = None,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Action | Resign:
    """Ask until the person gives a legal action, or resigns (``quit``, then ``yes``).

    ``ask(prompt)`` returns a line (raising ``EOFError`` when the input closed); ``say``
    shows a message. A wrong input is explained and asked again.
    """
    noun = "card" if observation.phase is Phase.PLAY else "bid"
    while True:
        left = "" if deadline is None else f" ({max(0, round(deadline - clock()))} s left)"
        line = ask(f"Your {noun}{left}> ")
        try:
            answer = parse_input(line, observation)
        except InputError as exc:
            say(str(exc))
            continue
        if not isinstance(answer, Command):
            return answer
        if answer.kind is CommandKind.HELP:
            say(help_text(observation))
        elif answer.kind is CommandKind.LAST:
            say(last_trick() if last_trick else "No trick yet.")
        else:
            sure = ask("Resign and leave the game? Type yes to confirm> ")
            if sure.strip().lower() in ("y", "yes"):
                return Resign()
            say("Not resigning: the game goes on.")


# -- the view -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notice:
    """One fact an event brought: every one goes to a plain log; the ``notable`` ones
    (contract, announcements, belote, round results) also to the frame's news lines."""

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
        self.fingerprints = tuple(fingerprints) if fingerprints else ("",) * SEATS
        self.ready = False
        self.number: int | None = None
        self.dealer = rules.first_dealer
        self.scores: tuple[int, ...] = (0, 0)
        self.pending = 0
        self.news: deque[str] = deque(maxlen=NEWS_LINES)
        self.summary: tuple[str, ...] = ()
        """The last round's summary, shown between rounds."""
        self.sheet: str | None = None
        self.ended: str | None = None
        self.deadline: tuple[int, float] | None = None
        """``(seat, time.monotonic() instant)`` of the turn's deadline, if one is known."""
        self._reset_round()

    @classmethod
    def from_definition(cls, definition: TableDefinition, seat: int) -> TableView:
        return cls(
            seat,
            [s.name for s in definition.seats],
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
        self.tricks_done = 0
        self.last_trick: Trick | None = None
        self.declared: tuple[tuple[Announcement, ...] | None, ...] = (None,) * SEATS
        self.belote: tuple[tuple[int, Card], ...] = ()

    # -- names ------------------------------------------------------------------------

    def name(self, seat: int) -> str:
        if seat == self.seat:
            return "You"
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def does(self, seat: int, verb: str) -> str:
        """``Bob plays`` / ``You play``: ``verb`` in the third person."""
        if seat == self.seat:
            base = verb[:-2] if verb.endswith("es") and verb[-3] in "sx" else verb[:-1]
            return f"You {'have' if verb == 'has' else base}"
        return f"{self.name(seat)} {verb}"

    def team_label(self, team: int) -> str:
        return "Us" if team == self.seat % 2 else "Them"

    def team_members(self, team: int) -> str:
        return f"{self.name(team)}+{self.name(team + 2)}"

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
        self.tricks_done = len(o.tricks)
        if o.tricks:
            self.last_trick = o.tricks[-1]
        self.declared = o.declared
        self.belote = o.belote
        self.scores = o.scores
        self.pending = o.pending
        if self.deadline is not None and self.deadline[0] != o.to_act:
            self.deadline = None

    def set_deadline(self, seat: int, deadline: float | None) -> None:
        """The ``time.monotonic()`` instant by which ``seat`` must act (None: unknown)."""
        self.deadline = None if deadline is None else (seat, deadline)

    def apply(self, event: Event) -> list[Notice]:
        """Take in one session event; the facts it brought, as notices."""
        if isinstance(event, TableReady):
            self.ready = True
            return [Notice("All four peers signed the table.")]
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
        if isinstance(event, GameAbandoned):
            self.scores = event.state.scores
            self.sheet = format_sheet(event.state)
            self.ended = f"The game is abandoned: {self.name(event.seat)} left it."
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        if isinstance(event, PeerFault):
            who = self.name(event.seat) if 0 <= event.seat < SEATS else "?"
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
        self.number = event.number
        self.dealer = event.dealer
        self.hand = event.hand
        self.turned = event.turned
        self.phase = Phase.AUCTION if self.rules.is_coinche else Phase.TAKE_FIRST
        self.to_act = (event.dealer + 1) % SEATS
        text = f"Round {event.number + 1}: {self.does(event.dealer, 'deals')}."
        if event.turned is not None:
            text += f" Turned card: {card_text(event.turned)}."
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
            if record is not None and record.score is None:
                notices += self._say("Everybody passed: the cards are dealt again.")
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
        self.summary = tuple(self.round_summary(record))
        notices = [Notice(line) for line in self.summary]
        fault = event.report.fault
        if fault is not None:
            text = f"Audit: {self.name(fault.seat)} {fault.kind.value}: {fault.reason}."
            self.summary += (text,)
            notices.append(Notice(text))
        self.news.append(self.summary[0])
        return notices

    def round_summary(self, record: RoundRecord) -> list[str]:
        """A few lines on a finished round: contract and outcome, points, score."""
        head = f"Round {record.number + 1}"
        sc = record.score
        if sc is None:
            return [f"{head}: everybody passed, the next dealer deals again."]
        taker_team = record.taker % 2
        outcome = {
            Outcome.MADE: "made",
            Outcome.FAILED: "failed",
            Outcome.LITIGE: "litige",
        }[sc.outcome]
        extra = sweep_text(sc, self.name, self.team_label)
        lines = [f"{head}: {self._contract_words(record)} - {outcome}{extra}."]
        me = self.seat % 2
        us, them = me, 1 - me

        def pair(values: tuple[int, ...]) -> str:
            return f"us {values[us]}, them {values[them]}"

        points = f"Card points {pair(sc.card_points)}"
        if any(sc.announcements):
            points += f"; announcements {pair(sc.announcements)}"
        if any(sc.belote):
            points += f"; belote {pair(sc.belote)}"
        lines.append(points + ".")
        after = record.scores_after
        lines.append(
            f"Round score us +{sc.score[us]}, them +{sc.score[them]}; "
            f"game {after[us]}-{after[them]}."
        )
        if sc.outcome is Outcome.LITIGE:
            lines.append(
                f"Litige: {self.team_label(taker_team)} points wait in the pot ({sc.pending})."
            )
        elif sc.pending:
            lines.append(f"Litige pot: {sc.pending}.")
        return lines

    def _over(self, state: State) -> list[Notice]:
        self.scores = state.scores
        self.sheet = format_sheet(state)
        self.to_act = -1
        self.legal = ()
        me = self.seat % 2
        if state.winner is None:
            self.ended = "Game over."
        else:
            won = "You win" if state.winner == me else "They win"
            self.ended = f"Game over: {won} {state.scores[me]}-{state.scores[1 - me]}."
        return self._say(self.ended)

    # -- what is shown ----------------------------------------------------------------

    def trick_master(self) -> int | None:
        """The seat winning the trick on the table, or None."""
        if not self.trick or self.trump < 0:
            return None
        return (self.leader + winning_index(self.trick, self.trump)) % SEATS

    def trick_cards(self) -> dict[int, Card]:
        return {(self.leader + i) % SEATS: c for i, c in enumerate(self.trick)}

    def seconds_left(self, now: float | None = None) -> int | None:
        if self.deadline is None or self.deadline[0] != self.to_act:
            return None
        now = time.monotonic() if now is None else now
        return max(0, round(self.deadline[1] - now))

    def my_turn(self) -> bool:
        return self.to_act == self.seat and bool(self.legal)

    def shown_hand(self) -> tuple[Card, ...]:
        """The hand as numbered on screen (the order :func:`parse_input` reads numbers in)."""
        return display_hand(self.hand, self.trump if self.phase is Phase.PLAY else -1)

    def last_trick_text(self, *, symbols: bool = True) -> str:
        t = self.last_trick
        if t is None:
            return "No trick yet."
        plays = ", ".join(
            f"{self.name((t.leader + i) % SEATS)} {card_text(c, symbols=symbols)}"
            for i, c in enumerate(t.cards)
        )
        return f"Last trick: {plays}; {self.name(t.winner)} won it ({t.points})."

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
        if not self.bids:
            return "Bids: none yet"
        parts = [f"{self.name(s)} {bid_text(b)}" for s, b in self.bids]
        text = "Bids: " + " · ".join(parts)
        while len(text) > width and len(parts) > 1:
            parts.pop(0)
            text = "Bids: … " + " · ".join(parts)
        return text

    def score_line(self) -> str:
        me = self.seat % 2
        text = (
            f"Us ({self.team_members(me)}) {self.scores[me]} · "
            f"Them ({self.team_members(1 - me)}) {self.scores[1 - me]} · target {self.rules.target}"
        )
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
        if self.to_act >= 0 and self.phase not in (None, Phase.DEAL, Phase.GAME_OVER):
            return f"Waiting for {self.name(self.to_act)}{clock}…"
        return "Waiting for the next deal…" if self.ready else "Waiting for the peers…"

    def _bid_hint(self) -> str:
        if self.phase is Phase.TAKE_FIRST:
            return "take or pass"
        if self.phase is Phase.TAKE_SECOND:
            return "name a suit (S H D C) or pass"
        return "bid (e.g. 90 H, capot S), pass" + (
            ", coinche" if any(b == Bid(BidKind.COINCHE) for b in self.legal) else ""
        )

    # -- rich ---------------------------------------------------------------------------

    def render(self, width: int = WIDTH, *, now: float | None = None) -> RenderableType:
        """The frame: 19 lines of ``width`` columns (at most 80)."""
        width = min(width, WIDTH)
        inner = width - 4

        def line(text: str | Text, style: str = "") -> Text:
            t = text if isinstance(text, Text) else Text(text, style=style)
            t.no_wrap = True
            t.overflow = "ellipsis"
            return t

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
        rows.append(line(self.turn_line(now), "bold yellow" if self.my_turn() else "bold"))
        news = list(self.news)
        news = [""] * (NEWS_LINES - len(news)) + news
        rows += [line(("· " + n) if n else "", "italic") for n in news]
        return Panel(
            Group(*rows),
            title=self.title(),
            title_align="left",
            box=box.ROUNDED,
            width=width,
            padding=(0, 1),
        )

    def _trick_header(self) -> str:
        if self.phase is not Phase.PLAY:
            return ""
        number = min(self.tricks_done + 1, 8)
        text = f"Trick {number} of 8"
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
        t.append(self.name(seat), style="bold" if seat % 2 == self.seat % 2 else "")
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
        s = self.seat
        right, top, left = (s + 1) % SEATS, (s + 2) % SEATS, (s + 3) % SEATS
        grid = Table.grid(expand=True, padding=0)
        side = (inner - 24) // 2
        grid.add_column(width=side, justify="left", no_wrap=True, overflow="ellipsis")
        grid.add_column(width=24, justify="center", no_wrap=True)
        grid.add_column(width=inner - 24 - side, justify="right", no_wrap=True,
                        overflow="ellipsis")  # fmt: skip
        middle = Text.assemble(self._slot(left), "          ", self._slot(right))
        grid.add_row("", self._seat_label(top), "")
        grid.add_row("", self._slot(top), "")
        grid.add_row(self._seat_label(left), middle, self._seat_label(right))
        grid.add_row("", self._slot(s), "")
        grid.add_row("", self._seat_label(s), "")
        return grid

    def _last_trick_rich(self) -> Text:
        t = self.last_trick
        out = Text("Last trick: ", style="dim")
        if t is None:
            out.append("none yet", style="dim")
            return out
        for i, c in enumerate(t.cards):
            seat = (t.leader + i) % SEATS
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
        marking = self.my_turn() and self.phase is Phase.PLAY
        previous = -1
        for i, c in enumerate(hand, 1):
            if previous >= 0 and c >> 3 != previous:
                out.append("│ ", style="dim")
            previous = c >> 3
            if marking and c not in self.legal:
                out.append(f"{i} ", style="dim")
                out.append(card_text(c), style=f"{card_style(c)} dim".strip())
            else:
                style = "bold underline" if marking else "bold"
                out.append(f"{i} ", style="cyan" if marking else "dim")
                out.append(card_text(c), style=f"{card_style(c)} {style}".strip())
            out.append(" ")
        if self.phase is Phase.PLAY and 0 <= self.trump < 4:
            out.append(f" trump {trump_text(self.trump)}", style=card_style(Card(self.trump * 8)))
        return out

    def _legal_rich(self) -> Text:
        if not self.my_turn():
            return Text("")
        if self.phase is Phase.PLAY:
            hand = self.shown_hand()
            out = Text("Legal: ", style="bold")
            for c in hand:
                if c in self.legal:
                    out.append(f"{hand.index(c) + 1} ")
                    out.append_text(styled_card(c, "bold"))
                    out.append("  ")
            return out
        return Text(f"You may: {self._bid_options_now()}")

    def _bid_options_now(self) -> str:
        bids = tuple(a for a in self.legal if isinstance(a, Bid))
        return bid_options(self._as_observation(bids))

    def _as_observation(self, legal: tuple[Action, ...]) -> Observation:
        return Observation(
            self.seat, self.rules, self.phase or Phase.DEAL, self.number or 0, self.dealer,
            self.hand, legal, self.to_act, self.turned, self.bids, self.trump, self.taker,
            self.contract, self.multiplier, self.leader, self.trick, (), 0, self.declared,
            self.belote, (0, 0, 0, 0), (0, 0, 0, 0), self.scores, self.pending,
        )  # fmt: skip

    # -- plain --------------------------------------------------------------------------

    def plain_lines(self, *, now: float | None = None) -> list[str]:
        """The table as plain lines, one fact a line (no colour, suit letters)."""
        me = self.seat % 2

        def sentence(text: str) -> str:
            text = to_plain(text).rstrip(".")
            return text + "." if text else ""

        lines = [self.title().replace(" · ", ", ")]
        lines.append(f"Score: us {self.scores[me]}, them {self.scores[1 - me]}")
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
                    f"{self.name((self.leader + i) % SEATS)} {card_text(c)}"
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
        hand = self.shown_hand()
        if hand:
            numbered = ", ".join(f"{i} {card_text(c)}" for i, c in enumerate(hand, 1))
            lines.append(f"Hand: {numbered}")
        if self.my_turn():
            lines.append(legal_text(self._as_observation(self.legal)))
        lines.append(self.turn_line(now))
        return [sentence(line) for line in lines if line]


# -- the terminal -------------------------------------------------------------------------


class TerminalUI:
    """A :class:`TableView` on a terminal: redrawn after every event, and a prompt for the
    seat's decisions. :meth:`on_event` runs in the peer's thread and :meth:`decide` in a
    worker thread; a lock keeps their output apart.

    ``plain``: no frame, no colour: each event prints its facts as lines, and a decision
    prints the whole table as lines first (for screen readers and logs).
    """

    def __init__(
        self,
        view: TableView,
        *,
        console: Console | None = None,
        plain: bool = False,
        ask: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.view = view
        self.plain = plain
        self.console = console or Console(
            highlight=False, no_color=plain, emoji=False, soft_wrap=plain
        )
        self._ask = ask
        self._clock = clock
        self._lock = threading.RLock()
        self._prompt: str | None = None

    def say(self, text: str) -> None:
        with self._lock:
            self.console.print(Text(text), highlight=False)

    def ask(self, prompt: str) -> str:
        """One line from the person (``EOFError`` if the input closed)."""
        with self._lock:
            self._prompt = prompt
        try:
            if self._ask is not None:
                return self._ask(prompt)
            return self.console.input(prompt, markup=False, emoji=False)
        finally:
            with self._lock:
                self._prompt = None

    def redraw(self) -> None:
        with self._lock:
            if self.plain:
                for line in self.view.plain_lines(now=self._clock()):
                    self.console.print(Text(line), highlight=False)
            else:
                if self.console.is_terminal:
                    self.console.clear()
                width = min(self.console.width, WIDTH)
                self.console.print(self.view.render(width, now=self._clock()))
                if self.view.sheet and self.view.ended:
                    self.console.print(Text(self.view.sheet))
            if self._prompt is not None:
                # A redraw while the person is typing: show them the prompt again.
                self.console.print(Text(self._prompt), end="")

    def on_event(self, event: Event) -> None:
        """Show one session event (the peer's ``on_event``)."""
        with self._lock:
            notices = self.view.apply(event)
            if not self.plain:
                if not isinstance(event, DecisionNeeded):  # decide() draws it
                    self.redraw()
                return
            for notice in notices:
                self.console.print(Text(to_plain(notice.text)), highlight=False)
            if isinstance(event, GameOver | GameAbandoned) and self.view.sheet:
                self.console.print(Text(self.view.sheet), highlight=False)

    def decide(self, observation: Observation, deadline: float | None = None) -> Action | Resign:
        """Ask the person for this decision; ``deadline`` is a ``time.monotonic()`` instant
        (shown as a countdown), if the table has one. Blocks: call it from a worker thread."""
        with self._lock:
            self.view.observe(observation)
            self.view.set_deadline(observation.seat, deadline)
            self.redraw()
        return prompt_action(
            observation,
            self.ask,
            self.say,
            last_trick=lambda: self.view.last_trick_text(symbols=not self.plain),
            deadline=deadline,
            clock=self._clock,
        )


class TuiPlayer:
    """A :class:`~belote_p2p.players.player.Player` answered by a person through a
    :class:`TerminalUI`.

    ``turn_seconds``: the time a person has for a decision, shown as a countdown (None:
    no countdown). A resignation raises :class:`Resigned`, which the peer treats as a failed
    player: it signs its own seat as gone (``session.abandon``), that is, it resigns.
    """

    def __init__(self, ui: TerminalUI, *, turn_seconds: float | None = None) -> None:
        self.ui = ui
        self.turn_seconds = turn_seconds

    def new_game(self, rules: RuleSet, seat: int) -> None:
        pass

    def new_round(self, observation: Observation) -> None:
        pass

    async def decide(self, observation: Observation) -> Action:
        deadline = None if self.turn_seconds is None else time.monotonic() + self.turn_seconds
        answer = await trio.to_thread.run_sync(
            self.ui.decide, observation, deadline, abandon_on_cancel=True
        )
        if isinstance(answer, Resign):
            raise Resigned("the player resigned")
        return answer
