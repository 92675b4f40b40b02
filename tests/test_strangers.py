"""Strangers at the table: a relay's public directory used by real commands (``relay
--directory``, ``host --public``, ``tables --relay``, ``join --any``), the host's key checked
against the ad, the block list honoured by ``join --any`` and by the host's lobby, the ready
check, and a flood of forged and oversized ads over TCP at a relay that lists a real table."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio
from helpers import (
    LOOPBACK,
    Process,
    address_of,
    check_games,
    cli_argv,
    ended,
    identities,
    open_listeners,
    start,
    until_seen,
)
from netns import nat_namespaces

from belote_p2p.app.blocklist import BlockList, parse_fingerprint
from belote_p2p.app.home import Home
from belote_p2p.app.public import check_advertised, fitting, ready_answer
from belote_p2p.game.rules import rule_set
from belote_p2p.net.directory import Advertiser, query_directory
from belote_p2p.net.lobby import (
    JoinRefused,
    JoinRequest,
    Lobby,
    LobbyAnswer,
    LobbyError,
    ReadyCheck,
    ReadySeat,
    host_lobby,
    join_table,
)
from belote_p2p.net.relay import RelayService
from belote_p2p.net.transport import FramedStream
from belote_p2p.protocol.directory import (
    AD_LABEL,
    AdPlayer,
    Advertisement,
    Directory,
    Listing,
    Query,
)
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.relay import RelayLimits, RelayServer, challenge_nonce, hello_message
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.wire import encode

IDS = identities(33, 8)
NAMES = ["Alice", "Bob", "Carol", "Dan", "Eve", "Fay", "Gus", "Hal"]


def ad_of(host: Identity, *, players: tuple[Identity, ...] = (), **changes: Any) -> Advertisement:
    fields: dict[str, Any] = dict(
        host_key=host.public_key_bytes, table_id=host.public_key_bytes[:16], nonce=bytes(32),
        seq=0, ttl=60, name="Alice", variant="classic", target=501, seats=4,
        free=3 - len(players), players=tuple(AdPlayer("P", p.public_key_bytes) for p in players),
        langs=("fr",), level=None, addresses=("127.0.0.1:7777",), relay=None,
    )  # fmt: skip
    fields.update(changes)
    return Advertisement(**fields)


def blocking(home: Path, *keys: bytes) -> BlockList:
    blocked = BlockList({fingerprint(k): "" for k in keys})
    blocked.save(Home.at(str(home)))
    return BlockList.of(Home.at(str(home)))


# -- the whole thing, as people run it -------------------------------------------------------


def port_of(relay: Process) -> str:
    return relay.output.split("(port ")[1].split(")")[0]


async def test_strangers_found_through_the_directory_play_a_whole_game(tmp_path: Path) -> None:
    """A relay with a directory, a public host and three ``join --any`` bots that know
    nothing of it but the relay's address: ``tables --relay`` lists the table, the three
    take its seats, the game plays out, the four records verify alike, and the table is
    withdrawn once it started."""
    procs: list[Process] = []
    everyone: list[Process] = []
    common = ["--bot", "random", "--bind", LOOPBACK, "--rematch"]
    with trio.fail_after(120), ended(everyone):
        async with trio.open_nursery() as nursery:
            relay = await start(
                nursery, "relay",
                cli_argv("relay", "--directory", "--port", "0", "--bind", LOOPBACK), tmp_path,
            )  # fmt: skip
            everyone.append(relay)
            await until_seen(relay, "Public tables are listed here")
            directory = f"{LOOPBACK}:{port_of(relay)}"
            host = await start(
                nursery, "host",
                cli_argv("host", "--public", "--relay", directory, "--port", "0", "--name",
                         "Host", "--seed", 1, "--home", tmp_path / "h0", "--target", 151,
                         "--no-beacon", *common[:-1], "--no-rematch"),
                tmp_path,
            )  # fmt: skip
            procs.append(host)
            everyone.append(host)
            await until_seen(host, "Listed in the public directory")
            listed = subprocess.run(
                cli_argv("tables", "--relay", directory, "--json", "--home", tmp_path / "hq"),
                capture_output=True, text=True, timeout=60, cwd=tmp_path,
            )  # fmt: skip
            assert listed.returncode == 0, listed.stderr
            (table,) = json.loads(listed.stdout.splitlines()[-1])["tables"]
            assert table["host"] == "Host" and table["free"] == 3 and table["variant"] == "classic"
            for k in (1, 2, 3):
                args = cli_argv("join", "--any", "--relay", directory, "--variant", "classic",
                                "--name", f"P{k}", "--home", tmp_path / f"h{k}", "--seed", k,
                                *common[:-1], "--no-rematch")  # fmt: skip
                procs.append(await start(nursery, f"join{k}", args, tmp_path))
                everyone.append(procs[-1])
            for proc in procs:
                await proc.process.wait()
            after = subprocess.run(
                cli_argv("tables", "--relay", directory, "--home", tmp_path / "hq"),
                capture_output=True, text=True, timeout=60, cwd=tmp_path,
            )  # fmt: skip
            relay.process.send_signal(signal.SIGINT)
            await relay.process.wait()
    results = check_games(procs, tmp_path)
    assert sorted(r["seat"] for r in results) == [0, 1, 2, 3]
    for proc in procs[1:]:
        assert "Taking a seat at Host's table" in proc.output, proc.output
    assert "The table is no longer listed" in host.output
    assert after.returncode == 1 and "No public table fits" in after.stdout


async def test_strangers_behind_nat_find_a_public_table_through_a_relay_of_its_own(
    tmp_path: Path,
) -> None:
    """The same behind home routers (network namespaces; skipped, saying why, where this
    machine cannot make them: no root, no ip or nft): the relay with its directory in the
    "public" namespace, the host behind a router that forwards its port (as a host needs),
    three ``join --any`` bots behind the router that nobody can dial. They find the table
    at the relay, reach the host through the forwarded port, play each other through the
    relay, and the four records verify alike."""
    with nat_namespaces("strangers") as nat:

        def netns(name: str, *args: object) -> list[str]:
            return ["ip", "netns", "exec", nat[name], *cli_argv(*args)]

        directory = f"{nat['public']}:7779"
        procs: list[Process] = []
        everyone: list[Process] = []
        with trio.fail_after(150), ended(everyone):
            async with trio.open_nursery() as nursery:
                relay = await start(
                    nursery, "relay", netns("pub", "relay", "--directory", "--port", "7779"),
                    tmp_path,
                )  # fmt: skip
                everyone.append(relay)
                await until_seen(relay, "Public tables are listed here")
                host = await start(
                    nursery, "host",
                    netns("p0", "host", "--public", "--relay", directory, "--port", "7777",
                          "--name", "Host", "--seed", 1, "--home", tmp_path / "h0", "--bot",
                          "random", "--target", 151, "--no-beacon", "--no-rematch",
                          "--advertise", f"{nat['router']}:7777"),
                    tmp_path,
                )  # fmt: skip
                procs.append(host)
                everyone.append(host)
                await until_seen(host, "Listed in the public directory")
                for k in (1, 2, 3):
                    args = netns(f"p{k}", "join", "--any", "--relay", directory, "--name",
                                 f"P{k}", "--bot", "random", "--home", tmp_path / f"h{k}",
                                 "--seed", k, "--no-rematch")  # fmt: skip
                    procs.append(await start(nursery, f"join{k}", args, tmp_path))
                    everyone.append(procs[-1])
                for proc in procs:
                    await proc.process.wait()
                relay.process.send_signal(signal.SIGINT)
                await relay.process.wait()
    results = check_games(procs, tmp_path)
    assert [r["relayed"] for r in sorted(results, key=lambda r: r["seat"])] == [0, 2, 2, 2]
    stats = json.loads(
        [x for x in relay.output.splitlines() if x.startswith("RELAY ")][-1][len("RELAY ") :]
    )
    assert stats["paired"] >= 3 and stats["directory"]["listed"] >= 1


# -- what join --any does with what the directory says ---------------------------------------


def test_join_any_passes_by_tables_where_a_blocked_key_sits(tmp_path: Path) -> None:
    """Of four listed tables, ``join --any`` keeps the one where nobody is blocked, that is
    not its own, and fits the query (checked again: the directory may lie about it)."""
    me = IDS[7]
    ads = [
        ad_of(IDS[0]),  # its host is blocked
        ad_of(IDS[1], players=(IDS[2],)),  # a blocked player sits there
        ad_of(IDS[3], variant="coinche"),  # listed for a classic query all the same
        ad_of(IDS[4], players=(IDS[5],)),  # fits
        ad_of(me),  # our own
    ]
    signers = [*IDS[:2], IDS[3], IDS[4], me]
    listing = Listing(tuple(a.sign(i) for a, i in zip(ads, signers, strict=True)), False)
    blocked = blocking(tmp_path, IDS[0].public_key_bytes, IDS[2].public_key_bytes)
    chosen = fitting(listing, Query(variant="classic"), blocked, me.public_key_bytes)
    assert [a.host_key for a in chosen] == [IDS[4].public_key_bytes]
    assert fitting(listing, Query(), BlockList({}), me.public_key_bytes, [ads[3].listing]) == [
        ads[0], ads[1], ads[2]
    ]  # fmt: skip


def test_a_lobby_whose_key_the_ad_did_not_name_is_refused() -> None:
    """The host at an advertised address answers with a table proposed by another key (or
    another table of the right key): not joined."""
    ad = ad_of(IDS[0])
    answer = _answer_of(IDS[6], ad.table_id)
    with pytest.raises(LobbyError, match="not the one of the advertisement"):
        check_advertised(answer, ad, "127.0.0.1:7777")
    with pytest.raises(LobbyError, match="not the advertised"):
        check_advertised(_answer_of(IDS[0], bytes(16)), ad, "127.0.0.1:7777")
    check_advertised(_answer_of(IDS[0], ad.table_id), ad, "127.0.0.1:7777")


def _answer_of(host: Identity, table_id: bytes) -> LobbyAnswer:
    """A lobby's answer as a host of ``host``'s key gives it for ``table_id``."""
    keys = [host.public_key_bytes, *(i.public_key_bytes for i in IDS[1:4])]
    seats = tuple(Seat(NAMES[k], keys[k], f"127.0.0.1:{6000 + k}") for k in range(4))
    definition = TableDefinition(table_id, rule_set("classic"), seats)
    return LobbyAnswer(definition, 1, b"", None)


# -- the block list and the ready check at a real lobby --------------------------------------


async def test_the_hosts_lobby_refuses_a_blocked_key_and_seats_the_next(tmp_path: Path) -> None:
    (listener,) = await open_listeners(1)
    port = address_of(listener)[1]
    home = Home.at(str(tmp_path / "host"))
    blocking(home.root, IDS[2].public_key_bytes)
    lobby = Lobby(JoinRequest("Alice", IDS[0].public_key_bytes, port), rule_set("classic"))
    lobby.block(lambda key: BlockList.of(home).blocks(key))
    answers: dict[int, object] = {}

    async def join(k: int) -> None:
        try:
            answers[k] = await join_table(LOOPBACK, port, NAMES[k], IDS[k], 6000 + k)
        except JoinRefused as exc:
            answers[k] = exc

    hosted: list[Any] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _host(hosted, lobby, listener))
            await join(2)
            assert isinstance(answers[2], JoinRefused)
            assert "did not seat you" in str(answers[2])  # nothing says it is a block
            for k in (1, 3, 4):
                nursery.start_soon(join, k)
    (definition, _proposal) = hosted[0]
    assert sorted(s.name for s in definition.seats) == ["Alice", "Bob", "Dan", "Eve"]


async def _host(hosted: list[Any], lobby: Lobby, listener: trio.SocketListener, **kw: Any) -> None:
    hosted.append(await host_lobby(lobby, [listener], IDS[0], **kw))


async def test_a_joiner_answers_not_ready_to_a_table_where_a_blocked_key_sits(
    tmp_path: Path,
) -> None:
    """Dan blocks Bob: at the ready check Dan answers not ready and loses his seat (the host
    hears why); Eve takes it, everyone else is ready, and the table is signed without Dan."""
    (listener,) = await open_listeners(1)
    port = address_of(listener)[1]
    dan = Home.at(str(tmp_path / "dan"))
    blocking(dan.root, IDS[1].public_key_bytes)
    lobby = Lobby(JoinRequest("Alice", IDS[0].public_key_bytes, port), rule_set("classic"))
    answers: dict[int, object] = {}
    said: list[str] = []
    lost: list[tuple[str, str]] = []
    checks: list[ReadyCheck] = []

    async def join(k: int) -> None:
        home = dan if k == 3 else Home.at(str(tmp_path / NAMES[k]))
        answer = ready_answer(home, IDS[k].public_key_bytes, None, said.append)

        async def ready(check: ReadyCheck) -> bool:
            checks.append(check)
            return await answer(check)

        try:
            answers[k] = await join_table(
                LOOPBACK, port, NAMES[k], IDS[k], 6000 + k, ready=ready, lang="fr", level=7
            )
        except LobbyError as exc:
            answers[k] = exc

    hosted: list[Any] = []
    gone = trio.Event()

    def not_ready(request: JoinRequest, why: str) -> None:
        lost.append((request.name, why))
        gone.set()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: _host(hosted, lobby, listener, ready_check=True, on_not_ready=not_ready)
            )
            for k in (1, 2, 3):
                nursery.start_soon(join, k)
            await gone.wait()
            nursery.start_soon(join, 4)
    (definition, _proposal) = hosted[0]
    assert sorted(s.name for s in definition.seats) == ["Alice", "Bob", "Carol", "Eve"]
    assert lost == [("Dan", "not ready")]
    assert isinstance(answers[3], LobbyError) and "not ready" in str(answers[3])
    assert any(fingerprint(IDS[1].public_key_bytes) in line for line in said)
    seats = {s.name: s for s in checks[0].seats}
    assert seats["Bob"] == ReadySeat("Bob", IDS[1].public_key_bytes, 7, "fr")


# -- the block command ------------------------------------------------------------------------


def test_block_adds_lists_and_removes_a_fingerprint(tmp_path: Path) -> None:
    home = tmp_path / "h"
    fp = fingerprint(IDS[3].public_key_bytes)

    def block(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli_argv("block", *args, "--home", home), capture_output=True,
                              text=True, timeout=60)  # fmt: skip

    added = block(fp.upper().replace("-", " ", 1), "--note", "rude at table 7")
    assert added.returncode == 0 and fp in added.stdout
    assert BlockList.of(Home.at(str(home))).blocks(IDS[3].public_key_bytes)
    listed = block("--list")
    assert f"{fp}  rude at table 7" in listed.stdout
    assert block("not-a-key").returncode == 2
    assert block(fp, "--remove").returncode == 0
    assert not BlockList.of(Home.at(str(home))).entries
    assert re.fullmatch(r"([0-9a-f]{4}-){3}[0-9a-f]{4}", parse_fingerprint(fp.replace("-", "")))


# -- a flood at a relay that lists a real table ----------------------------------------------


async def test_forged_and_oversized_ads_over_tcp_leave_the_real_table_listed() -> None:
    """An :class:`Advertiser` keeps a real table listed while flooders, each on its own
    connection, send ads signed by another key than the one they name, ads over the size
    bound, garbage and frames past the relay's cap: the relay refuses each (closing that
    connection), keeps serving, and a query still finds the one real table, signed."""
    (listener,) = await open_listeners(1)
    address = address_of(listener)
    relay = RelayService(server=RelayServer(RelayLimits(), directory=Directory()))
    host = IDS[0]

    def make(nonce: bytes, seq: int) -> Advertisement:
        return ad_of(host, nonce=nonce, seq=seq)

    async def flood(kind: int) -> None:
        stream = await trio.open_tcp_stream(*address)
        async with FramedStream(stream, max_frame=1 << 20) as link:
            await link.send(hello_message())
            nonce = challenge_nonce(await link.receive())
            if kind == 0:  # Alice's key, Mallory's signature
                wire = ad_of(host, nonce=nonce, table_id=bytes(16)).to_wire()
                frame = encode({"type": "dir-advertise", "ad": wire, "sig": IDS[7].sign(b"x")})
            elif kind == 1:  # signed, but over the bound
                wire = ad_of(IDS[7], nonce=nonce).to_wire()
                wire["addresses"] = ["a" * 250 + ":1"] * 8
                frame = encode({"type": "dir-advertise", "ad": wire,
                                "sig": IDS[7].sign(AD_LABEL + encode(wire))})  # fmt: skip
            elif kind == 2:  # not msgpack
                frame = b"\xc1" * 40
            else:  # past the relay's frame cap
                frame = bytes(200_000)
            try:
                await link.send(frame)
                await link.receive()  # its refusal
                await link.receive()  # then the end of the connection
            except Exception:
                pass

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve, [listener])
            listed = trio.Event()
            advertiser = Advertiser(
                address, host, make, on_state=lambda state: listed.set() if state.listed else None
            )
            nursery.start_soon(advertiser.run)
            await listed.wait()
            async with trio.open_nursery() as flooders:
                for k in range(40):
                    flooders.start_soon(flood, k % 4)
            listing = await query_directory(address, Query())
            assert advertiser.state.listed and advertiser.state.problem is None
            nursery.cancel_scope.cancel()
    assert [s.ad.host_key for s in listing.ads] == [host.public_key_bytes]
    assert listing.refused == 0
    assert relay.stats["refused"]["bad ad"] >= 20, relay.stats


# -- the web lobby's public tables ------------------------------------------------------------


async def test_the_web_lobby_lists_public_tables_with_claims_and_no_blocked_host(
    tmp_path: Path,
) -> None:
    """``web --relay``: the lobby asks the directory, lists the tables one may sit at (a
    blocked host's left out), each saying the level is a claim, with an id that "take a
    seat" sends; an id no longer listed is refused in words."""
    from belote_p2p.app.web.lobby import WebLobby
    from belote_p2p.app.web.server import WebServer

    (listener,) = await open_listeners(1)
    address = address_of(listener)
    relay = RelayService(server=RelayServer(RelayLimits(), directory=Directory()))
    home = Home.at(str(tmp_path / "home"))
    blocking(home.root, IDS[1].public_key_bytes)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve, [listener])
            listed = [trio.Event(), trio.Event()]
            for k in (0, 1):

                def make(nonce: bytes, seq: int, k: int = k) -> Advertisement:
                    return ad_of(IDS[k], nonce=nonce, seq=seq, name=NAMES[k], level=5)

                def on_state(state: Any, k: int = k) -> None:
                    if state.listed:
                        listed[k].set()

                nursery.start_soon(Advertiser(address, IDS[k], make, on_state=on_state).run)
            for event in listed:
                await event.wait()
            lobby = WebLobby(WebServer(), home, beacon=[], directory=f"{address[0]}:{address[1]}")
            await lobby._public()
            nursery.cancel_scope.cancel()
    model = lobby.model()
    assert model["directory"] == f"{address[0]}:{address[1]}"
    (table,) = model["public"]
    assert table["id"] == (IDS[0].public_key_bytes + IDS[0].public_key_bytes[:16]).hex()
    assert "Alice" in table["text"] and "level 5 (their claim)" in table["text"]
    assert "0 games with you" in table["text"]
    said = await lobby.handle({"type": "take-seat", "id": "00" * 48, "name": "Zoe"})
    assert said is not None and "no longer listed" in said
    assert not lobby.busy


