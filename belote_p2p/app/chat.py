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

from belote_p2p.i18n import _
from belote_p2p.protocol.bodies import MAX_CHAT_CHARS
from belote_p2p.protocol.session import GAME_CAPS

QUICK_WORDS = {
    "gg": "gg",
    "bravo": "Bravo!",
    "oops": "Oops!",
    "merci": "Merci!",
    "hello": "Hello!",
    "salut": "Salut !",
    "oups": "Oups !",
    "hola": "¡Hola!",
    "gracias": "¡Gracias!",
    "ups": "¡Ups!",
}
"""Words typed alone that are said as they are (``gg`` says ``gg``), in the words of the
language they were typed in (``hola`` says ``¡Hola!``). What is sent, signed and shown to
every seat is what the person said, never a translation: a French and a Spanish player read
each other's own words (``gg`` and ``bravo`` are every table's)."""
SAY_PREFIXES = ("say ", "/say ", "dire ", "/dire ", "decir ", "/decir ", "'")
"""What starts a chat line, in English, French and Spanish (``'TEXT`` in any)."""
RATE_LINES = 5
RATE_SECONDS = 10.0
"""At most :data:`RATE_LINES` lines every :data:`RATE_SECONDS` seconds from this seat."""
GAME_LINES = GAME_CAPS["chat"]


def chat_line(text: str) -> str | None:
    """What ``text`` says to the table, if it is chat: ``say TEXT`` (``dire``, ``decir``,
    ``/say``, ``'TEXT``) or a quick word; None if it is not chat."""
    t = text.strip()
    lower = t.lower()
    if lower in QUICK_WORDS:
        return QUICK_WORDS[lower]
    for prefix in SAY_PREFIXES:
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
            return _("Say what? Type say and your words, e.g. say well played.")
        if len(line) > MAX_CHAT_CHARS:
            return _("A chat line is at most {most} characters ({typed} typed).").format(
                most=MAX_CHAT_CHARS, typed=len(line)
            )
        if self.sent >= GAME_LINES:
            return _("That is {lines} chat lines this game: the chat is closed for you.").format(
                lines=GAME_LINES
            )
        now = self.clock()
        while self._recent and now - self._recent[0] >= RATE_SECONDS:
            self._recent.popleft()
        if len(self._recent) >= RATE_LINES:
            wait = RATE_SECONDS - (now - self._recent[0])
            return _("Not so fast: wait {seconds} s before the next line.").format(
                seconds=max(1, round(wait))
            )
        self._recent.append(now)
        self.sent += 1
        return None
