"""The table session: one seat's side of a whole game, as a sans-io state machine.

Signed envelopes in (:meth:`TableSession.receive`), signed envelopes and events out
(:meth:`TableSession.take_outbox`, :meth:`TableSession.take_events`); a local decision goes
in through :meth:`TableSession.act`. No sockets, no clock: the trio layer
(:mod:`belote_p2p.net.peer`) moves bytes, and tests pass envelopes between four sessions.

Order. Envelopes are accepted per sender in sequence
(:class:`~belote_p2p.protocol.wire.ChainTracker`) and processed in causal order: an envelope
is processed only after every envelope named in its ``seen`` field, so each peer applies the
same actions to the same state, whatever order the connections deliver them in. A bid or a
card is then checked against the engine (turn, legality as far as it can be decided, the
deck protocol's proof for the card) and against the ``state`` digest it carries, before it
changes anything.

Bodies (all maps with a ``type``; ``protocol/PROTOCOL.md`` §6 is the reference):

* ``table``: ``{digest}``, the sender's signature of the table definition; the game starts
  when the four are in;
* ``deck``: ``{round, msg}``, a deck protocol message (:mod:`belote_p2p.protocol.deck`);
* ``bid``: ``{round, bid, state}``, a bid in text form (``"pass"``, ``"90 H"``...);
* ``play``: ``{round, deck, claim, state}``, the deck protocol's play message (the card's
  position and the player's decryption share) and the player's claim (announcements with its
  first card, belote with the first of the trump king and queen);
* ``done``: ``{scores}``, sent once after the last round's audit;
* ``bye``: ``{}``, sent once a peer holds the four ``done``: a peer may close its
  connections when it holds the four ``bye`` (everyone has everything);
* ``abandon``: ``{seat}``, the sender declares that ``seat`` left the game: a seat may resign
  itself, or the three others sign that it stayed silent past its grace period. The game
  ends, recorded as abandoned by that seat.

Crash and resume: a seat's round secrets come from a :class:`SecretStore`, which keeps them
(on disk, in the peer) before they are first used; :meth:`TableSession.resume` rebuilds a
session from its transcript and that store, re-deriving its own envelopes and checking them
against the recorded ones, so that it signs nothing it did not sign before.

A message that breaks a rule is a fault of its sender: the session stops, reports
:class:`PeerFault` with the signed envelope as evidence, and keeps its record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from secrets import token_bytes
from typing import Any, Protocol

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.game.announcements import Announcement, announcement_from_cards
from belote_p2p.game.audit import AuditReport, audit_round, corrected_record
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Action, Bid, Claim, IllegalActionError, Phase, RoundRecord, State
from belote_p2p.game.observation import Observation, observe

from .deck import (
    DeckError,
    DeckMessage,
    DeckPeer,
    DeckPhase,
    PlayMessage,
    RevealMessage,
    SharesMessage,
    message_from_wire,
)
from .group import random_scalar, scalar_bytes
from .identity import Identity
from .table import TableDefinition
from .wire import (
    ZERO_HASH,
    BrokenChain,
    ChainTracker,
    Envelope,
    Equivocation,
    MalformedMessage,
    decode,
    encode,
)

SYNC_TYPE = "sync"
MAX_EARLY = 256
"""Envelopes held per sender while an earlier one is missing."""
MAX_WANT = 64
MAX_SYNC_REPLY = 4096
STATE_LABEL = b"belote-p2p/state/v1\x00"


class SessionError(Exception):
    """The local program misused the session (acting out of turn, an illegal card...)."""


# -- events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableReady:
    """All four peers signed the table definition."""


@dataclass(frozen=True, slots=True)
class RoundDealt:
    number: int
    dealer: int
    hand: tuple[Card, ...]
    turned: Card | None


@dataclass(frozen=True, slots=True)
class ActionTaken:
    seat: int
    action: Action
    state: State
    """The state after the action (this peer's view)."""


@dataclass(frozen=True, slots=True)
class DecisionNeeded:
    """It is this seat's turn: answer with :meth:`TableSession.act`."""

    observation: Observation


@dataclass(frozen=True, slots=True)
class RoundAudited:
    """A round's secrets were revealed and the round replayed with every hand known."""

    record: RoundRecord
    """The record as scored after the audit (corrected if the audit found a fault)."""
    report: AuditReport
    state: State


@dataclass(frozen=True, slots=True)
class GameOver:
    state: State


@dataclass(frozen=True, slots=True)
class PeerFault:
    """A peer broke the protocol or the rules; its signed envelope(s) are the evidence."""

    seat: int
    reason: str
    evidence: tuple[bytes, ...]


class Fault(Exception):
    """Raised inside the session when a processed envelope breaks a rule."""

    def __init__(self, seat: int, reason: str, evidence: tuple[bytes, ...] = ()) -> None:
        super().__init__(f"seat {seat}: {reason}")
        self.seat = seat
        self.reason = reason
        self.evidence = evidence


def claim_to_wire(claim: Claim) -> dict[str, Any]:
    return {
        "belote": claim.belote,
        "announcements": [[str(c) for c in a.card_list] for a in claim.announcements],
    }


def claim_from_wire(data: object, trump: int) -> Claim:
    """Parse a claim; ``ValueError`` if malformed."""
    if not isinstance(data, dict) or set(data) != {"belote", "announcements"}:
        raise ValueError("a claim is a map of belote and announcements")
    belote, anns = data["belote"], data["announcements"]
    if type(belote) is not bool or not isinstance(anns, list) or len(anns) > 4:
        raise ValueError("bad claim fields")
    out: list[Announcement] = []
    for cards in anns:
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise ValueError("an announcement is a list of cards")
        out.append(announcement_from_cards([Card.parse(c) for c in cards], trump))
    return Claim(tuple(out), belote)


def parse_sync(data: bytes) -> tuple[list[int], list[bytes]] | None:
    """``(have, want)`` if ``data`` is a sync request, ``None`` if it looks like an envelope.

    A sync request is the canonical map ``{"type": "sync", "have": [4 ints], "want":
    [hashes]}``, unsigned: it only asks for signed envelopes. Raises
    :class:`~belote_p2p.protocol.wire.MalformedMessage` for a malformed one.
    """
    if not data or data[0] != 0x83:  # a map of three entries; an envelope has seven
        return None
    value = decode(data)
    if not isinstance(value, dict) or value.get("type") != SYNC_TYPE:
        return None
    have, want = value.get("have"), value.get("want")
    if (
        set(value) != {"type", "have", "want"}
        or not isinstance(have, list)
        or len(have) != 4
        or any(type(n) is not int or n < 0 for n in have)
        or not isinstance(want, list)
        or len(want) > MAX_WANT
        or any(type(h) is not bytes or len(h) != 32 for h in want)
    ):
        raise MalformedMessage("malformed sync request", evidence=(bytes(data),))
    return have, want


class SecretStore(Protocol):
    """Where a seat keeps each round's deck secrets before their first use."""

    def load(self, round_number: int) -> tuple[bytes, bytes] | None: ...
    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None: ...


class MemorySecrets:
    """A :class:`SecretStore` in memory (tests; a peer that never resumes)."""

    def __init__(self) -> None:
        self.rounds: dict[int, tuple[bytes, bytes]] = {}

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        return self.rounds.get(round_number)

    def save(self, round_number: int, secret_key: bytes, shuffle_seed: bytes) -> None:
        self.rounds[round_number] = (secret_key, shuffle_seed)


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The game ended because ``seat`` left it (resigned, or silent past its grace)."""

    seat: int
    state: State


Event = (
    TableReady
    | RoundDealt
    | ActionTaken
    | DecisionNeeded
    | RoundAudited
    | GameOver
    | GameAbandoned
    | PeerFault
)


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
    def audit(self) -> tuple[Card, ...]: ...
    def set_taker(self, taker: int) -> object: ...


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
    ) -> None:
        if seat is not None and (
            identity is None or definition.seats[seat].key != identity.public_key_bytes
        ):
            raise SessionError(f"this identity is not the key of seat {seat}")
        self.definition = definition
        self.seat = seat
        self.identity = identity
        self.tracker = ChainTracker(definition.table_id, definition.roster)
        self.state = State.new_game(definition.rules)
        self.deck: _Deck | None = None
        self.secrets: SecretStore = secrets if secrets is not None else MemorySecrets()
        self._recorded: dict[int, Envelope] = {}  # our own envelopes from a transcript, by seq
        self._abandon_votes: dict[int, set[int]] = {}
        self.abandoned: int | None = None
        self._signed: set[int] = set()
        self._processed: set[bytes] = {ZERO_HASH}
        self._by_hash: dict[bytes, Envelope] = {}
        self._early: dict[int, dict[int, Envelope]] = {}
        self._last_processed = [ZERO_HASH] * 4
        self._pending: list[Envelope] = []
        self._outbox: list[Envelope] = []
        self._events: list[Event] = []
        self._digest = hashlib.sha256(STATE_LABEL + definition.digest).digest()
        self._asked: tuple[int, int] | None = None  # (round, action count) already asked
        self._completed = False  # our classic completion cards are in the engine
        self._revealed = False
        self._aborted: str | None = None  # the round stopped for its audit
        self._early_revealer: tuple[int, bytes] | None = None
        self._done: set[int] = set()
        self._bye: set[int] = set()
        self.fault: PeerFault | None = None
        self.started = False

    # -- reading -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """All four peers signed the table."""
        return len(self._signed) == 4

    @property
    def closed(self) -> bool:
        """Every peer said ``bye``: each holds the whole game, so connections may close.
        A game stopped by a fault or an abandonment is closed at once."""
        if self.fault is not None or self.abandoned is not None:
            return True
        return len(self._bye) == 4 or (self.seat is None and len(self._done) == 4)

    @property
    def finished(self) -> bool:
        """The game is over and audited, and every peer said so (or a fault stopped it)."""
        return self.fault is not None or self.abandoned is not None or len(self._done) == 4

    @property
    def transcript(self) -> Sequence[Envelope]:
        return self.tracker.transcript

    def waiting_for(self) -> frozenset[int]:
        """Seats that owe the next message (for deadlines), ours excluded."""
        if self.finished:
            return frozenset()
        if not self.ready:
            return frozenset(s for s in range(4) if s not in self._signed and s != self.seat)
        deck_waits = self.deck.waiting_for() if self.deck is not None else frozenset()
        if deck_waits:
            return deck_waits
        if self.state.is_over:
            return frozenset(s for s in range(4) if s not in self._done and s != self.seat)
        if self.state.to_act >= 0 and self.state.to_act != self.seat:
            return frozenset({self.state.to_act})
        return frozenset()

    # -- inputs --------------------------------------------------------------------------

    def start(self) -> None:
        """Sign the table definition: the first envelope of this seat."""
        if self.started:
            raise SessionError("start() called twice")
        self.started = True
        if self.seat is not None:
            self._send({"type": "table", "digest": self.definition.digest})
        self._pump()

    def receive(self, data: bytes) -> list[bytes]:
        """A frame from the network: an envelope, or a sync request.

        Returns the frames to send back to the peer that sent it (the envelopes a sync
        request asks for; nothing for an envelope). Raises
        :class:`~belote_p2p.protocol.wire.RemoteProtocolError` for bytes that are neither (the
        caller counts them against the connection that delivered them); a rule broken by
        a validly signed envelope becomes a :class:`PeerFault` event instead.
        """
        request = parse_sync(data)
        if request is not None:
            return self._answer_sync(*request)
        envelope = Envelope.decode(data)
        if self.fault is None:
            self._accept(envelope)
            self._pump()
        return []

    def _accept(self, envelope: Envelope) -> None:
        """Accept ``envelope`` into its sender's chain, holding it if it comes early."""
        seat = self.tracker.seat_of(envelope.sender)
        expected = self.tracker.next_seq(seat)
        if envelope.seq > expected:
            # Relayed or resent envelopes may overtake each other: hold a bounded few.
            early = self._early.setdefault(seat, {})
            if len(early) < MAX_EARLY or envelope.seq in early:
                early[envelope.seq] = envelope
            return
        try:
            accepted = self.tracker.accept(envelope)
        except (Equivocation, BrokenChain) as exc:
            # Both envelopes carry the sender's valid signature: it signed two histories.
            assert exc.seat is not None
            self._blame(Fault(exc.seat, f"equivocation: {exc}", exc.evidence))
            return
        if accepted is None:
            return
        self._by_hash[accepted.hash] = accepted
        self._pending.append(accepted)
        if accepted.type == "fault":
            self._replay_evidence(accepted)
        following = self._early.get(seat, {}).pop(accepted.seq + 1, None)
        if following is not None:
            self._accept(following)

    def _replay_evidence(self, envelope: Envelope) -> None:
        """Take in the evidence of another peer's fault report, as if it had come to us.

        Nothing of the accuser is trusted: the evidence is signed by the accused, and this
        peer finds the fault itself (an equivocation at once; a bad message when it is
        processed in causal order) or finds nothing.
        """
        evidence = envelope.body.get("evidence")
        if not isinstance(evidence, list):
            return
        for data in evidence[:4]:
            if type(data) is not bytes:
                continue
            try:
                piece = Envelope.decode(data)
                if piece.table == self.definition.table_id:
                    self._accept(piece)
            except RemoteProtocolError:
                continue
            if self.fault is not None:
                return

    def sync_request(self) -> bytes:
        """A request for what this peer lacks: send it to each peer on (re)connection and
        whenever the game seems stuck; peers answer with envelopes (:meth:`receive`)."""
        want: list[bytes] = []
        for envelope in self._pending:
            for h in envelope.seen:
                if h not in self._by_hash and h != ZERO_HASH and h not in want:
                    want.append(h)
        have = [self.tracker.next_seq(s) for s in range(4)]
        return encode({"type": SYNC_TYPE, "have": have, "want": want[:MAX_WANT]})

    def _answer_sync(self, have: list[int], want: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        for seat in range(4):
            out += [e.encode() for e in self.tracker.chain(seat)[have[seat] :]]
        for h in want:
            found = self._by_hash.get(h)
            if found is not None:
                out.append(found.encode())
        return out[:MAX_SYNC_REPLY]

    def act(self, action: Action) -> None:
        """This seat's decision (a bid or a card); raises :class:`SessionError` if illegal."""
        if self.fault is not None:
            raise SessionError("the game was stopped by a fault")
        if self.seat is None:
            raise SessionError("an observer does not act")
        state = self.state
        if state.to_act != self.seat or not self._can_decide():
            raise SessionError("it is not this seat's turn")
        if action not in state.legal_actions():
            raise SessionError(f"{action} is not legal now")
        round_number = state.number
        if isinstance(action, Bid):
            body: dict[str, Any] = {
                "type": "bid", "round": round_number, "bid": str(action), "state": self._digest,
            }  # fmt: skip
        else:
            assert isinstance(self.deck, DeckPeer)
            position = next(p for p, c in self.deck.hand().items() if c == action)
            play = self.deck.play(position)
            body = {
                "type": "play",
                "round": round_number,
                "deck": play.to_wire(),
                "claim": claim_to_wire(state.claim_for(action)),
                "state": self._digest,
            }
        self._send(body)
        self._pump()

    def abandon(self, seat: int) -> None:
        """Sign that ``seat`` left the game: ourselves (resign), or a seat silent past its
        grace period (the game ends once the three other seats signed it)."""
        if self.seat is None:
            raise SessionError("an observer does not act")
        if self.finished:
            return
        self._send({"type": "abandon", "seat": seat})
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
        session = cls(definition, seat, identity, secrets=secrets)
        others = []
        for data in envelopes:
            envelope = Envelope.decode(data)
            if envelope.sender == identity.public_key_bytes:
                session._recorded[envelope.seq] = envelope
            else:
                others.append(data)
        session.start()
        for data in others:
            session.receive(data)
        if session._recorded:
            raise SessionError(
                f"cannot resume: {len(session._recorded)} recorded envelope(s) of ours were "
                "not derived again"
            )
        return session

    def take_outbox(self) -> list[bytes]:
        """Encoded envelopes to send to every other peer, in order."""
        out, self._outbox = self._outbox, []
        return [e.encode() for e in out]

    def take_events(self) -> list[Event]:
        out, self._events = self._events, []
        return out

    # -- the machinery -------------------------------------------------------------------

    def _send(self, body: dict[str, Any]) -> None:
        # ``seen`` names what this peer has *processed*, so that a receiver that processes
        # in causal order never waits on something that waits on this envelope.
        me = self.seat
        assert me is not None and self.identity is not None, "an observer sends nothing"
        tracker = self.tracker
        seen = [tracker.last_hash(me) if s == me else self._last_processed[s] for s in range(4)]
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
        tracker.accept(envelope)
        self._by_hash[envelope.hash] = envelope
        self._outbox.append(envelope)
        self._pending.append(envelope)

    def _blame(self, fault: Fault) -> None:
        if self.fault is None:
            self.fault = PeerFault(fault.seat, fault.reason, fault.evidence)
            self._events.append(self.fault)
            if self.seat is not None and fault.evidence:
                # Tell the others: the evidence proves itself to whoever replays it.
                self._send({"type": "fault", "seat": fault.seat, "evidence": list(fault.evidence)})

    def _pump(self) -> None:
        """Process every envelope that can be, and take every local step that is due."""
        try:
            progress = True
            while progress and self.fault is None:
                progress = self._advance()
                for envelope in list(self._pending):
                    if self._ready(envelope) and self._process(envelope):
                        self._pending.remove(envelope)
                        self._processed.add(envelope.hash)
                        self._last_processed[self.tracker.seat_of(envelope.sender)] = envelope.hash
                        progress = True
        except Fault as fault:
            self._blame(fault)

    def _ready(self, envelope: Envelope) -> bool:
        return envelope.prev in self._processed and all(h in self._processed for h in envelope.seen)

    def _current_round(self) -> int:
        return self.deck.round_number if self.deck is not None else self.state.number

    def _process(self, envelope: Envelope) -> bool:
        """Apply one envelope; False if it must wait; raise :class:`Fault` if it is wrong."""
        seat = self.tracker.seat_of(envelope.sender)
        body = envelope.body
        evidence = (envelope.encode(),)
        own = seat == self.seat
        kind = body.get("type")

        def fault(reason: str) -> Fault:
            return Fault(seat, reason, evidence)

        if kind == "table":
            if body.get("digest") != self.definition.digest:
                raise fault("signed another table definition")
            if seat in self._signed:
                raise fault("signed the table twice")
            self._signed.add(seat)
            if self.ready:
                self._events.append(TableReady())
            return True
        if not self.ready:
            return False
        if kind == "fault":
            return True  # its evidence was taken in when it was accepted
        if kind == "abandon":
            gone = body.get("seat")
            if type(gone) is not int or not 0 <= gone < 4:
                raise fault("abandons no seat")
            votes = self._abandon_votes.setdefault(gone, set())
            votes.add(seat)
            if gone == seat or len(votes - {gone}) == 3:
                self.abandoned = gone
                self._events.append(GameAbandoned(gone, self.state))
            return True
        if kind == "bye":
            if len(self._done) < 4:
                return False
            self._bye.add(seat)
            return True
        if kind == "done":
            if not self.state.is_over or self.deck is not None:
                return False
            if body.get("scores") != list(self.state.scores):
                raise fault(f"ends the game with scores {body.get('scores')}")
            self._done.add(seat)
            return True
        round_number = body.get("round")
        if type(round_number) is not int:
            raise fault("a message without a round number")
        if round_number > self._current_round() or self.deck is None:
            return False
        if round_number < self._current_round():
            raise fault(f"a message for round {round_number}, which is over")
        if kind == "deck":
            if own:
                return True
            try:
                msg = message_from_wire(body.get("msg"), sender=seat)
                if (
                    isinstance(msg, RevealMessage)
                    and self._early_revealer is None
                    and not self._revealed
                    and self.state.number == self.deck.round_number
                ):
                    self._early_revealer = (seat, envelope.encode())
                self.deck.receive(msg)
            except DeckError as exc:
                self._deck_fault(exc, seat, evidence)
            return True
        if kind not in ("bid", "play"):
            raise fault(f"unknown message type {kind!r}")
        if not self._can_decide() or self.state.phase is Phase.DEAL:
            return False
        if self.state.to_act != seat:
            raise fault(f"acted out of turn (seat {self.state.to_act} was to act)")
        if body.get("state") != self._digest:
            raise fault("its state digest differs from ours")
        action: Action
        claim: Claim | None = None
        try:
            if kind == "bid":
                text = body.get("bid")
                if not isinstance(text, str):
                    raise ValueError("a bid is text")
                action = Bid.parse(text)
                if self.state.phase is Phase.PLAY:
                    raise ValueError("a bid during play")
            else:
                if self.state.phase is not Phase.PLAY:
                    raise ValueError("a card during the bidding")
                play = PlayMessage.from_wire(body.get("deck"), sender=seat)
                if not own:
                    self.deck.receive(play)
                card = self.deck.card_at(play.position)
                if card is None:
                    raise ValueError(f"position {play.position} did not open")
                action = card
                claim = claim_from_wire(body.get("claim"), self.state.trump)
                if own:
                    claim = None  # the engine computes our own claim from our hand
            self.state = self.state.apply(action, claim, proven=kind == "play")
        except DeckError as exc:
            self._deck_fault(exc, seat, evidence)
            return True
        except IllegalActionError as exc:
            raise fault(f"illegal {kind}: {exc.reason}") from None
        except ValueError as exc:
            raise fault(f"malformed {kind}: {exc}") from None
        self._digest = hashlib.sha256(
            self._digest + encode([round_number, seat, str(action)])
        ).digest()
        self._events.append(ActionTaken(seat, action, self.state))
        return True

    def _deck_fault(self, exc: DeckError, sender: int, evidence: tuple[bytes, ...]) -> None:
        """Blame the seat the deck protocol names; if it names none yet (a card that does
        not open although every share is proven), stop the round and let the audit of the
        revealed secrets name the shuffler."""
        if exc.seat is None:
            self._aborted = f"deck protocol: {exc}"
            return
        if exc.seat != sender:
            # Found while handling another seat's message: the culprit's own envelopes of
            # this round are the evidence.
            evidence = self._round_envelopes(exc.seat)
        raise Fault(exc.seat, f"deck protocol: {exc}", evidence)

    def _can_decide(self) -> bool:
        """The engine has our cards for the current phase (bids or plays can be applied)."""
        state = self.state
        if state.phase in (Phase.DEAL, Phase.GAME_OVER) or self.deck is None:
            return False
        if self._aborted is not None or self._revealed:
            return False
        if state.number != self.deck.round_number:
            return False
        return state.phase is not Phase.PLAY or self._completed

    def _advance(self) -> bool:
        """Take the local steps that are due; True if anything changed."""
        if not self.ready or self.fault is not None:
            return False
        state = self.state
        seat = self.seat
        changed = False
        if self.deck is None:
            if state.is_over:
                if seat is not None and seat not in self._done:
                    self._send({"type": "done", "scores": list(state.scores)})
                    self._events.append(GameOver(state))
                    return True
                if seat is not None and len(self._done) == 4 and seat not in self._bye:
                    self._bye.add(seat)
                    self._send({"type": "bye"})
                    return True
                return False
            self.deck = self._new_deck(state)
            self._completed = self._revealed = False
            self._aborted = None
            self._early_revealer = None
            changed = True
        deck = self.deck
        for msg in deck.next_messages():
            self._send({"type": "deck", "round": deck.round_number, "msg": msg.to_wire()})
            changed = True
        same_round = state.number == deck.round_number
        if (
            same_round
            and state.phase is Phase.DEAL
            and deck.phase in (DeckPhase.BIDDING, DeckPhase.PLAY)
        ):
            self.state = state = state.deal(deck.known_cards())
            hand = state.hand(seat) if seat is not None else ()
            self._events.append(RoundDealt(state.number, state.dealer, hand, state.turned))
            changed = True
        if same_round and state.phase is Phase.PLAY and not self._completed:
            if not state.rules.is_coinche and deck.taker is None:
                try:
                    shares = deck.set_taker(state.taker)
                except DeckError as exc:  # an observer refuses a held play here
                    seat_at_fault = exc.seat if exc.seat is not None else -1
                    raise Fault(seat_at_fault, f"deck protocol: {exc}") from None
                if isinstance(shares, SharesMessage):
                    self._send(
                        {"type": "deck", "round": deck.round_number, "msg": shares.to_wire()}
                    )
                changed = True
            if deck.phase is DeckPhase.PLAY:
                if isinstance(deck, DeckPeer):
                    mine = {p: c for p, c in deck.hand().items() if state.deck[p] is None}
                    self.state = state = state.reveal(mine)
                self._completed = True
                changed = True
        interrupted = self._aborted is not None or (
            deck.phase is DeckPhase.REVEAL and self._early_revealer is not None
        )
        if (not same_round or interrupted) and not self._revealed:
            # The engine closed the round (played out or redealt), or the round cannot go on:
            # reveal our secrets so that everyone can audit the deal.
            self._revealed = True
            if isinstance(deck, DeckPeer):
                msg = deck.reveal()
                self._send({"type": "deck", "round": deck.round_number, "msg": msg.to_wire()})
            return True
        if self._revealed and deck.phase is DeckPhase.AUDITABLE:
            if same_round:
                self._audit_interrupted(deck)
            self._audit(deck)
            return True
        if (
            seat is not None
            and self._can_decide()
            and state.to_act == seat
            and self._asked != (state.number, len(state.actions))
        ):
            self._asked = (state.number, len(state.actions))
            recorded = self._recorded.get(self.tracker.next_seq(seat))
            if recorded is not None and recorded.type in ("bid", "play"):
                self.act(self._recorded_action(recorded))
                return True
            self._events.append(DecisionNeeded(observe(state, seat)))
        return changed

    def _recorded_action(self, envelope: Envelope) -> Action:
        """The bid or card of one of our own recorded envelopes (when resuming)."""
        body = envelope.body
        if body["type"] == "bid":
            return Bid.parse(body["bid"])
        assert isinstance(self.deck, DeckPeer)
        card = self.deck.hand()[PlayMessage.from_wire(body["deck"], self.deck.seat).position]
        return card

    def _new_deck(self, state: State) -> _Deck:
        """The deck protocol of the round about to be dealt (a seat sends its key at once)."""
        table_id = self.definition.table_id
        if self.seat is None:
            from .deck import DeckObserver

            observer: _Deck = DeckObserver(
                state.rules, dealer=state.dealer, table_id=table_id, round_number=state.number
            )
            return observer
        kept = self.secrets.load(state.number)
        if kept is None:
            kept = (scalar_bytes(random_scalar()), token_bytes(32))
            self.secrets.save(state.number, *kept)
        secret_key, seed = kept
        peer = DeckPeer(
            state.rules, seat=self.seat, dealer=state.dealer, table_id=table_id,
            round_number=state.number, secret_key=secret_key, shuffle_seed=seed,
        )  # fmt: skip
        self._send({"type": "deck", "round": state.number, "msg": peer.start().to_wire()})
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

    def _audit_fault(self, exc: DeckError) -> Fault:
        if exc.seat is None:
            return Fault(-1, f"deck audit: {exc}")
        return Fault(exc.seat, f"deck audit: {exc}", self._round_envelopes(exc.seat))

    def _audit_interrupted(self, deck: _Deck) -> None:
        """Audit a round stopped before its end; always ends in a fault."""
        try:
            deck.audit()
        except DeckError as exc:
            raise self._audit_fault(exc) from None
        if self._early_revealer is not None:
            seat, envelope = self._early_revealer
            raise Fault(seat, "revealed its secrets before the round ended", (envelope,))
        raise Fault(-1, f"round stopped ({self._aborted}); the audit names nobody")

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
        self._events.append(RoundAudited(record, report, self.state))
        self.deck = None
