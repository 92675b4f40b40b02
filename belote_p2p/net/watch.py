"""Watching a table over trio: a seat's side (:class:`WatchHub`, on the host's one port, and
at a relay for any seat: :meth:`WatchHub.feed`) and the watcher's (:func:`open_watch`).

A seat feeds its hub every envelope its session accepts (:meth:`WatchHub.publish`, the
peer's ``on_step``), in its own order; the hub keeps the table's record (the session's own
envelopes, not a copy) and sends it to each watcher: the table definition, every envelope
so far, then each new one live (``PROTOCOL.md`` §11, :mod:`belote_p2p.protocol.watch`).
The host's hub serves the watchers that reach its port; every seat's hub (the host's too)
may also keep a feed waiting at the table's relay (:func:`~.relay.open_relay_link`), through which
the relay hands it one watcher at a time: every seat holds the whole record, so a watcher
whose seat vanished (the host killed) connects again and another seat serves it.

Nothing a watcher does slows the table. :meth:`~WatchHub.publish` never waits: it puts the
envelope in each watcher's own bounded queue (:data:`WATCH_QUEUE` envelopes), and a watcher
whose queue is full (it does not read, or reads slower than the table plays) is dropped on
the spot, counted in :attr:`WatchStats.dropped`; its connection closes. Such a watcher
connects again for the rest: once the game is over, the host waits a while for it
(:attr:`WatchHub.owed`) before it closes its port. The kernel holds
little for a watcher either (its socket's send buffer is :data:`WATCH_SEND_BUFFER`), so a
watcher that stops reading fills its queue within a few envelopes. The catching up of a
watcher that comes mid-game is read from the record by the watcher's own task, at its pace.
Watchers are capped (:data:`MAX_WATCHERS`, :data:`MAX_WATCHERS_PER_SOURCE` of one address
or IPv6 /64); past the cap, a bad hello, watching switched off (``host --no-watch``) or
another table's name, the watcher gets a ``watch-refused`` with the reason, and the
connection closes: nothing a watcher sends ends the host, nor touches the game.
"""

from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import RelayError, check_paired, source_of, watch_message
from belote_p2p.protocol.session import MAX_ENVELOPE
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.watch import (
    MAX_WATCH_HELLO,
    TABLE_PREFIX_SIZE,
    WatchedTable,
    WatchError,
    WatchRefused,
    end_message,
    end_reason,
    hello_message,
    parse_hello,
    parse_table,
    refused_message,
    table_message,
)
from belote_p2p.protocol.wire import Envelope, FrameTooLarge

from .address import format_address, parse_address
from .invite import WATCH_PREFIX, Invitation
from .relay import (
    FIRST_FRAME_TIMEOUT,
    WATCH_RELAY_QUEUE,
    connect,
    open_relay_link,
    peer_host,
    set_buffer,
)
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

MAX_WATCHERS = 8
"""Watchers one host serves at once."""
MAX_WATCHERS_PER_SOURCE = 4
"""Of those, from one address (an IPv6 /64 counts as one)."""
WATCH_QUEUE = 256
"""Envelopes queued for one watcher before it is dropped (about four rounds' worth)."""
WATCH_SEND_BUFFER = 1 << 16
"""The kernel send buffer of a watcher's connection, in bytes."""
WATCH_SEND_TIMEOUT = 30.0
"""Seconds one frame may take to leave for a watcher before it is dropped."""
WATCH_CONNECT_TIMEOUT = 10.0
"""Seconds a watcher gives the host's port to accept it and answer its hello (the table
itself may come later: the watcher waits while the lobby fills)."""
MAX_WATCH_FRAME = max(MAX_ENVELOPE, 1 << 14)
"""The largest frame a watcher reads: an envelope, or the host's table message."""
WATCH_RELAY_WAIT = 60.0
"""Seconds a watcher gives a relay to pair it with a feed (the relay's own wait is 30 s)."""
FEED_RETRY = 1.0
"""Seconds before a seat offers its feed again when the relay refused or is gone; doubled
after each failure up to :data:`FEED_RETRY_MAX`."""
FEED_RETRY_MAX = 30.0


def watch_code(invitation: Invitation) -> str:
    """The watch code of the table an invitation names (the same bytes, its own prefix)."""
    return invitation.encode(WATCH_PREFIX)


