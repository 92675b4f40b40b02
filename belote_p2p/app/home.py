"""A peer's data directory: its identity, its games, its deck secrets and its profile.

Every command that keeps something (``host``, ``join``, ``resume``, ``demo``, ``import``,
``profile``, ``ranking``...) takes ``--home DIR`` and finds its files through one
:class:`Home`, so that the layout is written down once::

    <home>/identity.key                              the Ed25519 identity (mode 0600)
    <home>/games/<table id>-seat<k>.transcript       one game record per table and seat
    <home>/secrets/<table id>-seat<k>.secrets        each round's deck secrets (fsynced)
    <home>/profile.sqlite3                           XP, statistics, challenges
    <home>/bots/<k>/                                 the homes of ``host --bots`` processes
    <home>/name                                      the name last played under
    <home>/log.txt                                   the peer's log while a person plays

The default home is ``$XDG_DATA_HOME/belote-p2p``, else ``~/.local/share/belote-p2p``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from belote_p2p.i18n import _
from belote_p2p.protocol.identity import KEY_FILE_NAME, Identity
from belote_p2p.protocol.private import private_directory, write_private
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import Transcript, TranscriptError, read_transcript
from belote_p2p.protocol.verify import verify_record

from .homedir import default_root, root

PROFILE_FILE_NAME = "profile.sqlite3"


@dataclass(frozen=True, slots=True)
class Home:
    """Where one peer keeps its files (see the module docstring)."""

    root: Path

    @classmethod
    def default(cls) -> Home:
        """``$XDG_DATA_HOME/belote-p2p``, else ``~/.local/share/belote-p2p``."""
        return cls(default_root())

    @classmethod
    def at(cls, directory: str | Path | None) -> Home:
        """The home given on the command line (``--home``), or the default."""
        return cls(root(directory))

    @property
    def identity_file(self) -> Path:
        return self.root / KEY_FILE_NAME

    def has_identity(self) -> bool:
        return self.identity_file.exists()

    def identity(self) -> Identity:
        """This home's identity, made on first use."""
        return Identity.load_or_create(self.root)

    @property
    def games(self) -> Path:
        return self.root / "games"

    def transcript(self, definition: TableDefinition, seat: int) -> Path:
        return self.games / f"{definition.table_id.hex()}-seat{seat}.transcript"

    def secrets(self, definition: TableDefinition, seat: int) -> FileSecrets:
        return FileSecrets(self.root / "secrets", definition.table_id, seat)

    @property
    def profile_db(self) -> Path:
        return self.root / PROFILE_FILE_NAME

    @property
    def log(self) -> Path:
        """Where the peer's log lines go while the terminal shows the table."""
        return self.root / "log.txt"

    def saved_name(self) -> str | None:
        """The name last played under from this home, if any."""
        try:
            name = (self.root / "name").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return name or None

    def save_name(self, name: str) -> None:
        with contextlib.suppress(OSError):
            write_private(private_directory(self.root) / "name", f"{name}\n".encode())

    @property
    def web_token_file(self) -> Path:
        return self.root / "web-token"

    def web_token(self) -> str:
        """The secret of this home's table page (``--web``), the same at every start, so
        that a tab left open reconnects once the game is resumed. Kept readable by its owner
        only (mode 0600); a new one is made when there is none (or it cannot be read)."""
        path = self.web_token_file
        with contextlib.suppress(OSError, UnicodeDecodeError):
            token = path.read_text(encoding="ascii").strip()
            if len(token) >= 32:
                path.chmod(0o600)
                return token
        token = secrets.token_urlsafe(32)
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(token + "\n")
        return token

    def bot(self, number: int) -> Home:
        """The home of the ``number``-th bot process that ``host --bots`` starts."""
        return Home(self.root / "bots" / str(number))

    def __str__(self) -> str:
        return str(self.root)


def game_ended(
    definition: TableDefinition, envelopes: Sequence[bytes], writer: int | None = None
) -> bool:
    """The record proves the game of ``definition`` over: replayed as ``belote-p2p verify``
    does, it is finished, abandoned, or stopped by a fault the replay finds itself
    (:attr:`~belote_p2p.protocol.verify.Verdict.over`). A peer's ``fault`` report or any
    other body proves nothing by being there. The replay checks every proof: about 0.13 s
    per round played (a one-round game 0.19 s, a seven-round one 0.9 s on two cores).
    ``writer``: the record's seat, whose own record ends where it left a game that went on
    without it."""
    return verify_record(definition, envelopes, writer=writer).over


def unfinished_games(home: Home, identity: Identity) -> list[Transcript]:
    """Transcripts in ``home`` of games of this identity that did not end."""
    found = []
    for path in sorted(home.games.glob("*.transcript")):
        try:
            transcript = read_transcript(path)
        except (OSError, TranscriptError):
            continue
        if transcript.definition.seats[transcript.seat].key != identity.public_key_bytes:
            continue  # another identity's game: not ours to resume, no need to replay it
        if not game_ended(transcript.definition, transcript.envelopes, transcript.seat):
            found.append(transcript)
    return found


def mention_unfinished(home: Home, identity: Identity) -> None:
    for transcript in unfinished_games(home, identity):
        table = transcript.definition.table_id.hex()
        note = _(
            "note: the game at table {table} (seat {seat}) did not end; `{command}` continues it"
        )
        print(
            note.format(
                table=table, seat=transcript.seat, command=f"belote-p2p resume --home {home}"
            ),
            file=sys.stderr,
        )
