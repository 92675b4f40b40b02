"""The table session: one seat's side of a whole game, as a sans-io state machine.

Signed envelopes in (:meth:`TableSession.receive`), signed envelopes and events out
(:meth:`TableSession.take_outbox`, :meth:`TableSession.take_events`); a local decision goes
in through :meth:`TableSession.act`. No sockets, no clock: the trio layer
(:mod:`belote_p2p.net.peer`) moves bytes, and tests pass envelopes between the sessions.

Seats. A table has ``rules.seats`` seats: four (classic, coinche), three (three-handed) or
two (two-handed); "the four" below reads "every seat" for the others, and a seat is gone
once every other seat signed its abandonment. Two-handed has no bidding: the deal goes
straight to the play, and after each trick the session turns up, through the deck protocol,
the face-down cards the engine lists (``State.pending_openings``) before any play is
processed (``protocol/PROTOCOL.md`` §10).

Order. Envelopes are accepted per sender in sequence
(:class:`~belote_p2p.protocol.wire.ChainTracker`) and processed in causal order: an envelope
is processed only after every envelope named in its ``seen`` field, so each peer applies the
same actions to the same state, whatever order the connections deliver them in. A bid or a
card is then checked against the engine (turn, legality as far as it can be decided, the
deck protocol's proof for the card) and against the ``state`` digest it carries, before it
changes anything.

Phases. Where the seat stands is one :class:`SessionPhase`, changed only along the table
``_TRANSITIONS``. Each body type has one handler, which lets its envelope wait, applies it
or blames its sender; the seat's own steps (its deck messages, the deal, its reveal, the
audit, ``done`` and ``bye``) are taken between envelopes. The bodies are built and read by
:mod:`belote_p2p.protocol.bodies` (``protocol/PROTOCOL.md`` §6 is the reference); the events
are in :mod:`belote_p2p.protocol.events`.

Crash and resume: a seat's round secrets come from a
:class:`~belote_p2p.protocol.secretstore.SecretStore`, which keeps them (on disk, in the
peer) before they are first used; :meth:`TableSession.resume` rebuilds a session from its
transcript and that store, re-deriving its own envelopes and checking them against the
recorded ones, so that it signs nothing it did not sign before.

A message that breaks a rule is a fault of its sender: the session stops, reports
:class:`~belote_p2p.protocol.events.PeerFault` with the signed envelope as evidence, and
keeps its record.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from secrets import token_bytes
from typing import Any, Final, Protocol

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.audit import audit_round, corrected_record
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Action, Bid, Claim, IllegalActionError, Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import partner_of

from .bodies import (
    abandon_body,
    abandoned_seat,
    bid_body,
    bye_body,
    chat_body,
    chat_text,
    deck_body,
    deck_message,
    done_body,
    done_scores,
    encode_sync,
    fault_body,
    fault_evidence,
    parse_bid,
    parse_sync,
    play_body,
    play_claim,
    play_message,
    round_of,
    state_of,
    table_body,
    table_digest,
    table_proposal,
)
from .deck import (
    DeckError,
    DeckMessage,
    DeckPeer,
    DeckPhase,
    OpenMessage,
    ReleaseMessage,
    RevealMessage,
    SharesMessage,
    ShuffleMessage,
    SplitMessage,
)
from .events import (
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
    TableDisputed,
    TableReady,
)
from .group import random_scalar, scalar_bytes
from .identity import Identity
from .secretstore import MemorySecrets, SecretStore
from .table import TableDefinition
from .wire import (
    ZERO_HASH,
    BrokenChain,
    ChainTracker,
    Envelope,
    Equivocation,
    MalformedMessage,
    WrongTable,
    decode,
    encode,
)

MAX_EARLY = 64
"""Envelopes held per sender while an earlier one is missing."""
ENVELOPE_CAPS: Final[Mapping[str, int]] = {
    "table": 1 << 9,
    "deck": 1 << 14,  # a shuffle: 32 ciphertexts and their proof
    "bid": 1 << 9,
    "play": 1 << 11,  # a share, its proof and the announcements claimed
    "done": 1 << 9,
    "bye": 1 << 9,
    "abandon": 1 << 9,
    "fault": 5 << 14,  # up to four envelopes of evidence
    "chat": 1 << 11,  # a line of at most MAX_CHAT_CHARS characters
}
"""The largest encoded envelope of each body type; a signed envelope over it is a fault."""
MAX_ENVELOPE = max(ENVELOPE_CAPS.values())
MAX_EVIDENCE = 4
"""Envelopes of evidence in one fault report (and taken in from one)."""
EVIDENCE_BUDGET = ENVELOPE_CAPS["fault"] - (1 << 12)
"""Bytes of evidence in one fault report: what fits under its cap, with room to spare."""
ROUND_CAPS: Final[Mapping[str, int]] = {"deck": 16, "bid": 48, "play": 16}
"""The most envelopes of each kind a seat signs in one round (an honest one signs at most 8
deck messages, 8 plays and, in a coinche auction, about 14 bids; twice as many bids and
plays when it plays its partner's open hand too, and a round dealt again after a leave
takes a second key, split and shuffle)."""
TWO_HANDED_ROUND_CAPS: Final[Mapping[str, int]] = {"deck": 24, "bid": 0, "play": 16}
"""Two-handed: 16 plays, and besides its key, shuffle, shares and reveal a seat's share of
the cards each of 15 tricks turns up."""
GAME_CAPS: Final[Mapping[str, int]] = {
    "table": 1, "done": 1, "bye": 1, "abandon": 64, "fault": 2, "chat": 200,
}  # fmt: skip
"""The most envelopes of each kind without a round a seat signs in one game (chat: enough
for a chatty game, bounded all the same; ``abandon``: one vote per seat and point of its
chain it stalled at, so that a seat that delays again and again can be voted on again)."""
PROGRESS_TYPES: Final = frozenset({"table", "deck", "bid", "play", "done"})
"""The bodies that deliver what a seat owes. A seat's *progress* is how many of them its
chain holds; a vote that it is gone counts only beside votes for the same progress, so
that filler (chat, fault reports, votes, envelopes held for a later round) never restarts a
deadline and a vote lapses once the seat delivered (``protocol/PROTOCOL.md`` §6.6)."""


def delivers(envelope: Envelope, seat: int) -> bool:
    """``envelope`` of ``seat`` moves its progress: a body of :data:`PROGRESS_TYPES`, or its
    resignation (a decision of the seat, as a bid is: a resignation that raced votes
    against it is held behind them as a late move is, PROTOCOL.md §6.7)."""
    kind = envelope.type
    return kind in PROGRESS_TYPES or (kind == "abandon" and abandoned_seat(envelope.body) == seat)


UNDERIVED: Final = frozenset({"chat", "abandon"})
"""Bodies of our own that no input derives (a person's line; a vote our clock decided, or a
resignation): a resumed session keeps them from its record, as they were signed."""
ACTION_HISTORY = 512
"""Applied bids and plays remembered, with the state after each, to find the state at an
abandonment's causal cut (far more than the actions of one round)."""
MAX_SYNC_REPLY = 4096
_BEYOND = 1 << 62
"""Past every seq and every point: what an envelope names that this peer does not hold yet."""
STATE_LABEL = b"belote-p2p/state/v1\x00"


def fresh_secrets() -> tuple[bytes, bytes]:
    """New deck secrets for a round: its secret key and its shuffle seed (kept by the
    :class:`~belote_p2p.protocol.secretstore.SecretStore` before their first use)."""
    return scalar_bytes(random_scalar()), token_bytes(32)


class SessionError(LocalProtocolError):
    """The local program misused the session (acting out of turn, an illegal card...)."""


class RuleBroken(RemoteProtocolError):
    """Raised inside the session when a validly signed envelope breaks a rule; it becomes
    the :class:`~belote_p2p.protocol.events.PeerFault` event (the signed envelopes in
    ``evidence`` prove it to anyone)."""

    seat: int

    def __init__(self, seat: int, reason: str, evidence: tuple[bytes, ...] = ()) -> None:
        super().__init__(f"seat {seat}: {reason}", seat=seat, evidence=evidence)
        self.reason = reason


class SessionPhase(Enum):
    """Where a seat stands in the game (:attr:`TableSession.phase`).

    A round goes DEALING, BIDDING, COMPLETING, PLAYING, ROUND_OVER, REVEALING, then
    BETWEEN_ROUNDS or GAME_OVER; four passes go from BIDDING to ROUND_OVER (a redeal). The
    engine's :class:`~belote_p2p.game.engine.Phase` says whose turn it is; this says which
    step of the seat's own is next. An abandonment is no phase: it decides the outcome
    (:attr:`TableSession.abandoned`), and the session goes on checking what still comes.
    """

    SIGNING = "signing"
    """The four ``table`` signatures come in; no other body counts before them."""
    BETWEEN_ROUNDS = "between-rounds"
    """The table is signed, or a round was audited: the next round's deck protocol starts at
    the next step."""
    DEALING = "dealing"
    """The round's deck protocol runs (keys, shuffles, the first decryption shares) until
    the first cards open and the engine deals."""
    BIDDING = "bidding"
    """The engine holds the first cards: bids are applied in turn."""
    COMPLETING = "completing"
    """A bid named the taker: the completion shares open the rest of the hands (classic; in
    coinche every card is open already and the phase passes at once)."""
    PLAYING = "playing"
    """The engine holds the whole hand of this seat: cards are applied in turn."""
    ROUND_OVER = "round-over"
    """The engine closed the round (eight tricks, or four passes and a redeal): this seat's
    reveal is due."""
    REVEALING = "revealing"
    """This seat revealed its round secrets; with the others' reveals the round is audited,
    and rescored if the audit finds a fault."""
    GAME_OVER = "game-over"
    """The last round is audited: this seat signs the final score (``done``); the four
    ``done`` come in."""
    FINISHED = "finished"
    """The four ``done`` are in: this seat said ``bye``, and the others' come in (a peer
    keeps answering until then)."""
    CLOSED = "closed"
    """Every seat said ``bye`` (for an observer: every ``done`` is in); each holds the whole
    game."""
    STOPPED = "stopped"
    """A fault stopped the game (:attr:`TableSession.fault`); the record is kept."""


