"""The commands a person types besides a game: ``games`` and a game by its number, help
that shows every default, errors in words, the option names ``tables`` shares with
``join``, the arena's checks, the default name, beacons heard on the host's machine, and
what a bot seat says of endless redeals."""

from __future__ import annotations

import argparse
import io
import re
import socket
from pathlib import Path

import pytest
import trio
from helpers import (
    HEARING,
    LOOPBACK,
    dealt,
    free_udp_port,
    make_table,
    played_game,
)

from belote_p2p.app import cli
from belote_p2p.app.output import REDEALS_NOTICE, Printer
from belote_p2p.app.seat import login_name, seat_options
from belote_p2p.game.audit import AuditReport
from belote_p2p.game.engine import PASS
from belote_p2p.net.discovery import Beacon, discover, send_beacons
from belote_p2p.protocol.events import RoundAudited

CARD = re.compile(r"\b(10|[7-9JQKA])[♠♥♦♣]")


def test_games_lists_the_home_and_commands_take_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path)
    played_game(tmp_path, 1)
    assert cli.main(["games", "--home", home]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^1\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+p0 & p2 v p1 & p3\s+classic to 151\s+\?"
                     r"\s+not checked", out, re.MULTILINE), out  # fmt: skip
    assert cli.main(["games", "--home", home, "--verify"]) == 0
    assert re.search(r"OK: the team p[0-3] & p[0-3] wins \d+-\d+ after \d+ rounds?\s+verified",
                     capsys.readouterr().out)  # fmt: skip
    assert cli.main(["import", "1", "--home", home]) == 0
    assert "imported" in capsys.readouterr().out
    assert cli.main(["games", "--home", home]) == 0
    assert re.search(r"p[0-3] & p[0-3] won \d+-\d+\s+verified", capsys.readouterr().out)
    assert cli.main(["verify", "1", "--home", home]) == 0
    assert capsys.readouterr().out.startswith("OK: ")
    assert cli.main(["replay", "1", "--home", home]) == 0
    replay = capsys.readouterr().out
    assert re.search(r"^  bids: p\d \w+", replay, re.MULTILINE), replay
    assert (CARD.search(replay) and "10♦" in replay) or "10♥" in replay or "10♠" in replay
    assert "Score sheet" in replay and "p0 & p2" in replay and "team 0" not in replay
    assert cli.main(["replay", "7", "--home", home]) == 2
    assert "no game 7" in capsys.readouterr().err


def test_every_command_has_a_description_and_every_default_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        assert command.description, name
        text = command.format_help()
        for action in command._actions:
            default = action.default
            if action.help == argparse.SUPPRESS or not action.option_strings:
                continue
            assert action.help, (name, action.option_strings)
            if default in (None, argparse.SUPPRESS) or isinstance(
                default, bool | list | tuple
            ):  # a flag, or a default a help text says in words ("none", "on")
                continue
            shown = str(default[0] if isinstance(default, tuple) else default)
            if isinstance(default, float):
                shown = f"{default:g}"
            assert shown in " ".join(text.split()), (name, action.dest, default)
        # One form for a default, in brackets at the end: "(60)", never "(default: 60)".
        flat = " ".join(text.split())
        assert "(default:" not in flat, (name, flat)
        for wrong in ("((", "([", "(True)", "(False)"):
            assert wrong not in flat, (name, wrong)
        doubled = re.search(r"\(([^()]+)\)\s+\(\1\)", text)
        assert doubled is None, (name, doubled)


def test_errors_are_said_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["join", "no-such-host.invalid:7777", "--bot", "random", "--name", "J",
                       "--home", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and "no such host name" in err and "gaierror" not in err
    taken = socket.socket()
    taken.bind((LOOPBACK, 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        status = cli.main(["host", "--port", str(port), "--bind", LOOPBACK, "--name", "H",
                           "--home", str(tmp_path), "--bot", "random", "--no-beacon"])  # fmt: skip
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert status == 1
    assert f"port {port} is in use (another table?); choose another with --port" in err
    assert "Errno" not in err


def test_tables_takes_the_option_names_of_join(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_udp_port()
    status = cli.main(["tables", "--listen", "0.05", "--beacon-address", f"{LOOPBACK}:{port}"])
    assert status == 1
    assert f"No open table heard on {LOOPBACK}:{port} in 0.05 s." in capsys.readouterr().out


def test_the_arena_refuses_a_bad_bot_option_before_the_match_and_hides_its_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = cli.main(["arena", "--bots", "pimc:iterations=abc,random", "--boards", "2"])
    captured = capsys.readouterr()
    assert status == 2 and "iterations" in captured.err and "boards" not in captured.err
    status = cli.main(["arena", "--bots", "random,random", "--boards", "2", "--jobs", "1"])
    captured = capsys.readouterr()
    assert status == 0 and "\r" not in captured.err  # standard error is no terminal here


def test_the_name_defaults_to_the_last_one_then_the_login(tmp_path: Path) -> None:
    from belote_p2p.app import host

    parser = cli.build_parser("host")
    args = parser.parse_args(["host", "--home", str(tmp_path)])
    assert seat_options(args).name == login_name()
    args = parser.parse_args(["host", "--home", str(tmp_path), "--name", "Zoé"])
    assert seat_options(args).name == "Zoé"
    args = parser.parse_args(["host", "--home", str(tmp_path)])
    assert seat_options(args).name == "Zoé"
    assert host.bots_option("3:pimc") == (3, "pimc") and host.bots_option("2") == (2, None)
    with pytest.raises(argparse.ArgumentTypeError):
        host.bots_option("4")


async def test_a_broadcast_beacon_is_heard_on_the_hosts_machine() -> None:
    port = free_udp_port()
    beacon = Beacon("Alice", "classic", 501, 3, 7777, bytes(16), bytes(32))
    found = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:

            async def listen() -> None:
                found.extend(await discover(address=(LOOPBACK, port), duration=HEARING))
                nursery.cancel_scope.cancel()

            async def announce() -> None:
                # Sent to the broadcast address, as by default: this machine hears it too.
                await send_beacons(lambda: beacon, address=("255.255.255.255", port),
                                   interval=0.05)  # fmt: skip

            nursery.start_soon(listen)
            nursery.start_soon(announce)
    assert [ad.beacon.name for ad in found] == ["Alice"]


def test_a_bot_seat_says_that_redeals_never_end_by_themselves() -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    while not state.history:
        state = state.apply(PASS)
    redeal = state.history[-1]
    assert redeal.score is None
    out = io.StringIO()
    printer = Printer(definition, 0, out=out)
    report = AuditReport(None, None, ())
    for _ in range(2 * REDEALS_NOTICE + 1):
        printer(RoundAudited(redeal, report, state))
    text = out.getvalue()
    assert text.count("deals in a row passed out: the rules set no limit") == 2
    assert f"{2 * REDEALS_NOTICE} deals in a row" in text