def read_watch_code(text: str) -> Invitation:
    """The table a watch code names; :class:`~belote_p2p.net.invite.InvitationError` if
    it is not one."""
    return Invitation.decode(text, (WATCH_PREFIX,))


@dataclass
class WatchStats:
    """A hub's counters (they only grow, but :attr:`watching`)."""

    watching: int = 0
    """Watchers connected now."""
    served: int = 0
    """Watchers that were sent the table."""
    dropped: int = 0
    """Watchers dropped for not reading (their queue was full, or a frame did not leave)."""
    returned: int = 0
    """Watchers sent the end that came after one was dropped (each counts as that one, back
    for the rest: :attr:`WatchHub.owed`)."""
    refused: int = 0
    """Watch connections refused (a bad hello, the cap, watching off, another table)."""


@dataclass(eq=False)
class _Watcher:
    source: str
    cancel: trio.CancelScope = field(default_factory=trio.CancelScope)
    queue: tuple[trio.MemorySendChannel[bytes], trio.MemoryReceiveChannel[bytes]] | None = None
    returning: bool = False
    """It came while a dropped watcher was owed the end: it may be that one, back."""


class WatchHub:
    """The host's watchers, fed the table's envelopes (see the module docstring).

    ``table_id``: the table the host's port serves (the lobby's: the watch code names it;
    :meth:`open` sets the signed one). ``allowed``: False refuses every watcher."""

    def __init__(
        self,
        table_id: bytes,
        *,
        allowed: bool = True,
        limit: int = MAX_WATCHERS,
        per_source: int = MAX_WATCHERS_PER_SOURCE,
        queue: int = WATCH_QUEUE,
    ) -> None:
        self.table_id = table_id
        self.allowed = allowed
        self.limit = limit
        self.per_source = per_source
        self.queue = queue
        self.stats = WatchStats()
        self.table: WatchedTable | None = None
        self.end: str | None = None
        """Why the game is over for the host (:meth:`finish`), once it is."""
        self._record: list[bytes] = []
        self._watchers: set[_Watcher] = set()
        self._opened = trio.Event()
        self._gone = trio.Event()

    @property
    def recorded(self) -> int:
        """Envelopes of the table's record so far."""
        return len(self._record)

    # -- fed by the host -------------------------------------------------------------------

    def open(self, definition: TableDefinition, proposal: bytes) -> None:
        """The table is signed (the lobby is done, or a resumed transcript holds it): the
        watchers that waited for it get it now. A new table (a rematch) starts a new record."""
        if self.table is not None and self.table.definition != definition:
            self._record = []
            self.end = None
        self.table = WatchedTable(definition, proposal)
        self.table_id = definition.table_id
        self._opened.set()

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        """Envelopes the host's session accepted (its ``on_step``): recorded, and queued for
        every watcher; never waits (a watcher whose queue is full is dropped)."""
        if not self.allowed:
            return  # nobody will be sent the record: the session keeps it anyway
        for envelope in envelopes:
            data = envelope.raw
            self._record.append(data)
            for watcher in list(self._watchers):
                if watcher.queue is None:
                    continue  # still catching up or waiting for the table: reads the record
                try:
                    watcher.queue[0].send_nowait(data)
                except trio.WouldBlock:
                    self._drop(watcher, "its queue is full")

    def finish(self, reason: str) -> None:
        """The game is over for the host: each watcher gets what is queued, then
        ``watch-end``; a watcher that comes later gets the whole record and the end."""
        self.end = reason
        self._opened.set()  # a lobby that never became a game: the waiting watchers are told
        for watcher in self._watchers:
            if watcher.queue is not None:
                watcher.queue[0].close()

    @property
    def owed(self) -> int:
        """Watchers dropped for not reading and not seen back: each was told nothing, and
        connects again for the rest (:func:`belote_p2p.app.watch.follow`). A watcher that
        closes its connection itself owes no wait."""
        return self.stats.dropped - self.stats.returned

    async def drained(self) -> None:
        """Return once no watcher is connected and none is :attr:`owed` the end (after
        :meth:`finish`: they have all taken it)."""
        while self._watchers or self.owed > 0:
            self._gone = trio.Event()
            await self._gone.wait()

    def _drop(self, watcher: _Watcher, why: str) -> None:
        if watcher in self._watchers:
            self._watchers.discard(watcher)
            self.stats.dropped += 1
            logger.info("watch: dropping a watcher from %s: %s", watcher.source or "?", why)
        watcher.cancel.cancel()

    # -- the watchers' connections ---------------------------------------------------------

    async def handle(
        self, stream: trio.abc.Stream, source: str | None = None, buffer: int = WATCH_SEND_BUFFER
    ) -> None:
        """Serve one watch connection (its hello not yet read) until the game is over for
        it, it is dropped, or it goes; never raises for what the watcher did. ``source``:
        whom it counts against (by default its address; a relay's watchers are capped by
        the relay, per address); ``buffer``: its kernel send buffer (small: the hub's queue
        is where a watcher's envelopes wait)."""
        link = FramedStream(stream, max_frame=MAX_WATCH_FRAME, opening=(MAX_WATCH_HELLO,))
        set_buffer(stream, socket.SO_SNDBUF, buffer)
        source = source_of(peer_host(stream)) if source is None else source
        try:
            with trio.fail_after(FIRST_FRAME_TIMEOUT):
                prefix = parse_hello(await link.receive())
            why = self._refusal(prefix, source)
            if why is not None:
                self.stats.refused += 1
                with trio.move_on_after(FIRST_FRAME_TIMEOUT):
                    await link.send(refused_message(why))
                return
            watcher = _Watcher(source, returning=self.owed > 0)
            self._watchers.add(watcher)
            self.stats.watching += 1
            try:
                with watcher.cancel:
                    await self._serve(link, watcher)
            finally:
                self._watchers.discard(watcher)
                self.stats.watching -= 1
                self._gone.set()
        except (RemoteProtocolError, trio.TooSlowError) as exc:
            self.stats.refused += 1
            logger.info("watch: a bad watch connection from %s: %r", source or "?", exc)
            with trio.move_on_after(1.0):
                await link.send(refused_message(f"bad watch hello: {exc}"))
        except ConnectionClosed:
            pass  # the watcher left
        finally:
            await trio.aclose_forcefully(stream)

    def _refusal(self, prefix: bytes, source: str) -> str | None:
        if not self.allowed:
            return "the host does not let anyone watch this table"
        if prefix != self.table_id[:TABLE_PREFIX_SIZE]:
            return "this host serves another table (that game may be over)"
        if len(self._watchers) >= self.limit:
            return f"the table has {self.limit} watchers already"
        if sum(w.source == source for w in self._watchers) >= self.per_source:
            return f"{self.per_source} watchers from your address already"
        return None

    async def _serve(self, link: FramedStream, watcher: _Watcher) -> None:
        await self._opened.wait()
        table = self.table
        if table is None:
            await self._send(link, watcher, refused_message(self.end or "no game took place"))
            return
        self.stats.served += 1
        await self._send(link, watcher, table_message(table.definition, table.proposal))
        record = self._record
        sent = 0
        # The record so far, at the watcher's pace; then the queue, filled as the game goes.
        while sent < len(record):
            await self._send(link, watcher, record[sent])
            sent += 1
        send, receive = trio.open_memory_channel[bytes](self.queue)
        watcher.queue = (send, receive)
        if self.end is not None:
            send.close()
        async with receive:
            async for data in receive:
                await self._send(link, watcher, data)
        await self._send(link, watcher, end_message(self.end or "the game is over"))
        if watcher.returning and self.owed > 0:
            self.stats.returned += 1

    async def feed(self, relay: tuple[str, int], identity: Identity, seat: int) -> None:
        """Offer the table to watchers at ``relay`` as ``seat`` until cancelled: one feed
        waits there at a time; each watcher the relay pairs with it is served as one of the
        port's, and the next feed is opened at once (after a failure, with backoff)."""
        table = self.table
        assert table is not None, "a feed offers a signed table"
        delay = FEED_RETRY
        shown = format_address(*relay)
        async with trio.open_nursery() as nursery:
            for number in itertools.count(1):
                try:
                    link = await open_relay_link(
                        relay, identity, table.definition, table.proposal, seat, None
                    )
                except (ConnectionClosed, RelayError, FrameTooLarge, OSError) as exc:
                    logger.info("watch: no feed at the relay at %s: %s", shown, exc)
                    await trio.sleep(delay)
                    delay = min(2 * delay, FEED_RETRY_MAX)
                    continue
                delay = FEED_RETRY
                source = f"relay {shown} #{number}"
                nursery.start_soon(self.handle, link.stream, source, WATCH_RELAY_QUEUE)

    async def _send(self, link: FramedStream, watcher: _Watcher, data: bytes) -> None:
        try:
            with trio.fail_after(WATCH_SEND_TIMEOUT):
                await link.send(data)
        except trio.TooSlowError:
            self._drop(watcher, "a frame did not leave in time")
            raise ConnectionClosed("the watcher does not read") from None


