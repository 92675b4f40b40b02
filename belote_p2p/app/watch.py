"""``belote-p2p watch CODE``: watch a table, and the host's side of it.

A watcher holds no seat and signs nothing. It connects to the host's port with the watch
code the host printed, or to the table's relay when the host's port does not answer
(:func:`~belote_p2p.net.watch.open_watch`), gets the table's envelopes, and runs them
through an observer session (:class:`Spectator`: a
:class:`~belote_p2p.protocol.session.TableSession` with no seat), which checks everything a
verifier checks, so that a lying peer cannot fool it, nor the host, which only forwards
signed envelopes: a rule broken is shown with the seat it names. The table is shown as a
player sees it, from seat 0's place but as nobody's (a watching
:class:`~belote_p2p.app.seatview.SeatView`): every hand is hidden until its cards are played
(the observer's deck knows the turned card and the cards played, nothing more), in the
terminal (:class:`WatchUI`) or in the browser (``--web``; the ``web`` lobby's Watch entry).
``--save FILE`` keeps the record as it came (a transcript in the order of the seat that
served it, whose header names seat 0: ``belote-p2p verify FILE`` checks it). A watch whose
connection ends before the game does connects again (:func:`follow`: the host's port, then
the relay, for :data:`WATCH_PATIENCE` seconds): the seat that serves it then sends the whole
record, and the spectator skips what it already has, so a watcher outlives the host's crash
(another seat's feed at the relay serves it) and its ``resume``.

The seats' side: ``host`` (and ``resume`` of seat 0) serve watchers on their port unless
``--no-watch`` (:func:`host_watchers`), feeding the hub every envelope their session accepts;
with a relay of its own (``--relay``) every seat, the host included, also keeps a feed
waiting at it (:func:`offer_feed`, :func:`play_watched`), so that watchers reach the table
when its host's port cannot be reached, or is gone.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.game.engine import State
from belote_p2p.i18n import N_, _, format_number, ngettext
from belote_p2p.net.invite import Invitation, InvitationError, is_invitation
from belote_p2p.net.peer import PeerResult
from belote_p2p.net.relay import HostPort
from belote_p2p.net.transport import ConnectionClosed
from belote_p2p.net.watch import WatchHub, WatchLink, open_watch, read_watch_code, watch_code
from belote_p2p.protocol.bodies import table_proposal
from belote_p2p.protocol.events import Event, GameOver, PeerFault
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.names import safe_text
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import TranscriptWriter
from belote_p2p.protocol.watch import WatchError, WatchRefused
from belote_p2p.protocol.wire import Envelope

from .display import seat_names
from .homedir import default_root
from .output import print_roster
from .seat import add_web_arguments, run_main
from .tui import Command, CommandKind, TableView, TerminalUI
from .web.options import WebOptions
from .wording import error_text

WATCH_DRAIN = 5.0
"""Seconds the host gives its watchers, once the game is over, to take what is queued."""
WATCH_RETURN = 15.0
"""Seconds, instead, when the hub dropped a watcher for not reading that has not come back:
that watcher connects again (at most :data:`RETRY_MAX` apart) for the rest and the end."""
WATCH_PATIENCE = 120.0
"""Seconds a watcher whose connection ended before the game's end keeps trying to connect
again (the host resuming, another seat's feed at the relay)."""
RETRY = 0.5
"""Seconds between a watcher's first two attempts to connect again; doubled after each,
up to :data:`RETRY_MAX`."""
RETRY_MAX = 5.0


class Spectator:
    """The watcher's observer session, sans-io: the host's envelopes in, the session's
    events out, and the record so far."""

    def __init__(self, definition: TableDefinition) -> None:
        self.definition = definition
        self.session = TableSession(definition, None, None)
        self.session.start()
        self.received = 0
        self._over = False
        self._had: set[bytes] = set()

    def receive(self, data: bytes) -> list[Event]:
        """One envelope from the host; the events it brought. One it already has (a seat
        that serves a watcher again, or another seat, sends the whole record) is skipped:
        :attr:`received` counts it not. Raises :class:`WatchError` for bytes that are no envelope
        of this table (the host forwarded a forgery or garbage: unsigned bytes name no
        seat)."""
        digest = hashlib.sha256(data).digest()
        if digest in self._had:
            return []
        self._had.add(digest)
        try:
            self.session.receive(data)
        except RemoteProtocolError as exc:
            raise WatchError(
                f"the host sent a record that is no envelope of this table: {exc}"
            ) from None
        self.received += 1
        events = self.session.take_events()
        if self.session.state.is_over and not self._over:
            # A player is told when it signs the final score; an observer signs nothing.
            self._over = True
            events.append(GameOver(self.session.state))
        return events

    @property
    def state(self) -> State:
        return self.session.state

    @property
    def fault(self) -> PeerFault | None:
        """The first rule broken by a signed envelope, with its seat."""
        return self.session.fault


@dataclass(frozen=True, slots=True)
class WatchResult:
    """How a watch ended."""

    definition: TableDefinition
    state: State
    envelopes: int
    """Envelopes received and checked."""
    end: str | None
    """The host's word that the game is over (None: the connection ended before it)."""
    completed: bool
    """The record the watcher saw is a whole game, every seat's final score signed."""
    fault: PeerFault | None
    error: str | None = None
    """Why the watch stopped early (the host went, or sent what is no envelope)."""
    connections: int = 1
    """Connections the watch took (more than one: it was dropped, or the host went, and it
    connected again)."""

    @property
    def status(self) -> int:
        return 0 if self.completed and self.fault is None and self.error is None else 1


async def run_watch(
    invitation: Invitation,
    *,
    on_event: Callable[[Event], None] | None = None,
    on_envelope: Callable[[Spectator], None] | None = None,
    save: Path | None = None,
    patience: float = WATCH_PATIENCE,
) -> WatchResult:
    """Watch the table of ``invitation`` (a watch code's) to its end (:func:`follow`,
    connecting again for ``patience`` seconds when a connection ends early). Raises what
    :func:`~belote_p2p.net.watch.open_watch` raises when the table cannot be watched at
    first; every later failure is in the result."""
    async with open_watch(invitation) as link:
        return await follow(
            link, on_event=on_event, on_envelope=on_envelope, save=save,
            again=invitation, patience=patience,
        )  # fmt: skip


async def follow(
    link: WatchLink,
    *,
    on_event: Callable[[Event], None] | None = None,
    on_envelope: Callable[[Spectator], None] | None = None,
    save: Path | None = None,
    again: Invitation | None = None,
    patience: float = WATCH_PATIENCE,
) -> WatchResult:
    """Check and show what is sent to the end: ``on_event`` sees each session event,
    ``on_envelope`` the spectator after each new envelope (its events seen); ``save``
    keeps the record (each envelope once, as it first came). When the connection ends
    before the game's end, connect again with ``again`` (the watch code) for ``patience``
    seconds (None: stop there): the table must be the same, and what comes twice is
    skipped."""
    definition = link.table.definition
    spectator = Spectator(definition)
    with _record(save, definition) as keep:
        closed, error = await _take(link, spectator, keep, on_event, on_envelope)
        end = link.end
        connections = 1
        while closed and again is not None and not spectator.state.is_over:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    reopened = await _reopen(stack, again, definition, patience)
                except (ConnectionClosed, WatchError) as exc:
                    again_failed = _("Connecting again failed: {error}").format(error=exc)
                    error = f"{error} {again_failed}"
                    break
                connections += 1
                closed, error = await _take(reopened, spectator, keep, on_event, on_envelope)
                end = reopened.end
    session = spectator.session
    return WatchResult(
        definition,
        session.abandoned_state if session.abandoned_state is not None else session.state,
        spectator.received,
        end,
        session.completed,
        spectator.fault,
        error,
        connections,
    )


CLOSED = N_(
    "the connection closed before the end (the host is gone, or it dropped us for not "
    "reading): the same code watches again once it is back"
)
"""Why a watch stopped whose connection ended early (and connecting again failed)."""


async def _take(
    link: WatchLink,
    spectator: Spectator,
    keep: Callable[[bytes], None],
    on_event: Callable[[Event], None] | None,
    on_envelope: Callable[[Spectator], None] | None,
) -> tuple[bool, str | None]:
    """Check, keep and show the envelopes of one connection to its end: whether it closed
    before the game's end (so that connecting again may bring the rest), and why the watch
    stopped early (None: it did not)."""
    try:
        async for data in link.envelopes():
            had = spectator.received
            events = spectator.receive(data)
            if spectator.received == had:
                continue  # we have it already
            keep(data)
            for event in events:
                if on_event is not None:
                    on_event(event)
            if on_envelope is not None:
                on_envelope(spectator)
    except ConnectionClosed:
        return True, _(CLOSED)
    except RemoteProtocolError as exc:
        return False, str(exc)
    return False, None


async def _reopen(
    stack: contextlib.AsyncExitStack,
    invitation: Invitation,
    definition: TableDefinition,
    patience: float,
) -> WatchLink:
    """A new connection to the table (entered into ``stack``), tried with backoff for
    ``patience`` seconds while nothing answers or what answers refuses us (the host is
    coming back, no seat offers a feed yet). Raises :class:`ConnectionClosed` past it, and
    :class:`WatchError` when what answers serves another table."""
    delay = RETRY
    last: Exception | None = None
    with trio.move_on_after(patience):
        while True:
            try:
                link = await stack.enter_async_context(open_watch(invitation))
            except (ConnectionClosed, WatchRefused) as exc:
                last = exc
                await trio.sleep(delay)
                delay = min(2 * delay, RETRY_MAX)
                continue
            if link.table.definition != definition:
                raise WatchError(_("the table answering the watch code is another one now"))
            return link
    raise ConnectionClosed(
        _("nothing served the watch code for {seconds} s (last: {error})").format(
            seconds=format_number(patience, 3, trailing_zeros=False), error=last
        )
    )


@contextlib.contextmanager
def _record(path: Path | None, definition: TableDefinition) -> Iterator[Callable[[bytes], None]]:
    """Where the envelopes go as they come: a transcript at ``path`` (seat 0's header: the
    host's record as the host sent it), or nowhere."""
    if path is None:
        yield lambda data: None
        return
    with TranscriptWriter(path, definition, 0) as writer:
        yield writer.append


# -- the terminal ---------------------------------------------------------------------------


class WatchUI(TerminalUI):
    """The terminal table of a watcher: the player's, with nothing to decide; ``quit``
    (or Ctrl-C, or a closed terminal) stops watching, and the end of the input does not
    (a watcher may run with nothing on its input)."""

    def __init__(self, view: TableView, stop: Callable[[], None], *, plain: bool = False) -> None:
        super().__init__(view, plain=plain)
        self._stop = stop

    def _command(self, command: Command) -> None:
        if command.kind is CommandKind.QUIT:
            self.stop()
        elif command.kind is CommandKind.CHAT:
            self.say(_("A watcher does not speak to the table."))
        else:
            super()._command(command)

    def stop(self) -> None:
        self.say(_("You stop watching."))
        self._stop()

    def interrupt(self) -> None:
        self.stop()

    def hangup(self) -> None:
        super().hangup()
        self._stop()

    def _resign(self) -> None:
        self._stop()

    def input_closed(self) -> None:
        pass


async def watch_in_terminal(invitation: Invitation, *, plain: bool, save: Path | None) -> int:
    async with open_watch(invitation) as link:
        definition = link.table.definition
        print_roster(definition, -1)
        print(
            _("Watching from {address}: every hand is hidden until played.").format(
                address=link.address
            ),
            flush=True,
        )
        result: WatchResult | None = None
        async with trio.open_nursery() as nursery:
            view = TableView.from_definition(definition, 0, watching=True)
            ui = WatchUI(view, nursery.cancel_scope.cancel, plain=plain)
            await nursery.start(ui.run)
            result = await follow(link, on_event=ui.on_event, save=save, again=invitation)
            nursery.cancel_scope.cancel()
        ui.finish()
    if result is None:
        return 0  # the person stopped watching
    print(ending(result, save), flush=True)
    return result.status


def ending(result: WatchResult, save: Path | None) -> str:
    """The last line of a watch."""
    if result.fault is not None:
        seat = result.fault.seat
        names = seat_names(result.definition)
        if 0 <= seat < len(names):
            who = _("{name} (seat {seat})").format(name=names[seat], seat=seat)
        else:
            who = _("seat {seat}").format(seat=seat)
        text = _("The game stopped: {who} broke the protocol ({reason}).").format(
            who=who, reason=safe_text(result.fault.reason)
        )
    elif result.error is not None:
        text = _("Watching stopped: {reason}").format(reason=safe_text(result.error))
    elif result.completed:
        text = ngettext(
            "The game is over; its {n} envelope checks.",
            "The game is over; its {n} envelopes all check.",
            result.envelopes,
        ).format(n=format_number(result.envelopes))
    else:
        # The host's words are English (the protocol's); those we know are said in ours.
        words = _(result.end) if result.end else ""
        text = _("The host says: {words}").format(words=safe_text(words))
    if save is None:
        return text
    record = _("Record: {file} ({command})").format(file=save, command=f"belote-p2p verify {save}")
    return f"{text} {record}"


# -- the browser ----------------------------------------------------------------------------


async def watch_in_browser(invitation: Invitation, web: WebOptions, *, save: Path | None) -> int:
    """The watch rendered on a page (its own, or the ``web`` lobby's); its Leave button stops
    watching at any moment."""
    from .web.seat import web_seat  # the web server loads only when asked for

    async with open_watch(invitation) as link:
        definition = link.table.definition
        async with web_seat(definition, 0, web, watching=True) as table:
            result: WatchResult | None = None
            async with trio.open_nursery() as nursery:

                async def stop_on_leave() -> None:
                    await table.left.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(stop_on_leave)
                result = await follow(link, on_event=table.on_event, save=save, again=invitation)
                nursery.cancel_scope.cancel()
            table.game_over(ending(result, save) if result is not None else None)
    return 0 if result is None else result.status


# -- the host's side ------------------------------------------------------------------------


def add_watch_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--watch", action=argparse.BooleanOptionalAction, default=True,
        help=_(
            "let anyone with the table's watch code watch it live, every hand hidden until "
            "played (--no-watch refuses watchers)"
        ),
    )  # fmt: skip


