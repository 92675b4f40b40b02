"""The relay protocol, sans-io: the bookkeeping of an untrusted frame forwarder.

Two seats of a table that cannot open a TCP connection to each other (a peer behind NAT, a
firewall, a ``--no-listen`` peer) each open one to a *relay* and ask for the other; the relay
pairs the two connections and from then on forwards each frame from one to the other,
unchanged. The pair still runs the mesh's signed hello handshake end to end through it
(``PROTOCOL.md`` §4), so a relayed connection is as authenticated as a direct one; the
relay sees what a wiretap would (signed envelopes, sync requests, the deck protocol's
ciphertexts and proven shares), no more.

The relay forwards only for peers that proved a seat of a table to it: its first frame to a
client is a fresh nonce, and the client answers with the table definition, the host's
signature of it (the lobby's proposal, ``PROTOCOL.md`` §6.0) and its own signature of the
nonce, the table id, the definition's digest, its seat and the seat it wants, under the key
the definition gives its seat. Messages (one frame each, canonical msgpack, ``PROTOCOL.md``
§3 and §8):

* client → relay: ``{"type": "relay-hello", "version": 1}``
* relay → client: ``{"type": "relay-challenge", "version": 1, "nonce": bin 32}``
* client → relay: ``{"type": "relay-join", "definition": map, "proposal": bin 64,
  "seat": int, "peer": int, "sig": bin 64}``
* relay → client: ``{"type": "relay-paired"}`` once the peer's own join for us is in; then
  every frame either way is the peer's, forwarded as is;
* relay → client: ``{"type": "relay-error", "reason": str}``, then the connection closes.

Watchers (``PROTOCOL.md`` §11) come through a relay too, one relayed connection per watcher:
a seat that lets the table be watched keeps a *feed* waiting at the relay (after the same
challenge, ``{"type": "relay-feed", "definition": map, "proposal": bin 64, "seat": int,
"sig": bin 64}``, its signature over :func:`feed_statement`), and a watcher's first frame
is ``{"type": "relay-watch", "version": 1, "table": bin 8, "host": bin 16}`` (the watch
code's table id prefix and host key digest). The relay pairs the watcher with a waiting feed
of that table (the oldest: each seat's feed in turn), sends both ``relay-paired``, and
forwards as for any pair; the seat then serves the watcher as its host's port would, and
opens a new feed. The relay keeps no record: a watcher that comes mid-game is sent the
table's past by the seat, at the watcher's pace, and a watcher that stops reading holds up
its own feed only (the shell forwards to a watcher no faster than it reads), never a seat's
links or another watcher.

:class:`RelayServer` holds every connection's state and the caps (:class:`RelayLimits`):
what it is fed (bytes received, connections opened and closed, the clock) it answers with
:class:`Send` and :class:`Close` actions. It keeps no game state, needs no disk, and trusts
nobody: anything that is not the protocol (garbage, a bad signature, a table it cannot
check, more than the byte rate allows, a frame over the cap) closes the connection that
sent it, and touches no other table.

Real tables first. A client that floods the relay from one address is capped there
(connections, tables per source); a table gets a slot only once one of its seats proved
its key, and keeps it only if two of its seats pair within :attr:`RelayLimits.pair_timeout`;
when the relay is full, connections that proved nothing and tables that never paired are
evicted first. The byte budget is per link (one pair of seats, both directions): a seat's
sync requests make the other answer on that link, so the asker's link pays for the answer
and a flood costs the flooder's links, never the answerer's links to anybody else.
"""

from __future__ import annotations

import heapq
import ipaddress
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError

from .budget import ByteBudget
from .directory import Directory, DirectoryStats, Refused, listed_message
from .identity import KEY_DIGEST_SIZE, Identity, key_digest, verify
from .table import TableDefinition
from .wire import (
    DEFAULT_MAX_FRAME,
    FRAME_HEADER_SIZE,
    NONCE_SIZE,
    FrameDecoder,
    FrameTooLarge,
    decode,
    encode,
    frame,
)

RELAY_VERSION = 1
RELAY_JOIN_LABEL = b"belote-p2p/relay-join/v1\x00"
RELAY_FEED_LABEL = b"belote-p2p/relay-feed/v1\x00"
DEFAULT_RELAY_PORT = 7779
MAX_CONTROL_FRAME = 1 << 14
"""Largest frame a client may send before it is paired (a join with its table is ~1 KiB)."""


class RelayError(RemoteProtocolError):
    """A relay client or a relay broke the relay protocol; ``reason`` says how."""


def join_statement(nonce: bytes, definition: TableDefinition, seat: int, peer: int) -> bytes:
    """What a seat signs to be relayed to ``peer``: the relay's nonce, the table and the
    two seats (so that a join is good for one relay connection, one table, one pair)."""
    return RELAY_JOIN_LABEL + encode(
        {
            "nonce": nonce,
            "table": definition.table_id,
            "digest": definition.digest,
            "seat": seat,
            "peer": peer,
        }
    )