_TRANSITIONS: Final[Mapping[SessionPhase, frozenset[SessionPhase]]] = {
    # A fault may stop the game in any phase.
    SessionPhase.SIGNING: frozenset({
        SessionPhase.BETWEEN_ROUNDS,  # the fourth signature
        SessionPhase.STOPPED,
    }),
    SessionPhase.BETWEEN_ROUNDS: frozenset({
        SessionPhase.DEALING,  # the round's deck protocol starts (a seat sends its key)
        SessionPhase.STOPPED,
    }),
    SessionPhase.DEALING: frozenset({
        SessionPhase.DEALING,  # a seat left before its shuffle: the round is dealt again
        SessionPhase.BIDDING,  # the first cards open: the engine deals
        SessionPhase.COMPLETING,  # two-handed: no bidding, the play starts
        SessionPhase.STOPPED,
    }),
    SessionPhase.BIDDING: frozenset({
        SessionPhase.COMPLETING,  # a bid named the taker
        SessionPhase.ROUND_OVER,  # four passes: a redeal
        SessionPhase.STOPPED,
    }),
    SessionPhase.COMPLETING: frozenset({
        SessionPhase.PLAYING,  # the whole hand is in the engine
        SessionPhase.STOPPED,
    }),
    SessionPhase.PLAYING: frozenset({
        SessionPhase.ROUND_OVER,  # the last card
        SessionPhase.STOPPED,
    }),
    SessionPhase.ROUND_OVER: frozenset({
        SessionPhase.REVEALING,  # our reveal
        SessionPhase.STOPPED,
    }),
    SessionPhase.REVEALING: frozenset({
        SessionPhase.BETWEEN_ROUNDS,  # the audit, the game goes on
        SessionPhase.GAME_OVER,  # the audit, a team reached the target
        SessionPhase.STOPPED,
    }),
    SessionPhase.GAME_OVER: frozenset({
        SessionPhase.FINISHED,  # the fourth done
        SessionPhase.CLOSED,  # the fourth done, for an observer
        SessionPhase.STOPPED,
    }),
    SessionPhase.FINISHED: frozenset({
        SessionPhase.CLOSED,  # the fourth bye
        SessionPhase.STOPPED,
    }),
    SessionPhase.CLOSED: frozenset({
        SessionPhase.STOPPED,  # a late equivocation is still one
    }),
    SessionPhase.STOPPED: frozenset(),
}  # fmt: skip
"""Every allowed transition: phase -> the phases it may go to."""

_ROUND_GOES_ON: Final = frozenset({
    SessionPhase.DEALING, SessionPhase.BIDDING, SessionPhase.COMPLETING, SessionPhase.PLAYING,
})  # fmt: skip
"""The phases of a round that is neither closed nor revealed."""
_DECIDING: Final = frozenset({SessionPhase.BIDDING, SessionPhase.PLAYING})
_AFTER_THE_GAME: Final = frozenset({
    SessionPhase.GAME_OVER, SessionPhase.FINISHED, SessionPhase.CLOSED,
})  # fmt: skip
_ALL_DONE: Final = frozenset({SessionPhase.FINISHED, SessionPhase.CLOSED})
"""The four ``done`` are in."""
_MID_ROUND: Final = _ROUND_GOES_ON | {SessionPhase.ROUND_OVER, SessionPhase.REVEALING}
"""The phases with a round's deck in play: a seat that leaves then has its cards released."""
_IGNORED_FROM_THE_DUMMY: Final = frozenset({"chat", "fault"})
"""What a dummy's own chain may still say that is processed: nothing else of it counts once
it left (its partner acts for it)."""


class _Deck(Protocol):
    """What the session uses of a round's deck protocol: a seat's DeckPeer or an observer's."""

    round_number: int
    taker: int | None

    @property
    def phase(self) -> DeckPhase: ...
    def receive(self, msg: DeckMessage) -> None: ...
    def next_messages(self) -> list[DeckMessage]: ...
    def known_cards(self) -> tuple[Card | None, ...]: ...
    def card_at(self, position: int) -> Card | None: ...
    def waiting_for(self) -> frozenset[int]: ...
    @property
    def has_work(self) -> bool: ...
    def work(self) -> None: ...
    def audit(self) -> tuple[Card, ...]: ...
    def set_taker(self, taker: int) -> object: ...
    def open(self, positions: Iterable[int]) -> object: ...
    def requested(self) -> frozenset[int]: ...
    def positions_of(self, seat: int) -> tuple[int, ...]: ...
    def set_gone(self, gone: int) -> None: ...


@dataclass(frozen=True, slots=True)
class _Received:
    """An envelope being processed, as its handler sees it."""

    envelope: Envelope
    seat: int
    own: bool

    @property
    def body(self) -> dict[str, Any]:
        return self.envelope.body

    @property
    def evidence(self) -> tuple[bytes, ...]:
        return (self.envelope.encode(),)

    def fault(self, reason: str) -> RuleBroken:
        return RuleBroken(self.seat, reason, self.evidence)


