"""``belote-p2p demo``: a whole game between four bot processes on this machine, with
nothing to set up.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from belote_p2p.app.argtypes import positive_int
from belote_p2p.game.rules import RULE_SETS, rule_set

from .botprocs import bot_name
from .home import Home
from .host import host_game
from .seat import SeatOptions, add_seat_arguments, run_main

WORDS = {2: "two", 3: "three", 4: "four"}


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        rules = rule_set(args.variant, target=args.target)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="belote-p2p-demo-") as tmp:
        # Without --home the identities and transcripts go with the temporary directory.
        home = Home(Path(args.home) if args.home else Path(tmp))
        options = SeatOptions(
            name=bot_name(0),
            home=home,
            bot=args.bot,
            seed=args.seed,
            bind="127.0.0.1",
            quiet=False,
            timing_log=None,
            bot_deadline=args.bot_deadline,
            person_deadline=args.person_deadline,
            grace=args.grace,
            connect_timeout=args.connect_timeout,
        )
        n = WORDS[rules.seats]
        print(f"Demo: {n} {args.bot} bots, {n} processes, one table on 127.0.0.1", flush=True)
        status = run_main(lambda: host_game(options, rules, 0, rules.seats - 1, fill=args.bot))
        if not args.home:
            print(
                "(The demo's identities, transcripts and profiles were in a temporary folder;"
                " run `belote-p2p demo --home DIR` to keep them.)",
                flush=True,
            )
        return status


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    variants = sorted(RULE_SETS)
    demo = sub.add_parser(
        "demo",
        help="bot processes play a game on this machine",
        description="Start a bot peer per seat (four; three for three-handed, two for "
        "two-handed) as processes on 127.0.0.1, play a whole game over TCP and print it; exit "
        "0 if every process did and the final scores agree.",
    )
    demo.add_argument("--variant", choices=variants, default="classic", help="the rules")
    demo.add_argument("--target", type=positive_int, default=501, help="score that wins the game")
    demo.add_argument("--home", metavar="DIR", help="keep identities and transcripts here")
    add_seat_arguments(demo, seat=False)
    demo.set_defaults(func=cmd_demo, bot="rules")
