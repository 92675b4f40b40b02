"""The public directory of tables, sans-io: signed advertisements, their checks, and the
bounded store a relay keeps of them (``PROTOCOL.md`` §12).

A host that wants strangers lists its table at a relay that keeps a directory (``belote-p2p
relay --directory``): an **advertisement** says what a stranger chooses a table by (the
variant, the target, the free seats, the players seated and the languages spoken, the host's
name and its claimed level) and how to reach it (the host's key, the table id, the host's
addresses and the table's relay: with the key and the id, an invitation, §9), and is signed
by the host's key. A stranger asks the relay for the tables that fit (a **query**) and gets
the signed advertisements back; it checks each signature itself and joins as an invitation
joins: it refuses a lobby whose table the advertised key did not propose.

Nothing here trusts the directory, and the directory trusts nobody:

* an advertisement is bounded (:data:`MAX_AD_SIZE`, every field's range) and signed under the
  key it names, over the relay's fresh nonce of the connection it came on: a relay refuses
  one it cannot verify, and one copied from a listing (or from another relay) is worth
  nothing on another connection. It is listed while that connection lasts and its host
  refreshes it within its ``ttl``; the connection's end withdraws it at once;
* a relay caps the advertisements per source address and per key, and in all
  (:class:`DirectoryLimits`), forgets an expired one, and answers queries at a bounded rate
  per source;
* a lying directory can hide tables, or list tables that do not answer (replaying ads it
  once saw), but not alter an advertisement, nor make a stranger sign anything for a table
  whose host key the advertisement did not name: the stranger checks the key.

:class:`Directory` is the relay's store; the relay's sans-io server
(:class:`~belote_p2p.protocol.relay.RelayServer`) feeds it the messages of its connections,
and the trio shell only carries bytes. The clock is passed in.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from belote_p2p.errors import RemoteProtocolError

from .budget import ByteBudget
from .identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity, verify
from .names import name_problem
from .wire import NONCE_SIZE, TABLE_ID_SIZE, decode, encode, encode_sorted

AD_LABEL = b"belote-p2p/table-ad/v1\x00"
"""Domain separation of an advertisement's signature."""
AD_VERSION = 1
DIRECTORY_VERSION = 1
AD_KEYS = frozenset(
    {
        "type", "version", "key", "table", "nonce", "seq", "ttl", "name", "variant",
        "target", "seats", "free", "players", "langs", "level", "addresses", "relay",
    }
)  # fmt: skip
PLAYER_KEYS = frozenset({"name", "key", "level"})
QUERY_KEYS = frozenset({"type", "version", "variant", "lang", "limit"})
MAX_AD_SIZE = 2048
"""Bytes of an encoded advertisement map, at most (a real one is 300 to 700)."""
MAX_SIGNED_AD_SIZE = MAX_AD_SIZE + 96
"""Bytes of an encoded ``{"ad", "sig"}`` entry of a listing, at most."""
MAX_ADDRESSES = 8
MAX_ADDRESS = 255
MAX_LANGS = 4
MAX_VARIANT = 32
MAX_TARGET = 100_000
MAX_LEVEL = 1_000_000
MIN_TTL = 10
MAX_TTL = 600
MAX_SEQ = 2**63 - 1
MAX_RESULTS = 50
"""Advertisements one answer holds, at most."""
LANG = re.compile(r"[a-z]{2,3}")
"""A language as an ad names it: an ISO 639 code, lower case (``fr``, ``es``, ``en``)."""
VARIANT = re.compile(r"[a-z0-9][a-z0-9-]*")
"""A rule set's name as an ad names it (``classic``, ``coinche``, ``three-handed``...)."""


class DirectoryError(RemoteProtocolError):
    """An advertisement, a query or an answer that breaks the directory protocol (or that
    our own code tried to build); the message says how."""


