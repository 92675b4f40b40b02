"""What a table session reports to its driver (:meth:`TableSession.take_events
<belote_p2p.protocol.session.TableSession.take_events>`): the game as this seat sees it."""

from __future__ import annotations

from dataclasses import dataclass

from belote_p2p.game.audit import AuditReport
from belote_p2p.game.cards import Card
from belote_p2p.game.engine import Action, RoundRecord, State
from belote_p2p.game.observation import Observation


@dataclass(frozen=True, slots=True)
class TableReady:
    """All four peers signed the table definition."""


@dataclass(frozen=True, slots=True)
class RoundDealt:
    number: int
    dealer: int
    hand: tuple[Card, ...]
    turned: Card | None
    state: State
    """The state after the deal (this peer's view): two-handed deals straight into the
    play, with the face-up cards open to both players."""


@dataclass(frozen=True, slots=True)
class ActionTaken:
    seat: int
    action: Action
    state: State
    """The state after the action (this peer's view)."""


@dataclass(frozen=True, slots=True)
class DecisionNeeded:
    """It is this seat's turn: answer with
    :meth:`~belote_p2p.protocol.session.TableSession.act`."""

    observation: Observation


@dataclass(frozen=True, slots=True)
class RoundAudited:
    """A round's secrets were revealed and the round replayed with every hand known."""

    record: RoundRecord
    """The record as scored after the audit (corrected if the audit found a fault)."""
    report: AuditReport
    state: State
    deck: tuple[Card, ...] = ()
    """The whole deck the audit replayed the round with, every position known (the
    record's own deck holds only what this peer saw during play); ``()`` where no audit
    revealed it."""


@dataclass(frozen=True, slots=True)
class GameOver:
    state: State


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The game ended because ``seat`` left it (resigned, or silent past its grace)."""

    seat: int
    state: State


@dataclass(frozen=True, slots=True)
class SeatLeft:
    """``seat`` left the game (resigned, or silent past its grace) and the game goes on: at
    four seats with its partner ``by`` still playing, the seat is a *dummy*, its hand open to
    everyone, and ``by`` decides for it until the game ends (``protocol/PROTOCOL.md`` §6.7).
    The leaver's own session ends here: its record ends as left."""

    seat: int
    by: int
    """The partner who plays the open hand."""
    round: int
    """The round in progress (or about to be dealt) when the seat left, from 0: where its
    deciding envelopes saw the game (after a round's last card, the next round)."""
    state: State
    """The state as this peer held it when the leave was processed."""


@dataclass(frozen=True, slots=True)
class HandOpened:
    """Cards of the dummy ``seat`` opened for this peer (its release, the classic completion,
    a deal with it face up): ``state`` holds them, for every seat to see."""

    seat: int
    state: State


@dataclass(frozen=True, slots=True)
class PeerFault:
    """A peer broke the protocol or the rules; its signed envelope(s) are the evidence."""

    seat: int
    reason: str
    evidence: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class TableDisputed:
    """The seats did not sign the same table, and no signature shows who lied: ``seat``
    signed a definition that this table's host did not propose (it may have met someone
    posing as our host). No game is played and nobody is blamed."""

    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A seat said something to the table (a signed ``chat`` envelope, ours included).
    It changes nothing in the game."""

    seat: int
    text: str
    round: int
    """The round being dealt or played when it was processed (0 before the first)."""


Event = (
    TableReady
    | TableDisputed
    | RoundDealt
    | ActionTaken
    | DecisionNeeded
    | RoundAudited
    | GameOver
    | GameAbandoned
    | SeatLeft
    | HandOpened
    | PeerFault
    | ChatMessage
)
