"""The lobby: how the peers (four, or three or two as the rules seat) agree on a table
definition before the mesh opens.

One peer hosts. It listens on a TCP port (7777 unless told otherwise); each other peer
connects, asks to join, proves it holds the key it announced and waits for the table. Every
message is one frame of the wire's frame format (4-byte big-endian length, then canonical
msgpack), version :data:`LOBBY_VERSION` of the lobby (``PROTOCOL.md`` §6.0):

* joiner -> host: ``{type: "join", version: 2, name, key, port}``: the player's name (1..32
  characters), its Ed25519 public key (32 bytes) and the TCP port its mesh listener is
  already open on (0: it accepts no connection, ``--no-listen``); optionally ``seat`` (the
  seat it asks for, 1..3) and ``partner`` (the name of the player it wants to sit with);
* host -> joiner: ``{type: "challenge", table, nonce}``: the table id and 32 fresh random
  bytes, new for each connection;
* joiner -> host: ``{type: "join-proof", sig}``: its signature, under the key it announced,
  of the join request as sent, the nonce and the table id (:func:`proof_statement`);
* host -> joiner: ``{type: "table", definition, proposal}`` (:meth:`TableDefinition.to_wire`
  and the host's signature of it, :meth:`TableDefinition.propose`) once every joiner is in
  (three; two at a three-handed table, one at a two-handed one), with ``relay``
  (``host:port``) when the table uses another relay than the host's port; or ``{type:
  "error", reason}`` and the connection closes.

A join whose signature does not verify is refused (:class:`KeyNotProven`) and never takes a
seat: nobody fills a table with keys it does not hold, or sits under another's key. The
nonce is the host's and good for one try, so a signature made for another connection, or
for another host's lobby, proves nothing here; the table id in it lets a joiner that knows
which table it wants (an invitation, a beacon) refuse to sign for another.

The host takes seat 0 and the joiners the other seats in arrival order, as far as their
requests allow: a requested seat is refused at once when another joiner holds it, a partner
request puts the two at seats 1 and 3 (or the joiner at seat 2, the host's partner; a table
without teams refuses partner requests and seats beyond its own). Until it signs the table
the host may reorder the seats (:meth:`Lobby.reorder`), name the only players it seats
(:meth:`Lobby.expect`, ``--seat-order``) and refuse a joiner already seated
(:meth:`Lobby.refuse`): the joiner is told, the other joiners keep their seats and the seat
goes to the next joiner. A seat's address is the IP the host saw the joiner's connection
come from, with the port the joiner announced (empty for port 0: only a relay reaches it);
the host's own is the local IP of the accepted connections with its port.

Nothing here is trusted for long: the lobby only proposes a definition, signed by the host.
Every peer signs the definition's digest in its first envelope, with the host's signature of
it, and the mesh handshake makes each peer prove its key again: a host that proposed
different definitions to different peers is caught with two of its own signatures, before a
card is dealt.

:class:`Lobby` is the host's sans-io bookkeeping (:meth:`Lobby.challenge` and
:meth:`Lobby.join` check the proofs, :meth:`Lobby.admit` seats keys proven elsewhere, as a
rematch's); :func:`host_lobby` and :func:`join_table` move its bytes over trio.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import logging
import re
import secrets
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import trio

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.game.rules import RuleSet
from belote_p2p.i18n import _, ngettext
from belote_p2p.protocol.identity import SIGNATURE_SIZE, Identity, fingerprint, verify
from belote_p2p.protocol.names import name_problem, safe_text
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import KEY_SIZE, SEATS, TABLE_ID_SIZE, FrameTooLarge, decode, encode

from .address import format_address, is_loopback, parse_address
from .serve import Gate, accept_loop
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

DEFAULT_PORT = 7777
MAX_LOBBY_FRAME = 1 << 14
"""A join request or a table definition is far below 16 KiB."""
REQUEST_TIMEOUT = 10.0
"""Seconds a joiner has, once connected, to send its request."""
DEFAULT_WAIT = 900.0
"""Seconds the host waits for the table to fill, and a joiner for the table."""
LOBBY_VERSION = 3
"""The lobby's version: 2 added the proof of key (a join without one is version 1's), 3 the
joiner's claims (its language, its level) and the ready check (``PROTOCOL.md`` §12.5)."""
LOBBY_VERSIONS = (2, 3)
"""The versions of a join this host takes (a version 2 joiner is never asked if ready)."""
JOIN_KEYS = frozenset({"type", "version", "name", "key", "port"})
JOIN_OPTIONAL = frozenset({"seat", "partner"})
CLAIMS = frozenset({"lang", "level"})
"""What a version 3 join may say of its player: its word only, shown as such."""
MAX_LEVEL = 1_000_000
LANG = re.compile(r"[a-z]{2,3}")
READY_SECONDS = 30
"""Seconds a joiner has to answer the host's ready check."""
NONCE_SIZE = 32
PROOF_LABEL = b"belote-p2p/join-proof/v1\x00"
"""Domain separation of a joiner's proof of key (PROTOCOL.md §6.0)."""


class LobbyError(BeloteError):
    """The lobby failed: a refusal from the host, a bad answer, a timeout."""


class HostUnreachable(LobbyError):
    """No TCP connection to the host's lobby could be opened."""


