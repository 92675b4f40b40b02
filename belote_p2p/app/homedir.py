"""Where a home is, with nothing loaded: the command line reads the language remembered in the
home before it builds its parser (whose help is in that language), and ``referee`` or
``--help`` must not load the protocol to find it out (:mod:`.home` has the rest)."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "belote-p2p"


def default_root() -> Path:
    """``$XDG_DATA_HOME/belote-p2p``, else ``~/.local/share/belote-p2p``."""
    base = os.environ.get("XDG_DATA_HOME")
    data = Path(base) if base else Path.home() / ".local" / "share"
    return data / APP_NAME


def root(directory: str | Path | None) -> Path:
    """The home given on the command line (``--home``), or the default."""
    return Path(directory) if directory else default_root()
