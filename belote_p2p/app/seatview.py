"""What one seat sees of a game, sans-io: the model the terminal and the browser render.

:class:`SeatView` is fed the session's events (:meth:`~SeatView.apply`), the decisions the
seat owes (:meth:`~SeatView.observe`) and the peer's status (:meth:`~SeatView.apply_status`:
deadlines, late seats, lost links), and keeps what the seat may know: the hand and the
number each card keeps for the round (:meth:`~SeatView.hand_cards`), the trick on the table
and the last completed trick on show (:meth:`~SeatView.trick_on_show`), whose turn it is and
its deadline as an instant (:meth:`~SeatView.turn_parts`: the renderers tick it), the sides
in one order, and the notices (facts an event brought, and the news lines). It imports
neither ``rich`` nor trio: the terminal (:mod:`belote_p2p.app.tui`, with ``rich``) and the
browser (:mod:`belote_p2p.app.web.viewmodel`, as JSON) only render it, so the two never
disagree on what a seat sees.

One rule orders the sides everywhere: **a result line names the winner first** (``Game
over: Bob & Dee win 638-302``, the score sheet's last line), **a running score names us
first** (the score line, the round screen's columns, the page's score bar), then the other
sides in playing order (:meth:`~SeatView.sides`).

Every text the view makes (its notices and news lines, the round's summary and breakdown,
the end of the game) is in the language in use when the event is applied
(:mod:`belote_p2p.i18n`; a page applies its seat's events in its reader's language), and the
lines drawn from the state (:meth:`~SeatView.contract_line`, :meth:`~SeatView.turn_line`...)
in the language in use when they are drawn. A sentence about a seat is one message for ours
and one for another's (:meth:`~SeatView.by`: ``You play {card}.``, ``{name} plays
{card}.``), so that each language conjugates its own verbs.

A completed trick stays on show (its four cards and who won it) until the next trick's
first card; a renderer may hold it a moment longer (:data:`TRICK_HOLD`, the live terminal's
and the page's), which only delays the drawing: the game itself never waits for it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from belote_p2p.game.announcements import Announcement
from belote_p2p.game.audit import AuditFault
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import (
    Action,
    Bid,
    BidKind,
    Phase,
    RoundRecord,
    State,
    Trick,
    deal_owners,
    other_belote_card,
)
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import RuleSet, partner_of
from belote_p2p.game.scoring import CAPOT_POINTS, Outcome
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP, STRENGTH, winning_index
from belote_p2p.i18n import N_, _, pgettext
from belote_p2p.protocol.events import (
    ActionTaken,
    ChatMessage,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    HandOpened,
    PeerFault,
    RoundAudited,
    RoundDealt,
    SeatLeft,
    TableReady,
)
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.table import TableDefinition

from .display import OUTCOME_WORDS, fault_text, format_sheet, seat_names, winner_first, with_coinche
from .roundview import RoundBreakdown, round_breakdown
from .wording import (
    announcement_text,
    bid_contract_text,
    bid_text,
    card_text,
    contract_text,
    left_line,
    suit_letter,
    suit_name,
    sweep_text,
    trump_letter,
    trump_text,
    variant_name,
)

if TYPE_CHECKING:
    from belote_p2p.net.peer import PeerStatus

NEWS_LINES = 4
DISPLAY_SUITS = (0, 1, 3, 2)
"""♠ ♥ ♣ ♦: black and red alternate in the hand."""
MASTER_MARK = "★"
HIDDEN_MARK = "▪"
"""Two-handed: a face-down card still lies in this pile."""
LIVE_PHASES = (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY)
"""Phases of a round being bid or played (the table is drawn, not a summary)."""
WARN_SECONDS = 10
"""Seconds left on our turn when the countdown turns red (and the terminal's bell rings)."""
TRICK_HOLD = 1.5
"""Seconds a renderer that redraws by itself keeps a completed trick on show, even when the
next trick has begun (the live terminal, the page): long enough to see who won it."""


def display_hand(hand: Sequence[Card], trump: int) -> tuple[Card, ...]:
    """The hand in the order it is shown: by suit (♠ ♥ ♣ ♦), then weakest to strongest
    under the current trump (plain order before trump is known)."""
    strength = STRENGTH[trump if trump >= 0 else NO_TRUMP]
    return tuple(sorted(hand, key=lambda c: (DISPLAY_SUITS.index(c >> 3), strength[c])))


def played_cards(tricks: Sequence[Trick], seat: int, seats: int) -> list[Card]:
    """The cards ``seat`` played in ``tricks`` (finished tricks of ``seats`` seats), in order."""
    return [t.cards[(seat - t.leader) % seats] for t in tricks]


def round_hand(o: Observation) -> tuple[Card, ...]:
    """Every card the seat held when the play began: its hand and what it played since."""
    played = played_cards(o.tricks, o.seat, o.seats)
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


def legal_text(o: Observation) -> str:
    """What the seat may do now, cards as the frame shows them (``J♥``: one wording per
    screen; a plain log turns the symbols into letters) and bids as they are typed."""
    if not o.legal:
        return _("It is not your turn.")
    if o.phase is Phase.PLAY:
        numbers = card_numbers(o)
        cards = ", ".join(
            f"{numbers[c]} {card_text(c)}" for c in display_hand(o.hand, o.trump) if c in o.legal
        )
        return _("Legal now: {choices}.").format(choices=cards)
    return _("Legal now: {choices}.").format(choices=bid_options(o))


def bid_options(o: Observation, *, short: bool = False) -> str:
    """The bids the seat may make, ``pass`` first (``short``: for the frame's one line)."""
    bids = [a for a in o.legal if isinstance(a, Bid)]
    kinds = {b.kind for b in bids}
    parts: list[str] = []
    if BidKind.PASS in kinds:
        parts.append(pgettext("choice", "pass"))
    if BidKind.TAKE in kinds and o.turned is not None:
        parts.append(pgettext("choice", "take (the {card})").format(card=card_text(o.turned)))
    chosen = [b.trump for b in bids if b.kind is BidKind.CHOOSE]
    if chosen:
        parts.append(_("a suit: {suits}").format(suits=" ".join(suit_letter(s) for s in chosen)))
    if BidKind.COINCHE in kinds:
        parts.append(pgettext("choice", "coinche"))
    if BidKind.SURCOINCHE in kinds:
        parts.append(pgettext("choice", "surcoinche"))
    values = sorted({b.value for b in bids if b.kind is BidKind.BID})
    if values:
        suits = sorted({b.trump for b in bids if b.kind is BidKind.BID})
        letters = "/".join(trump_letter(t) for t in suits)
        low = [v for v in values if v < CAPOT_POINTS]
        named = [contract_text(v) for v in values if v >= CAPOT_POINTS]
        span = ""
        if low:
            span = f"{low[0]}" if len(low) == 1 else f"{low[0]}-{low[-1]}"
            if not short and len(low) > 1:
                span = _("{values} by tens").format(values=span)
        what = ", ".join([span, *named] if span else named)
        example = f"{low[0] if low else named[0]} {trump_letter(suits[0])}"
        if short:
            parts.append(
                _("{values} + {suits} (e.g. {example})").format(
                    values=what, suits=letters, example=example
                )
            )
        else:
            parts.append(
                _("a bid {values} with a suit {suits} (e.g. {example})").format(
                    values=what, suits=letters, example=example
                )
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
            return _("Trump was led: you must play a higher trump ({suit}).").format(
                suit=suit_name(led)
            )
        return _("You must follow {suit}.").format(suit=suit_name(led))
    if legal and all(is_trump(c) for c in legal) and trump < 4:
        return _("You have no {suit}: you must trump ({trump}).").format(
            suit=suit_name(led), trump=suit_name(trump)
        )
    return ""


@dataclass(frozen=True, slots=True)
class Notice:
    """One fact an event brought: every one goes to a plain log; the ``notable`` ones
    (contract, announcements, belote, round results, chat) also to the frame's news lines."""

    text: str
    notable: bool = False


SIGNED_OUT = N_(
    "The game ended without you: the others signed your seat out (it was silent past its "
    "grace). Your transcript keeps the game up to there."
)
"""What a seat is told when the game was abandoned by its seat without its asking (its link
was down, or its terminal, too long); marked for the catalogs, shown with ``_()``."""
RESIGNED_OPEN = N_("You left the game: your partner plays your open hand to the end.")
"""What a seat that resigned at four seats is told: the game goes on without it."""
SIGNED_OUT_OPEN = N_(
    "The others signed your seat out (it was silent past its grace): your partner plays your "
    "open hand to the end. Your transcript ends here."
)
"""What a seat signed out at four seats is told."""


PEERS_SIGNED = {
    2: N_("Both peers signed the table."),
    3: N_("All three peers signed the table."),
    4: N_("All four peers signed the table."),
}


POSITIONS = {
    4: ("bottom", "right", "top", "left"),
    3: ("bottom", "right", "left"),
    2: ("bottom", "top"),
}
"""Where each seat sits on the screen, counted from ours, by the number of seats: the next
to play on our right; two face to face."""


class SeatView:
    """What one seat may know of the game, fed events (see the module docstring).

    ``clock``: the instants of deadlines and of a trick's end (``time.monotonic`` unless a
    test's clock is given); renderers pass ``now`` on the same clock. ``watching``: the
    view of a watcher (:mod:`belote_p2p.app.watch`), who sees the table from ``seat``'s
    place but is none of the players: no seat is "You", and no hand is its own."""

    def __init__(
        self,
        seat: int,
        names: Sequence[str],
        rules: RuleSet,
        fingerprints: Sequence[str] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        watching: bool = False,
    ) -> None:
        self.clock = clock
        self.seat = seat
        """Where the table is seen from (the bottom of the screen)."""
        self.me: int | None = None if watching else seat
        """The seat that is "You" (None: a watcher's view)."""
        self.names = tuple(names)
        self.rules = rules
        self.seats = rules.seats
        self.fingerprints = tuple(fingerprints) if fingerprints else ("",) * self.seats
        self.muted: set[int] = set()
        """The seats whose chat this view drops (:meth:`toggle_mute`): ours alone to know."""
        self.ready = False
        self.opening = ""
        """Who the seat still waits for before the table is ready, once said (the mesh is
        slow to open: a resume whose peers are gone)."""
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
        """``(seat, clock() instant)`` of the turn's deadline, if one is known."""
        self.late: tuple[int, float] | None = None
        """``(seat, instant)`` by which a seat past its deadline is signed gone."""
        self.disconnected: frozenset[int] = frozenset()
        """Seats whose link is down, as the peer reports them."""
        self.overdue: frozenset[int] = frozenset()
        self.resigned = False
        """The person asked to leave (:meth:`resign`): an abandonment by our seat is ours."""
        self.dummy: int | None = None
        """The seat that left and plays on, its hand open (its partner decides for it)."""
        self.dummy_line: str | None = None
        """``Bob left; Carol plays Bob's open hand``, shown for the rest of the game."""
        self._reset_round()

    @classmethod
    def from_definition(
        cls,
        definition: TableDefinition,
        seat: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        watching: bool = False,
    ) -> Self:
        return cls(
            seat,
            seat_names(definition),
            definition.rules,
            [fingerprint(s.key) for s in definition.seats],
            clock=clock,
            watching=watching,
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
        self.completed_at: float | None = None
        """When :attr:`last_trick` was won (``clock()``), while it is on show."""
        self.declared: tuple[tuple[Announcement, ...] | None, ...] = (None,) * self.seats
        self.belote: tuple[tuple[int, Card], ...] = ()
        self.open_deck: tuple[Card | None, ...] = ()
        """Two-handed: the deck as both players see it (:attr:`Observation.open_deck`)."""
        self.dummy_hand: tuple[Card, ...] = ()
        """The dummy's cards not yet played, face up for every seat."""

    # -- names ------------------------------------------------------------------------

    def name(self, seat: int) -> str:
        if seat == self.me:
            return pgettext("seat", "You")
        if 0 <= seat < len(self.names):
            return self.names[seat]
        return _("seat {number}").format(number=seat)

    def toggle_mute(self, who: str) -> str:
        """Mute the chat of the seat ``who`` names (its number, its name or its key's
        fingerprint), or hear it again if it was muted; what to tell the person. Only this
        view drops the lines: the player is not told, and the record keeps them."""
        wanted = who.strip().lower()
        found = [
            seat for seat in range(self.seats)
            if seat != self.me and wanted in (str(seat), self.names[seat].lower()
                                              if seat < len(self.names) else "",
                                              self.fingerprints[seat].lower())
        ]  # fmt: skip
        if len(found) != 1:
            return _("Mute whom? Give a seat number or a player's name (not yours).")
        seat = found[0]
        if seat in self.muted:
            self.muted.discard(seat)
            return _("You hear {name}'s chat again.").format(name=self.name(seat))
        self.muted.add(seat)
        return _("{name}'s chat is muted here (mute {name} again to hear it).").format(
            name=self.name(seat)
        )

    def seat_names(self) -> tuple[str, ...]:
        """Every seat's name as this view says it (``You`` for ours)."""
        return tuple(self.name(s) for s in range(self.seats))

    def by(self, seat: int, mine: str, theirs: str, **fields: object) -> str:
        """A sentence on what ``seat`` does: ``mine`` when it is ours (``You play {card}.``),
        else ``theirs`` with the seat's ``{name}`` (``{name} plays {card}.``), each a message
        marked with ``N_`` where it is written, so that each language conjugates its own."""
        if seat == self.me:
            return _(mine).format(**fields)
        return _(theirs).format(name=self.name(seat), **fields)

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
        """Take everything from an observation of this seat (a decision, or a state), or of
        the dummy when this seat decides for it (its hand is then the open hand's)."""
        self.number = o.number
        self.dealer = o.dealer
        self.phase = o.phase
        if o.seat == self.seat and self.me is not None:
            self.hand = o.hand
        elif o.seat == self.dummy:
            self.dummy_hand = o.hand
        self.legal = o.legal if self.me is not None else ()  # a watcher decides nothing
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
        if len(o.tricks) < self.tricks_done or not o.tricks:
            self.completed_at = None
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
        """The ``clock()`` instant by which ``seat`` must act (None: unknown)."""
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
            return [Notice(_(PEERS_SIGNED.get(self.seats, PEERS_SIGNED[4])))]
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
            if event.seat in self.muted:
                return []
            said = _("{name}: {text}").format(
                name=self.name(event.seat), text=safe_text(event.text)
            )
            return self._say(said)
        if isinstance(event, SeatLeft):
            return self._left(event)
        if isinstance(event, HandOpened):
            self._see_dummy(event.state)
            return []
        if isinstance(event, GameAbandoned):
            self.scores = event.state.scores
            self.sheet = format_sheet(event.state, self.seat_names(), me=self.me)
            if event.seat != self.me:
                self.ended = _("The game is abandoned: {name} left it.").format(
                    name=self.name(event.seat)
                )
            elif self.resigned:
                self.ended = _("You resigned: the game is abandoned by your seat.")
            else:
                self.ended = _(SIGNED_OUT)
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        if isinstance(event, PeerFault):
            who = self.name(event.seat) if 0 <= event.seat < self.seats else "?"
            self.ended = _("The game stopped: {name} broke the protocol ({reason}).").format(
                name=who, reason=event.reason
            )
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        return []

    def _say(self, text: str) -> list[Notice]:
        self.news.append(text)
        return [Notice(text, notable=True)]

    def _left(self, event: SeatLeft) -> list[Notice]:
        """A seat left and plays on, open, decided by its partner (or it is ours: our game
        ends here, the others play on)."""
        if event.seat == self.seat:
            self.ended = _(RESIGNED_OPEN if self.resigned else SIGNED_OUT_OPEN)
            self.to_act = -1
            self.legal = ()
            return self._say(self.ended)
        self.dummy = event.seat
        partner = None if event.by == self.me else self.name(event.by)
        self.dummy_line = left_line(self.name(event.seat), partner)
        self._see_dummy(event.state)
        return self._say(self.dummy_line)

    def _see_dummy(self, state: State) -> None:
        if self.dummy is not None:
            self.dummy_hand = state.hand(self.dummy)

    def deciding_for(self) -> int:
        """The seat whose decision this seat makes now: the dummy's when it is to act and
        we are its partner, else ours."""
        dummy = self.dummy
        if dummy is not None and self.to_act == dummy and self.seat == partner_of(dummy):
            return dummy
        return self.seat

    def _dealt(self, event: RoundDealt) -> list[Notice]:
        self._reset_round()
        self.summary = ()
        self.observe(observe(event.state, self.seat))
        self._see_dummy(event.state)
        text = self.by(
            event.dealer,
            N_("Round {number}: You deal."),
            N_("Round {number}: {name} deals."),
            number=event.number + 1,
        )
        if event.turned is not None:
            text += " " + _("Turned card: {card}.").format(card=card_text(event.turned))
        elif self.phase is Phase.PLAY:
            text += " " + _("Trump {trump}, the suit of the last card dealt.").format(
                trump=trump_text(self.trump)
            )
        return [Notice(text)]

    def _action(self, seat: int, action: Action, state: State) -> list[Notice]:
        who = self.name(seat)
        notices: list[Notice] = []
        round_over = state.phase in (Phase.DEAL, Phase.GAME_OVER)
        record = state.history[-1] if round_over and state.history else None
        if isinstance(action, Bid):
            notices.append(Notice(_("{name}: {bid}.").format(name=who, bid=bid_text(action))))
            if state.phase is Phase.PLAY and self.phase is not Phase.PLAY:
                contract = self._contract_words(state)
                notices += self._say(_("Contract: {contract}.").format(contract=contract))
            # A redeal is announced once, by the round's summary.
        else:
            before_tricks = self.tricks_done
            played = self.by(
                seat, N_("You play {card}."), N_("{name} plays {card}."), card=card_text(action)
            )
            notices.append(Notice(played))
            declared = record.declared if record else state.declared
            anns = declared[seat] if seat < len(declared) else None
            if self.declared[seat] is None and anns:
                shown = ", ".join(announcement_text(a) for a in anns)
                notices += self._say(
                    self.by(
                        seat,
                        N_("You announce {announcements}."),
                        N_("{name} announces {announcements}."),
                        announcements=shown,
                    )
                )
            belote = record.belote if record else state.belote
            trump = record.trump if record else state.trump
            if (seat, action) in belote and (seat, action) not in self.belote:
                notices += self._say(_("{name}: belote!").format(name=who))
            elif any(s == seat and c == other_belote_card(action) for s, c in belote) and (
                trump == action >> 3 or trump == ALL_TRUMP
            ):
                notices += self._say(_("{name}: rebelote!").format(name=who))
            tricks = record.tricks if record else state.tricks
            if len(tricks) > before_tricks:
                t = tricks[-1]
                won = self.by(
                    t.winner,
                    N_("You win the trick ({points})."),
                    N_("{name} wins the trick ({points})."),
                    points=t.points,
                )
                notices.append(Notice(won))
                self.completed_at = self.clock()
        if record is not None:
            # The round is over: keep its last trick on show until the next deal.
            self.phase = state.phase
            self.hand = ()
            self.dummy_hand = ()
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
            self._see_dummy(state)
        return notices

    def _contract_words(self, state: State | RoundRecord) -> str:
        trump = trump_text(state.trump)
        if state.taker < 0:
            return _("trump {trump}, nobody takes").format(trump=trump)
        if state.contract:
            bid = self.by(
                state.taker,
                N_("You bid {contract} {trump}"),
                N_("{name} bids {contract} {trump}"),
                contract=contract_text(state.contract),
                trump=trump,
            )
            return with_coinche(bid, state.multiplier)
        return self.by(state.taker, N_("You take {trump}"), N_("{name} takes {trump}"), trump=trump)

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
            audit = self.fault_line(fault)
            self.summary += (audit,)
            notices.append(Notice(audit))
        self.breakdown = round_breakdown(
            record, self.seat_names(), self.rules.target, audit, me=self.me
        )
        self.news.append(self.summary[0])
        notices[0] = Notice(notices[0].text, notable=True)
        return notices

    def fault_line(self, fault: AuditFault) -> str:
        """What the round's audit found, by name (:func:`~.display.fault_text`)."""
        return fault_text(fault, self.name(fault.seat))

    def round_summary(self, record: RoundRecord) -> list[str]:
        """A few lines on a finished round: contract and outcome, points, score."""
        number = record.number + 1
        sc = record.score
        if sc is None:
            return [
                _("Round {number}: everybody passed, the next dealer deals again.").format(
                    number=number
                )
            ]
        lines = [
            _("Round {number}: {contract} - {outcome}{sweep}.").format(
                number=number,
                contract=self._contract_words(record),
                outcome=_(OUTCOME_WORDS[sc.outcome]),
                sweep=sweep_text(sc, self.name, self.side_label),
            )
        ]
        fields = {
            "cards": self.sides_text(sc.card_points),
            "announcements": self.sides_text(sc.announcements),
            "belote": self.sides_text(sc.belote),
        }
        if any(sc.announcements) and any(sc.belote):
            points = _("Card points {cards}; announcements {announcements}; belote {belote}.")
        elif any(sc.announcements):
            points = _("Card points {cards}; announcements {announcements}.")
        elif any(sc.belote):
            points = _("Card points {cards}; belote {belote}.")
        else:
            points = _("Card points {cards}.")
        lines.append(points.format(**fields))
        gained = ", ".join(f"{self.side_label(t)} +{sc.score[t]}" for t in self.sides())
        game = "-".join(str(record.scores_after[t]) for t in self.sides())
        lines.append(_("Round score {gained}; game {game}.").format(gained=gained, game=game))
        if sc.outcome is Outcome.LITIGE:
            lines.append(
                _("Litige: the points of {team} wait in the pot ({pot}).").format(
                    team=self.team_label(record.taker % 2), pot=sc.pending
                )
            )
        elif sc.pending:
            lines.append(_("Litige pot: {pot}.").format(pot=sc.pending))
        return lines

    def _over(self, state: State) -> list[Notice]:
        self.scores = state.scores
        self.sheet = format_sheet(state, self.seat_names(), me=self.me)
        self.to_act = -1
        self.legal = ()
        me = self.side_of(self.seat)
        if state.winner is None:
            self.ended = _("Game over.")
        else:
            label = self.side_label(state.winner)
            score = winner_first(state.scores, state.winner)
            if self.me is not None and state.winner == me:
                self.ended = _("Game over: You win {score}.").format(score=score)
            elif self.rules.has_teams:
                self.ended = _("Game over: {side} win {score}.").format(side=label, score=score)
            else:
                self.ended = _("Game over: {name} wins {score}.").format(name=label, score=score)
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
        now = self.clock() if now is None else now
        return max(0, round(self.deadline[1] - now))

    def seconds_to_sign_out(self, now: float | None = None) -> int | None:
        if self.late is None or self.late[0] != self.to_act:
            return None
        now = self.clock() if now is None else now
        return max(0, round(self.late[1] - now))

    def my_turn(self) -> bool:
        """This seat decides now: its own turn, or the dummy's when it is its partner."""
        return self.to_act == self.deciding_for() and bool(self.legal)

    def shown_hand(self) -> tuple[Card, ...]:
        """The hand in the order it is shown: the one to choose from (the dummy's open
        hand while we decide for it). A watcher has none: what its observer knows of seat
        0's hand, the taker's turned card, is not a hand of its own."""
        if self.me is None:
            return ()
        hand = self.dummy_hand if self.deciding_for() != self.seat else self.hand
        return display_hand(hand, self.trump if self.phase is Phase.PLAY else -1)

    def open_hand(self) -> tuple[Card, ...]:
        """The dummy's cards, face up for every seat, in the order they are shown."""
        return display_hand(self.dummy_hand, self.trump if self.phase is Phase.PLAY else -1)

    def open_hand_text(self) -> str:
        """``Bob's open hand: 7♠ A♠ ...`` (empty without a dummy)."""
        if self.dummy is None or self.phase not in LIVE_PHASES:
            return ""
        cards = " ".join(card_text(c) for c in self.open_hand()) or _("none left")
        return _("{name}'s open hand: {cards}").format(name=self.names[self.dummy], cards=cards)

    def numbers(self) -> dict[Card, int]:
        """Each card's number for this round (:func:`card_numbers`); none before the play."""
        return card_numbers(self.observation())

    def last_trick_text(self, *, symbols: bool = True) -> str:
        t = self.last_trick
        if t is None:
            return _("No trick yet.")
        return _("Last trick: {trick}").format(trick=self.trick_text(t, symbols=symbols))

    def piles_text(self, seat: int) -> str:
        """Two-handed: ``Bob's piles: 1 A♥ and a face-down card, 2 none, ...``."""
        parts = []
        for i, (top, hidden) in enumerate(self.observation().piles(seat), 1):
            if top is not None and hidden:
                pile = _("{number} {card} on a face-down card")
            elif top is not None:
                pile = "{number} {card}"
            elif hidden:
                pile = _("{number} a face-down card")
            else:
                pile = _("{number} empty")
            card = card_text(top) if top is not None else ""
            parts.append(pile.format(number=i, card=card))
        piles = ", ".join(parts)
        return self.by(seat, N_("Your piles: {piles}"), N_("{name}'s piles: {piles}"), piles=piles)

    def trick_text(self, t: Trick, *, symbols: bool = True) -> str:
        plays = ", ".join(
            f"{self.name((t.leader + i) % self.seats)} {card_text(c, symbols=symbols)}"
            for i, c in enumerate(t.cards)
        )
        return self.by(
            t.winner,
            N_("{plays}; You won it ({points})."),
            N_("{plays}; {name} won it ({points})."),
            plays=plays,
            points=t.points,
        )

    def title(self) -> str:
        variant, target = variant_name(self.rules.name), self.rules.target
        if self.number is None:
            return _("Belote {variant} to {target}").format(variant=variant, target=target)
        return _("Belote {variant} to {target} · round {number} · dealer {dealer}").format(
            variant=variant, target=target, number=self.number + 1, dealer=self.name(self.dealer)
        )

    def contract_line(self) -> str:
        if self.phase is None:
            return _("Waiting for the deal.") if self.ready else _("Waiting for the peers.")
        turned = card_text(self.turned) if self.turned is not None else None
        if self.phase is Phase.PLAY:
            if self.taker < 0:
                return _("Trump {trump} (the last card dealt); nobody takes").format(
                    trump=trump_text(self.trump)
                )
            contract = self._contract_words_now()
            if turned and not self.rules.is_coinche:
                return _("Contract: {contract} (turned {card})").format(
                    contract=contract, card=turned
                )
            return _("Contract: {contract}").format(contract=contract)
        if self.phase is Phase.AUCTION:
            if self.taker >= 0 and self.contract:
                return _("Best bid: {bid}").format(bid=self._contract_words_now())
            return _("Auction: no bid yet")
        if self.phase is Phase.TAKE_FIRST:
            return _("Turned card: {card} (first turn)").format(card=turned)
        if self.phase is Phase.TAKE_SECOND:
            return _("Turned card: {card} (second turn)").format(card=turned)
        return _("Round over")

    def _contract_words_now(self) -> str:
        taker = self.name(self.taker)
        trump = trump_text(self.trump)
        if self.contract:
            return bid_contract_text(taker, self.contract, trump, self.multiplier, factor=True)
        return _("{name}, trump {trump}").format(name=taker, trump=trump)

    def bids_line(self, width: int) -> str:
        if not self.rules.has_bidding:
            return _("No bidding · {mark} a face-down card, turned up when its trick ends").format(
                mark=HIDDEN_MARK
            )
        if not self.bids:
            return _("Bids: none yet")
        parts = [f"{self.name(s)} {bid_text(b)}" for s, b in self.bids]
        text = _("Bids: {bids}").format(bids=" · ".join(parts))
        while len(text) > width and len(parts) > 1:
            parts.pop(0)
            text = _("Bids: … {bids}").format(bids=" · ".join(parts))
        return text

    def score_line(self) -> str:
        scores, target = self.sides_text(self.scores, " · "), self.rules.target
        if self.pending:
            return _("{scores} · to {target} · litige pot {pot}").format(
                scores=scores, target=target, pot=self.pending
            )
        return _("{scores} · to {target}").format(scores=scores, target=target)

    def turn_parts(self, now: float | None = None, how: str = "") -> tuple[str, int | None, str]:
        """The turn line in three parts, the countdown between them, for a renderer that
        ticks it: ``("▶ Your turn", 12, ": play a card (...)")`` draws as ``▶ Your turn (12
        s left): play a card (...)``; the seconds are None without a known deadline.
        ``how``: the renderer's way to play a card (the terminal's by default)."""
        if self.ended:
            return self.ended, None, ""
        if self.link_down:
            return _("Your connection is down: reconnecting…"), None, ""
        left = self.seconds_left(now)
        if self.my_turn():
            head = _("▶ Your turn")
            if self.deciding_for() != self.seat:
                head = _("▶ Your turn for {name} (open hand)").format(name=self.names[self.to_act])
            if self.phase is Phase.PLAY:
                how = how or _("play a card (its number or name, e.g. {number} or {card})").format(
                    number=3, card="10" + suit_letter(1).lower()
                )
            else:
                how = self.bid_hint()
            # TRANSLATORS: what to do now, after "▶ Your turn" and its countdown.
            return head, left, _(": {what}").format(what=how)
        if self.to_act == self.me and self.phase in LIVE_PHASES:
            return _("▶ Your turn…"), None, ""
        if self.to_act >= 0 and self.phase not in (None, Phase.DEAL, Phase.GAME_OVER):
            who = self.name(self.to_act)
            if self.to_act == self.dummy:
                who = _("{partner} (for {name}'s open hand)").format(
                    partner=self.name(partner_of(self.to_act)), name=who
                )
            if self.to_act in self.disconnected:
                text = _("Waiting for {name}, whose connection is down: reconnecting…")
                return text.format(name=who), None, ""
            gone = self.seconds_to_sign_out(now)
            if gone is not None:
                text = _("Waiting for {name}: late, signed out in {seconds} s")
                return text.format(name=who, seconds=gone), None, ""
            return _("Waiting for {name}").format(name=who), left, "…"
        if self.ready:
            return _("Waiting for the next deal…"), None, ""
        return self.opening or _("Waiting for the peers…"), None, ""

    def turn_line(self, now: float | None = None, how: str = "") -> str:
        """The turn line as one string at ``now`` (:meth:`turn_parts`)."""
        head, left, tail = self.turn_parts(now, how)
        if left is None:
            return head + tail
        return _("{turn} ({seconds} s left)").format(turn=head, seconds=left) + tail

    def warn(self, now: float | None = None) -> bool:
        """Our turn's time is nearly out: the countdown is drawn in red."""
        left = self.seconds_left(now)
        return self.my_turn() and left is not None and left <= WARN_SECONDS

    def bid_hint(self) -> str:
        """What the seat may bid now, in a few words, from its legal actions."""
        bids = [b for b in self.legal if isinstance(b, Bid)]
        kinds = {b.kind for b in bids}
        parts: list[str] = []
        if BidKind.TAKE in kinds:
            parts.append(pgettext("choice", "take"))
        suits = [b.trump for b in bids if b.kind is BidKind.CHOOSE]
        if suits:
            letters = " ".join(suit_letter(t) for t in suits)
            parts.append(_("name a suit ({suits})").format(suits=letters))
        example = next((b for b in bids if b.kind is BidKind.BID), None)
        if example is not None:
            parts.append(_("bid (e.g. {bid})").format(bid=bid_text(example, symbols=False)))
        if BidKind.COINCHE in kinds:
            parts.append(pgettext("choice", "coinche"))
        if BidKind.SURCOINCHE in kinds:
            parts.append(pgettext("choice", "surcoinche"))
        if BidKind.PASS in kinds:
            parts.append(pgettext("choice", "pass"))
        if len(parts) < 2:
            return "".join(parts)
        return _("{choices} or {last}").format(choices=", ".join(parts[:-1]), last=parts[-1])

    # -- the peer's status ------------------------------------------------------------------

    @property
    def link_down(self) -> bool:
        """Our own link is down: every other seat is unreachable at once (it is not they
        who are gone, it is us)."""
        others = frozenset(range(self.seats)) - {self.seat}
        return bool(others) and others <= self.disconnected and self.ended is None

    def apply_status(self, status: PeerStatus, now: float | None = None) -> list[Notice]:
        """Take in the peer's status: the deadline of the seat to act (ours too), late
        seats, lost and regained links; the news it brought, as notices."""
        now = self.clock() if now is None else now
        for wait in status.waiting_for:
            if not wait.decision:
                continue
            if wait.deadline_in > 0:
                self.set_deadline(wait.seat, now + wait.deadline_in)
            elif wait.seat != self.seat:
                self.set_late(wait.seat, now + max(0.0, wait.abandon_in))
        notices: list[Notice] = []
        overdue = frozenset(w.seat for w in status.overdue if w.seat != self.seat)
        for wait in status.overdue:
            if wait.seat in overdue - self.overdue:
                left = max(0, round(wait.abandon_in))
                notices += self._say(
                    _("{name} is late: signed out in {seconds} s if silent.").format(
                        name=self.names[wait.seat], seconds=left
                    )
                )
        self.overdue = overdue
        was_down = self.link_down
        lost = status.disconnected - self.disconnected
        back = self.disconnected - status.disconnected
        self.disconnected = status.disconnected
        if self.link_down and not was_down:
            notices += self._say(
                _(
                    "Your connection is down: reconnecting… Your seat waits for you; if it "
                    "stays down past the grace, the others sign you out."
                )
            )
        elif was_down and not self.link_down:
            notices += self._say(_("Your connection is back: the game goes on."))
        elif not self.link_down:
            for seat in sorted(lost):
                notices += self._say(
                    _("{name} lost the connection; waiting for them to come back.").format(
                        name=self.names[seat]
                    )
                )
            for seat in sorted(back):
                notices += self._say(_("{name} is back.").format(name=self.names[seat]))
        return notices

    def resign(self) -> None:
        """The person asked to leave the game (the renderer then signs the seat gone)."""
        self.resigned = True

    # -- what each renderer draws -------------------------------------------------------------

    def trick_on_show(self, now: float | None = None, hold: float = 0.0) -> Trick | None:
        """The completed trick to draw in place of the table's: the last one won, until the
        next trick's first card, or, with ``hold`` (:data:`TRICK_HOLD`), for ``hold``
        seconds after it was won even if the next trick has begun; None once dismissed
        (:meth:`dismiss_trick`) or when the table's own trick is the one to draw."""
        if self.completed_at is None or self.last_trick is None:
            return None
        if self.phase is Phase.PLAY and not self.trick:
            return self.last_trick
        now = self.clock() if now is None else now
        if self.phase is Phase.PLAY and hold > 0 and now - self.completed_at < hold:
            return self.last_trick
        return None

    def drawn_trick(
        self, now: float | None = None, hold: float = 0.0
    ) -> tuple[dict[int, Card], int | None, Trick | None]:
        """The trick to draw on the table: its cards by seat, the seat winning (or that won)
        it, and the completed trick when that is the one on show (:meth:`trick_on_show`)."""
        shown = self.trick_on_show(now, hold)
        if shown is not None:
            cards = {(shown.leader + i) % self.seats: c for i, c in enumerate(shown.cards)}
            return cards, shown.winner, shown
        return self.trick_cards(), self.trick_master(), None

    def dismiss_trick(self) -> None:
        """The person moved on (a key, a click): the completed trick leaves the table."""
        self.completed_at = None

    def hand_cards(self) -> tuple[tuple[Card, int | None], ...]:
        """The hand as every renderer shows it: in the shown order, each card with the number
        it keeps for the round (None before the play); two-handed, the cards on top of our
        piles, by pile."""
        numbers = self.numbers()
        if self.seats == 2 and numbers:
            return tuple(sorted(numbers.items(), key=lambda item: item[1]))
        return tuple((c, numbers.get(c)) for c in self.shown_hand())

    def position(self, seat: int) -> str:
        """Where ``seat`` sits on the screen, seen from ours (:data:`POSITIONS`)."""
        return POSITIONS[self.seats][(seat - self.seat) % self.seats]

    def cards_held(self, seat: int) -> int:
        """How many cards ``seat`` holds now, as every seat may count them (its card backs;
        two-handed, the cards left in its piles, face up or down)."""
        if self.phase is Phase.PLAY:
            played = seat in self.trick_cards()
            return max(0, self.rules.tricks_per_round - self.tricks_done - played)
        if self.phase in (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION):
            # Every seat holds what the first deal gave it (a watcher holds no hand to count).
            return deal_owners(self.rules, self.dealer).count(seat)
        return 0

    def piles(self, seat: int) -> tuple[tuple[Card | None, bool], ...]:
        """Two-handed: ``seat``'s eight piles, the card on top of each (None: none) and
        whether a face-down card lies under it; empty in the other variants."""
        return self.observation().piles(seat) if self.seats == 2 else ()

    def trick_header(self, now: float | None = None, hold: float = 0.0) -> str:
        """``Trick 3 of 8 · Bob led · master You ★``, or, a completed trick on show, ``Trick
        2 of 8 won by Bob (24) · You lead``."""
        if self.phase is not Phase.PLAY:
            return ""
        total = self.rules.tricks_per_round
        shown = self.trick_on_show(now, hold)
        if shown is not None:
            text = _("Trick {number} of {total} won by {name} ({points})").format(
                number=self.tricks_done,
                total=total,
                name=self.name(shown.winner),
                points=shown.points,
            )
            if self.to_act >= 0 and not self.trick:
                text = self.by(
                    self.to_act,
                    N_("{trick} · You lead the next"),
                    N_("{trick} · {name} leads the next"),
                    trick=text,
                )
            return text
        number = min(self.tricks_done + 1, total)
        text = _("Trick {number} of {total}").format(number=number, total=total)
        if self.trick:
            text = _("{trick} · {name} led").format(trick=text, name=self.name(self.leader))
            master = self.trick_master()
            if master is not None:
                text = _("{trick} · master {name} {mark}").format(
                    trick=text, name=self.name(master), mark=MASTER_MARK
                )
        elif self.to_act >= 0:
            text = self.by(
                self.to_act, N_("{trick} · You lead"), N_("{trick} · {name} leads"), trick=text
            )
        return text

    def _bid_options_now(self) -> str:
        return bid_options(self.observation(), short=True)

    def observation(self, legal: tuple[Action, ...] | None = None) -> Observation:
        """What the view knows, as an observation (``legal``: the view's own if None)."""
        played = 0
        for c in (*(c for t in self.tricks for c in t.cards), *self.trick):
            played |= 1 << c
        seat = self.deciding_for()
        hand = self.hand if seat == self.seat else self.dummy_hand
        return Observation(
            seat, self.rules, self.phase or Phase.DEAL, self.number or 0, self.dealer,
            hand, self.legal if legal is None else legal, self.to_act, self.turned,
            self.bids, self.trump, self.taker, self.contract, self.multiplier, self.leader,
            self.trick, self.tricks, played, self.declared, self.belote, (0, 0, 0, 0),
            (0, 0, 0, 0), self.scores, self.pending, self.open_deck,
        )  # fmt: skip
