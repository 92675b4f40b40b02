"""Accepting connections: the one accept loop of every listener of the package (the mesh's,
the relay's, the lobby's, the host's one port).

Nothing a connection does, and nothing the system refuses us, ends a peer, a host's port or
a relay:

* every connection's handler runs isolated: an exception it raises closes that connection,
  is logged and counted (:attr:`Gate.failed`), and never reaches the nursery above it;
* an ``accept()`` that fails (out of file descriptors, ``EMFILE``/``ENFILE``, or of kernel
  memory, ``ENOBUFS``/``ENOMEM``) only delays accepting: it is logged once, the loop sleeps
  with backoff and tries again, as trio's ``serve_listeners`` does; the connections already
  open play on, and the ones waiting in the backlog are accepted once descriptors free up;
* strangers are bounded: a connection counts as *unproven* from its accept until its
  handler releases its :class:`Ticket` (it proved who it is: the mesh's handshake, the
  relay's join; or it reached a stage that bounds itself) or ends. At most
  :attr:`Gate.limit` are unproven at once; past it a new connection is closed at once and
  counted (:attr:`Gate.turned_away`). A gate may also bound the unproven connections of
  one source (:attr:`Gate.per_source`: an IPv4 address or an IPv6 /64), so that one
  stranger cannot take every place of a port others must reach. With the handshake-sized
  reads of an unproven connection (:data:`~belote_p2p.protocol.wire.HELLO_FRAMES`) this
  bounds the memory that strangers can make us hold, whatever their number.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

import trio

from belote_p2p.protocol.relay import source_of

logger = logging.getLogger(__name__)

MAX_UNPROVEN = 64
"""Connections of one service that may be unproven at once (see :class:`Gate`)."""
MAX_UNPROVEN_PER_SOURCE = 16
"""Of those, from one source, where the service bounds sources (the host's port)."""
ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""What ``accept()`` says when the process or the system is out of a resource."""


class Gate:
    """One service's count of its unproven connections, and of what it refused.

    The counters only grow: :attr:`turned_away` (closed at once, the unproven were at
    :attr:`limit`), :attr:`failed` (handlers that raised), :attr:`accept_errors` (accepts
    that failed and were retried)."""

    def __init__(
        self,
        name: str,
        limit: int = MAX_UNPROVEN,
        *,
        backoff: float = 0.1,
        max_backoff: float = 2.0,
        per_source: int | None = None,
    ) -> None:
        self.name = name
        """Who accepts, for the log (``seat 1's mesh``, ``relay``...)."""
        self.limit = limit
        self.backoff = backoff
        """Seconds of the first pause after a failed accept; doubles up to
        :attr:`max_backoff` while the accepts keep failing."""
        self.max_backoff = max_backoff
        self.per_source = per_source
        """Unproven connections one source may hold at once (None: no such bound)."""
        self._sources: dict[str, int] = {}
        self.unproven = 0
        self.turned_away = 0
        self.failed = 0
        self.accept_errors = 0

    def enter(self, source: str | None = None) -> Ticket | None:
        """A ticket for one more unproven connection (from ``source``, when known); None
        (counted) when there are :attr:`limit` already, or :attr:`per_source` from it."""
        cap = self.per_source
        if cap is None:
            source = None
        crowded = source is not None and cap is not None and self._sources.get(source, 0) >= cap
        if self.unproven >= self.limit or crowded:
            self.turned_away += 1
            if self.turned_away == 1 or self.turned_away % 100 == 0:
                logger.warning(
                    "%s: %d connections have not proved who they are; closing new ones "
                    "(%d so far)", self.name, self.unproven, self.turned_away,
                )  # fmt: skip
            return None
        self.unproven += 1
        if source is not None:
            self._sources[source] = self._sources.get(source, 0) + 1
        return Ticket(self, source)

    def _leave(self, source: str | None) -> None:
        self.unproven -= 1
        if source is not None:
            left = self._sources.pop(source) - 1
            if left:
                self._sources[source] = left


class Ticket:
    """One unproven connection's place at its :class:`Gate`."""

    def __init__(self, gate: Gate, source: str | None = None) -> None:
        self._gate: Gate | None = gate
        self._source = source

    def release(self) -> None:
        """The connection proved who it is (or is past what a stranger can hold): it no
        longer counts. Idempotent; also done when its handler ends."""
        if self._gate is not None:
            self._gate._leave(self._source)
            self._gate = None


Handler: TypeAlias = Callable[[trio.abc.Stream, Ticket], Awaitable[None]]
"""Runs one accepted connection; releases its :class:`Ticket` once the peer proved itself."""
AnyListener: TypeAlias = trio.abc.Listener[Any]


async def accept_loop(
    listener: AnyListener, handler: Handler, nursery: trio.Nursery, gate: Gate
) -> None:
    """Accept on ``listener`` and run ``handler`` for each connection in ``nursery``,
    isolated (see the module docstring), until cancelled or the listener is closed (then
    return). The listener stays the caller's to close."""
    delay = gate.backoff
    while True:
        try:
            stream = await listener.accept()
        except trio.ClosedResourceError:
            return
        except OSError as exc:
            gate.accept_errors += 1
            if delay == gate.backoff:  # the first failure of a run: said once
                short = exc.errno in ACCEPT_CAPACITY_ERRNOS
                what = "out of descriptors or memory: " if short else ""
                logger.warning(
                    "%s: cannot accept a connection (%s%s); accepting again shortly",
                    gate.name, what, exc.strerror or exc,
                )  # fmt: skip
            await trio.sleep(delay)
            delay = min(delay * 2, gate.max_backoff)
            continue
        if delay != gate.backoff:
            logger.warning("%s: accepting connections again", gate.name)
            delay = gate.backoff
        ticket = gate.enter(peer_source(stream))
        if ticket is None:
            await trio.aclose_forcefully(stream)
            continue
        nursery.start_soon(_isolated, handler, stream, ticket, gate)


def peer_source(stream: trio.abc.Stream) -> str | None:
    """The source a connection counts against (:func:`~belote_p2p.protocol.relay.source_of`
    of its peer's address), None where the stream has no socket address."""
    sock = getattr(stream, "socket", None)
    try:
        host = sock.getpeername()[0] if sock is not None else None
    except (OSError, IndexError, TypeError):
        return None
    return source_of(host) if isinstance(host, str) else None


async def _isolated(handler: Handler, stream: trio.abc.Stream, ticket: Ticket, gate: Gate) -> None:
    """``handler(stream, ticket)``: what it raises closes the connection, and no more."""
    try:
        await handler(stream, ticket)
    except Exception as exc:  # a connection's bug or bad luck is that connection's only
        gate.failed += 1
        logger.info("%s: a connection failed: %r", gate.name, exc)
        await trio.aclose_forcefully(stream)
    finally:
        ticket.release()


async def serve_listeners(
    listeners: Sequence[AnyListener],
    handler: Handler,
    gate: Gate,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """:func:`accept_loop` on every listener, the handlers in one nursery, until cancelled;
    the listeners are closed on return."""

    async def one(listener: AnyListener, nursery: trio.Nursery) -> None:
        async with listener:
            await accept_loop(listener, handler, nursery, gate)

    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(one, listener, nursery)
        task_status.started()
