"""Invitation codes, seats of one's choice, seats that do not listen, and the lobby, beacons
and the host's port over IPv6."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
import trio
from helpers import HEARING, free_udp_port, has_ipv6_loopback, identities

from belote_p2p.app.home import Home
from belote_p2p.app.join import join_game
from belote_p2p.app.seat import SeatOptions
from belote_p2p.game.rules import rule_set
from belote_p2p.net.discovery import Beacon, discover, send_beacons
from belote_p2p.net.invite import Invitation, InvitationError, is_invitation
from belote_p2p.net.lobby import (
    JoinRefused,
    JoinRequest,
    Lobby,
    LobbyError,
    host_lobby,
    join_table,
    parse_answer,
    table_message,
)
from belote_p2p.net.relay import HostPort
from belote_p2p.net.transport import FramedStream
from belote_p2p.protocol.wire import decode, encode

IDS = identities(41, 6)
KEYS = [i.public_key_bytes for i in IDS]
RULES = rule_set("classic", target=301)


needs_ipv6 = pytest.mark.skipif(
    not has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)"
)


# -- invitations ------------------------------------------------------------------------------


def test_an_invitation_round_trips_through_its_code() -> None:
    invitation = Invitation.of(
        bytes(range(16)), KEYS[0], ("203.0.113.5:7777", "[2001:db8::5]:7777"), "198.51.100.9:7779"
    )
    code = invitation.encode()
    assert code.startswith("belote2") and code.isalnum() and code == code.lower()
    assert is_invitation(code) and not is_invitation("203.0.113.5:7777")
    assert Invitation.decode(code) == invitation
    # Upper case, spaces and line breaks (a code pasted from a mail) read the same.
    spread = " ".join(code[i : i + 40] for i in range(0, len(code), 40)).upper()
    assert Invitation.decode(spread) == invitation
    plain = Invitation.of(bytes(16), KEYS[1], ("127.0.0.1:7777",))
    assert Invitation.decode(plain.encode()).relay is None
    assert len(plain.encode()) < 70


def test_a_code_is_short_and_the_first_format_still_reads() -> None:
    both = Invitation.of(bytes(16), KEYS[0], ("192.168.1.20:7777", "[2001:db8::20]:7777"))
    assert len(both.encode()) < 100
    named = Invitation.of(bytes(16), KEYS[0], ("example.org:7777", "[fe80::1%eth0]:7777"))
    assert Invitation.decode(named.encode()) == named
    assert named.names_key(KEYS[0]) and not named.names_key(KEYS[1])
    assert named.names_table(bytes(16)) and not named.names_table(bytes(range(16)))
    assert named.fingerprint == IDS[0].fingerprint
    # A belote1 code (msgpack of the whole key and table id) made by an earlier version.
    body = encode({"a": ["127.0.0.1:7777"], "k": KEYS[0], "r": "", "t": bytes(16), "v": 1})
    old = "belote1" + base64.b32encode(body + hashlib.sha256(body).digest()[:4]).decode()
    assert Invitation.decode(old.rstrip("=").lower()) == Invitation.of(
        bytes(16), KEYS[0], ("127.0.0.1:7777",)
    )


def test_a_damaged_code_is_refused_with_a_reason() -> None:
    code = Invitation.of(bytes(16), KEYS[0], ("127.0.0.1:7777",)).encode()
    typo = code[:20] + ("a" if code[20] != "a" else "b") + code[21:]
    with pytest.raises(InvitationError, match="damaged"):
        Invitation.decode(typo)
    with pytest.raises(InvitationError, match="starts with"):
        Invitation.decode("hello")
    with pytest.raises(InvitationError, match="damaged"):
        Invitation.decode(code[:-5])
    with pytest.raises(InvitationError):
        Invitation.of(bytes(16), KEYS[0], ())
    with pytest.raises(InvitationError, match="bad address"):
        Invitation.of(bytes(16), KEYS[0], ("no port here",))


def options(home: Path, name: str, *, listen: bool = True) -> SeatOptions:
    return SeatOptions(
        name=name, home=Home(home), bot="random", seed=1, bind="127.0.0.1", quiet=False,
        timing_log=None, bot_deadline=10.0, listen=listen,
    )  # fmt: skip


async def test_a_joiner_refuses_a_host_whose_key_is_not_the_invitations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Someone took over the address of the invitation and opened a table of its own: the
    joiner sees the table is proposed by another key and leaves before signing anything."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    impostor = IDS[5]
    lobby = Lobby(JoinRequest("Alice", impostor.public_key_bytes, port), RULES)
    real_host = KEYS[0]
    code = Invitation.of(lobby.table_id, real_host, (f"127.0.0.1:{port}",)).encode()
    statuses: list[int] = []
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host_lobby, lobby, [listener], impostor)

            async def victim() -> None:
                statuses.append(await join_game(options(tmp_path / "v", "Bob"), code))

            nursery.start_soon(victim)
            for k in (2, 3):
                nursery.start_soon(join_table, "127.0.0.1", port, f"P{k}", IDS[k], 6000 + k)
    assert statuses == [1]
    err = capsys.readouterr().err
    assert "is not the one of the invitation" in err
    assert "Someone may be posing as the host; not joining." in err
    assert f"its key is {impostor.fingerprint}" in err
    # Nothing was signed: no transcript was started.
    assert not (tmp_path / "v" / "games").exists() or not any((tmp_path / "v" / "games").iterdir())


async def test_a_joiner_refuses_a_table_a_beacon_listed_under_another_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A beacon lists a real host's table (its key, its table id) at the sender's own
    lobby: the joiner that chose it sees the table proposed there by another key."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    impostor = IDS[5]
    lobby = Lobby(JoinRequest("Alice", impostor.public_key_bytes, port), RULES)
    spoof = Beacon("Alice", "classic", 501, 3, port, lobby.table_id, KEYS[0])
    udp = free_udp_port()
    statuses: list[int] = []
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host_lobby, lobby, [listener], impostor)
            await nursery.start(lambda **kw: send_beacons(
                lambda: spoof, address=("127.0.0.1", udp), interval=0.05, **kw))  # fmt: skip

            async def victim() -> None:
                statuses.append(await join_game(
                    options(tmp_path / "v", "Bob"), None, beacon=("127.0.0.1", udp),
                    listen=HEARING, ask=lambda _: "1",
                ))  # fmt: skip
                nursery.cancel_scope.cancel()

            nursery.start_soon(victim)
            for k in (2, 3):
                nursery.start_soon(join_table, "127.0.0.1", port, f"P{k}", IDS[k], 6000 + k)
    assert statuses == [1]
    err = capsys.readouterr().err
    assert "is not the one of the beacon" in err and f"its key is {impostor.fingerprint}" in err


# -- seats of one's choice --------------------------------------------------------------------


def lobby_of(*requests: JoinRequest) -> Lobby:
    lobby = Lobby(JoinRequest("Alice", KEYS[0], 7000), RULES)
    for r in requests:
        lobby.admit(r, "10.0.0.9", "10.0.0.1")
    return lobby


def request(k: int, **kw: object) -> JoinRequest:
    return JoinRequest(["", "Bob", "Carol", "Dan", "Eve"][k], KEYS[k], 6000 + k, **kw)  # type: ignore[arg-type]


def seats_of(lobby: Lobby) -> dict[str, int]:
    return {r.name: s for s, r in lobby.seating()}


def test_two_joiners_who_ask_to_be_partners_sit_opposite() -> None:
    lobby = lobby_of(request(1, partner="Dan"), request(2), request(3, partner="bob"))
    assert seats_of(lobby) == {"Bob": 1, "Carol": 2, "Dan": 3}
    # The partner arrives second, then one more: they still end up at 1 and 3.
    lobby = lobby_of(request(2), request(1, partner="Dan"), request(3))
    assert seats_of(lobby) == {"Carol": 2, "Bob": 1, "Dan": 3}
    definition = lobby.definition()
    assert [s.name for s in definition.seats] == ["Alice", "Bob", "Carol", "Dan"]
    assert definition.seats[3].address == "10.0.0.9:6003"


def test_the_hosts_partner_sits_at_seat_2_and_a_seat_asked_for_is_given() -> None:
    lobby = lobby_of(request(1), request(2), request(3, partner="Alice"))
    assert seats_of(lobby)["Dan"] == 2
    lobby = lobby_of(request(1, seat=3), request(2), request(3))
    assert seats_of(lobby) == {"Bob": 3, "Carol": 1, "Dan": 2}


def test_a_seat_already_held_is_refused_clearly() -> None:
    lobby = lobby_of(request(1, seat=2))
    with pytest.raises(JoinRefused, match="seat 2 is taken: Bob asked for it first"):
        lobby.admit(request(2, seat=2), "10.0.0.9", "10.0.0.1")
    lobby = lobby_of(request(1, partner="Alice"))
    with pytest.raises(JoinRefused, match="seat 2 is taken: another joiner is the host's"):
        lobby.admit(request(2, seat=2), "10.0.0.9", "10.0.0.1")
    # Bob keeps seat 3 free for his partner: Carol cannot have it, nor keep one for hers.
    lobby = lobby_of(request(1, partner="Zoe"))
    with pytest.raises(JoinRefused, match="seat 3 is taken"):
        lobby.admit(request(2, seat=3), "10.0.0.9", "10.0.0.1")
    with pytest.raises(JoinRefused, match="no seat is left opposite Yan"):
        lobby.admit(request(2, partner="Yan"), "10.0.0.9", "10.0.0.1")
    # A refused joiner left no trace: the table still fills, and Bob's partner, absent when
    # it is full, is not waited for.
    lobby.admit(request(2), "10.0.0.9", "10.0.0.1")
    lobby.admit(request(3), "10.0.0.9", "10.0.0.1")
    assert lobby.full and seats_of(lobby) == {"Bob": 1, "Carol": 2, "Dan": 3}


def test_the_host_reorders_or_swaps_the_seats_before_signing() -> None:
    lobby = lobby_of(request(1), request(2), request(3))
    lobby.reorder(["dan", "Bob", "Carol"])
    assert seats_of(lobby) == {"Dan": 1, "Bob": 2, "Carol": 3}
    lobby.swap(1, 3)
    assert seats_of(lobby) == {"Carol": 1, "Bob": 2, "Dan": 3}
    assert [s.name for s in lobby.definition().seats] == ["Alice", "Carol", "Bob", "Dan"]
    with pytest.raises(JoinRefused, match="not a joiner"):
        lobby.reorder(["Bob", "Bob", "Carol"])
    with pytest.raises(JoinRefused):
        lobby.swap(0, 1)


def test_join_requests_carry_seat_partner_and_no_port() -> None:
    r = JoinRequest("Bob", KEYS[1], 0, 3, "Dan")
    assert JoinRequest.from_wire(r.to_wire()) == r
    plain = JoinRequest("Bob", KEYS[1], 5).to_wire()
    assert set(plain) == {"type", "version", "name", "key", "port"}
    with pytest.raises(JoinRefused, match="seat 1, 2 or 3"):
        JoinRequest.from_wire({**r.to_wire(), "seat": 0})
    with pytest.raises(JoinRefused):
        JoinRequest.from_wire({**r.to_wire(), "extra": 1})


def test_a_seat_that_does_not_listen_has_no_address() -> None:
    lobby = lobby_of(JoinRequest("Bob", KEYS[1], 0), request(2), request(3))
    definition = lobby.definition()
    seat = next(i for i, s in enumerate(definition.seats) if s.name == "Bob")
    assert definition.seats[seat].address == ""
    proposal = definition.propose(IDS[0])
    answer = parse_answer(table_message(definition, proposal, "198.51.100.9:7779"), KEYS[1], 0)
    assert answer.seat == seat and answer.relay == "198.51.100.9:7779"
    with pytest.raises(LobbyError, match="we do not listen"):
        other = next(i for i, s in enumerate(definition.seats) if s.name == "Carol")
        parse_answer(table_message(definition, proposal), definition.seats[other].key, 0)
    with pytest.raises(LobbyError, match="bad relay"):
        parse_answer(table_message(definition, proposal, "nowhere"), KEYS[1], 0)


async def test_joiners_choose_their_seats_over_the_lobby() -> None:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    lobby = Lobby(JoinRequest("Alice", KEYS[0], port), RULES)
    got: dict[str, int] = {}
    seated = trio.Event()

    async def join(k: int, **kw: object) -> None:
        answer = await join_table("127.0.0.1", port, request(k).name, IDS[k], 6000 + k, **kw)  # type: ignore[arg-type]
        got[request(k).name] = answer.seat

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: host_lobby(lobby, [listener], IDS[0], on_join=lambda s, r: seated.set())
            )
            nursery.start_soon(lambda: join(1, partner="Dan"))
            await seated.wait()
            with pytest.raises(JoinRefused, match="seat 3 is taken"):
                await join_table("127.0.0.1", port, "Eve", IDS[4], 6004, seat=3)
            nursery.start_soon(lambda: join(2))
            nursery.start_soon(lambda: join(3, partner="Bob"))
    assert {got["Bob"], got["Dan"]} == {1, 3} and got["Carol"] == 2


# -- IPv6 -------------------------------------------------------------------------------------


@needs_ipv6
async def test_the_lobby_and_the_hosts_port_over_ipv6() -> None:
    """The host's one port on [::1]: a join goes to the lobby, the table's addresses are
    IPv6, and a relay client on the same port is answered by the relay."""
    (listener,) = await trio.open_tcp_listeners(0, host="::1")
    port = listener.socket.getsockname()[1]
    lobby = Lobby(JoinRequest("Alice", KEYS[0], port), RULES)
    service = HostPort()
    answers = []
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(service.serve, [listener])

            def hand_over(handler: object) -> None:
                service.lobby = handler  # type: ignore[assignment]

            nursery.start_soon(lambda: host_lobby(lobby, [], IDS[0], hand_over=hand_over))
            async with trio.open_nursery() as joiners:
                for k in (1, 2, 3):

                    async def one(k: int = k) -> None:
                        answers.append(await join_table("::1", port, f"P{k}", IDS[k], 6000 + k))

                    joiners.start_soon(one)
            stream = await trio.open_tcp_stream("::1", port)
            async with FramedStream(stream) as conn:
                await conn.send(encode({"type": "relay-hello", "version": 1}))
                assert decode(await conn.receive())["type"] == "relay-challenge"
            nursery.cancel_scope.cancel()
    definition = answers[0].definition
    assert definition.seats[0].address == f"[::1]:{port}"
    assert all(s.address.startswith("[::1]:") for s in definition.seats)


@needs_ipv6
async def test_beacons_are_heard_over_ipv6() -> None:
    port = free_udp_port()
    beacon = Beacon("Alice", "classic", 501, 2, 7777, bytes(16), bytes(32))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(lambda **kw: send_beacons(lambda: beacon, address=("::1", port),
                                                          interval=0.05, **kw))  # fmt: skip
            ads = await discover(address=("::1", port), duration=HEARING)
            nursery.cancel_scope.cancel()
    assert [ad.beacon for ad in ads] == [beacon]
    assert ads[0].host == "::1" and ads[0].address == "[::1]:7777"