# -- the watcher's side -------------------------------------------------------------------


class WatchLink:
    """A watcher's connection to a host: the table it is watching, then its frames."""

    def __init__(self, link: FramedStream, table: WatchedTable, address: str) -> None:
        self.link = link
        self.table = table
        self.address = address
        self.end: str | None = None
        """The host's reason for the end (``watch-end``), once received."""

    async def envelopes(self) -> AsyncIterator[bytes]:
        """Every envelope the host sends, until its ``watch-end`` (then :attr:`end` is
        set). Raises :class:`ConnectionClosed` if the connection ends before, and
        :class:`~belote_p2p.protocol.watch.WatchError` for a frame of the host's that
        is neither an envelope nor the end."""
        while True:
            data = await self.link.receive()
            reason = end_reason(data)
            if reason is not None:
                self.end = reason
                return
            yield data


@asynccontextmanager
async def open_watch(
    invitation: Invitation, *, connect_timeout: float = WATCH_CONNECT_TIMEOUT
) -> AsyncIterator[WatchLink]:
    """Reach the table a watch code names: the host's port at each of its addresses in
    order, then its relay (which pairs us with a seat's feed); say hello, wait for the
    table, and check that it is the code's (its host's key and table id).

    Raises :class:`ConnectionClosed` when nothing answers,
    :class:`~belote_p2p.protocol.watch.WatchRefused` when the host (or the relay) refuses
    us, and :class:`~belote_p2p.protocol.watch.WatchError` when what is sent is not the
    code's table (the last such answer, when no other way worked)."""
    routes = [(address, False) for address in invitation.addresses]
    if invitation.relay:
        routes.append((invitation.relay, True))
    failures: list[str] = []
    refusal: WatchError | None = None
    opened: WatchLink | None = None
    for address, relayed in routes:
        try:
            opened = await _reach(invitation, parse_address(address), relayed, connect_timeout)
        except ConnectionClosed as exc:
            failures.append(str(exc))
            continue
        except WatchError as exc:
            refusal = exc  # another way may serve us (the relay, when the host's port won't)
            continue
        break
    if opened is None:
        if refusal is not None:
            raise refusal
        raise ConnectionClosed("no address of the watch code answers: " + "; ".join(failures))
    try:
        yield opened
    finally:
        await trio.aclose_forcefully(opened.link)


