"""The round audit: replay a round with every hand known and find the first fault.

Peers cannot see each other's hands while they play, so a revoke, a false belote or a false
announcement may only come to light when the deal's secrets are revealed. The audit replays
the round from its start with the whole deck and reports the first fault, its seat, and the
round's corrected score (RULES.md §10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from .announcements import Announcement, find_announcements, scoring_team
from .cards import Card, cards_of
from .engine import KING, QUEEN, IllegalActionError, Phase, RoundRecord, State, deal_owners
from .rules import Variant
from .scoring import RoundScore, score_round, score_round_few
from .tables import ALL_TRUMP


class FaultKind(Enum):
    """What the audit found wrong."""

    ILLEGAL_PLAY = "illegal-play"
    """A card the rules forbade (a revoke), or one the seat did not hold."""
    FALSE_BELOTE = "false-belote"
    """A belote announced without the king and queen of trump."""
    FALSE_ANNOUNCEMENT = "false-announcement"
    """An announcement the hand does not hold."""
    ILLEGAL_BID = "illegal-bid"


@dataclass(frozen=True, slots=True)
class AuditFault:
    kind: FaultKind
    seat: int
    index: int
    """Index of the faulty action among the round's actions (bids, then plays)."""
    action: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "seat": self.seat,
            "index": self.index,
            "action": self.action,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    fault: AuditFault | None
    """The first fault, or ``None`` for a clean round."""
    score: RoundScore | None
    """The round's score as the audit settles it: the replayed score of a clean finished
    round, the §10 score of a faulty one, ``None`` for a clean unfinished round or a redeal."""
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's eight cards as play started (empty before the trump is chosen); in
    two-handed, each seat's sixteen cards, face-up and face-down."""

    @property
    def clean(self) -> bool:
        return self.fault is None


def audit_round(record: RoundRecord, deck: Sequence[Card] | None = None) -> AuditReport:
    """Replay ``record`` with ``deck`` (the revealed deck; by default the record's own).

    The claims recorded with each play are checked against the hands: a belote or an
    announcement claimed but not held is a fault; one held but not claimed is scored as the
    engine would have found it (announcements and belote are automatic, RULES.md §5-6).
    """
    cards = tuple(deck if deck is not None else record.deck)
    if any(c is None for c in cards):
        raise ValueError("the audit needs the whole deck")
    state = record.start.deal(cards)
    hands: tuple[tuple[Card, ...], ...] = ()
    for index, (action, claim) in enumerate(record.actions):
        seat = state.to_act
        if state.phase is Phase.PLAY and not hands:
            hands = _hands_at_play(state)
        try:
            if isinstance(action, Card) and state.phase is Phase.PLAY:
                legal = state.legal_mask()
                if not legal >> action & 1:
                    raise IllegalActionError(action, state, "not a legal card")
                expected = state.claim_for(action)
                if claim.belote and not expected.belote:
                    fault = AuditFault(
                        FaultKind.FALSE_BELOTE, seat, index, str(action),
                        "belote announced without the king and queen of trump",
                    )  # fmt: skip
                    return _faulty(record, state, fault, hands)
                extra = [a for a in claim.announcements if a not in expected.announcements]
                if extra:
                    fault = AuditFault(
                        FaultKind.FALSE_ANNOUNCEMENT, seat, index, str(action),
                        f"announced {', '.join(str(a) for a in extra)} without holding it",
                    )  # fmt: skip
                    return _faulty(record, state, fault, hands)
                state = state.apply(action)
            else:
                state = state.apply(action)
        except IllegalActionError as exc:
            kind = FaultKind.ILLEGAL_PLAY if isinstance(action, Card) else FaultKind.ILLEGAL_BID
            fault = AuditFault(kind, seat, index, str(action), exc.reason)
            return _faulty(record, state, fault, hands)
    finished = state.phase in (Phase.DEAL, Phase.GAME_OVER)
    score = state.history[-1].score if finished else None
    if not hands and state.phase is Phase.PLAY and state.seats == 2:
        hands = _hands_at_play(state)
    return AuditReport(None, score, hands)


