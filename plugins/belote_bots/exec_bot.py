"""The ``exec`` bot: a program in any language, speaking ``protocol/BOTS.md`` on its
standard input and output (``exec:cmd=./mybot``, ``exec:cmd='node bot.js':level=2``).

The work is :class:`belote_p2p.bot.ProgramBot`'s; this module only announces it, as any
plugin announces its bots. A package wrapping its own program does the same with
``BotInfo("mybot", functools.partial(ProgramBot, cmd="mybot-engine"))``.
"""

from __future__ import annotations

from belote_p2p.bot import BotInfo, ProgramBot

EXEC = BotInfo(
    "exec",
    ProgramBot,
    "0.1.0",
    "A program in any language on stdin/stdout, JSON lines (cmd=PROGRAM; protocol/BOTS.md).",
)