class JoinRefused(LobbyError):
    """The host (or, on the host side, the lobby) refused a join request; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LobbyClosed(LobbyError):
    """The host closed its lobby before the table was full (the browser lobby's Stop
    hosting): every joiner heard :data:`TABLE_CLOSED`."""


TABLE_CLOSED = "the host closed the table"
"""What every joiner of a lobby its host closes hears (the ``error`` frame's reason: the
joiner tells it apart from the other refusals, to say it in its reader's words)."""


class KeyNotProven(JoinRefused):
    """A join whose signature does not prove the key it announced: made up, copied from
    another connection or lobby, or over a nonce this lobby did not give (or gave already)."""


@dataclass(frozen=True, slots=True)
class JoinRequest:
    name: str
    key: bytes
    port: int
    """The joiner's mesh port; 0 if it accepts no connection (a relay reaches it)."""
    seat: int | None = None
    """The seat it asks for (1..3)."""
    partner: str | None = None
    """The name of the player it wants as its partner."""
    lang: str | None = None
    """The language the player reads (an ISO 639 code), as it says (version 3)."""
    level: int | None = None
    """The player's level, as it claims it (version 3; nobody checks it)."""
    version: int = LOBBY_VERSION
    """The lobby's version the joiner speaks: from 3 it answers a ready check."""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": "join", "version": self.version, "name": self.name}
        wire["key"] = self.key
        wire["port"] = self.port
        if self.seat is not None:
            wire["seat"] = self.seat
        if self.partner is not None:
            wire["partner"] = self.partner
        if self.lang is not None:
            wire["lang"] = self.lang
        if self.level is not None:
            wire["level"] = self.level
        return wire

    @classmethod
    def from_wire(cls, data: object) -> JoinRequest:
        """Parse strictly; :class:`JoinRefused` says what is wrong."""
        if not isinstance(data, dict) or data.get("type") != "join":
            raise JoinRefused("expected a join request")
        version = data.get("version")
        if type(version) is not int or version not in LOBBY_VERSIONS:
            raise JoinRefused(
                f"this host's lobby is version {LOBBY_VERSION} (and takes version 2: a joiner "
                "proves its key): update belote-p2p to join"
            )
        optional = JOIN_OPTIONAL | (CLAIMS if version >= 3 else frozenset())
        if not JOIN_KEYS <= set(data) <= JOIN_KEYS | optional:
            raise JoinRefused(
                f"a join request of version {version} has the keys {sorted(JOIN_KEYS)}, and "
                f"may have {sorted(optional)}"
            )
        name, key, port = data["name"], data["key"], data["port"]
        check_name(name)
        if type(key) is not bytes or len(key) != KEY_SIZE:
            raise JoinRefused(f"key must be {KEY_SIZE} bytes")
        if type(port) is not int or not 0 <= port < 65536:
            raise JoinRefused("port must be an int in 0..65535")
        seat = data.get("seat")
        if seat is not None and (type(seat) is not int or not 1 <= seat < SEATS):
            raise JoinRefused("a joiner asks for seat 1, 2 or 3 (seat 0 is the host's)")
        partner = data.get("partner")
        if partner is not None:
            check_name(partner)
        lang, level = data.get("lang"), data.get("level")
        if lang is not None and (type(lang) is not str or not LANG.fullmatch(lang)):
            raise JoinRefused("lang is a lower-case ISO 639 code (fr, es, en...)")
        if level is not None and (type(level) is not int or not 0 <= level <= MAX_LEVEL):
            raise JoinRefused(f"level is an integer in 0..{MAX_LEVEL}")
        return cls(name, key, port, seat, partner, lang, level, version)


def check_name(name: object) -> str:
    """``name`` if a seat may carry it (PROTOCOL.md §6.1), else :class:`JoinRefused`."""
    problem = name_problem(name)
    if problem is not None:
        raise JoinRefused(problem)
    assert isinstance(name, str)
    return name


@dataclass(frozen=True, slots=True)
class JoinChallenge:
    """What the host gives a joiner to sign: the table id and a fresh nonce."""

    table_id: bytes
    nonce: bytes

    def to_wire(self) -> dict[str, Any]:
        return {"type": "challenge", "table": self.table_id, "nonce": self.nonce}

    @classmethod
    def from_wire(cls, data: object) -> JoinChallenge:
        """Parse strictly; :class:`LobbyError` says what is wrong."""
        if (
            not isinstance(data, dict)
            or set(data) != {"type", "table", "nonce"}
            or data["type"] != "challenge"
            or type(data["table"]) is not bytes
            or len(data["table"]) != TABLE_ID_SIZE
            or type(data["nonce"]) is not bytes
            or len(data["nonce"]) != NONCE_SIZE
        ):
            raise LobbyError("the host sent neither a challenge nor an error")
        return cls(data["table"], data["nonce"])


def answer_statement(
    label: bytes, kind: str, message: dict[str, Any], challenge: JoinChallenge
) -> bytes:
    """The bytes a peer signs to answer the host's ``challenge`` with ``message`` (PROTOCOL.md
    §6.0): ``label``, then the canonical map of ``message`` as sent (under ``kind``: ``join``,
    or ``again`` for a rematch), the host's nonce and the table id."""
    return label + encode({kind: message, "nonce": challenge.nonce, "table": challenge.table_id})


def proof_statement(table_id: bytes, nonce: bytes, request: JoinRequest) -> bytes:
    """The bytes a joiner signs: :func:`answer_statement` of its join request."""
    return answer_statement(PROOF_LABEL, "join", request.to_wire(), JoinChallenge(table_id, nonce))


def prove(identity: Identity, request: JoinRequest, challenge: JoinChallenge) -> bytes:
    """Our ``join-proof`` frame: ``request``'s key must be ``identity``'s."""
    if request.key != identity.public_key_bytes:
        raise ValueError("a join request is proven with its own key")
    sig = identity.sign(proof_statement(challenge.table_id, challenge.nonce, request))
    return proof_frame("join-proof", sig)


def proof_frame(kind: str, sig: bytes) -> bytes:
    """One ``{type: kind, sig}`` frame: a signature answering the host's challenge."""
    return encode({"type": kind, "sig": sig})


def parse_proof(data: object, kind: str = "join-proof") -> bytes:
    """The signature of a ``kind`` map (``join-proof``, ``again-proof``);
    :class:`KeyNotProven` if it is not one."""
    if (
        not isinstance(data, dict)
        or set(data) != {"type", "sig"}
        or data["type"] != kind
        or type(data["sig"]) is not bytes
        or len(data["sig"]) != SIGNATURE_SIZE
    ):
        raise KeyNotProven(f"a key is proven by one {kind} map of a 64-byte signature")
    return data["sig"]


@dataclass(frozen=True, slots=True)
class ReadySeat:
    """A seat as the ready check shows it: its player's name and key, and what the player
    said of itself (its language, its level: claims, never checked)."""

    name: str
    key: bytes
    level: int | None = None
    lang: str | None = None

    @classmethod
    def of(cls, request: JoinRequest) -> ReadySeat:
        return cls(request.name, request.key, request.level, request.lang)

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "level": self.level, "lang": self.lang}