def feed_statement(nonce: bytes, definition: TableDefinition, seat: int) -> bytes:
    """What a seat signs to offer its table to watchers at a relay: the relay's nonce, the
    table and the seat (a feed proves a seat of a host-signed table, as a join does)."""
    return RELAY_FEED_LABEL + encode(
        {"nonce": nonce, "table": definition.table_id, "digest": definition.digest, "seat": seat}
    )


def watch_key(definition: TableDefinition) -> WatchKey:
    """What a watcher names a table by at a relay: its id's prefix, its host key's digest."""
    return definition.table_id[:WATCH_PREFIX_SIZE], key_digest(definition.host_key)


# -- the client's side ------------------------------------------------------------------------


def hello_message() -> bytes:
    return encode({"type": "relay-hello", "version": RELAY_VERSION})


def join_message(
    challenge: bytes,
    identity: Identity,
    definition: TableDefinition,
    proposal: bytes,
    seat: int,
    peer: int | None,
) -> bytes:
    """The client's answer to the relay's ``challenge`` frame: join ``seat`` to ``peer``
    (None: a watch feed of ``seat``, ``relay-feed``).

    Raises :class:`RelayError` if ``challenge`` is not a relay's challenge."""
    nonce = challenge_nonce(challenge)
    if definition.seats[seat].key != identity.public_key_bytes:
        raise LocalProtocolError(f"this identity does not hold seat {seat}")
    message: dict[str, Any] = {
        "definition": definition.to_wire(),
        "proposal": proposal,
        "seat": seat,
    }
    if peer is None:
        message["type"] = "relay-feed"
        message["sig"] = identity.sign(feed_statement(nonce, definition, seat))
    else:
        message["type"] = "relay-join"
        message["peer"] = peer
        message["sig"] = identity.sign(join_statement(nonce, definition, seat, peer))
    return encode(message)


def challenge_nonce(challenge: bytes) -> bytes:
    """The nonce of the relay's ``relay-challenge`` frame (what a join, a feed or an ad
    signs); :class:`RelayError` if it is none (the relay's error says why)."""
    msg = decode_map(challenge, "the relay")
    if msg.get("type") == "relay-error":
        raise RelayError(f"the relay refused us: {msg.get('reason')!r}")
    nonce = msg.get("nonce")
    if (
        set(msg) != {"type", "version", "nonce"}
        or msg["type"] != "relay-challenge"
        or msg["version"] != RELAY_VERSION
        or type(nonce) is not bytes
        or len(nonce) != NONCE_SIZE
    ):
        raise RelayError("the relay did not send a version 1 challenge")
    return nonce


def watch_message(table_prefix: bytes, host_digest: bytes) -> bytes:
    """A watcher's first frame at a relay: the table its watch code names."""
    message = {"type": "relay-watch", "version": RELAY_VERSION, "table": table_prefix}
    return encode({**message, "host": host_digest})


PAIRED = frame(encode({"type": "relay-paired"}))
"""The relay's ``relay-paired`` frame, byte for byte (a feed reads exactly it, then hands
the stream on)."""


def check_paired(data: bytes) -> None:
    """The relay's answer to a join: return if paired, else :class:`RelayError`."""
    msg = decode_map(data, "the relay")
    if msg.get("type") == "relay-error":
        reason = msg.get("reason")
        raise RelayError(f"the relay refused us: {reason if isinstance(reason, str) else '?'}")
    if msg != {"type": "relay-paired"}:
        raise RelayError("the relay sent neither relay-paired nor relay-error")


def decode_map(
    data: bytes, who: str, error: type[RemoteProtocolError] | None = None
) -> dict[str, Any]:
    """A control message (a canonical msgpack map) that ``who`` sent; ``error`` (the
    relay's :class:`RelayError` unless told, the watchers' ``WatchError``) if it is none."""
    kind = error or RelayError
    try:
        msg = decode(data)
    except RemoteProtocolError as exc:
        raise kind(f"{who} sent something that is not canonical msgpack: {exc}") from None
    if not isinstance(msg, dict):
        raise kind(f"{who} sent something that is not a map")
    return msg


