"""The terminal table: frames at key moments, what a person may type, and one whole game
played by a scripted person through a pseudo-terminal against three bot processes."""

from __future__ import annotations

import codecs
import dataclasses
import fcntl
import io
import os
import random
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
from helpers import cli_argv, dealt, random_deck, source_pythonpath
from rich.console import Console

from belote_p2p.app.tui import (
    Command,
    CommandKind,
    InputError,
    Resign,
    TableView,
    TerminalUI,
    TuiPlayer,
    display_hand,
    parse_input,
    prompt_action,
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
from belote_p2p.players.player import Resigned
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
    yield RoundDealt(state.number, state.dealer, state.hand(seat), state.turned), state
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
    view.apply(RoundDealt(state.number, state.dealer, state.hand(0), state.turned))
    text = frame(view)
    check_fits(text)
    assert "Belote classic to 301 · round 1 · dealer You" in text
    assert state.turned is not None
    assert f"Turned card: {card_text(state.turned)} (first turn)" in text
    assert "Us (You+Cid) 0 · Them (Bob+Dee) 0 · target 301" in text
    hand = display_hand(state.hand(0), -1)
    shown = " ".join(f"{i} {card_text(c)}" for i, c in enumerate(hand, 1))
    assert shown.replace(" ", "") in text.replace(" ", "").replace("│", "")
    assert "Waiting for Bob" in text
    assert "Bob 1111-abcd" in text and "Dee 3333-abcd" in text


def test_hand_is_grouped_by_suit_with_symbols_and_red_hearts_and_diamonds() -> None:
    hand = tuple(card(c) for c in ("AH", "7S", "TD", "JC", "9H"))
    assert [str(c) for c in display_hand(hand, -1)] == ["7S", "9H", "AH", "JC", "TD"]
    # Under trump hearts the nine outranks the ace.
    assert [str(c) for c in display_hand(hand, 1)] == ["7S", "AH", "9H", "JC", "TD"]
    view = new_view()
    view.apply(RoundDealt(0, 3, hand, card("KS")))
    console = Console(record=True, width=80, color_system="truecolor", file=io.StringIO())
    console.print(view.render())
    styled = console.export_text(styles=True)
    assert "\x1b[1;31mA♥" in styled or "\x1b[31;1mA♥" in styled
    assert "10♦" in styled and "J♣" in styled


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
    assert f"You may: take (the {o.turned}), pass" in text
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
    legal = "  ".join(
        f"{i} {card_text(c)}"
        for i, c in enumerate(display_hand(o.hand, o.trump), 1)
        if c in o.legal
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
    record = dataclasses.replace(event.record, score=score, taker=1, trump=1, contract=0)
    view.apply(RoundAudited(record, event.report, state))
    return frame(view)


def test_a_litige_summary_names_the_pot() -> None:
    score = RoundScore((81, 81), (0, 0), (0, 0), (81, 81), Outcome.LITIGE, (81, 0), 81)
    text = summary_view(score)
    check_fits(text)
    assert "Round 1: Bob takes ♥ - litige." in text
    assert "Litige: Them points wait in the pot (81)." in text
    assert "Round score us +81, them +0" in text


def test_a_capot_summary_says_who_made_it() -> None:
    score = RoundScore((250, 0), (0, 0), (0, 20), (250, 20), Outcome.FAILED, (250, 20), 0, 0)
    text = summary_view(score)
    check_fits(text)
    assert "Round 1: Bob takes ♥ - failed, capot by Us." in text
    assert "Card points us 250, them 0; belote us 0, them 20." in text


def test_game_over_and_abandon_end_the_frame_with_the_sheet() -> None:
    rules = rule_set("classic", target=101)
    state = dealt(rules, 5)
    view = new_view(rules)
    seed = 5
    while state.phase is not Phase.GAME_OVER:
        events = list(round_events(state, seed))
        for event, _ in events:
            view.apply(event)
        state = events[-1][1]
        if state.phase is Phase.DEAL:
            seed += 1
            state = state.deal(random_deck(random.Random(seed)))
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
    number = display_hand(o.hand, o.trump).index(ten) + 1
    assert parse_input(str(number), o) == ten
    assert parse_input(f"  {number} ", o) == ten


def test_an_illegal_card_explains_why_and_what_is_legal() -> None:
    o = playing(lambda o: len(o.legal) < len(o.hand) and bool(o.trick))
    illegal = next(c for c in display_hand(o.hand, o.trump) if c not in o.legal)
    with pytest.raises(InputError) as info:
        parse_input(str(illegal).lower(), o)
    message = str(info.value)
    assert f"{illegal} cannot be played now." in message
    assert re.search(r"You must (follow|play a higher|.*trump)|You have no", message), message
    assert "Legal now: " in message
    hand = display_hand(o.hand, o.trump)
    for c in hand:
        if c in o.legal:
            assert f"{hand.index(c) + 1} {card_text(c, symbols=False)}" in message
    number = hand.index(illegal) + 1
    with pytest.raises(InputError, match="cannot be played now"):
        parse_input(str(number), o)


def test_wrong_inputs_while_playing() -> None:
    o = playing(lambda o: True)
    not_held = next(c for c in CARDS if c not in o.hand)
    cases = {
        "9": "There is no card 9",
        "0": "There is no card 0",
        str(not_held): f"You do not hold {not_held}",
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
        assert f"Legal now: take (the {first_turn.turned}), pass." in str(info.value)
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
        assert "Legal now: a bid 80 to 160, capot or generale with a suit S/H/D/C" in str(
            info.value
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
    waiting = o._replace(legal=())
    with pytest.raises(InputError, match="It is not your turn"):
        parse_input("JH", waiting)
    assert parse_input("last", waiting) == Command(CommandKind.LAST)


def scripted(lines: list[str]) -> tuple[Callable[[str], str], list[str]]:
    said: list[str] = []

    def ask(prompt: str) -> str:
        said.append(prompt)
        if not lines:
            raise EOFError
        return lines.pop(0)

    return ask, said


def test_the_prompt_explains_and_asks_again_until_a_legal_answer() -> None:
    o = playing(lambda o: True)
    legal = o.legal[0]
    ask, said = scripted(["zz", "help", "last", "quit", "no", str(legal)])
    answer = prompt_action(
        o, ask, said.append, last_trick=lambda: "Last trick: …", deadline=30.0, clock=lambda: 0.0
    )
    assert answer == legal
    assert said[0] == "Your card (30 s left)> "
    assert "'zz' is not a card" in said[1]
    assert said[3].startswith("Type a card (JH, jh, 10h, T♥)")
    assert "Last trick: …" in said
    assert "Resign and leave the game? Type yes to confirm> " in said
    assert "Not resigning: the game goes on." in said


def test_quit_then_yes_resigns_and_a_closed_input_raises() -> None:
    o = decision(CLASSIC, lambda o: o.phase is Phase.TAKE_FIRST)
    ask, said = scripted(["quit", "yes"])
    assert prompt_action(o, ask, said.append) == Resign()
    assert said[0] == "Your bid> "
    ask, _ = scripted([])
    with pytest.raises(EOFError):
        prompt_action(o, ask, said.append)


# -- the terminal UI ----------------------------------------------------------------------


def ui_for(
    lines: list[str], *, plain: bool = False, rules: RuleSet = CLASSIC
) -> tuple[TerminalUI, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None, force_terminal=False)
    ask, _ = scripted(lines)

    def echo(prompt: str) -> str:
        out.write(prompt)
        return ask(prompt)

    return TerminalUI(new_view(rules), console=console, plain=plain, ask=echo), out


def test_terminal_ui_redraws_and_decides() -> None:
    ui, out = ui_for(["zz", "pass"])
    answers: list[Action | Resign] = []
    for event, _ in round_events(dealt(CLASSIC, 3), 3, choose=lambda s: PASS):
        ui.on_event(event)
        if isinstance(event, DecisionNeeded):
            answers.append(ui.decide(event.observation, None))
            break
    assert answers == [PASS]
    text = out.getvalue()
    assert text.count("╭─ Belote classic to 301") >= 2
    assert "'zz' is not a card, a bid or a command" in text


def test_plain_mode_prints_one_fact_a_line() -> None:
    ui, out = ui_for(["pass"] * 8, plain=True)
    for event, _ in round_events(dealt(CLASSIC, 3), 3, choose=lambda s: PASS):
        ui.on_event(event)
        if isinstance(event, DecisionNeeded):
            ui.decide(event.observation, None)
    text = out.getvalue()
    assert "╭" not in text and "♠" not in text and "\x1b" not in text
    assert "Round 1: You deal. Turned card: " in text
    assert "Bob: pass." in text
    assert "Your turn: take or pass." in text
    assert "Round 1: everybody passed, the next dealer deals again." in text


async def test_tui_player_answers_from_a_worker_thread_and_resigns() -> None:
    o = playing(lambda o: True)
    ui, out = ui_for([str(o.legal[0])])
    player = TuiPlayer(ui, turn_seconds=60)
    with trio.fail_after(10):
        assert await player.decide(o) == o.legal[0]
    assert re.search(r"Your card \((60|59) s left\)> ", out.getvalue())
    assert re.search(r"Your turn \((60|59) s left\): play a card", out.getvalue())
    ui, out = ui_for(["quit", "y"])
    with trio.fail_after(10), pytest.raises(Resigned):
        await TuiPlayer(ui).decide(o)
    assert "Your card> Resign and leave the game? Type yes to confirm> " in out.getvalue()


def test_to_plain() -> None:
    assert to_plain("▶ Master: Bob with 10♥ ★ · Q♠ → Ann…") == (
        "Master: Bob with 10H , QS won by Ann..."
    )


# -- a whole game through a pseudo-terminal ----------------------------------------------

ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()=>][0-9A-Za-z]?"
)
CLEAR = "\x1b[2J"
GAME_DEADLINE = 90.0


class Terminal:
    """A process on a pseudo-terminal of 80x24; :meth:`expect` reads until a pattern shows,
    within one deadline for the whole session."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.fd = master
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.raw = ""
        self.seen = 0
        self.deadline = time.monotonic() + GAME_DEADLINE

    def text(self, raw: str) -> str:
        return ANSI.sub("", raw.replace("\r", ""))

    def screen(self) -> str:
        """What is on screen since the last clear, without colours."""
        return self.text(self.raw.split(CLEAR)[-1])

    def expect(self, pattern: str) -> re.Match[str]:
        rx = re.compile(pattern)
        while True:
            found = rx.search(self.raw, self.seen)
            if found:
                self.seen = found.end()
                return found
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} did not show; the screen:\n{self.screen()}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # EIO: the process and every holder of the tty are gone
                    data = b""
                if not data:
                    raise AssertionError(f"the process ended before {pattern!r}:\n{self.screen()}")
                self.raw += self.decoder.decode(data)

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\r").encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.fd)


PROMPT = r"Your (card|bid)(?: \(\d+ s left\))?> |RESULT (\{.*\})"


def test_a_person_plays_a_whole_game_through_a_pseudo_terminal(tmp_path: Path) -> None:
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="80", LINES="24")
    env.pop("NO_COLOR", None)
    env["PYTHONPATH"] = source_pythonpath()
    # Seat 3 deals first, so that the person bids first.
    argv = cli_argv("host", "--bots", "3", "--target", "101")
    argv += ["--first-dealer", "3", "--port", "0", "--bind", "127.0.0.1", "--no-beacon"]
    argv += ["--home", str(tmp_path / "home"), "--seed", "7", "--name", "Ann"]
    term = Terminal(argv, env, tmp_path)
    try:
        bids = plays = 0
        mid_trick_seen = False
        while True:
            found = term.expect(PROMPT)
            if found.group(2):
                result = found.group(2)
                break
            screen = term.screen()
            lines = screen.rstrip("\n").split("\n")
            assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), screen
            assert "Belote classic to 101 · round " in screen
            assert "Us (You+" in screen and "target 101" in screen
            if found.group(1) == "bid":
                assert re.search(r"▶ Your turn(?: \(\d+ s left\))?: ", screen), screen
                assert "Bids: " in screen
                if bids == 0:
                    # Just dealt: the turned card, the five cards, nobody has spoken.
                    assert "round 1 · dealer Bot" in screen and "Turned card: " in screen
                    assert "Bids: none yet" in screen
                    assert len(re.findall(r"\d (?:10|[7-9JQKA])[♠♥♦♣]", screen)) == 5
                    term.send("JH")
                    term.expect(r"This is the bidding: no card is played yet\. Legal now: ")
                    term.send("90 H")
                    term.expect(r"'90 H' is a coinche bid; this table plays classic\.")
                    term.send("quit")
                    term.expect(r"Resign and leave the game\? Type yes to confirm> ")
                    term.send("no")
                    term.expect("Not resigning: the game goes on.")
                    term.expect(r"Your bid(?: \(\d+ s left\))?> ")
                bids += 1
                term.send("pass")
                continue
            assert "Hand " in screen and "Legal: " in screen
            legal = re.findall(r"(\d) (10|[7-9JQKA])([♠♥♦♣])", screen.split("Legal: ")[-1])
            hand = re.findall(r"(\d) (10|[7-9JQKA])([♠♥♦♣])", screen.split("Hand ")[-1])
            assert legal and set(legal) <= set(hand), screen
            if "master " in screen and "★" in screen:
                mid_trick_seen = True
            if plays == 0:
                term.send("zz")
                term.expect(r"'zz' is not a card, a bid or a command \(type help\)\.")
                term.send("9")
                term.expect(r"There is no card 9: your cards are 1 to \d\.")
                illegal = [h for h in hand if h not in legal]
                if illegal:
                    term.send(illegal[0][0])
                    term.expect(r"cannot be played now\.")
                term.send("help")
                term.expect(r"Type a card \(JH, jh, 10h, T♥\) or its number in your hand")
                term.send("last")
                term.expect(r"No trick yet\.|Last trick: ")
                term.expect(r"Your card(?: \(\d+ s left\))?> ")
            number, rank, suit = legal[plays % len(legal)]
            # Alternate the number and the card's name (lower case, 10 for a ten).
            term.send(number if plays % 2 else (rank + "SHDC"["♠♥♦♣".index(suit)]).lower())
            plays += 1
        final = term.text(term.raw)
        assert '"ok": true' in result, final[-3000:]
        assert plays >= 8 and bids >= 1
        assert mid_trick_seen
        assert re.search(r"Round \d: .* - (made|failed|litige)", final)
        assert "Score sheet" in final and re.search(r"Game over: (You|They) win \d+-\d+\.", final)
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()


def test_a_person_resigns_in_plain_mode_and_the_host_exits_0(tmp_path: Path) -> None:
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="80", LINES="24")
    env["PYTHONPATH"] = source_pythonpath()
    home = tmp_path / "home"
    argv = cli_argv("host", "--bots", "3", "--target", "101")
    argv += ["--first-dealer", "3", "--port", "0", "--bind", "127.0.0.1", "--no-beacon"]
    argv += ["--home", str(home), "--seed", "7", "--name", "Ann", "--plain"]
    term = Terminal(argv, env, tmp_path)
    try:
        term.expect(PROMPT)
        before = term.text(term.raw)
        assert "\x1b[" not in term.raw, "plain mode prints no escape sequences"
        assert "Hand: 1 " in before and "Legal now: " in before and "Score: us 0, them 0." in before
        term.send("quit")
        term.expect(r"Resign and leave the game\? Type yes to confirm> ")
        term.send("yes")
        result = term.expect(r"RESULT (\{.*\})").group(1)
        assert '"resigned": true' in result and '"abandoned": 0' in result
        assert '"error": null' in result
        final = term.text(term.raw)
        assert "You resigned: the game ends, abandoned by your seat." in final
        assert re.search(r"^\+0 XP, level 0$", final, re.MULTILINE), final[-2000:]
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()
