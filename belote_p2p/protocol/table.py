"""The table definition: what every seated peer signs before play (id, rules, seats).

It is the root of a game's record: the transcript starts with it, every envelope names its
table id, and its digest is the first thing each seat signs (``protocol/PROTOCOL.md`` §5).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from belote_p2p.errors import LocalProtocolError
from belote_p2p.game.rules import RuleSet

from .identity import Identity, verify
from .names import name_problem
from .wire import TABLE_ID_SIZE, encode

TABLE_LABEL = b"belote-p2p/table/v1\x00"
PROPOSAL_LABEL = b"belote-p2p/table-proposal/v1\x00"
MAX_ADDRESS = 255


@dataclass(frozen=True, slots=True)
class Seat:
    name: str
    """1 to :data:`~.names.MAX_NAME` characters as :func:`~.names.name_problem` allows."""
    key: bytes
    """Ed25519 public key (32 bytes)."""
    address: str
    """``host:port`` where the peer listens for the mesh."""


@dataclass(frozen=True, slots=True)
class TableDefinition:
    """What every seated peer signs before play: the table id, the rules, the seats and the
    table's rules of conduct (``hints``).

    A rule of conduct is an optional key of the definition, sent only when it differs from
    its default (``PROTOCOL.md`` §6.1): the definitions of the tables that keep every
    default encode, and so digest, as they did before the rule existed, and the records
    of those tables verify unchanged."""

    table_id: bytes
    rules: RuleSet
    seats: tuple[Seat, ...]
    hints: bool = False
    """Every seat may ask its own peer's ``expert`` bot for advice during play (``host
    --hints``); off by default. The record says so, since the definition is its root."""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "version": 1,
            "table_id": self.table_id,
            "rules": self.rules.to_dict(),
            "seats": [{"name": s.name, "key": s.key, "address": s.address} for s in self.seats],
        }
        if self.hints:
            wire["hints"] = True
        return wire

    @classmethod
    def from_wire(cls, data: object) -> TableDefinition:
        """Parse strictly; ``ValueError`` says what is wrong."""
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError("a table definition is a map with version 1")
        table_id = data.get("table_id")
        if type(table_id) is not bytes or len(table_id) != TABLE_ID_SIZE:
            raise ValueError(f"table_id must be {TABLE_ID_SIZE} bytes")
        rules_data = data.get("rules")
        if not isinstance(rules_data, dict):
            raise ValueError("rules must be a map")
        try:
            rules = RuleSet.from_dict(rules_data)
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"bad rules: {exc}") from None
        seats_data = data.get("seats")
        if not isinstance(seats_data, list) or len(seats_data) != rules.seats:
            raise ValueError(f"seats must be a list of {rules.seats} ({rules.name})")
        seats: list[Seat] = []
        for s in seats_data:
            if not isinstance(s, dict) or set(s) != {"name", "key", "address"}:
                raise ValueError("a seat is a map of name, key and address")
            name, key, address = s["name"], s["key"], s["address"]
            problem = name_problem(name)
            if problem is not None:
                raise ValueError(f"seat {len(seats)}: {problem}")
            if type(key) is not bytes or len(key) != 32:
                raise ValueError("a seat key is 32 bytes")
            if type(address) is not str or len(address) > MAX_ADDRESS:
                raise ValueError("a seat address is a short string")
            seats.append(Seat(name, key, address))
        if len({s.key for s in seats}) != len(seats):
            raise ValueError("every seat needs its own key")
        hints = data.get("hints", False)
        if type(hints) is not bool:
            raise ValueError("hints is a boolean")
        return cls(table_id, rules, tuple(seats), hints)

    @property
    def digest(self) -> bytes:
        return hashlib.sha256(TABLE_LABEL + encode(self.to_wire())).digest()

    @property
    def roster(self) -> tuple[bytes, ...]:
        return tuple(s.key for s in self.seats)

    @property
    def host_key(self) -> bytes:
        """The key of seat 0, the host that proposed the table."""
        return self.seats[0].key

    def propose(self, host: Identity) -> bytes:
        """The host's signature of this definition (its proposal): every seat repeats it in
        its ``table`` envelope, so that a host that proposed two definitions for one table
        id is caught with both signatures."""
        if host.public_key_bytes != self.host_key:
            raise LocalProtocolError("only the key of seat 0 proposes the table")
        return host.sign(proposal_statement(self.table_id, self.digest))

    def proposed_by_host(self, signature: object, digest: bytes | None = None) -> bool:
        """Whether ``signature`` is this table's host signing ``digest`` (by default this
        definition's) under this table id."""
        statement = proposal_statement(self.table_id, self.digest if digest is None else digest)
        return type(signature) is bytes and verify(self.host_key, signature, statement)


def proposal_statement(table_id: bytes, digest: bytes) -> bytes:
    """What the host signs to propose a table: the label, the table id and the digest."""
    return PROPOSAL_LABEL + table_id + digest