def host_watchers(port: HostPort, table_id: bytes, allowed: bool) -> WatchHub:
    """The hub of the host's watchers, served on its port (refusing them all unless
    ``allowed``)."""
    hub = WatchHub(table_id, allowed=allowed)
    port.watch = hub.handle
    return hub


def offer_feed(
    nursery: trio.Nursery,
    hub: WatchHub,
    relay: tuple[str, int] | None,
    identity: Identity,
    seat: int,
) -> trio.CancelScope:
    """Keep a feed of ``seat``'s table (the hub's, signed) waiting at ``relay`` in
    ``nursery``, unless the hub refuses watchers or there is no relay of the table's own
    (None: the host's port is the relay, and serves its watchers itself). Cancel the scope
    returned to stop offering it."""
    scope = trio.CancelScope()
    if hub.allowed and relay is not None:

        async def feed() -> None:
            with scope:
                await hub.feed(relay, identity, seat)

        nursery.start_soon(feed)
    return scope


async def play_watched(
    play: Callable[[Callable[[Sequence[Envelope]], None] | None], Awaitable[PeerResult]],
    definition: TableDefinition,
    proposal: bytes | None,
    seat: int,
    identity: Identity,
    relay: tuple[str, int] | None,
    allowed: bool,
    say: Callable[[str], None] | None = None,
) -> PeerResult:
    """``play`` a seat (given the hub's ``on_step``, or None) while its table is offered to
    watchers at ``relay`` (:func:`offer_feed`; a joiner's, a resumed seat's); once the
    game is over, the watchers get its end (:func:`drain_watchers`; ``say`` tells the
    person why the program waits, if it does). Without a relay of the table's own, or with
    ``allowed`` False, or a table that refuses watchers (its definition's table rule),
    just ``play``."""
    if relay is None or not allowed or not definition.watchers or proposal is None:
        return await play(None)  # (a table rule every seat signed refuses watchers)
    hub = WatchHub(definition.table_id)
    hub.open(definition, proposal)
    result: PeerResult | None = None
    failed: BeloteError | None = None
    async with trio.open_nursery() as nursery:
        offer_feed(nursery, hub, relay, identity, seat)
        try:
            result = await play(hub.publish)
        except BeloteError as exc:
            failed = exc  # raised below, not wrapped in this nursery's exception group
        hub.finish(watch_end(result))
        await drain_watchers(hub, say)
        nursery.cancel_scope.cancel()
    if failed is not None:
        raise failed
    assert result is not None
    return result


