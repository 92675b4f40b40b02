"""The terminal table, piece by piece: frames at key moments, the round screen, what a person
may type, card numbers that hold for the round, and the terminal UI's input, clock and
commands (the trio clock jumps: no test waits for real). Whole games through a
pseudo-terminal are in ``test_terminal_play.py``."""

from __future__ import annotations

import io
import random
import re
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import trio
import trio.testing
from helpers import dealt, random_deck
from rich.console import Console

from belote_p2p.app.chat import ChatLimiter, chat_line
from belote_p2p.app.rematch import QUESTION, wants_again
from belote_p2p.app.seatview import TRICK_HOLD
from belote_p2p.app.tui import (
    HELP_LINES,
    WIDTH,
    Command,
    CommandKind,
    InputError,
    Resign,
    TableView,
    TerminalUI,
    TuiPlayer,
    bid_options,
    card_numbers,
    display_hand,
    help_text,
    legal_text,
    parse_input,
    to_plain,
)
from belote_p2p.app.wording import card_text
from belote_p2p.game.audit import audit_round
from belote_p2p.game.cards import CARDS, Card, card
from belote_p2p.game.engine import (
    COINCHE,
    PASS,
    SURCOINCHE,
    TAKE,
    Action,
    Bid,
    BidKind,
    Phase,
    State,
)
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import RuleSet, rule_set
from belote_p2p.game.scoring import Outcome, RoundScore
from belote_p2p.i18n import LANGUAGES, gettext, using
from belote_p2p.net.peer import PeerControl
from belote_p2p.players.autoplay import Autoplay
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
    ChatMessage,
    DecisionNeeded,
    Event,
    GameAbandoned,
    GameOver,
    RoundAudited,
    RoundDealt,
    TableReady,
)

NAMES = ("Ann", "Bob", "Cid", "Dee")
FINGERPRINTS = tuple(f"{i}{i}{i}{i}-abcd-ef01-2345" for i in range(4))
CLASSIC = rule_set("classic", target=301)
COINCHE_RULES = rule_set("coinche", target=301)


def new_view(rules: RuleSet = CLASSIC, seat: int = 0) -> TableView:
    return TableView(seat, NAMES, rules, FINGERPRINTS)


def frame(view: TableView) -> str:
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(view.render(80, now=0.0))
    return console.export_text()


def check_fits(text: str) -> None:
    lines = text.rstrip("\n").split("\n")
    assert len(lines) == 19, text
    assert all(len(line) <= 80 for line in lines), text


def round_events(
    state: State,
    seed: int,
    seat: int = 0,
    choose: Callable[[State], Action] | None = None,
) -> Iterator[tuple[Event, State]]:
    """The events seat ``seat`` sees while a dealt round is played out (full information:
    the view must keep to what ``observe`` lets the seat know)."""
    rng = random.Random(seed)
    yield RoundDealt(state.number, state.dealer, state.hand(seat), state.turned, state), state
    number = state.number
    while state.number == number:
        if state.to_act == seat:
            yield DecisionNeeded(observe(state, seat)), state
        who = state.to_act
        action = choose(state) if choose else rng.choice(state.legal_actions())
        state = state.apply(action)
        yield ActionTaken(who, action, state), state
    record = state.history[-1]
    yield RoundAudited(record, audit_round(record), state), state


def first(
    rules: RuleSet,
    found: Callable[[Event, State], bool],
    seat: int = 0,
    choose: Callable[[State], Action] | None = None,
) -> tuple[TableView, Event, State]:
    """The view of ``seat`` at the first event (over seeded deals) where ``found`` holds."""
    for seed in range(200):
        view = new_view(rules, seat)
        view.apply(TableReady())
        for event, state in round_events(dealt(rules, seed), seed, seat, choose):
            view.apply(event)
            if found(event, state):
                return view, event, state
    raise AssertionError("no deal has that moment")


def decision(
    rules: RuleSet,
    found: Callable[[Observation], bool],
    choose: Callable[[State], Action] | None = None,
) -> Observation:
    _, event, _ = first(
        rules, lambda e, s: isinstance(e, DecisionNeeded) and found(e.observation), 0, choose
    )
    assert isinstance(event, DecisionNeeded)
    return event.observation


# -- frames -------------------------------------------------------------------------------


def test_frame_after_the_deal_shows_the_turned_card_and_the_numbered_hand() -> None:
    view = new_view()
    view.apply(TableReady())
    state = dealt(CLASSIC, 1)
    view.apply(RoundDealt(state.number, state.dealer, state.hand(0), state.turned, state))
    text = frame(view)
    check_fits(text)
    assert "Belote classic to 301 · round 1 · dealer You" in text
    assert state.turned is not None
    assert f"Turned card: {card_text(state.turned)} (first turn)" in text
    assert "You & Cid 0 · Bob & Dee 0 · to 301" in text
    hand = display_hand(state.hand(0), -1)
    shown = " ".join(card_text(c) for c in hand)  # no numbers before the play
    assert shown.replace(" ", "") in text.replace(" ", "").replace("│", "")
    assert "Waiting for Bob" in text
    assert "Bob 1111-abcd" in text and "Dee 3333-abcd" in text


def test_hand_is_grouped_by_suit_with_symbols_and_red_hearts_and_diamonds() -> None:
    hand = tuple(card(c) for c in ("AH", "7S", "TD", "JC", "9H"))
    assert [str(c) for c in display_hand(hand, -1)] == ["7S", "9H", "AH", "JC", "TD"]
    # Under trump hearts the nine outranks the ace.
    assert [str(c) for c in display_hand(hand, 1)] == ["7S", "AH", "9H", "JC", "TD"]
    view = new_view()
    state = dealt(CLASSIC, 1)
    view.apply(RoundDealt(0, state.dealer, state.hand(0), state.turned, state))
    console = Console(record=True, width=80, color_system="truecolor", file=io.StringIO())
    console.print(view.render())
    styled = console.export_text(styles=True)
    red = [c for c in state.hand(0) if c >> 3 in (1, 2)]  # hearts, diamonds
    black = [c for c in state.hand(0) if c >> 3 in (0, 3)]
    assert red and black
    for c in red:
        shown = card_text(c)
        assert f"\x1b[1;31m{shown}" in styled or f"\x1b[31;1m{shown}" in styled
    for c in black:
        assert f"31m{card_text(c)}" not in styled and card_text(c) in styled