# -- advertisements ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AdPlayer:
    """A joiner already seated at an advertised table, as its host claims."""

    name: str
    key: bytes
    level: int | None = None
    """The level the player claimed in the lobby (its own word, never checked)."""

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "level": self.level}


@dataclass(frozen=True, slots=True)
class Advertisement:
    """A table as its host lists it at a directory (``PROTOCOL.md`` §12.1).

    Every field is checked when the value is made (:class:`DirectoryError`), so that an ad
    that exists is an ad a directory lists."""

    host_key: bytes
    table_id: bytes
    nonce: bytes
    """The relay's nonce of the connection the ad is listed on (its ``relay-challenge``)."""
    seq: int
    """Grows with each new version of the ad (a refresh, a change of seats)."""
    ttl: int
    """Seconds the directory lists it without a newer version (:data:`MIN_TTL` to
    :data:`MAX_TTL`)."""
    name: str
    """The host's name (as a seat carries it, ``PROTOCOL.md`` §6.1)."""
    variant: str
    """The rule set's name."""
    target: int
    seats: int
    """The table's seats, the host's included (2, 3 or 4)."""
    free: int
    """Seats still free for strangers (1 to ``seats - 1``)."""
    players: tuple[AdPlayer, ...] = ()
    """The joiners seated so far (at most ``seats - 1 - free``)."""
    langs: tuple[str, ...] = ()
    """The languages the table speaks (its players', as the host knows them)."""
    level: int | None = None
    """The host's level, as it claims it."""
    addresses: tuple[str, ...] = ()
    """``host:port`` of the host's port (its lobby), the first tried first."""
    relay: str | None = None
    """``host:port`` of the table's relay, if not the host's port."""

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise DirectoryError(f"a bad table advertisement: {problem}")

    @property
    def keys(self) -> tuple[bytes, ...]:
        """Every key the ad names: the host's, then the seated players'."""
        return (self.host_key, *(p.key for p in self.players))

    @property
    def listing(self) -> tuple[bytes, bytes]:
        """What tells one table's ads from another's: the host key and the table id."""
        return self.host_key, self.table_id

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "table-ad",
            "version": AD_VERSION,
            "key": self.host_key,
            "table": self.table_id,
            "nonce": self.nonce,
            "seq": self.seq,
            "ttl": self.ttl,
            "name": self.name,
            "variant": self.variant,
            "target": self.target,
            "seats": self.seats,
            "free": self.free,
            "players": [p.to_wire() for p in self.players],
            "langs": list(self.langs),
            "level": self.level,
            "addresses": list(self.addresses),
            "relay": self.relay,
        }

    @classmethod
    def from_wire(cls, data: object) -> Advertisement:
        """Parse strictly: exactly the keys of §12.1, each of its type and range."""
        if not isinstance(data, dict) or set(data) != AD_KEYS:
            raise DirectoryError(f"an advertisement is a map of exactly {sorted(AD_KEYS)}")
        if data["type"] != "table-ad" or data["version"] != AD_VERSION:
            raise DirectoryError(f"not a version {AD_VERSION} table-ad")
        players, langs, addresses = data["players"], data["langs"], data["addresses"]
        if not isinstance(players, list) or not all(
            isinstance(p, dict) and set(p) == PLAYER_KEYS for p in players
        ):
            raise DirectoryError(f"players is an array of maps of {sorted(PLAYER_KEYS)}")
        if not isinstance(langs, list) or not isinstance(addresses, list):
            raise DirectoryError("langs and addresses are arrays")
        return cls(
            host_key=data["key"],
            table_id=data["table"],
            nonce=data["nonce"],
            seq=data["seq"],
            ttl=data["ttl"],
            name=data["name"],
            variant=data["variant"],
            target=data["target"],
            seats=data["seats"],
            free=data["free"],
            players=tuple(AdPlayer(p["name"], p["key"], p["level"]) for p in players),
            langs=tuple(langs),
            level=data["level"],
            addresses=tuple(addresses),
            relay=data["relay"],
        )

    def encode(self) -> bytes:
        return encode(self.to_wire())

    def sign(self, identity: Identity) -> SignedAd:
        """The ad signed by its host (:class:`DirectoryError` if ``identity`` is not it, or
        the ad encodes over :data:`MAX_AD_SIZE`)."""
        if identity.public_key_bytes != self.host_key:
            raise DirectoryError("an advertisement is signed by the key it names")
        encoded = self.encode()
        if len(encoded) > MAX_AD_SIZE:
            raise DirectoryError(f"the advertisement takes {len(encoded)} bytes (at most "
                                 f"{MAX_AD_SIZE}): fewer addresses or shorter names")  # fmt: skip
        return SignedAd(self, identity.sign(AD_LABEL + encoded), encoded)


