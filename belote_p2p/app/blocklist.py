"""``belote-p2p block``: the players one does not want at one's table, by key fingerprint.

The list is local (``<home>/blocked``: one fingerprint a line, then a note of one's own) and
nobody else ever sees it. ``join --any`` skips a table whose host or seated player is on it
and says not ready to a ready check that seats one; a host's lobby refuses such a joiner as
it refuses one the host sent away (the joiner hears only that it is not seated). A key is
free to make, so a block stops a player who keeps a key, not one who makes new ones: the
ready check and the host's refusal (``PROTOCOL.md`` §6.0) are the rest of the manners.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from belote_p2p.i18n import _
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.private import private_directory, write_private

from .home import Home

BLOCK_FILE_NAME = "blocked"
FINGERPRINT = re.compile(r"[0-9a-f]{16}")
MAX_NOTE = 200


def parse_fingerprint(text: str) -> str:
    """``text`` as a key fingerprint (``5647-5aa7-5463-474c``; dashes, spaces and case do
    not matter); ``ValueError`` if it is none."""
    digits = "".join(text.split()).replace("-", "").lower()
    if not FINGERPRINT.fullmatch(digits):
        raise ValueError(
            _("{text!r} is not a key fingerprint (four groups of four hex digits, as "
              "`join` and `tables` print them)").format(text=text)
        )  # fmt: skip
    return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


@dataclass(frozen=True)
class BlockList:
    """The fingerprints a home blocks, each with its note."""

    entries: dict[str, str]

    @classmethod
    def of(cls, home: Home) -> BlockList:
        """The home's list (empty when it has none; a line that is no fingerprint is
        skipped)."""
        try:
            text = (home.root / BLOCK_FILE_NAME).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return cls({})
        entries = {}
        for line in text.splitlines():
            word, _sep, note = line.strip().partition(" ")
            try:
                entries[parse_fingerprint(word)] = note.strip()
            except ValueError:
                continue
        return cls(entries)

    def save(self, home: Home) -> None:
        lines = "".join(f"{fp} {note}".rstrip() + "\n" for fp, note in sorted(self.entries.items()))
        write_private(private_directory(home.root) / BLOCK_FILE_NAME, lines.encode())

    def blocks(self, key: bytes) -> bool:
        return fingerprint(key) in self.entries

    def blocked_among(self, keys: Iterable[bytes]) -> list[bytes]:
        return [key for key in keys if self.blocks(key)]


def _block_command(args: argparse.Namespace) -> int:
    home = Home.at(args.home)
    blocked = BlockList.of(home)
    try:
        chosen = [parse_fingerprint(fp) for fp in args.fingerprints]
    except ValueError as exc:
        print(_("error: {reason}").format(reason=exc), file=sys.stderr)
        return 2
    if args.list or not chosen:
        if not blocked.entries:
            print(_("Nobody is blocked."))
        for fp, note in sorted(blocked.entries.items()):
            print(f"{fp}  {safe_text(note)}".rstrip())
        return 0
    entries = dict(blocked.entries)
    for fp in chosen:
        if args.remove:
            if entries.pop(fp, None) is None:
                print(_("{fingerprint} was not blocked.").format(fingerprint=fp))
            else:
                print(_("{fingerprint} is no longer blocked.").format(fingerprint=fp))
        else:
            entries[fp] = " ".join((args.note or "").split())[:MAX_NOTE]
            print(_("Blocked {fingerprint}: `join --any` passes its tables by, and your "
                    "lobby does not seat it.").format(fingerprint=fp))  # fmt: skip
    BlockList(entries).save(home)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "block",
        help=_("keep a player away from your tables, by key fingerprint"),
        description=_(
            "Block players by the fingerprint of their key (as `join`, `tables` and the "
            "lobby print it): `join --any` passes by a table they host or sit at, a ready "
            "check that seats one is answered not ready, and your own lobby does not seat "
            "them. The list is yours alone (kept in the home). Without a fingerprint, or "
            "with --list: the list."
        ),
    )
    p.add_argument(
        "fingerprints",
        nargs="*",
        metavar=_("FINGERPRINT"),
        help=_("the key fingerprints to block (or to unblock with --remove)"),
    )
    p.add_argument("--note", metavar=_("TEXT"), help=_("a note of yours kept beside them"))
    p.add_argument("--remove", action="store_true", help=_("unblock them instead"))
    p.add_argument("--list", action="store_true", help=_("print the list"))
    p.add_argument("--home", metavar="DIR", help=_("identity and records ({home})").format(
        home=Home.default()))  # fmt: skip
    p.set_defaults(func=_block_command)
