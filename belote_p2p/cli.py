"""The ``belote-p2p`` command: one sub-command per module, each registering its own parser."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module named here has ``register(subparsers)``, which adds its sub-command(s) and sets
# ``func`` (taking the parsed arguments, returning the exit status) as the parser default.
COMMAND_MODULES = (
    "belote_p2p.local",
    "belote_p2p.referee",
    "belote_p2p.verify",
    "belote_p2p.bots",
    "belote_p2p.arena",
    "belote_p2p.netplay",
    "belote_p2p.discovery",
    "belote_p2p.profile",
)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="belote-p2p", description="Peer-to-peer Belote with no server, and bots as plugins."
    )
    parser.add_argument("--version", action="version", version=f"belote-p2p {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
