"""The command line: every module registers exactly the commands ``cli.COMMANDS`` says."""

from __future__ import annotations

import argparse
import importlib

import pytest

from belote_p2p.app import cli


@pytest.mark.parametrize("module", sorted(cli.COMMANDS))
def test_each_module_registers_the_commands_listed_for_it(module: str) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(module).register(sub)
    assert set(sub.choices) == set(cli.COMMANDS[module])


def test_a_command_loads_only_its_module_and_help_lists_all() -> None:
    everything = cli.build_parser()
    action = next(a for a in everything._actions if isinstance(a, argparse._SubParsersAction))
    assert set(action.choices) == {c for names in cli.COMMANDS.values() for c in names}
    one = cli.build_parser("referee")
    action = next(a for a in one._actions if isinstance(a, argparse._SubParsersAction))
    assert set(action.choices) == {"referee"}
    assert cli._command_of(["--version"]) is None
    assert cli._command_of(["verify", "f"]) == "verify"


def every_option() -> list[tuple[str, argparse.Action]]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [
        (name, action)
        for name, command in sub.choices.items()
        for action in command._actions
        if action.option_strings and action.help != argparse.SUPPRESS
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["host", "--port", "99999"],
        ["host", "--port", "-5"],
        ["web", "--web-port", "99999"],
        ["host", "--target", "0"],
        ["play", "--pace", "-1"],
        ["join", "--person-deadline", "nan"],
        ["relay", "--max-tables", "many"],
        ["arena", "--bots", "rules,rules", "--jobs", "0"],
        ["tables", "--listen", "0"],
    ],
)
def test_a_number_out_of_range_is_one_line_of_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"belote-p2p {argv[0]}: error: argument {argv[-2]}: ")
    assert "Traceback" not in "\n".join(err)


def test_every_number_option_is_checked() -> None:
    unchecked = [
        (name, action.option_strings)
        for name, action in every_option()
        if action.type in (int, float) and action.choices is None
    ]
    assert unchecked == []