class TableSession:
    """One seat's view and conduct of a game (see the module docstring).

    With ``seat=None`` (and no identity) the session is an observer: it sends nothing and
    checks everything it is given, which is how a transcript is verified offline.
    """

    def __init__(
        self,
        definition: TableDefinition,
        seat: int | None,
        identity: Identity | None,
        *,
        secrets: SecretStore | None = None,
        proposal: bytes | None = None,
    ) -> None:
        if seat is not None and (
            identity is None or definition.seats[seat].key != identity.public_key_bytes
        ):
            raise SessionError(f"this identity is not the key of seat {seat}")
        if seat == 0 and proposal is None:
            assert identity is not None
            proposal = definition.propose(identity)
        if seat is not None and not definition.proposed_by_host(proposal):
            raise SessionError("a seat signs the table with its host's signature of it")
        self.proposal = proposal
        """The host's signature of the definition, repeated in our ``table`` envelope."""
        self.definition = definition
        self.seat = seat
        self.identity = identity
        self.tracker = ChainTracker(definition.table_id, definition.roster)
        self.seats = definition.rules.seats
        """How many seats play: 4, 3 (three-handed) or 2 (two-handed)."""
        self._round_caps = ROUND_CAPS if definition.rules.has_bidding else TWO_HANDED_ROUND_CAPS
        self.state = State.new_game(definition.rules)
        self.deck: _Deck | None = None
        self.overlap = False
        """Set by a driver that calls :meth:`work` when no input waits: a seat whose shuffle
        comes next then makes and sends it before checking the previous one's proof
        (``protocol/DECK.md`` §4), from the next round dealt on."""
        self.secrets: SecretStore = secrets if secrets is not None else MemorySecrets()
        self._recorded: dict[int, Envelope] = {}  # our own envelopes from a transcript, by seq
        self._abandon_votes: dict[tuple[int, int], dict[int, Envelope]] = {}
        """Votes that a seat is gone, by (seat, its progress the voter saw), by voter."""
        self.abandoned: int | None = None
        self.abandoned_state: State | None = None
        """The game where the abandonment cut it (see :meth:`_state_at_cut`)."""
        self.dummy: int | None = None
        """The seat that left and plays on with its hand open, decided by its partner
        (four seats only: :meth:`_seat_gone`)."""
        self.left: SeatLeft | None = None
        """The leave that made :attr:`dummy` (for the leaver itself, the end of its game)."""
        self._leave: tuple[Envelope, ...] = ()
        """The envelopes that decided the leave: the resignation, or the three votes."""
        self._public: frozenset[int] = frozenset()
        """Seats dealt face up in every later round (the dummy): its deck secrets are public."""
        self._redealt: int | None = None
        """The round dealt again with the dummy face up (its shuffle was not in at the leave):
        the deck messages of that round that do not know the leave were for the old deal."""
        self._given_up: _Deck | None = None
        """The deck of that old deal: its late messages are checked there (a bad one is a
        fault, wherever a peer processed it, before the leave or after)."""
        self._deferred: list[DeckMessage] = []
        """Deck messages made while an envelope was processed (the leave's release, the
        key of a round dealt again), sent at the next local step: an envelope signed then
        names in its ``seen`` what was processed, the leave included."""
        self._steps: set[tuple[int, type]] = set()
        """(seat, message type) of the deck messages processed in the round in play."""
        self._votes_on: dict[int, list[Envelope]] = {}
        """The votes accepted against each seat (for :meth:`_held`)."""
        self._foreseen: ChainTracker | None = None
        """An observer given a whole record: its chains, all taken as accepted for the hold
        of a late envelope (:meth:`foresee`)."""
        self._foreseen_hashes: dict[bytes, Envelope] = {}
        self._shown_seqs: dict[tuple[int, int], list[int]] = {}
        """By (voter, seat): per envelope of the voter's chain, the latest envelope of the
        seat it or an earlier one names (:meth:`_shown`)."""
        self._went_on: set[int] = set()
        """Seats we must show we went on past a vote against (:meth:`_passed_unsigned`)."""
        self._progress: list[list[int]] = [[] for _ in range(definition.rules.seats)]
        """Per seat, per envelope of its chain (by seq), its progress through that one."""
        self._history: deque[tuple[int, int, State]] = deque(maxlen=ACTION_HISTORY)
        """(seat, seq, state after) of each applied bid and play, the last ones."""
        self._first_state = self.state
        self._signed: set[int] = set()
        self._processed: set[bytes] = {ZERO_HASH}
        self._by_hash: dict[bytes, Envelope] = {}
        self._early: dict[int, dict[int, Envelope]] = {}
        self._last_processed = [ZERO_HASH] * self.seats
        self._pending: list[Envelope] = []
        self._outbox: list[Envelope] = []
        self._events: list[Event] = []
        self._digest = hashlib.sha256(STATE_LABEL + definition.digest).digest()
        self._phase = SessionPhase.SIGNING
        # A decision is asked once, however often the session steps: (round, action count).
        self._asked: tuple[int, int] | None = None
        self._done: dict[int, Envelope] = {}
        """Each seat's ``done`` envelope, once processed (a leave after it changes nothing)."""
        self._bye: set[int] = set()
        self.fault: PeerFault | None = None
        self.disputed: TableDisputed | None = None
        """The seats signed different tables and no signature shows who lied."""
        self._host_signed: Envelope | None = None  # a table envelope with the host's proposal
        self.started = False
        self._signed_counts: dict[int, dict[tuple[str, int | None], int]] = {}
        self._reported: set[int] = set()  # seats that sent a fault report
        self._last_round: dict[int, int] = {}
        self._chats_sent = 0
        self._handlers: dict[str, Callable[[_Received], bool]] = {
            "table": self._on_table,
            "deck": self._on_deck,
            "bid": self._on_bid,
            "play": self._on_play,
            "done": self._on_done,
            "bye": self._on_bye,
            "abandon": self._on_abandon,
            "fault": self._on_fault,
            "chat": self._on_chat,
        }

    # -- reading -------------------------------------------------------------------------

    @property
    def phase(self) -> SessionPhase:
        """Where this seat stands in the game (see :class:`SessionPhase`)."""
        return self._phase

    @property
    def ready(self) -> bool:
        """Every peer signed the table."""
        return len(self._signed) == self.seats

    @property
    def closed(self) -> bool:
        """Every peer holds what it needs, so connections may close: every seat said
        ``bye``; or the game was abandoned or the table disputed; or, after a fault, every
        seat but the culprit reported a fault too (until then this peer keeps answering sync
        requests, so that a peer the culprit kept in the dark can fetch the evidence)."""
        if self.abandoned is not None or self.disputed is not None or self._left_us:
            return True
        if self._phase is SessionPhase.STOPPED:
            assert self.fault is not None
            waiting = set(range(self.seats)) - {self.fault.seat, self.seat} - self._reported
            return self.seat is None or not waiting
        return self._phase is SessionPhase.CLOSED

    @property
    def finished(self) -> bool:
        """The game is over and audited, and every peer said so (or a fault stopped it)."""
        return (
            self.abandoned is not None
            or self._left_us
            or self._phase in (SessionPhase.FINISHED, SessionPhase.CLOSED, SessionPhase.STOPPED)
        )

    @property
    def completed(self) -> bool:
        """The game was played to its end and every peer signed the final score."""
        return (
            self.abandoned is None
            and not self._left_us
            and self._phase in (SessionPhase.FINISHED, SessionPhase.CLOSED)
        )

    @property
    def _left_us(self) -> bool:
        """This seat left the game (its record ends there; the others play on)."""
        return self.dummy is not None and self.dummy == self.seat

    @property
    def live_seats(self) -> frozenset[int]:
        """The seats still playing for themselves: every seat but the dummy."""
        return frozenset(s for s in range(self.seats) if s != self.dummy)

    def actor(self, seat: int) -> int:
        """Who decides for ``seat``: itself, or for the dummy its partner."""
        return partner_of(seat) if seat == self.dummy else seat

    @property
    def transcript(self) -> Sequence[Envelope]:
        return self.tracker.transcript

    def waiting_for(self) -> frozenset[int]:
        """Seats that owe the next message (for deadlines), ours excluded."""
        return self.waits()[0]

    def waits(self) -> tuple[frozenset[int], bool]:
        """:meth:`waiting_for`, and whether what they owe is a decision (a bid or a card:
        the game is on and the deck waits for nobody), from one look at the deck."""
        if self.finished:
            return frozenset(), False
        if not self.ready:
            return frozenset(
                s for s in range(self.seats) if s not in self._signed and s != self.seat
            ), False
        deck_waits = self.deck.waiting_for() if self.deck is not None else frozenset()
        if deck_waits:
            return deck_waits, False
        if self.state.is_over:
            return self.live_seats - self._done.keys() - {self.seat}, False
        # The dummy's turns are its partner's (nobody waits for, or votes against, a dummy).
        actor = self.actor(self.state.to_act)
        if actor >= 0 and actor != self.seat:
            return frozenset({actor}), True
        return frozenset(), True

    # -- inputs --------------------------------------------------------------------------

    def start(self) -> None:
        """Sign the table definition: the first envelope of this seat."""
        if self.started:
            raise SessionError("start() called twice")
        self.started = True
        if self.seat is not None:
            assert self.proposal is not None
            self._send(table_body(self.definition.digest, self.proposal))
        self._pump()

    def receive(self, data: bytes) -> list[bytes]:
        """A frame from the network: an envelope, or a sync request.

        Returns the frames to send back to the peer that sent it (the envelopes a sync
        request asks for; nothing for an envelope). Raises
        :class:`~belote_p2p.protocol.wire.RemoteProtocolError` for bytes that are neither (the
        caller counts them against the connection that delivered them); a rule broken by
        a validly signed envelope becomes a :class:`~belote_p2p.protocol.events.PeerFault`
        event instead.
        """
        request = parse_sync(data)
        if request is not None:
            return self._answer_sync(*request)
        envelope = self._admit(Envelope.decode(data))
        try:
            self._accept(envelope)
        except RuleBroken as fault:
            self._blame(fault)
        # After a fault nothing is processed any more; the chains still grow, so that the
        # others' fault reports are known and what we hold can be fetched by a sync.
        self._pump()
        return []

    @property
    def has_work(self) -> bool:
        """The deck has work put off so that our messages left first (:attr:`overlap`)."""
        deck = self.deck
        return deck is not None and self._phase is not SessionPhase.STOPPED and deck.has_work

    def work(self) -> None:
        """One piece of :attr:`has_work`: the check of a shuffle our own was built on (a bad
        one blames its shuffler, as on receipt), or our shuffle's masks ahead of our turn;
        then the steps it allows (our deal shares). Take the outbox after it, as after
        :meth:`receive`."""
        deck = self.deck
        if not self.has_work:
            return
        assert deck is not None
        try:
            try:
                deck.work()
            except DeckError as exc:
                self._deck_fault(exc, exc.seat, self._round_envelopes(exc.seat))
        except RuleBroken as fault:
            self._blame(fault)
        self._pump()

    def _admit(self, envelope: Envelope) -> Envelope:
        """A validly signed envelope of this table from a seat of it, or a
        :class:`RemoteProtocolError` against whoever delivered it (an envelope of another
        table proves nothing against the seat it names)."""
        if envelope.table != self.definition.table_id:
            raise WrongTable(
                "envelope for another table", sender=envelope.sender, evidence=(envelope.raw,)
            )
        self.tracker.seat_of(envelope.sender)  # UnknownSender
        return envelope

    def _accept(self, envelope: Envelope) -> None:
        """Accept ``envelope`` into its sender's chain, holding it if it comes early; raise
        :class:`RuleBroken` if the sender signed more than the protocol allows."""
        seat = self.tracker.seat_of(envelope.sender)
        expected = self.tracker.next_seq(seat)
        if envelope.seq > expected:
            # Relayed or resent envelopes may overtake each other: hold a bounded few.
            early = self._early.setdefault(seat, {})
            fits = len(envelope.raw) <= MAX_ENVELOPE
            if fits and (len(early) < MAX_EARLY or envelope.seq in early):
                early[envelope.seq] = envelope
            return
        broken = self._beyond_limits(envelope, seat) if envelope.seq == expected else None
        if broken is not None and self._phase is SessionPhase.STOPPED:
            return  # nothing more is proven after a fault: keep memory bounded
        try:
            accepted = self.tracker.accept(envelope)
        except (Equivocation, BrokenChain) as exc:
            # Both envelopes carry the sender's valid signature: it signed two histories.
            assert exc.seat is not None
            self._blame(RuleBroken(exc.seat, f"equivocation: {exc}", exc.evidence))
            return
        if accepted is None:
            return
        self._by_hash[accepted.hash] = accepted
        self._pending.append(accepted)
        self._count_progress(accepted, seat)
        if accepted.type == "fault":
            self._reported.add(seat)
        if broken is not None:
            # Accepted first, so that the record holds the envelope that proves it.
            raise RuleBroken(seat, broken, (accepted.raw,))
        self._count(accepted, seat)
        if accepted.type == "fault":
            self._replay_evidence(accepted)
        following = self._early.get(seat, {}).pop(accepted.seq + 1, None)
        if following is not None:
            self._accept(following)

    def _beyond_limits(self, envelope: Envelope, seat: int) -> str | None:
        """Why ``envelope``, the next of ``seat``'s chain, is more than the protocol allows
        (None if it is not): its size, or too many of its kind along the seat's own chain
        (per round or per game), or a round out of order or more than one ahead of ours.
        A flood of validly signed envelopes is a fault of its signer, decided by its chain
        alone, and what waits in memory stays bounded."""
        kind = envelope.type
        size_cap = ENVELOPE_CAPS.get(kind)
        if size_cap is None:
            return f"unknown message type {kind!r}"
        if len(envelope.raw) > size_cap:
            return f"a {kind} envelope of {len(envelope.raw)} bytes (at most {size_cap})"
        if kind in ROUND_CAPS:
            number = round_of(envelope.body)
            if number is None or number < 0:
                return "a message without a round number"
            last = self._last_round.get(seat, 0)
            # A peer's own round bounds what it holds; an observer replaying a record may
            # lag behind for want of a record another seat's chain did not need (a record
            # cut short or edited), which is nobody's fault: only its chain counts there.
            # (A seat that left stays where it left: the others play on.)
            ahead = (
                self.seat is not None and not self._left_us and number > self._current_round() + 1
            )
            if not last <= number <= last + 1 or ahead:
                return f"a message for round {number} out of turn"
            cap, where = self._round_caps[kind], f"in round {number}"
        else:
            number, cap, where = None, GAME_CAPS[kind], "in one game"
        if self._signed_counts.get(seat, {}).get((kind, number), 0) >= cap:
            return f"more than {cap} {kind} messages {where}"
        return None

    def _count_progress(self, envelope: Envelope, seat: int) -> None:
        if envelope.type == "abandon" and self._foreseen is None:
            gone = abandoned_seat(envelope.body)
            if gone is not None and gone != seat and 0 <= gone < self.seats:
                self._votes_on.setdefault(gone, []).append(envelope)
        chain = self._progress[seat]
        if envelope.seq == len(chain):
            before = chain[-1] if chain else 0
            chain.append(before + delivers(envelope, seat))

    def progress(self, seat: int) -> int:
        """How much ``seat`` has delivered so far, as this peer processed it (the bodies of
        :data:`PROGRESS_TYPES` among its processed envelopes): the deadline of a seat
        restarts only when this grows."""
        return self._progress_through(seat, self._last_processed[seat])

    def others_voted(self, seat: int) -> bool:
        """Another seat signed that ``seat`` is gone at the point it is at now (its
        progress as we processed it). A peer that times ``seat`` from later than the voter
        did (one resumed, whose record holds no times) waits for it no longer than its
        grace from then (PROTOCOL.md §6.6, the deadlines); the vote lapses as ever once
        ``seat`` delivers."""
        voters = self._abandon_votes.get((seat, self.progress(seat)), {})
        return any(voter != self.seat for voter in voters)

    def _progress_through(self, seat: int, last: bytes) -> int:
        """``seat``'s progress through its envelope ``last`` (0 for none)."""
        envelope = self._by_hash.get(last)
        if envelope is None or self.tracker.seat_of(envelope.sender) != seat:
            return 0
        chain = self._progress[seat]
        return chain[envelope.seq] if envelope.seq < len(chain) else chain[-1]

    def _count(self, envelope: Envelope, seat: int) -> None:
        """Count ``envelope`` (within the limits) along its seat's chain."""
        number = round_of(envelope.body) if envelope.type in ROUND_CAPS else None
        counts = self._signed_counts.setdefault(seat, {})
        key = (envelope.type, number)
        counts[key] = counts.get(key, 0) + 1
        if number is not None:
            self._last_round[seat] = number

    def _replay_evidence(self, envelope: Envelope) -> None:
        """Take in the evidence of another peer's fault report, as if it had come to us.

        Nothing of the accuser is trusted: the evidence is signed by the accused, and this
        peer finds the fault itself (an equivocation at once; a bad message when it is
        processed in causal order) or finds nothing.
        """
        for data in fault_evidence(envelope.body):
            try:
                piece = self._admit(Envelope.decode(data))
            except RemoteProtocolError:
                continue  # not an envelope of this table: it proves nothing here
            self._accept(piece)
            if self._phase is SessionPhase.STOPPED:
                return

    def foresee(self, records: Iterable[bytes]) -> None:
        """An observer that holds a whole record (a verifier): take every envelope of it
        that continues its sender's chain as accepted, for the hold of a late envelope only
        (:meth:`_held`: the votes against a seat and what each chain shows of it), before
        :meth:`receive` is given the records one by one. A record's order is not causal
        (PROTOCOL.md §7.1): without this, a late envelope of a seat that comes in the file
        before the votes against it would be processed before any vote is accepted, and
        the game judged otherwise than the peers played it (PROTOCOL.md §6.7: "accepted"
        is into the chains, and a verifier's chains are the record's). What does not
        decode, or breaks a chain, is left out here; :meth:`receive` judges it."""
        if self.seat is not None:
            raise SessionError("only an observer foresees a record")
        ahead = ChainTracker(self.definition.table_id, self.definition.roster)
        by_seat: dict[int, dict[int, Envelope]] = {}
        for data in records:
            try:
                envelope = self._admit(Envelope.decode(data))
            except RemoteProtocolError:
                continue
            by_seat.setdefault(ahead.seat_of(envelope.sender), {}).setdefault(
                envelope.seq, envelope
            )
        votes: dict[int, list[Envelope]] = {}
        for seat, chain in sorted(by_seat.items()):
            progress: list[int] = []
            for seq in range(len(chain)):
                next_one = chain.get(seq)
                try:
                    if next_one is None or ahead.accept(next_one) is None:
                        break
                except RemoteProtocolError:
                    break
                progress.append((progress[-1] if progress else 0) + delivers(next_one, seat))
                gone = abandoned_seat(next_one.body) if next_one.type == "abandon" else None
                if gone is not None and gone != seat and 0 <= gone < self.seats:
                    votes.setdefault(gone, []).append(next_one)
            self._progress[seat] = progress
        self._foreseen = ahead
        self._foreseen_hashes = {e.hash: e for e in ahead.transcript}
        self._votes_on = votes

    def _chain(self, seat: int) -> Sequence[Envelope]:
        """``seat``'s chain as the hold reads it: as accepted, or as foreseen."""
        return (self._foreseen or self.tracker).chain(seat)

    def _lookup(self, h: bytes) -> Envelope | None:
        """The envelope of hash ``h``, accepted or foreseen (None if neither)."""
        return self._by_hash.get(h) or self._foreseen_hashes.get(h)

    def sync_request(self) -> bytes:
        """A request for what this peer lacks: send it to each peer on (re)connection and
        whenever the game seems stuck; peers answer with envelopes (:meth:`receive`)."""
        want: list[bytes] = []
        for envelope in self._pending:
            for h in envelope.seen:
                if h not in self._by_hash and h != ZERO_HASH and h not in want:
                    want.append(h)
        have = [self.tracker.next_seq(s) for s in range(self.seats)]
        return encode_sync(have, want)

    def _answer_sync(self, have: list[int], want: list[bytes]) -> list[bytes]:
        if len(have) != self.seats:
            raise MalformedMessage(
                f"a sync request names {self.seats} seats at this table", evidence=()
            )
        out: list[bytes] = []
        sent: set[bytes] = set()
        for seat in range(self.seats):
            for e in self.tracker.chain(seat)[have[seat] :]:
                out.append(e.encode())
                sent.add(e.hash)
        # Each envelope once: a request that names one hash 64 times, or a hash the chains
        # above already brought, must not make us send it again (PROTOCOL.md §6.4).
        for h in dict.fromkeys(want):
            found = self._by_hash.get(h)
            if found is not None and h not in sent:
                out.append(found.encode())
                sent.add(h)
        return out[:MAX_SYNC_REPLY]

    def act(self, action: Action) -> None:
        """This seat's decision (a bid or a card), or, when the dummy is to act and this
        seat is its partner, the dummy's; raises :class:`SessionError` if illegal."""
        if self._phase is SessionPhase.STOPPED:
            raise SessionError("the game was stopped by a fault")
        if self.seat is None:
            raise SessionError("an observer does not act")
        state = self.state
        if self.finished or self.actor(state.to_act) != self.seat or not self._can_decide():
            raise SessionError("it is not this seat's turn")
        if action not in state.legal_actions():
            raise SessionError(f"{action} is not legal now")
        round_number = state.number
        if isinstance(action, Bid):
            body = bid_body(round_number, action, self._digest)
        else:
            deck = self.deck
            assert isinstance(deck, DeckPeer)
            if state.to_act == self.seat:
                position = next(p for p, c in deck.hand().items() if c == action)
                play = deck.play(position)
            else:
                # The dummy's card: open to everyone, so played without a share.
                dummy = state.to_act
                position = next(p for p in deck.positions_of(dummy) if deck.card_at(p) == action)
                play = deck.play_for(dummy, position)
            body = play_body(round_number, play, state.claim_for(action), self._digest)
        self._send(body)
        self._pump()

    def abandon(self, seat: int) -> bool:
        """Sign that ``seat`` left the game: ourselves (resign), or a seat silent past its
        deadline and grace (it is gone once every other seat signed it for the same
        progress: :meth:`progress`). Returns whether a vote was signed: not twice for the
        same seat and progress, nor beyond the game's cap of votes (a vote that gathers no
        support is simply kept; the seat can be voted on again once it delivered)."""
        if self.seat is None:
            raise SessionError("an observer does not act")
        if not 0 <= seat < self.seats:
            raise SessionError(f"no seat {seat} at this table")
        if self.finished or seat == self.dummy:
            return False  # nobody votes against a dummy: its partner's turns are the partner's
        key = (seat, self.progress(seat))
        if seat != self.seat and self.seat in self._abandon_votes.get(key, {}):
            return False  # our vote is in already (processed as soon as signed)
        signed = self._signed_counts.get(self.seat, {}).get(("abandon", None), 0)
        if signed >= GAME_CAPS["abandon"]:
            return False
        self._send(abandon_body(seat))
        self._pump()
        return True

    def chat(self, text: str) -> None:
        """Say ``text`` to the table (a signed ``chat`` envelope): once the table is signed,
        at most ``GAME_CAPS["chat"]`` times a game. Raises :class:`SessionError` otherwise,
        or for a line that is empty or too long. A chat changes nothing in the game."""
        if self.seat is None:
            raise SessionError("an observer does not act")
        if not self.ready or self._phase is SessionPhase.STOPPED:
            raise SessionError("the chat opens once the table is signed, and closes at a fault")
        try:
            chat_text({"text": text})
        except ValueError as exc:
            raise SessionError(str(exc)) from None
        if self._chats_sent >= GAME_CAPS["chat"]:
            raise SessionError(f"at most {GAME_CAPS['chat']} chat lines a game")
        self._send(chat_body(text))
        self._pump()

    @classmethod
    def resume(
        cls,
        definition: TableDefinition,
        seat: int,
        identity: Identity,
        envelopes: Iterable[bytes],
        secrets: SecretStore,
    ) -> TableSession:
        """Rebuild a seat's session after a crash from its transcript and its secrets.

        Our own recorded envelopes are re-derived and must match; everything the others
        sent is processed again. The outbox then holds every envelope of ours, to be sent
        again (peers ignore the ones they have).
        """
        ours: dict[int, Envelope] = {}
        others = []
        for data in envelopes:
            envelope = Envelope.decode(data)
            if envelope.sender == identity.public_key_bytes:
                ours[envelope.seq] = envelope
            else:
                others.append(data)
        # Our first envelope signed the table with the host's proposal: sign it again so.
        first = ours.get(0)
        proposal = table_proposal(first.body) if first is not None else None
        session = cls(
            definition, seat, identity, secrets=secrets,
            proposal=proposal if type(proposal) is bytes else None,
        )  # fmt: skip
        session._recorded = ours
        session.start()
        for data in others:
            session.receive(data)
        if session._recorded:
            raise SessionError(
                f"cannot resume: {len(session._recorded)} recorded envelope(s) of ours were "
                "not derived again"
            )
        return session

    @property
    def has_output(self) -> bool:
        """Envelopes or events wait for :meth:`take_outbox` or :meth:`take_events`."""
        return bool(self._outbox or self._events)

    def take_outbox(self) -> list[bytes]:
        """Encoded envelopes to send to every other peer, in order."""
        out, self._outbox = self._outbox, []
        return [e.encode() for e in out]

    def take_events(self) -> list[Event]:
        out, self._events = self._events, []
        return out

    # -- the machinery -------------------------------------------------------------------

    def _transition(self, phase: SessionPhase) -> None:
        if phase not in _TRANSITIONS[self._phase]:
            # The session's own logic went wrong: no peer can cause this.
            raise RuntimeError(
                f"table session bug: no transition from {self._phase.name} to {phase.name}"
            )
        self._phase = phase

    def _send(self, body: dict[str, Any]) -> None:
        # ``seen`` names what this peer has *processed*, so that a receiver that processes
        # in causal order never waits on something that waits on this envelope.
        me = self.seat
        assert me is not None and self.identity is not None, "an observer sends nothing"
        tracker = self.tracker
        seen = [
            tracker.last_hash(me) if s == me else self._last_processed[s] for s in range(self.seats)
        ]
        self._resend_recorded_choices()
        recorded = self._recorded.pop(tracker.next_seq(me), None)
        if recorded is not None:
            # Resuming: we signed this envelope before the crash; it must say the same.
            if recorded.body != decode(encode(body)):
                raise SessionError(
                    f"cannot resume: our envelope {recorded.seq} in the transcript differs "
                    f"from what the session derives now ({recorded.type})"
                )
            envelope = recorded
        else:
            envelope = Envelope.create(
                self.identity, self.definition.table_id, tracker.next_seq(me),
                tracker.last_hash(me), seen, body,
            )  # fmt: skip
        self._keep_own(envelope)

    def _keep_own(self, envelope: Envelope) -> None:
        self.tracker.accept(envelope)
        self._by_hash[envelope.hash] = envelope
        assert self.seat is not None
        self._count_progress(envelope, self.seat)
        self._outbox.append(envelope)
        self._pending.append(envelope)
        if envelope.type == "chat":
            self._chats_sent += 1

    def _resend_recorded_choices(self) -> None:
        """Resuming: our recorded envelopes next in our chain that nothing derives (a chat
        line, a person's; a vote that a seat left, our clock's) are kept as they were
        signed, so that what follows them matches."""
        me = self.seat
        assert me is not None
        while True:
            recorded = self._recorded.get(self.tracker.next_seq(me))
            if recorded is None or recorded.type not in UNDERIVED:
                return
            del self._recorded[recorded.seq]
            self._keep_own(recorded)

    def _blame(self, fault: RuleBroken) -> None:
        if self._phase is SessionPhase.STOPPED:
            return  # the first fault is the one reported
        self._transition(SessionPhase.STOPPED)
        self.fault = PeerFault(fault.seat, fault.reason, fault.evidence)
        self._events.append(self.fault)
        if self.seat is not None and fault.evidence:
            # Tell the others: the evidence proves itself to whoever replays it. What does not
            # fit in a report (a flood of huge envelopes) they fetch by a sync.
            evidence, room = [], EVIDENCE_BUDGET
            for piece in fault.evidence[:MAX_EVIDENCE]:
                if len(piece) <= room:
                    evidence.append(piece)
                    room -= len(piece)
            self._send(fault_body(fault.seat, evidence))

    def _pump(self) -> None:
        """Process every envelope that can be, and take every local step that is due."""
        try:
            progress = True
            while progress and self._phase is not SessionPhase.STOPPED:
                if self._recorded:
                    self._resend_recorded_choices()
                progress = self._advance()
                for envelope in list(self._pending):
                    if self._ready(envelope) and self._process(envelope):
                        self._pending.remove(envelope)
                        self._processed.add(envelope.hash)
                        self._last_processed[self.tracker.seat_of(envelope.sender)] = envelope.hash
                        progress = True
        except RuleBroken as fault:
            self._blame(fault)

    def _ready(self, envelope: Envelope) -> bool:
        return (
            envelope.prev in self._processed
            and all(h in self._processed for h in envelope.seen)
            and not self._held(envelope)
        )

    def _held(self, envelope: Envelope) -> bool:
        """Four seats: an envelope of a seat that some vote says is gone waits while that
        vote can still be joined by every other seat, if it is not in the vote's past: it
        comes after the last envelope of the seat that the votes at that point name
        (PROTOCOL.md §6.7). Were it processed first, a peer would play on from the late
        envelope while the others, once the votes are in, play the seat's open hand from
        the point the votes saw: the game would split. Once the votes are all in, it is
        nothing (the seat is the dummy: nothing of its chain after the leave counts);
        once some other seat shows it went on past that point without voting there, the
        vote can never gather, and it is processed as usual. Every body waits so, not only
        those that deliver: a chat or a vote of the seat processed before the leave at one
        peer and after it at another would count at one only."""
        if self.seats != 4 or self.dummy is not None or self.abandoned is not None:
            return False
        seat = self.tracker.seat_of(envelope.sender)
        votes = self._votes_on.get(seat)
        if not votes:
            return False
        named: dict[int, int] = {}  # point -> the latest envelope of the seat a vote there names
        for vote in votes:
            seq = self._shown(self.tracker.seat_of(vote.sender), seat, vote.seq)
            point = self._point_at(seat, seq)
            named[point] = max(named.get(point, -1), seq)
        return any(
            envelope.seq > last and not self._vote_cannot_gather(seat, point)
            for point, last in named.items()
        )

    def _shown(self, voter: int, seat: int, upto: int) -> int:
        """The latest envelope of ``seat`` (its seq) that ``voter``'s chain names in
        ``seen``, up to and including its envelope ``upto`` (-1 for none); past every
        envelope this peer holds (:data:`_BEYOND`) when one it names is not known yet.
        For an honest chain that is what its envelope ``upto`` names (``seen`` never goes
        back, which is checked when an envelope is processed: :meth:`_check_causal`); a
        vote that goes back counts, while it is merely accepted, as of the most its signer
        showed, so that it never holds an envelope that its signer's chain shows it
        processed already (which would wait for ever)."""
        cache = self._shown_seqs.setdefault((voter, seat), [])
        chain = self._chain(voter)
        while len(cache) <= upto:
            named = chain[len(cache)].seen[seat]
            if named == ZERO_HASH:
                seq = -1
            else:
                found = self._lookup(named)
                if found is None or self.tracker.seat_of(found.sender) != seat:
                    return _BEYOND  # not known yet: not kept, looked up again next time
                seq = found.seq
            cache.append(max(seq, cache[-1] if cache else -1))
        return cache[upto]

    def _point_at(self, seat: int, seq: int) -> int:
        """``seat``'s progress through its envelope ``seq`` (0 before any; past every point
        for :data:`_BEYOND`)."""
        if seq < 0:
            return 0
        chain = self._progress[seat]
        return chain[seq] if seq < len(chain) else _BEYOND

    def _vote_point(self, seat: int, vote: Envelope) -> int:
        """The point of ``seat``'s chain that a vote against it names, as far as this peer
        holds what it names (:meth:`_shown`)."""
        return self._point_at(seat, self._shown(self.tracker.seat_of(vote.sender), seat, vote.seq))

    def _vote_cannot_gather(self, seat: int, point: int) -> bool:
        """Some other seat signed no vote against ``seat`` at ``point`` and went on past
        it (an envelope of its chain saw more of ``seat``): it never will."""
        voted = {
            self.tracker.seat_of(v.sender)
            for v in self._votes_on.get(seat, ())
            if self._vote_point(seat, v) == point
        }
        for other in range(self.seats):
            if other == seat or other in voted:
                continue
            last = len(self._chain(other)) - 1
            if last >= 0 and self._point_at(seat, self._shown(other, seat, last)) > point:
                return True
        return False

    def _knows_at(self, envelope: Envelope, seat: int, seq: int) -> bool:
        """The envelope ``seq`` of ``seat`` is in ``envelope``'s causal past (its ``seen`` is
        its clock: checked consistent when it is processed, :meth:`_check_causal`)."""
        if self.tracker.seat_of(envelope.sender) == seat:
            return envelope.seq > seq
        seen = self._by_hash.get(envelope.seen[seat])
        return seen is not None and seen.seq >= seq

    def _knows(self, envelope: Envelope, past: Envelope) -> bool:
        """``past`` is in ``envelope``'s causal past."""
        return self._knows_at(envelope, self.tracker.seat_of(past.sender), past.seq)

    def _knows_leave(self, m: _Received) -> bool:
        """``m``'s signer had processed the leave when it signed it."""
        return bool(self._leave) and all(self._knows(m.envelope, d) for d in self._leave)

    def _current_round(self) -> int:
        return self.deck.round_number if self.deck is not None else self.state.number

    # -- the envelopes, one handler per body type ------------------------------------------
    #
    # A handler returns False to let its envelope wait, True once it is applied, and raises
    # Fault if the envelope breaks a rule.

    def _process(self, envelope: Envelope) -> bool:
        """Apply one envelope; False if it must wait; raise :class:`RuleBroken` if it is wrong."""
        seat = self.tracker.seat_of(envelope.sender)
        received = _Received(envelope, seat, seat == self.seat)
        if envelope.type != "table" and self._phase is SessionPhase.SIGNING:
            return False
        if seat == self.dummy and envelope.type not in _IGNORED_FROM_THE_DUMMY:
            # It left: what its chain says after the leave (a late card of a seat signed
            # gone, held until then) is no move of the game; its partner acts for it.
            return True
        self._check_causal(received)
        return self._handlers.get(envelope.type, self._on_unknown)(received)

    def _check_causal(self, m: _Received) -> None:
        """``seen`` is the envelope's causal past, and everything reads it so (whether it
        knows an action or the leave, the state at a cut, the point a vote names): each
        entry names an envelope of its own seat (or none), and none goes back from what the
        envelopes it names had seen (its ``prev`` and each ``seen`` entry). An honest peer's
        ``seen`` is what it processed, and it processes an envelope only after that one's own
        ``seen``: it can neither go back nor fall behind what it names. A chain that does
        lies about its past, which would let it pass for not knowing what it knew (a move,
        a leave) or move a cut back: its sender's fault (PROTOCOL.md §5.1). Checked when the
        envelope is processed: everything it names is processed then."""
        envelope = m.envelope
        named = []
        for seat, h in enumerate(envelope.seen):
            if h == ZERO_HASH:
                named.append(-1)
                continue
            found = self._by_hash[h]  # processed: _ready waited for it
            if self.tracker.seat_of(found.sender) != seat:
                raise m.fault(f"its seen names, for seat {seat}, an envelope of another seat")
            named.append(found.seq)
        for h in {envelope.prev, *envelope.seen} - {ZERO_HASH}:
            before = self._by_hash[h]
            for seat, older in enumerate(before.seen):
                had = self._by_hash.get(older)
                if had is not None and had.seq > named[seat]:
                    raise RuleBroken(
                        m.seat,
                        f"its seen goes back: it names seat {seat}'s envelope {named[seat]} "
                        f"where an envelope it names had seen {had.seq}",
                        (envelope.encode(), before.encode()),
                    )

    def _on_table(self, m: _Received) -> bool:
        """A seat signs the table definition, once, with the host's proposal of it.

        Another definition under the host's own signature proves that the host proposed
        two tables for one id: the host's fault, with both signatures as evidence. Another
        definition without it proves nothing against anyone (the sender may have met
        someone posing as our host): the table is disputed and no game is played."""
        try:
            digest = table_digest(m.body)
        except ValueError as exc:
            raise m.fault(f"malformed table: {exc}") from None
        proposal = table_proposal(m.body)
        definition = self.definition
        if digest != definition.digest:
            if definition.proposed_by_host(proposal, digest) and self._host_signed is not None:
                raise RuleBroken(
                    0, "proposed two different table definitions for one table",
                    (m.envelope.encode(), self._host_signed.encode()),
                )  # fmt: skip
            self.disputed = TableDisputed(
                m.seat, f"seat {m.seat} signed a table definition our host did not propose"
            )
            self._events.append(self.disputed)
            self._transition(SessionPhase.STOPPED)
            return True
        if not definition.proposed_by_host(proposal):
            raise m.fault("signed the table with a host signature that does not verify")
        if m.seat in self._signed:
            raise m.fault("signed the table twice")
        self._signed.add(m.seat)
        if self._host_signed is None:
            self._host_signed = m.envelope
        if self.ready:
            self._transition(SessionPhase.BETWEEN_ROUNDS)
            self._events.append(TableReady())
        return True

    def _on_fault(self, m: _Received) -> bool:
        return True  # its evidence was taken in when it was accepted

    def _on_chat(self, m: _Received) -> bool:
        """A line of chat: reported, kept in the record, and nothing else (no state, no
        digest, no turn)."""
        try:
            text = chat_text(m.body)
        except ValueError as exc:
            raise m.fault(f"malformed chat: {exc}") from None
        self._events.append(ChatMessage(m.seat, text, self._current_round()))
        return True

    def _on_abandon(self, m: _Received) -> bool:
        """A seat resigns, or is the last of the others to sign that one is gone for the
        same progress of its (the count of what it delivered, through the vote's ``seen``
        of it: a vote lapses once the seat delivered more). Once the game has ended
        (abandoned already; at three and two seats, every ``done`` is in; at four, the seat
        signed its ``done`` before the leave: :meth:`_seat_gone`) it changes nothing."""
        gone = abandoned_seat(m.body)
        if gone is None or gone >= self.seats:
            raise m.fault("abandons no seat")
        if self.abandoned is not None or (self.seats != 4 and self._phase in _ALL_DONE):
            return True
        # A vote against the seat whose resignation we processed first: the others may hold
        # that resignation behind this vote (§6.7); show them we went on.
        point = self._progress_through(gone, m.envelope.seen[gone])
        if gone == self.dummy and m.seat != gone and self._passed_unsigned(gone, point):
            self._went_on.add(gone)
        if self._left_us or gone == self.dummy or m.seat == self.dummy:
            return True  # nobody votes against a dummy, and a dummy votes no more
        if gone == m.seat:
            self._seat_gone(gone, (m.envelope,))
            return True
        key = (gone, self._progress_through(gone, m.envelope.seen[gone]))
        voters = self._abandon_votes.setdefault(key, {})
        voters.setdefault(m.seat, m.envelope)
        if self._passed_unsigned(gone, key[1]):
            self._went_on.add(gone)
        needed = self.live_seats - {gone}
        if needed <= voters.keys():
            # Every other seat saw it stop at the same point: the lowest voter's cut decides
            # (they all wait on the same game, as it cannot move without the silent seat).
            self._seat_gone(gone, tuple(voters[v] for v in sorted(needed)))
        return True

    def _passed_unsigned(self, seat: int, point: int) -> bool:
        """Four seats: we took in ``seat``'s envelope past ``point`` before we knew of a
        vote at ``point``, signed no vote there, and signed nothing since that shows it. The
        others hold that envelope while the vote can gather (:meth:`_held`), and only an
        envelope of ours past ``point`` tells them it cannot; we may owe none (the seat to
        act may be one that holds it, waiting). PROTOCOL.md §6.7: we say so at once."""
        if self.seat is None or self.seats != 4 or self.dummy not in (None, seat):
            return False
        if seat == self.seat:
            return False
        chain = self.tracker.chain(self.seat)
        return (
            self.progress(seat) > point
            and self.seat not in self._abandon_votes.get((seat, point), {})
            and bool(chain)
            and self._vote_point(seat, chain[-1]) <= point
        )

    def _show_we_went_on(self) -> bool:
        """Sign the line :meth:`_passed_unsigned` asks for (a ``chat``: it changes nothing
        in the game, its ``seen`` is the point; no vote, which would count against the
        seat). Nothing if something we signed since shows it, or past the chat cap (the
        deadlines then do it: PROTOCOL.md §6.7). True if a line was signed."""
        went_on, self._went_on = self._went_on, set()
        if not went_on:
            return False
        assert self.seat is not None  # (an observer signs nothing: _passed_unsigned)
        signed = False
        for seat in sorted(went_on):
            chain = self.tracker.chain(self.seat)  # (with the line just signed for another)
            if chain and self._vote_point(seat, chain[-1]) >= self.progress(seat):
                continue
            if self._chats_sent < GAME_CAPS["chat"] and not self.finished:
                self._send(chat_body(f"(seat {seat}'s move came in before the vote: playing on)"))
                signed = True
        return signed

    def _seat_gone(self, gone: int, deciding: tuple[Envelope, ...]) -> None:
        """``gone`` left, by the ``deciding`` envelopes (its resignation, or the votes of
        every other live seat, lowest voter first). At four seats with its partner still
        playing, it becomes the dummy and the game goes on; otherwise the game ends: at
        three and two seats nobody can play it (the others are its opponents and each
        other's), and a second leave leaves no partner to play it for."""
        done = self._done.get(gone)
        if self.seats == 4 and done is not None and self._knows(deciding[0], done):
            # It signed the final score before it left: the game was over for it. (Decided
            # from the deciding envelope's past, not from what this peer processed
            # meanwhile: a leave racing the last ``done`` counts alike at every peer.)
            return
        if self.seats == 4 and self.dummy is None:
            self._open_hand(gone, deciding)
            self._gone_by_earlier_votes()
        else:
            self._abandon_at(gone, deciding[0])

    def _gone_by_earlier_votes(self) -> None:
        """After the first leave, the votes processed before it against another seat count
        as ever, and the seat is gone once every live seat but it voted at one point: its
        two others now (PROTOCOL.md §6.6). Checked at the leave as at each vote, so that a
        peer that processed those votes before the leave, and one that processed them
        after, find the same second leave (the lowest seat first, then the lowest point)."""
        if self._left_us or self.abandoned is not None:
            return
        for (seat, _), voters in sorted(self._abandon_votes.items()):
            needed = self.live_seats - {seat}
            if seat != self.dummy and needed <= voters.keys():
                self._seat_gone(seat, tuple(voters[v] for v in sorted(needed)))
                return

    def _open_hand(self, gone: int, deciding: tuple[Envelope, ...]) -> None:
        """Make ``gone`` the dummy: its cards of the round in play are released (or, when
        its shuffle is not in, the round is dealt again with it face up), and every later
        round deals it face up; its partner acts for it from now on."""
        self.dummy = gone
        self._leave = deciding
        self._public = frozenset({gone})
        # The round it left in is the cut's (the round in play where the deciding envelopes
        # saw the game; the next one once they saw its last card), whatever this peer audited
        # meanwhile: every record names the same.
        cut = self._state_at_cut(deciding[0])
        self.left = SeatLeft(gone, partner_of(gone), cut.number, self.state, cut)
        self._events.append(self.left)
        if self._left_us:
            return  # our game ends here; the others play on
        if self._phase is SessionPhase.GAME_OVER and self._done.keys() >= self.live_seats:
            # Every live seat signed the end already: the leaver's ``done`` is owed no more.
            self._transition(SessionPhase.CLOSED if self.seat is None else SessionPhase.FINISHED)
        self._close_after_four_byes()
        deck = self.deck
        if deck is None or self._phase not in _MID_ROUND:
            return  # between rounds: the next one deals it face up
        if self._phase is SessionPhase.DEALING and not self._releasable(gone):
            # Its cards cannot be opened: the round is dealt again, the dummy face up
            # (the deal given up had opened no card).
            self._redealt = deck.round_number
            self._given_up = deck
            self._start_round()  # its key leaves with the next local step
            return
        # Its reveal is awaited no more: every other reveal carries a piece of its key, and
        # the audit rebuilds it (DECK.md §8), whether it left before the last card, after it,
        # or while our own reveal was on its way.
        deck.set_gone(gone)
        if isinstance(deck, DeckPeer) and self._phase in _ROUND_GOES_ON:
            # Our shares of its cards under our piece of its key, while some may still be
            # played (once the engine closed the round, no card of it is; an observer learns
            # the cards from the releases). After what the deck made already: a release
            # lists the positions of the steps whose shares we sent before it (DECK.md).
            self._deferred += deck.next_messages()
            self._deferred.append(deck.release(gone))

    def _releasable(self, seat: int) -> bool:
        """The pieces of ``seat``'s round key and its shuffle are in: its cards can be
        opened by the others (DECK.md)."""
        return {(seat, SplitMessage), (seat, ShuffleMessage)} <= self._steps

    def _learn_dummy_cards(self) -> None:
        """Put in the engine the dummy's cards that opened and it does not hold yet (the
        release of the round in play; the classic completion)."""
        deck, dummy = self.deck, self.dummy
        if (
            deck is None
            or dummy is None
            or self._phase not in _DECIDING | {SessionPhase.COMPLETING}
        ):
            return
        state = self.state
        opened = {}
        for p in deck.positions_of(dummy):
            card = deck.card_at(p)
            # A card it played before it left is known, but not where it lay: it stays so.
            if card is not None and state.deck[p] is None and not state.played >> card & 1:
                opened[p] = card
        if opened:
            self.state = state.reveal(opened)
            self._events.append(HandOpened(dummy, self.state))

    def _abandon_at(self, gone: int, deciding: Envelope) -> None:
        self.abandoned = gone
        self.abandoned_state = self._state_at_cut(deciding)
        self._events.append(GameAbandoned(gone, self.abandoned_state))

    def _state_at_cut(self, envelope: Envelope) -> State:
        """The game as it stood in ``envelope``'s causal past (what its signer had
        processed when it signed it), whatever this peer processed since: the state after
        the last bid or play in that past. The applied actions form one causally closed
        sequence, so those of the past are a prefix of it. Every peer finds the same state
        for the same envelope, however the connections ordered what came meanwhile."""
        cut: dict[int, int] = {}
        for seat, h in enumerate(envelope.seen):
            seen = self._by_hash.get(h)
            cut[seat] = seen.seq if seen is not None else -1
        for seat, seq, state in reversed(self._history):
            if seq <= cut.get(seat, -1):
                return state
        if self._history and len(self._history) == ACTION_HISTORY:
            return self._history[0][2]  # older than what is kept: the oldest kept
        return self._first_state

    def _on_done(self, m: _Received) -> bool:
        """A seat signs the final score, which must be ours (it waits for our last audit)."""
        if self._phase not in _AFTER_THE_GAME:
            return False
        scores = done_scores(m.body)
        if scores != list(self.state.scores):
            raise m.fault(f"ends the game with scores {scores}")
        self._done[m.seat] = m.envelope
        if self._done.keys() >= self.live_seats and self._phase is SessionPhase.GAME_OVER:
            observer = self.seat is None  # says no bye: the four done close its game
            self._transition(SessionPhase.CLOSED if observer else SessionPhase.FINISHED)
        return True

    def _on_bye(self, m: _Received) -> bool:
        """A seat holds the four ``done``."""
        if self._phase not in _ALL_DONE:
            return False
        self._bye.add(m.seat)
        self._close_after_four_byes()
        return True

    def _on_deck(self, m: _Received) -> bool:
        """A deck protocol message of this round: the deck checks it (a message of the deal
        given up at a leave, one that does not know the leave, goes to that deal's deck,
        which checks it all the same)."""
        if not self._for_this_round(m):
            return False
        given_up = self._redealt == self._current_round() and not self._knows_leave(m)
        if m.own:
            return True  # our deck made it (and noted it: _send_deck)
        deck = self._given_up if given_up else self.deck
        assert deck is not None
        try:
            msg = deck_message(m.body, m.seat)
            if not given_up:
                self._steps.add((m.seat, type(msg)))
            if isinstance(msg, RevealMessage) and self._phase in _ROUND_GOES_ON:
                # Secrets come out only once the round is over: an early reveal could pull
                # everybody's, and with them every hand. It is never answered.
                raise m.fault("revealed its secrets before the round ended")
            if isinstance(msg, ReleaseMessage) and (
                msg.gone != self.dummy or not self._knows_leave(m)
            ):
                # A holder releases a seat once it processed its leave: a release that does
                # not know it (none is gone, or another seat) opens cards of a seat that
                # still plays them. Decided from the release's own past, alike everywhere.
                raise m.fault(f"released seat {msg.gone}'s cards, and that seat is not gone")
            deck.receive(msg)
        except DeckError as exc:
            self._deck_fault(exc, m.seat, m.evidence)
        return True

    def _on_bid(self, m: _Received) -> bool:
        """The bid of the seat to act, on the state we hold."""
        if not self._for_this_round(m) or not self._takes_its_turn(m):
            return False
        return self._apply_action(m, self._read_bid)

    def _on_play(self, m: _Received) -> bool:
        """The card of the seat to act, opened by its share, with its claim."""
        if not self._for_this_round(m) or not self._takes_its_turn(m):
            return False
        return self._apply_action(m, self._read_play)

    def _on_unknown(self, m: _Received) -> bool:
        # Checked like a message of a round first, so the fault blamed stays the same.
        if not self._for_this_round(m):
            return False
        raise m.fault(f"unknown message type {m.envelope.type!r}")

    def _for_this_round(self, m: _Received) -> bool:
        """True if ``m`` is for the round in play; False while its round is yet to come or
        between rounds; a fault if it names no round or one that is over."""
        round_number = round_of(m.body)
        if round_number is None:
            raise m.fault("a message without a round number")
        if round_number > self._current_round() or self.deck is None:
            return False
        if round_number < self._current_round():
            raise m.fault(f"a message for round {round_number}, which is over")
        return True

    def _takes_its_turn(self, m: _Received) -> bool:
        """True if ``m`` may be applied now; False until the engine holds our cards for it;
        a fault if its seat is not to act or it was signed on another state.

        Two-handed: the turn and the digest are checked as soon as the trick's cards are
        applied, without waiting for the cards it turned up (turning cards up changes
        neither, and no action is applied in between). A seat that plays out of turn, then
        withholds its share of those cards, is named for the play, not only waited for."""
        if self._phase not in _DECIDING:
            return False
        to_act = self.state.to_act
        # The dummy's action comes from its partner, who can only know it is due once it
        # processed the leave: one that does not know it is out of turn wherever it is read.
        if self.actor(to_act) != m.seat or (to_act != m.seat and not self._knows_leave(m)):
            raise m.fault(f"acted out of turn (seat {to_act} was to act)")
        if self._history:
            # The actions form one causal sequence: each knows the one before (an honest
            # seat applied it before it could act). One that does not would be in turn at
            # a peer that applied that action first, and out of turn at one that did not.
            seat, seq, _ = self._history[-1]
            if not self._knows_at(m.envelope, seat, seq):
                raise m.fault(
                    f"acted without knowing the last action (seat {seat}'s envelope {seq})"
                )
        if state_of(m.body) != self._digest:
            raise m.fault("its state digest differs from ours")
        if to_act == self.dummy:
            self._learn_dummy_cards()
        return self._can_decide()

    def _apply_action(
        self, m: _Received, read: Callable[[_Received], tuple[Action, Claim | None]]
    ) -> bool:
        kind = m.envelope.type
        deck = self.deck
        assert deck is not None
        seat = self.state.to_act  # the sender, or the dummy its partner acts for
        try:
            action, claim = read(m)
            self.state = self.state.apply(action, claim, proven=kind == "play")
        except DeckError as exc:
            self._deck_fault(exc, m.seat, m.evidence)
            return True
        except IllegalActionError as exc:
            raise m.fault(f"illegal {kind}: {exc.reason}") from None
        except ValueError as exc:
            raise m.fault(f"malformed {kind}: {exc}") from None
        self._digest = hashlib.sha256(
            self._digest + encode([deck.round_number, seat, str(action)])
        ).digest()
        if self.state.number != deck.round_number:
            self._transition(SessionPhase.ROUND_OVER)
        elif self.state.phase is Phase.PLAY and self._phase is SessionPhase.BIDDING:
            self._transition(SessionPhase.COMPLETING)
        self._history.append((m.seat, m.envelope.seq, self.state))
        self._events.append(ActionTaken(seat, action, self.state))
        return True

    def _read_bid(self, m: _Received) -> tuple[Action, Claim | None]:
        bid = parse_bid(m.body)
        if self.state.phase is Phase.PLAY:
            raise ValueError("a bid during play")
        return bid, None

    def _read_play(self, m: _Received) -> tuple[Action, Claim | None]:
        if self.state.phase is not Phase.PLAY:
            raise ValueError("a card during the bidding")
        deck = self.deck
        assert deck is not None
        play = play_message(m.body, m.seat)
        to_act = self.state.to_act
        if not m.own and play.position not in deck.positions_of(to_act):
            # The seat to act plays its own cards; a dummy's partner plays the dummy's for
            # it and its own on its own turn (the deck lets it play either).
            raise m.fault(f"played deck position {play.position}, not a card of seat {to_act}")
        if not m.own:
            deck.receive(play)
        card = deck.card_at(play.position)
        if card is None:
            raise ValueError(f"position {play.position} did not open")
        claim = play_claim(m.body, self.state.trump)
        # The engine computes our own claim from our hand (the dummy's open hand is known to
        # every peer: the claim its partner made for it must agree with the engine's).
        return card, None if m.own else claim

    def _deck_fault(self, exc: DeckError, sender: int, evidence: tuple[bytes, ...]) -> None:
        """Blame the seat the deck protocol names (every shuffle and share is proven on
        receipt, so a deck fault always names its author)."""
        if exc.seat != sender:
            # Found while handling another seat's message: the culprit's own envelopes of
            # this round are the evidence.
            evidence = self._round_envelopes(exc.seat)
        raise RuleBroken(exc.seat, f"deck protocol: {exc}", evidence)

    def _can_decide(self) -> bool:
        """The engine has our cards for the current phase (bids or plays can be applied);
        two-handed: no card turned up by the last trick is still to be learned."""
        return self._phase in _DECIDING and not self.state.pending_openings

    # -- our own steps, between envelopes --------------------------------------------------

    def _advance(self) -> bool:
        """Take the local steps that are due, in order; True if anything changed."""
        if self._phase in (SessionPhase.SIGNING, SessionPhase.STOPPED) or self._left_us:
            return False  # (a seat that left owes nothing more: the others play on)
        changed = self._send_deferred()
        changed = self._show_we_went_on() or changed
        if self.deck is None:
            if self._phase is not SessionPhase.BETWEEN_ROUNDS:
                return self._say_done_or_bye()
            self._start_round()
            self._send_deferred()
            changed = True
        deck = self.deck
        assert deck is not None
        for msg in deck.next_messages():
            self._send_deck(deck, msg)
            changed = True
        if self._phase is SessionPhase.DEALING and deck.phase in (
            DeckPhase.BIDDING,
            DeckPhase.PLAY,
        ):
            self._deal(deck)
            changed = True
        if self._phase is SessionPhase.COMPLETING:
            changed = self._complete(deck) or changed
        if self._phase is SessionPhase.PLAYING and self.state.pending_openings:
            changed = self._turn_up(deck) or changed
        if self.dummy is not None:
            before = self.state
            self._learn_dummy_cards()
            changed = changed or self.state is not before
        if self._phase is SessionPhase.ROUND_OVER:
            self._reveal(deck)
            return True
        if self._phase is SessionPhase.REVEALING and deck.phase is DeckPhase.AUDITABLE:
            self._audit(deck)
            return True
        return self._decide_if_due() or changed

    def _send_deferred(self) -> bool:
        deck, deferred = self.deck, self._deferred
        if not deferred:
            return False
        assert deck is not None
        self._deferred = []
        for msg in deferred:
            self._send_deck(deck, msg)
        return True

    def _send_deck(self, deck: _Deck, msg: DeckMessage) -> None:
        """Sign one of our deck messages of the round in play."""
        assert self.seat is not None, "an observer's deck makes no message"
        self._steps.add((self.seat, type(msg)))
        self._send(deck_body(deck.round_number, msg))

    def _start_round(self) -> None:
        self._steps = set()
        self.deck = self._new_deck(self.state)
        self._transition(SessionPhase.DEALING)

    def _deal(self, deck: _Deck) -> None:
        self.state = state = self.state.deal(deck.known_cards())
        hand = state.hand(self.seat) if self.seat is not None else ()
        # Two-handed has no bidding: the engine deals straight into the play.
        bidding = state.phase is not Phase.PLAY
        self._transition(SessionPhase.BIDDING if bidding else SessionPhase.COMPLETING)
        self._events.append(RoundDealt(state.number, state.dealer, hand, state.turned, state))

    def _turn_up(self, deck: _Deck) -> bool:
        """Two-handed: the last trick turned face-down cards up. Publish our shares of them
        (an observer only notes that they may open), then, once they open, hand them to the
        engine. True if anything changed."""
        wanted = self.state.pending_openings
        changed = False
        if not deck.requested().issuperset(wanted):
            # An observer checks a held share here.
            self._local_deck_step(deck, lambda: deck.open(wanted))
            changed = True
        cards = {p: deck.card_at(p) for p in wanted}
        known = {p: c for p, c in cards.items() if c is not None}
        if len(known) == len(wanted):
            self.state = self.state.reveal(known)
            changed = True
        return changed

    def _local_deck_step(self, deck: _Deck, step: Callable[[], object]) -> None:
        """Take a local step of the deck (name the taker, turn cards up) and send the
        message it makes, if any (an observer's makes none). A message it releases may
        break a rule: its author is blamed, with its envelopes of the round as evidence."""
        try:
            made = step()
        except DeckError as exc:
            evidence = self._round_envelopes(exc.seat)
            raise RuleBroken(exc.seat, f"deck protocol: {exc}", evidence) from None
        if isinstance(made, (SharesMessage, OpenMessage, ReleaseMessage)):
            self._send(deck_body(deck.round_number, made))

    def _complete(self, deck: _Deck) -> bool:
        """Classic: name the taker to the deck (our completion shares go out); then, once
        every card is open, put the rest of our hand in the engine. True if anything
        changed."""
        state = self.state
        changed = False
        if state.rules.has_bidding and not state.rules.is_coinche and deck.taker is None:
            # An observer refuses a held play here.
            self._local_deck_step(deck, lambda: deck.set_taker(state.taker))
            changed = True
        if deck.phase is DeckPhase.PLAY:
            if isinstance(deck, DeckPeer):
                mine = {p: c for p, c in deck.hand().items() if state.deck[p] is None}
                if mine:
                    self.state = state.reveal(mine)
            self._transition(SessionPhase.PLAYING)
            self._learn_dummy_cards()
            changed = True
        return changed

    def _reveal(self, deck: _Deck) -> None:
        """The round is over: reveal our secrets, so that everyone can audit the deal."""
        self._transition(SessionPhase.REVEALING)
        if isinstance(deck, DeckPeer):
            self._send(deck_body(deck.round_number, deck.reveal()))

    def _decide_if_due(self) -> bool:
        """Ask for our decision once it is due (when resuming, take the recorded one
        instead). True if it acted."""
        state = self.state
        seat = self.seat
        if (
            seat is None
            or self.finished
            or not self._can_decide()
            or self.actor(state.to_act) != seat
            or self._asked == (state.number, len(state.actions))
            # The dummy's partner decides once it sees the whole open hand.
            or (state.to_act != seat and state.unknown[state.to_act] > 0)
        ):
            return False
        self._asked = (state.number, len(state.actions))
        seq = self.tracker.next_seq(seat)
        while (kept := self._recorded.get(seq)) is not None and kept.type in UNDERIVED:
            seq += 1  # our recorded chats and votes come first (_resend_recorded_choices)
        recorded = self._recorded.get(seq)
        if recorded is not None and recorded.type in ("bid", "play"):
            self.act(self._recorded_action(recorded))
            return True
        # For the dummy, its partner decides from the dummy's view: its open hand.
        self._events.append(DecisionNeeded(observe(state, state.to_act)))
        return False

    def _say_done_or_bye(self) -> bool:
        """After the game: sign the final score, then ``bye`` once the four ``done`` are
        in (an observer signs nothing). True if anything was sent."""
        seat = self.seat
        if seat is None:
            return False
        if seat not in self._done:
            self._send(done_body(self.state.scores))
            self._events.append(GameOver(self.state))
            return True
        if self._phase is SessionPhase.FINISHED and seat not in self._bye:
            self._bye.add(seat)
            self._send(bye_body())
            self._close_after_four_byes()
            return True
        return False

    def _close_after_four_byes(self) -> None:
        if self._bye >= self.live_seats and self._phase is SessionPhase.FINISHED:
            self._transition(SessionPhase.CLOSED)

    def _recorded_action(self, envelope: Envelope) -> Action:
        """The bid or card of one of our own recorded envelopes (when resuming)."""
        if envelope.type == "bid":
            return parse_bid(envelope.body)
        assert isinstance(self.deck, DeckPeer)
        assert self.seat is not None
        card = self.deck.card_at(play_message(envelope.body, self.seat).position)
        assert card is not None, "a recorded play of ours opened at the time"
        return card

    def _new_deck(self, state: State) -> _Deck:
        """The deck protocol of the round about to be dealt (a seat sends its key at once)."""
        table_id = self.definition.table_id
        public = self._public
        if self.seat is None:
            from .deck import DeckObserver

            observer: _Deck = DeckObserver(
                state.rules, dealer=state.dealer, table_id=table_id, round_number=state.number,
                public_seats=public,
            )  # fmt: skip
            return observer
        kept = self.secrets.load(state.number)
        if kept is None:  # (a live peer keeps them ahead, while the round before is played)
            kept = fresh_secrets()
            self.secrets.save(state.number, *kept)
        secret_key, seed = kept
        peer = DeckPeer(
            state.rules, seat=self.seat, dealer=state.dealer, table_id=table_id,
            round_number=state.number, secret_key=secret_key, shuffle_seed=seed,
            public_seats=public, overlap=self.overlap,
        )  # fmt: skip
        self._deferred.append(peer.start())
        return peer

    def _round_envelopes(self, seat: int) -> tuple[bytes, ...]:
        """The deck envelopes ``seat`` signed in the current round: the evidence of a bad
        shuffle or share, which anyone can audit again with the revealed secrets."""
        round_number = self._current_round()
        return tuple(
            e.encode()
            for e in self.tracker.chain(seat)
            if e.type == "deck" and e.body.get("round") == round_number
        )

    def _audit_fault(self, exc: DeckError) -> RuleBroken:
        return RuleBroken(exc.seat, f"deck audit: {exc}", self._round_envelopes(exc.seat))

    def _audit(self, deck: _Deck) -> None:
        try:
            cards = deck.audit()
        except DeckError as exc:
            raise self._audit_fault(exc) from None
        record = self.state.history[-1]
        assert record.number == deck.round_number
        report = audit_round(record, cards)
        if report.fault is not None:
            fixed = corrected_record(record, report)
            self.state = self.state.replace_round(fixed)
            record = fixed
            self._digest = hashlib.sha256(
                self._digest + encode(["audit", record.number, list(self.state.scores)])
            ).digest()
        self._events.append(RoundAudited(record, report, self.state, tuple(cards)))
        self.deck = self._given_up = None
        over = self.state.is_over
        self._transition(SessionPhase.GAME_OVER if over else SessionPhase.BETWEEN_ROUNDS)
