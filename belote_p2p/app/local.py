"""``belote-p2p play``: a person against bots at this terminal, with no network.

The same terminal table as a networked game (:mod:`belote_p2p.app.tui`), fed by a local
driver instead of a peer: the engine deals from a shuffled deck, bots (``--bots``, ``rules``
by default) play the other seats (three, or one or two at a table of two or three seats),
and every round is audited with every hand known.
Nothing is signed or recorded: for a game others can check, play ``host --bots 3``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
from collections.abc import Awaitable, Callable

import trio

from belote_p2p.app.argtypes import positive_int, seconds, seed
from belote_p2p.game.audit import audit_round
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import Phase, RoundRecord, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RULE_SETS, RuleSet, rule_set
from belote_p2p.i18n import N_, _
from belote_p2p.players.analysis import NotAnEvaluator
from belote_p2p.players.autoplay import Autoplay
from belote_p2p.players.bots import BotError, make_bot
from belote_p2p.players.player import BotPlayer, Player, Resigned
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

from .coach import COACH_BOT, TableCoach
from .home import Home
from .rematch import ask_person, new_game_text
from .seat import login_name, watch_signals
from .tui import TableView, TerminalUI, TuiPlayer

EAST, NORTH, WEST = N_("East"), N_("North"), N_("West")
BOT_NAMES = {4: (EAST, NORTH, WEST), 3: (EAST, WEST), 2: (NORTH,)}
"""The bots' seats in turn after the person's, by the table's seats (the person sits South,
seat 0; the next to play sits on the right, East), named in the reader's language
(:func:`bot_names`: nothing of a local game is signed or recorded)."""


def bot_names(seats: int) -> tuple[str, ...]:
    """The bots' names at a table of ``seats``, in the reader's language (Est, Nord, Ouest)."""
    return tuple(_(name) for name in BOT_NAMES[seats])


def shuffled_deck(rng: random.Random, cards: tuple[Card, ...] = CARDS) -> list[Card]:
    """``cards`` (the 32, or a variant's deck) in an order drawn from ``rng``."""
    deck = list(cards)
    rng.shuffle(deck)
    return deck


class LocalTable:
    """The control of a local game: a resignation ends it; a chat line is shown (nobody
    answers it). :attr:`state` follows the game."""

    def __init__(self, rules: RuleSet) -> None:
        self.resigned = trio.Event()
        self.state = State.new_game(rules)
        self._send, self.said = trio.open_memory_channel[Event](64)

    def resign(self) -> None:
        self.resigned.set()

    def chat(self, text: str) -> None:
        with contextlib.suppress(trio.WouldBlock):
            self._send.send_nowait(ChatMessage(0, text, 0))


async def play_local(
    rules: RuleSet,
    ui: TerminalUI,
    person: Player,
    bots: list[Player],
    rng: random.Random,
    *,
    pace: float = 0.6,
    table: LocalTable | None = None,
    after_round: Callable[[RoundRecord], None] | None = None,
) -> State:
    """Play a whole game: seat 0 is ``person``, the other seats ``bots``; ``pace``: seconds
    between two bot moves, so that a person can follow them; ``table.state`` follows the
    game; ``after_round`` is told each round played (the coach line: it must not hold up
    the next deal). The final state."""
    table = table if table is not None else LocalTable(rules)
    state = table.state
    players: list[Player] = [person, *bots]
    for seat, player in enumerate(players):
        player.new_game(rules, seat)
    ui.on_event(TableReady())
    while not state.is_over:
        state = table.state = state.deal(shuffled_deck(rng, rules.deck_cards))
        ui.on_event(RoundDealt(state.number, state.dealer, state.hand(0), state.turned, state))
        for seat, player in enumerate(players):
            player.new_round(observe(state, seat))
        number = state.number
        while state.number == number and state.phase is not Phase.GAME_OVER:
            seat = state.to_act
            o = observe(state, seat)
            if seat == 0:
                ui.on_event(DecisionNeeded(o))
            elif pace > 0:
                await trio.sleep(pace)
            action = await players[seat].decide(o)
            state = table.state = state.apply(action)
            ui.on_event(ActionTaken(seat, action, state))
        record = state.history[-1]
        deck = tuple(c for c in record.deck if c is not None)  # every card: a local deal
        ui.on_event(RoundAudited(record, audit_round(record), state, deck))
        if after_round is not None:
            after_round(record)
    ui.on_event(GameOver(state))
    return state


async def local_game(
    rules: RuleSet,
    name: str,
    bot: str,
    seed: int | None,
    *,
    plain: bool = False,
    autoplay: str | None = None,
    deadline: float | None = None,
    pace: float = 0.6,
    again: Callable[[], Awaitable[bool]] = ask_person,
    coach: TableCoach | None = None,
    coach_lines: bool = False,
) -> int:
    """``play``: the exit status (0 for games played out or resigned). After a game played
    out, ``again()`` says whether to play another: the same seats, the deal passed on.
    ``coach``: hints for the person (``coach_lines``: and a line after each round)."""
    rng = random.Random(seed if seed is not None else random.SystemRandom().random())
    while await one_game(rules, name, bot, rng, plain=plain, autoplay=autoplay,
                         deadline=deadline, pace=pace, coach=coach,
                         coach_lines=coach_lines) and await again():  # fmt: skip
        rules = rules.with_(first_dealer=(rules.first_dealer + 1) % rules.seats)
        dealer = ([name, *bot_names(rules.seats)])[rules.first_dealer]
        print(new_game_text(dealer), flush=True)
    return 0


async def one_game(
    rules: RuleSet,
    name: str,
    bot: str,
    rng: random.Random,
    *,
    plain: bool = False,
    autoplay: str | None = None,
    deadline: float | None = None,
    pace: float = 0.6,
    coach: TableCoach | None = None,
    coach_lines: bool = False,
) -> bool:
    """One game at this terminal; whether it was played out (not resigned)."""
    table = LocalTable(rules)
    view = TableView(0, [name, *bot_names(rules.seats)], rules)
    hints = coach.hint if coach is not None else None
    ui = TerminalUI(view, plain=plain, control=table, standin=autoplay, hints=hints)
    tui_player = TuiPlayer(ui, turn_seconds=deadline)
    person = Autoplay.for_person(
        tui_player, autoplay if deadline else None, deadline or 0.0, ui.autoplayed,
        seed=rng.randrange(2**32),
    )  # fmt: skip
    bots: list[Player] = [BotPlayer(bot, seed=rng.randrange(2**32)) for _ in BOT_NAMES[rules.seats]]
    resigned = False

    def say(text: str) -> None:
        print(text, flush=True)

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(watch_signals, table, ui, say)
            await nursery.start(ui.run)

            said: list[trio.Event] = []
            """The coach lines under way (the last round's is awaited: no deal waits then)."""

            async def say_coach_line(record: RoundRecord, done: trio.Event) -> None:
                assert coach is not None
                try:
                    ui.say(await coach.round_line(record, 0))
                finally:
                    done.set()

            def after_round(record: RoundRecord) -> None:
                if coach is not None and coach_lines:
                    said.append(trio.Event())
                    nursery.start_soon(say_coach_line, record, said[-1])

            async def game() -> None:
                try:
                    await play_local(
                        rules, ui, person, bots, rng, pace=pace, table=table,
                        after_round=after_round,
                    )  # fmt: skip
                except Resigned:
                    table.resign()
                    return
                for done in said:
                    await done.wait()
                nursery.cancel_scope.cancel()

            async def chatter() -> None:
                async for event in table.said:
                    ui.on_event(event)

            nursery.start_soon(game)
            nursery.start_soon(chatter)
            await table.resigned.wait()
            resigned = True
            nursery.cancel_scope.cancel()
    except Resigned:
        resigned = True
    if resigned:
        ui.on_event(GameAbandoned(0, table.state))
    ui.finish()
    if resigned:
        print(_("You resigned."), flush=True)
    return not resigned


def command(args: argparse.Namespace) -> int:
    try:
        seats = rule_set(args.variant).seats
        # By default the seat before ours deals, so that we speak (or play) first.
        dealer = seats - 1 if args.first_dealer is None else args.first_dealer
        rules = rule_set(args.variant, target=args.target, first_dealer=dealer)
        make_bot(args.bots)
        autoplay = None if args.autoplay == "none" else args.autoplay
        if autoplay is not None:
            make_bot(autoplay)
        coach = TableCoach(args.coach_bot) if args.hints or args.coach else None
    except (BotError, NotAnEvaluator, ValueError) as exc:
        print(_("error: {reason}").format(reason=exc), file=sys.stderr)
        return 2
    name = args.name or Home.at(args.home).saved_name() or login_name()
    deadline = args.person_deadline if args.person_deadline > 0 else None
    return trio.run(
        lambda: local_game(
            rules,
            name,
            args.bots,
            args.seed,
            plain=args.plain,
            autoplay=autoplay,
            deadline=deadline,
            pace=args.pace,
            coach=coach,
            coach_lines=args.coach,
        )
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from belote_p2p.i18n import _

    p = sub.add_parser(
        "play",
        help=_("play against bots at this terminal, no network"),
        description=_(
            "Play a whole game at this terminal against bots, with no network: the same "
            "table as a networked game, nothing signed or recorded (for that, use host "
            "--bots 3). You sit South, your partner North, East plays after you; "
            "three-handed against East and West, two-handed against North."
        ),
    )
    p.add_argument("--local", action="store_true",
                   help=_("no network (always so; kept for old scripts)"))  # fmt: skip
    p.add_argument("--variant", choices=sorted(RULE_SETS), default="classic",
                   help=_("the rules (classic)"))  # fmt: skip
    p.add_argument(
        "--target", type=positive_int, default=501, metavar=_("POINTS"),
        help=_("score that wins the game (501)"),
    )  # fmt: skip
    p.add_argument("--bots", default="rules", metavar=_("BOT"),
                   help=_("the bots, NAME[:key=value...] (rules)"))  # fmt: skip
    p.add_argument(
        "--seed", type=seed, metavar=_("SEED"), help=_("seed of the deals and bots (random)")
    )
    p.add_argument(
        "--name", metavar=_("NAME"),
        help=_("your name at the table (the last one used, or your login)"),
    )  # fmt: skip
    p.add_argument(
        "--home", metavar=_("DIR"),
        help=_("where your name is kept ({home})").format(home=Home.default()),
    )  # fmt: skip
    p.add_argument("--first-dealer", type=int, choices=range(4), metavar=_("SEAT"),
                   help=_("the seat that deals first (the last seat, so that you speak "
                          "first)"))  # fmt: skip
    p.add_argument("--person-deadline", type=seconds, default=0.0, metavar=_("S"),
                   help=_("seconds for each of your decisions (0: no limit)"))  # fmt: skip
    p.add_argument(
        "--autoplay", default="rules", metavar=_("BOT"),
        help=_("the bot that plays your turn when your time runs out (rules)"),
    )  # fmt: skip
    p.add_argument("--pace", type=seconds, default=0.6, metavar=_("S"),
                   help=_("seconds between two bot moves (0.6)"))  # fmt: skip
    p.add_argument(
        "--plain", action="store_true",
        help=_("plain lines, no colour (screen readers, logs) ({off})").format(off=_("off")),
    )  # fmt: skip
    p.add_argument(
        "--hints", action=argparse.BooleanOptionalAction, default=True,
        help=_("hint (or Tab) asks the expert for its choice and why ({on})").format(on=_("on")),
    )  # fmt: skip
    p.add_argument(
        "--coach", action="store_true",
        help=_("after each round, a line names your costliest decision in it ({off})").format(
            off=_("off")
        ),
    )  # fmt: skip
    p.add_argument(
        "--coach-bot", default=COACH_BOT, metavar=_("BOT"),
        help=_("the bot that gives the hints and the coach's line"),
    )  # fmt: skip
    p.set_defaults(func=command)
