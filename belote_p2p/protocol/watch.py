"""The watch protocol, sans-io: the messages between a watcher and the host's port.

A watcher holds no seat and signs nothing: it opens a connection to the host's port, says
which table it wants to watch, and is sent the table definition with the host's signature
of it, every envelope of the table the host accepted so far (in the host's order), then
each new one as the host accepts it. It checks them as a verifier does (an observer
:class:`~belote_p2p.protocol.session.TableSession`): the host only forwards signed
envelopes, and a forwarder can delay, drop or stop them, never forge one. Messages (one
frame each, canonical msgpack, ``PROTOCOL.md`` §11):

* watcher → host: ``{"type": "watch", "version": 1, "table": bin 8}`` (the first 8 bytes
  of the table id, as the watch code holds them);
* host → watcher: ``{"type": "watch-table", "definition": map, "proposal": bin 64}`` once
  the table is signed by the lobby; then every envelope, each a frame as it was signed;
* host → watcher: ``{"type": "watch-end", "reason": str}`` after the last envelope (the
  game is over at the host), or ``{"type": "watch-refused", "reason": str}`` instead of the
  table; then the connection closes.

An envelope is a map of the seven keys of ``PROTOCOL.md`` §5.1 and never has a ``type``
key of its own: the watcher tells the host's own messages from the table's by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from belote_p2p.errors import RemoteProtocolError

from .relay import decode_map
from .table import TableDefinition
from .wire import decode, encode

WATCH_VERSION = 1
TABLE_PREFIX_SIZE = 8
"""Bytes of the table id a watch hello names (the watch code's)."""
MAX_WATCH_HELLO = 1 << 8
"""The largest watch hello a host reads."""


class WatchError(RemoteProtocolError):
    """The other end of a watch connection broke the watch protocol; the message says how."""


class WatchRefused(WatchError):
    """The host does not let us watch (watching is off, too many watchers, another table):
    its reason is the message."""


def hello_message(table_prefix: bytes) -> bytes:
    """The watcher's first frame."""
    return encode({"type": "watch", "version": WATCH_VERSION, "table": table_prefix})


def parse_hello(data: bytes) -> bytes:
    """The table prefix a watch hello names; :class:`WatchError` for anything else."""
    msg = decode_map(data, "the watcher", WatchError)
    if msg.get("type") != "watch" or set(msg) != {"type", "version", "table"}:
        raise WatchError("a watch hello has exactly the keys type, version and table")
    if msg["version"] != WATCH_VERSION:
        raise WatchError(f"watch version {msg['version']!r} (this host speaks {WATCH_VERSION})")
    table = msg["table"]
    if type(table) is not bytes or len(table) != TABLE_PREFIX_SIZE:
        raise WatchError(f"a watch hello names the first {TABLE_PREFIX_SIZE} bytes of a table id")
    return bytes(table)


def table_message(definition: TableDefinition, proposal: bytes) -> bytes:
    return encode({"type": "watch-table", "definition": definition.to_wire(), "proposal": proposal})


def end_message(reason: str) -> bytes:
    return encode({"type": "watch-end", "reason": reason})


def refused_message(reason: str) -> bytes:
    return encode({"type": "watch-refused", "reason": reason})


@dataclass(frozen=True, slots=True)
class WatchedTable:
    """The table a host sent, checked: its definition is proposed (signed) by its host."""

    definition: TableDefinition
    proposal: bytes


def parse_table(data: bytes) -> WatchedTable:
    """The host's answer to a hello: the table, or :class:`WatchRefused` with its reason;
    :class:`WatchError` for anything else (a definition its host did not sign)."""
    msg = decode_map(data, "the host", WatchError)
    kind = msg.get("type")
    if kind == "watch-refused":
        raise WatchRefused(_reason(msg))
    if kind != "watch-table":
        raise WatchError(f"the host answered a watch hello with {kind!r}")
    try:
        definition = TableDefinition.from_wire(msg.get("definition"))
    except ValueError as exc:
        raise WatchError(f"the host sent a bad table definition: {exc}") from None
    proposal = msg.get("proposal")
    if not definition.proposed_by_host(proposal):
        raise WatchError("the table definition is not signed by its host")
    if not definition.watchers:
        # Every seat signed that nobody watches (PROTOCOL.md §11): whoever serves it breaks
        # the table's rule, and the watcher does not take part in that.
        raise WatchError("the table refuses watchers, and a seat served it all the same")
    assert type(proposal) is bytes
    return WatchedTable(definition, proposal)


def end_reason(data: bytes) -> str | None:
    """The reason of a ``watch-end`` frame; None for an envelope (a map without ``type``).
    :class:`WatchError` for any other message of the host's."""
    try:
        msg = decode(data)
    except RemoteProtocolError as exc:
        raise WatchError(f"the host sent a frame that is not msgpack: {exc}") from None
    if not isinstance(msg, dict) or "type" not in msg:
        return None
    if msg["type"] != "watch-end":
        raise WatchError(f"the host sent {msg['type']!r} during the game")
    return _reason(msg)


def _reason(msg: dict[str, Any]) -> str:
    reason = msg.get("reason")
    return reason[:200] if isinstance(reason, str) else "(no reason given)"
