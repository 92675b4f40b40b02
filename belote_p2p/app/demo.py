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
from belote_p2p.i18n import _, ngettext

from .botprocs import bot_name
from .home import Home
from .host import host_game
from .seat import SeatOptions, add_seat_arguments, run_main
from .wording import error_text


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        rules = rule_set(args.variant, target=args.target)
    except ValueError as exc:
        print(error_text(exc), file=sys.stderr)
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
        n = rules.seats
        print(
            ngettext(
                "Demo: {n} {bot} bot, {n} process, one table on 127.0.0.1",
                "Demo: {n} {bot} bots, {n} processes, one table on 127.0.0.1",
                n,
            ).format(n=n, bot=args.bot),
            flush=True,
        )
        status = run_main(lambda: host_game(options, rules, 0, rules.seats - 1, fill=args.bot))
        if not args.home:
            print(
                _(
                    "(The demo's identities, transcripts and profiles were in a temporary "
                    "folder; run `belote-p2p demo --home DIR` to keep them.)"
                ),
                flush=True,
            )
        return status


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    variants = sorted(RULE_SETS)
    demo = sub.add_parser(
        "demo",
        help=_("bot processes play a game on this machine"),
        description=_(
            "Start a bot peer per seat (four; three for three-handed, two for two-handed) as "
            "processes on 127.0.0.1, play a whole game over TCP and print it; exit 0 if "
            "every process did and the final scores agree."
        ),
    )
    demo.add_argument("--variant", choices=variants, default="classic", help=_("the rules"))
    demo.add_argument(
        "--target", type=positive_int, default=501, metavar=_("POINTS"),
        help=_("score that wins the game"),
    )  # fmt: skip
    demo.add_argument("--home", metavar=_("DIR"), help=_("keep identities and transcripts here"))
    add_seat_arguments(demo, seat=False)
    demo.set_defaults(func=cmd_demo, bot="rules")
