"""The lobby over loopback TCP, and ``belote-p2p demo`` as real processes."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
from functools import partial
from pathlib import Path

import pytest
import trio
from helpers import (
    address_of,
    cli_argv,
    free_udp_port,
    identities,
    open_listeners,
    run_cli,
    source_pythonpath,
    start,
    until_seen,
)

from belote_p2p.app.botprocs import PROCESS_FILE
from belote_p2p.app.home import Home
from belote_p2p.app.host import host_game
from belote_p2p.app.join import join_game
from belote_p2p.app.output import parse_result
from belote_p2p.app.profile import all_players, find_players, open_db
from belote_p2p.app.seat import SeatOptions
from belote_p2p.game.rules import rule_set
from belote_p2p.net.address import parse_address
from belote_p2p.net.lobby import (
    JoinRefused,
    JoinRequest,
    Lobby,
    LobbyError,
    error_message,
    host_lobby,
    join_table,
    parse_answer,
    table_message,
)
from belote_p2p.net.transport import FramedStream
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.wire import decode, encode

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")

IDS = identities(5, 6)
KEYS = [identity.public_key_bytes for identity in IDS]
RULES = rule_set("coinche", target=301)


def new_lobby() -> Lobby:
    return Lobby(JoinRequest("Host", KEYS[0], 5000), RULES)


async def lobby_listener() -> tuple[trio.SocketListener, int]:
    (listener,) = await open_listeners(1)
    return listener, address_of(listener)[1]


async def raw_request(port: int, payload: bytes) -> object:
    """Send one frame to the lobby; the host's answer, decoded."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with FramedStream(stream) as conn:
        await conn.send(payload)
        return decode(await conn.receive())


async def test_four_peers_get_the_same_table_from_the_lobby() -> None:
    listener, port = await lobby_listener()
    lobby = new_lobby()
    got: dict[int, object] = {}
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:

            async def host() -> None:
                got[0] = await host_lobby(lobby, [listener], IDS[0])

            async def join(i: int) -> None:
                got[i] = await join_table("127.0.0.1", port, f"P{i}", IDS[i], 6000 + i)

            nursery.start_soon(host)
            for i in (1, 2, 3):
                nursery.start_soon(join, i)
    definition, proposal = got[0]  # type: ignore[misc]
    assert definition.proposed_by_host(proposal)
    assert all(got[i][::2] == (definition, proposal) for i in (1, 2, 3))  # type: ignore[index]
    assert sorted(got[i][1] for i in (1, 2, 3)) == [1, 2, 3]  # type: ignore[index]
    assert definition.rules == RULES  # type: ignore[attr-defined]
    seats = definition.seats  # type: ignore[attr-defined]
    assert seats[0].key == KEYS[0] and seats[0].address == "127.0.0.1:5000"
    for i in (1, 2, 3):
        seat = got[i][1]  # type: ignore[index]
        assert seats[seat].key == KEYS[i]
        assert seats[seat].address == f"127.0.0.1:{6000 + i}"
    assert len(definition.table_id) == 16  # type: ignore[attr-defined]


async def test_the_lobby_refuses_duplicate_keys_and_malformed_requests() -> None:
    listener, port = await lobby_listener()
    lobby = new_lobby()
    seated = trio.Event()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                partial(
                    host_lobby, lobby, [listener], IDS[0], on_join=lambda seat, req: seated.set()
                )
            )
            # The host's own key, then a key already waiting at the table.
            with pytest.raises(JoinRefused, match=r"already at the table.*own --home DIR"):
                await join_table("127.0.0.1", port, "Thief", IDS[0], 6000)
            nursery.start_soon(join_table, "127.0.0.1", port, "P1", IDS[1], 6001)
            await seated.wait()
            with pytest.raises(JoinRefused, match="already at the table"):
                await join_table("127.0.0.1", port, "Twin", IDS[1], 6002)
            # Not msgpack, not canonical, not a join, missing a field, a bad key.
            for payload in (
                b"\xc1\xc1",
                b"\xd1\x00\x01",
                encode({"type": "hello"}),
                encode({"type": "join", "version": 2, "name": "X", "key": KEYS[4]}),
                encode({"type": "join", "version": 2, "name": "X", "key": b"short", "port": 1}),
                encode({"type": "join", "version": 2, "name": "", "key": KEYS[4], "port": 1}),
                encode({"type": "join", "version": 2, "name": "X", "key": KEYS[4], "port": 70000}),
            ):
                answer = await raw_request(port, payload)
                assert isinstance(answer, dict) and answer["type"] == "error", payload
            assert [r.key for r in lobby.joined] == [KEYS[1]]
            nursery.start_soon(join_table, "127.0.0.1", port, "P2", IDS[2], 6002)
            nursery.start_soon(join_table, "127.0.0.1", port, "P3", IDS[3], 6003)


