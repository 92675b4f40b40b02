"""Chat at the table, as a person types it: ``say TEXT`` and the quick words, the local
rate cap (a received line is made safe to print by
:func:`~belote_p2p.protocol.names.safe_text`, as names are).

The line itself travels as a signed ``chat`` envelope (:meth:`TableSession.chat
<belote_p2p.protocol.session.TableSession.chat>`, which also bounds it per game); this module
is what every user interface (the terminal table, the browser's) shares in front of it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from belote_p2p.protocol.bodies import MAX_CHAT_CHARS
from belote_p2p.protocol.session import GAME_CAPS

QUICK_WORDS = {
    "gg": "gg",
    "bravo": "Bravo!",
    "oops": "Oops!",
    "merci": "Merci!",
    "hello": "Hello!",
}
"""Words typed alone that are said as they are (``gg`` says ``gg``)."""
RATE_LINES = 5
RATE_SECONDS = 10.0
"""At most :data:`RATE_LINES` lines every :data:`RATE_SECONDS` seconds from this seat."""
GAME_LINES = GAME_CAPS["chat"]


def chat_line(text: str) -> str | None:
    """What ``text`` says to the table, if it is chat: ``say TEXT`` (or ``/say``, ``'TEXT``)
    or a quick word; None if it is not chat."""
    t = text.strip()
    lower = t.lower()
    if lower in QUICK_WORDS:
        return QUICK_WORDS[lower]
    for prefix in ("say ", "/say ", "'"):
        if lower.startswith(prefix):
            return t[len(prefix) :].strip()
    return None


class ChatLimiter:
    """This seat's side of the chat bounds: a line's length, a rate, and the game's cap (the
    session refuses past it; saying so here is kinder)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.sent = 0
        self._recent: deque[float] = deque()

    def check(self, line: str) -> str | None:
        """Why ``line`` may not be sent now (None: it may; it is then counted)."""
        if not line:
            return "Say what? Type say and your words, e.g. say well played."
        if len(line) > MAX_CHAT_CHARS:
            return f"A chat line is at most {MAX_CHAT_CHARS} characters ({len(line)} typed)."
        if self.sent >= GAME_LINES:
            return f"That is {GAME_LINES} chat lines this game: the chat is closed for you."
        now = self.clock()
        while self._recent and now - self._recent[0] >= RATE_SECONDS:
            self._recent.popleft()
        if len(self._recent) >= RATE_LINES:
            wait = RATE_SECONDS - (now - self._recent[0])
            return f"Not so fast: wait {max(1, round(wait))} s before the next line."
        self._recent.append(now)
        self.sent += 1
        return None