def test_frame_during_the_bidding_lists_the_bids_and_what_you_may_say() -> None:
    view, event, _ = first(
        CLASSIC,
        lambda e, s: isinstance(e, DecisionNeeded) and e.observation.phase is Phase.TAKE_FIRST
        and len(e.observation.bids) == 3,
    )  # fmt: skip
    assert isinstance(event, DecisionNeeded)
    o = event.observation
    text = frame(view)
    check_fits(text)
    said = " · ".join(f"{NAMES[s]} pass" for s, _ in o.bids)
    assert f"Bids: {said}" in text
    assert o.turned is not None
    assert f"You may: pass, take (the {card_text(o.turned)})" in text
    assert "▶ Your turn: take or pass" in text
    plain = view.plain_lines(now=0.0)
    assert f"Turned card: {o.turned} (first turn)." in plain
    assert "Your turn: take or pass." in plain


def test_coinche_frame_shows_the_best_bid_and_the_coinche() -> None:
    def coinched(e: Event, s: State) -> bool:
        return isinstance(e, ActionTaken) and e.action == COINCHE

    view, _, state = first(COINCHE_RULES, coinched)
    text = frame(view)
    check_fits(text)
    assert f"Best bid: {view.name(state.taker)} " in text
    assert "coinche" in text.split("Bids:")[1].split("\n")[0]


def test_mid_trick_frame_marks_the_leader_and_the_master() -> None:
    view, event, _ = first(
        CLASSIC,
        lambda e, s: isinstance(e, DecisionNeeded) and e.observation.phase is Phase.PLAY
        and len(e.observation.trick) == 2 and len(e.observation.tricks) >= 1,
    )  # fmt: skip
    assert isinstance(event, DecisionNeeded)
    o = event.observation
    master = o.trick_winner_so_far()
    assert master is not None and view.trick_master() == master
    text = frame(view)
    check_fits(text)
    trick_no = len(o.tricks) + 1
    assert f"Trick {trick_no} of 8 · {NAMES[o.leader]} led · master {NAMES[master]} ★" in text
    best = o.trick[(master - o.leader) % 4]
    assert f"{card_text(best)} ★" in text
    numbers = card_numbers(o)
    legal = "  ".join(
        f"{numbers[c]} {card_text(c)}" for c in display_hand(o.hand, o.trump) if c in o.legal
    )
    assert f"Legal: {legal}" in text
    assert "Last trick: " in text and "→" in text
    plain = view.plain_lines(now=0.0)
    assert f"Master: {NAMES[master]} with {best}." in plain
    assert any(line.startswith("On the table: ") for line in plain)
    assert not any("★" in line or "♥" in line for line in plain)


def test_the_countdown_shows_seconds_left() -> None:
    view, _, _ = first(CLASSIC, lambda e, s: isinstance(e, DecisionNeeded))
    view.set_deadline(0, 100.0)
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(view.render(80, now=42.0))
    assert "Your turn (58 s left)" in console.export_text()


def test_announcement_belote_and_rebelote_are_news() -> None:
    notices: list[str] = []
    for seed in range(300):
        view = new_view()
        for event, _ in round_events(dealt(CLASSIC, seed), seed):
            notices += [n.text for n in view.apply(event)]
        if any("rebelote!" in n for n in notices) and any(" announce" in n for n in notices):
            break
        notices.clear()
    else:
        raise AssertionError("no deal with a belote and an announcement")
    belote = next(i for i, n in enumerate(notices) if n.endswith(": belote!"))
    assert notices[belote + 1 :].count(notices[belote].replace("belote!", "rebelote!")) == 1
    assert any(re.search(r"announces? (tierce|quarte|quinte|carré) ", n) for n in notices)


def summary_view(score: RoundScore) -> str:
    _, event, state = first(CLASSIC, lambda e, s: isinstance(e, RoundAudited))
    assert isinstance(event, RoundAudited)
    view = new_view()
    record = event.record._replace(score=score, taker=1, trump=1, contract=0)
    view.apply(RoundAudited(record, event.report, state))
    return frame(view)


def test_a_litige_summary_names_the_pot() -> None:
    score = RoundScore((81, 81), (0, 0), (0, 0), (81, 81), Outcome.LITIGE, (81, 0), 81)
    text = summary_view(score)
    check_fits(text)
    assert "Round 1: Bob takes ♥ - litige." in text
    assert "Litige: the points of Bob & Dee wait in the pot (81)." in text
    assert "Round score You & Cid +81, Bob & Dee +0" in text


def test_a_capot_summary_says_who_made_it() -> None:
    score = RoundScore((250, 0), (0, 0), (0, 20), (250, 20), Outcome.FAILED, (250, 20), 0, 0)
    text = summary_view(score)
    check_fits(text)
    assert "Round 1: Bob takes ♥ - failed, capot by You & Cid." in text
    assert "Card points You & Cid 250, Bob & Dee 0; belote You & Cid 0, Bob & Dee 20." in text


def game_played(rules: RuleSet, seed: int = 5) -> tuple[TableView, State]:
    """Seat 0's view of a whole game played with random legal actions, and its last state
    (over, not yet told to the view)."""
    state = dealt(rules, seed)
    view = new_view(rules)
    while state.phase is not Phase.GAME_OVER:
        events = list(round_events(state, seed))
        for event, _ in events:
            view.apply(event)
        state = events[-1][1]
        if state.phase is Phase.DEAL:
            seed += 1
            state = state.deal(random_deck(random.Random(seed)))
    return view, state


def test_game_over_and_abandon_end_the_frame_with_the_sheet() -> None:
    rules = rule_set("classic", target=101)
    view, state = game_played(rules)
    notices = view.apply(GameOver(state))
    assert notices[0].text.startswith("Game over: ")
    assert view.sheet is not None and "Score sheet" in view.sheet
    assert view.ended is not None and view.ended in frame(view)
    view = new_view(rules)
    view.apply(GameAbandoned(2, state))
    assert "The game is abandoned: Cid left it." in frame(view)


