"""argparse's own words (``usage:``, ``options``, its errors) in the catalogs, and argparse
made to look them up there.

argparse writes its words through ``gettext`` under the names ``_`` and ``ngettext`` of its
module, for programs to translate; :func:`install` points those names at this package's
lookup, so that ``belote-p2p play --help`` and an argument error are in the player's language
like the rest of the help. The messages are listed below so that the catalogs hold them (they
keep argparse's ``%`` placeholders, which the catalog check compares as it does ``{name}``).
"""

from __future__ import annotations

import argparse

from . import N_, gettext, ngettext

WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("unrecognized arguments: %s"),
    N_("not allowed with argument %s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
    N_("can't open '%(filename)s': %(error)s"),
    N_("ignored explicit argument %r"),
    N_("unexpected option string: %s"),
)


def _plural_words() -> None:
    """Never called: it shows the catalogs' extraction argparse's one plural message."""
    ngettext("expected %s argument", "expected %s arguments", 2)


def install() -> None:
    """argparse looks its words up in this package's catalogs, in the language in use."""
    argparse._ = gettext  # type: ignore[attr-defined]
    argparse.ngettext = ngettext  # type: ignore[attr-defined]
