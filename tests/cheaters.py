"""Misbehaving peers: a reusable harness for tests of faults, blame and evidence.

The :class:`~belote_p2p.protocol.session.TableSession` objects of one table (four seats, or
three or two as its rules say) play over in-memory connections, one byte stream per ordered
pair of seats, delivered in a seeded random interleaving. Every
stream goes through a :class:`~belote_p2p.protocol.wire.FrameDecoder`, so a frame that is too large
or cut short breaks its connection as it would over TCP. A receiver treats what it refuses as
:mod:`belote_p2p.net.peer` does: a :class:`~belote_p2p.errors.RemoteProtocolError` (or an
oversized frame) is counted against the connection that delivered it, and that connection is
dropped, with whatever was still in flight on it, and comes back at once: both ends send a
sync request. A connection a cheat closes for good stands for a seat that vanished: each
receiver signs it gone (``abandon``), as a peer does once its silence has passed the deadline
and grace.

A cheater is an honest session with a :class:`Cheat` in front of it: the cheat sees every
envelope the session emits and decides what goes on each connection (rewritten, re-signed
with the cheater's own :class:`~belote_p2p.protocol.identity.Identity`, dropped, duplicated, sent
differently to different peers, or replaced by raw bytes); it may also take the seat's
decisions and patch the seat's deck protocol (a shuffle that does not follow its seed, a
false reveal). One subclass per cheat. A cheat sits at the table's last seat unless told
otherwise; a table may seat more than one (peers that collude, each lying its own way).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from helpers import Net, make_table, table_sessions, write_transcript

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.game.announcements import announcement_from_cards
from belote_p2p.game.audit import AuditFault
from belote_p2p.game.cards import CARDS, Card, cards_of
from belote_p2p.game.engine import KING, QUEEN, Action, Claim, IllegalActionError, Phase, State
from belote_p2p.game.observation import Observation, observe
from belote_p2p.protocol import group
from belote_p2p.protocol.bodies import claim_to_wire, deck_body, fault_body
from belote_p2p.protocol.deck import (
    CARD_POINTS,
    Ciphertext,
    DeckPeer,
    DecryptionShare,
    OpenMessage,
    PlayMessage,
    RevealMessage,
    SharesMessage,
    ShuffleMessage,
    shuffle_commitment,
    shuffle_masks,
    shuffle_permutation,
    shuffle_proof_context,
)
from belote_p2p.protocol.events import DecisionNeeded, Event, GameAbandoned, PeerFault, RoundAudited
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.session import SessionPhase, TableSession
from belote_p2p.protocol.shuffle import prove_shuffle
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.verify import Verdict, verify_transcript
from belote_p2p.protocol.wire import DEFAULT_MAX_FRAME, Envelope, FrameDecoder, FrameTooLarge, frame

LAST = -1
"""A cheat's default seat: the table's last one (3, or 2 or 1 at a table of three or two)."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """Bytes a receiver refused, counted against the connection that delivered them."""

    receiver: int
    connection: int
    error: RemoteProtocolError


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one honest seat saw the end: the same shape on every honest seat is the test."""

    kind: str
    """``fault`` (a PeerFault), ``audit`` (a round audit found a fault and the round was
    rescored), ``disputed`` (no table agreed, nobody to blame), ``abandoned``, ``finished``
    or ``stalled``."""
    seat: int | None


# -- the cheats --------------------------------------------------------------------------


class Cheat:
    """An honest peer. Subclasses override what they need."""

    def __init__(self, seat: int = LAST) -> None:
        self.seat = seat
        self.sent = 0
        """Envelopes the seat's session emitted so far."""
        self.done = False
        """The cheat was carried out."""

    def setup(self, table: Table) -> None:
        """Called once the sessions exist, before any is started."""

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        """The raw chunks to write on each connection for one emitted envelope."""
        return {dst: [frame(envelope.encode())] for dst in table.others(self.seat)}

    def decide(self, table: Table, observation: Observation) -> bool:
        """Take this decision ourselves; False lets the table's bot decide honestly."""
        return False

    def reply(self, table: Table, dst: int, frames: list[bytes]) -> list[bytes]:
        """What to answer ``dst``'s sync request with (the session's answer by default)."""
        return frames

    def poll(self, table: Table) -> None:
        """Called whenever the seat's session has moved (after its output was routed)."""


def sign_next(session: TableSession, body: dict[str, Any]) -> Envelope:
    """Have ``session`` sign ``body`` as its next envelope, as if the engine had wanted it:
    the envelope enters its own chain and outbox and is processed like any other."""
    session._send(body)
    session._pump()
    return session.tracker.chain(session.seat if session.seat is not None else 0)[-1]


def resign(
    identity: Identity, envelope: Envelope, body: dict[str, Any], *, prev: bytes | None = None
) -> Envelope:
    """``envelope`` with another body (and optionally another ``prev``), validly signed."""
    prev = envelope.prev if prev is None else prev
    seen = list(envelope.seen)
    seat = seen.index(envelope.prev) if envelope.prev in seen else None
    if seat is not None:
        seen[seat] = prev
    return Envelope.create(identity, envelope.table, envelope.seq, prev, seen, body)


def flip_bit(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 1]) + data[index + 1 :]


class AtEnvelope(Cheat):
    """A cheat carried out at the seat's ``at``-th envelope."""

    def __init__(self, at: int = 6, seat: int = LAST) -> None:
        super().__init__(seat)
        self.at = at


class ForgedSignature(AtEnvelope):
    """Before its ``at``-th envelope, sends a copy whose signature does not verify."""

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        if self.sent == self.at:
            self.done = True
            forged = flip_bit(envelope.encode(), len(envelope.encode()) - 1)
            for chunks in out.values():
                chunks.insert(0, frame(forged))
        return out