def test_the_view_keeps_only_what_the_seat_may_know() -> None:
    view, _, state = first(
        CLASSIC, lambda e, s: isinstance(e, ActionTaken) and s.phase is Phase.PLAY, seat=1
    )
    assert view.hand == observe(state, 1).hand
    assert set(view.hand).isdisjoint(state.hand(0))


# -- input --------------------------------------------------------------------------------


def playing(found: Callable[[Observation], bool]) -> Observation:
    return decision(CLASSIC, lambda o: o.phase is Phase.PLAY and found(o))


def test_a_card_in_every_written_form() -> None:
    o = playing(lambda o: any(isinstance(c, Card) and c & 7 == 3 for c in o.legal))
    ten = next(c for c in o.legal if isinstance(c, Card) and c & 7 == 3)
    suit = "SHDC"[ten >> 3]
    for text in (f"T{suit}", f"t{suit.lower()}", f"10{suit.lower()}", "T" + "♠♥♦♣"[ten >> 3]):
        assert parse_input(text, o) == ten, text
    number = card_numbers(o)[ten]
    assert parse_input(str(number), o) == ten
    assert parse_input(f"  {number} ", o) == ten


def test_an_illegal_card_explains_why_and_what_is_legal() -> None:
    o = playing(lambda o: len(o.legal) < len(o.hand) and bool(o.trick))
    illegal = next(c for c in display_hand(o.hand, o.trump) if c not in o.legal)
    with pytest.raises(InputError) as info:
        parse_input(str(illegal).lower(), o)
    message = str(info.value)
    assert f"{card_text(illegal)} cannot be played now." in message
    assert re.search(r"You must (follow|play a higher|.*trump)|You have no", message), message
    assert "Legal now: " in message
    numbers = card_numbers(o)
    for c in o.hand:
        if c in o.legal:
            assert f"{numbers[c]} {card_text(c)}" in message
    number = numbers[illegal]
    with pytest.raises(InputError, match="cannot be played now"):
        parse_input(str(number), o)


def test_wrong_inputs_while_playing() -> None:
    o = playing(lambda o: True)
    not_held = next(c for c in CARDS if c not in o.hand)
    cases = {
        "9": "There is no card 9",
        "0": "There is no card 0",
        str(not_held): f"You do not hold {card_text(not_held)}",
        "zz": "'zz' is not a card, a bid or a command",
        "pass": "The bidding is over: play a card.",
        "": "Type a card, a bid or help.",
    }
    for text, reason in cases.items():
        with pytest.raises(InputError) as info:
            parse_input(text, o)
        assert reason in str(info.value), (text, str(info.value))
        assert "Legal now:" in str(info.value)


def test_classic_bids() -> None:
    first_turn = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_FIRST)
    assert parse_input("take", first_turn) == TAKE
    assert parse_input("PASS", first_turn) == PASS
    for text, reason in {
        "H": "In the first turn you take the turned card or pass",
        "90 H": "is a coinche bid; this table plays classic",
        "coinche": "is a coinche bid",
        "JH": "This is the bidding",
        "3": "Numbers choose a card, and this is the bidding.",
    }.items():
        with pytest.raises(InputError, match=re.escape(reason)) as info:
            parse_input(text, first_turn)
        assert f"Legal now: pass, take (the {card_text(first_turn.turned)})." in str(info.value)
    second = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_SECOND, lambda s: PASS)
    assert second.turned is not None
    turned_suit = second.turned >> 3
    other = "SHDC"[(turned_suit + 1) % 4]
    assert parse_input(other, second) == Bid(BidKind.CHOOSE, (turned_suit + 1) % 4)
    assert parse_input(f"choose {other.lower()}", second) == Bid(
        BidKind.CHOOSE, (turned_suit + 1) % 4
    )
    with pytest.raises(InputError, match="was the turned suit: name another"):
        parse_input("SHDC"[turned_suit], second)
    with pytest.raises(InputError, match="Everybody refused the turned card"):
        parse_input("take", second)


def bidding(*bids: str) -> Callable[[State], Action]:
    """Seats bid these in turn, then pass."""

    def choose(state: State) -> Action:
        n = len(state.bids)
        return Bid.parse(bids[n]) if n < len(bids) else PASS

    return choose


def test_coinche_bids() -> None:
    opening = decision(COINCHE_RULES, lambda o: o.contract == 0, bidding())
    assert parse_input("90 H", opening) == Bid(BidKind.BID, 1, 90)
    assert parse_input("capot S", opening) == Bid(BidKind.BID, 0, 250)
    assert parse_input("generale D", opening) == Bid(BidKind.BID, 2, 500)
    assert parse_input("générale c", opening) == Bid(BidKind.BID, 3, 500)
    for text, reason in {
        "90": "A bid needs a suit too, e.g. '90 H'",
        "H": "This is a coinche auction: bid a value with a suit",
        "take": "This is a coinche auction",
        "90 NT": "This table does not play no trump bids",
        "coinche": "Only an opponent of the last bidder may coinche",
        "surcoinche": "Only the coinched bidder's team may surcoinche",
    }.items():
        with pytest.raises(InputError, match=re.escape(reason)) as info:
            parse_input(text, opening)
        assert (
            "Legal now: pass, a bid 80-160 by tens, capot, générale with a suit S/H/D/C "
            "(e.g. 80 S)." in str(info.value)
        )
    raised = decision(COINCHE_RULES, lambda o: o.contract == 100, bidding("pass", "pass", "100 H"))
    assert parse_input("coinche", raised) == COINCHE
    with pytest.raises(InputError, match=f"A bid must beat {raised.contract}"):
        parse_input(f"{raised.contract} S", raised)
    doubled = decision(COINCHE_RULES, lambda o: True, bidding("pass", "100 S", "coinche"))
    assert parse_input("surcoinche", doubled) == SURCOINCHE
    with pytest.raises(InputError, match="After a coinche nobody may bid higher"):
        parse_input("capot H", doubled)