def _problem(ad: Advertisement) -> str | None:
    """What is wrong with ``ad``'s fields, or None."""
    sized: tuple[tuple[object, int, str], ...] = (
        (ad.host_key, PUBLIC_KEY_SIZE, "key"),
        (ad.table_id, TABLE_ID_SIZE, "table"),
        (ad.nonce, NONCE_SIZE, "nonce"),
    )
    for blob, size, what in sized:
        if type(blob) is not bytes or len(blob) != size:
            return f"{what} is {size} bytes"
    ranged: tuple[tuple[object, int, int, str], ...] = (
        (ad.seq, 0, MAX_SEQ, "seq"),
        (ad.ttl, MIN_TTL, MAX_TTL, "ttl"),
        (ad.target, 1, MAX_TARGET, "target"),
        (ad.seats, 2, 4, "seats"),
    )
    for value, low, high, what in ranged:
        if type(value) is not int or not low <= value <= high:
            return f"{what} is an integer in {low}..{high}"
    if type(ad.free) is not int or not 1 <= ad.free < ad.seats:
        return f"free is an integer in 1..{ad.seats - 1} (a full table is withdrawn)"
    problem = name_problem(ad.name)
    if problem is not None:
        return f"name: {problem}"
    if type(ad.variant) is not str or len(ad.variant) > MAX_VARIANT:
        return f"variant is a string of at most {MAX_VARIANT} characters"
    if not VARIANT.fullmatch(ad.variant):
        return "variant is lower-case letters, digits and dashes"
    if not _level_ok(ad.level):
        return f"level is nil or an integer in 0..{MAX_LEVEL}"
    if len(ad.players) > ad.seats - 1 - ad.free:
        return f"{len(ad.players)} players seated and {ad.free} seats free at {ad.seats} seats"
    for player in ad.players:
        problem = name_problem(player.name)
        if problem is not None:
            return f"a player's name: {problem}"
        if type(player.key) is not bytes or len(player.key) != PUBLIC_KEY_SIZE:
            return f"a player's key is {PUBLIC_KEY_SIZE} bytes"
        if not _level_ok(player.level):
            return f"a player's level is nil or an integer in 0..{MAX_LEVEL}"
    if len(set(ad.keys)) != len(ad.keys):
        return "every player has its own key"
    if len(ad.langs) > MAX_LANGS or len(set(ad.langs)) != len(ad.langs):
        return f"langs holds at most {MAX_LANGS} different languages"
    if not all(type(lang) is str and LANG.fullmatch(lang) for lang in ad.langs):
        return "a language is a lower-case ISO 639 code (fr, es, en...)"
    if not 1 <= len(ad.addresses) <= MAX_ADDRESSES:
        return f"addresses holds 1 to {MAX_ADDRESSES} host:port"
    for address in (*ad.addresses, *(() if ad.relay is None else (ad.relay,))):
        if not address_ok(address):
            return f"{address!r} is not a host:port of at most {MAX_ADDRESS} characters"
    return None