class Garbage(AtEnvelope):
    """Before its ``at``-th envelope, sends frames that are not envelopes: bytes that are
    not msgpack, a non-canonical re-encoding of the real envelope, a map of the wrong
    shape, the envelope cut short inside its frame, and an envelope for another table."""

    def __init__(self, at: int = 6, seat: int = LAST) -> None:
        super().__init__(at, seat)
        self.count = 0

    def frames(self, table: Table, envelope: Envelope) -> list[bytes]:
        raw = envelope.encode()
        identity = table.ids[self.seat]
        other_table = Envelope.create(
            identity,
            bytes(16),
            0,
            bytes(32),
            [bytes(32)] * table.seats,
            {"type": "table", "digest": b""},
        ).encode()
        return [
            b"\xc1 not msgpack",
            b"",
            raw[:1] + b"\xd0\x00" + raw[2:],  # an int in a non-shortest form (not canonical)
            b"\x81\xa4type\xa5hello",
            raw[: len(raw) // 2],
            raw + b"\x00",
            other_table,
        ]

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        if self.sent == self.at:
            self.done = True
            bad = [frame(b) for b in self.frames(table, envelope)]
            self.count = len(bad)
            for chunks in out.values():
                chunks[:0] = bad
        return out


class OversizedFrame(AtEnvelope):
    """At its ``at``-th envelope, writes a frame header announcing more than the limit."""

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        if self.sent < self.at:
            return super().route(table, envelope)
        if not self.done:
            self.done = True
            header = (DEFAULT_MAX_FRAME + 1).to_bytes(4, "big")
            return {dst: [header + envelope.encode()] for dst in table.others(self.seat)}
        return {}


class CutFrame(AtEnvelope):
    """At its ``at``-th envelope, writes half a frame and closes its connections."""

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        if self.sent < self.at:
            return super().route(table, envelope)
        if not self.done:
            self.done = True
            data = frame(envelope.encode())
            for dst in table.others(self.seat):
                table.write(self.seat, dst, data[: len(data) // 2])
                table.close(self.seat, dst)
        return {}


BIDDING = (Phase.AUCTION, Phase.TAKE_FIRST, Phase.TAKE_SECOND)


class OutOfTurn(Cheat):
    """During the first bidding, signs a valid bid when another seat (not the one after it)
    is to act, with the right state digest. Where there is no bidding (two-handed), plays
    one of its face-up cards while the other seat is to play, with the right state digest
    (with two seats the one after it is the only other)."""

    def poll(self, table: Table) -> None:
        session = table.sessions[self.seat]
        state = session.state
        if self.done or not session.ready:
            return
        if state.rules.has_bidding:
            if state.phase in BIDDING and state.to_act not in (
                self.seat,
                (self.seat + 1) % table.seats,
            ):
                self.done = True
                body = {"type": "bid", "round": state.number, "bid": "pass"}
                sign_next(session, {**body, "state": session._digest})
            return
        deck = session.deck
        if state.phase is not Phase.PLAY or state.to_act == self.seat or state.pending_openings:
            return
        if not isinstance(deck, DeckPeer) or session.phase is not SessionPhase.PLAYING:
            return
        face_up = [p for p in deck.hand() if p not in deck.played()]
        if face_up:
            self.done = True
            self.position = face_up[0]
            sign_next(session, play_envelope_body(session, deck.play(face_up[0]), Claim()))


def play_envelope_body(session: TableSession, play: PlayMessage, claim: Claim) -> dict[str, Any]:
    """The body of a ``play`` envelope of ``session``'s seat on the state it holds."""
    return {
        "type": "play",
        "round": session.state.number,
        "deck": play.to_wire(),
        "claim": claim_to_wire(claim),
        "state": session._digest,
    }


class Replay(Cheat):
    """Re-sends envelopes already sent: its own first one and another seat's (exact copies,
    which the chains ignore), then its first bid's body (its first card's, where there is no
    bidding) signed again at a new seq."""

    def __init__(self, resign_body: bool, seat: int = LAST) -> None:
        super().__init__(seat)
        self.resign_body = resign_body
        self.replayed: list[bytes] = []

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        session = table.sessions[self.seat]
        if envelope.type in ("bid", "play") and not self.done:
            self.done = True
            first = session.tracker.chain(self.seat)[0].encode()
            other = session.tracker.chain((self.seat + 1) % table.seats)[0].encode()
            self.replayed = [first, other, envelope.encode()]
            for chunks in out.values():
                chunks += [frame(d) for d in self.replayed]
            if self.resign_body:
                table.after(lambda: sign_next(session, dict(envelope.body)))
        return out


class Equivocate(Cheat):
    """Signs two different bids at one seq (two different cards where there is no bidding):
    one to ``victim``, the other to the others. With two seats the victim is the only other
    peer: it gets both, the second right after the first (a seat that shows its one peer
    two histories, as it would on a reconnection, hoping the second replaces the first)."""

    def __init__(self, victim: int = 0, seat: int = LAST) -> None:
        super().__init__(seat)
        self.victim = victim
        self.pair: tuple[Envelope, Envelope] | None = None

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        if envelope.type not in ("bid", "play") or self.done:
            return out
        body = dict(envelope.body)
        if envelope.type == "bid":
            body["bid"] = "pass" if body["bid"] != "pass" else "80 H"
        else:
            deck = table.sessions[self.seat].deck
            assert isinstance(deck, DeckPeer)
            spare = [p for p in deck.hand() if p not in deck.played()]
            if not spare:
                return out
            body["deck"] = dict(body["deck"], position=spare[0])
        self.done = True
        twin = resign(table.ids[self.seat], envelope, body)
        self.pair = (envelope, twin)
        if len(out) == 1:
            out[self.victim].append(frame(twin.encode()))
        else:
            out[self.victim] = [frame(twin.encode())]
        return out


class ForeignCard(Cheat):
    """Plays a position dealt to another seat (``share=False``), or one of its own positions
    with the decryption share of another of its cards (``share=True``)."""

    def __init__(self, forge_share: bool, seat: int = LAST) -> None:
        super().__init__(seat)
        self.forge_share = forge_share

    def decide(self, table: Table, observation: Observation) -> bool:
        session = table.sessions[self.seat]
        deck = session.deck
        if self.done or observation.phase is not Phase.PLAY or not isinstance(deck, DeckPeer):
            return False
        state = session.state
        mine = {c: p for p, c in deck.hand().items() if p not in deck.played()}
        legal = [c for c in observation.legal if isinstance(c, Card)]
        if self.forge_share:
            # Positions whose play carries a share (not the turned card of three-handed).
            spare = [p for c, p in mine.items() if c not in legal and not deck._shareless(p)]
            shared = [c for c in legal if not deck._shareless(mine[c])]
            if not spare or not shared:
                return False
            card = shared[0]
            wrong = deck.play(spare[0])  # a valid share, of another position
            play = PlayMessage(self.seat, mine[card], wrong.share)
            claim = state.claim_for(card)
        else:
            theirs = [p for p in range(deck.size) if deck.owner_of(p) not in (None, self.seat)]
            play = PlayMessage(self.seat, theirs[0], deck.play(mine[legal[0]]).share)
            claim = Claim()
        self.done = True
        sign_next(
            session,
            {
                "type": "play",
                "round": state.number,
                "deck": play.to_wire(),
                "claim": claim_to_wire(claim),
                "state": session._digest,
            },
        )
        return True


class HiddenCard(Cheat):
    """Two-handed: plays one of its face-down cards that no trick has turned up (a position
    of its own whose card nobody, itself included, can know yet)."""

    position: int | None = None

    def decide(self, table: Table, observation: Observation) -> bool:
        session = table.sessions[self.seat]
        deck = session.deck
        if self.done or observation.phase is not Phase.PLAY or not isinstance(deck, DeckPeer):
            return False
        hidden = [p for p in deck.positions_of(self.seat) if deck.card_at(p) is None]
        if not hidden:
            return False
        self.done = True
        self.position = hidden[0]
        play = PlayMessage(self.seat, hidden[0], None)
        sign_next(session, play_envelope_body(session, play, Claim()))
        return True


def public_view(state: State, seat: int) -> State:
    """``state`` as the other seats see it: ``seat``'s hand hidden but what it showed."""
    shown = observe(state, seat).shown[seat]
    s = state._copy()
    hands = list(s.hands)
    unknown = list(s.unknown)
    unknown[seat] = len(cards_of(hands[seat] & ~shown))
    hands[seat] &= shown
    s.hands = (hands[0], hands[1], hands[2], hands[3])  # type: ignore[assignment]
    s.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])  # type: ignore[assignment]
    return s


def play_hidden(table: Table, seat: int, card: Card, claim: Claim) -> None:
    """Play ``card`` with ``claim`` through the seat's session as the others will apply it
    (its own engine would refuse a card or claim the rules forbid), then give the engine
    back the rest of its hand."""
    session = table.sessions[seat]
    deck = session.deck
    assert isinstance(deck, DeckPeer)
    real = session.state
    position = next(p for p, c in deck.hand().items() if c == card)
    public = public_view(real, seat)
    after = public.apply(card, claim, proven=True)  # as every receiver applies it
    body = {
        "type": "play",
        "round": real.number,
        "deck": deck.play(position).to_wire(),
        "claim": claim_to_wire(claim),
        "state": session._digest,
    }
    # The session applies its own card without a claim: let it apply ours to the public view.
    session.state = _Presented(public, card, claim, after)  # type: ignore[assignment]
    sign_next(session, body)
    state = session.state
    hands = list(state.hands)
    unknown = list(state.unknown)
    hands[seat] = real.hands[seat] & ~(1 << card)
    unknown[seat] = 0
    fixed = state._copy()
    fixed.hands = (hands[0], hands[1], hands[2], hands[3])  # type: ignore[assignment]
    fixed.unknown = (unknown[0], unknown[1], unknown[2], unknown[3])  # type: ignore[assignment]
    session.state = fixed


class _Presented:
    """A state stand-in whose next ``apply`` is the one the cheat prepared."""

    def __init__(self, state: State, card: Card, claim: Claim, after: State) -> None:
        self._state, self._card, self._after = state, card, after

    def apply(self, action: Action, claim: Claim | None = None, *, proven: bool = False) -> State:
        assert action == self._card
        return self._after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)


