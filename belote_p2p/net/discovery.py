"""LAN discovery: a host with free seats announces its table by UDP; ``tables`` lists them.

While its lobby has free seats a host sends a *beacon* every second (:func:`send_beacons`);
a player who wants a table listens for a few seconds (:func:`discover`), and ``join`` with
no address offers the tables heard (:func:`choose_table`).

A beacon is one UDP datagram holding one canonical msgpack map (:mod:`belote_p2p.protocol.wire`)::

    {"magic": "belote-p2p/beacon", "version": 2, "name": host name, "variant": rule set,
     "target": score to reach, "free": free seats 0..3, "port": lobby TCP port,
     "table": table id (16 bytes), "key": the host's Ed25519 public key (32 bytes)}

Anyone on the link can send a beacon, so a beacon proves nothing: a listing is keyed by the
host's key and the table id, and ``join`` checks that the table it is given at the lobby is
that table, proposed by that key, as it does for an invitation code (a spoofed beacon listing
a real host's table at another port is then refused there). The directory of tables heard is
bounded (:data:`MAX_TABLES`, the least recently heard forgotten first) and so is what one
source address can list (:data:`MAX_PER_SOURCE`): a flood of beacons costs a listener a few
hundred entries at most.

The host's IP address is not in the beacon: the listener takes it from the datagram's
source, which is the address that reaches the host from where the listener is. Parsing is
strict (exact keys, types, ranges, names as a seat may carry them (PROTOCOL.md §6.1), at
most :data:`MAX_BEACON_SIZE` bytes)
and anything else on the port is ignored: a beacon is a hint to look at a table, not a
promise, and the lobby handshake checks everything that matters.

Default address: UDP broadcast to ``255.255.255.255`` port ``7778``
(:data:`DEFAULT_GROUP`, :data:`DEFAULT_BEACON_PORT`). Broadcast needs no group membership
and no multicast routing, and home and office Wi-Fi access points pass it where many drop
or rate-limit multicast; its reach is the local link, which is what a LAN table wants.
A multicast group (``--group 239.255.42.99``, an organisation-local address) works too:
the listener joins it and the sender sends with TTL 1. Any other address is unicast, which
is how the tests run on ``127.0.0.1``.

IPv6 has no broadcast: a host also sends each beacon to the link-local multicast group
``ff12::6265:6c6f`` (:data:`IPV6_GROUP`; ``6265:6c6f`` is "belo" in ASCII) on every
interface, with a hop limit of 1, and a listener joins that group on every interface. The
group has link-local scope (``ff.2``) with the transient flag set (``ff1.``): RFC 4291 keeps
``ff02::`` for groups IANA assigned, and a group nobody assigned is a transient one. A
beacon heard over IPv6 names the host by the datagram's source, a link-local address with
its interface (``fe80::1%eth0``), which ``join`` dials as it is.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.protocol.names import name_problem
from belote_p2p.protocol.wire import KEY_SIZE, TABLE_ID_SIZE, decode, encode

logger = logging.getLogger(__name__)

BEACON_MAGIC = "belote-p2p/beacon"
BEACON_VERSION = 2
"""Version 2 carries the host's key (version 1 did not: a listener ignores it)."""
BEACON_KEYS = frozenset(
    {"magic", "version", "name", "variant", "target", "free", "port", "table", "key"}
)
MAX_BEACON_SIZE = 512
"""Largest datagram read as a beacon; a real one is about 150 bytes."""
MAX_VARIANT = 32
MAX_TARGET = 100_000
MAX_FREE = 3
MAX_TABLES = 256
"""Tables a listener keeps at most; the least recently heard goes first."""
MAX_PER_SOURCE = 8
"""Tables one source address may list at once; its least recently heard goes first."""

DEFAULT_GROUP = "255.255.255.255"
DEFAULT_BEACON_PORT = 7778
MULTICAST_GROUP = "239.255.42.99"
"""The suggested multicast group, for networks where broadcast is filtered."""
IPV6_GROUP = "ff12::6265:6c6f"
"""The IPv6 link-local multicast group of beacons (see the module docstring)."""
DEFAULT_ADDRESSES: tuple[tuple[str, int], ...] = (
    (DEFAULT_GROUP, DEFAULT_BEACON_PORT),
    (IPV6_GROUP, DEFAULT_BEACON_PORT),
)
"""Where hosts send beacons and players listen by default: IPv4 broadcast and IPv6
multicast."""
DEFAULT_INTERVAL = 1.0
"""Seconds between two beacons."""
DEFAULT_LISTEN = 3.0
"""Seconds ``tables`` listens: enough to hear every host at least twice."""


