"""Games between real peer processes that cannot all accept connections: joiners behind
``--no-listen`` through the host's relay, everybody through a standalone ``belote-p2p
relay``, and four network namespaces behind a masquerading router (where this machine lets
a test make them)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from helpers import Process, check_games, cli_argv, ended, source_pythonpath, start, until_seen
from netns import nat_namespaces, run

# The network-namespace tests make fixed-name namespaces: never two at once (pytest-xdist).
pytestmark = pytest.mark.xdist_group("netns")

COMMON = ["--bot", "random", "--bind", "127.0.0.1"]


def invitation_of(host: Process) -> str:
    return host.output.split("Invitation code:\n")[1].split()[0]


async def play(
    tmp_path: Path, host_extra: list[str], join_extra: list[str], *, relay: bool = False
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    procs: list[Process] = []
    relay_stats = None
    with trio.fail_after(90), ended(procs):
        async with trio.open_nursery() as nursery:
            relay_proc = None
            if relay:
                relay_proc = await start(
                    nursery, "relay",
                    cli_argv("relay", "--port", "0", "--bind", "127.0.0.1"), tmp_path,
                )  # fmt: skip
                procs.append(relay_proc)
                await until_seen(relay_proc, "Tables use it with")
                port = relay_proc.output.split("(port ")[1].split(")")[0]
                host_extra = [*host_extra, "--relay", f"127.0.0.1:{port}"]
            host = await start(
                nursery, "host",
                cli_argv("host", "--port", "0", "--name", "Host", "--seed", "1",
                         "--home", tmp_path / "h0", "--target", "151", *COMMON, *host_extra),
                tmp_path,
            )  # fmt: skip
            await until_seen(host, "Others join with")
            code = invitation_of(host)
            procs.append(host)
            for k in (1, 2, 3):
                args = cli_argv("join", code, "--name", f"P{k}", "--home", tmp_path / f"h{k}",
                                "--seed", k, "--quiet", *COMMON, *join_extra)  # fmt: skip
                procs.append(await start(nursery, f"join{k}", args, tmp_path))
            for proc in procs:
                if proc is not relay_proc:
                    await proc.process.wait()
            if relay_proc is not None:
                relay_proc.process.send_signal(signal.SIGINT)
                await relay_proc.process.wait()
                lines = [x for x in relay_proc.output.splitlines() if x.startswith("RELAY ")]
                relay_stats = json.loads(lines[-1][len("RELAY ") :])
    return check_games([p for p in procs if p.name != "relay"], tmp_path), relay_stats


async def test_joiners_that_do_not_listen_play_through_the_hosts_relay(tmp_path: Path) -> None:
    """Three joiners behind --no-listen: each dials the host directly (it listens), and the
    three pairs between them go through the relay on the host's port."""
    results, _ = await play(tmp_path, [], ["--no-listen"])
    assert [r["relayed"] for r in results] == [0, 2, 2, 2], results


async def test_four_peers_that_do_not_listen_play_through_a_standalone_relay(
    tmp_path: Path,
) -> None:
    results, stats = await play(tmp_path, ["--no-listen"], ["--no-listen"], relay=True)
    assert [r["relayed"] for r in results] == [3, 3, 3, 3], results
    assert stats is not None and stats["paired"] >= 6 and stats["forwarded_bytes"] > 0
    assert stats["refused"] == {}


# -- behind a NAT, in network namespaces ------------------------------------------------------

NS = "bp2p"
"""Prefix of the namespaces the test makes (and removes)."""


@pytest.fixture
def nat() -> Iterator[dict[str, str]]:
    """The NAT of :func:`nat_namespaces`, named with this file's prefix."""
    with nat_namespaces(NS) as names:
        yield names