def test_commands_and_not_your_turn() -> None:
    o = playing(lambda o: True)
    assert parse_input("help", o) == Command(CommandKind.HELP)
    assert parse_input("?", o) == Command(CommandKind.HELP)
    assert parse_input("LAST", o) == Command(CommandKind.LAST)
    assert parse_input("quit", o) == Command(CommandKind.QUIT)
    assert parse_input("tricks", o) == Command(CommandKind.TRICKS)
    assert parse_input("say well played!", o) == Command(CommandKind.CHAT, "well played!")
    assert parse_input("GG", o) == Command(CommandKind.CHAT, "gg")
    assert parse_input("bravo", o) == Command(CommandKind.CHAT, "Bravo!")
    assert parse_input("oops", o) == Command(CommandKind.CHAT, "Oops!")
    waiting = o._replace(legal=())
    with pytest.raises(InputError, match="It is not your turn"):
        parse_input("JH", waiting)
    assert parse_input("last", waiting) == Command(CommandKind.LAST)


def test_card_numbers_hold_for_the_whole_round() -> None:
    for seed in range(40):
        first_numbers: dict[Card, int] | None = None
        for event, _ in round_events(dealt(CLASSIC, seed), seed):
            if isinstance(event, DecisionNeeded) and event.observation.phase is Phase.PLAY:
                o = event.observation
                numbers = card_numbers(o)
                assert set(numbers) == set(o.hand)
                if first_numbers is None:
                    first_numbers = numbers
                    assert sorted(numbers.values()) == list(range(1, 9))
                for c, n in numbers.items():
                    assert first_numbers[c] == n  # the same card, the same number
                    if c in o.legal:
                        assert parse_input(str(n), o) == c
        if first_numbers is not None:
            return
    raise AssertionError("no deal was played by seat 0")


def test_bid_lines_fit_the_frame_and_show_pass_first() -> None:
    seen = 0
    for rules in (CLASSIC, COINCHE_RULES):
        for seed in range(30):
            view = new_view(rules)
            view.apply(TableReady())
            for event, _ in round_events(dealt(rules, seed), seed):
                view.apply(event)
                if isinstance(event, DecisionNeeded) and event.observation.phase is not Phase.PLAY:
                    text = frame(view)
                    check_fits(text)
                    line = next(x for x in text.split("\n") if "You may: " in x)
                    assert "…" not in line and "You may: pass" in line, line
                    assert len(bid_options(event.observation, short=True)) + 9 <= WIDTH - 4
                    seen += 1
    assert seen >= 40


def test_wrong_bid_values_and_the_second_turn_suits() -> None:
    opening = decision(COINCHE_RULES, lambda o: o.contract == 0, bidding())
    with pytest.raises(InputError, match=re.escape("Bids go by tens: 80, 90... up to 160")):
        parse_input("95 H", opening)
    view, event, _ = first(
        CLASSIC,
        lambda e, s: isinstance(e, DecisionNeeded) and e.observation.phase is Phase.TAKE_SECOND,
        choose=lambda s: PASS,
    )
    assert isinstance(event, DecisionNeeded) and event.observation.turned is not None
    turned = "SHDC"[event.observation.turned >> 3]
    others = " ".join(x for x in "SHDC" if x != turned)
    assert f"name a suit ({others}) or pass" in view.turn_line(0.0)


def test_never_waiting_for_you_and_a_redeal_said_once() -> None:
    ui, out = plain_ui()
    for seed in range(5):
        for event, _ in round_events(dealt(CLASSIC, seed), seed, choose=lambda s: PASS):
            if isinstance(event, ActionTaken) and event.state.to_act == 0:
                assert "Waiting for You" not in frame(ui.view)
            ui.on_event(event)
    text = out.getvalue()
    assert "Waiting for You" not in text
    assert text.count("everybody passed") == 5
    assert "dealt again" not in text


def test_chat_lines_are_news_and_cannot_drive_the_terminal() -> None:
    view = new_view()
    view.apply(TableReady())
    notices = view.apply(ChatMessage(1, "gg \x1b[2J\x07well\tplayed", 0))
    assert notices[0].text == "Bob: gg \\x1b[2J\\x07well played" and notices[0].notable
    assert "· Bob: gg \\x1b[2J\\x07well played" in frame(view)


def round_audited(seed: int = 3, rules: RuleSet = CLASSIC) -> tuple[TableView, RoundAudited]:
    view, event, _ = first(
        rules,
        lambda e, s: (
            isinstance(e, RoundAudited)
            and e.record.score is not None
            and bool(e.record.declared[0] or e.record.belote)
        ),
    )
    assert isinstance(event, RoundAudited)
    return view, event


def test_the_round_screen_takes_the_round_apart() -> None:
    view, event = round_audited()
    b = view.breakdown
    assert b is not None and b.number == event.record.number + 1
    record, sc = event.record, event.record.score
    assert sc is not None
    assert [t.card_points for t in b.sides] == list(sc.card_points)
    assert [t.score for t in b.sides] == list(sc.score)
    assert [t.game for t in b.sides] == list(record.scores_after)
    assert sum(t.tricks for t in b.sides) == 8 and sum(t.dix_de_der for t in b.sides) == 10
    assert b.sides[0].name == "You & Cid" and b.sides[1].name == "Bob & Dee"
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(view.render_round(80, "Enter: the table"))
    text = console.export_text()
    check_fits(text)
    for label in ("Tricks", "Card points", "with dix de der", "Announcements", "Belote",
                  "Total", "Round score", "Game (to 301)", "Last trick: "):  # fmt: skip
        assert label in text, label
    assert b.verdict in text and "Enter: the table" in text
    assert b.to_json()["sides"][0]["card_points"] == sc.card_points[0]
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(view.render_tricks(80, ""))
    tricks = console.export_text()
    check_fits(tricks)
    assert len(re.findall(r"^│ [1-8]\. ", tricks, re.MULTILINE)) == 8


# -- the terminal UI ----------------------------------------------------------------------


def plain_ui(**kwargs: object) -> tuple[TerminalUI, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None, force_terminal=False)
    return TerminalUI(new_view(), console=console, plain=True, **kwargs), out  # type: ignore[arg-type]