def recorded_proposal(envelopes: Sequence[bytes], key: bytes) -> bytes | None:
    """The host's proposal our first envelope of a transcript signed (a resumed joiner's:
    the host's own makes it anew)."""
    for data in envelopes:
        envelope = Envelope.decode(data)
        if envelope.sender == key and envelope.seq == 0:
            proposal = table_proposal(envelope.body)
            return proposal if type(proposal) is bytes else None
    return None


def watch_end(result: PeerResult | None) -> str:
    """What the host tells its watchers once its game is over: English words, as everything
    the protocol carries (a watcher shows the ones it knows in its reader's language,
    :func:`ending`)."""
    if result is None:
        return N_("the game did not take place")
    if result.finished:
        return N_("the game is over")
    if result.fault is not None:
        return f"the game stopped: seat {result.fault.seat} broke the protocol"
    if result.abandoned is not None:
        return f"the game is abandoned by seat {result.abandoned}"
    return N_("the host stopped (it may resume: watch again then)")


async def drain_watchers(hub: WatchHub, say: Callable[[str], None] | None = None) -> None:
    """Before the host's port closes: the watchers are told the game is over (if they were
    not yet), and have :data:`WATCH_DRAIN` seconds to take what is queued; with a watcher
    dropped before the end and not back yet (:attr:`~belote_p2p.net.watch.WatchHub.owed`),
    :data:`WATCH_RETURN` seconds, so that it finds the table still served when it
    connects again (``say`` tells the person why the program waits)."""
    if hub.end is None:
        hub.finish(N_("the host stopped") if hub.table is not None else watch_end(None))
    patience = WATCH_DRAIN
    if hub.owed > 0:
        patience = WATCH_RETURN
        if say is not None:
            say(
                _(
                    "A watcher lost its connection before the end: the table stays open "
                    "{seconds} s more for it to come back and see the end."
                ).format(seconds=format_number(WATCH_RETURN, 0))
            )
    with trio.move_on_after(patience):
        await hub.drained()


