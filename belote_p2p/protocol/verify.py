"""``belote-p2p verify FILE`` and ``belote-p2p replay FILE``: a game record, checked alone.

Verification replays the transcript through a table session that holds no seat (an
observer): every signature and hash chain, the causal order, every deck protocol proof,
every bid and card through the engine, every shuffle and deal once the round's secrets are
revealed, and the audit of every round. It prints the final score, or the first fault and
the seat to blame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.game.engine import State

from .events import ChatMessage, PeerFault, RoundAudited, SeatLeft, TableDisputed
from .identity import fingerprint
from .names import MAX_NAME_CELLS, safe_text
from .session import TableSession
from .table import TableDefinition
from .transcript import read_transcript


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a transcript proves."""

    definition: TableDefinition
    state: State
    """The game as the transcript plays it (up to the fault, if any; for an abandoned game,
    as the abandonment cut it: PROTOCOL.md §6.6)."""
    rounds: tuple[RoundAudited, ...]
    fault: PeerFault | None
    """The first rule broken by a validly signed message, with its seat."""
    corrupt: str | None
    """A record that is not a valid envelope of this table (damaged file or forgery)."""
    finished: bool
    """The game ran to its end and every peer signed the final score."""
    truncated: bool
    abandoned: int | None = None
    """The seat that left the game (it resigned, or every other seat signed its absence)."""
    disputed: TableDisputed | None = None
    """The seats signed different tables and no signature shows who lied: no game."""
    chats: tuple[ChatMessage, ...] = ()
    """The table's chat, in the order the record processes it."""
    left: SeatLeft | None = None
    """A seat that left while the game went on, its partner playing its open hand
    (PROTOCOL.md §6.7)."""
    writer: int | None = None
    """The seat whose record this is, as its header says (nobody signs it)."""

    @property
    def left_here(self) -> bool:
        """The record is the leaver's own: it ends at the leave, and that is its end."""
        return self.left is not None and self.left.seat == self.writer and not self.finished

    @property
    def ok(self) -> bool:
        """The record is valid and complete: a finished game, a properly abandoned one, or
        the leaver's own record of a game that went on without it."""
        return (
            self.fault is None
            and self.corrupt is None
            and (self.finished or self.abandoned is not None or self.left_here)
        )

    @property
    def over(self) -> bool:
        """The record proves the game over: played out and signed by every seat, abandoned,
        stopped by a fault that the replay itself found, or never begun because the seats
        signed different tables. A ``fault`` body in the record is only a peer's claim: it
        counts only if its evidence proves the fault here."""
        return (
            self.finished
            or self.abandoned is not None
            or self.left_here
            or self.fault is not None
            or self.disputed is not None
        )

    def summary(self) -> str:
        names = [
            f"{safe_text(s.name, MAX_NAME_CELLS)} [{fingerprint(s.key)}]"
            for s in self.definition.seats
        ]
        if self.corrupt is not None:
            return f"INVALID: {self.corrupt}"
        if self.fault is not None:
            seat = self.fault.seat
            who = names[seat] if 0 <= seat < len(names) else "an unknown seat"
            return f"FAULT by seat {self.fault.seat} ({who}): {self.fault.reason}"
        if self.disputed is not None:
            return f"NO GAME: the seats did not sign the same table ({self.disputed.reason})"
        score = "-".join(str(x) for x in self.state.scores)
        if self.abandoned is not None:
            return (
                f"ABANDONED by seat {self.abandoned} ({names[self.abandoned]}) in round "
                f"{self.state.number + 1} at {score}"
            )
        left = self.left
        if left is not None and self.left_here:
            return (
                f"LEFT: seat {left.seat} ({names[left.seat]}) left in round {left.round + 1} "
                f"at {'-'.join(str(x) for x in left.at.scores)}; its partner plays its open "
                "hand, and this record ends there"
            )
        if not self.finished:
            cut = " (the file ends in a cut record)" if self.truncated else ""
            return f"INCOMPLETE: the record stops in round {self.state.number + 1} at {score}{cut}"
        won = self.state.winner
        if won is None:
            winners = ""
        elif self.definition.rules.has_teams:
            winners = f"team {won} ({names[won]} and {names[won + 2]})"
        else:
            winners = f"seat {won} ({names[won]})"
        line = f"OK: {winners} wins {score} after {len(self.rounds)} rounds"
        if left is not None:
            line += (
                f" (seat {left.seat} ({names[left.seat]}) left in round {left.round + 1}; "
                f"seat {left.by} played its open hand)"
            )
        return line


def verify_transcript(path: Path) -> Verdict:
    """Replay and check a transcript file; raise ``TranscriptError`` if it is not one."""
    transcript = read_transcript(path)
    return verify_record(
        transcript.definition, transcript.envelopes, transcript.truncated, transcript.seat
    )


def verify_record(
    definition: TableDefinition,
    envelopes: Sequence[bytes],
    truncated: bool = False,
    writer: int | None = None,
) -> Verdict:
    """Replay and check the envelopes of a game record of the table ``definition``
    (``truncated``: the file they come from ends in a cut record; ``writer``: the seat its
    header names, which says whether a record that ends at its seat's leave is whole)."""
    session = TableSession(definition, None, None)
    session.start()
    session.foresee(envelopes)  # the record's chains hold late envelopes (PROTOCOL.md §6.7)
    rounds: list[RoundAudited] = []
    chats: list[ChatMessage] = []
    corrupt = None
    for index, data in enumerate(envelopes):
        try:
            session.receive(data)
        except RemoteProtocolError as exc:
            roster = definition.roster
            seat = exc.seat if exc.seat is not None else None
            if seat is None and exc.sender in roster:
                seat = roster.index(exc.sender)
            who = f" (sent as seat {seat})" if seat is not None else ""
            corrupt = f"record {index + 1} is not a valid envelope of this table{who}: {exc}"
            break
        for event in session.take_events():
            if isinstance(event, RoundAudited):
                rounds.append(event)
            elif isinstance(event, ChatMessage):
                chats.append(event)
        if session.fault is not None:
            break
    return Verdict(
        definition,
        session.abandoned_state if session.abandoned_state is not None else session.state,
        tuple(rounds),
        session.fault,
        corrupt,
        session.completed,
        truncated,
        session.abandoned,
        session.disputed,
        tuple(chats),
        session.left,
        writer,
    )