class BeaconError(BeloteError, ValueError):
    """A datagram that is not a beacon; ``data`` holds its bytes."""

    def __init__(self, message: str, data: bytes) -> None:
        super().__init__(message)
        self.data = data


@dataclass(frozen=True, slots=True)
class Beacon:
    """What a host announces about its table."""

    name: str
    """The host's player name."""
    variant: str
    """The rule set's name (``classic``, ``coinche``...)."""
    target: int
    free: int
    """Seats still free (0 says the table just filled: listeners forget it)."""
    port: int
    """The host's lobby TCP port."""
    table_id: bytes
    host_key: bytes
    """The host's Ed25519 public key: the key that must propose the table."""

    def __post_init__(self) -> None:
        problem = name_problem(self.name)
        if problem is not None:
            raise ValueError(problem)
        _check_name(self.variant, "variant", MAX_VARIANT)
        _check_int(self.target, "target", 1, MAX_TARGET)
        _check_int(self.free, "free", 0, MAX_FREE)
        _check_int(self.port, "port", 1, 65535)
        if type(self.table_id) is not bytes or len(self.table_id) != TABLE_ID_SIZE:
            raise ValueError(f"table_id must be {TABLE_ID_SIZE} bytes")
        if type(self.host_key) is not bytes or len(self.host_key) != KEY_SIZE:
            raise ValueError(f"the host key must be {KEY_SIZE} bytes")

    def to_wire(self) -> dict[str, Any]:
        return {
            "magic": BEACON_MAGIC,
            "version": BEACON_VERSION,
            "name": self.name,
            "variant": self.variant,
            "target": self.target,
            "free": self.free,
            "port": self.port,
            "table": self.table_id,
            "key": self.host_key,
        }


def _check_name(value: object, what: str, limit: int) -> None:
    # Names end up on a terminal: no control characters, no escape sequences.
    if type(value) is not str or not 0 < len(value) <= limit or not value.isprintable():
        raise ValueError(f"{what} must be 1..{limit} printable characters")


def _check_int(value: object, what: str, low: int, high: int) -> None:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{what} must be an integer in {low}..{high}")


def encode_beacon(beacon: Beacon) -> bytes:
    return encode(beacon.to_wire())


def decode_beacon(data: bytes) -> Beacon:
    """Parse one datagram strictly; raise :class:`BeaconError` if it is not a beacon."""
    if len(data) > MAX_BEACON_SIZE:
        raise BeaconError(f"datagram of {len(data)} bytes is larger than a beacon", data)
    try:
        value = decode(data)
    except RemoteProtocolError as exc:
        raise BeaconError(str(exc), data) from None
    if not isinstance(value, dict) or set(value) != BEACON_KEYS:
        raise BeaconError("not a beacon map", data)
    if value["magic"] != BEACON_MAGIC or value["version"] != BEACON_VERSION:
        raise BeaconError(f"not a version {BEACON_VERSION} belote-p2p beacon", data)
    try:
        return Beacon(
            value["name"],
            value["variant"],
            value["target"],
            value["free"],
            value["port"],
            value["table"],
            value["key"],
        )
    except ValueError as exc:
        raise BeaconError(str(exc), data) from None


@dataclass(frozen=True, slots=True)
class TableAd:
    """A table heard on the network: the latest beacon and where it came from."""

    beacon: Beacon
    host: str
    """The IP address the beacon came from: the host's, as seen from here."""
    seen: float
    """When it was last heard (``trio.current_time()``)."""
    first_heard: float = 0.0
    """When its first beacon was heard."""

    @property
    def address(self) -> str:
        """``host:port`` of the lobby, as ``join`` takes it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.beacon.port}"

    @property
    def table_id(self) -> bytes:
        return self.beacon.table_id


Listing = tuple[bytes, bytes]
"""A listing's key: (host key, table id)."""