def _hands_at_play(state: State) -> tuple[tuple[Card, ...], ...]:
    """Every seat's cards as play starts (two-handed: all its sixteen, from the deck)."""
    if state.rules.variant is Variant.TWO_HANDED:
        owners = deal_owners(state.rules, state.dealer)
        return tuple(
            cards_of(
                sum(
                    1 << c
                    for c, o in zip(state.deck, owners, strict=True)
                    if o == seat and c is not None
                )
            )
            for seat in range(2)
        )
    return tuple(state.hand(s) for s in range(state.seats))


def _belote_holders(masks: list[int], trump: int) -> list[int]:
    """20 for each hand that holds the king and queen of trump, 0 for the others."""
    out = []
    for m in masks:
        held = 0
        for suit in range(4):
            if trump in (suit, ALL_TRUMP):
                pair = 1 << (suit * 8 + KING) | 1 << (suit * 8 + QUEEN)
                if m & pair == pair:
                    held += 20
        out.append(held)
    return out


def _faulty(
    record: RoundRecord, state: State, fault: AuditFault, hands: tuple[tuple[Card, ...], ...]
) -> AuditReport:
    """The §10 score: the offending team loses the round, whatever the cards said."""
    if state.trump < 0:
        return AuditReport(fault, None, hands)
    masks = [sum(1 << c for c in h) for h in hands]
    declared = tuple(
        find_announcements(m, state.trump) if state.rules.announcements else () for m in masks
    )
    n = state.seats
    if n != 4:
        return AuditReport(fault, _faulty_few(record, state, fault, masks, declared), hands)
    team = scoring_team(declared, (record.dealer + 1) % 4)
    ann = [0, 0]
    if team is not None:
        ann[team] = sum(a.points for s in (team, team + 2) for a in declared[s])
    belote = [0, 0]
    for seat, held in enumerate(_belote_holders(masks, state.trump)):
        belote[seat % 2] += held
    tricks = record.tricks
    points = [0, 0]
    for t in tricks:
        points[t.winner % 2] += t.points
    score = score_round(
        coinche=state.rules.is_coinche,
        taker=state.taker,
        contract=state.contract,
        multiplier=state.multiplier,
        trick_points=(points[0], points[1]),
        trick_winners=tuple(t.winner for t in tricks),
        announcements=(ann[0], ann[1]),
        belote=(belote[0], belote[1]),
        pending=record.start.pending,
        offender=fault.seat % 2,
    )
    return AuditReport(fault, score, hands)


def _faulty_few(
    record: RoundRecord,
    state: State,
    fault: AuditFault,
    masks: list[int],
    declared: tuple[tuple[Announcement, ...], ...],
) -> RoundScore:
    """The §10 score with two or three seats: the offending seat loses the round."""
    n = state.seats
    points = [0] * n
    for t in record.tricks:
        points[t.winner] += t.points
    ann = [0] * n
    holder = scoring_team(declared, (record.dealer + 1) % n, n)
    if holder is not None:
        ann[holder] = sum(a.points for a in declared[holder])
    if n == 2:
        # Two-handed: a belote is made by playing both cards; only real plays count.
        belote = [0, 0]
        for seat, _ in record.belote:
            belote[seat] += 20
    else:
        belote = _belote_holders(masks, state.trump)
    return score_round_few(
        taker=state.taker,
        trick_points=tuple(points),
        trick_winners=tuple(t.winner for t in record.tricks),
        announcements=tuple(ann),
        belote=tuple(belote),
        offender=fault.seat,
    )


def corrected_record(record: RoundRecord, report: AuditReport) -> RoundRecord:
    """``record`` with the audit's score in place of the one computed from the claims."""
    if report.score is None or report.score == record.score:
        return record
    before = record.start.scores
    after = tuple(a + b for a, b in zip(before, report.score.score, strict=True))
    return record._replace(score=report.score, scores_after=after)