def _level_ok(level: object) -> bool:
    return level is None or (type(level) is int and 0 <= level <= MAX_LEVEL)


def address_ok(address: object) -> bool:
    """Whether ``address`` has the form of a ``host:port`` (printable ASCII, no spaces, a
    port 1..65535; an IPv6 host in brackets). The lister parses it strictly before it dials."""
    if type(address) is not str or not 0 < len(address) <= MAX_ADDRESS:
        return False
    if not address.isascii() or not address.isprintable() or " " in address:
        return False
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return False
    if host.startswith("["):
        return host.endswith("]") and len(host) > 2
    return ":" not in host


@dataclass(frozen=True, slots=True)
class SignedAd:
    """An advertisement and its host's signature, checked (:meth:`parse`) or made
    (:meth:`Advertisement.sign`)."""

    ad: Advertisement
    sig: bytes
    encoded: bytes = field(repr=False)
    """The ad's canonical bytes (what the signature covers, after the label)."""

    def to_wire(self) -> dict[str, Any]:
        return {"ad": self.ad.to_wire(), "sig": self.sig}

    @classmethod
    def parse(cls, data: object) -> SignedAd:
        """A ``{"ad": map, "sig": bin 64}`` entry whose signature verifies under the ad's
        own key; :class:`DirectoryError` otherwise."""
        if not isinstance(data, dict) or set(data) != {"ad", "sig"}:
            raise DirectoryError("a signed advertisement is a map of ad and sig")
        sig = data["sig"]
        if type(sig) is not bytes or len(sig) != SIGNATURE_SIZE:
            raise DirectoryError(f"sig is {SIGNATURE_SIZE} bytes")
        ad = Advertisement.from_wire(data["ad"])
        encoded = ad.encode()
        if len(encoded) > MAX_AD_SIZE:
            raise DirectoryError(f"an ad of {len(encoded)} bytes (at most {MAX_AD_SIZE})")
        if not verify(ad.host_key, sig, AD_LABEL + encoded):
            raise DirectoryError("the advertisement is not signed by the key it names")
        return cls(ad, sig, encoded)


def ad_statement(ad: Advertisement) -> bytes:
    """What a host signs to list ``ad``: the label, then the ad's canonical bytes."""
    return AD_LABEL + ad.encode()


# -- the messages ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    """What a stranger asks a directory: the tables of a variant, of a language, or any."""

    variant: str | None = None
    lang: str | None = None
    limit: int = MAX_RESULTS

    def __post_init__(self) -> None:
        if self.variant is not None and (
            type(self.variant) is not str
            or len(self.variant) > MAX_VARIANT
            or not VARIANT.fullmatch(self.variant)
        ):
            raise DirectoryError("a query's variant is nil or a rule set's name")
        if self.lang is not None and (type(self.lang) is not str or not LANG.fullmatch(self.lang)):
            raise DirectoryError("a query's lang is nil or an ISO 639 code")
        if type(self.limit) is not int or not 1 <= self.limit <= MAX_RESULTS:
            raise DirectoryError(f"a query's limit is an integer in 1..{MAX_RESULTS}")

    def fits(self, ad: Advertisement) -> bool:
        """Whether ``ad`` answers this query (a lister checks it again: the directory may
        lie)."""
        return (self.variant is None or ad.variant == self.variant) and (
            self.lang is None or self.lang in ad.langs
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "dir-query",
            "version": DIRECTORY_VERSION,
            "variant": self.variant,
            "lang": self.lang,
            "limit": self.limit,
        }

    @classmethod
    def from_wire(cls, data: object) -> Query:
        if not isinstance(data, dict) or set(data) != QUERY_KEYS:
            raise DirectoryError(f"a query is a map of exactly {sorted(QUERY_KEYS)}")
        if data["type"] != "dir-query" or data["version"] != DIRECTORY_VERSION:
            raise DirectoryError(f"not a version {DIRECTORY_VERSION} dir-query")
        return cls(data["variant"], data["lang"], data["limit"])