def live_ui(**kwargs: object) -> tuple[TerminalUI, io.StringIO]:
    """A live UI writing to a string: feed it to a :class:`terminal.Screen` to see it."""
    out = io.StringIO()
    console = Console(file=out, width=80, height=24, color_system=None, force_terminal=True)
    kwargs.setdefault("clock", trio.current_time)
    return TerminalUI(new_view(), console=console, **kwargs), out  # type: ignore[arg-type]


def screen_of(out: io.StringIO) -> str:
    from terminal import Screen

    screen = Screen()
    screen.feed(out.getvalue())
    return screen.text()


class Keys:
    """Lines typed into a UI's :meth:`~TerminalUI.run`, one at a time."""

    def __init__(self) -> None:
        self.send, self.receive = trio.open_memory_channel[str](100)

    async def lines(self) -> AsyncIterator[str]:
        async with self.receive:
            async for line in self.receive:
                yield line

    async def type(self, line: str) -> None:
        await self.send.send(line)
        await trio.testing.wait_all_tasks_blocked()


class Control(PeerControl):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []
        self.resigned = 0

    def chat(self, text: str) -> None:
        self.said.append(text)

    def resign(self) -> None:
        self.resigned += 1


async def test_a_decision_with_wrong_inputs_help_last_and_tricks(
    autojump_clock: trio.testing.MockClock,
) -> None:
    o = playing(lambda o: len(o.tricks) >= 2)
    ui, out = live_ui()
    keys = Keys()
    answers: list[Action | Resign] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())

        async def ask() -> None:
            answers.append(await ui.decide(o, trio.current_time() + 60))

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        assert ui.prompt() == "Your card (60 s left)> "
        await keys.type("zz")
        assert "'zz' is not a card" in screen_of(out)
        await keys.type("help")
        assert "Play a card: its number (kept all round)" in screen_of(out)
        await keys.type("")
        await keys.type("last")
        assert "Last trick: " in screen_of(out)
        await keys.type("tricks")
        shown = screen_of(out)
        assert "Tricks of this round" in shown
        assert len(re.findall(r"^│ [1-8]\. ", shown, re.MULTILINE)) == len(o.tricks)
        await keys.type("")
        await keys.type(str(o.legal[0]))
        nursery.cancel_scope.cancel()
    assert answers == [o.legal[0]]
    assert "Waiting for You" not in screen_of(out)


async def test_a_hint_takes_the_place_of_its_wait_under_the_frame(
    autojump_clock: trio.testing.MockClock,
) -> None:
    o = playing(lambda o: True)
    thinking = trio.Event()

    async def hints(observation: Observation) -> str:
        await thinking.wait()
        return "Hint: play the ace."

    ui, out = live_ui(hints=hints)
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        nursery.start_soon(ui.decide, o, trio.current_time() + 60)
        await trio.testing.wait_all_tasks_blocked()
        await keys.type("hint")
        assert "Asking the expert..." in screen_of(out)
        thinking.set()
        await trio.testing.wait_all_tasks_blocked()
        shown = screen_of(out)
        assert "Hint: play the ace." in shown and "Asking the expert..." not in shown
        nursery.cancel_scope.cancel()


async def test_the_countdown_ticks_warns_and_the_stand_in_plays(
    autojump_clock: trio.testing.MockClock,
) -> None:
    o = playing(lambda o: True)
    ui, out = live_ui(standin="rules")

    class Standin:
        async def decide(self, observation: Observation) -> Action:
            return observation.legal[-1]

        def new_game(self, rules: RuleSet, seat: int) -> None: ...
        def new_round(self, observation: Observation) -> None: ...

    player = Autoplay(TuiPlayer(ui, turn_seconds=60), Standin(), 60, ui.autoplayed)
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        got: list[Action] = []

        async def play() -> None:
            got.append(await player.decide(o))

        nursery.start_soon(play)
        await trio.sleep(0.5)
        assert "Your turn (60 s left)" in screen_of(out)
        await trio.sleep(25)
        assert "Your turn (35 s left)" in screen_of(out)
        assert screen_of(out).endswith("Your card (35 s left)>")
        bells = out.getvalue().count("\a")
        await trio.sleep(25)
        assert "10 s left, then the rules bot plays for you." in screen_of(out)
        assert out.getvalue().count("\a") == bells + 1
        await trio.sleep(11)
        assert got == [o.legal[-1]]
        card = card_text(o.legal[-1])
        assert f"Time's up: the rules bot played {card} for you." in screen_of(out)
        # The person takes over again at the next turn.
        nursery.start_soon(play)
        await trio.testing.wait_all_tasks_blocked()
        await keys.type(str(o.legal[0]))
        assert got == [o.legal[-1], o.legal[0]]
        nursery.cancel_scope.cancel()
    assert player.autoplayed == 1


async def test_the_round_screen_stays_until_enter_or_a_few_seconds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ui, out = live_ui(hold=8.0)
    keys = Keys()
    seed = 3
    state = dealt(CLASSIC, seed)
    events = list(round_events(state, seed, choose=lambda s: s.legal_actions()[0]))
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        for event, _ in events:
            if not isinstance(event, DecisionNeeded):
                ui.on_event(event)
        assert ui.overlay == "round"
        assert "Round score" in screen_of(out) and "table in 8 s" in screen_of(out)
        await trio.sleep(5.5)
        assert "table in 3 s" in screen_of(out)
        await trio.sleep(3)
        assert ui.overlay is None and "with dix de der" not in screen_of(out)
        # Enter closes it at once.
        ui.overlay, ui.overlay_until = "round", trio.current_time() + 8
        await keys.type("")
        assert ui.overlay is None
        nursery.cancel_scope.cancel()


