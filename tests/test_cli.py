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