def test_a_fifth_player_is_refused() -> None:
    lobby = new_lobby()
    for i in (1, 2, 3):
        assert lobby.admit(JoinRequest(f"P{i}", KEYS[i], 6000 + i), "10.0.0.9", "10.0.0.1") == i
    assert lobby.full
    with pytest.raises(JoinRefused, match="full"):
        lobby.admit(JoinRequest("P4", KEYS[4], 6004), "10.0.0.9", "10.0.0.1")
    definition = lobby.definition()
    assert [s.address for s in definition.seats] == [
        "10.0.0.1:5000",
        "10.0.0.9:6001",
        "10.0.0.9:6002",
        "10.0.0.9:6003",
    ]


def test_a_joiner_on_the_host_machine_gets_the_lan_address() -> None:
    lobby = new_lobby()
    lobby.admit(JoinRequest("Local", KEYS[1], 6001), "127.0.0.1", "127.0.0.1")
    lobby.admit(JoinRequest("Far", KEYS[2], 6002), "192.168.1.7", "192.168.1.2")
    lobby.admit(JoinRequest("Also", KEYS[3], 6003), "::1", "::1")
    addresses = [s.address for s in lobby.definition().seats]
    assert addresses == [
        "192.168.1.2:5000",
        "192.168.1.2:6001",
        "192.168.1.7:6002",
        "192.168.1.2:6003",
    ]


def test_a_joiner_checks_the_table_it_is_given() -> None:
    lobby = new_lobby()
    for i in (1, 2, 3):
        lobby.admit(JoinRequest(f"P{i}", KEYS[i], 6000 + i), "10.0.0.9", "10.0.0.1")
    definition = lobby.definition()
    message = table_message(definition, definition.propose(IDS[0]))
    assert parse_answer(message, KEYS[2], 6002)[1] == 2
    # A proposal not signed by the table's host is refused.
    with pytest.raises(LobbyError, match="signature"):
        parse_answer(table_message(definition, IDS[1].sign(b"x")), KEYS[2], 6002)
    with pytest.raises(LobbyError, match="does not seat our key"):
        parse_answer(message, KEYS[5], 6002)
    with pytest.raises(LobbyError, match="port"):
        parse_answer(message, KEYS[2], 7777)
    with pytest.raises(LobbyError, match="host's seat"):
        parse_answer(message, KEYS[0], 5000)
    with pytest.raises(JoinRefused, match="nope"):
        parse_answer(error_message("nope"), KEYS[2], 6002)
    with pytest.raises(LobbyError):
        parse_answer(b"\xc1", KEYS[2], 6002)


def test_a_joiner_refuses_a_table_that_renames_it() -> None:
    lobby = new_lobby()
    for i in (1, 2, 3):
        lobby.admit(JoinRequest(f"P{i}", KEYS[i], 6000 + i), "10.0.0.9", "10.0.0.1")
    definition = lobby.definition()
    assert parse_answer(table_message(definition, definition.propose(IDS[0])), KEYS[2], 6002, "P2")
    seats = list(definition.seats)
    seats[2] = dataclasses.replace(seats[2], name="Loser")
    renamed = dataclasses.replace(definition, seats=tuple(seats))
    message = table_message(renamed, renamed.propose(IDS[0]))
    with pytest.raises(LobbyError, match=r"the host renamed us.*'Loser'.*'P2'"):
        parse_answer(message, KEYS[2], 6002, "P2")


def test_addresses() -> None:
    assert parse_address("10.0.0.2:7777") == ("10.0.0.2", 7777)
    assert parse_address("[::1]:80") == ("::1", 80)
    assert parse_address("example.org", 7777) == ("example.org", 7777)
    assert parse_address("::1", 7777) == ("::1", 7777)
    with pytest.raises(ValueError):
        parse_address("host:notaport")
    with pytest.raises(ValueError):
        parse_address("host")


async def test_demo_runs_four_processes_to_an_agreed_end(tmp_path: Path) -> None:
    done = await run_cli(
        tmp_path, "demo", "--target", "151", "--bot", "random", "--seed", "11", timeout=50
    )
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    result = parse_result(out)
    assert result is not None and result["ok"]
    scores = result["scores"]
    assert max(scores) >= 151
    assert f"All 4 peers agree: final scores {scores[0]}-{scores[1]}" in out
    assert "Score sheet" in out and "Round 1" in out
    # One naming rule for bots: a bot is named for its seat, the demo's host Bot0.
    for seat in (1, 2, 3):
        assert re.search(rf"Bot{seat} \[[0-9a-f-]{{19}}\] joined: seat {seat}\b", out), out
    assert "  Bot0 & Bot2:" in out and "  Bot1 & Bot3:" in out, out


def test_resume_without_an_unfinished_game_says_so(tmp_path: Path) -> None:
    from belote_p2p.app.cli import main

    assert main(["resume", "--home", str(tmp_path), "--bot", "random"]) == 2


# -- LAN discovery and experience ---------------------------------------------------------