# -- the relay's side -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RelayLimits:
    """The relay's caps; past any of them a connection is refused, cut or evicted, and
    counted (``PROTOCOL.md`` §8.2)."""

    max_connections: int = 512
    """Connections open at once, authenticated or not."""
    max_per_source: int = 48
    """Connections open at once from one source (an IPv4 address, or an IPv6 /64): four
    tables behind one NAT, each seat with its three links, and their replacements."""
    max_tables: int = 64
    """Tables with at least one authenticated connection."""
    max_tables_per_source: int = 4
    """Tables one source holds authenticated connections of."""
    max_per_table: int = 24
    """Authenticated connections of one table (12 directed pairs, and room for their
    replacements while the old ones close)."""
    max_frame: int = DEFAULT_MAX_FRAME
    """Largest frame forwarded (the mesh's own cap)."""
    rate: float = 256 * 1024
    """Bytes per second one link (a pair of seats of a table, both directions: the seat
    whose request makes the other answer pays through it) may carry, sustained."""
    burst: float = 4 * 1024 * 1024
    """Bytes one link may carry at once above the rate (a sync answer can be a whole
    transcript, about half a megabyte for a long game)."""
    join_timeout: float = 10.0
    """Seconds a new connection has to send its hello and its join."""
    pair_timeout: float = 30.0
    """Seconds a table's slot has, from its first join, for its first pair; then its
    connections are cut and the slot is free."""
    wait_timeout: float = 120.0
    """Seconds a connection of a table that has paired waits for its peer's join."""
    max_watchers_per_table: int = 8
    """Watchers of one table at once, paired or waiting for a feed (as a host serves)."""
    max_watchers_per_source: int = 4
    """Watchers from one source at once."""
    watch_timeout: float = 30.0
    """Seconds a watcher waits for a feed of its table (the table's game may not have
    begun: its seats offer feeds once it is signed)."""
    listing_timeout: float = 30.0
    """Seconds a directory's lister may stay connected after its last query."""


class RelayPhase(Enum):
    HELLO = "hello"
    """Connected; its ``relay-hello`` not yet in."""
    CHALLENGED = "challenged"
    """The nonce is sent; its ``relay-join`` not yet in."""
    WAITING = "waiting"
    """Authenticated; its peer's join not yet in."""
    PAIRED = "paired"
    """Forwarding."""
    FEED = "feed"
    """A seat's watch feed, authenticated, waiting for a watcher (no deadline)."""
    WATCHER = "watcher"
    """A watcher waiting for a feed of its table."""
    ADVERTISING = "advertising"
    """A host's connection to the directory, its table listed (``PROTOCOL.md`` §12)."""
    LISTING = "listing"
    """A stranger asking the directory for tables."""


class Role(Enum):
    """What a connection is for, once it said: a link between two seats, a seat's watch
    feed, a watcher."""

    LINK = "link"
    FEED = "feed"
    WATCHER = "watcher"
    AD = "ad"
    LISTER = "lister"


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``data`` (whole frames, already framed) on connection ``conn``."""

    conn: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close connection ``conn`` (after sending what was queued for it); ``reason`` is for
    the log."""

    conn: int
    reason: str


Action = Send | Close
TableKey = tuple[bytes, bytes]
"""A table as the relay knows it: its id and its definition's digest."""
LinkKey = tuple[TableKey, int, int]
"""A link: its table, its lower seat, its higher seat."""
WatchKey = tuple[bytes, bytes]
"""A table as a watcher names it: its id's first 8 bytes, its host key's digest."""
WATCH_PREFIX_SIZE = 8


@dataclass
class _Conn:
    number: int
    opened: float
    decoder: FrameDecoder
    source: str = ""
    phase: RelayPhase = RelayPhase.HELLO
    nonce: bytes = b""
    table: TableKey | None = None
    seat: int = -1
    peer: int = -1
    partner: int | None = None
    since: float = 0.0
    role: Role = Role.LINK
    watch: WatchKey | None = None
    """The table a watcher asked for."""
    budget: ByteBudget | None = None
    """A watch pair's own byte budget (a link's is the relay's, per link)."""

    @property
    def link(self) -> LinkKey:
        assert self.table is not None
        return self.table, min(self.seat, self.peer), max(self.seat, self.peer)


@dataclass
class _Table:
    """A table's slot: the connection that holds each (seat, peer), and whether two of them
    ever paired (a slot that never did is the first to go)."""

    opened: float
    watch: WatchKey
    links: dict[tuple[int, int], int] = field(default_factory=dict)
    paired: bool = False
    feeds: dict[int, int] = field(default_factory=dict)
    """The waiting watch feed of each seat that offers one (oldest first)."""
    watched: dict[int, int] = field(default_factory=dict)
    """The feeds paired with a watcher, and their watcher."""

    @property
    def empty(self) -> bool:
        return not (self.links or self.feeds or self.watched)


@dataclass
class RelayStats:
    """What the relay counted since it started."""

    connections: int = 0
    paired: int = 0
    watchers: int = 0
    """Watchers paired with a feed."""
    forwarded_frames: int = 0
    forwarded_bytes: int = 0
    dropped_frames: int = 0
    """Frames that reached the relay and were not forwarded (their connection was being cut,
    its partner was gone, or the partner did not read: counted by the shell)."""
    dropped_bytes: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    """Connections refused or cut, by cause."""
    directory: DirectoryStats | None = None
    """The directory's own counts, if the relay keeps one."""

    def refuse(self, cause: str) -> None:
        self.refused[cause] = self.refused.get(cause, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "paired": self.paired,
            "watchers": self.watchers,
            "forwarded_frames": self.forwarded_frames,
            "forwarded_bytes": self.forwarded_bytes,
            "dropped_frames": self.dropped_frames,
            "dropped_bytes": self.dropped_bytes,
            "refused": dict(sorted(self.refused.items())),
            **({} if self.directory is None else {"directory": self.directory.to_dict()}),
        }


