"""Invitation codes: one token that holds all a joiner needs to find and trust a table.

``belote-p2p host`` prints one; ``belote-p2p join CODE`` takes it instead of ``HOST:PORT``.
The code is ``belote2`` followed by the lowercase base32 (RFC 4648, no padding) of bytes
(``protocol/PROTOCOL.md`` §9)::

    the first 16 bytes of SHA-256 of the host's public key
    || the first 8 bytes of the table id
    || the addresses, each a kind byte and its bytes: 4 (IPv4: 4 bytes, then the port in 2
       big-endian bytes), 6 (IPv6: 16 bytes, the port), or 64 + n (a host name of n < 64
       bytes of UTF-8, the port); a kind with 128 added is the relay's address
    || the first 4 bytes of SHA-256 of all that (a check against typing mistakes)

A code of one IPv4 and one IPv6 address is 94 characters (the first format, ``belote1``,
msgpack with the whole key and table id and the addresses as text, took 167 to 198; it is
still read). The key is not needed whole: the joiner learns it from the table the lobby
proposes and checks its digest, and 128 bits of SHA-256 leave nobody a key of their own that
matches; the table id prefix tells this host's table from its others. Letters and digits only:
a double click selects the whole code, and upper case reads the same.

The key is what makes the code worth more than an address: the joiner refuses a lobby whose
table is not proposed by that key (the host signs its proposal, ``PROTOCOL.md`` §6.0), so
nobody on the path, nor a machine that took over the address, can pose as the host.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
from dataclasses import dataclass

from belote_p2p.errors import BeloteError, RemoteProtocolError
from belote_p2p.protocol.identity import KEY_DIGEST_SIZE, key_digest
from belote_p2p.protocol.wire import KEY_SIZE, TABLE_ID_SIZE, decode

from .address import format_address, parse_address

PREFIX = "belote2"
OLD_PREFIX = "belote1"
"""The first format's prefix (msgpack of the whole key and table id), still read."""
WATCH_PREFIX = "belotew"
"""A watch code's prefix: the same bytes, for ``belote-p2p watch`` (``PROTOCOL.md`` §11)."""
CHECK_SIZE = 4
TABLE_PREFIX_SIZE = 8
MAX_ADDRESSES = 8
MAX_CODE = 1024
IPV4, IPV6, NAME, RELAY = 4, 6, 64, 128


class InvitationError(BeloteError, ValueError):
    """Text that is not a valid invitation code; the message says why."""