def seat_options(home: Path, name: str, seed: int) -> SeatOptions:
    return SeatOptions(
        name=name, home=Home(home), bot="random", seed=seed, bind="127.0.0.1", quiet=False,
        timing_log=None, bot_deadline=10.0,
    )  # fmt: skip


async def test_join_finds_a_beaconing_host_and_every_peer_records_its_xp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The host's two bot processes find the package wherever the tests run from.
    monkeypatch.setenv("PYTHONPATH", source_pythonpath())
    beacon = ("127.0.0.1", free_udp_port())
    rules = rule_set("classic", target=101)
    host_home, joiner_home = tmp_path / "host", tmp_path / "joiner"
    statuses: dict[str, int] = {}
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "1"

    async def host() -> None:
        options = seat_options(host_home, "Hostess", 1)
        statuses["host"] = await host_game(options, rules, 0, 2, beacon=beacon, fill="random")

    async def join() -> None:
        options = seat_options(joiner_home, "Finder", 2)
        statuses["join"] = await join_game(options, None, beacon=beacon, ask=ask)

    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(join)
    out = capsys.readouterr().out
    assert statuses == {"host": 0, "join": 0}, out
    # The joiner heard the table (one, with the one seat the bots leave free) and chose it.
    assert asked == ["Table to join (1-1, Enter to give up): "]
    assert re.search(r"1\s+Hostess\s+classic\s+101\s+1\s+127\.0\.0\.1:\d+", out), out
    assert "All 3 peers agree" in out  # the host and its two bot processes
    assert len(re.findall(r"^\+\d+ XP, level \d+$", out, re.MULTILINE)) == 2, out
    results = [json.loads(line[len("RESULT ") :]) for line in out.splitlines()
               if line.startswith("RESULT ")]  # fmt: skip
    assert len(results) == 2 and all(r["ok"] and r["xp"] >= 15 for r in results)
    # The host's profile holds the game and its XP; so do the joiner's and each bot's.
    host_key = Identity.load_or_create(host_home).public_key_bytes
    for home in (host_home, joiner_home, host_home / "bots" / "2", host_home / "bots" / "3"):
        with open_db(Home(home).profile_db) as conn:
            assert [p.games for p in all_players(conn)] == [1, 1, 1, 1], home
            host_stats = find_players(conn, fingerprint(host_key))
        assert len(host_stats) == 1 and host_stats[0].xp >= 15
    by_seat = {r["seat"]: r["xp"] for r in results}
    assert host_stats[0].xp == by_seat[0]


async def test_join_without_an_address_says_when_no_table_is_heard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beacon = ("127.0.0.1", free_udp_port())
    options = seat_options(tmp_path, "Alone", 1)
    with trio.fail_after(10):
        status = await join_game(options, None, beacon=beacon, listen=0.3, ask=lambda _: "1")
    assert status == 2
    assert "No open table was heard" in capsys.readouterr().err


def test_join_and_host_flags(tmp_path: Path) -> None:
    from belote_p2p.app.cli import main

    assert main(["join", "--home", str(tmp_path), "--bot", "random", "--name", "J",
                 "--beacon-address", "not-an-ip:7778"]) == 2  # fmt: skip
    assert main(["host", "--home", str(tmp_path), "--name", "H", "--bots", "3",
                 "--beacon-address", "host.example"]) == 2  # fmt: skip


async def test_a_bot_process_killed_mid_game_leaves_its_open_hand_to_its_partner(
    tmp_path: Path,
) -> None:
    """``host --bots 3``: the process of seat 1 is killed (SIGKILL) once the cards are
    dealt and never comes back; the others sign it gone after its deadline and grace, its
    partner (seat 3) plays its open hand, the game goes to its end, the host exits 0 and
    says the three live peers agree, and its record verifies."""
    home = tmp_path / "home"
    args = cli_argv(
        "host", "--bot", "random", "--bots", "3", "--name", "Hana", "--home", home,
        "--no-beacon", "--port", "0", "--target", "301", "--person-deadline", "2",
        "--grace", "2", "--plain", "--no-watch",
    )  # fmt: skip
    with trio.fail_after(240):
        async with trio.open_nursery() as nursery:
            host = await start(nursery, "host", args, tmp_path)
            await until_seen(host, "Dealing.")
            info = json.loads((Home(home).bot(1).root / PROCESS_FILE).read_text())
            os.kill(int(info["pid"]), signal.SIGKILL)
            status = await host.process.wait()
    out = host.output
    assert status == 0, out + (tmp_path / "host.stderr").read_text()
    assert "Bot1 left; Bot3 plays Bot1's open hand." in out, out
    result = parse_result(out)
    assert result is not None and result["ok"] and result["left"] == 1
    assert max(result["scores"]) >= 301
    assert "All 3 live peers agree" in out, out
    done = await run_cli(tmp_path, "verify", result["transcript"], timeout=120)
    verdict = done.stdout.decode()
    assert done.returncode == 0 and verdict.startswith("OK"), verdict
    assert "left in round" in verdict and "played its open hand" in verdict, verdict