@dataclass(frozen=True, slots=True)
class ReadyCheck:
    """The host's question once its table is full, before it signs it: the seats as they
    will be (seat 0 the host's), and the seconds to answer (``PROTOCOL.md`` §12.5)."""

    seats: tuple[ReadySeat, ...]
    seconds: int = READY_SECONDS

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "ready-check",
            "seats": [s.to_wire() for s in self.seats],
            "seconds": self.seconds,
        }

    @classmethod
    def from_wire(cls, data: object) -> ReadyCheck:
        """Parse strictly; :class:`LobbyError` says what is wrong."""
        if not isinstance(data, dict) or set(data) != {"type", "seats", "seconds"}:
            raise LobbyError("a ready check is a map of type, seats and seconds")
        seats, seconds = data["seats"], data["seconds"]
        if (
            data["type"] != "ready-check"
            or type(seconds) is not int
            or not 1 <= seconds <= 600
            or not isinstance(seats, list)
            or not 2 <= len(seats) <= SEATS
        ):
            raise LobbyError("the host sent a bad ready check")
        parsed = []
        for seat in seats:
            if not isinstance(seat, dict) or set(seat) != {"name", "key", "level", "lang"}:
                raise LobbyError("a seat of a ready check is a map of name, key, level, lang")
            name, key, level, lang = seat["name"], seat["key"], seat["level"], seat["lang"]
            if name_problem(name) is not None or type(key) is not bytes or len(key) != KEY_SIZE:
                raise LobbyError("a seat of the ready check has a bad name or key")
            if level is not None and (type(level) is not int or not 0 <= level <= MAX_LEVEL):
                raise LobbyError("a seat of the ready check has a bad level")
            if lang is not None and (type(lang) is not str or not LANG.fullmatch(lang)):
                raise LobbyError("a seat of the ready check has a bad language")
            parsed.append(ReadySeat(name, key, level, lang))
        return cls(tuple(parsed), seconds)


def ready_message(ready: bool) -> bytes:
    """A joiner's answer to the ready check."""
    return encode({"type": "ready", "ready": ready})


def parse_ready(data: bytes) -> bool | None:
    """A joiner's answer to the ready check, or None if ``data`` is not one."""
    try:
        msg = decode(data)
    except RemoteProtocolError:
        return None
    if isinstance(msg, dict) and set(msg) == {"type", "ready"} and msg["type"] == "ready":
        ready = msg["ready"]
        return ready if type(ready) is bool else None
    return None


FINGERPRINT = re.compile(r"[0-9a-f]{4}(-[0-9a-f]{4}){3}")


def matches(entry: str, request: JoinRequest) -> bool:
    """Whether the host's ``entry`` names ``request``: a key's fingerprint (as ``join``
    prints it) its key, anything else its name (a name that looks like a fingerprint
    matches only as one: nobody takes another's seat by naming himself after its key)."""
    entry = entry.strip()
    if FINGERPRINT.fullmatch(entry.lower()):
        return entry.lower() == fingerprint(request.key)
    return same_name(entry, request.name)


@dataclass(frozen=True, slots=True)
class _Joined:
    request: JoinRequest
    ip: str
    """The address the host saw the connection come from."""
    local_ip: str
    """The host's own address on that connection."""


