"""Addresses: ``host:port`` text (IPv6 in brackets), listeners, and this machine's LAN address."""

from __future__ import annotations

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


def guess_lan_ip() -> str:
    """The address this machine would use to reach the internet (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            ip: str = s.getsockname()[0]
        except OSError:
            return "127.0.0.1"
    return ip


async def open_listener(bind: str, port: int) -> trio.SocketListener:
    """One TCP listener on ``bind`` (``port`` 0: any free port)."""
    listeners = await trio.open_tcp_listeners(port, host=bind)
    for extra in listeners[1:]:
        await extra.aclose()
    return listeners[0]


def listener_port(listener: trio.SocketListener) -> int:
    port: int = listener.socket.getsockname()[1]
    return port