class TableDirectory:
    """The tables heard so far, one per (host key, table id), each as its latest beacon, at
    most :data:`MAX_TABLES` of them and :data:`MAX_PER_SOURCE` from one address (no I/O)."""

    def __init__(self, limit: int = MAX_TABLES, per_source: int = MAX_PER_SOURCE) -> None:
        self._ads: dict[Listing, TableAd] = {}
        """In the order they were last heard, the least recent first."""
        self.limit = limit
        self.per_source = per_source
        self.ignored = 0
        """Datagrams that were not beacons."""
        self.forgotten = 0
        """Listings dropped to keep the bounds."""

    def receive(self, data: bytes, host: str, now: float) -> TableAd | None:
        """Take one datagram from ``host``; return the ad it made, or None if ignored."""
        try:
            beacon = decode_beacon(data)
        except BeaconError as exc:
            self.ignored += 1
            logger.debug("ignored a datagram from %s: %s", host, exc)
            return None
        listing = (beacon.host_key, beacon.table_id)
        known = self._ads.pop(listing, None)
        if known is None:
            ad = TableAd(beacon, host, now, now)
        elif _reach(host) < _reach(known.host):
            # The same table heard on the network and through this machine's loopback (a
            # host on this machine), or over IPv4 and IPv6 link-local: keep the address that
            # reaches furthest, which the others use too.
            ad = TableAd(beacon, known.host, now, known.first_heard)
        else:
            ad = TableAd(beacon, host, now, known.first_heard)
        same_source = [k for k, a in self._ads.items() if a.host == ad.host]
        for old in same_source[: max(0, len(same_source) - self.per_source + 1)]:
            del self._ads[old]
            self.forgotten += 1
        while len(self._ads) >= self.limit:
            del self._ads[next(iter(self._ads))]
            self.forgotten += 1
        self._ads[listing] = ad
        return ad

    def ads(self) -> list[TableAd]:
        """Open tables (at least one free seat), in the order they were first heard."""
        open_ads = [ad for ad in self._ads.values() if ad.beacon.free > 0]
        return sorted(open_ads, key=lambda ad: ad.first_heard)


# -- sockets --------------------------------------------------------------------------------


def _reach(ip: str) -> int:
    """How far an address of the host reaches: 0 this machine (loopback), 1 the link
    (link-local: ``fe80::1%eth0`` means nothing elsewhere), 2 further."""
    try:
        address = ipaddress.ip_address(ip.partition("%")[0])
    except ValueError:
        return 2
    return 0 if address.is_loopback else 1 if address.is_link_local else 2


def _is_multicast(ip: str) -> bool:
    return ipaddress.ip_address(ip).is_multicast


def _is_v6(ip: str) -> bool:
    return ipaddress.ip_address(ip).version == 6


def _udp_socket(ip: str = DEFAULT_GROUP) -> trio.socket.SocketType:
    family = trio.socket.AF_INET6 if _is_v6(ip) else trio.socket.AF_INET
    return trio.socket.socket(family, trio.socket.SOCK_DGRAM)


def _interfaces() -> list[int]:
    """The indexes of this machine's network interfaces."""
    try:
        return [index for index, _ in socket.if_nameindex()]
    except OSError:
        return []


async def open_listener(address: tuple[str, int]) -> trio.socket.SocketType:
    """A UDP socket that receives the beacons sent to ``address`` (group or IP, port).

    A loopback address is bound as is (port 0 picks a free port: read it back with
    ``getsockname``); any other is bound on all interfaces, several listeners on one
    machine sharing the port, and a multicast group is joined.
    """
    group, port = address
    ip = ipaddress.ip_address(group)  # an IP address, or ValueError
    sock = _udp_socket(group)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            with contextlib.suppress(OSError):  # declared but refused by some kernels
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if ip.version == 6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        local = group if ip.is_loopback else ("::" if ip.version == 6 else "")
        await sock.bind((local, port))
        if ip.is_multicast and ip.version == 4:
            membership = socket.inet_aton(group) + socket.inet_aton("0.0.0.0")
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        elif ip.is_multicast:
            joined = 0
            for index in _interfaces():
                request = socket.inet_pton(socket.AF_INET6, group) + index.to_bytes(4, "little")
                with contextlib.suppress(OSError):  # an interface without multicast
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, request)
                    joined += 1
            if not joined:
                raise OSError(f"no interface joins {group}")
    except BaseException:
        sock.close()
        raise
    return sock


def _source_host(source: tuple[Any, ...]) -> str:
    """The sender's IP; an IPv6 link-local one with its interface (``fe80::1%eth0``), which
    is needed to dial it."""
    host = str(source[0])
    scope = source[3] if len(source) >= 4 else 0
    if scope and "%" not in host:
        try:
            host = f"{host}%{socket.if_indextoname(scope)}"
        except OSError:
            host = f"{host}%{scope}"
    return host


