"""The seat's model on its own (:mod:`belote_p2p.app.seatview`), fed events as a peer feeds
them, on a test clock: the completed trick on show, card numbers kept for the round (and the
page's the same), the winner first in a result line, the countdown as an instant, the bid
hint from the legal bids, and what a seat is told when links go down."""

from __future__ import annotations

import random
from collections.abc import Iterator

from helpers import dealt

from belote_p2p.app.display import format_sheet, format_unfinished
from belote_p2p.app.seatview import WARN_SECONDS, SeatView
from belote_p2p.app.web.viewmodel import table_model
from belote_p2p.app.wording import card_text
from belote_p2p.game.audit import audit_round
from belote_p2p.game.engine import PASS, Bid, BidKind, Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import rule_set
from belote_p2p.net.peer import PeerStatus, SeatWait
from belote_p2p.protocol.events import (
    ActionTaken,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    RoundAudited,
    RoundDealt,
    TableReady,
)

NAMES = ("Ann", "Bob", "Cid", "Dee")
CLASSIC = rule_set("classic", target=1)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def events(state: State, seed: int, seat: int = 0) -> Iterator[tuple[Event, State]]:
    """A round's events as ``seat`` sees them, random legal actions (seeded)."""
    rng = random.Random(seed)
    yield RoundDealt(state.number, state.dealer, state.hand(seat), state.turned, state), state
    number = state.number
    while state.number == number and not state.is_over:
        if state.to_act == seat:
            yield DecisionNeeded(observe(state, seat)), state
        who, action = state.to_act, rng.choice(state.legal_actions())
        state = state.apply(action)
        yield ActionTaken(who, action, state), state
    record = state.history[-1]
    yield RoundAudited(record, audit_round(record), state), state
    if state.is_over:
        yield GameOver(state), state


def view_of(seat: int = 0) -> tuple[SeatView, Clock]:
    clock = Clock()
    view = SeatView(seat, NAMES, CLASSIC, clock=clock)
    view.apply(TableReady())
    return view, clock


def status(disconnected: set[int], *waits: SeatWait) -> PeerStatus:
    return PeerStatus(tuple(waits), frozenset(disconnected))


def wait(seat: int, deadline_in: float, *, decision: bool = True) -> SeatWait:
    return SeatWait(seat, NAMES[seat], decision, True, 0.0, deadline_in, deadline_in + 120)


def test_a_completed_trick_stays_on_show_until_the_next_card_or_the_renderers_hold() -> None:
    view, clock = view_of()
    seen = 0
    for event, state in events(dealt(CLASSIC, 4), 4):
        before = view.tricks_done
        clock.now += 0.25
        view.apply(event)
        if not isinstance(event, ActionTaken) or state.phase is not Phase.PLAY:
            continue
        if view.tricks_done > before:
            # The fourth card: the whole trick, and who won it, not an empty table.
            shown = view.trick_on_show()
            assert shown is not None and shown == state.tricks[-1]
            cards, master, completed = view.drawn_trick()
            assert len(cards) == 4 and master == shown.winner and completed == shown
            assert f"won by {view.name(shown.winner)} ({shown.points})" in view.trick_header()
            seen += 1
        elif len(view.trick) == 1 and view.tricks_done:
            # The next trick's first card: gone, unless a renderer holds it a moment.
            last = view.last_trick
            assert view.trick_on_show() is None
            assert view.trick_on_show(hold=1.5) == last
            assert view.trick_on_show(clock.now + 1.5, hold=1.5) is None
            assert view.drawn_trick(hold=1.5)[2] == last
            view.dismiss_trick()
            assert view.trick_on_show(hold=1.5) is None
            assert "won by" not in view.trick_header(hold=1.5)
    assert seen == 7  # the last trick ends the round: its screen follows


def test_a_card_keeps_its_number_for_the_round_and_the_page_shows_the_same() -> None:
    view, clock = view_of()
    numbers: dict[int, int] = {}
    checked = 0
    for event, _ in events(dealt(CLASSIC, 9), 9):
        view.apply(event)
        if not isinstance(event, DecisionNeeded):
            continue
        model = table_model(view, now=clock.now, decision=1)
        page = [(c["code"], c["number"]) for c in model["hand"]]
        assert page == [(str(c), n) for c, n in view.hand_cards()]
        if view.phase is not Phase.PLAY:
            assert all(n is None for _, n in page)  # no numbers before the play
            continue
        for c, n in view.hand_cards():
            assert n is not None and numbers.setdefault(c, n) == n
        checked += 1
    assert checked and len(numbers) == 8