def same_name(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


class Lobby:
    """The host's side of the lobby, without I/O: the challenges given, who proved its key
    and asked to join, where they sit, and the definition."""

    def __init__(
        self,
        host: JoinRequest,
        rules: RuleSet,
        *,
        table_id: bytes | None = None,
        watchers: bool = True,
        hints: bool = False,
    ) -> None:
        self.host = host
        self.rules = rules
        self.watchers = watchers
        """The table rule of the definition (``host --no-watch``: False)."""
        self.hints = hints
        """The table's rule of hints (:attr:`TableDefinition.hints`)."""
        self.seats = rules.seats
        """The table's seats: the host and ``seats - 1`` joiners (4, or 3 or 2)."""
        self.table_id = secrets.token_bytes(TABLE_ID_SIZE) if table_id is None else table_id
        if len(self.table_id) != TABLE_ID_SIZE:
            raise ValueError(f"a table id is {TABLE_ID_SIZE} bytes")
        self._joined: list[_Joined] = []
        self._order: list[bytes] | None = None
        """The host's own order of the joiners' keys for seats 1.., once it chose one."""
        self._pinned: dict[bytes, int] = {}
        """Seats the joiners keep once a seated joiner was refused or left a full table."""
        self._nonces: set[bytes] = set()
        """The challenges given and not yet answered (one per connection)."""
        self._refused: set[bytes] = set()
        self._expected: tuple[str, ...] | None = None
        self._blocked: Callable[[bytes], bool] = lambda _key: False

    @property
    def full(self) -> bool:
        return len(self._joined) == self.seats - 1

    @property
    def joined(self) -> tuple[JoinRequest, ...]:
        return tuple(j.request for j in self._joined)

    @property
    def missing(self) -> int:
        """How many joiners the table still waits for."""
        return self.seats - 1 - len(self._joined)

    def challenge(self) -> JoinChallenge:
        """A fresh nonce for one joiner to sign, good for one :meth:`join`."""
        nonce = secrets.token_bytes(NONCE_SIZE)
        self._nonces.add(nonce)
        return JoinChallenge(self.table_id, nonce)

    def withdraw(self, challenge: JoinChallenge) -> None:
        """The connection of ``challenge`` ended before its proof: forget its nonce."""
        self._nonces.discard(challenge.nonce)

    def join(
        self, request: JoinRequest, ip: str, local_ip: str, *, nonce: bytes, signature: bytes
    ) -> int:
        """Take a join request that came from ``ip`` with its ``signature`` of our challenge
        ``nonce``; return the seat it will have.

        Raises :class:`KeyNotProven` unless the signature proves the request's key (the
        nonce is used up either way), and :class:`JoinRefused` when it cannot be seated.
        """
        if nonce not in self._nonces:
            raise KeyNotProven("that nonce is not one this lobby gave, or it was used")
        self._nonces.discard(nonce)
        if not verify(request.key, signature, proof_statement(self.table_id, nonce, request)):
            raise KeyNotProven(
                f"the join is not signed by the key it announces ({fingerprint(request.key)}) "
                "over this lobby's challenge"
            )
        return self.admit(request, ip, local_ip)

    def admit(self, request: JoinRequest, ip: str, local_ip: str) -> int:
        """Seat ``request`` without a proof: for keys proven elsewhere (a rematch seats the
        keys of a table every seat signed). The seat it will have, or :class:`JoinRefused`
        when the table is full, the key already seated or refused, or no seat is left that
        its request allows."""
        if self.full:
            raise JoinRefused("the table is full")
        if request.key in self._refused or self._blocked(request.key):
            raise JoinRefused(f"{self.host.name} (the host) did not seat you at this table")
        if request.seat is not None and request.seat >= self.seats:
            raise JoinRefused(f"this table has seats 1 to {self.seats - 1} for joiners")
        if request.partner is not None and not self.rules.has_teams:
            raise JoinRefused(f"{self.rules.name} has no partners: every player is for himself")
        keys = {self.host.key, *(j.request.key for j in self._joined)}
        if request.key in keys:
            raise JoinRefused(
                f"the key {fingerprint(request.key)} is already at the table (two players "
                "on one machine: give each its own --home DIR, hence its own key)"
            )
        if self._expected is not None and not any(
            matches(entry, request) for entry in self._unmatched()
        ):
            raise JoinRefused(f"{self.host.name} (the host) seats other players at this table")
        joined = [*self._joined, _Joined(request, ip, local_ip)]
        seats = self._assign([j.request for j in joined])
        if seats is None:
            raise JoinRefused(self._why_not(request))
        self._joined = joined
        self._order = None
        return seats[-1]

    def block(self, blocked: Callable[[bytes], bool]) -> None:
        """The host's block list: a key it says yes to is refused at once, as a key the host
        refused (the joiner hears only that it is not seated)."""
        self._blocked = blocked

    def ready_check(self, seconds: int = READY_SECONDS) -> ReadyCheck:
        """The ready check of the table as it is seated now (it must be full)."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        seats = [ReadySeat.of(self.host), *(ReadySeat.of(r) for _, r in self.seating())]
        return ReadyCheck(tuple(seats), seconds)

    def expect(self, entries: Sequence[str]) -> None:
        """The host seats only the joiners ``entries`` name (each a name or a key's
        fingerprint, ``--seat-order``): any other join is refused at once."""
        self._expected = tuple(entries)

    def _unmatched(self) -> list[str]:
        """The expected entries no joiner took yet."""
        left = list(self._expected or ())
        for joined in self._joined:
            found = next((e for e in left if matches(e, joined.request)), None)
            if found is not None:
                left.remove(found)
        return left

    def refuse(self, seat: int) -> JoinRequest:
        """The host does not want the joiner at ``seat``: it leaves, its key is refused from
        now on, the other joiners keep their seats and the next joiner takes this one."""
        for at, request in self.seating():
            if at == seat:
                self._free(request.key)
                self._refused.add(request.key)
                return request
        raise JoinRefused(f"no joiner sits at seat {seat}")

    def seating(self) -> list[tuple[int, JoinRequest]]:
        """The joiners' seats as they stand now (each request honoured), by seat."""
        requests = [j.request for j in self._joined]
        if self._order is not None:
            by_key = {r.key: r for r in requests}
            return [(i + 1, by_key[key]) for i, key in enumerate(self._order)]
        seats = self._assign(requests)
        assert seats is not None, "every join was checked"
        return sorted(zip(seats, requests, strict=True), key=lambda pair: pair[0])

    def reorder(self, entries: Sequence[str]) -> None:
        """The host seats the joiners itself: ``entries`` (names or fingerprints) for seats
        1, 2... (their requests no longer count). :class:`JoinRefused` if they do not name
        the joiners."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        left = list(self._joined)
        order = []
        for entry in entries:
            found = next((j.request for j in left if matches(entry, j.request)), None)
            if found is None:
                raise JoinRefused(f"{entry!r} is not a joiner left to seat")
            left = [j for j in left if j.request is not found]
            order.append(found.key)
        if left or len(order) != self.seats - 1:
            raise JoinRefused(f"name the {self.seats - 1} joiners, for seats 1 to {self.seats - 1}")
        self._order = order

    def swap(self, a: int, b: int) -> None:
        """The host swaps the joiners at seats ``a`` and ``b`` (1..seats-1)."""
        if not {a, b} <= set(range(1, self.seats)):
            raise JoinRefused(f"the joiners sit at seats 1 to {self.seats - 1}")
        keys = [r.key for _, r in self.seating()]
        keys[a - 1], keys[b - 1] = keys[b - 1], keys[a - 1]
        self._order = keys

    def opposite(self, seat: int) -> int:
        """The seat of ``seat``'s partner (with teams: four seats)."""
        return (seat + self.seats // 2) % self.seats

    def _assign(self, requests: Sequence[JoinRequest]) -> list[int] | None:
        """A seat for each request (in arrival order where the requests leave a choice), or
        None if no seating honours them all. A partner not at the table yet keeps a seat
        free for itself; once the table is full, an absent partner is not waited for."""
        full = len(requests) == self.seats - 1
        for seats in itertools.permutations(range(1, self.seats), len(requests)):
            pairs = zip(requests, seats, strict=True)
            if all(self._fits(r, s, requests, seats, full) for r, s in pairs):
                return list(seats)
        return None

    def _fits(
        self,
        request: JoinRequest,
        seat: int,
        requests: Sequence[JoinRequest],
        seats: Sequence[int],
        full: bool,
    ) -> bool:
        pinned = self._pinned.get(request.key)
        if pinned is not None:
            return seat == pinned  # the host saw it there: it stays
        if request.seat is not None and request.seat != seat:
            return False
        partner = request.partner
        if partner is None:
            return True
        if same_name(partner, self.host.name):
            return seat == self.opposite(0)
        where = [
            s
            for r, s in zip(requests, seats, strict=True)
            if r is not request and same_name(r.name, partner)
        ]
        if where:
            return where[0] == self.opposite(seat)
        # The partner has not come yet: keep it the seat opposite.
        opposite = self.opposite(seat)
        return full or (opposite != 0 and opposite not in seats)

    def _why_not(self, request: JoinRequest) -> str:
        """Why ``request`` cannot be seated with the joiners already in."""
        others = [j.request for j in self._joined]
        if request.seat is not None:
            for other in others:
                if other.seat == request.seat:
                    return f"seat {request.seat} is taken: {other.name} asked for it first"
            if request.seat == self.opposite(0) and any(
                o.partner and same_name(o.partner, self.host.name) for o in others
            ):
                return f"seat {request.seat} is taken: another joiner is the host's partner"
            return f"seat {request.seat} is taken: the other joiners' requests hold it"
        if request.partner is not None:
            return (
                f"no seat is left opposite {request.partner}: the other joiners' requests hold them"
            )
        return "the seats left are held by the other joiners' requests"

    def leave(self, key: bytes) -> None:
        """A joiner hung up before the host signed the table: free its place."""
        self._free(key)

    def _free(self, key: bytes) -> None:
        if self.full:
            # The host saw this table: the others keep their seats, the next joiner takes
            # the one freed.
            self._pinned = {r.key: seat for seat, r in self.seating() if r.key != key}
        self._joined = [j for j in self._joined if j.request.key != key]
        self._pinned.pop(key, None)
        self._order = None

    def definition(self) -> TableDefinition:
        """The table, once every joiner is in (``seats - 1`` of them)."""
        if not self.full:
            raise JoinRefused("the table is not complete")
        remote = [j for j in self._joined if not is_loopback(j.ip)]
        # A joiner on the host's machine came in over loopback; peers elsewhere reach it, as
        # they reach the host, at the host's address on their own connections.
        lan_ip = remote[0].local_ip if remote else None
        host_ip = lan_ip or self._joined[0].local_ip

        def address(ip: str, port: int) -> str:
            if not port:
                return ""  # it does not listen: a relay reaches it
            if lan_ip is not None and is_loopback(ip):
                ip = lan_ip
            return format_address(plain_ip(ip), port)

        by_key = {j.request.key: j for j in self._joined}
        seats = [Seat(self.host.name, self.host.key, address(host_ip, self.host.port))]
        for _seat, request in self.seating():
            joined = by_key[request.key]
            seats.append(Seat(request.name, request.key, address(joined.ip, request.port)))
        return TableDefinition(
            self.table_id, self.rules, tuple(seats), watchers=self.watchers, hints=self.hints
        )


def plain_ip(ip: str) -> str:
    """An IPv4-mapped IPv6 address as the IPv4 address it is; any other as it is."""
    try:
        mapped = ipaddress.ip_address(ip.partition("%")[0])
    except ValueError:
        return ip
    if isinstance(mapped, ipaddress.IPv6Address) and mapped.ipv4_mapped is not None:
        return str(mapped.ipv4_mapped)
    return ip


def table_message(definition: TableDefinition, proposal: bytes, relay: str | None = None) -> bytes:
    message = {"type": "table", "definition": definition.to_wire(), "proposal": proposal}
    if relay is not None:
        message["relay"] = relay
    return encode(message)


class LobbyAnswer(NamedTuple):
    """What a joiner gets from the host's lobby."""

    definition: TableDefinition
    seat: int
    proposal: bytes
    """The host's signature of the definition."""
    relay: str | None
    """The relay the host names (``host:port``), if not the host's own port."""


def error_message(reason: str) -> bytes:
    return encode({"type": "error", "reason": reason})


def _host_message(data: bytes) -> object:
    """A frame from the host, decoded; its ``error`` raised as :class:`JoinRefused`."""
    try:
        msg = decode(data)
    except RemoteProtocolError as exc:
        raise LobbyError(f"the host sent something that is not canonical msgpack: {exc}") from None
    if isinstance(msg, dict) and msg.get("type") == "error":
        reason = msg.get("reason")
        raise JoinRefused(reason if isinstance(reason, str) else "refused")
    return msg


def parse_challenge(data: bytes) -> JoinChallenge:
    """A joiner reads the host's challenge, or :class:`JoinRefused` (its error), or
    :class:`LobbyError`."""
    return JoinChallenge.from_wire(_host_message(data))


def parse_answer(data: bytes, key: bytes, port: int, name: str | None = None) -> LobbyAnswer:
    """A joiner reads the host's answer: the definition, its seat, the host's signature of
    the definition and the relay it names, or :class:`LobbyError`. Our seat must carry our
    ``key`` and ``port``, and the ``name`` we asked for (a rematch, which asks for no name,
    checks that the names did not change)."""
    msg = _host_message(data)
    if (
        not isinstance(msg, dict)
        or msg.get("type") != "table"
        or not {"type", "definition", "proposal"}
        <= set(msg)
        <= {"type", "definition", "proposal", "relay"}
    ):
        raise LobbyError("the host sent neither a table nor an error")
    relay = msg.get("relay")
    if relay is not None:
        try:
            parse_address(relay if isinstance(relay, str) else "")
        except ValueError:
            raise LobbyError(f"the host named a bad relay: {relay!r}") from None
    try:
        definition = TableDefinition.from_wire(msg["definition"])
    except ValueError as exc:
        raise LobbyError(f"the host sent a bad table definition: {exc}") from None
    proposal = msg["proposal"]
    if not definition.proposed_by_host(proposal):
        raise LobbyError("the host's signature of the table does not verify")
    seats = [i for i, s in enumerate(definition.seats) if s.key == key]
    if len(seats) != 1:
        raise LobbyError("the table the host sent does not seat our key")
    seat = seats[0]
    if seat == 0:
        raise LobbyError("the table the host sent gives our key the host's seat")
    if name is not None and definition.seats[seat].name != name:
        raise LobbyError(
            f"the host renamed us: our seat carries the name "
            f"{safe_text(definition.seats[seat].name)!r}, we asked for {name!r}"
        )
    ours = definition.seats[seat].address
    if not port:
        if ours:
            raise LobbyError(f"the host gave us the address {ours}, we do not listen")
        return LobbyAnswer(definition, seat, proposal, relay)
    try:
        _, seat_port = parse_address(ours)
    except ValueError as exc:
        raise LobbyError(f"the host gave us a bad address: {exc}") from None
    if seat_port != port:
        raise LobbyError(f"the host gave us port {seat_port}, we announced {port}")
    return LobbyAnswer(definition, seat, proposal, relay)


# -- trio ---------------------------------------------------------------------------------


def _socket_ips(stream: trio.abc.Stream) -> tuple[str, str]:
    """(remote IP, local IP) of a TCP stream (or of the stream it wraps)."""
    while not isinstance(stream, trio.SocketStream) and hasattr(stream, "transport_stream"):
        stream = stream.transport_stream
    if not isinstance(stream, trio.SocketStream):
        return "127.0.0.1", "127.0.0.1"
    peer: Any = stream.socket.getpeername()
    local: Any = stream.socket.getsockname()
    return plain_ip(str(peer[0])), plain_ip(str(local[0]))


class _Changes:
    """Wakes the host's lobby when a joiner comes or goes."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = trio.Event()

    async def wait(self) -> None:
        await self._event.wait()


@dataclass
class _Holder:
    """A seated joiner's connection, held until the host signs the table or dismisses it."""

    conn: FramedStream
    request: JoinRequest
    done: trio.Event = field(default_factory=trio.Event)
    reason: str | None = None
    """Why it is dismissed (it hears it), if it is."""
    ready: bool | None = None
    """Its answer to the ready check under way (None: none asked, or no answer yet)."""
    asked: bool = False
    """A ready check is under way for it: a ``ready`` frame is its answer."""
    told: trio.Event = field(default_factory=trio.Event)
    """Its handler is done with it: it heard its last word (the table, or why not)."""


async def host_lobby(
    lobby: Lobby,
    listeners: Sequence[trio.abc.Listener[Any]],
    host: Identity,
    *,
    wait: float = DEFAULT_WAIT,
    request_timeout: float = REQUEST_TIMEOUT,
    on_join: Callable[[int, JoinRequest], None] | None = None,
    on_leave: Callable[[JoinRequest], None] | None = None,
    arrange: Callable[[Lobby], Awaitable[None]] | None = None,
    hand_over: Callable[[Callable[[trio.abc.Stream], Awaitable[None]] | None], None] | None = None,
    relay: str | None = None,
    ready_check: bool = False,
    on_not_ready: Callable[[JoinRequest, str], None] | None = None,
    closed: trio.Event | None = None,
) -> tuple[TableDefinition, bytes]:
    """Accept joiners on ``listeners`` until the table is full; send them the definition.

    Each joiner proves its key (:meth:`Lobby.challenge`, :meth:`Lobby.join`) before it is
    seated; a refused one hears why and is let go. ``host`` signs the definition (the
    proposal every seat repeats when it signs the table); the definition and that signature
    are returned. ``on_join(seat, request)`` (if given) is called as each joiner is seated,
    ``on_leave(request)`` as one hangs up before the table is signed. Once the table is
    full, ``arrange(lobby)`` may reorder the seats (a prompt, the host's order) or refuse
    joiners (:meth:`Lobby.refuse`: each is told, and the lobby waits for others to take
    their seats) before the definition is made. ``hand_over(handler)`` registers the lobby's
    handler with whatever else accepts connections for it (the host's port,
    :class:`~.relay.HostPort`), and ``hand_over(None)`` withdraws it. ``relay`` is the relay
    the table uses if not the host's port. ``ready_check``: once the table is full and
    arranged, every joiner of version 3 is asked whether it is ready (:class:`ReadyCheck`),
    and one that says no, or says nothing within the check's seconds, loses its seat (it is
    told; ``on_not_ready(request, why)`` hears it) and the lobby waits for another before it
    asks again. Raises :class:`LobbyError` if the table does not fill within ``wait``
    seconds, saying what it waited for, and :class:`LobbyClosed` if ``closed`` is set before
    the table is signed (every joiner hears :data:`TABLE_CLOSED`). Closes the listeners
    before returning.
    """
    changes = _Changes()
    holders: dict[bytes, _Holder] = {}
    signed = False

    async def handle(stream: trio.abc.Stream) -> None:
        ip, local_ip = _socket_ips(stream)
        async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
            try:
                request, seat = await _take_join(conn, lobby, ip, local_ip, request_timeout)
            except JoinRefused as exc:
                logger.warning("lobby: refused %s: %s", ip, exc.reason)
                await _send_quietly(conn, error_message(exc.reason))
                return
            except (trio.TooSlowError, ConnectionClosed, FrameTooLarge) as exc:
                logger.info("lobby: a connection from %s ended without a join: %r", ip, exc)
                await _send_quietly(conn, error_message("no valid join request"))
                return
            holder = holders[request.key] = _Holder(conn, request)
            if on_join is not None:
                on_join(seat, request)
            changes.notify()

            async def hang_up() -> None:
                # A joiner says nothing more but its answer to a ready check: any other frame,
                # or the end of the stream, is its leaving.
                with contextlib.suppress(ConnectionClosed, FrameTooLarge):
                    while True:
                        answer = parse_ready(await conn.receive())
                        if answer is None:
                            break
                        if holder.asked and holder.ready is None:
                            holder.ready = answer  # a late or second answer changes nothing
                            changes.notify()
                if not signed and not holder.done.is_set():
                    logger.info("lobby: %s left before the table was signed", request.name)
                    lobby.leave(request.key)
                    holders.pop(request.key, None)
                    holder.done.set()
                    if on_leave is not None:
                        on_leave(request)
                    changes.notify()

            try:
                async with trio.open_nursery() as watch:
                    watch.start_soon(hang_up)
                    await holder.done.wait()
                    watch.cancel_scope.cancel()
                if holder.reason is not None:
                    await _send_quietly(conn, error_message(holder.reason))
            finally:
                holder.told.set()

    async def all_ready() -> bool:
        """Ask the joiners of version 3 whether they are ready; free the seats of those
        that are not (whether all were)."""
        check = lobby.ready_check()
        asked = [h for h in holders.values() if h.request.version >= 3]
        for holder in asked:
            holder.ready, holder.asked = None, True
            await _send_quietly(holder.conn, encode(check.to_wire()))
        with trio.move_on_after(check.seconds + 1):
            while lobby.full and not all(h.ready is not None for h in asked):
                await changes.wait()
        for holder in asked:
            holder.asked = False
        if not lobby.full:
            return False  # someone left meanwhile: the next joiner brings a new check
        ready = True
        for holder in asked:
            if holder.ready is not True:
                why = "not ready" if holder.ready is False else "no answer to the ready check"
                lobby.leave(holder.request.key)
                del holders[holder.request.key]
                holder.reason = f"{lobby.host.name} (the host) asked if you were ready: {why}"
                holder.done.set()
                if on_not_ready is not None:
                    on_not_ready(holder.request, why)
                ready = False
        if not ready:
            changes.notify()
        return ready and lobby.full

    def dismiss(reason: str) -> None:
        """Let go every connection the lobby no longer seats, telling it ``reason``."""
        seated = {r.key for r in lobby.joined} if not signed else set()
        for key, holder in list(holders.items()):
            if key not in seated:
                holder.reason = reason
                del holders[key]
                holder.done.set()

    definition: TableDefinition | None = None
    proposal = b""
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept_loop, listener, nursery, handle)
        if hand_over is not None:
            hand_over(handle)
        filling = trio.move_on_after(wait)
        watching = trio.CancelScope()

        async def close_when(closing: trio.Event) -> None:
            # The host closes its lobby: the wait for joiners ends, unless the table is
            # being signed (its joiners hear it whole).
            with watching:
                await closing.wait()
                if not signed:
                    filling.cancel()

        if closed is not None:
            nursery.start_soon(close_when, closed)
        with filling:
            while True:
                while not lobby.full:
                    await changes.wait()
                if arrange is not None:
                    await arrange(lobby)
                dismiss(f"{lobby.host.name} (the host) did not seat you at this table")
                if lobby.full and (not ready_check or await all_ready()):
                    break
            signed = True
            if hand_over is not None:
                hand_over(None)
            definition = lobby.definition()
            proposal = definition.propose(host)
            message = table_message(definition, proposal, relay)
            for holder in list(holders.values()):
                await _send_quietly(holder.conn, message)
        watching.cancel()
        if hand_over is not None:
            hand_over(None)
        waited = _waiting_for(lobby)
        signed = True
        ending = list(holders.values())
        stopped = definition is None and closed is not None and closed.is_set()
        if stopped:
            dismiss(TABLE_CLOSED)
        elif definition is None:
            dismiss(f"the table did not fill within {wait:.0f} s")
        for holder in holders.values():
            holder.done.set()
        for listener in listeners:
            await listener.aclose()
        # A handler may run in the nursery of whatever accepted its connection (the host's
        # port, ``hand_over``), which its owner may close as soon as we return: wait until
        # every joiner heard its last word (a closed table's joiner had heard only the
        # connection's end).
        with trio.move_on_after(request_timeout):
            for holder in ending:
                await holder.told.wait()
        # The handlers close their connections once told; then the nursery ends.
        nursery.cancel_scope.deadline = trio.current_time() + request_timeout
    if stopped:
        raise LobbyClosed(_("you closed the table before its game began"))
    if definition is None:
        raise LobbyError(
            _("the table did not fill within {seconds} s: {waited}").format(
                seconds=round(wait), waited=waited
            )
        )
    return definition, proposal


def _waiting_for(lobby: Lobby) -> str:
    """What a lobby still waits for, in words."""
    names = [r.name for r in lobby.joined]
    more = lobby.missing
    waited = ngettext(
        "it waited for {n} more player", "it waited for {n} more players", more
    ).format(n=more)
    if not names:
        return waited
    return _("{waited} ({names} joined)").format(waited=waited, names=", ".join(names))


async def _take_join(
    conn: FramedStream, lobby: Lobby, ip: str, local_ip: str, timeout: float
) -> tuple[JoinRequest, int]:
    """Read a join request, challenge it and check its proof: the request and its seat, or
    :class:`JoinRefused` (:class:`KeyNotProven` for a bad proof)."""
    with trio.fail_after(timeout):
        request = JoinRequest.from_wire(_decode_or_refuse(await conn.receive(), "a join request"))
        challenge = lobby.challenge()
        try:
            await conn.send(encode(challenge.to_wire()))
            signature = parse_proof(_decode_or_refuse(await conn.receive(), "a join proof"))
        except BaseException:
            lobby.withdraw(challenge)
            raise
    seat = lobby.join(request, ip, local_ip, nonce=challenge.nonce, signature=signature)
    return request, seat


def _decode_or_refuse(data: bytes, what: str) -> object:
    try:
        return decode(data)
    except RemoteProtocolError:
        raise JoinRefused(f"{what} is one canonical msgpack map") from None


async def _accept_loop(
    listener: trio.abc.Listener[Any],
    nursery: trio.Nursery,
    handle: Callable[[trio.abc.Stream], Awaitable[None]],
) -> None:
    """Until ``listener`` is closed (:func:`~.serve.accept_loop`: a joiner counts among
    the unproven while its handler runs; the seated ones are only as many as the seats)."""
    await accept_loop(listener, lambda stream, _ticket: handle(stream), nursery, Gate("lobby"))


async def _send_quietly(conn: FramedStream, payload: bytes) -> None:
    try:
        with trio.move_on_after(REQUEST_TIMEOUT):
            await conn.send(payload)
    except ConnectionClosed:
        pass


def _ready_check(data: bytes) -> ReadyCheck | None:
    """The host's ready check, if ``data`` is one (:class:`LobbyError` if it is a broken
    one)."""
    try:
        msg = decode(data)
    except RemoteProtocolError:
        return None  # not ours to say: parse_answer says what is wrong
    if isinstance(msg, dict) and msg.get("type") == "ready-check":
        return ReadyCheck.from_wire(msg)
    return None


async def _answer(check: ReadyCheck, ready: Callable[[ReadyCheck], Awaitable[bool]] | None) -> bool:
    """Our answer to ``check``: ``ready``'s within the check's seconds (late is no)."""
    if ready is None:
        return True
    with trio.move_on_after(max(1, check.seconds - 2)):
        return await ready(check)
    return False


def _unreachable(exc: BaseException) -> str:
    """Why a host cannot be reached, in words (no Python names, no errno)."""
    if isinstance(exc, trio.TooSlowError):
        return "no answer (is the address right, and the port open?)"
    if isinstance(exc, socket.gaierror):
        return "no such host name"
    if isinstance(exc, ConnectionRefusedError):
        return "nobody listens there (is the table still open?)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


async def join_table(
    host: str,
    port: int,
    name: str,
    identity: Identity,
    mesh_port: int,
    *,
    connect_timeout: float = 10.0,
    wait: float = DEFAULT_WAIT,
    seat: int | None = None,
    partner: str | None = None,
    table_id: bytes | None = None,
    on_proven: Callable[[], None] | None = None,
    ready: Callable[[ReadyCheck], Awaitable[bool]] | None = None,
    lang: str | None = None,
    level: int | None = None,
) -> LobbyAnswer:
    """Join the table hosted at ``host:port`` as ``identity``, asking for ``seat`` or
    ``partner`` if given; return the definition, our seat, the host's signature of the
    definition and the relay it names. ``mesh_port`` 0: we accept no connection (a relay
    reaches us). ``table_id``: the table we mean to join (a beacon's id, or the prefix of
    it an invitation holds); we sign no challenge for another. ``on_proven()`` is called
    once our proof is sent: from there we wait for the others and the host's seating.
    ``ready(check)`` answers the host's ready check, if it makes one (None: we are ready),
    within the check's seconds (no answer in time is a no); ``lang`` and ``level`` are what
    we tell the host of ourselves (its ready check and its ad show them, as our claims).

    Raises :class:`JoinRefused` when the host refuses us and :class:`LobbyError` for every
    other failure (no connection, a bad answer, no answer within ``wait`` seconds).
    """
    request = JoinRequest(
        check_name(name), identity.public_key_bytes, mesh_port, seat, partner, lang, level
    )
    where = format_address(host, port)
    try:
        with trio.fail_after(connect_timeout):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        raise HostUnreachable(f"cannot reach the host at {where}: {_unreachable(exc)}") from None
    async with FramedStream(stream, max_frame=MAX_LOBBY_FRAME) as conn:
        try:
            with trio.fail_after(connect_timeout):
                await conn.send(encode(request.to_wire()))
                challenge = parse_challenge(await conn.receive())
            if table_id is not None and not challenge.table_id.startswith(table_id):
                raise LobbyError(
                    f"the host at {where} opened table {challenge.table_id.hex()}, not "
                    f"{table_id.hex()}…; not joining"
                )
            with trio.fail_after(connect_timeout):
                await conn.send(prove(identity, request, challenge))
            if on_proven is not None:
                on_proven()
            with trio.fail_after(wait):
                answer = await conn.receive()
                while (check := _ready_check(answer)) is not None:
                    await conn.send(ready_message(await _answer(check, ready)))
                    answer = await conn.receive()
        except trio.TooSlowError:
            raise LobbyError(f"no table from the host within {wait:.0f} s") from None
        except (ConnectionClosed, FrameTooLarge) as exc:
            raise LobbyError(f"the host closed the lobby: {exc}") from None
    return parse_answer(answer, identity.public_key_bytes, mesh_port, request.name)
