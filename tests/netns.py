"""Network namespaces for the tests that need a NAT between peers (where this machine lets a
test make them): a masquerading home router in front of four players, a "public" side for
a relay. Each test module names its namespaces with its own prefix."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PUBLIC_NET = "198.51.100"
"""The "internet" side (a documentation range, only inside the test's namespaces)."""


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=check, timeout=30)


def netns_unavailable(prefix: str) -> str | None:
    """Why the NAT test cannot run here, or None."""
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install -y iproute2 nftables)"
    probe = f"{prefix}-probe"
    made = run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()}"
    try:
        nft = run("ip", "netns", "exec", probe, "nft", "list", "ruleset", check=False)
        if nft.returncode != 0:
            return f"nftables does not work in a namespace: {nft.stderr.strip()}"
    finally:
        run("ip", "netns", "del", probe, check=False)
    return None


@contextmanager
def nat_namespaces(prefix: str) -> Iterator[dict[str, str]]:
    """A "public" namespace, a router namespace masquerading towards it with a port forward
    to the host's namespace, and four player namespaces on their own subnets behind the
    router that can dial out but cannot be reached (nor reach each other). Yields each
    namespace's address; removes every namespace at the end."""
    reason = netns_unavailable(prefix)
    if reason is not None:
        pytest.skip(f"no NAT test here: {reason}")
    names = {
        "pub": f"{prefix}-pub", "rt": f"{prefix}-rt",
        **{f"p{k}": f"{prefix}-p{k}" for k in range(4)},
    }  # fmt: skip
    for ns in names.values():
        run("ip", "netns", "del", ns, check=False)
    try:
        for ns in names.values():
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
        pub, rt = names["pub"], names["rt"]
        run("ip", "link", "add", "bpv-pub", "netns", pub, "type", "veth", "peer", "name",
            "bpv-wan", "netns", rt)  # fmt: skip
        run("ip", "-n", pub, "addr", "add", f"{PUBLIC_NET}.1/24", "dev", "bpv-pub")
        run("ip", "-n", rt, "addr", "add", f"{PUBLIC_NET}.2/24", "dev", "bpv-wan")
        run("ip", "-n", pub, "link", "set", "bpv-pub", "up")
        run("ip", "-n", rt, "link", "set", "bpv-wan", "up")
        for k in range(4):
            ns = names[f"p{k}"]
            run("ip", "link", "add", "bpv-lan", "netns", ns, "type", "veth", "peer", "name",
                f"bpv-l{k}", "netns", rt)  # fmt: skip
            run("ip", "-n", ns, "addr", "add", f"10.77.{k}.2/24", "dev", "bpv-lan")
            run("ip", "-n", rt, "addr", "add", f"10.77.{k}.1/24", "dev", f"bpv-l{k}")
            run("ip", "-n", ns, "link", "set", "bpv-lan", "up")
            run("ip", "-n", rt, "link", "set", f"bpv-l{k}", "up")
            run("ip", "-n", ns, "route", "add", "default", "via", f"10.77.{k}.1")
        run("ip", "netns", "exec", rt, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        rules = f"""
table ip nat {{
    chain prerouting {{
        type nat hook prerouting priority dstnat; policy accept;
        ip daddr {PUBLIC_NET}.2 tcp dport 7777 dnat to 10.77.0.2:7777
    }}
    chain postrouting {{
        type nat hook postrouting priority srcnat; policy accept;
        oifname "bpv-wan" masquerade
        oifname "bpv-l0" ct status dnat masquerade
    }}
}}
table ip filter {{
    chain forwarding {{
        type filter hook forward priority filter; policy drop;
        ct state established,related accept
        iifname "bpv-l*" oifname "bpv-wan" accept
        ip daddr 10.77.0.2 tcp dport 7777 ct status dnat accept
    }}
}}
"""
        done = subprocess.run(["ip", "netns", "exec", rt, "nft", "-f", "-"], input=rules,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        if done.returncode != 0:
            pytest.skip(f"no NAT test here: nft refused the rules: {done.stderr.strip()}")
        yield {
            **names,
            "public": f"{PUBLIC_NET}.1",
            "router": f"{PUBLIC_NET}.2",
            **{f"ip{k}": f"10.77.{k}.2" for k in range(4)},
        }
    finally:
        for ns in names.values():
            run("ip", "netns", "del", ns, check=False)