class Revoke(Cheat):
    """Plays a card the rules forbid it (it holds one it must play), where nobody can tell
    yet: the public view of its hand allows the card."""

    def decide(self, table: Table, observation: Observation) -> bool:
        session = table.sessions[self.seat]
        state = session.state
        if self.done or observation.phase is not Phase.PLAY or not state.tricks:
            return False
        hand = state.hands[self.seat]
        public = public_view(state, self.seat)
        forbidden = hand & public.legal_mask() & ~state.legal_mask()
        for card in cards_of(forbidden):
            if card & 7 in (KING, QUEEN):
                continue  # no belote question
            try:
                public.apply(card, Claim())
            except IllegalActionError:
                continue
            self.done = True
            self.card = card
            play_hidden(table, self.seat, card, Claim())
            return True
        return False


class FalseClaim(Cheat):
    """Claims a belote it does not hold (``belote=True``: with a king or queen of trump
    when the other is elsewhere), or with its first card a tierce it does not hold."""

    def __init__(self, belote: bool, seat: int = LAST) -> None:
        super().__init__(seat)
        self.belote = belote

    def decide(self, table: Table, observation: Observation) -> bool:
        session = table.sessions[self.seat]
        state = session.state
        if self.done or observation.phase is not Phase.PLAY:
            return False
        hand = state.hands[self.seat]
        legal = [c for c in observation.legal if isinstance(c, Card)]
        public = public_view(state, self.seat)
        for card in legal:
            claim = self._claim(state, card, hand)
            if claim is None:
                continue
            try:
                public.apply(card, claim)
            except IllegalActionError:
                continue
            self.done = True
            self.claim = claim
            play_hidden(table, self.seat, card, claim)
            return True
        return False

    def _claim(self, state: State, card: Card, hand: int) -> Claim | None:
        honest = state.claim_for(card)
        if self.belote:
            if card & 7 not in (KING, QUEEN) or card >> 3 != state.trump or honest.belote:
                return None
            return Claim(honest.announcements, True)
        if state.tricks or honest.announcements or not state.rules.announcements:
            return None
        suit = card >> 3
        for low in range(6):
            cards = [CARDS[suit * 8 + low + i] for i in range(3)]
            if card in cards and not all(hand >> c & 1 for c in cards):
                try:
                    return Claim((announcement_from_cards(cards, state.trump),), honest.belote)
                except ValueError:
                    continue
        return None