def advertise_message(signed: SignedAd) -> bytes:
    """The host's ``dir-advertise`` frame (after the relay's challenge; again for each new
    version of the ad, on the same connection)."""
    return encode({"type": "dir-advertise", **signed.to_wire()})


def withdraw_message() -> bytes:
    """The host's ``dir-withdraw``: the table is no longer listed (the relay closes)."""
    return encode({"type": "dir-withdraw"})


def listed_message(seq: int, expires: int) -> bytes:
    """The relay's answer to an ad: listed, for ``expires`` seconds without a newer one."""
    return encode({"type": "dir-listed", "seq": seq, "expires": expires})


def parse_listed(data: bytes) -> tuple[int, int]:
    """The relay's ``dir-listed``: the seq it listed and its seconds to live;
    :class:`DirectoryError` for anything else (its ``relay-error`` says why)."""
    msg = _relay_answer(data, "the ad")
    seq, expires = msg.get("seq"), msg.get("expires")
    if (
        set(msg) != {"type", "seq", "expires"}
        or msg["type"] != "dir-listed"
        or type(seq) is not int
        or type(expires) is not int
        or not 0 < expires <= MAX_TTL
    ):
        raise DirectoryError("the relay sent neither dir-listed nor relay-error")
    return seq, expires


@dataclass(frozen=True, slots=True)
class Listing:
    """A directory's answer, as the lister checked it."""

    ads: tuple[SignedAd, ...]
    """The advertisements whose signatures verify, one per table (its highest seq), in the
    directory's order."""
    more: bool
    """The directory says more tables fit than it sent."""
    refused: int = 0
    """Entries dropped: not a signed advertisement (the directory, or the path, damaged or
    made them up)."""


def parse_tables(data: bytes) -> Listing:
    """A directory's ``dir-tables`` answer: each entry checked on its own (a bad one is
    dropped and counted, never trusted); :class:`DirectoryError` if the answer itself is
    none (its ``relay-error`` says why)."""
    msg = _relay_answer(data, "the query")
    tables, more = msg.get("tables"), msg.get("more")
    if (
        set(msg) != {"type", "tables", "more"}
        or msg["type"] != "dir-tables"
        or not isinstance(tables, list)
        or type(more) is not bool
    ):
        raise DirectoryError("the relay sent neither dir-tables nor relay-error")
    best: dict[tuple[bytes, bytes], SignedAd] = {}
    refused = 0
    for entry in tables[: MAX_RESULTS * 2]:
        try:
            signed = SignedAd.parse(entry)
        except DirectoryError:
            refused += 1
            continue
        known = best.get(signed.ad.listing)
        if known is None or known.ad.seq < signed.ad.seq:
            best[signed.ad.listing] = signed
    refused += max(0, len(tables) - MAX_RESULTS * 2)
    return Listing(tuple(best.values()), more, refused)


def _canonical(signed: SignedAd) -> dict[str, Any]:
    """``signed``'s listing entry, its maps in sorted order (as :func:`encode_sorted` takes
    them)."""
    entry: dict[str, Any] = decode(encode(signed.to_wire()))
    return entry


def _relay_answer(data: bytes, what: str) -> dict[str, Any]:
    """The relay's answer to ``what`` as a map; its ``relay-error`` raised as
    :class:`DirectoryError` saying why."""
    try:
        msg = decode(data)
    except RemoteProtocolError as exc:
        raise DirectoryError(f"the relay sent something that is not msgpack: {exc}") from None
    if not isinstance(msg, dict):
        raise DirectoryError("the relay sent something that is not a map")
    if msg.get("type") == "relay-error":
        reason = msg.get("reason")
        shown = reason if isinstance(reason, str) else "?"
        raise DirectoryError(f"the relay refused {what}: {shown}")
    return msg