@dataclass(frozen=True, slots=True)
class Invitation:
    """A table as an invitation names it (:meth:`of` makes one from the whole key and id)."""

    key_digest: bytes
    """:func:`key_digest` of the host's key."""
    table_prefix: bytes
    """The first bytes of the table id."""
    addresses: tuple[str, ...]
    """``host:port`` of the host's port, the first tried first."""
    relay: str | None = None
    """``host:port`` of the relay, if not the host's port."""

    def __post_init__(self) -> None:
        if len(self.key_digest) != KEY_DIGEST_SIZE or len(self.table_prefix) != TABLE_PREFIX_SIZE:
            raise InvitationError("an invitation holds a key digest and a table id")
        if not 0 < len(self.addresses) <= MAX_ADDRESSES:
            raise InvitationError(f"an invitation holds 1 to {MAX_ADDRESSES} addresses")
        for address in (*self.addresses, *([self.relay] if self.relay else [])):
            try:
                parse_address(address)
            except ValueError as exc:
                raise InvitationError(f"bad address in the invitation: {exc}") from None

    @classmethod
    def of(
        cls, table_id: bytes, host_key: bytes, addresses: tuple[str, ...], relay: str | None = None
    ) -> Invitation:
        if len(table_id) != TABLE_ID_SIZE or len(host_key) != KEY_SIZE:
            raise InvitationError("an invitation holds a 16-byte table id and a 32-byte key")
        return cls(key_digest(host_key), table_id[:TABLE_PREFIX_SIZE], addresses, relay)

    @property
    def fingerprint(self) -> str:
        """The host key's fingerprint (:func:`~belote_p2p.protocol.identity.fingerprint`)."""
        digest = self.key_digest[:8].hex()
        return "-".join(digest[i : i + 4] for i in range(0, 16, 4))

    def names_key(self, host_key: bytes) -> bool:
        return key_digest(host_key) == self.key_digest

    def names_table(self, table_id: bytes) -> bool:
        return table_id[:TABLE_PREFIX_SIZE] == self.table_prefix

    def encode(self, prefix: str = PREFIX) -> str:
        """The code (``prefix``: :data:`WATCH_PREFIX` for a watch code)."""
        body = self.key_digest + self.table_prefix
        body += b"".join(_address_bytes(a) for a in self.addresses)
        if self.relay:
            body += _address_bytes(self.relay, RELAY)
        data = body + hashlib.sha256(body).digest()[:CHECK_SIZE]
        return prefix + base64.b32encode(data).decode("ascii").rstrip("=").lower()

    @classmethod
    def decode(cls, text: str, prefixes: tuple[str, ...] = (PREFIX, OLD_PREFIX)) -> Invitation:
        """Parse a code (spaces and line breaks in it are ignored; any case) that starts
        with one of ``prefixes`` (``(WATCH_PREFIX,)``: a watch code)."""
        code = "".join(text.split()).lower()
        prefix = next((p for p in prefixes if code.startswith(p)), None)
        if prefix is None or len(code) > MAX_CODE:
            what = "a watch code" if prefixes == (WATCH_PREFIX,) else "an invitation code"
            raise InvitationError(f"{what} starts with {prefixes[0]!r}")
        letters = code[len(prefix) :].upper()
        try:
            data = base64.b32decode(letters + "=" * (-len(letters) % 8))
        except (binascii.Error, ValueError):
            raise InvitationError("the invitation code is damaged (not base32)") from None
        body, check = data[:-CHECK_SIZE], data[-CHECK_SIZE:]
        if len(data) <= CHECK_SIZE or hashlib.sha256(body).digest()[:CHECK_SIZE] != check:
            raise InvitationError("the invitation code is damaged (its check fails)")
        return _decode_old(body) if prefix == OLD_PREFIX else _decode(body)


def _address_bytes(address: str, flag: int = 0) -> bytes:
    """One address as a code holds it: an IP in binary, anything else (a name, an IPv6
    address with its zone) as text."""
    host, port = parse_address(address)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is None or (ip.version == 6 and ip.scope_id):
        name = host.encode()
        if len(name) >= 64:
            raise InvitationError(f"a host name of at most 63 bytes, not {host!r}")
        return bytes([flag | NAME | len(name)]) + name + port.to_bytes(2, "big")
    kind = IPV4 if ip.version == 4 else IPV6
    return bytes([flag | kind]) + ip.packed + port.to_bytes(2, "big")


def _decode(body: bytes) -> Invitation:
    at = KEY_DIGEST_SIZE + TABLE_PREFIX_SIZE
    if len(body) < at:
        raise InvitationError("not a belote-p2p invitation")
    digest, prefix = body[:KEY_DIGEST_SIZE], body[KEY_DIGEST_SIZE:at]
    addresses: list[str] = []
    relay = None
    while at < len(body):
        kind = body[at]
        size = {IPV4: 4, IPV6: 16}.get(kind & ~RELAY, (kind & 63) if kind & NAME else -1)
        field = body[at + 1 : at + 1 + size + 2]
        if size < 0 or len(field) != size + 2:
            raise InvitationError("the invitation code is damaged (a bad address)")
        host_bytes, port = field[:size], int.from_bytes(field[size:], "big")
        if kind & NAME:
            host = host_bytes.decode("utf-8", "replace")
        else:
            host = str(ipaddress.ip_address(host_bytes))
        address = format_address(host, port)
        if kind & RELAY:
            relay = address
        else:
            addresses.append(address)
        at += 1 + size + 2
    return Invitation(digest, prefix, tuple(addresses), relay)


def _decode_old(body: bytes) -> Invitation:
    """A ``belote1`` code: canonical msgpack ``{"v": 1, "t": table id, "k": key, "a":
    [address...], "r": relay or ""}``."""
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
    return Invitation.of(table_id, key, tuple(addresses), relay or None)


def is_invitation(text: str) -> bool:
    """Whether ``text`` looks like an invitation code rather than an address."""
    lowered = text.strip().lower()
    return lowered.startswith(PREFIX) or lowered.startswith(OLD_PREFIX)