class OverClaim(Cheat):
    """With its first card of a round, claims every card of a suit that nobody has played
    yet as a quinte and a tierce (classic: 7 to J, Q to A): eight cards, more than its hand
    can hold beside the card it plays. What is public already refutes it, but nothing is
    refused on receipt from a deduction about a hand (PROTOCOL.md §6.2.3): the round audit
    finds it, and the round is rescored."""

    def decide(self, table: Table, observation: Observation) -> bool:
        session = table.sessions[self.seat]
        state = session.state
        if self.done or observation.phase is not Phase.PLAY or state.tricks:
            return False
        if not state.rules.announcements or state.declared[self.seat] is not None:
            return False
        card = next(c for c in observation.legal if isinstance(c, Card))
        for suit in range(4):
            cards = [CARDS[suit * 8 + rank] for rank in range(8)]
            if state.played & sum(1 << c for c in cards):
                continue
            claim = Claim(
                (
                    announcement_from_cards(cards[:5], state.trump),
                    announcement_from_cards(cards[5:], state.trump),
                ),
                state.claim_for(card).belote,
            )
            self.done = True
            self.claim = claim
            play_hidden(table, self.seat, card, claim)
            return True
        return False


class _DeckPatch(Cheat):
    """Patches the seat's deck protocol of round ``round_number`` as it is made."""

    round_number = 0

    def setup(self, table: Table) -> None:
        session = table.sessions[self.seat]
        make = session._new_deck

        def new_deck(state: State) -> Any:
            deck = make(state)
            if isinstance(deck, DeckPeer) and deck.round_number == self.round_number:
                self.patch(deck)
            return deck

        session._new_deck = new_deck  # type: ignore[method-assign]

    def patch(self, deck: DeckPeer) -> None:
        raise NotImplementedError


class BadShuffle(_DeckPatch):
    """Shuffles with a permutation of another seed than the one it commits to, and proves
    that shuffle validly: every check on receipt passes, only the audit can name it."""

    def patch(self, deck: DeckPeer) -> None:
        real_seed = deck._seed
        shuffle = deck._shuffle

        def stacked() -> None:
            other = bytes(32)
            deck._seed = other
            outbox = len(deck._outbox)
            try:
                shuffle()
            finally:
                deck._seed = real_seed
            table, number, seat = deck.table_id, deck.round_number, deck.seat
            commitment = shuffle_commitment(table, number, seat, real_seed)
            deck._commitments[seat] = commitment
            k = deck.shuffle_order.index(seat)
            inputs = deck._decks[k - 1] if k else deck._trivial
            context = shuffle_proof_context(table, number, seat, commitment)
            perm = shuffle_permutation(table, number, seat, other, deck.size)
            masks = shuffle_masks(table, number, seat, other, deck.size)
            for i, msg in enumerate(deck._outbox[outbox:], outbox):
                if isinstance(msg, ShuffleMessage):
                    assert deck.joint_key is not None
                    proof = prove_shuffle(
                        deck.joint_key, inputs, msg.deck, perm, masks, context, other
                    )
                    deck._proofs[k] = proof
                    deck._outbox[i] = ShuffleMessage(seat, commitment, msg.deck, proof)
            self.done = True

        deck._shuffle = stacked  # type: ignore[method-assign]


class WrongReveal(_DeckPatch):
    """Reveals a seed that does not match its shuffle commitment."""

    def patch(self, deck: DeckPeer) -> None:
        reveal = deck.reveal

        def lie() -> RevealMessage:
            msg = reveal()
            self.done = True
            return RevealMessage(msg.seat, msg.secret_key, bytes(32))

        deck.reveal = lie  # type: ignore[method-assign]


