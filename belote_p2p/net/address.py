"""Addresses: ``host:port`` text (IPv6 in brackets), listeners, and this machine's LAN address."""

from __future__ import annotations

import contextlib
import ipaddress
import socket

import trio


def format_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_address(text: str, default_port: int | None = None) -> tuple[str, int]:
    """``"10.0.0.2:7777"``, ``"[::1]:7777"`` or (with ``default_port``) ``"host"``."""
    text = text.strip()
    host, sep, port_text = text.rpartition(":")
    if text.startswith("[") and "]" in text:
        host, _, rest = text[1:].partition("]")
        sep, port_text = (":", rest[1:]) if rest.startswith(":") else ("", "")
    elif not sep or ":" in host:
        host, sep, port_text = text, "", ""
    if not sep:
        if default_port is None:
            raise ValueError(f"not host:port: {text!r}")
        return host, default_port
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"bad port in {text!r}") from None
    if not host or not 0 < port < 65536:
        raise ValueError(f"not host:port: {text!r}")
    return host, port


def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


ALL_ADDRESSES = ""
"""``--bind`` for every address of the machine, IPv4 and IPv6 (the default)."""


def guess_lan_ip() -> str:
    """The address this machine would use to reach the internet (no packet is sent)."""
    return guess_ip(socket.AF_INET) or "127.0.0.1"


def guess_ip(family: socket.AddressFamily) -> str | None:
    """The address of ``family`` this machine would use to reach the internet, found by
    connecting a UDP socket to a documentation address (RFC 5737, RFC 3849): no packet is
    sent. None if the machine has no route for that family."""
    target = ("192.0.2.1", 9) if family == socket.AF_INET else ("2001:db8::1", 9)
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect(target)
            ip: str = s.getsockname()[0]
    except OSError:
        return None
    return ip


def is_all_addresses(bind: str) -> bool:
    return bind in (ALL_ADDRESSES, "0.0.0.0", "::")


def local_addresses(bind: str) -> list[str]:
    """The addresses others may reach us at when we listen on ``bind``: the machine's
    outgoing IPv4 and IPv6 addresses for an address that means all (IPv4 only for
    ``0.0.0.0``, IPv6 only for ``::``), else ``bind`` itself."""
    if not is_all_addresses(bind):
        return [bind]
    families = {
        ALL_ADDRESSES: (socket.AF_INET, socket.AF_INET6),
        "0.0.0.0": (socket.AF_INET,),
        "::": (socket.AF_INET6,),
    }[bind]
    found = [ip for ip in (guess_ip(f) for f in families) if ip is not None]
    return [ip.partition("%")[0] for ip in found] or ["127.0.0.1"]


def loopback_for(bind: str) -> str:
    """An address of this machine that a listener on ``bind`` accepts connections on."""
    if bind == "::":
        return "::1"
    if is_all_addresses(bind):
        return "127.0.0.1"
    return bind


async def open_listeners(bind: str, port: int) -> list[trio.SocketListener]:
    """TCP listeners on ``bind`` (``port`` 0: any free port), all on the same port.

    ``bind`` empty (:data:`ALL_ADDRESSES`): one IPv6 and one IPv4 listener on every
    address of the machine (either alone where the machine lacks the other family)."""
    if bind != ALL_ADDRESSES:
        return [await open_listener(bind, port)]
    for _ in range(10):
        listeners: list[trio.SocketListener] = []
        with contextlib.suppress(OSError):  # no IPv6 on this machine
            listeners += await trio.open_tcp_listeners(port, host="::")
        chosen = listener_port(listeners[0]) if listeners else port
        try:
            listeners += await trio.open_tcp_listeners(chosen, host="0.0.0.0")
        except OSError:
            if port == 0 and listeners:
                # The IPv6 listener's free port is taken in IPv4: try another.
                for listener in listeners:
                    await listener.aclose()
                continue
            if not listeners:
                raise
        return listeners
    raise OSError("no port free in both IPv4 and IPv6")


async def open_listener(bind: str, port: int) -> trio.SocketListener:
    """One TCP listener on ``bind`` (``port`` 0: any free port)."""
    listeners = await trio.open_tcp_listeners(port, host=bind or None)
    for extra in listeners[1:]:
        await extra.aclose()
    return listeners[0]


def listener_port(listener: trio.SocketListener) -> int:
    port: int = listener.socket.getsockname()[1]
    return port