# -- the relay's store -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DirectoryLimits:
    """A directory's caps (``PROTOCOL.md`` §12.3); ``belote-p2p relay`` flags set them."""

    max_ads: int = 10_000
    """Advertisements listed at once."""
    max_ads_per_source: int = 8
    """Listed from one source (an IPv4 address, an IPv6 /64): a few hosts behind one NAT."""
    max_ads_per_key: int = 2
    """Listed under one host key; past it the key's oldest ad makes room (only that key's
    holder can sign a new one, so nobody else can push a host's table out)."""
    max_ttl: int = 300
    """Seconds an ad is listed without a newer version, at most (whatever its ttl says)."""
    query_rate: float = 5.0
    """Queries per second one source may make, sustained."""
    query_burst: float = 20.0
    """Queries one source may make at once."""
    update_rate: float = 0.5
    """New versions per second of one connection's ad, sustained."""
    update_burst: float = 10.0
    """New versions one connection may send at once."""


@dataclass
class _Entry:
    signed: SignedAd
    wire: dict[str, Any]
    """The ``{"ad", "sig"}`` entry as the answer holds it (canonical: encoded as is)."""
    conn: int
    source: str
    listed: float
    expires: float
    updates: ByteBudget


@dataclass
class DirectoryStats:
    listed: int = 0
    """Advertisements listed (each new version counts)."""
    withdrawn: int = 0
    expired: int = 0
    queries: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    """Ads and queries refused, by cause."""

    def refuse(self, cause: str) -> None:
        self.refused[cause] = self.refused.get(cause, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "listed": self.listed,
            "withdrawn": self.withdrawn,
            "expired": self.expired,
            "queries": self.queries,
            "refused": dict(sorted(self.refused.items())),
        }


class Refused(RemoteProtocolError):
    """An ad or a query the directory does not take (a client broke the directory's
    protocol); ``cause`` is counted, ``reason`` goes to the client in a ``relay-error``."""

    def __init__(self, cause: str, reason: str) -> None:
        super().__init__(reason)
        self.cause = cause
        self.reason = reason


Bucket = tuple[str, int, str | None]
"""Where a directory files an ad: its variant, its free seats, one of its languages (or
None: every ad is filed there too)."""


def _buckets_of(ad: Advertisement) -> tuple[Bucket, ...]:
    return ((ad.variant, ad.free, None), *((ad.variant, ad.free, lang) for lang in ad.langs))