async def test_four_peers_behind_a_nat_play_through_a_public_relay(
    tmp_path: Path, nat: dict[str, str]
) -> None:
    """Four players behind a home router (the host with its port forwarded, as a host
    needs, and the router forwarding it from inside too), a relay on the public side. The
    joiners listen, but nobody can reach them: their direct dials to each other fail (to the
    router's address the host saw them come from) and those three pairs go through the
    relay; the joiners reach the host through the forwarded port; the game completes."""

    def netns(name: str, *args: object) -> list[str]:
        return ["ip", "netns", "exec", nat[name], *cli_argv(*args)]

    procs: list[Process] = []
    everyone: list[Process] = []
    with trio.fail_after(150), ended(everyone):
        async with trio.open_nursery() as nursery:
            relay = await start(nursery, "relay", netns("pub", "relay", "--port", "7779"), tmp_path)
            everyone.append(relay)
            await until_seen(relay, "Tables use it with")
            host = await start(
                nursery, "host",
                netns("p0", "host", "--port", "7777", "--name", "Host", "--seed", "1",
                      "--home", tmp_path / "h0", "--bot", "random", "--target", "151",
                      "--relay", f"{nat['public']}:7779",
                      "--advertise", f"{nat['router']}:7777"),
                tmp_path,
            )  # fmt: skip
            await until_seen(host, "Others join with")
            code = invitation_of(host)
            procs.append(host)
            everyone.append(host)
            for k in (1, 2, 3):
                args = netns(f"p{k}", "join", code, "--name", f"P{k}", "--bot", "random",
                             "--home", tmp_path / f"h{k}", "--seed", k, "--quiet")  # fmt: skip
                procs.append(await start(nursery, f"join{k}", args, tmp_path))
                everyone.append(procs[-1])
            for proc in procs:
                await proc.process.wait()
            relay.process.send_signal(signal.SIGINT)
            await relay.process.wait()
    results = check_games(procs, tmp_path)
    assert [r["relayed"] for r in results] == [0, 2, 2, 2], results
    stats = json.loads(
        [x for x in relay.output.splitlines() if x.startswith("RELAY ")][-1][len("RELAY ") :]
    )
    assert stats["paired"] >= 3 and stats["refused"] == {}


def test_source_pythonpath_reaches_the_namespaces() -> None:
    """The namespaced processes run from this tree like every other test's."""
    assert str(Path(__file__).resolve().parents[1]) in source_pythonpath()


@pytest.fixture
def link() -> Iterator[tuple[str, str]]:
    """Two namespaces joined by one link (a veth pair), IPv6 link-local addresses usable at
    once; removed at the end."""
    if shutil.which("ip") is None:
        pytest.skip("no IPv6 multicast test here: ip is not installed (apt-get install iproute2)")
    a, b = f"{NS}-a", f"{NS}-b"
    for ns in (a, b):
        run("ip", "netns", "del", ns, check=False)
    try:
        for ns in (a, b):
            made = run("ip", "netns", "add", ns, check=False)
            if made.returncode != 0:
                pytest.skip(f"no IPv6 multicast test here: {made.stderr.strip()}")
            for key in ("all", "default"):
                run("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{key}.accept_dad=0")
        run("ip", "link", "add", "bpv-a", "netns", a, "type", "veth", "peer", "name", "bpv-b",
            "netns", b)  # fmt: skip
        for ns, dev in ((a, "bpv-a"), (b, "bpv-b")):
            run("ip", "-n", ns, "link", "set", dev, "up")
        yield a, b
    finally:
        for ns in (a, b):
            run("ip", "netns", "del", ns, check=False)


SEND_BEACONS = """
import sys, trio
from belote_p2p.net.discovery import IPV6_GROUP, Beacon, send_beacons
beacon = Beacon("Alice", "coinche", 1001, 3, 7777, bytes(16), bytes(32))
async def main():
    with trio.move_on_after(float(sys.argv[2])):
        await send_beacons(lambda: beacon, address=(IPV6_GROUP, int(sys.argv[1])), interval=0.1)
trio.run(main)
"""


async def test_beacons_cross_a_link_on_ipv6_link_local_multicast(
    tmp_path: Path, link: tuple[str, str]
) -> None:
    """A host's beacons to the IPv6 group, heard by ``tables`` on the other end of a link:
    the table shows with the host's link-local address and its interface."""
    a, b = link
    env = {"PYTHONPATH": source_pythonpath(), "PATH": "/usr/bin:/bin"}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            sender = ["ip", "netns", "exec", a, sys.executable, "-c", SEND_BEACONS, "7778", "6"]
            nursery.start_soon(partial(trio.run_process, sender, env=env, stdin=subprocess.DEVNULL))
            done = await trio.run_process(
                ["ip", "netns", "exec", b, *cli_argv("tables", "--group", "ff12::6265:6c6f",
                                                     "--seconds", "3")],
                env=env, stdin=subprocess.DEVNULL, capture_stdout=True, capture_stderr=True,
                check=False,
            )  # fmt: skip
            nursery.cancel_scope.cancel()
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "Alice" in out and "coinche" in out and "1001" in out
    assert "[fe80::" in out and "%bpv-b]:7777" in out
