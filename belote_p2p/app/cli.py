"""The ``belote-p2p`` command: one sub-command per module, each registering its own parser."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module named here has ``register(subparsers)``, which adds the sub-commands listed with
# it and sets ``func`` (taking the parsed arguments, returning the exit status) as the parser
# default. Only the module of the command given is imported: ``referee`` need not load trio,
# rich and the network stack (tests/test_cli.py checks that the lists stay true).
COMMANDS: dict[str, tuple[str, ...]] = {
    "belote_p2p.app.local": ("play",),
    "belote_p2p.app.referee": ("referee",),
    "belote_p2p.app.records": ("verify", "replay", "import", "profile", "ranking"),
    "belote_p2p.app.botcmds": ("bots", "arena"),
    "belote_p2p.app.host": ("host",),
    "belote_p2p.app.join": ("join",),
    "belote_p2p.app.resume": ("resume",),
    "belote_p2p.app.demo": ("demo",),
    "belote_p2p.app.lan": ("tables",),
    "belote_p2p.app.web.lobby": ("web",),
    "belote_p2p.app.conformance": ("conformance",),
    "belote_p2p.app.relay": ("relay",),
}


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv`` (its first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command's module is loaded (if it is one)."""
    from belote_p2p import __version__

    parser = argparse.ArgumentParser(
        prog="belote-p2p", description="Peer-to-peer Belote with no server, and bots as plugins."
    )
    parser.add_argument("--version", action="version", version=f"belote-p2p {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    modules = [m for m, names in COMMANDS.items() if command in names] or list(COMMANDS)
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