class Directory:
    """The advertisements one relay lists (see the module docstring), without I/O.

    Each is held by the connection it came on (numbered by the relay); the relay calls
    :meth:`advertise` with what that connection sent, :meth:`withdraw` when it ends,
    :meth:`query` for a lister, and :meth:`expire` on its clock. Caps refuse with
    :class:`Refused`; nothing raises for anything else a client sends."""

    def __init__(self, limits: DirectoryLimits | None = None) -> None:
        self.limits = limits or DirectoryLimits()
        self._by_conn: dict[int, _Entry] = {}
        self._buckets: dict[Bucket, dict[int, _Entry]] = {}
        """The ads of each (variant, free seats, language or None), in the order they came to
        that bucket: an ad is in its (variant, free, None) and in one per language it
        speaks, so that a query by language reads only the ads that speak it."""
        self._variants: dict[str, int] = {}
        """How many ads each variant has (a query without a variant reads them all)."""
        self._per_source: dict[str, int] = {}
        self._per_key: dict[bytes, list[int]] = {}
        """Each key's ad connections, the oldest first."""
        self._expiry: list[tuple[float, int, int]] = []
        """(expires, conn, seq) of every version listed; stale ones skipped when met."""
        self._queries: dict[str, ByteBudget] = {}
        self.stats = DirectoryStats()

    def __len__(self) -> int:
        return len(self._by_conn)

    def ad_of(self, conn: int) -> SignedAd | None:
        entry = self._by_conn.get(conn)
        return entry.signed if entry is not None else None

    # -- advertising ---------------------------------------------------------------------

    def advertise(
        self, conn: int, source: str, data: dict[str, Any], nonce: bytes, now: float
    ) -> tuple[int, int, list[int]]:
        """List the ``dir-advertise`` message ``data`` that connection ``conn`` (from
        ``source``, its relay nonce ``nonce``) sent: the seq listed, the seconds it lives
        without a newer version, and the connections of the same key's older ads to close
        (past :attr:`DirectoryLimits.max_ads_per_key`). :class:`Refused` if it is not a
        valid ad of that connection, or past a cap: nothing is changed then.

        A connection lists one table; its later ads are new versions of it (a higher
        seq), under a bounded rate."""
        if set(data) != {"type", "ad", "sig"}:
            raise Refused("bad ad", "a dir-advertise is a map of type, ad and sig")
        try:
            signed = SignedAd.parse({"ad": data["ad"], "sig": data["sig"]})
        except DirectoryError as exc:
            raise Refused("bad ad", str(exc)) from None
        ad = signed.ad
        if ad.nonce != nonce:
            raise Refused("bad ad", "the ad is not signed over this connection's nonce")
        limits = self.limits
        expires = min(ad.ttl, limits.max_ttl)
        old = self._by_conn.get(conn)
        if old is not None:
            before = old.signed.ad
            if before.listing != ad.listing:
                raise Refused("bad ad", "a connection lists one table: open another")
            if (ad.variant, ad.target, ad.seats) != (before.variant, before.target, before.seats):
                raise Refused("bad ad", "a new version of an ad keeps its variant, target, seats")
            if ad.seq <= before.seq:
                raise Refused("bad ad", f"seq {ad.seq} is not above {before.seq}")
            if not old.updates.spend(1, now):
                raise Refused("ad updates too fast", "new versions of the ad come too fast")
            entry = _Entry(signed, _canonical(signed), conn, source, old.listed, now + expires,
                           old.updates)  # fmt: skip
            old_keys, new_keys = _buckets_of(before), _buckets_of(ad)
            for key in old_keys:
                if key in new_keys:
                    self._buckets[key][conn] = entry  # a dict keeps a key's place: its turn
                else:
                    self._leave_bucket(key, conn)
            for key in new_keys:
                if key not in old_keys:
                    self._buckets.setdefault(key, {})[conn] = entry
            self._by_conn[conn] = entry
            heapq.heappush(self._expiry, (entry.expires, conn, ad.seq))
            self.stats.listed += 1
            return ad.seq, expires, []
        if any(e.signed.ad.listing == ad.listing for e in self._entries_of(ad.host_key)):
            raise Refused("table already listed", "this table is already listed")
        if self._per_source.get(source, 0) >= limits.max_ads_per_source:
            raise Refused("too many ads from one address", "this address lists too many tables")
        replaced = self._per_key.get(ad.host_key, [])
        replaced = replaced[: max(0, len(replaced) - limits.max_ads_per_key + 1)]
        if len(self._by_conn) - len(replaced) >= limits.max_ads:
            raise Refused("directory full", "the directory is full")
        for number in replaced:
            self.withdraw(number)
        updates = ByteBudget.full(limits.update_rate, limits.update_burst, now)
        entry = _Entry(signed, _canonical(signed), conn, source, now, now + expires, updates)
        for key in _buckets_of(ad):
            self._buckets.setdefault(key, {})[conn] = entry
        self._by_conn[conn] = entry
        self._variants[ad.variant] = self._variants.get(ad.variant, 0) + 1
        heapq.heappush(self._expiry, (entry.expires, conn, ad.seq))
        self._per_source[source] = self._per_source.get(source, 0) + 1
        self._per_key.setdefault(ad.host_key, []).append(conn)
        self.stats.listed += 1
        return ad.seq, expires, list(replaced)

    def _entries_of(self, key: bytes) -> Iterator[_Entry]:
        for number in self._per_key.get(key, ()):
            yield self._by_conn[number]

    def _leave_bucket(self, key: Bucket, conn: int) -> None:
        bucket = self._buckets[key]
        del bucket[conn]
        if not bucket:
            del self._buckets[key]

    def withdraw(self, conn: int) -> bool:
        """Forget the ad of ``conn`` (its connection ended, or its host withdrew it);
        whether it had one."""
        entry = self._by_conn.pop(conn, None)
        if entry is None:
            return False
        ad = entry.signed.ad
        for key in _buckets_of(ad):
            self._leave_bucket(key, conn)
        left = self._variants[ad.variant] - 1
        if left:
            self._variants[ad.variant] = left
        else:
            del self._variants[ad.variant]
        held = self._per_source[entry.source] - 1
        if held:
            self._per_source[entry.source] = held
        else:
            del self._per_source[entry.source]
        own = self._per_key[ad.host_key]
        own.remove(conn)
        if not own:
            del self._per_key[ad.host_key]
        self.stats.withdrawn += 1
        return True

    # -- expiry --------------------------------------------------------------------------

    def expire(self, now: float) -> list[int]:
        """Forget the ads not refreshed in time; the connections that held them (the relay
        closes them)."""
        gone = []
        heap = self._expiry
        while heap and heap[0][0] <= now:
            _, conn, seq = heapq.heappop(heap)
            entry = self._by_conn.get(conn)
            if entry is None or entry.signed.ad.seq != seq:
                continue  # withdrawn, or a newer version lives longer
            self.withdraw(conn)
            self.stats.withdrawn -= 1
            self.stats.expired += 1
            gone.append(conn)
        if len(self._queries) > 4 * self.limits.max_ads:
            self._queries = {s: b for s, b in self._queries.items() if b.refill(now) < b.burst}
        return gone

    def next_expiry(self) -> float | None:
        """When :meth:`expire` next has something to do (None: no ad listed)."""
        heap = self._expiry
        while heap:
            expires, conn, seq = heap[0]
            entry = self._by_conn.get(conn)
            if entry is not None and entry.signed.ad.seq == seq:
                return expires
            heapq.heappop(heap)
        return None

    # -- queries -------------------------------------------------------------------------

    def query(self, data: object, source: str, now: float) -> bytes:
        """The ``dir-tables`` answer to the ``dir-query`` ``data`` from ``source``:
        :class:`Refused` for a bad query or one past the source's rate."""
        try:
            query = Query.from_wire(data)
        except DirectoryError as exc:
            raise Refused("bad query", str(exc)) from None
        budget = self._queries.get(source)
        if budget is None:
            limits = self.limits
            budget = self._queries[source] = ByteBudget.full(
                limits.query_rate, limits.query_burst, now
            )
        if not budget.spend(1, now):
            raise Refused("too many queries", "too many queries from this address: wait a little")
        self.stats.queries += 1
        found = list(self._matching(query, query.limit + 1))
        answer = {
            "more": len(found) > query.limit,
            "tables": [e.wire for e in found[: query.limit]],
            "type": "dir-tables",
        }
        return encode_sorted(answer)

    def _matching(self, query: Query, most: int) -> Iterable[_Entry]:
        """The entries that answer ``query``: the fewest free seats first (the tables
        nearest to starting), then the variants by name, then the order they came."""
        variants = [query.variant] if query.variant is not None else sorted(self._variants)
        found = 0
        for free in (1, 2, 3):
            for variant in variants:
                for entry in self._buckets.get((variant, free, query.lang), {}).values():
                    yield entry
                    found += 1
                    if found >= most:
                        return

    def ads(self) -> Sequence[SignedAd]:
        """Every ad listed (for the relay's report, and tests)."""
        return [e.signed for e in self._by_conn.values()]