def test_a_result_names_the_winner_first_and_a_running_score_us_first() -> None:
    for seed in range(40):
        view, _ = view_of()
        for event, after in events(dealt(CLASSIC, seed), seed):
            view.apply(event)
            state = after
        if state.winner == 1:  # Bob & Dee win: our side is not the winner's
            break
    else:
        raise AssertionError("no deal that the other side wins")
    high, low = max(state.scores), min(state.scores)
    assert view.ended == f"Game over: Bob & Dee win {high}-{low}."
    assert view.sheet is not None and view.sheet.endswith(f"Bob & Dee win {high}-{low}")
    assert view.score_line().startswith(f"You & Cid {state.scores[0]} · Bob & Dee")


def test_the_countdown_is_an_instant_that_renderers_tick_and_turns_red() -> None:
    view, clock = view_of()
    for event, _ in events(dealt(CLASSIC, 2), 2):
        view.apply(event)
        if isinstance(event, DecisionNeeded):
            break
    view.apply_status(status(set(), wait(0, 30.0)))
    head, left, tail = view.turn_parts()
    assert (head, left) == ("▶ Your turn", 30) and tail.startswith(": ")
    assert "(30 s left)" in view.turn_line() and not view.warn()
    clock.now += 25
    assert view.turn_parts()[1] == 5 and view.warn()
    assert WARN_SECONDS == 10


def test_the_bid_hint_comes_from_the_legal_bids() -> None:
    rules = rule_set("coinche", target=1000)
    state = dealt(rules, 1)
    state = state.apply(next(a for a in state.legal_actions() if isinstance(a, Bid)
                             and a.kind is BidKind.BID))  # fmt: skip
    state = state.apply(Bid(BidKind.COINCHE))
    seat = state.to_act
    view = SeatView(seat, NAMES, rules)
    view.observe(observe(state, seat))
    kinds = {a.kind for a in state.legal_actions() if isinstance(a, Bid)}
    assert kinds == {BidKind.SURCOINCHE, BidKind.PASS}
    assert view.bid_hint() == "surcoinche or pass"
    assert "90" not in view.turn_line()
    first = dealt(rules, 1)
    view.observe(observe(first, first.to_act))
    view.seat = first.to_act
    assert view.bid_hint() == "bid (e.g. 80 S) or pass"


def test_a_seat_is_told_whose_link_is_down_and_an_abandonment_without_it() -> None:
    view, _ = view_of()
    for event, after in events(dealt(CLASSIC, 2), 2):
        view.apply(event)
        state = after
        if isinstance(event, ActionTaken) and view.to_act == 2:
            break
    said = view.apply_status(status({2}, wait(2, 30.0)))
    assert [n.text for n in said] == ["Cid lost the connection; waiting for them to come back."]
    assert view.turn_line() == "Waiting for Cid, whose connection is down: reconnecting…"
    # Every other seat unreachable at once: it is our own link that is down.
    said = view.apply_status(status({1, 2, 3}, wait(2, 20.0)))
    assert view.link_down and said[0].text.startswith("Your connection is down: reconnecting…")
    assert view.turn_line() == "Your connection is down: reconnecting…"
    said = view.apply_status(status(set(), wait(2, 10.0)))
    assert [n.text for n in said] == ["Your connection is back: the game goes on."]
    assert view.turn_line().startswith("Waiting for Cid (10 s left)")
    view.apply(GameAbandoned(0, state))
    assert view.ended is not None and view.ended.startswith("The game ended without you")
    resigned, _ = view_of()
    resigned.resign()
    resigned.apply(GameAbandoned(0, state))
    assert resigned.ended == "You resigned: the game is abandoned by your seat."


def test_an_abandoned_round_is_shown_as_far_as_it_went() -> None:
    state = dealt(CLASSIC, 3)
    assert format_sheet(state, NAMES) == "Score sheet: no round was scored."
    rng = random.Random(3)
    while not (state.phase is Phase.PLAY and len(state.tricks) == 2 and len(state.trick) == 1):
        state = state.apply(rng.choice(state.legal_actions()))
    shown = format_unfinished(state, NAMES)
    assert shown is not None
    lines = shown.split("\n")
    assert lines[0].startswith("Round 1 (not finished), dealer ")
    assert lines[1].startswith("  bids: ") and lines[2].startswith("  contract: ")
    assert [line.split(":")[0] for line in lines[3:]] == ["  trick 1", "  trick 2", "  trick 3"]
    assert lines[-1].endswith(f"leads {card_text(state.trick[0])}")
    assert format_unfinished(dealt(CLASSIC, 3).apply(PASS), NAMES) is not None
