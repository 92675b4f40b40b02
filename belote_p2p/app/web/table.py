"""One seat's live table in the browser: the view fed by the peer's events and status, the
decision the seat owes, and the :class:`WebPlayer` the peer asks.

Everything here runs in the peer's trio thread: the peer calls :meth:`WebTable.on_event`
and :meth:`WebTable.on_status`, its driver awaits :meth:`WebPlayer.decide`, and the
server's WebSocket tasks call :meth:`WebTable.submit`. A :class:`Hub` counts changes, so
that every open page (a reload, a second tab) gets the new state.

Chat (:attr:`WebTable.send_chat`, the peer's control) and the stand-in that plays a turn
whose time ran out (:class:`~belote_p2p.players.autoplay.Autoplay`, said by
:meth:`WebTable.autoplayed`) are the terminal table's; the ``rematch`` hook is None (the
page hides its button) until set (:func:`~.seat.offer_rematch`).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.game.engine import Action, RoundRecord
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet
from belote_p2p.i18n import _
from belote_p2p.net.peer import PeerStatus
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import ActionTaken, ChatMessage, Event, GameOver, RoundAudited

from ..seatview import SeatView
from ..wording import action_text
from .viewmodel import JSON, legal_by_code, table_model

LOG_LINES = 12
CHAT_LINES = 50
CHAT_LENGTH = 200


class Hub:
    """A change counter that tasks can wait on (every open page's sender)."""

    def __init__(self) -> None:
        self.version = 0
        self._changed = trio.Event()

    def bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_past(self, version: int) -> int:
        """Wait until the version is past ``version``; the new version."""
        while self.version == version:
            await self._changed.wait()
        return self.version


@dataclass
class _Pending:
    number: int
    observation: Observation
    send: trio.MemorySendChannel[Action | None]
    """An action, or None to resign."""


@dataclass(frozen=True, slots=True)
class ChatLine:
    seat: int
    name: str
    text: str


class WebTable:
    """A :class:`SeatView` with what the page adds: the decision owed, the seats'
    deadlines and connections, the last round's record, a short log, chat and hooks."""

    def __init__(
        self,
        view: SeatView,
        hub: Hub | None = None,
        *,
        config_deadline: Callable[[int], float] | None = None,
        clock: Callable[[], float] = time.monotonic,
        table_id: str = "",
    ) -> None:
        self.view = view
        self.table_id = table_id
        self.hub = hub or Hub()
        self.clock = clock
        self.config_deadline = config_deadline
        self.pending: _Pending | None = None
        self.decisions = 0
        self.record: RoundRecord | None = None
        self.last_summary: tuple[str, ...] = ()
        """The last round's summary lines, kept through the next round."""
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.chat: deque[ChatLine] = deque(maxlen=CHAT_LINES)
        self.resign_asked = False
        self.played_out = False
        """The game was played to its end (a rematch is offered only then: not after a
        resignation or an abandonment)."""
        self.result: str | None = None
        """The line printed when the game is over (experience, transcript), once known."""
        self.finished = trio.Event()
        """The game is over for this seat (the peer returned)."""
        self.left = trio.Event()
        """The person left the table page (its Leave button)."""
        # Hooks (see the module docstring).
        self.send_chat: Callable[[str], None] | None = None
        """Sends a chat line to the table (the session's ``chat`` body, when it exists)."""
        self.rematch: Callable[[bool], Awaitable[None]] | None = None
        """Answers the question of a new game with the same players (when the session
        offers it): yes or no."""
        self.rematch_question: Callable[[], str] | None = None
        """The question, in the reader's words (who offers the game, its rules)."""
        self.hints: Callable[[Observation], Awaitable[str]] | None = None
        """The expert's hint of a decision, in words (the table's rule of hints: None
        where it is off)."""
        self.hint: tuple[int, str] | None = None
        """The last hint asked: the decision's number and its words."""

    @property
    def seat(self) -> int:
        return self.view.seat

    @property
    def rules(self) -> RuleSet:
        return self.view.rules

    # -- fed by the peer -------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """The peer's ``on_event``: the view takes the event; every open page redraws."""
        notices = self.view.apply(event)
        if isinstance(event, ActionTaken) and self.config_deadline is not None:
            nxt = event.state.to_act
            if 0 <= nxt < self.view.seats and not event.state.is_over:
                self.view.set_deadline(nxt, self.clock() + self.config_deadline(nxt))
        if isinstance(event, RoundAudited):
            self.record = event.record
        if isinstance(event, GameOver):
            self.played_out = True
        if isinstance(event, ChatMessage):
            self.add_chat(event.seat, event.text)
            self.last_summary = self.view.summary  # the view forgets it at the next deal
        self.log.extend(n.text for n in notices)
        self.hub.bump()

    def on_status(self, status: PeerStatus) -> None:
        """The peer's ``on_status``: deadlines (ours included), late seats and lost links
        (:meth:`~belote_p2p.app.seatview.SeatView.apply_status`)."""
        view = self.view
        before = (view.deadline, view.late, view.disconnected)
        notices = view.apply_status(status, self.clock())
        self.log.extend(n.text for n in notices)
        deadline, late, disconnected = before
        if (
            notices
            or disconnected != view.disconnected
            or _moved(deadline, view.deadline)
            or _moved(late, view.late)
        ):
            self.hub.bump()

    def add_chat(self, seat: int, text: str) -> None:
        """A chat line from ``seat`` (the hook for the session's chat events)."""
        self.chat.append(ChatLine(seat, self.view.name(seat), text[:CHAT_LENGTH]))
        self.hub.bump()

    def autoplayed(self, observation: Observation, action: Action) -> None:
        """Our time ran out and the stand-in played ``action``: say so."""
        self.pending = None
        self.log.append(
            _("Time's up: your peer played {action} for you.").format(action=action_text(action))
        )
        self.hub.bump()

    def note(self, text: str) -> None:
        """A line from the seat's job (who it waits for while the mesh opens): in the log,
        and in the turn line until the table is ready."""
        self.log.append(text)
        if not self.view.ready:
            self.view.opening = text
        self.hub.bump()

    def game_over(self, result: str | None) -> None:
        self.result = result
        self.finished.set()
        self.hub.bump()

    # -- the seat's decisions --------------------------------------------------------------

    async def decide(self, observation: Observation) -> Action | None:
        """Wait for the page's answer to this decision (None: the person resigned)."""
        if self.resign_asked:
            return None
        self.decisions += 1
        send, receive = trio.open_memory_channel[Action | None](1)
        self.pending = _Pending(self.decisions, observation, send)
        self.view.observe(observation)
        self.hub.bump()
        try:
            async with receive:
                return await receive.receive()
        finally:
            self.pending = None
            self.hub.bump()

    def submit(self, code: str, decision: int | None) -> str | None:
        """The page chose ``code`` for decision number ``decision``; None if taken, else
        why not (a stale click, not the seat's turn, not legal now)."""
        pending = self.pending
        if pending is None:
            return _("It is not your turn.")
        if decision is not None and decision != pending.number:
            return _("That choice was for an earlier turn.")
        action = legal_by_code(pending.observation.legal).get(code)
        if action is None:
            return _("{code!r} is not legal now.").format(code=code)
        try:
            pending.send.send_nowait(action)
        except trio.WouldBlock:
            return _("An answer is already on its way.")
        return None

    def resign(self) -> None:
        """The person resigns: now if a decision is owed, else at the next one."""
        self.resign_asked = True
        self.view.resign()
        if self.pending is not None:
            with contextlib.suppress(trio.WouldBlock):
                self.pending.send.send_nowait(None)
        self.hub.bump()

    async def ask_hint(self) -> str | None:
        """The page asked for a hint on the decision owed: it is shown with the decision
        (None), or why not."""
        if self.hints is None:
            return _("Hints are off at this table (the host's --hints turns them on).")
        pending = self.pending
        if pending is None:
            return _("A hint is for your turn.")
        text = await self.hints(pending.observation)
        self.hint = (pending.number, text)
        self.hub.bump()
        return None

    # -- the page ---------------------------------------------------------------------------

    def model(self) -> JSON:
        pending = self.pending
        model = table_model(
            self.view,
            now=self.clock(),
            decision=pending.number if pending is not None else None,
            record=self.record,
            log=list(self.log),
        )
        model["table_id"] = self.table_id
        model["last_summary"] = list(self.last_summary)
        model["chat"] = [{"seat": c.seat, "name": c.name, "text": c.text} for c in self.chat]
        model["chat_enabled"] = self.send_chat is not None
        model["rematch_enabled"] = (
            self.rematch is not None and self.finished.is_set() and self.played_out
        )
        question = self.rematch_question
        model["rematch_question"] = (
            question() if model["rematch_enabled"] and question is not None else ""
        )
        model["finished"] = self.finished.is_set()
        model["result"] = self.result
        model["resigning"] = self.resign_asked
        model["hints_enabled"] = self.hints is not None and self.view.me is not None
        hint = self.hint
        current = hint is not None and pending is not None and hint[0] == pending.number
        model["hint"] = hint[1] if hint is not None and current else ""
        return model

    async def handle(self, message: dict[str, Any]) -> str | None:
        """One message from the page; an error to show it, or None."""
        kind = message.get("type")
        if kind == "act":
            code, decision = message.get("code"), message.get("decision")
            if not isinstance(code, str) or not (decision is None or isinstance(decision, int)):
                return _("A malformed action.")
            return self.submit(code, decision)
        if kind == "resign":
            self.resign()
            return None
        if kind == "leave":
            if not self.finished.is_set() and self.view.me is not None:  # a watcher just goes
                return _("The game is not over: resign first to leave it.")
            self.left.set()
            self.hub.bump()
            return None
        if kind == "chat":
            text = message.get("text")
            if self.send_chat is None:
                return _("Chat is not available at this table.")
            if not isinstance(text, str) or not text.strip():
                return _("An empty chat line.")
            self.send_chat(text.strip()[:CHAT_LENGTH])
            return None
        if kind == "hint":
            return await self.ask_hint()
        if kind == "rematch":
            if self.rematch is None or not self.finished.is_set() or not self.played_out:
                return _("No rematch is offered: the game was not played to its end.")
            again = message.get("again", True)
            if not isinstance(again, bool):
                return _("A malformed answer.")
            await self.rematch(again)
            return None
        return _("Unknown message {kind!r}.").format(kind=kind)


def _moved(before: tuple[int, float] | None, after: tuple[int, float] | None) -> bool:
    """A deadline changed seat, or by more than a second (the page ticks the rest)."""
    if before is None or after is None:
        return before != after
    return before[0] != after[0] or abs(before[1] - after[1]) > 1.0


class WebPlayer:
    """A :class:`~belote_p2p.players.player.Player` answered in the browser.

    With no page open the seat waits as the terminal's does: the table's decision
    deadline, then the stand-in plays (:class:`~belote_p2p.players.autoplay.Autoplay`
    wraps this player), or with none the others' grace.
    """

    def __init__(self, table: WebTable, *, turn_seconds: float | None = None) -> None:
        self.table = table
        self.turn_seconds = turn_seconds

    def new_game(self, rules: RuleSet, seat: int) -> None:
        pass

    def new_round(self, observation: Observation) -> None:
        pass

    async def decide(self, observation: Observation) -> Action:
        return self._taken(await self.table.decide(observation))

    @staticmethod
    def _taken(answer: Action | None) -> Action:
        if answer is None:
            raise Resigned("the player resigned")
        return answer