async def listen(
    sock: trio.socket.SocketType, duration: float, directory: TableDirectory | None = None
) -> list[TableAd]:
    """Read beacons from ``sock`` for ``duration`` seconds; return the open tables."""
    directory = TableDirectory() if directory is None else directory
    with trio.move_on_after(duration):
        while True:
            # One byte more than a beacon: a longer datagram is seen, and refused, as long.
            data, source = await sock.recvfrom(MAX_BEACON_SIZE + 1)
            directory.receive(data, _source_host(source), trio.current_time())
    return directory.ads()


async def discover(
    *,
    address: tuple[str, int] = (DEFAULT_GROUP, DEFAULT_BEACON_PORT),
    duration: float = DEFAULT_LISTEN,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> list[TableAd]:
    """Listen for beacons on ``address`` for ``duration`` seconds; return the open tables,
    one per table id (its latest beacon), the sender's IP as the host.

    Started with ``nursery.start``, it reports the bound address once it listens.
    """
    sock = await open_listener(address)
    with sock:
        task_status.started(sock.getsockname())
        return await listen(sock, duration)


async def discover_all(
    addresses: Sequence[tuple[str, int]] = DEFAULT_ADDRESSES,
    *,
    duration: float = DEFAULT_LISTEN,
) -> list[TableAd]:
    """:func:`discover` on several addresses at once (IPv4 and IPv6 by default); the open
    tables heard on any. An address that cannot be listened on (no IPv6 here, say) is
    skipped; ``OSError`` only if none can."""
    directory = TableDirectory()
    socks = []
    errors = []
    for address in addresses:
        try:
            socks.append(await open_listener(address))
        except OSError as exc:
            errors.append(exc)
    if not socks:
        raise errors[0]
    try:
        async with trio.open_nursery() as nursery:
            for sock in socks:
                nursery.start_soon(listen, sock, duration, directory)
    finally:
        for sock in socks:
            sock.close()
    return directory.ads()


async def send_beacons(
    beacon_fn: Callable[[], Beacon | None],
    *,
    address: tuple[str, int] = (DEFAULT_GROUP, DEFAULT_BEACON_PORT),
    interval: float = DEFAULT_INTERVAL,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Send ``beacon_fn()`` to ``address`` every ``interval`` seconds, until cancelled.

    ``beacon_fn`` is asked each time, so the beacon follows the lobby (free seats); it
    returns None to skip a beacon. A failed send (no network yet, say) is logged and the
    next one tried: announcing a table must never break hosting it.
    """
    sock = beacon_socket(address[0])
    with sock:
        task_status.started()
        warned = False
        # A broadcast or multicast beacon goes to this machine's loopback too: a player on
        # the host's own machine hears the table even without a network (or where the
        # broadcast does not come back to its sender).
        targets = [address]
        group = ipaddress.ip_address(address[0])
        if not group.is_loopback:
            targets.append(("::1" if group.version == 6 else "127.0.0.1", address[1]))
        while True:
            beacon = beacon_fn()
            if beacon is not None:
                for target in targets:
                    try:
                        await send_beacon(sock, encode_beacon(beacon), target)
                    except OSError as exc:
                        if not warned and target == address:
                            logger.warning("cannot send the table's beacon to %s: %s", address, exc)
                            warned = True
            await trio.sleep(interval)


def beacon_socket(group: str) -> trio.socket.SocketType:
    """A UDP socket to send beacons to ``group`` (broadcast allowed; multicast with a TTL
    or hop limit of 1: beacons stay on the local link)."""
    sock = _udp_socket(group)
    if _is_v6(group):
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
    else:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        if _is_multicast(group):
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    return sock


async def send_beacon(sock: trio.socket.SocketType, data: bytes, address: tuple[str, int]) -> None:
    """Send one datagram to ``address``; an IPv6 multicast group gets it on every interface
    that takes it (``OSError`` if none does)."""
    group, port = address
    if not (_is_v6(group) and _is_multicast(group)):
        await sock.sendto(data, address)
        return
    sent = 0
    last: OSError | None = None
    for index in _interfaces():
        try:
            await sock.sendto(data, (group, port, 0, index))
            sent += 1
        except OSError as exc:
            last = exc
    if not sent:
        raise last or OSError(f"no interface to send to {group}")


# -- the prompt and the command -------------------------------------------------------------