class StackedDeck(_DeckPatch):
    """As the last shuffler of the first round, publishes fresh encryptions of the 32 cards
    in an order it chose (it would know every hand), with the proof of its honest shuffle."""

    def patch(self, deck: DeckPeer) -> None:
        shuffle = deck._shuffle

        def substitute() -> None:
            shuffle()
            joint = deck.joint_key
            assert joint is not None
            for i, msg in enumerate(deck._outbox):
                if isinstance(msg, ShuffleMessage):
                    masks = [group.hash_to_scalar(b"stack", group.u8(j)) for j in range(32)]
                    fresh = tuple(
                        Ciphertext(
                            group.base_mul(r), group.add(CARD_POINTS[c], group.mul(r, joint))
                        )
                        for c, r in zip(reversed(range(32)), masks, strict=True)
                    )
                    deck._outbox[i] = ShuffleMessage(msg.seat, msg.commitment, fresh, msg.proof)
                    self.done = True

        deck._shuffle = substitute  # type: ignore[method-assign]


class WrongShare(_DeckPatch):
    """Spoils its first deal share of a card of seat ``owner`` (the others check it too)."""

    def __init__(self, owner: int = 1, seat: int = LAST) -> None:
        super().__init__(seat)
        self.owner = owner

    def patch(self, deck: DeckPeer) -> None:
        next_messages = deck.next_messages

        def spoiled() -> list[Any]:
            out = next_messages()
            for i, msg in enumerate(out):
                if isinstance(msg, SharesMessage) and msg.step == 0 and not self.done:
                    index = deck._shared_by(self.seat, msg.step)
                    at = next(i for i, p in enumerate(index) if deck.owner_of(p) == self.owner)
                    shares = list(msg.shares)
                    bad = group.add(shares[at].point, group.base_mul(1))
                    shares[at] = DecryptionShare(bad, shares[at].proof)
                    out[i] = replace(msg, shares=tuple(shares))
                    self.done = True
            return out

        deck.next_messages = spoiled  # type: ignore[method-assign]


class ForgedOpen(_DeckPatch):
    """Two-handed: its share of the first face-down card a trick turns up is a valid point
    that is not its share (its key share), under the real proof."""

    def patch(self, deck: DeckPeer) -> None:
        real = deck.open

        def forged(positions: Any) -> OpenMessage:
            msg = real(positions)
            if self.done:
                return msg
            self.done = True
            bad = DecryptionShare(deck.public_key, msg.shares[0].proof)
            return OpenMessage(msg.seat, msg.positions, (bad, *msg.shares[1:]))

        deck.open = forged  # type: ignore[method-assign]


class Silence(Cheat):
    """Sends nothing from its ``at``-th envelope on (``at=None``: from its first reveal)."""

    def __init__(self, at: int | None = None, seat: int = LAST) -> None:
        super().__init__(seat)
        self.at = at

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        if self.at is None and envelope.type == "deck":
            if envelope.body["msg"].get("type") == "deck.reveal":
                self.done = True
        elif self.at is not None and self.sent >= self.at:
            self.done = True
        if self.done:
            return {}
        return super().route(table, envelope)

    def reply(self, table: Table, dst: int, frames: list[bytes]) -> list[bytes]:
        return [] if self.done else frames


class ForeignEnvelopes(AtEnvelope):
    """Relays to ``victim``, ahead of their sequence, envelopes that seat ``named`` signed at
    an earlier table of the same players (any transcript holds some)."""

    def __init__(self, victim: int = 0, named: int = 1, at: int = 2, seat: int = LAST) -> None:
        super().__init__(at, seat)
        self.victim, self.named = victim, named
        self.foreign: list[bytes] = []

    def setup(self, table: Table) -> None:
        earlier = replace(table.definition, table_id=bytes(range(100, 116)))
        sessions = table_sessions(earlier, table.ids, deal_seed=1)
        Net(sessions, random.Random(1)).run()
        self.foreign = [e.encode() for e in sessions[self.named].tracker.chain(self.named)[3:20]]

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        if self.sent == self.at:
            self.done = True
            out[self.victim][:0] = [frame(data) for data in self.foreign]
        return out


class HostTwoTables(Cheat):
    """The host (seat 0) proposes to ``victim`` a table with the same id and another target,
    under its own signature."""

    def __init__(self, victim: int = 2) -> None:
        super().__init__(seat=0)
        self.victim = victim

    def setup(self, table: Table) -> None:
        other = replace(table.definition, rules=table.definition.rules.with_(target=1001))
        table.sessions[self.victim] = TableSession(
            other, self.victim, table.ids[self.victim], proposal=other.propose(table.ids[0])
        )
        self.done = True


class HostImpostor(Cheat):
    """Someone posing as the host proposes to ``victim`` the same table with its own key at
    seat 0: the victim signs a table our host never proposed, and cannot tell."""

    def __init__(self, victim: int = 2) -> None:
        super().__init__(seat=0)
        self.victim = victim

    def setup(self, table: Table) -> None:
        impostor = Identity.from_seed(bytes(range(32)))
        seats = list(table.definition.seats)
        seats[0] = replace(seats[0], key=impostor.public_key_bytes)
        other = replace(table.definition, seats=tuple(seats))
        table.sessions[self.victim] = TableSession(
            other, self.victim, table.ids[self.victim], proposal=other.propose(impostor)
        )
        self.done = True


class EarlyReveal(Cheat):
    """Publishes its round secrets during the first bidding, hoping the others answer with
    theirs (with all four, every hand is known)."""

    def poll(self, table: Table) -> None:
        session = table.sessions[self.seat]
        deck = session.deck
        if self.done or not isinstance(deck, DeckPeer) or not session.ready:
            return
        if session.state.phase in (Phase.AUCTION, Phase.TAKE_FIRST, Phase.TAKE_SECOND):
            self.done = True
            sign_next(session, deck_body(deck.round_number, deck.reveal()))