async def test_the_last_rounds_screen_is_the_games_and_asks_for_no_enter(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The round that ends the game shows at once as the game's screen: no "Enter: the
    table" (an Enter typed for it would answer the rematch question that follows), no
    countdown back to the table, and an Enter keeps it."""
    ui, out = live_ui(hold=8.0)
    keys = Keys()
    seed = 3
    state = dealt(rule_set("classic", target=1), seed)
    events = list(round_events(state, seed, choose=lambda s: s.legal_actions()[0]))
    assert events[-1][1].is_over
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        for event, _ in events:
            if not isinstance(event, DecisionNeeded):
                ui.on_event(event)
        assert ui.overlay == "game" and ui.overlay_until is None
        screen = screen_of(out)
        assert "Round score" in screen and "Game over" in screen
        assert "Enter: the table" not in screen and "table in" not in screen
        await keys.type("")
        assert ui.overlay == "game"
        nursery.cancel_scope.cancel()


async def test_quit_and_ctrl_c_ask_first_then_resign(
    autojump_clock: trio.testing.MockClock,
) -> None:
    control = Control()
    ui, out = live_ui(control=control)
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        await keys.type("quit")
        assert ui.prompt() == "Resign and leave the game? Type yes to confirm> "
        await keys.type("no")
        assert "Not resigning: the game goes on." in screen_of(out) and not control.resigned
        ui.interrupt()
        assert "Ctrl-C: resign the game? Ctrl-C again or yes resigns" in screen_of(out)
        await keys.type("")
        assert not control.resigned
        ui.interrupt()
        ui.interrupt()
        assert control.resigned == 1
        nursery.cancel_scope.cancel()
    # Without a control, a resignation answers the pending decision.
    o = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_FIRST)
    ui, _ = live_ui()
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())

        async def answer() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await keys.type("quit")
            await keys.type("yes")

        nursery.start_soon(answer)
        with pytest.raises(Resigned):
            await TuiPlayer(ui).decide(o)
        nursery.cancel_scope.cancel()


async def test_the_end_of_input_resigns(autojump_clock: trio.testing.MockClock) -> None:
    control = Control()
    ui, out = plain_ui(control=control)
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        await keys.send.aclose()
        await trio.testing.wait_all_tasks_blocked()
        assert control.resigned == 1
        assert "The input closed: you resign." in out.getvalue()
        nursery.cancel_scope.cancel()


async def test_say_and_quick_words_go_to_the_table_within_the_rate(
    autojump_clock: trio.testing.MockClock,
) -> None:
    control = Control()
    ui, out = live_ui(control=control)
    keys = Keys()
    async with trio.open_nursery() as nursery:
        await nursery.start(ui.run, keys.lines())
        for line in ("say well played", "gg", "bravo", "oops", "say one more"):
            await keys.type(line)
        assert control.said == ["well played", "gg", "Bravo!", "Oops!", "one more"]
        await keys.type("say too fast")
        assert "Not so fast: wait" in screen_of(out) and len(control.said) == 5
        await trio.sleep(10)
        await keys.type("say now")
        await keys.type("say " + "x" * 201)
        assert control.said[-1] == "now"
        assert "A chat line is at most 200 characters" in screen_of(out)
        nursery.cancel_scope.cancel()


def test_plain_mode_prints_one_fact_a_line() -> None:
    ui, out = plain_ui()
    for event, _ in round_events(dealt(CLASSIC, 3), 3, choose=lambda s: PASS):
        ui.on_event(event)
    text = out.getvalue()
    assert "╭" not in text and "♠" not in text and "\x1b" not in text
    assert "Round 1: You deal. Turned card: " in text
    assert "Bob: pass." in text
    assert "Round 1: everybody passed, the next dealer deals again." in text


def test_to_plain() -> None:
    assert to_plain("▶ Master: Bob with 10♥ ★ · Q♠ → Ann…") == (
        "Master: Bob with 10H , QS won by Ann..."
    )


async def test_any_key_puts_the_completed_trick_away(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A completed trick stays on show until the next trick's first card; any key the
    person presses (not only Enter) puts it away sooner, and the key types on."""
    ui, out = live_ui()
    ui.on_event(TableReady())
    for event, state in round_events(dealt(CLASSIC, 3), 3):
        if isinstance(event, DecisionNeeded):
            continue  # nobody asks here: the table alone is watched
        ui.on_event(event)
        played = isinstance(event, ActionTaken) and state.phase is Phase.PLAY
        if played and state.tricks and not state.trick:
            break  # a trick just completed, the next not begun
    assert " won by " in screen_of(out)
    ui.key_pressed()
    assert ui.view.trick_on_show(trio.current_time(), TRICK_HOLD) is None
    assert " won by " not in screen_of(out)


# -- in French and Spanish ----------------------------------------------------------------

LANGUAGE_WORDS = {
    "fr": {
        "title": "Belote classique en 301 · donne 1 · donneur Vous",
        "score": "Vous & Cid 0 · Bob & Dee 0 · en 301",
        "turned": "Retourne : {card} (premier tour)",
        "waiting": "On attend Bob",
        "may": "Choix : passer, prendre ({card})",
        "turn": "▶ À vous : prendre ou passer",
        "take": ("prendre", "prends"),
        "pass": ("passer", "passe"),
        "commands": ("aide", "dernier", "plis", "quitter"),
        "say": ("dire bien joué", "bien joué"),
        "bidding": "Ce sont les enchères : aucune carte ne se joue encore. Possible : passer",
        "refused": "Impossible de jouer {card} maintenant.",
        "why": r"Vous devez (fournir à|monter à l'atout)|Vous n'avez pas de",
        "legal": "Possible : ",
        "unknown": "« zz » n'est ni une carte, ni une annonce, ni une commande (tapez aide).",
        "no card": "Pas de carte 9 : vos cartes sont ",
        "round": (
            "Plis",
            "Points des cartes",
            "  dont dix de der",
            "Annonces",
            "Belote",
            "Total",
            "Score de la donne",
            "Partie (en 301)",
            "Dernier pli : ",
        ),
        "verdict": r"Contrat (réussi|chuté) pour|Litige",
        "help": "Carte : son numéro (fixe pour la donne) ou son nom : VC, vc, 10c, 10♥.",
        "over": "Partie terminée : ",
        "sheet": "Feuille de marque",
        "abandoned": "La partie est abandonnée : Cid l'a quittée.",
        "played": ("joue", "remporte le pli"),
    },
    "es": {
        "title": "Belote clásica a 301 · ronda 1 · reparte Usted",
        "score": "Usted & Cid 0 · Bob & Dee 0 · a 301",
        "turned": "Carta boca arriba: {card} (primera vuelta)",
        "waiting": "Esperando a Bob",
        "may": "Opciones: pasar, tomar ({card})",
        "turn": "▶ Su turno: tomar o pasar",
        "take": ("tomar", "tomo"),
        "pass": ("pasar", "paso"),
        "commands": ("ayuda", "última", "bazas", "salir"),
        "say": ("decir bien jugado", "bien jugado"),
        "bidding": "Esto es la subasta: aún no se juega ninguna carta. Posible ahora: pasar",
        "refused": "No se puede jugar {card} ahora.",
        "why": r"Debe (asistir a|pisar)|No tiene",
        "legal": "Posible ahora: ",
        "unknown": "«zz» no es una carta, ni una apuesta, ni una orden (escriba ayuda).",
        "no card": "No hay carta 9: sus cartas son ",
        "round": (
            "Bazas",
            "Puntos de cartas",
            "  diez de últimas",
            "Anuncios",
            "Belote",
            "Total",
            "Puntos de la ronda",
            "Partida (a 301)",
            "Última baza: ",
        ),
        "verdict": r"Contrato (cumplido|fallado) por|Litigio",
        "help": "Carta: su número (fijo toda la ronda) o su nombre: VC, vc, 10c, 10♥.",
        "over": "Partida terminada: ",
        "sheet": "Hoja de puntos",
        "abandoned": "La partida queda abandonada: Cid se fue.",
        "played": ("juega", "gana la baza"),
    },
}
"""What a French and a Spanish player read and type, in their own words (the rules' words:
retourne, premier tour, plis, dix de der; carta boca arriba, primera vuelta, bazas, diez de
últimas)."""
ENGLISH_CARD = re.compile(r"(?<![\w-])[JQK][♠♥♦♣]")
"""A card written with an English rank letter."""


@pytest.mark.parametrize("lang", sorted(LANGUAGE_WORDS))
def test_the_frame_reads_in_french_and_spanish(lang: str) -> None:
    words = LANGUAGE_WORDS[lang]
    with using(lang):
        view = new_view()
        view.apply(TableReady())
        state = dealt(CLASSIC, 1)
        view.apply(RoundDealt(state.number, state.dealer, state.hand(0), state.turned, state))
        text = frame(view)
        check_fits(text)
        assert state.turned is not None
        turned = card_text(state.turned)
        for key in ("title", "score", "turned", "waiting"):
            assert words[key].format(card=turned) in text, (key, text)
        assert ENGLISH_CARD.search(text) is None, text
        letters = {card_text(c)[:-1] for c in state.hand(0)}
        assert letters & {"V", "D", "R"} or not letters & {"J", "Q", "K"}
        o = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_FIRST)
        view, _event, _ = first(
            CLASSIC, lambda e, s: isinstance(e, DecisionNeeded) and e.observation == o
        )
        assert o.turned is not None
        text = frame(view)
        assert words["may"].format(card=card_text(o.turned)) in text, text
        assert words["turn"] in text, text


