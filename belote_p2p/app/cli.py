"""The ``belote-p2p`` command: one sub-command per module, each registering its own parser.

The language is chosen before the parser is built (its help is written in it): ``--lang``,
anywhere on the line, else the home's remembered choice, else the locale
(:func:`belote_p2p.i18n.choose`); a ``--lang`` given is remembered in the home (``--home``,
or the default one).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from belote_p2p import i18n
from belote_p2p.i18n import _, argparse_words

from . import homedir

# Each module named here has ``register(subparsers)``, which adds the sub-commands listed with
# it and sets ``func`` (taking the parsed arguments, returning the exit status) as the parser
# default. Only the module of the command given is imported: ``referee`` need not load trio,
# rich and the network stack (tests/test_cli.py checks that the lists stay true).
COMMANDS: dict[str, tuple[str, ...]] = {
    "belote_p2p.app.local": ("play",),
    "belote_p2p.app.referee": ("referee",),
    "belote_p2p.app.records": ("verify", "replay", "games", "import", "profile", "ranking"),
    "belote_p2p.app.analyse": ("analyse",),
    "belote_p2p.app.botcmds": ("bots", "arena", "tournament"),
    "belote_p2p.app.host": ("host",),
    "belote_p2p.app.join": ("join",),
    "belote_p2p.app.resume": ("resume",),
    "belote_p2p.app.demo": ("demo",),
    "belote_p2p.app.lan": ("tables",),
    "belote_p2p.app.web.lobby": ("web",),
    "belote_p2p.app.conformance": ("conformance",),
    "belote_p2p.app.relay": ("relay",),
    "belote_p2p.app.watch": ("watch",),
}


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv`` (its first word that is neither an option nor the
    value of ``--lang``)."""
    words = iter(argv)
    for word in words:
        if word == "--lang":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _option_value(argv: Sequence[str], option: str) -> str | None:
    """The value of ``option`` in ``argv`` (``--lang fr`` or ``--lang=fr``; the last one
    given), read before the parser exists."""
    found = None
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == option and i + 1 < len(argv):
            found = argv[i + 1]
        elif word.startswith(option + "="):
            found = word.partition("=")[2]
    return found


def choose_language(argv: Sequence[str]) -> str:
    """The language of this command (see the module docstring), remembered in the home
    when ``--lang`` names one; a ``--lang`` that names none is left to the parser to refuse."""
    requested = _option_value(argv, "--lang")
    home = homedir.root(_option_value(argv, "--home"))
    language = i18n.normalize(requested)
    if language is not None:
        i18n.remember(home, language)
    return i18n.choose(language, home)


def add_lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help=_("the language of what you read: {languages} (remembered in the home)").format(
            languages=", ".join(f"{code} ({name})" for code, name in i18n.LANGUAGE_NAMES.items())
        ),
    )


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default in brackets, ``(60)``, the form the
    hand-written ones take, unless it already says it. A flag's
    default is said in words where it matters (``--no-listen``'s stored True is no default
    a person can read), a pair ``--x/--no-x`` says ``on`` or ``off``, and a default that is
    no single value (a list, a tuple) is left to the help text."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            text == argparse.SUPPRESS
            or not action.option_strings
            or default in (None, argparse.SUPPRESS)
            or isinstance(default, list | tuple)
            or isinstance(action, _SILENT_ACTIONS)
            or "%(default)" in text
        ):
            return text
        if isinstance(action, argparse.BooleanOptionalAction):
            shown = _("on") if default else _("off")
            return text if f"({shown})" in text else f"{text} ({shown})"
        if any(f"({shown}" in text or f"default {shown}" in text for shown in _shown(default)):
            return text
        return f"{text} ({_shown(default)[-1]})"


_SILENT_ACTIONS = (
    argparse._VersionAction,
    argparse._HelpAction,
    argparse._StoreTrueAction,
    argparse._StoreFalseAction,
    argparse._AppendAction,
)


def _shown(default: object) -> list[str]:
    """How a help text may already show ``default``: ``60.0`` as ``60`` too (the last form
    is the one a help text is given)."""
    forms = [str(default)]
    if isinstance(default, float):
        forms.append(f"{default:g}")
    return forms


class Parser(argparse.ArgumentParser):
    """A parser whose help shows every default (:class:`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command's module is loaded (if it is one)."""
    from belote_p2p import __version__

    parser = Parser(
        prog="belote-p2p", description=_("Peer-to-peer Belote with no server, and bots as plugins.")
    )
    parser.add_argument("--version", action="version", version=f"belote-p2p {__version__}")
    add_lang_option(parser)
    sub = parser.add_subparsers(dest="command", metavar=_("COMMAND"), parser_class=Parser)
    sub.required = True
    modules = [m for m, names in COMMANDS.items() if command in names] or list(COMMANDS)
    for name in modules:
        importlib.import_module(name).register(sub)
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, command_parser in sub.choices.items():
        add_lang_option(command_parser)
        if not command_parser.description:
            command_parser.description = helps.get(name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    i18n.set_language(choose_language(argv))
    argparse_words.install()
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except KeyboardInterrupt:
        print("\n" + _("interrupted"), file=sys.stderr)
        return 130
    except BaseExceptionGroup as group:
        # trio wraps a Ctrl-C that reached a task: still an interruption, not a crash.
        rest = group.split(KeyboardInterrupt)[1]
        if rest is not None:
            raise
        print("\n" + _("interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