class SignedFlood(Cheat):
    """After its first bid, signs a flood of envelopes chained after it, sent to ``targets``
    (default: everybody): one huge body (``big``), fault reports (``faults``), deck messages
    that cite an envelope that never comes (``stuck``), or a bid for a round far ahead
    (``ahead``). Then it signs nothing more."""

    def __init__(self, kind: str, targets: tuple[int, ...] | None = None, seat: int = LAST) -> None:
        super().__init__(seat)
        self.kind = kind
        self.targets = targets
        self.flood: list[Envelope] = []

    def bodies(self, envelope: Envelope) -> list[dict[str, Any]]:
        number = envelope.body["round"]
        if self.kind == "big":
            return [dict(envelope.body, pad=bytes(1_000_000))] * 3
        if self.kind == "faults":
            return [{"type": "fault", "seat": 1, "evidence": []}] * 5
        if self.kind == "stuck":
            return [{"type": "deck", "round": number, "msg": {}}] * 20  # past the cap of 16
        assert self.kind == "ahead"
        return [dict(envelope.body, round=number + 5)]

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        if self.done:
            return {}
        out = super().route(table, envelope)
        if envelope.type == "bid":
            self.done = True
            identity, last = table.ids[self.seat], envelope
            for body in self.bodies(envelope):
                seen = list(last.seen)
                seen[self.seat] = last.hash
                if self.kind == "stuck":
                    seen[(self.seat + 1) % table.seats] = bytes(range(32))  # never signed
                last = Envelope.create(identity, last.table, last.seq + 1, last.hash, seen, body)
                self.flood.append(last)
            targets = table.others(self.seat) if self.targets is None else self.targets
            for dst in targets:
                out[dst] += [frame(e.encode()) for e in self.flood]
        return out

    def reply(self, table: Table, dst: int, frames: list[bytes]) -> list[bytes]:
        return []  # it says nothing more, to anyone


