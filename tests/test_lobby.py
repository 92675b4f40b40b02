"""The lobby's proof of key (PROTOCOL.md §6.0) and the host's say over who sits: made-up
keys, signatures over another nonce or for another lobby, refused; the host refusing and
replacing a joiner, by its prompt, its API or ``--seat-order``; ``join`` with no address."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
import trio
from helpers import (
    HEARING,
    LOOPBACK,
    address_of,
    cli_argv,
    free_udp_port,
    identities,
    open_listeners,
    source_pythonpath,
)
from terminal import Terminal, at_decision, environment

from belote_p2p import i18n
from belote_p2p.app.home import Home
from belote_p2p.app.host import prompt_seats
from belote_p2p.app.join import entry_problem, join_failure_text, join_game, read_entry
from belote_p2p.app.lan import DEFAULT_BEACON_ADDRESSES, beacon_addresses
from belote_p2p.app.seat import SeatOptions
from belote_p2p.game.rules import rule_set
from belote_p2p.net.discovery import Beacon, send_beacons
from belote_p2p.net.invite import Invitation
from belote_p2p.net.lobby import (
    LOBBY_VERSION,
    PROOF_LABEL,
    TABLE_CLOSED,
    JoinChallenge,
    JoinRefused,
    JoinRequest,
    KeyNotProven,
    Lobby,
    LobbyAnswer,
    LobbyClosed,
    LobbyError,
    host_lobby,
    join_table,
    parse_proof,
    proof_statement,
    prove,
)
from belote_p2p.net.transport import FramedStream
from belote_p2p.protocol.identity import Identity, fingerprint
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.wire import decode, encode

IDS = identities(61, 8)
KEYS = [i.public_key_bytes for i in IDS]
RULES = rule_set("classic", target=301)
NAMES = ["Alice", "Bob", "Carol", "Dan", "Eve", "Fay", "Gus", "Hal"]
FAR, HERE = "10.0.0.9", "10.0.0.1"


def new_lobby(rules: str = "classic", port: int = 7000) -> Lobby:
    return Lobby(JoinRequest("Alice", KEYS[0], port), rule_set(rules))


def request(k: int, **kw: object) -> JoinRequest:
    return JoinRequest(NAMES[k], KEYS[k], 6000 + k, **kw)  # type: ignore[arg-type]


def proof_of(identity: Identity, req: JoinRequest, challenge: JoinChallenge) -> bytes:
    """The signature of a join-proof frame, as the host reads it."""
    sig = parse_proof(decode(prove(identity, req, challenge)))
    assert isinstance(sig, bytes)
    return sig


def honest_join(lobby: Lobby, k: int, **kw: object) -> int:
    req = request(k, **kw)
    challenge = lobby.challenge()
    return lobby.join(
        req, FAR, HERE, nonce=challenge.nonce, signature=proof_of(IDS[k], req, challenge)
    )


# -- the proof of key, without sockets -----------------------------------------------------


def test_an_honest_joiner_proves_its_key_and_is_seated() -> None:
    lobby = new_lobby()
    assert honest_join(lobby, 1) == 1
    assert [r.key for r in lobby.joined] == [KEYS[1]]


def test_a_made_up_key_is_refused_and_takes_no_seat() -> None:
    lobby = new_lobby()
    made_up = JoinRequest("Mallory", bytes(range(32)), 6009)
    challenge = lobby.challenge()
    # Whoever announces a key it does not hold can only sign with another one.
    forged = IDS[7].sign(proof_statement(lobby.table_id, challenge.nonce, made_up))
    with pytest.raises(KeyNotProven, match="not signed by the key it announces"):
        lobby.join(made_up, FAR, HERE, nonce=challenge.nonce, signature=forged)
    # Someone else's real key, with a signature of the right length but of nothing.
    stolen = request(2)
    challenge = lobby.challenge()
    with pytest.raises(KeyNotProven):
        lobby.join(stolen, FAR, HERE, nonce=challenge.nonce, signature=bytes(64))
    assert lobby.joined == ()
    assert honest_join(lobby, 2) == 1  # the key's holder is not locked out


def test_a_signature_over_another_nonce_is_refused_and_a_nonce_serves_once() -> None:
    lobby = new_lobby()
    req = request(1)
    first, second = lobby.challenge(), lobby.challenge()
    with pytest.raises(KeyNotProven):
        lobby.join(req, FAR, HERE, nonce=first.nonce, signature=proof_of(IDS[1], req, second))
    # The first nonce was used up by that try: its honest proof now comes too late.
    with pytest.raises(KeyNotProven, match="not one this lobby gave"):
        lobby.join(req, FAR, HERE, nonce=first.nonce, signature=proof_of(IDS[1], req, first))
    # A nonce the lobby never gave, signed honestly, proves nothing either.
    made = JoinChallenge(lobby.table_id, bytes(32))
    with pytest.raises(KeyNotProven, match="not one this lobby gave"):
        lobby.join(req, FAR, HERE, nonce=made.nonce, signature=proof_of(IDS[1], req, made))
    # A withdrawn challenge (its connection ended) is no longer good.
    lobby.withdraw(second)
    with pytest.raises(KeyNotProven):
        lobby.join(req, FAR, HERE, nonce=second.nonce, signature=proof_of(IDS[1], req, second))
    assert lobby.joined == ()
    assert honest_join(lobby, 1) == 1


def test_a_proof_replayed_from_another_lobby_is_refused() -> None:
    ours, theirs = new_lobby(), new_lobby()
    req = request(1)
    seen = theirs.challenge()
    replayed = proof_of(IDS[1], req, seen)
    theirs.join(req, FAR, HERE, nonce=seen.nonce, signature=replayed)  # good where it was made
    challenge = ours.challenge()
    with pytest.raises(KeyNotProven):
        ours.join(req, FAR, HERE, nonce=challenge.nonce, signature=replayed)
    # Even given the very nonce the other lobby chose, the table id differs.
    ours._nonces.add(seen.nonce)
    with pytest.raises(KeyNotProven):
        ours.join(req, FAR, HERE, nonce=seen.nonce, signature=replayed)
    assert ours.joined == ()


def test_the_proof_covers_the_request_as_sent() -> None:
    lobby = new_lobby()
    challenge = lobby.challenge()
    sig = proof_of(IDS[1], request(1), challenge)
    with pytest.raises(KeyNotProven):  # the seat asked for changed on the way
        lobby.join(request(1, seat=3), FAR, HERE, nonce=challenge.nonce, signature=sig)
    with pytest.raises(ValueError):
        prove(IDS[2], request(1), challenge)  # we prove only our own key


def test_the_signed_statement_is_the_label_and_one_canonical_map() -> None:
    req = request(1, partner="Dan")
    table, nonce = bytes(range(16)), bytes([7]) * 32
    statement = proof_statement(table, nonce, req)
    assert PROOF_LABEL == b"belote-p2p/join-proof/v1\x00"
    assert statement.startswith(PROOF_LABEL)
    assert decode(statement[len(PROOF_LABEL) :]) == {
        "join": {
            "type": "join",
            "version": LOBBY_VERSION,
            "name": "Bob",
            "key": KEYS[1],
            "port": 6001,
            "partner": "Dan",
        },
        "nonce": nonce,
        "table": table,
    }
    assert JoinRequest.from_wire(req.to_wire()) == req
    with pytest.raises(JoinRefused, match="version 2"):
        JoinRequest.from_wire({k: v for k, v in req.to_wire().items() if k != "version"})


# -- the host's say, without sockets ----------------------------------------------------------


def seats_of(lobby: Lobby) -> dict[str, int]:
    return {r.name: s for s, r in lobby.seating()}


def test_a_refused_joiner_leaves_its_seat_to_the_next_and_may_not_return() -> None:
    lobby = new_lobby()
    for k in (1, 2, 3):
        honest_join(lobby, k)
    lobby.swap(1, 3)
    assert seats_of(lobby) == {"Dan": 1, "Carol": 2, "Bob": 3}
    assert lobby.refuse(2).name == "Carol"
    assert not lobby.full and lobby.missing == 1
    with pytest.raises(JoinRefused, match="did not seat you"):
        honest_join(lobby, 2)
    assert honest_join(lobby, 4) == 2  # Eve takes Carol's seat; the others keep theirs
    assert seats_of(lobby) == {"Dan": 1, "Eve": 2, "Bob": 3}
    with pytest.raises(JoinRefused, match="no joiner"):
        lobby.refuse(0)


def test_a_joiner_who_leaves_a_full_table_frees_only_its_seat() -> None:
    lobby = new_lobby()
    for k in (1, 2, 3):
        honest_join(lobby, k)
    lobby.leave(KEYS[1])
    assert honest_join(lobby, 5) == 1
    assert seats_of(lobby) == {"Fay": 1, "Carol": 2, "Dan": 3}


def test_the_seat_order_seats_only_the_players_it_names() -> None:
    lobby = new_lobby()
    lobby.expect(["Dan", fingerprint(KEYS[1]), "carol"])
    with pytest.raises(JoinRefused, match="seats other players"):
        honest_join(lobby, 4)
    honest_join(lobby, 2)
    with pytest.raises(JoinRefused, match="seats other players"):
        lobby.admit(JoinRequest("Carol", KEYS[5], 6005), FAR, HERE)  # Carol is in already
    # A stranger named like another's fingerprint does not take that one's seat.
    impostor = JoinRequest(fingerprint(KEYS[1]), KEYS[6], 6006)
    with pytest.raises(JoinRefused):
        lobby.admit(impostor, FAR, HERE)
    honest_join(lobby, 1)
    honest_join(lobby, 3)
    lobby.reorder(["Dan", fingerprint(KEYS[1]), "carol"])
    assert seats_of(lobby) == {"Dan": 1, "Bob": 2, "Carol": 3}


def test_seats_count_the_table_at_three_and_two() -> None:
    three = new_lobby("three-handed")
    assert honest_join(three, 1) == 1 and honest_join(three, 2) == 2 and three.full
    three.refuse(1)
    assert honest_join(three, 3) == 1
    assert [s.name for s in three.definition().seats] == ["Alice", "Dan", "Carol"]
    two = new_lobby("two-handed")
    honest_join(two, 1)
    two.refuse(1)
    assert two.missing == 1 and honest_join(two, 2) == 1


# -- over loopback ------------------------------------------------------------------------------


async def lobby_port() -> tuple[trio.SocketListener, int]:
    (listener,) = await open_listeners(1)
    return listener, address_of(listener)[1]


class ForgedJoins:
    """Made-up keys that come first: each asks, takes its challenge and holds it while the
    real joiners come, then signs with a key that is not the one it announced."""

    def __init__(self, count: int, signer: Identity) -> None:
        self.count, self.signer = count, signer
        self.holding = 0
        self.all_holding = trio.Event()
        self.go = trio.Event()
        self.replies: dict[int, object] = {}

    async def run(self, port: int, k: int) -> None:
        stream = await trio.open_tcp_stream(LOOPBACK, port)
        async with FramedStream(stream) as conn:
            fake = JoinRequest(f"Fake{k}", bytes([0xF0 + k]) * 32, 0)
            await conn.send(encode(fake.to_wire()))
            challenge = JoinChallenge.from_wire(decode(await conn.receive()))
            self.holding += 1
            if self.holding == self.count:
                self.all_holding.set()
            await self.go.wait()
            sig = self.signer.sign(proof_statement(challenge.table_id, challenge.nonce, fake))
            await conn.send(encode({"type": "join-proof", "sig": sig}))
            self.replies[k] = decode(await conn.receive())


async def test_made_up_keys_that_come_first_are_refused_and_the_real_joiners_seated() -> None:
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    forged = ForgedJoins(3, IDS[7])
    got: dict[int, object] = {}
    hosted: list[tuple[TableDefinition, bytes]] = []

    async def host() -> None:
        hosted.append(await host_lobby(lobby, [listener], IDS[0], on_join=seated))

    def seated(seat: int, req: JoinRequest) -> None:
        if len(lobby.joined) == 3:
            forged.go.set()  # the real joiners are in: the made-up keys answer, too late

    async def real(k: int) -> None:
        got[k] = await join_table(LOOPBACK, port, NAMES[k], IDS[k], 6000 + k)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            for k in (1, 2, 3):
                nursery.start_soon(forged.run, port, k)
            await forged.all_holding.wait()
            for k in (1, 2, 3):
                nursery.start_soon(real, k)
    definition, _ = hosted[0]
    assert sorted(s.key for s in definition.seats[1:]) == sorted(KEYS[1:4])
    for k in (1, 2, 3):
        answer = got[k]
        assert isinstance(answer, LobbyAnswer) and answer.definition == definition
        reply = forged.replies[k]
        assert isinstance(reply, dict) and reply["type"] == "error", reply
        assert "not signed by the key it announces" in reply["reason"]


async def test_made_up_keys_are_refused_even_when_the_table_waits_for_them() -> None:
    """The same made-up keys, answering while seats are free: refused, never seated."""
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    forged = ForgedJoins(3, IDS[7])
    hosted: list[tuple[TableDefinition, bytes]] = []

    async def host() -> None:
        hosted.append(await host_lobby(lobby, [listener], IDS[0]))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            async with trio.open_nursery() as fakes:
                for k in (1, 2, 3):
                    fakes.start_soon(forged.run, port, k)
                await forged.all_holding.wait()
                forged.go.set()
            assert lobby.joined == ()
            for k in (1, 2, 3):
                nursery.start_soon(partial(join_table, LOOPBACK, port, NAMES[k], IDS[k], 0))
    assert sorted(s.key for s in hosted[0][0].seats[1:]) == sorted(KEYS[1:4])
    assert all(r["type"] == "error" for r in forged.replies.values())  # type: ignore[index]


async def test_a_malformed_proof_is_refused_in_words() -> None:
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    replies: list[object] = []

    async def try_proof(payload: bytes) -> None:
        stream = await trio.open_tcp_stream(LOOPBACK, port)
        async with FramedStream(stream) as conn:
            await conn.send(encode(request(1).to_wire()))
            JoinChallenge.from_wire(decode(await conn.receive()))
            await conn.send(payload)
            replies.append(decode(await conn.receive()))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(host_lobby, lobby, [listener], IDS[0], wait=600))
            for payload in (
                b"\xc1",
                encode({"type": "join-proof", "sig": b"short"}),
                encode({"type": "join-proof", "sig": bytes(64), "more": 1}),
                encode({"type": "join", "sig": bytes(64)}),
                encode(request(1).to_wire()),
            ):
                await try_proof(payload)
            nursery.cancel_scope.cancel()
    assert [r["type"] for r in replies] == ["error"] * 5  # type: ignore[index]
    assert "a join proof is one canonical msgpack map" in replies[0]["reason"]  # type: ignore[index]
    assert all("join-proof map" in r["reason"] for r in replies[1:])  # type: ignore[index]
    assert lobby.joined == () and not lobby._nonces  # every nonce given was used up


async def test_the_host_refuses_a_joiner_and_the_next_one_takes_its_seat() -> None:
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    refused = trio.Event()
    answers: dict[int, object] = {}
    arranged = 0

    async def arrange(full: Lobby) -> None:
        nonlocal arranged
        arranged += 1
        if arranged == 1:
            assert full.refuse(seats_of(full)["Carol"]).name == "Carol"
            refused.set()

    async def join(k: int) -> None:
        try:
            answers[k] = await join_table(LOOPBACK, port, NAMES[k], IDS[k], 6000 + k)
        except JoinRefused as exc:
            answers[k] = exc

    result: list[tuple[TableDefinition, bytes]] = []
    left: list[str] = []

    async def host() -> None:
        result.append(
            await host_lobby(
                lobby, [listener], IDS[0], arrange=arrange, on_leave=lambda r: left.append(r.name)
            )
        )

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            for k in (1, 2, 3):
                nursery.start_soon(join, k)
            await refused.wait()
            async with trio.open_nursery() as again:
                again.start_soon(join, 2)  # Carol tries again: her key is refused now
            assert isinstance(answers[2], JoinRefused)
            assert "Alice (the host) did not seat you" in str(answers[2])
            nursery.start_soon(join, 4)
    definition, _ = result[0]
    names = [s.name for s in definition.seats]
    assert "Carol" not in names and sorted(names) == ["Alice", "Bob", "Dan", "Eve"]
    assert arranged == 2 and left == []  # refused, not gone by itself
    for k in (1, 3, 4):
        answer = answers[k]
        assert isinstance(answer, LobbyAnswer) and answer.definition == definition


def scripted(answers: list[str]) -> Callable[[str], str]:
    feed: Iterator[str] = iter(answers)

    def ask(prompt: str) -> str:
        assert "refuse N" in prompt
        return next(feed)

    return ask


async def test_the_hosts_prompt_swaps_and_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    lobby = new_lobby()
    for k in (1, 2, 3):
        honest_join(lobby, k)
    await prompt_seats(lobby, scripted(["1 3", "what", "refuse 2"]))
    out = capsys.readouterr().out
    assert "Answer two seats out of 1, 2, 3 to swap, refuse and a seat" in out
    assert f"Refused Carol [{fingerprint(KEYS[2])}]: seat 2 goes to the next joiner." in out
    assert not lobby.full and seats_of(lobby) == {"Dan": 1, "Bob": 3}
    honest_join(lobby, 4)
    await prompt_seats(lobby, scripted([""]))
    assert seats_of(lobby) == {"Dan": 1, "Eve": 2, "Bob": 3}


async def test_a_table_that_does_not_fill_says_what_it_waited_for() -> None:
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    outcome: list[BaseException] = []

    async def host() -> None:
        with pytest.raises(LobbyError) as caught:
            await host_lobby(lobby, [listener], IDS[0], wait=1)
        outcome.append(caught.value)

    async def join() -> None:
        with pytest.raises(JoinRefused) as caught:
            await join_table(LOOPBACK, port, "Bob", IDS[1], 6001)
        outcome.append(caught.value)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(join)
    host_error, join_error = sorted(outcome, key=lambda e: isinstance(e, JoinRefused))
    assert str(host_error) == (
        "the table did not fill within 1 s: it waited for 2 more players (Bob joined)"
    )
    assert str(join_error) == "the table did not fill within 1 s"


async def test_a_host_closes_its_lobby_and_every_joiner_hears_why() -> None:
    """Stop hosting: the joiners seated so far hear the table is closed (and say so in
    their reader's words), the host's wait ends with :class:`LobbyClosed`, the port closes."""
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    closed = trio.Event()
    seated: list[str] = []
    outcome: list[BaseException] = []

    def joined(_seat: int, request: JoinRequest) -> None:
        seated.append(request.name)
        if len(seated) == 2:
            closed.set()  # the host closes its table with two of three joiners in

    async def host() -> None:
        with pytest.raises(LobbyClosed) as caught:
            await host_lobby(lobby, [listener], IDS[0], closed=closed, on_join=joined)
        outcome.append(caught.value)

    async def join(k: int) -> None:
        with pytest.raises(JoinRefused) as caught:
            await join_table(LOOPBACK, port, NAMES[k], IDS[k], 6000 + k)
        outcome.append(caught.value)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(join, 1)
            nursery.start_soon(join, 2)
    assert sorted(seated) == ["Bob", "Carol"]
    refusals = [e for e in outcome if isinstance(e, JoinRefused)]
    assert [e.reason for e in refusals] == [TABLE_CLOSED, TABLE_CLOSED]
    assert join_failure_text(refusals[0]) == "The host closed the table before its game began."
    with i18n.using("fr"):
        assert join_failure_text(refusals[0]).startswith("L'hôte a fermé la table")
    assert [str(e) for e in outcome if isinstance(e, LobbyClosed)] == [
        "you closed the table before its game began"
    ]
    with pytest.raises(OSError):
        await trio.open_tcp_stream(LOOPBACK, port)  # nothing listens there any more


async def test_joiners_of_a_closed_table_hear_why_when_the_port_closes_at_once() -> None:
    """The lobby's connections are accepted by the host's port (``hand_over``), in a nursery
    of its own that the host closes as soon as its lobby says the table is closed: every
    joiner still hears why, not only the connection's end."""
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    closed = trio.Event()
    handler: list[Callable[[trio.abc.Stream], Awaitable[None]] | None] = [None]
    seated: list[str] = []
    refusals: list[JoinRefused] = []

    def joined(_seat: int, request: JoinRequest) -> None:
        seated.append(request.name)
        if len(seated) == 2:
            closed.set()

    async def serve(stream: trio.abc.Stream) -> None:
        if handler[0] is not None:
            await handler[0](stream)

    def hand_over(h: Callable[[trio.abc.Stream], Awaitable[None]] | None) -> None:
        handler[0] = h

    async def join(k: int) -> None:
        with pytest.raises(JoinRefused) as caught:
            await join_table(LOOPBACK, port, NAMES[k], IDS[k], 6000 + k)
        refusals.append(caught.value)

    with trio.fail_after(20):
        async with trio.open_nursery() as joiners, trio.open_nursery() as host_port:
            host_port.start_soon(trio.serve_listeners, serve, [listener])
            joiners.start_soon(join, 1)
            joiners.start_soon(join, 2)
            with pytest.raises(LobbyClosed):
                await host_lobby(lobby, [], IDS[0], closed=closed, on_join=joined,
                                 hand_over=hand_over)  # fmt: skip
            host_port.cancel_scope.cancel()  # the host's port closes at once
    assert [e.reason for e in refusals] == [TABLE_CLOSED, TABLE_CLOSED]


def test_join_takes_an_invitation_code_or_an_address_and_says_what_is_neither() -> None:
    code = Invitation.of(bytes(range(16)), KEYS[0], ("192.168.1.20:7777",)).encode()
    invitation, hosts = read_entry(code)
    assert invitation is not None and hosts == [("192.168.1.20", 7777)]
    assert read_entry(" 10.0.0.2:7000 ") == (None, [("10.0.0.2", 7000)])
    assert read_entry("[::1]:7001") == (None, [("::1", 7001)])
    assert read_entry("table.example.org") == (None, [("table.example.org", 7777)])
    assert entry_problem(code) is None and entry_problem("10.0.0.2") is None
    damaged = code[:-3] + ("A" if code[-3] != "A" else "B") + code[-2:]
    assert entry_problem(damaged) == (
        "This invitation code cannot be read: copy the whole code the host shows "
        "(it starts with belote2)."
    )
    for bad in ("10.0.0.2:port", "my friend's table", "host:99999", "a;b"):
        problem = entry_problem(bad)
        assert problem is not None and problem.startswith("This is neither an invitation"), bad
    with i18n.using("es"):
        assert str(entry_problem("10.0.0.2:port")).startswith("No es ni un código")


# -- join with no address -----------------------------------------------------------------------


def seat_options(home: Path, name: str) -> SeatOptions:
    return SeatOptions(
        name=name, home=Home(home), bot="random", seed=1, bind=LOOPBACK, quiet=False,
        timing_log=None, bot_deadline=10.0,
    )  # fmt: skip


def test_the_default_beacon_addresses_are_a_list_of_addresses() -> None:
    assert beacon_addresses(DEFAULT_BEACON_ADDRESSES) == list(DEFAULT_BEACON_ADDRESSES)
    assert beacon_addresses(("127.0.0.1", 7778)) == [("127.0.0.1", 7778)]
    assert beacon_addresses(None) == []


async def test_join_with_no_address_lists_the_tables_heard_and_checks_the_one_chosen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A beacon names a table id; the lobby at its address opened another: the joiner
    lists the table, the person picks it, and the joiner signs nothing for another table."""
    listener, port = await lobby_port()
    lobby = new_lobby(port=port)
    beacon = (LOOPBACK, free_udp_port())
    advertised = Beacon("Alice", "classic", 301, 3, port, bytes(16), IDS[0].public_key_bytes)
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "1"

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(host_lobby, lobby, [listener], IDS[0]))
            await nursery.start(partial(send_beacons, lambda: advertised, address=beacon,
                                        interval=0.05))  # fmt: skip
            # The default address list shape: a tuple of addresses.
            status = await join_game(
                seat_options(tmp_path, "Finder"), None, beacon=(beacon,), listen=HEARING, ask=ask
            )
            nursery.cancel_scope.cancel()
    captured = capsys.readouterr()
    assert status == 1 and asked == ["Table to join (1-1, Enter to give up): "]
    assert f"1  Alice  classic  301     3     127.0.0.1:{port}" in captured.out
    assert f"opened table {lobby.table_id.hex()}, not {bytes(16).hex()}…; not joining" in (
        captured.err
    )
    assert "Traceback" not in captured.err and lobby.joined == ()


async def test_join_with_no_address_and_no_table_heard_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beacons = ((LOOPBACK, free_udp_port()), (LOOPBACK, free_udp_port()))
    with trio.fail_after(10):
        status = await join_game(
            seat_options(tmp_path, "Alone"), None, beacon=beacons, listen=0.2, ask=scripted([])
        )
    err = capsys.readouterr().err
    assert status == 2 and "No open table was heard on the network in 0.2 s" in err


# -- the host's prompt, at a terminal --------------------------------------------------------


def joiner(tmp_path: Path, name: str, port: int) -> subprocess.Popen[str]:
    """A bot joining the host at ``port``, its output kept."""
    argv = cli_argv("join", f"{LOOPBACK}:{port}", "--name", name, "--bot", "random", "--home",
                    tmp_path / name, "--bind", LOOPBACK, "--quiet", "--no-rematch")  # fmt: skip
    env = dict(os.environ, PYTHONPATH=source_pythonpath())
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip


def test_the_host_refuses_a_joiner_at_its_prompt_and_the_next_one_sits(tmp_path: Path) -> None:
    argv = cli_argv("host", "--variant", "two-handed", "--target", "51", "--port", "0",
                    "--bind", LOOPBACK, "--no-beacon", "--home", tmp_path / "home", "--name",
                    "Ann", "--no-rematch")  # fmt: skip
    term = Terminal(argv, environment(), tmp_path)
    procs: list[subprocess.Popen[str]] = []
    try:
        port = int(term.expect(r"belote-p2p join 127\.0\.0\.1:(\d+)").group(1))
        procs.append(joiner(tmp_path, "Bob", port))
        term.expect(r"Enter to start, two seats to swap \(e\.g\. 1 2\), or refuse N:")
        term.send("refuse 1")
        term.expect(r"Refused Bob \[[0-9a-f-]{19}\]: seat 1 goes to the next joiner\.")
        out, err = procs[0].communicate(timeout=60)
        assert procs[0].returncode == 1
        assert err.strip() == "error: Ann (the host) did not seat you at this table", err
        assert "Traceback" not in out
        procs.append(joiner(tmp_path, "Cy", port))
        term.expect_raw(r"Cy \[[0-9a-f-]{19}\] joined: seat 1\nSeats: 1 Cy\nEnter to start")
        term.send("")
        term.wait(at_decision, "the game's first decision")
        term.interrupt()  # the game has begun: leave it
        term.expect(r"Ctrl-C: resign the game\?")
        term.interrupt()
        assert term.finish() == 0
        assert "Traceback" not in term.plain()
        procs[1].communicate(timeout=60)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        term.close()


def test_a_joiner_hears_it_waits_and_the_host_hears_it_leave(tmp_path: Path) -> None:
    """At the terminal: a joiner is told, once proven, that it waits for the others and the
    host's seating (not a blank screen); when it hangs up, the host is told it left."""
    host = Terminal(
        cli_argv("host", "--target", "51", "--port", "0", "--bind", LOOPBACK, "--no-beacon",
                 "--home", tmp_path / "home", "--name", "Ann", "--no-rematch"),
        environment(), tmp_path,
    )  # fmt: skip
    try:
        port = int(host.expect(r"belote-p2p join 127\.0\.0\.1:(\d+)").group(1))
        bob = Terminal(
            cli_argv("join", f"{LOOPBACK}:{port}", "--name", "Bob", "--home", tmp_path / "Bob",
                     "--bind", LOOPBACK, "--no-rematch"),
            environment(), tmp_path,
        )  # fmt: skip
        try:
            bob.expect(r"In the lobby: waiting for the other players, then the host arranges")
            host.expect(r"Bob \[[0-9a-f-]{19}\] joined: seat 1 \(waiting for 2 more\)")
        finally:
            bob.close()
        host.expect(r"Bob \[[0-9a-f-]{19}\] left the lobby \(waiting for 3 more\)")
    finally:
        host.close()
