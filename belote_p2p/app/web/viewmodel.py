"""The page's state: the seat's model (:class:`~belote_p2p.app.seatview.SeatView`, the one
the terminal draws too) rendered as JSON, so that the terminal and the browser cannot
disagree on what a seat sees.

The model is plain JSON (dicts, lists, strings, numbers, booleans, null). An action is
named by its code: a card as it prints (``JH``, ``TS``), a bid as it prints (``take``,
``pass``, ``choose H``, ``90 S``, ``capot H``, ``generale D``, ``coinche``,
``surcoinche``); :func:`action_code` and :func:`legal_by_code` map both ways.

Only the JSON shapes are made here (the bidding buttons from the legal bids, the round's
points from the model's breakdown, cards as codes and images); every fact comes from the
model. Times are given as seconds from now (``deadline_in``, ``hold_in``): the page ticks
them itself.

The texts are in the language in use (the page's: :meth:`~.server.WebServer.state` makes the
model inside :func:`belote_p2p.i18n.using`); the codes, phases and numbers are the same in
every language, so that the page's script and its tests read one shape.

Every variant has one shape: ``seats`` has an entry per seat (4, 3 or 2); the scores and the
last round's points are a list of sides (:meth:`~belote_p2p.app.seatview.SeatView.sides`: two
teams with four seats, else one per player), ours first. Two-handed, each seat has its
``piles`` (the card on top of each, and whether a face-down card lies under it: the card
itself is never in the model until it is turned up, as the peer does not know it either).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from belote_p2p.game.cards import SUIT_LETTERS, Card
from belote_p2p.game.engine import Action, Bid, BidKind, Phase, RoundRecord, Trick
from belote_p2p.game.scoring import CAPOT_POINTS, GENERALE_POINTS
from belote_p2p.game.tables import ALL_TRUMP, NO_TRUMP, TRUMP_LETTERS
from belote_p2p.i18n import N_, _

from ..seatview import TRICK_HOLD, WARN_SECONDS, SeatView
from ..wording import (
    announcement_text,
    bid_choice_text,
    bid_text,
    card_name,
    card_text,
    coinche_text,
    contract_text,
    suit_name,
    trump_text,
)

JSON = dict[str, Any]

PHASES = {
    None: "waiting",
    Phase.DEAL: "between-rounds",
    Phase.TAKE_FIRST: "take-first",
    Phase.TAKE_SECOND: "take-second",
    Phase.AUCTION: "auction",
    Phase.PLAY: "play",
    Phase.GAME_OVER: "game-over",
}
OUTCOMES = {
    "made": N_("made"),
    "failed": N_("failed"),
    "litige": N_("litige"),
    "no-contract": N_("each player scores its points"),
    "redeal": N_("redeal"),
}
"""A round's outcome (:attr:`~belote_p2p.app.roundview.RoundBreakdown.outcome`) as the
summary's title says it (in English: :func:`outcome_text` in the reader's language)."""
VARIANT_NAMES = {
    "classic": N_("classic"),
    "coinche": N_("coinche"),
    "three-handed": N_("three-handed"),
    "two-handed": N_("two-handed"),
}
"""The variants by their names in English (:func:`variant_text` in the reader's language):
the page sends back the rule set's own name."""


def outcome_text(outcome: str) -> str:
    return _(OUTCOMES[outcome]) if outcome in OUTCOMES else outcome


def variant_text(name: str) -> str:
    """``classic``, ``classique``, ``clásica``: a variant as a person reads it."""
    return _(VARIANT_NAMES[name]) if name in VARIANT_NAMES else name


def seat_text(seat: int) -> str:
    """A seat without a name: ``seat 2``."""
    return _("seat {number}").format(number=seat)


def trump_name(mode: int) -> str:
    """A trump in words, as a button says it: ``hearts``, ``cœur``, ``sans atout``."""
    return trump_text(mode) if mode in (NO_TRUMP, ALL_TRUMP) else suit_name(mode)


def action_code(action: Action) -> str:
    """The code the page sends for ``action``: ``JH`` for a card, ``90 S`` for a bid."""
    return str(action)


def legal_by_code(legal: Sequence[Action]) -> dict[str, Action]:
    return {action_code(a): a for a in legal}


def card_model(c: Card) -> JSON:
    return {
        "code": str(c),
        "text": card_text(c),
        "label": card_name(c),
        "suit": SUIT_LETTERS[c >> 3],
    }


def bid_model(view: SeatView) -> JSON | None:
    """The bidding buttons for the seat's turn, or None when it has no bid to make: which
    bids there are, and their words (``texts``: each bid's code as the button offers it,
    ``prendre``, ``passer``, ``90 ♥``; ``trumps``: each trump's letter in words, ``cœur``;
    ``contracts``: each contract's value as said, ``générale``)."""
    bids = [a for a in view.legal if isinstance(a, Bid)]
    if not bids or not view.my_turn():
        return None
    kinds = {b.kind for b in bids}
    values = sorted({b.value for b in bids if b.kind is BidKind.BID})
    suits = sorted({b.trump for b in bids if b.kind is BidKind.BID})
    trumps = {b.trump for b in bids if b.kind in (BidKind.CHOOSE, BidKind.BID)}
    return {
        "take": BidKind.TAKE in kinds,
        "turned": card_model(view.turned) if view.turned is not None else None,
        "choose": [TRUMP_LETTERS[b.trump] for b in bids if b.kind is BidKind.CHOOSE],
        "values": [v for v in values if v < CAPOT_POINTS],
        "capot": CAPOT_POINTS in values,
        "generale": GENERALE_POINTS in values,
        "suits": [TRUMP_LETTERS[t] for t in suits],
        "coinche": BidKind.COINCHE in kinds,
        "surcoinche": BidKind.SURCOINCHE in kinds,
        "pass": BidKind.PASS in kinds,
        "codes": sorted(action_code(b) for b in bids),
        "texts": {action_code(b): bid_choice_text(b) for b in bids},
        "trumps": {TRUMP_LETTERS[t]: trump_name(t) for t in sorted(trumps)},
        "contracts": {contract_code(v): contract_text(v) for v in values},
    }


def contract_code(value: int) -> str:
    """A contract's value as its bid's code starts (``90``, ``capot``, ``generale``)."""
    return action_code(Bid(BidKind.BID, 0, value)).split()[0]


def trick_model(view: SeatView, trick: Trick | None = None) -> JSON | None:
    """The trick on the table (or a finished ``trick``): who led, the cards by seat, who is
    master (wins it, or won it)."""
    master: int | None
    if trick is not None:
        leader, cards, master = trick.leader, trick.cards, trick.winner
        points: int | None = trick.points
    elif view.phase is Phase.PLAY:
        leader, cards, master = view.leader, view.trick, view.trick_master()
        points = None
    else:
        return None
    return {
        "leader": leader,
        "master": master,
        "points": points,
        "cards": [
            {"seat": (leader + i) % view.seats, **card_model(c)} for i, c in enumerate(cards)
        ],
    }


def piles_model(view: SeatView, seat: int) -> list[JSON] | None:
    """Two-handed: ``seat``'s eight piles as both players see them, each with its number
    (1 to 8, as the seat plays it), the card on top that may be played from it (None when
    none) and whether a face-down card lies under it; None in the other variants."""
    if view.seats != 2:
        return None
    return [
        {"number": i, "card": card_model(top) if top is not None else None, "hidden": hidden}
        for i, (top, hidden) in enumerate(view.piles(seat), 1)
    ]


def round_points(view: SeatView, record: RoundRecord | None) -> JSON | None:
    """The last round's points as numbers, a column per side, ours first (None before a
    round is scored): the terminal's round screen
    (:class:`~belote_p2p.app.roundview.RoundBreakdown`, the view's) as JSON."""
    b = view.breakdown
    if record is None or record.score is None or b is None or b.number != record.number + 1:
        return None
    me = None if view.me is None else view.side_of(view.me)
    sides = [{**b.sides[t].to_json(), "ours": t == me} for t in view.sides()]
    return {
        "round": b.number,
        "taker": record.taker if record.taker >= 0 else None,
        "trump": trump_text(record.trump),
        "contract": record.contract,
        "multiplier": record.multiplier,
        "outcome": b.outcome,
        "outcome_text": outcome_text(b.outcome),
        "title": round_title(b.number, b.outcome, record.multiplier),
        "verdict": b.verdict,
        "sweep": b.sweep,
        "sides": sides,
        "pending": b.pot,
    }


def round_title(number: int, outcome: str, multiplier: int) -> str:
    """The round's summary's title: ``Round 3: made``, ``Donne 3 : dedans (×2 contrée)``."""
    coinched = coinche_text(multiplier, factor=True)
    if coinched:
        return _("Round {number}: {outcome} ({coinched})").format(
            number=number, outcome=outcome_text(outcome), coinched=coinched
        )
    return _("Round {number}: {outcome}").format(number=number, outcome=outcome_text(outcome))


HOW_TO_PLAY = N_("click a card or type its number")
"""The page's way to play a card, in the turn line."""
HOW_TO_TAP = N_("tap a card")
"""The same on a touch screen (``tail_touch``: the page chooses)."""


def turn_model(view: SeatView, now: float) -> JSON:
    """The turn line in parts, the page ticking the countdown between them
    (:meth:`~belote_p2p.app.seatview.SeatView.turn_parts`): ``deadline_in`` seconds from
    ``now``, red under ``warn_under`` on our turn."""
    head, left, tail = view.turn_parts(now, _(HOW_TO_PLAY))
    touch = view.turn_parts(now, _(HOW_TO_TAP))[2]
    exact: float | None = None
    if left is not None and view.deadline is not None:
        exact = max(0.0, view.deadline[1] - now)
    return {
        "seat": view.to_act if view.to_act >= 0 else None,
        "text": view.turn_line(now, _(HOW_TO_PLAY)),
        "head": head,
        "tail": tail,
        "tail_touch": touch,
        "seconds_left": left,
        "deadline_in": exact,
        "warn_under": WARN_SECONDS,
        "link_down": view.link_down,
    }


def shown_trick_model(view: SeatView, now: float) -> JSON | None:
    """The completed trick on show (:meth:`~belote_p2p.app.seatview.SeatView.trick_on_show`
    with the page's hold): its cards and winner, and ``hold_in``, the seconds it stays once
    the next trick has begun (None: until the next trick's first card)."""
    shown = view.trick_on_show(now, TRICK_HOLD)
    if shown is None or view.completed_at is None:
        return None
    hold_in = None if not view.trick else max(0.0, view.completed_at + TRICK_HOLD - now)
    return {
        **(trick_model(view, shown) or {}),
        "number": view.tricks_done,
        "winner_name": view.name(shown.winner),
        "hold_in": hold_in,
        "text": view.trick_header(now, TRICK_HOLD),
    }


def table_model(
    view: SeatView,
    *,
    now: float,
    decision: int | None = None,
    record: RoundRecord | None = None,
    log: Sequence[str] = (),
) -> JSON:
    """What the page draws for ``view`` at ``now`` (a ``time.monotonic()`` instant).

    ``decision``: the number of the decision the seat owes (None: none), which the page
    sends back with its answer; ``record``: the last round scored (for its summary).
    """
    me = view.seat
    watching = view.me is None
    mine = None if watching else view.side_of(me)
    master = view.trick_master() if view.phase is Phase.PLAY else None
    seats = []
    for s in range(view.seats):
        declared = view.declared[s] if s < len(view.declared) else None
        seats.append(
            {
                "seat": s,
                "name": view.names[s] if s < len(view.names) else seat_text(s),
                "shown_name": view.name(s),
                "fingerprint": view.fingerprints[s][:9],
                "side": view.sides().index(view.side_of(s)),
                "ours": view.side_of(s) == mine,
                "position": view.position(s),
                "you": s == view.me,
                "partner": not watching and view.rules.has_teams and s == (me + 2) % view.seats,
                "dealer": s == view.dealer,
                "to_act": s == view.to_act,
                "taker": s == view.taker and view.phase is Phase.PLAY,
                "master": s == master,
                "connected": s not in view.disconnected,
                "announced": [announcement_text(a) for a in declared or ()],
                "belote": [card_text(c) for who, c in view.belote if who == s],
                "cards": view.cards_held(s),
                "piles": piles_model(view, s),
                "dummy": s == view.dummy,
                # The dummy's cards are face up for every seat.
                "open_hand": (
                    [card_model(c) for c in view.open_hand()] if s == view.dummy else None
                ),
            }
        )
    my_turn = view.my_turn()
    playing = view.phase is Phase.PLAY
    legal_cards = {a for a in view.legal if isinstance(a, Card)} if my_turn and playing else set()
    hand_model = [
        {**card_model(c), "number": n, "legal": c in legal_cards, "playable": playing and my_turn}
        for c, n in view.hand_cards()
    ]
    trump = view.trump if view.trump >= 0 else None
    return {
        "kind": "table",
        "title": view.title(),
        "variant": view.rules.name,
        "coinche": view.rules.is_coinche,
        "seat_count": view.seats,
        "teams": view.rules.has_teams,
        "has_bidding": view.rules.has_bidding,
        "target": view.rules.target,
        "seat": me,
        "watching": watching,
        "ready": view.ready,
        "round": None if view.number is None else view.number + 1,
        "phase": PHASES.get(view.phase, "waiting"),
        "seats": seats,
        "dealer": view.dealer,
        "to_act": view.to_act,
        "turned": card_model(view.turned) if view.turned is not None else None,
        "bids": [
            {"seat": s, "name": view.name(s), "text": bid_text(b), "code": action_code(b)}
            for s, b in view.bids
        ],
        "contract": {
            "text": view.contract_line(),
            "trump": trump_text(trump) if trump is not None else None,
            "trump_letter": TRUMP_LETTERS[trump] if trump is not None else None,
            "taker": view.taker if view.taker >= 0 else None,
            "value": view.contract or None,
            "multiplier": view.multiplier,
        },
        "trick": trick_model(view),
        "trick_number": (
            min(view.tricks_done + 1, view.rules.tricks_per_round) if playing else None
        ),
        "tricks_per_round": view.rules.tricks_per_round,
        "last_trick": trick_model(view, view.last_trick) if view.last_trick else None,
        "last_trick_text": view.last_trick_text(),
        "hand": hand_model,
        "hand_order": [str(c) for c in view.shown_hand()],
        "your_turn": my_turn,
        "deciding_for": view.deciding_for() if my_turn else None,
        "dummy": view.dummy,
        "dummy_line": view.dummy_line,
        "decision": decision if my_turn else None,
        "bidding": bid_model(view) if decision is not None else None,
        "cards_legal": sorted(str(c) for c in legal_cards) if decision is not None else [],
        "scores": {
            "sides": [
                {"name": view.side_label(t), "score": view.scores[t], "ours": t == mine}
                for t in view.sides()
            ],
            "target": view.rules.target,
            "pending": view.pending,
            "line": view.score_line(),
        },
        "turn": turn_model(view, now),
        "shown_trick": shown_trick_model(view, now),
        "bids_line": view.bids_line(10_000),
        "news": list(view.news),
        "log": list(log),
        "summary": list(view.summary),
        "round_points": round_points(view, record),
        "sheet": view.sheet,
        "ended": view.ended,
    }