async def _reach(
    invitation: Invitation, address: tuple[str, int], relayed: bool, connect_timeout: float
) -> WatchLink:
    """The watch at one address of the code: the host's port, or (``relayed``) the relay."""
    shown = format_address(*address)
    who = "the relay" if relayed else "the host's port"
    stream = await connect(address, who, connect_timeout)
    link = FramedStream(stream, max_frame=MAX_WATCH_FRAME)
    try:
        if relayed:
            with trio.fail_after(connect_timeout):
                await link.send(watch_message(invitation.table_prefix, invitation.key_digest))
            with trio.fail_after(WATCH_RELAY_WAIT):
                try:
                    check_paired(await link.receive())
                except RelayError as exc:
                    raise WatchRefused(f"the relay at {shown}: {exc}") from None
        with trio.fail_after(connect_timeout):
            await link.send(hello_message(invitation.table_prefix))
        table = parse_table(await link.receive())  # no deadline: the lobby may be filling
        definition = table.definition
        if not invitation.names_key(definition.host_key) or not invitation.names_table(
            definition.table_id
        ):
            raise WatchError(f"{who} at {shown} sent another table than the watch code's")
    except trio.TooSlowError:
        await trio.aclose_forcefully(link)
        raise ConnectionClosed(f"{who} at {shown} did not answer") from None
    except (ConnectionClosed, FrameTooLarge) as exc:
        await trio.aclose_forcefully(link)
        raise ConnectionClosed(f"{who} at {shown}: {exc}") from None
    except BaseException:
        await trio.aclose_forcefully(link)
        raise
    return WatchLink(link, table, shown + (" (through the relay)" if relayed else ""))