# -- muting a player's chat ---------------------------------------------------------------------


def test_mute_drops_one_players_chat_here_and_again_hears_it() -> None:
    """``mute Bob`` (or his seat number, or ``muet``/``silenciar``) at the table: Bob's chat
    is no longer shown, the others' still is; ``mute Bob`` again hears him; naming nobody,
    or oneself, says whom it takes."""
    from helpers import dealt

    from belote_p2p.app.seatview import SeatView
    from belote_p2p.app.tui import Command, CommandKind, parse_input
    from belote_p2p.game.observation import observe
    from belote_p2p.protocol.events import ChatMessage

    rules = rule_set("classic")
    view = SeatView(0, NAMES[:4], rules)
    observation = observe(dealt(rules, 3), 0)
    assert parse_input("mute Bob", observation) == Command(CommandKind.MUTE, "Bob")
    assert parse_input("silenciar 1", observation) == Command(CommandKind.MUTE, "1")
    assert view.apply(ChatMessage(1, "hello", 0))
    assert "muted" in view.toggle_mute("bob")
    assert view.apply(ChatMessage(1, "spam", 0)) == []
    assert view.apply(ChatMessage(2, "hi", 0))
    assert "again" in view.toggle_mute("1")
    assert view.apply(ChatMessage(1, "sorry", 0))
    assert "Mute whom" in view.toggle_mute("Zed") and "Mute whom" in view.toggle_mute("0")
