"""How a person's seat is shown in the browser (``--web``): light, so that the commands can
name it without loading the web server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import WebServer

DEFAULT_LINGER = 600.0


@dataclass
class RematchVote:
    """The page's answer to another game (its Rematch button), which ``host`` and ``join``
    read once the page is left (:func:`belote_p2p.app.rematch.asker`)."""

    wanted: bool = False

    def take(self) -> bool:
        """The answer, forgotten for the next game."""
        wanted, self.wanted = self.wanted, False
        return wanted


@dataclass(frozen=True)
class WebOptions:
    port: int = 0
    """The page's port on 127.0.0.1 (0: any free port)."""
    open_browser: bool = True
    """Open the page in the default browser (else only print its URL)."""
    linger: float = DEFAULT_LINGER
    """Seconds the page stays served after the game, until the person leaves it."""
    server: WebServer | None = None
    """A server already running (the ``belote-p2p web`` lobby's): the table joins it."""
    token: str | None = field(default=None, repr=False)
    """The page's secret (:meth:`~belote_p2p.app.home.Home.web_token`: the home's, stable
    across starts); None: a new one."""
    home: Path | None = None
    """The home's directory, where the page's choice of language is remembered (as
    ``--lang`` is); None: for this page only."""
    vote: RematchVote = field(default_factory=RematchVote, compare=False)
    """The person's answer to another game, given on the page."""
    tell: Callable[[str], None] | None = field(default=None, compare=False)
    """Shows a line on the page between games (the ``belote-p2p web`` lobby's status): who
    wants another game, who does not, what the seat waits for."""