class FalseReport(Cheat):
    """After its first bid or card, signs a fault report naming ``victim``, with the victim's
    own first envelopes as "evidence" (validly signed, and breaking no rule) and one of them
    with a byte changed (its signature no longer verifies). It proves nothing."""

    def __init__(self, victim: int = 0, seat: int = LAST) -> None:
        super().__init__(seat)
        self.victim = victim
        self.report: Envelope | None = None

    def route(self, table: Table, envelope: Envelope) -> dict[int, list[bytes]]:
        out = super().route(table, envelope)
        if envelope.type in ("bid", "play") and not self.done:
            self.done = True
            session = table.sessions[self.seat]
            chain = session.tracker.chain(self.victim)
            genuine = [e.encode() for e in chain[:2]]
            tampered = flip_bit(genuine[-1], len(genuine[-1]) // 2)

            def report() -> None:
                self.report = sign_next(session, fault_body(self.victim, [*genuine, tampered]))

            table.after(report)
        return out


class FalseScore(Cheat):
    """Holds the final score as ``bonus`` more points for seat ``favoured`` (itself by
    default) once the last round is audited: it signs that score (``done``), its chain
    whole, and holds another seat's ``done`` to it. Two of them with one ``favoured`` agree
    with each other."""

    def __init__(self, favoured: int | None = None, bonus: int = 100, seat: int = LAST) -> None:
        super().__init__(seat)
        self.favoured = favoured
        self.bonus = bonus

    def setup(self, table: Table) -> None:
        session = table.sessions[self.seat]
        audit = session._audit
        favoured = self.seat if self.favoured is None else self.favoured

        def lying_audit(deck: Any) -> None:
            audit(deck)
            if session.state.is_over and not self.done:
                self.done = True
                state = session.state._copy()
                scores = list(state.scores)
                scores[favoured] += self.bonus
                state.scores = tuple(scores)
                session.state = state

        session._audit = lying_audit  # type: ignore[method-assign]


# -- the table ----------------------------------------------------------------------------


@dataclass
class Table:
    """The sessions of one table (as many as its variant seats), per-connection byte
    streams, a seeded delivery order. ``cheat`` and its ``accomplices`` (each at its own
    seat) lie; every other seat is honest."""

    cheat: Cheat | None = None
    variant: str = "coinche"
    target: int = 101
    seed: int = 0
    deal_seed: int = 5
    accomplices: tuple[Cheat, ...] = ()
    overlap: bool = False
    """The sessions overlap their shuffles with the checks (``TableSession.overlap``), each
    doing its work put off right after what it sent is on the wire, as the peer's driver."""
    definition: TableDefinition = field(init=False)
    ids: list[Identity] = field(init=False)
    sessions: list[TableSession] = field(init=False)
    seats: int = field(init=False)
    """How many seats the table's rules seat: 4, 3 or 2."""
    cheats: dict[int, Cheat] = field(init=False)
    """The cheats by seat."""

    def __post_init__(self) -> None:
        self.definition, self.ids = make_table(self.variant, self.target)
        self.seats = n = self.definition.rules.seats
        self.cheats = {}
        for cheat in (self.cheat, *self.accomplices):
            if cheat is not None:
                cheat.seat %= n  # LAST: the table's last seat
                assert cheat.seat not in self.cheats, "one cheat per seat"
                self.cheats[cheat.seat] = cheat
        self.sessions = table_sessions(self.definition, self.ids, self.deal_seed)
        for session in self.sessions:
            session.overlap = self.overlap
        self.rng = random.Random(self.seed)
        self.bots = [random.Random(self.rng.random()) for _ in range(n)]
        self.streams = {(a, b): deque[bytes]() for a in range(n) for b in self.others(a)}
        self.decoders = {k: FrameDecoder() for k in self.streams}
        self.closed: set[tuple[int, int]] = set()
        self.events: list[list[Event]] = [[] for _ in range(n)]
        self.rejections: list[Rejection] = []
        self.lost: list[tuple[int, int, str]] = []
        """(receiver, seat, why) for each connection lost or dropped."""
        self._later: list[Callable[[], object]] = []
        self.delivered = 0
        for cheat in self.cheats.values():
            cheat.setup(self)

    def others(self, seat: int) -> list[int]:
        return [s for s in range(self.seats) if s != seat]

    @property
    def honest(self) -> list[int]:
        return [s for s in range(self.seats) if s not in self.cheats]

    # -- moving bytes ---------------------------------------------------------------------

    def write(self, src: int, dst: int, chunk: bytes) -> None:
        if (src, dst) not in self.closed:
            self.streams[src, dst].append(chunk)

    def close(self, src: int, dst: int) -> None:
        """End the stream ``src`` -> ``dst`` (once what is in flight is read) and the reverse
        stream at once, as a closed TCP connection does."""
        if (src, dst) in self.closed:
            return
        self.streams[src, dst].append(b"")  # end of stream marker
        self.closed.add((src, dst))
        self.closed.add((dst, src))
        self.streams[dst, src].clear()

    def reconnect(self, receiver: int, seat: int, reason: str) -> None:
        """``receiver`` drops its connection to ``seat`` (what was in flight either way is
        lost), which is dialled again at once: both ends ask the other for what they lack."""
        self.lost.append((receiver, seat, reason))
        if (receiver, seat) in self.closed:
            return  # closed for good already
        for key in ((receiver, seat), (seat, receiver)):
            self.streams[key].clear()
            self.decoders[key] = FrameDecoder()
        for a, b in ((receiver, seat), (seat, receiver)):
            request = getattr(self.sessions[a], "sync_request", None)
            if request is not None and self.sessions[a].started:
                self.write(a, b, frame(request()))

    def after(self, action: Callable[[], object]) -> None:
        """Run ``action`` once the current flush is done (a cheat's second thought)."""
        self._later.append(action)

    def flush(self, seat: int) -> None:
        session = self.sessions[seat]
        cheat = self.cheats.get(seat)
        while True:
            outbox = session.take_outbox()
            for data in outbox:
                envelope = Envelope.decode(data)
                if cheat is None:
                    for dst in self.others(seat):
                        self.write(seat, dst, frame(data))
                else:
                    for dst, chunks in cheat.route(self, envelope).items():
                        for chunk in chunks:
                            self.write(seat, dst, chunk)
                    cheat.sent += 1
            events = session.take_events()
            for event in events:
                self.events[seat].append(event)
                if not isinstance(event, DecisionNeeded) or session.finished:
                    continue
                if cheat is None or not cheat.decide(self, event.observation):
                    self._decide_honestly(seat)
            later, self._later = self._later, []
            for action in later:
                action()
            if cheat is not None and (outbox or events):
                cheat.poll(self)
            if not outbox and not events and not later:
                if not session.has_work:
                    return
                session.work()

    def _decide_honestly(self, seat: int) -> None:
        session = self.sessions[seat]
        state = session.state
        if session.actor(state.to_act) != seat or session.finished:
            return  # (the partner decides for a dummy)
        legal = state.legal_actions()
        session.act(self.bots[seat].choice(legal))

    def _lose(self, receiver: int, seat: int, reason: str) -> None:
        """``receiver`` lost its connection to ``seat``: sign it gone, as a peer does."""
        self.lost.append((receiver, seat, reason))
        session = self.sessions[receiver]
        if session.ready and not session.finished and receiver in self.honest:
            session.abandon(seat)
            self.flush(receiver)

    def deliver_one(self) -> bool:
        busy = [k for k, q in self.streams.items() if q]
        if not busy:
            return False
        src, dst = self.rng.choice(busy)
        chunk = self.streams[src, dst].popleft()
        decoder = self.decoders[src, dst]
        if chunk == b"":
            if decoder.buffered:
                self._lose(dst, src, "the connection closed inside a frame")
            else:
                self._lose(dst, src, "the connection closed")
            return True
        try:
            frames = decoder.feed(chunk)
        except FrameTooLarge as exc:
            self.rejections.append(Rejection(dst, src, exc))
            self.reconnect(dst, src, str(exc))
            return True
        for data in frames:
            if not self.receive(dst, src, data):
                break  # the connection was dropped: the rest of what it carried is lost
        return True

    def receive(self, dst: int, src: int, data: bytes) -> bool:
        """Deliver one frame; False if the receiver refused it and dropped the connection."""
        session = self.sessions[dst]
        try:
            replies: object = session.receive(data)
        except RemoteProtocolError as exc:
            self.rejections.append(Rejection(dst, src, exc))
            self.delivered += 1
            self.reconnect(dst, src, f"refused: {exc}")
            return False
        self.delivered += 1
        if isinstance(replies, list) and replies:
            cheat = self.cheats.get(dst)
            if cheat is not None:
                replies = cheat.reply(self, src, replies)
            for reply in replies:
                self.write(dst, src, frame(reply))
        self.flush(dst)
        return True

    def _sync(self) -> bool:
        """Each unfinished honest peer asks the others what it lacks (if sessions can)."""
        asked = False
        for seat in self.honest:
            session = self.sessions[seat]
            request = getattr(session, "sync_request", None)
            if request is None or session.finished:
                continue
            for dst in self.others(seat):
                if (seat, dst) not in self.closed:
                    self.write(seat, dst, frame(request()))
                    asked = True
        return asked

    def start(self) -> None:
        for seat in range(self.seats):
            self.sessions[seat].start()
            self.flush(seat)

    def run(self, limit: int = 400_000, sync_rounds: int = 3) -> None:
        """Deliver until every honest seat is finished or nothing moves any more (asking
        for what is missing a few times first, when the sessions can)."""
        if not self.sessions[0].started:
            self.start()
        steps = 0
        syncs = 0
        while not all(self.sessions[s].finished for s in self.honest):
            steps += 1
            assert steps < limit, "the game does not end"
            if self.deliver_one():
                continue
            before = self._progress()
            if syncs >= sync_rounds or not self._sync():
                return
            syncs += 1
            while self.deliver_one():
                steps += 1
            if self._progress() == before:
                return
            syncs = 0

    def _progress(self) -> tuple[int, int]:
        return (
            sum(len(s.transcript) for s in self.sessions),
            sum(len(e) for e in self.events),
        )

    # -- reading the result ---------------------------------------------------------------

    def faults(self, seat: int) -> list[PeerFault]:
        return [e for e in self.events[seat] if isinstance(e, PeerFault)]

    def audit_faults(self, seat: int) -> list[AuditFault]:
        return [
            e.report.fault
            for e in self.events[seat]
            if isinstance(e, RoundAudited) and e.report.fault is not None
        ]

    def outcome(self, seat: int) -> Outcome:
        session = self.sessions[seat]
        if session.fault is not None:
            return Outcome("fault", session.fault.seat)
        if session.disputed is not None:
            return Outcome("disputed", None)
        audits = self.audit_faults(seat)
        if audits:
            return Outcome("audit", audits[0].seat)
        if session.abandoned is not None:
            return Outcome("abandoned", session.abandoned)
        if session.dummy is not None and session.finished:
            return Outcome("left", session.dummy)  # its partner played its open hand
        if session.finished:
            return Outcome("finished", None)
        return Outcome("stalled", None)

    def outcomes(self) -> list[Outcome]:
        return [self.outcome(s) for s in self.honest]

    def rejected(self, receiver: int) -> list[int]:
        counts = [0] * self.seats
        for r in self.rejections:
            if r.receiver == receiver:
                counts[r.connection] += 1
        return counts

    def abandoned_events(self, seat: int) -> list[GameAbandoned]:
        return [e for e in self.events[seat] if isinstance(e, GameAbandoned)]

    def write_transcript(self, seat: int, directory: Path) -> Path:
        return write_transcript(directory / f"seat{seat}.transcript", self.sessions[seat])

    def verdicts(self, directory: Path) -> dict[int, Verdict]:
        return {s: verify_transcript(self.write_transcript(s, directory)) for s in self.honest}


def verdict_outcome(verdict: Verdict) -> Outcome:
    """What a verified transcript says, in the terms of :class:`Outcome`."""
    if verdict.fault is not None:
        return Outcome("fault", verdict.fault.seat)
    if verdict.disputed is not None:
        return Outcome("disputed", None)
    faulty = [r.report.fault for r in verdict.rounds if r.report.fault is not None]
    if faulty:
        return Outcome("audit", faulty[0].seat)
    if verdict.abandoned is not None:
        return Outcome("abandoned", verdict.abandoned)
    if verdict.left is not None and verdict.finished:
        return Outcome("left", verdict.left.seat)
    if verdict.finished:
        return Outcome("finished", None)
    return Outcome("stalled", None)


def signed_by(evidence: tuple[bytes, ...], identity: Identity) -> list[Envelope]:
    """The pieces of ``evidence`` that are valid envelopes signed by ``identity``."""
    out = []
    for data in evidence:
        envelope = Envelope.decode(data)
        if envelope.sender == identity.public_key_bytes:
            out.append(envelope)
    return out


# -- playing a cheat and checking the verdicts ------------------------------------------------


def play(cheat: Cheat, *accomplices: Cheat, **table: Any) -> Table:
    """A table with ``cheat`` (and its ``accomplices``) played until the honest seats end;
    every cheat happened."""
    t = Table(cheat, accomplices=accomplices, **table)
    t.run()
    for c in (cheat, *accomplices):
        assert c.done, f"the cheat of seat {c.seat} never found its moment"
    return t


def assert_same_verdict(t: Table, tmp_path: Path, expected: Outcome) -> None:
    """Every honest session ends with ``expected``, and so does its verified transcript."""
    honest = len(t.honest)
    assert t.outcomes() == [expected] * honest
    verdicts = t.verdicts(tmp_path)
    assert [verdict_outcome(v) for v in verdicts.values()] == [expected] * honest
    for v in verdicts.values():
        assert v.corrupt is None


def vote_out(t: Table, seat: int) -> None:
    """Every honest seat, waiting on ``seat`` alone, signs it gone (as its peer does once the
    silence passed the deadline and grace); then the table runs on."""
    for s in t.honest:
        assert t.sessions[s].waiting_for() == {seat}, (s, t.sessions[s].waiting_for())
    for s in t.honest:
        t.sessions[s].abandon(seat)
        t.flush(s)
    t.run()


def assert_finished_cleanly(t: Table, tmp_path: Path) -> None:
    while t.deliver_one():  # what is still in flight once the honest seats are done
        pass
    assert_same_verdict(t, tmp_path, Outcome("finished", None))
    scores = {t.sessions[s].state.scores for s in range(t.seats)}
    assert len(scores) == 1
    records = [{e.hash for e in t.sessions[s].transcript} for s in range(t.seats)]
    assert all(r == records[0] for r in records)