class RelayServer:
    """A relay's whole state, without I/O (see the module docstring).

    The shell calls :meth:`connected` for each new connection, :meth:`data_received` with
    what it reads, :meth:`closed` once a connection is gone, and :meth:`tick` now and then;
    each returns the actions to carry out in order, and none raises for anything a client
    sent. A :class:`Close` is final: the shell closes that connection and calls
    :meth:`closed` (which is then a no-op for it).
    """

    def __init__(
        self,
        limits: RelayLimits | None = None,
        *,
        nonce: Callable[[], bytes] | None = None,
        directory: Directory | None = None,
    ) -> None:
        self.limits = limits or RelayLimits()
        self.directory = directory
        """The public tables this relay lists (``relay --directory``); None: it lists none."""
        self._nonce = nonce or (lambda: secrets.token_bytes(NONCE_SIZE))
        self._conns: dict[int, _Conn] = {}
        self._tables: dict[TableKey, _Table] = {}
        self._budgets: dict[LinkKey, ByteBudget] = {}
        self._per_source: dict[str, int] = {}
        """Connections open from each source."""
        self._source_tables: dict[str, dict[TableKey, int]] = {}
        """Per source, its authenticated connections of each table."""
        self._waiting: dict[WatchKey, list[int]] = {}
        """The watchers waiting for a feed of each table, oldest first."""
        self._deadlines: list[tuple[float, int]] = []
        """(deadline, connection), pushed when a connection enters a phase with a deadline.
        A deadline only ever moves later (a table pairs, a lister asks again): an entry is
        a lower bound, checked against the connection when it comes up."""
        self._swept = -float("inf")
        self.stats = RelayStats(directory=directory.stats if directory is not None else None)

    # -- reading ----------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        return len(self._conns)

    @property
    def tables(self) -> int:
        return len(self._tables)

    def phase(self, conn: int) -> RelayPhase | None:
        c = self._conns.get(conn)
        return c.phase if c is not None else None

    def partner(self, conn: int) -> int | None:
        c = self._conns.get(conn)
        return c.partner if c is not None else None

    def watcher_of(self, conn: int) -> int | None:
        """The watcher a feed ``conn`` is paired with (None: no feed, or not paired)."""
        c = self._conns.get(conn)
        return c.partner if c is not None and c.role is Role.FEED else None

    # -- events -----------------------------------------------------------------------------

    def connected(self, conn: int, now: float, source: str = "") -> list[Action]:
        """A new connection, numbered ``conn`` by the shell (numbers are never reused),
        from ``source`` (its address as :func:`source_of` gives it: the caps per source)."""
        if conn in self._conns:
            raise LocalProtocolError(f"connection {conn} is already open")
        self.stats.connections += 1
        held = self._per_source.get(source, 0)
        if held >= self.limits.max_per_source:
            self.stats.refuse("too many connections from one address")
            return [Close(conn, "too many connections from this address")]
        actions: list[Action] = []
        if len(self._conns) >= self.limits.max_connections:
            victim = self._evictable(held)
            if victim is None:
                self.stats.refuse("too many connections")
                return [Close(conn, "the relay is full")]
            self.stats.refuse("evicted")
            actions += self._cut(victim, "evicted: the relay is full", error=True)
        c = self._conns[conn] = _Conn(conn, now, FrameDecoder(MAX_CONTROL_FRAME), source, since=now)
        self._per_source[source] = held + 1
        self._schedule(c)
        return actions

    def data_received(self, conn: int, data: bytes, now: float) -> list[Action]:
        """Bytes read from ``conn``."""
        c = self._conns.get(conn)
        if c is None:
            return []  # already cut: what was in flight is dropped
        if c.phase is RelayPhase.PAIRED and not self._budget(c).spend(len(data), now):
            self.stats.refuse("over the byte rate")
            return self._cut(c, "over the byte rate", flood=True)
        try:
            frames = c.decoder.feed(data)
        except FrameTooLarge as exc:
            self.stats.refuse("frame too large")
            return self._cut(c, str(exc))
        actions: list[Action] = []
        for payload in frames:
            if c.phase is RelayPhase.PAIRED:
                actions += self._forward(c, payload)
                continue
            actions += self._control(c, payload, now)
            if c.number not in self._conns:
                break  # cut: the rest is dropped
        return actions

    def closed(self, conn: int) -> list[Action]:
        """``conn`` is gone (its peer hung up, or the shell closed it)."""
        c = self._conns.get(conn)
        if c is None:
            return []
        return self._drop(c, "its peer's connection to the relay ended")

    def tick(self, now: float) -> list[Action]:
        """Cut the connections past their deadlines (joins, pairing); forget the budgets
        of links that are gone once they are full again (forgetting one sooner would give
        a link that was cut for its bytes a fresh burst when it comes back)."""
        if now >= self._swept + BUDGET_SWEEP:
            self._swept = now
            for link, budget in list(self._budgets.items()):
                if link[0] not in self._tables and budget.refill(now) >= budget.burst:
                    del self._budgets[link]
        actions: list[Action] = []
        if self.directory is not None:
            for number in self.directory.expire(now):
                gone = self._conns.get(number)
                if gone is not None:
                    self.stats.refuse("ad expired")
                    reason = "the ad expired: no new version came in time"
                    actions += self._cut(gone, reason, error=True)
        while (c := self._due(now)) is not None:
            if c.phase is RelayPhase.LISTING:
                actions += self._cut(c, "no query in time")
            elif c.phase is RelayPhase.WATCHER:
                self.stats.refuse("no feed in time")
                reason = "no seat of that table offers it to watchers at this relay"
                actions += self._cut(c, reason, error=True)
            elif c.phase is not RelayPhase.WAITING:
                self.stats.refuse("no join in time")
                actions += self._cut(c, "no join in time", error=True)
            else:
                self.stats.refuse("peer never came")
                actions += self._cut(c, f"seat {c.peer} did not come in time", error=True)
        return actions

    def _due(self, now: float) -> _Conn | None:
        """A connection whose deadline has come by ``now`` (None: none has)."""
        first = self._first_deadline()
        if first is None or first > now:
            return None
        _, number = heapq.heappop(self._deadlines)
        return self._conns[number]

    def _first_deadline(self) -> float | None:
        """The earliest deadline of a connection, its entry brought to the heap's top (the
        stale entries met on the way are dropped or put back at their true time)."""
        heap = self._deadlines
        while heap:
            hint, number = heap[0]
            c = self._conns.get(number)
            if c is None or c.phase in _NO_DEADLINE:
                heapq.heappop(heap)  # gone, or a phase without a deadline
                continue
            deadline = self._deadline(c)
            if deadline > hint:
                heapq.heapreplace(heap, (deadline, number))
                continue
            return deadline
        return None

    def _schedule(self, c: _Conn) -> None:
        """``c`` entered a phase with a deadline (:meth:`_deadline`)."""
        heapq.heappush(self._deadlines, (self._deadline(c), c.number))

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (None: nothing pending)."""
        times = [t for t in (self._first_deadline(),) if t is not None]
        if self.directory is not None:
            expiry = self.directory.next_expiry()
            if expiry is not None:
                times.append(expiry)
        return min(times, default=None)

    def count_dropped(self, frames: int, size: int) -> None:
        """The shell could not deliver ``frames`` frames of ``size`` bytes in all."""
        self.stats.dropped_frames += frames
        self.stats.dropped_bytes += size

    # -- the protocol -----------------------------------------------------------------------

    def _budget(self, c: _Conn) -> ByteBudget:
        return c.budget if c.budget is not None else self._budgets[c.link]

    def _deadline(self, c: _Conn) -> float:
        if c.phase in (RelayPhase.HELLO, RelayPhase.CHALLENGED):
            return c.opened + self.limits.join_timeout
        if c.phase is RelayPhase.WATCHER:
            return c.since + self.limits.watch_timeout
        if c.phase is RelayPhase.LISTING:
            return c.since + self.limits.listing_timeout
        assert c.table is not None
        table = self._tables[c.table]
        if not table.paired:
            return table.opened + self.limits.pair_timeout
        return c.since + self.limits.wait_timeout

    def _control(self, c: _Conn, payload: bytes, now: float) -> list[Action]:
        try:
            msg = decode(payload)
        except RemoteProtocolError:
            self.stats.refuse("not the relay protocol")
            return self._cut(c, "not canonical msgpack", error=True)
        if not isinstance(msg, dict):
            self.stats.refuse("not the relay protocol")
            return self._cut(c, "not a map", error=True)
        kind = msg.get("type")
        if kind == "dir-query" and c.phase in (RelayPhase.HELLO, RelayPhase.LISTING):
            return self._query(c, msg, now)
        if kind == "dir-advertise" and c.phase in (RelayPhase.CHALLENGED, RelayPhase.ADVERTISING):
            return self._advertise(c, msg, now)
        if kind == "dir-withdraw" and c.phase is RelayPhase.ADVERTISING and set(msg) == {"type"}:
            return self._drop(c, "its host withdrew the ad")
        if c.phase is RelayPhase.HELLO:
            if kind == "relay-watch":
                return self._watch(c, msg, now)
            if msg != {"type": "relay-hello", "version": RELAY_VERSION}:
                self.stats.refuse("not the relay protocol")
                return self._cut(c, "expected a version 1 relay-hello", error=True)
            c.nonce = self._nonce()
            c.phase = RelayPhase.CHALLENGED
            challenge = {"type": "relay-challenge", "version": RELAY_VERSION, "nonce": c.nonce}
            return [Send(c.number, frame(encode(challenge)))]
        if c.phase is RelayPhase.CHALLENGED:
            checked = self._check_join(c, msg)
            if isinstance(checked, str):
                return self._cut(c, checked, error=True)
            definition, seat, peer = checked
            if peer is None:
                return self._feed(c, definition, seat, now)
            return self._join(c, definition, seat, peer, now)
        self.stats.refuse("not the relay protocol")
        return self._cut(c, "a frame before the pairing", error=True)

    def _query(self, c: _Conn, msg: dict[str, Any], now: float) -> list[Action]:
        """A stranger's ``dir-query``: the listing of the tables that fit (the connection
        stays open for more queries, within the source's rate)."""
        if self.directory is None:
            self.stats.refuse("no directory")
            return self._cut(c, "this relay keeps no directory of tables", error=True)
        try:
            answer = self.directory.query(msg, c.source, now)
        except Refused as exc:
            self.stats.refuse(exc.cause)
            return self._cut(c, exc.reason, error=True)
        listing = c.phase is RelayPhase.LISTING
        c.role, c.phase, c.since = Role.LISTER, RelayPhase.LISTING, now
        if not listing:
            self._schedule(c)  # a later query only moves the deadline later
        return [Send(c.number, frame(answer))]

    def _advertise(self, c: _Conn, msg: dict[str, Any], now: float) -> list[Action]:
        """A host's ``dir-advertise``: its table listed (or a newer version of its ad), for
        as long as this connection lasts and the ad is refreshed in time."""
        if self.directory is None:
            self.stats.refuse("no directory")
            return self._cut(c, "this relay keeps no directory of tables", error=True)
        try:
            seq, expires, replaced = self.directory.advertise(c.number, c.source, msg, c.nonce, now)
        except Refused as exc:
            self.stats.refuse(exc.cause)
            return self._cut(c, exc.reason, error=True)
        actions: list[Action] = []
        for number in replaced:
            old = self._conns.get(number)
            if old is not None:
                actions += self._cut(old, "replaced by a newer ad of the same key", error=True)
        c.role, c.phase, c.since = Role.AD, RelayPhase.ADVERTISING, now
        return [*actions, Send(c.number, frame(listed_message(seq, expires)))]

    def _check_join(
        self, c: _Conn, msg: dict[str, Any]
    ) -> tuple[TableDefinition, int, int | None] | str:
        """The table and the two seats of a join (a feed: its seat, and None) that proves its
        seat's key, or why not.

        Nothing of the relay's state is looked up or changed before the signature verifies,
        and the seats are checked against the table's own count (2, 3 or 4)."""
        feed = msg.get("type") == "relay-feed"
        keys = {"type", "definition", "proposal", "seat", "sig", *(() if feed else ("peer",))}
        if set(msg) != keys or msg["type"] not in ("relay-join", "relay-feed"):
            self.stats.refuse("not the relay protocol")
            return f"expected a relay-join with {sorted(keys | {'peer'})} or a relay-feed"
        try:
            definition = TableDefinition.from_wire(msg["definition"])
        except ValueError as exc:
            self.stats.refuse("bad table")
            return f"a bad table definition: {exc}"
        seat, peer, sig = msg["seat"], msg.get("peer"), msg["sig"]
        seats = len(definition.seats)
        if (
            type(seat) is not int
            or not 0 <= seat < seats
            or (not feed and (type(peer) is not int or not 0 <= peer < seats or seat == peer))
        ):
            self.stats.refuse("not the relay protocol")
            return f"seat and peer are two different seats 0..{seats - 1} of the table"
        if not definition.proposed_by_host(msg["proposal"]):
            self.stats.refuse("bad table")
            return "the host's signature of the table does not verify"
        if peer is None:
            statement = feed_statement(c.nonce, definition, seat)
        else:
            statement = join_statement(c.nonce, definition, seat, peer)
        if type(sig) is not bytes or not verify(definition.seats[seat].key, sig, statement):
            self.stats.refuse("no key for the seat")
            return f"the join is not signed by seat {seat}'s key"
        return definition, seat, peer

    def _slot(
        self, c: _Conn, definition: TableDefinition, now: float, actions: list[Action]
    ) -> _Table | None:
        """The table's slot for an authenticated connection of it (taken if it has none);
        None if the caps refuse it (then ``actions`` holds its cut)."""
        key = (definition.table_id, definition.digest)
        own = self._source_tables.get(c.source, {})
        if key not in own and len(own) >= self.limits.max_tables_per_source:
            self.stats.refuse("too many tables from one address")
            actions += self._cut(c, "this address holds too many tables at the relay", error=True)
            return None
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= self.limits.max_tables:
                evicted = self._evict_table()
                if evicted is None:
                    self.stats.refuse("too many tables")
                    actions += self._cut(c, "the relay serves too many tables", error=True)
                    return None
                actions += evicted
            table = self._tables[key] = _Table(now, watch_key(definition))
        return table

    def _authenticated(self, c: _Conn, key: TableKey, seat: int, now: float) -> None:
        c.table, c.seat, c.since = key, seat, now
        own = self._source_tables.setdefault(c.source, {})
        own[key] = own.get(key, 0) + 1

    def _join(
        self, c: _Conn, definition: TableDefinition, seat: int, peer: int, now: float
    ) -> list[Action]:
        actions: list[Action] = []
        key = (definition.table_id, definition.digest)
        table = self._slot(c, definition, now, actions)
        if table is None:
            return actions
        old = table.links.get((seat, peer))
        if old is not None:
            # The seat opened a new connection for the same peer: it wins (the old one is
            # dead, or about to be: a client holds one relayed link per peer).
            actions += self._cut(self._conns[old], "replaced by a newer connection")
            table = self._tables.setdefault(key, table)
        elif len(table.links) >= self.limits.max_per_table:
            self.stats.refuse("too many connections for the table")
            return self._cut(c, "too many connections for this table", error=True)
        table.links[(seat, peer)] = c.number
        self._authenticated(c, key, seat, now)
        c.peer, c.phase = peer, RelayPhase.WAITING
        self._schedule(c)
        c.decoder = FrameDecoder(self.limits.max_frame)
        limits = self.limits
        self._budgets.setdefault(c.link, ByteBudget.full(limits.rate, limits.burst, now))
        other = table.links.get((peer, seat))
        if other is None:
            return actions
        o = self._conns[other]
        c.partner, o.partner = o.number, c.number
        c.phase = o.phase = RelayPhase.PAIRED
        table.paired = True
        self.stats.paired += 1
        return [*actions, Send(o.number, PAIRED), Send(c.number, PAIRED)]

    def _feed(self, c: _Conn, definition: TableDefinition, seat: int, now: float) -> list[Action]:
        """A seat's watch feed: it waits for a watcher of its table (the oldest waiting, if
        one already does); a newer feed of the same seat replaces the older."""
        actions: list[Action] = []
        table = self._slot(c, definition, now, actions)
        if table is None:
            return actions
        key = (definition.table_id, definition.digest)
        old = table.feeds.pop(seat, None)
        if old is not None:
            actions += self._cut(self._conns[old], "replaced by a newer feed")
            table = self._tables.setdefault(key, table)
        table.feeds[seat] = c.number
        self._authenticated(c, key, seat, now)
        c.role, c.phase = Role.FEED, RelayPhase.FEED
        waiting = self._waiting.get(table.watch, [])
        if waiting:
            return actions + self._pair_watch(table, c, self._conns[waiting[0]], now)
        return actions

    def _watch(self, c: _Conn, msg: dict[str, Any], now: float) -> list[Action]:
        """A watcher's ``relay-watch``: paired with a waiting feed of the table it names, or
        left to wait for one (:attr:`RelayLimits.watch_timeout`)."""
        table_prefix, host = msg.get("table"), msg.get("host")
        if (
            set(msg) != {"type", "version", "table", "host"}
            or msg["version"] != RELAY_VERSION
            or type(table_prefix) is not bytes
            or len(table_prefix) != WATCH_PREFIX_SIZE
            or type(host) is not bytes
            or len(host) != KEY_DIGEST_SIZE
        ):
            self.stats.refuse("not the relay protocol")
            return self._cut(c, "expected a version 1 relay-watch", error=True)
        key: WatchKey = (table_prefix, host)
        limits = self.limits
        watchers = [w for w in self._conns.values() if w.role is Role.WATCHER]
        if sum(w.source == c.source for w in watchers) >= limits.max_watchers_per_source:
            self.stats.refuse("too many watchers from one address")
            return self._cut(c, "this address has too many watchers at the relay", error=True)
        if sum(w.watch == key for w in watchers) >= limits.max_watchers_per_table:
            self.stats.refuse("too many watchers for the table")
            return self._cut(c, "the table has too many watchers at this relay", error=True)
        c.role, c.watch, c.phase, c.since = Role.WATCHER, key, RelayPhase.WATCHER, now
        self._schedule(c)
        for table in self._tables.values():
            if table.watch == key and table.feeds:
                feed = self._conns[next(iter(table.feeds.values()))]
                return self._pair_watch(table, feed, c, now)
        self._waiting.setdefault(key, []).append(c.number)
        return []

    def _pair_watch(self, table: _Table, feed: _Conn, watcher: _Conn, now: float) -> list[Action]:
        del table.feeds[feed.seat]
        self._unwait(watcher)
        table.watched[feed.number] = watcher.number
        feed.partner, watcher.partner = watcher.number, feed.number
        feed.phase = watcher.phase = RelayPhase.PAIRED
        watcher.table = feed.table
        feed.decoder = FrameDecoder(self.limits.max_frame)
        feed.budget = watcher.budget = ByteBudget.full(self.limits.rate, self.limits.burst, now)
        self.stats.watchers += 1
        return [Send(feed.number, PAIRED), Send(watcher.number, PAIRED)]

    def _unwait(self, watcher: _Conn) -> None:
        assert watcher.watch is not None
        waiting = self._waiting.get(watcher.watch, [])
        if watcher.number in waiting:
            waiting.remove(watcher.number)
            if not waiting:
                del self._waiting[watcher.watch]

    def _evictable(self, held: int) -> _Conn | None:
        """The connection a newcomer whose source holds ``held`` connections takes the place
        of, when the relay is full: one that proved nothing yet, or waits in a table that
        never paired, of the source holding the most connections (the oldest first), if that
        source holds more than the newcomer's."""
        candidates = [
            c
            for c in self._conns.values()
            if c.phase in _UNPAIRED or (c.table is not None and not self._tables[c.table].paired)
        ]
        if not candidates:
            return None
        victim = max(candidates, key=lambda c: (self._per_source[c.source], -c.opened))
        return victim if self._per_source[victim.source] > held + 1 else None

    def _evict_table(self) -> list[Action] | None:
        """Free the slot of the oldest table that never paired (None: every table paired)."""
        unpaired = [(t.opened, k) for k, t in self._tables.items() if not t.paired]
        if not unpaired:
            return None
        _, key = min(unpaired)
        self.stats.refuse("evicted")
        actions: list[Action] = []
        table = self._tables[key]
        for number in [*table.links.values(), *table.feeds.values(), *table.watched]:
            if number in self._conns:
                actions += self._cut(self._conns[number], "evicted: the relay is full", error=True)
        return actions

    def _forward(self, c: _Conn, payload: bytes) -> list[Action]:
        assert c.partner is not None
        self.stats.forwarded_frames += 1
        self.stats.forwarded_bytes += len(payload) + FRAME_HEADER_SIZE
        return [Send(c.partner, frame(payload, self.limits.max_frame))]

    def _cut(
        self, c: _Conn, reason: str, *, error: bool = False, flood: bool = False
    ) -> list[Action]:
        """Close ``c`` (and its partner, if paired); tell it why if ``error``."""
        actions: list[Action] = []
        if error:
            actions.append(
                Send(c.number, frame(encode({"type": "relay-error", "reason": reason[:200]})))
            )
        buffered = c.decoder.buffered
        if buffered or flood:
            self.count_dropped(1, buffered)
        return actions + self._drop(c, reason)

    def _drop(self, c: _Conn, reason: str) -> list[Action]:
        actions: list[Action] = [Close(c.number, reason)]
        del self._conns[c.number]
        held = self._per_source[c.source] - 1
        if held:
            self._per_source[c.source] = held
        else:
            del self._per_source[c.source]
        if c.role is Role.WATCHER:
            self._unwait(c)
        elif c.role is Role.AD:
            assert self.directory is not None
            self.directory.withdraw(c.number)
        elif c.table is not None:
            own = self._source_tables[c.source]
            own[c.table] -= 1
            if not own[c.table]:
                del own[c.table]
                if not own:
                    del self._source_tables[c.source]
            table = self._tables.get(c.table)
            if table is not None:
                if table.links.get((c.seat, c.peer)) == c.number:
                    del table.links[(c.seat, c.peer)]
                if table.feeds.get(c.seat) == c.number:
                    del table.feeds[c.seat]
                table.watched.pop(c.number, None)
                if table.empty:
                    del self._tables[c.table]
        if c.partner is not None and c.partner in self._conns:
            partner = self._conns[c.partner]
            partner.partner = None
            actions += self._drop(partner, f"seat {c.seat}'s side of the pair closed")
        return actions


BUDGET_SWEEP = 10.0
"""Seconds between two looks for the byte budgets a relay may forget."""
_NO_DEADLINE = (RelayPhase.PAIRED, RelayPhase.FEED, RelayPhase.ADVERTISING)
_UNPAIRED = (
    RelayPhase.HELLO,
    RelayPhase.CHALLENGED,
    RelayPhase.WATCHER,
    RelayPhase.LISTING,
    RelayPhase.ADVERTISING,
)
"""What a full relay may evict: connections that hold no link of a table that paired (an
ad proves only a key, which anybody can make)."""


def source_of(host: str) -> str:
    """The source a relay counts a connection against: its IPv4 address, or the /64 of its
    IPv6 address (one host, or one network of one subscriber, holds a whole /64)."""
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