@pytest.mark.parametrize("lang", sorted(LANGUAGE_WORDS))
def test_what_a_french_or_spanish_player_types(lang: str) -> None:
    words = LANGUAGE_WORDS[lang]
    with using(lang):
        first_turn = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_FIRST)
        for typed in (*words["take"], "take", "PRENDRE"):
            assert parse_input(typed, first_turn) == TAKE, typed
        for typed in (*words["pass"], "pass"):
            assert parse_input(typed, first_turn) == PASS, typed
        kinds = (CommandKind.HELP, CommandKind.LAST, CommandKind.TRICKS, CommandKind.QUIT)
        for typed, kind in zip(words["commands"], kinds, strict=True):
            assert parse_input(typed, first_turn) == Command(kind), typed
            assert parse_input(typed.upper(), first_turn) == Command(kind), typed
        assert parse_input("help", first_turn) == Command(CommandKind.HELP)
        say, said = words["say"]
        assert parse_input(say, first_turn) == Command(CommandKind.CHAT, said)
        o = playing(lambda o: len(o.legal) < len(o.hand) and bool(o.trick))
        for c in o.legal:
            assert isinstance(c, Card)
            for typed in (card_text(c), card_text(c, symbols=False), card_text(c).lower()):
                assert parse_input(typed, o) == c, typed
        with pytest.raises(InputError) as info:
            parse_input(card_text(o.hand[0]), first_turn)
        assert words["bidding"] in str(info.value), str(info.value)
        illegal = next(c for c in display_hand(o.hand, o.trump) if c not in o.legal)
        with pytest.raises(InputError) as info:
            parse_input(card_text(illegal, symbols=False), o)
        message = str(info.value)
        assert words["refused"].format(card=card_text(illegal)) in message, message
        assert re.search(words["why"], message), message
        assert words["legal"] in message and ENGLISH_CARD.search(message) is None, message
        for typed, key in (("zz", "unknown"), ("9", "no card")):
            with pytest.raises(InputError) as info:
                parse_input(typed, o)
            assert words[key] in str(info.value), str(info.value)


def test_a_french_bid_is_typed_with_french_letters_and_refused_in_french() -> None:
    with using("fr"):
        opening = decision(COINCHE_RULES, lambda o: o.contract == 0, bidding())
        # C is cœur in French, K carreau, P pique, T trèfle; SA sans atout.
        assert parse_input("90 C", opening) == Bid(BidKind.BID, 1, 90)
        assert parse_input("capot K", opening) == Bid(BidKind.BID, 2, 250)
        assert parse_input("générale T", opening) == Bid(BidKind.BID, 3, 500)
        assert parse_input("80 ♠", opening) == Bid(BidKind.BID, 0, 80)
        with pytest.raises(InputError) as info:
            parse_input("90 SA", opening)
        assert "Cette table ne joue pas les annonces à sans atout." in str(info.value)
        assert "Possible : passer, une annonce 80-160 de dix en dix, capot, générale avec une " \
            "couleur P/C/K/T (p. ex. 80 P)." in str(info.value)  # fmt: skip
        with pytest.raises(InputError, match=re.escape("Les annonces vont de dix en dix : 80, 90")):
            parse_input("95 C", opening)