def say_watch_code(invitation: Invitation, allowed: bool, say: Callable[[str], None]) -> None:
    if allowed:
        code = watch_code(invitation)
        say(_("Watch code (for spectators):  {command}").format(command=f"belote-p2p watch {code}"))
    else:
        say(_("Watching is off (--no-watch): a rule of the table, which every seat signs, "
              "so no seat lets anyone watch."))  # fmt: skip


# -- the command ----------------------------------------------------------------------------


async def watch_main(code: Invitation, args: argparse.Namespace) -> int:
    save = Path(args.save) if args.save else None
    try:
        if args.web:
            web = WebOptions(port=args.web_port, open_browser=args.browser, home=default_root())
            return await watch_in_browser(code, web, save=save)
        return await watch_in_terminal(code, plain=args.plain, save=save)
    except (ConnectionClosed, WatchError) as exc:
        print(error_text(safe_text(str(exc))), file=sys.stderr, flush=True)
        return 1


def cmd_watch(args: argparse.Namespace) -> int:
    try:
        code = read_watch_code(args.code)
    except InvitationError as exc:
        if is_invitation(args.code):
            hint = _("(that is an invitation to play: ask the host for its watch code)")
            print(error_text(f"{exc} {hint}"), file=sys.stderr)
        else:
            print(error_text(exc), file=sys.stderr)
        return 2
    try:
        return run_main(lambda: watch_main(code, args))
    except BeloteError as exc:
        print(error_text(exc), file=sys.stderr)
        return 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "watch",
        help=_("watch a table live with the host's watch code"),
        description=_(
            "Watch a table live: connect to the host's port with the watch code `host` "
            "printed (or, when it does not answer, to the table's relay, where a seat serves "
            "the watch), check every envelope as `verify` does, and show the table as a "
            "player sees it, every hand hidden until its cards are played. A watcher signs "
            "nothing and cannot slow the table (a watcher that does not keep up is dropped); "
            "a watch cut before the end connects again on its own."
        ),
    )
    p.add_argument("code", metavar=_("CODE"), help=_("the watch code (belotew...)"))
    p.add_argument(
        "--save", metavar=_("FILE"), help=_("keep the record as it comes (a transcript)")
    )
    p.add_argument("--plain", action="store_true", help=_("plain lines, one fact a line"))
    add_web_arguments(p, _("watch in the browser (a page on 127.0.0.1)"))
    p.set_defaults(func=cmd_watch)
