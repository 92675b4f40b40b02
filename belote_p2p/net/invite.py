"""Invitation codes: one token that holds all a joiner needs to find and trust a table.

``belote-p2p host`` prints one; ``belote-p2p join CODE`` takes it instead of ``HOST:PORT``.
The code is ``belote1`` followed by the lowercase base32 (RFC 4648, no padding) of::

    canonical msgpack {"v": 1, "t": table id (16 bytes), "k": the host's public key
                       (32 bytes), "a": ["host:port", ...], "r": "host:port" or ""}
    || the first 4 bytes of SHA-256 of that msgpack (a check against typing mistakes)

``a`` lists every address the host's port is reached at (IPv4 and IPv6, the first tried
first); ``r`` is the relay the table uses, empty for the host's own port. Letters and digits
only: a double click selects the whole code, and upper case reads the same.

The key is what makes the code worth more than an address: the joiner refuses a lobby whose
table is not proposed by that key (the host signs its proposal, ``PROTOCOL.md`` §6.0), so
nobody on the path, nor a machine that took over the address, can pose as the host.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.protocol.identity import fingerprint
from belote_p2p.protocol.wire import KEY_SIZE, TABLE_ID_SIZE, decode, encode

from .address import parse_address

PREFIX = "belote1"
CHECK_SIZE = 4
MAX_ADDRESSES = 8
MAX_CODE = 1024


class InvitationError(BeloteError, ValueError):
    """Text that is not a valid invitation code; the message says why."""


@dataclass(frozen=True, slots=True)
class Invitation:
    table_id: bytes
    host_key: bytes
    addresses: tuple[str, ...]
    """``host:port`` of the host's port, the first tried first."""
    relay: str | None = None
    """``host:port`` of the relay, if not the host's port."""

    def __post_init__(self) -> None:
        if len(self.table_id) != TABLE_ID_SIZE or len(self.host_key) != KEY_SIZE:
            raise InvitationError("an invitation holds a 16-byte table id and a 32-byte key")
        if not 0 < len(self.addresses) <= MAX_ADDRESSES:
            raise InvitationError(f"an invitation holds 1 to {MAX_ADDRESSES} addresses")
        for address in (*self.addresses, *([self.relay] if self.relay else [])):
            try:
                parse_address(address)
            except ValueError as exc:
                raise InvitationError(f"bad address in the invitation: {exc}") from None

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.host_key)

    def encode(self) -> str:
        body = encode(
            {
                "v": 1,
                "t": self.table_id,
                "k": self.host_key,
                "a": list(self.addresses),
                "r": self.relay or "",
            }
        )
        data = body + hashlib.sha256(body).digest()[:CHECK_SIZE]
        return PREFIX + base64.b32encode(data).decode("ascii").rstrip("=").lower()

    @classmethod
    def decode(cls, text: str) -> Invitation:
        """Parse a code (spaces and line breaks in it are ignored; any case)."""
        code = "".join(text.split()).lower()
        if not code.startswith(PREFIX) or len(code) > MAX_CODE:
            raise InvitationError(f"an invitation code starts with {PREFIX!r}")
        letters = code[len(PREFIX) :].upper()
        try:
            data = base64.b32decode(letters + "=" * (-len(letters) % 8))
        except (binascii.Error, ValueError):
            raise InvitationError("the invitation code is damaged (not base32)") from None
        body, check = data[:-CHECK_SIZE], data[-CHECK_SIZE:]
        if len(data) <= CHECK_SIZE or hashlib.sha256(body).digest()[:CHECK_SIZE] != check:
            raise InvitationError("the invitation code is damaged (its check fails)")
        try:
            value = decode(body)
        except RemoteProtocolError as exc:
            raise InvitationError(f"the invitation code is damaged: {exc}") from None
        if not isinstance(value, dict) or set(value) != {"v", "t", "k", "a", "r"}:
            raise InvitationError("not a belote-p2p invitation")
        if value["v"] != 1:
            raise InvitationError(f"an invitation of version {value['v']!r}: update belote-p2p")
        table_id, key, addresses, relay = value["t"], value["k"], value["a"], value["r"]
        if (
            type(table_id) is not bytes
            or type(key) is not bytes
            or not isinstance(addresses, list)
            or not all(isinstance(a, str) for a in addresses)
            or not isinstance(relay, str)
        ):
            raise InvitationError("not a belote-p2p invitation")
        return cls(table_id, key, tuple(addresses), relay or None)


def is_invitation(text: str) -> bool:
    """Whether ``text`` looks like an invitation code rather than an address."""
    return text.strip().lower().startswith(PREFIX)