@pytest.mark.parametrize("lang", sorted(LANGUAGE_WORDS))
def test_the_round_screen_reads_in_french_and_spanish(lang: str) -> None:
    words = LANGUAGE_WORDS[lang]
    with using(lang):
        view, _ = round_audited()
        b = view.breakdown
        assert b is not None and re.search(words["verdict"], b.verdict), b.verdict
        console = Console(record=True, width=80, color_system=None, file=io.StringIO())
        console.print(view.render_round(80, ""))
        text = console.export_text()
        check_fits(text)
        for label in words["round"]:
            assert label in text, (label, text)
        assert b.verdict in text and ENGLISH_CARD.search(text) is None, text


def test_help_lines_fit_the_frame_in_every_language() -> None:
    o = playing(lambda o: True)
    for lang in LANGUAGES:
        with using(lang):
            every = help_text(None).split("\n")
            assert len(every) == len(HELP_LINES)
            assert all(len(line) <= WIDTH - 4 for line in every), (lang, every)
            lines = help_text(o).split("\n")
            assert lines[:-1] == [every[0], every[1], *every[3:]]  # classic: no auction
            assert lines[-1] == legal_text(o)
            if lang in LANGUAGE_WORDS:
                assert lines[0] == LANGUAGE_WORDS[lang]["help"]


@pytest.mark.parametrize(
    ("variant", "bidding"),
    [("classic", ["Bid"]), ("three-handed", ["Bid"]), ("coinche", ["Coinche"]),
     ("two-handed", [])],
)  # fmt: skip
def test_the_help_speaks_of_the_bidding_its_table_plays(variant: str, bidding: list[str]) -> None:
    lines = help_text(None, rule_set(variant)).split("\n")
    heads = [line.split(":")[0] for line in lines if line.startswith(("Bid:", "Coinche:"))]
    assert heads == bidding
    assert lines[0].startswith("Play a card") and lines[-1].startswith("that turn for you")


FIXED_ROWS = (1, 2, 3, 4, 10, 11, 12, 13)
"""The lines of a frame that a translation must never make too long (the score, contract,
bids and trick lines; the last trick, hand, legal cards and turn): the news lines below may
be cut (what a player says may be long)."""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_frame_of_every_variant_fits_in_every_language(lang: str) -> None:
    said: list[str] = []
    with using(lang):
        for variant in ("classic", "coinche", "three-handed", "two-handed"):
            rules = rule_set(variant, target=301)
            for seed in range(3):
                view = (
                    new_view(rules)
                    if rules.seats == 4
                    else TableView(0, NAMES[: rules.seats], rules)
                )
                view.apply(TableReady())
                for event, _ in round_events(dealt(rules, seed), seed):
                    said += [n.text for n in view.apply(event)]
                    text = frame(view)
                    check_fits(text)
                    lines = text.split("\n")
                    for row in FIXED_ROWS:
                        line = lines[row].strip("│ ")
                        if line.endswith("…"):  # cut, unless the text itself ends so
                            assert line == view.turn_line(0.0), (variant, line)
                    if isinstance(event, RoundAudited):
                        console = Console(record=True, width=80, color_system=None,
                                          file=io.StringIO())  # fmt: skip
                        console.print(view.render_round(80, ""))
                        check_fits(console.export_text())
    assert (said and not any(ENGLISH_CARD.search(s) for s in said)) or lang == "en"
    if lang in LANGUAGE_WORDS:
        for verb in LANGUAGE_WORDS[lang]["played"]:
            assert any(verb in s for s in said), verb


@pytest.mark.parametrize("lang", sorted(LANGUAGE_WORDS))
def test_game_over_and_abandon_in_french_and_spanish(lang: str) -> None:
    words = LANGUAGE_WORDS[lang]
    with using(lang):
        rules = rule_set("classic", target=101)
        view, state = game_played(rules)
        notices = view.apply(GameOver(state))
        assert notices[0].text.startswith(words["over"]), notices[0].text
        assert view.sheet is not None and words["sheet"] in view.sheet
        assert view.ended is not None and view.ended in frame(view)
        view = new_view(rules)
        view.apply(GameAbandoned(2, state))
        assert words["abandoned"] in frame(view)


def test_plain_lines_use_the_readers_suit_letters() -> None:
    with using("fr"):
        assert to_plain("▶ Maître : Bob avec 10♥ ★ · D♠ → Ann…") == (
            "Maître : Bob avec 10C , DP remporté par Ann..."
        )
        ui, out = plain_ui()
        for event, _ in round_events(dealt(CLASSIC, 3), 3, choose=lambda s: PASS):
            ui.on_event(event)
        text = out.getvalue()
        assert "Donne 1 : vous donnez. Retourne : " in text
        assert "Bob : passe." in text
        assert "Donne 1 : tout le monde a passé, le donneur suivant redonne." in text


def test_chat_own_words_in_french_and_the_others_words_as_they_said_them() -> None:
    with using("fr"):
        assert ChatLimiter().check("") == (
            "Dire quoi ? Tapez dire et vos mots, par exemple dire bien joué."
        )
        view = new_view()
        view.apply(TableReady())
        notices = view.apply(ChatMessage(1, "¡Hola! well played", 0))
        assert notices[0].text == "Bob : ¡Hola! well played"
    assert chat_line("hola") == "¡Hola!" and chat_line("salut") == "Salut !"
    assert chat_line("gg") == "gg" and chat_line("decir suerte") == "suerte"


@pytest.mark.parametrize(
    ("lang", "quit", "yes", "question"),
    [
        ("fr", "quitter", "oui", "[o/N]"),
        ("es", "salir", "sí", "[s/N]"),
        ("en", "quit", "y", "[y/N]"),
    ],
)
async def test_quit_asks_and_yes_resigns_in_the_readers_language(
    lang: str, quit: str, yes: str, question: str, autojump_clock: trio.testing.MockClock
) -> None:
    with using(lang):
        assert question in gettext(QUESTION) and wants_again(yes)
        ui, out = plain_ui()
        o = playing(lambda o: True)
        answer: list[Action | Resign] = []

        async def decide() -> None:
            answer.append(await ui.decide(o))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(decide)
            await trio.testing.wait_all_tasks_blocked()
            ui.handle_line(quit)
            assert out.getvalue().endswith(ui.prompt()) and ui.confirming
            ui.handle_line(yes)
        assert answer == [Resign()]
