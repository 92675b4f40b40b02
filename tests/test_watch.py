"""Watchers: four real peers over loopback, the host's hub on a port of its own, and
watchers (:mod:`belote_p2p.net.watch`, :mod:`belote_p2p.app.watch`) that check and show
the table."""

from __future__ import annotations

import inspect
import json
import random
import signal
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, cast

import pytest
import trio
from cheaters import ForeignCard, OutOfTurn
from cheaters import play as play_cheat
from helpers import (
    LOOPBACK,
    TABLE,
    Net,
    Process,
    SeededSecrets,
    check_agreement,
    cli_argv,
    identities,
    make_table,
    open_listeners,
    run_cli,
    start,
    start_relay_process,
    table_sessions,
)

from belote_p2p.app import watch as watch_app
from belote_p2p.app.tui import TableView
from belote_p2p.app.watch import (
    WATCH_PATIENCE,
    Spectator,
    WatchResult,
    WatchUI,
    drain_watchers,
    ending,
    play_watched,
    run_watch,
)
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.invite import Invitation, InvitationError
from belote_p2p.net.peer import PeerError, PeerResult, run_peer
from belote_p2p.net.relay import NOT_READING, WATCH_RELAY_QUEUE, HostPort, RelayService
from belote_p2p.net.watch import WatchHub, open_watch, read_watch_code, watch_code
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol.events import ActionTaken, Event
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import PAIRED, watch_key, watch_message
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.watch import (
    WatchError,
    WatchRefused,
    end_reason,
    hello_message,
    parse_hello,
    parse_table,
)
from belote_p2p.protocol.wire import Envelope, encode, frame

TIMEOUT = 60
LIVE = (Phase.TAKE_FIRST, Phase.TAKE_SECOND, Phase.AUCTION, Phase.PLAY)
STUCK_RECEIVE_BUFFER = 4096
"""The kernel receive buffer of a watcher that stops reading (small: the backlog shows soon)."""

Step = Callable[[Sequence[Envelope]], None]


async def serve_hub(nursery: trio.Nursery, hub: WatchHub, port: int = 0) -> tuple[HostPort, int]:
    """A host's port on loopback whose watch connections go to ``hub``."""
    service = HostPort()
    service.watch = hub.handle
    listeners = await trio.open_tcp_listeners(port, host=LOOPBACK)
    await nursery.start(service.serve, listeners)
    return service, listeners[0].socket.getsockname()[1]


def code_for(definition: TableDefinition, port: int) -> Invitation:
    """The table's watch code, read back as a watcher reads it."""
    invitation = Invitation.of(definition.table_id, definition.host_key, (f"{LOOPBACK}:{port}",))
    return read_watch_code(watch_code(invitation))


async def play_game(
    tmp_path: Path,
    definition: TableDefinition,
    ids: list,  # type: ignore[type-arg]
    listeners: list[trio.SocketListener],
    host_step: Step,
) -> list[PeerResult]:
    """The four peers play to the end (random bots); seat 0 feeds ``host_step``."""
    results: dict[int, PeerResult] = {}

    async def one(seat: int) -> None:
        results[seat] = await run_peer(
            definition, seat, ids[seat], BotPlayer("random", seed=seat),
            transcript=tmp_path / f"seat{seat}.transcript", listeners=[listeners[seat]],
            secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
            proposal=definition.propose(ids[0]),
            on_step=host_step if seat == 0 else None,
        )  # fmt: skip

    async with trio.open_nursery() as nursery:
        for seat in range(4):
            nursery.start_soon(one, seat)
    ordered = [results[s] for s in range(4)]
    check_agreement(ordered)
    return ordered


def public(state: State) -> tuple[object, ...]:
    """What anybody may know of ``state``: seat 0's observation without its hand."""
    o = observe(state, 0)
    return (*o[:5], *o[6:])


class Seen:
    """What one watcher saw of the table ``definition``: the public state after each
    envelope and each action, its rendered table after each envelope (a watcher's view),
    and how often its deck was checked."""

    def __init__(self, definition: TableDefinition) -> None:
        self.states: list[tuple[object, ...]] = []
        self.actions: list[tuple[object, ...]] = []
        self.views: list[list[str]] = []
        self.view = TableView.from_definition(definition, 0, watching=True)
        self.deck_checks = 0

    def event(self, event: Event) -> None:
        self.view.apply(event)
        if isinstance(event, ActionTaken):
            self.actions.append(public(event.state))

    def envelope(self, spectator: Spectator) -> None:
        if self.view.phase in (Phase.TAKE_FIRST, Phase.TAKE_SECOND):
            # Every seat's card backs, though the watcher holds no hand to count.
            assert [self.view.cards_held(s) for s in range(4)] == [5] * 4
        self.states.append(public(spectator.state))
        self.views.append(self.view.plain_lines(now=0.0))
        check_nothing_known_early(spectator.session)
        self.deck_checks += 1


def check_nothing_known_early(session: TableSession) -> None:
    """The observer's deck knows the turned card and the cards played, no other."""
    state, deck = session.state, session.deck
    if deck is None or state.phase not in LIVE:
        return
    known = {c for c in deck.known_cards() if c is not None}
    allowed = {c for c in range(32) if state.played >> c & 1}
    if state.turned is not None:
        allowed.add(state.turned)
    assert known <= allowed, (known - allowed, state.phase)


def replay(definition: TableDefinition, envelopes: Sequence[bytes]) -> Seen:
    """An observer replay of a player's transcript, seen as a watcher sees it."""
    seen = Seen(definition)
    spectator = Spectator(definition)
    for data in envelopes:
        for event in spectator.receive(data):
            seen.event(event)
        seen.envelope(spectator)
    return seen


@pytest.mark.usefixtures("proofs_checked_once")
async def test_watchers_at_the_start_and_mid_game_see_the_public_table(tmp_path: Path) -> None:
    """Two watchers from the start and one that comes mid-game: each checks the whole game,
    sees the public state of an observer replay at every envelope, never knows a card before
    it is played, and keeps a record that verifies."""
    listeners = await open_listeners(4)
    definition, ids = make_table("classic", target=151, seed=9, listeners=listeners)
    hub = WatchHub(definition.table_id)
    results: dict[str, WatchResult] = {}
    seen = {name: Seen(definition) for name in ("first", "second", "late")}
    late_go = trio.Event()

    def host_step(envelopes: Sequence[Envelope]) -> None:
        hub.publish(envelopes)
        if hub.recorded >= 40:  # mid-way through the first round, however short the game
            late_go.set()

    async def watcher(name: str, invitation: Invitation, go: trio.Event | None = None) -> None:
        if go is not None:
            await go.wait()
        save = tmp_path / f"{name}.watch"
        results[name] = await run_watch(
            invitation, on_event=seen[name].event, on_envelope=seen[name].envelope, save=save
        )

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as port_nursery:
            _, port = await serve_hub(port_nursery, hub)
            invitation = code_for(definition, port)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watcher, "first", invitation)
                nursery.start_soon(watcher, "second", invitation)
                nursery.start_soon(watcher, "late", invitation, late_go)
                # The lobby is done: the waiting watchers get the table.
                hub.open(definition, definition.propose(ids[0]))
                players = await play_game(tmp_path, definition, ids, listeners, host_step)
                hub.finish("the game is over")
            port_nursery.cancel_scope.cancel()
    host_record = read_transcript(players[0].transcript).envelopes
    other_record = read_transcript(players[1].transcript).envelopes
    reference = replay(definition, host_record)
    by_seat_1 = replay(definition, other_record)
    assert reference.actions == by_seat_1.actions  # the public game, whoever recorded it
    served, dropped = served_and_dropped(list(results.values()), stuck=0)
    assert hub.stats.served == served and hub.stats.dropped in dropped, len(host_record)
    check_watches(tmp_path, results, seen, players[0], by_seat_1)
    for name in results:
        assert seen[name].states == reference.states, name
        assert seen[name].views == reference.views, name
        assert read_transcript(tmp_path / f"{name}.watch").envelopes == host_record
    assert results["first"].status == 0


def check_watches(
    tmp_path: Path,
    results: dict[str, WatchResult],
    seen: dict[str, Seen],
    host: PeerResult,
    by_seat_1: Seen,
) -> None:
    """Each watcher checked the whole game to its end, saw the public state after each
    action as seat 1 did, and kept each envelope once, in a record that verifies."""
    record = read_transcript(host.transcript).envelopes
    for name, result in results.items():
        assert result.completed and result.error is None and result.fault is None, name
        assert result.end == "the game is over"
        assert result.envelopes == len(record)
        assert result.state.scores == host.state.scores
        assert seen[name].actions == by_seat_1.actions, name
        assert seen[name].deck_checks == len(record)
        saved = tmp_path / f"{name}.watch"
        assert set(read_transcript(saved).envelopes) == set(record)
        verdict = verify_transcript(saved)
        assert verdict.ok and verdict.finished, verdict.summary()


def served_and_dropped(results: Sequence[WatchResult], stuck: int) -> tuple[int, range]:
    """The watchers a table served and the range of those it dropped, when ``stuck``
    watchers never read and ``results`` are the reading ones: a reading watcher slower
    than the game (a loaded machine, a short queue) may be dropped too, and then connects
    again, served once more."""
    connections = sum(result.connections for result in results)
    return stuck + connections, range(stuck, stuck + connections - len(results) + 1)


def test_a_watchers_view_shows_no_hand_and_nobody_as_you() -> None:
    """A watcher's table, at every envelope of a whole game (an in-memory one), shows no
    hand and calls nobody "You"; its end names the winners."""
    definition, ids = make_table("classic", target=151, seed=12)
    sessions = table_sessions(definition, ids, deal_seed=4)
    net = Net(sessions, random.Random(3))
    net.run()
    seen = replay(definition, [e.encode() for e in sessions[0].transcript])
    assert len(seen.views) == len(sessions[0].transcript)
    for lines in seen.views:
        assert not any(line.startswith("Hand") for line in lines)
        assert not any("You" in line for line in lines), lines
    assert seen.view.ended is not None and seen.view.ended.startswith("Game over: p")


async def test_a_watcher_that_stops_reading_is_dropped_and_the_game_ends(tmp_path: Path) -> None:
    """A watcher that sends its hello and never reads again fills its queue and is dropped;
    the game ends all the same, and a reading watcher beside it sees all of it."""
    listeners = await open_listeners(4)
    definition, ids = make_table("classic", target=151, seed=9, listeners=listeners)
    hub = WatchHub(definition.table_id, queue=16)
    hub.open(definition, definition.propose(ids[0]))
    results: list[WatchResult] = []
    stuck_in = trio.Event()

    async def stuck(port: int) -> None:
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STUCK_RECEIVE_BUFFER)
        await sock.connect((LOOPBACK, port))
        stream = trio.SocketStream(sock)
        await stream.send_all(frame(hello_message(definition.table_id[:8])))
        stuck_in.set()
        await trio.sleep_forever()  # never reads: the hub must drop it

    async def reader(invitation: Invitation) -> None:
        results.append(await run_watch(invitation))

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as port_nursery:
            _, port = await serve_hub(port_nursery, hub)
            port_nursery.start_soon(stuck, port)
            await stuck_in.wait()
            while hub.stats.served < 1:  # served with an empty record: its queue fills
                await trio.testing.wait_all_tasks_blocked()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(reader, code_for(definition, port))
                await play_game(tmp_path, definition, ids, listeners, hub.publish)
                hub.finish("the game is over")
            port_nursery.cancel_scope.cancel()
    served, dropped = served_and_dropped(results, stuck=1)
    assert hub.stats.served == served and hub.stats.dropped in dropped
    assert results[0].completed and results[0].error is None


class Raw(NamedTuple):
    """An envelope as a hub forwards it: its bytes (a hub reads nothing else of it)."""

    raw: bytes


@pytest.mark.parametrize("drop", [True, False], ids=["dropped", "quits"])
async def test_a_watcher_dropped_before_the_end_finds_the_table_still_served(drop: bool) -> None:
    """A watcher the hub drops for not reading connects again for the rest (``follow``): once
    the game is over, the hub waits for it (``owed``) before its port may close, and stops
    waiting once a watcher has come and taken the end. A watcher that closes its connection
    itself is not waited for."""
    listeners = await open_listeners(4)
    definition, ids = make_table("classic", target=151, seed=9, listeners=listeners)
    records = [cast(Envelope, Raw(bytes(encode({"n": n, "pad": bytes(64)})))) for n in range(5)]
    hub = WatchHub(definition.table_id, queue=2)
    hub.open(definition, definition.propose(ids[0]))
    drained = trio.Event()
    said: list[str] = []

    async def drain() -> None:
        await drain_watchers(hub, said.append)
        drained.set()

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            _, port = await serve_hub(nursery, hub)
            code = code_for(definition, port)
            async with open_watch(code):
                while hub.stats.served < 1:
                    await trio.testing.wait_all_tasks_blocked()
                await trio.testing.wait_all_tasks_blocked()  # its queue is open
                if drop:
                    hub.publish(records)  # at once, more than its queue holds: dropped
            # It left: the hub sees it when a frame for it does not go (one at a time, each
            # sent before the next: its queue never fills).
            for record in [] if drop else records:
                hub.publish([record])
                await trio.testing.wait_all_tasks_blocked()
            while hub.stats.watching:
                await trio.testing.wait_all_tasks_blocked()
            assert (hub.stats.dropped, hub.owed) == ((1, 1) if drop else (0, 0))
            hub.finish("the game is over")
            nursery.start_soon(drain)
            await trio.testing.wait_all_tasks_blocked()
            assert drained.is_set() is not drop
            if drop:
                async with open_watch(code) as back:
                    got = [data async for data in back.envelopes()]
                assert got == [r.raw for r in records] and back.end == "the game is over"
                await drained.wait()
                assert hub.owed == 0 and hub.stats.returned == 1
            assert len(said) == drop and all("lost its connection" in line for line in said)
            nursery.cancel_scope.cancel()


async def test_a_joiner_says_why_it_waits_for_a_dropped_watcher(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A joiner's or a resumed seat's feed (``play_watched``) waits for a watcher it dropped
    as the host's port does, and says so through its ``say``; the game's own error still
    comes out whole after the wait."""
    monkeypatch.setattr(watch_app, "WATCH_RETURN", 0.0)  # the wait itself: the host's test
    definition, ids = make_table("classic")
    said: list[str] = []

    async def play(on_step: Callable[[Sequence[Envelope]], None] | None) -> PeerResult:
        assert inspect.ismethod(on_step)
        hub = on_step.__self__  # the seat's hub, which play_watched made
        assert isinstance(hub, WatchHub)
        hub.stats.dropped += 1  # a watcher it dropped for not reading, not back yet
        raise PeerError("the mesh did not open")

    with trio.fail_after(TIMEOUT), pytest.raises(PeerError, match="did not open"):
        await play_watched(
            play, definition, definition.propose(ids[0]), 1, ids[1], (LOOPBACK, 9), True,
            said.append,
        )  # fmt: skip
    assert len(said) == 1 and "lost its connection" in said[0]


async def test_bad_hellos_and_a_flood_get_typed_refusals(tmp_path: Path) -> None:
    """A malformed hello, another table's name, watching switched off and a flood past the
    caps each get a watch-refused with its reason (WatchRefused at the watcher), and the
    port goes on serving: the watchers within the caps get the table."""
    definition, ids = make_table("classic", target=151, seed=9)
    hub = WatchHub(definition.table_id, limit=6, per_source=4)
    code = Invitation.of(definition.table_id, definition.host_key, ("127.0.0.1:1",))

    async def raw(port: int, payload: bytes) -> bytes:
        stream = await trio.open_tcp_stream(LOOPBACK, port)
        async with stream:
            await stream.send_all(frame(payload))
            data = b""
            while True:
                chunk = await stream.receive_some(1 << 14)
                if not chunk:
                    return data
                data += chunk

    def refusal(data: bytes) -> str:
        with pytest.raises(WatchRefused) as caught:
            parse_table(data[4:])
        return str(caught.value)

    accepted: list[str] = []
    refused: list[str] = []

    async def watcher(invitation: Invitation) -> None:
        try:
            async with open_watch(invitation) as link:
                accepted.append(link.table.definition.table_id.hex())
        except WatchRefused as exc:
            refused.append(str(exc))

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            service, port = await serve_hub(nursery, hub)
            invitation = Invitation.of(
                definition.table_id, definition.host_key, (f"{LOOPBACK}:{port}",)
            )
            bad_version = encode({"type": "watch", "version": 9, "table": bytes(8)})
            assert "version" in refusal(await raw(port, bad_version))
            extra = encode({"type": "watch", "version": 1, "table": bytes(8), "x": 1})
            assert "keys" in refusal(await raw(port, extra))
            assert "another table" in refusal(await raw(port, hello_message(bytes(8))))
            hub.allowed = False
            assert "does not let" in refusal(await raw(port, hello_message(code.table_prefix)))
            hub.allowed = True
            # A flood from one address: four wait for the table, the rest are refused.
            async with trio.open_nursery() as flood:
                for _ in range(12):
                    flood.start_soon(watcher, invitation)
                while len(refused) < 8:
                    await trio.testing.wait_all_tasks_blocked()
                assert hub.stats.watching == 4
                hub.open(definition, definition.propose(ids[0]))
                hub.finish("the game is over")
            nursery.cancel_scope.cancel()
    assert len(accepted) == 4 and len(refused) == 8
    assert all("from your address" in r for r in refused)
    assert hub.stats.refused == 4 + 8
    assert service.gate.failed == 0


def test_watch_messages_are_checked() -> None:
    """The watch protocol's parsers refuse what is not the protocol, with a typed error."""
    definition, _ = make_table("classic", target=151, seed=9)
    prefix = definition.table_id[:8]
    assert parse_hello(hello_message(prefix)) == prefix
    for bad in (b"\xc1", encode([1]), encode({"type": "watch", "version": 1, "table": b"x"})):
        with pytest.raises(WatchError):
            parse_hello(bad)
    forged = encode(
        {"type": "watch-table", "definition": definition.to_wire(), "proposal": bytes(64)}
    )
    with pytest.raises(WatchError, match="not signed"):
        parse_table(forged)
    with pytest.raises(WatchError):
        end_reason(encode({"type": "watch-table"}))
    assert end_reason(encode({"type": "watch-end", "reason": "over"})) == "over"
    spectator = Spectator(definition)
    with pytest.raises(WatchError, match="no envelope"):
        spectator.receive(encode({"sender": b"x"}))
    code = watch_code(Invitation.of(definition.table_id, definition.host_key, ("127.0.0.1:7",)))
    assert code.startswith("belotew")
    with pytest.raises(InvitationError, match="watch code"):
        read_watch_code(code.replace("belotew", "belote2"))
    assert read_watch_code(code.upper()).names_table(definition.table_id)


@pytest.mark.usefixtures("proofs_checked_once")
@pytest.mark.parametrize("route", ["port", "relay"])
async def test_a_watcher_outlives_the_hosts_death_and_resume(tmp_path: Path, route: str) -> None:
    """The host (seat 0) dies mid-game with its port and its feed; the watcher's connection
    ends early and it connects again on its own, with the same code: to the resumed host's
    port on the same address (``port``), or through a relay (``relay``: the code's direct
    address answers nothing; seat 1 starts offering a feed once the host is gone, and the
    resumed host offers one again). Whoever serves it sends the whole record; the watcher
    skips what it has, checks the whole game and keeps a record that verifies."""
    listeners = await open_listeners(4)
    definition, ids = make_table("classic", target=151, seed=9, listeners=listeners)
    transcripts = [tmp_path / f"seat{s}.transcript" for s in range(4)]
    results: dict[int, PeerResult] = {}
    watches: list[WatchResult] = []
    kill = trio.CancelScope()
    killed = trio.Event()
    port_box: list[int] = []
    first_in = trio.Event()
    # The game may end while the watcher waits between two attempts to connect again: the
    # host's port and the feeds stay open until it has its end (a real host gives its
    # watchers WATCH_DRAIN seconds; a watcher that comes back later finds the game gone).
    watched = trio.Event()
    relay_service = RelayService()
    relay_listener = (await trio.open_tcp_listeners(0, host=LOOPBACK))[0]
    relay = (LOOPBACK, relay_listener.socket.getsockname()[1])
    proposal = definition.propose(ids[0])

    def secrets_of(seat: int) -> FileSecrets:
        return FileSecrets(tmp_path / "secrets", definition.table_id, seat)

    async def peer(seat: int, **more: object) -> PeerResult:
        return await run_peer(
            definition, seat, ids[seat], BotPlayer("random", seed=seat),
            transcript=transcripts[seat], secrets=secrets_of(seat), proposal=proposal,
            **more,  # type: ignore[arg-type]
        )  # fmt: skip

    async def host_once(hub: WatchHub, **more: object) -> PeerResult:
        def step(envelopes: Sequence[Envelope]) -> None:
            hub.publish(envelopes)
            if hub.recorded >= 40 and not killed.is_set():  # mid-way through the first round
                kill.cancel()

        async with trio.open_nursery() as inner:
            _, port = await serve_hub(inner, hub, port_box[0] if port_box else 0)
            port_box[:] = [port]
            if route == "relay":
                inner.start_soon(hub.feed, relay, ids[0], 0)
            first_in.set()
            result = await peer(0, on_step=step, **more)
            hub.finish("the game is over")
            await watched.wait()  # a watcher between two attempts still finds the port
            await hub.drained()
            inner.cancel_scope.cancel()
        return result

    async def host() -> None:
        hub = WatchHub(definition.table_id)
        hub.open(definition, proposal)
        with kill:
            await host_once(hub, listeners=[listeners[0]])
        assert kill.cancelled_caught
        killed.set()
        again = WatchHub(definition.table_id)
        again.open(definition, proposal)
        results[0] = await host_once(again)

    async def one(seat: int) -> None:
        if seat != 1 or route == "port":
            results[seat] = await peer(seat, listeners=[listeners[seat]])
            return
        hub = WatchHub(definition.table_id)
        hub.open(definition, proposal)
        async with trio.open_nursery() as inner:

            async def feed_once_the_host_is_gone() -> None:
                await killed.wait()
                await hub.feed(relay, ids[1], 1)

            inner.start_soon(feed_once_the_host_is_gone)
            results[1] = await peer(1, listeners=[listeners[1]], on_step=hub.publish)
            hub.finish("the game is over")
            await watched.wait()
            await hub.drained()
            inner.cancel_scope.cancel()

    async def watcher() -> None:
        await first_in.wait()
        address = NOWHERE if route == "relay" else f"{LOOPBACK}:{port_box[0]}"
        through = f"{LOOPBACK}:{relay[1]}" if route == "relay" else None
        invitation = Invitation.of(definition.table_id, definition.host_key, (address,), through)
        watches.append(await run_watch(invitation, save=tmp_path / "seen.watch"))
        watched.set()

    with trio.fail_after(TIMEOUT * 2):
        async with trio.open_nursery() as nursery:
            await nursery.start(relay_service.serve, [relay_listener])
            async with trio.open_nursery() as table:
                table.start_soon(host)
                for seat in (1, 2, 3):
                    table.start_soon(one, seat)
                table.start_soon(watcher)
            nursery.cancel_scope.cancel()
    check_agreement([results[s] for s in range(4)])
    (watch,) = watches
    assert watch.completed and watch.error is None and watch.end == "the game is over"
    record = read_transcript(tmp_path / "seen.watch").envelopes
    assert len(record) == watch.envelopes == len(set(record))
    assert set(record) == set(read_transcript(transcripts[0]).envelopes)
    verdict = verify_transcript(tmp_path / "seen.watch")
    assert verdict.ok and verdict.finished, verdict.summary()
    if route == "relay":
        assert relay_service.stats["watchers"] >= 2  # before the host's death, and after


async def test_the_watchers_terminal_shows_the_table_and_quit_stops(tmp_path: Path) -> None:
    """The terminal table of a watcher: plain lines name every player by name, show no
    hand, and ``quit`` stops watching (the end of the input does not)."""
    definition, _ = make_table("classic", target=151, seed=9)
    stopped: list[bool] = []
    view = TableView.from_definition(definition, 0, watching=True)
    lines: list[str] = []
    ui = WatchUI(view, lambda: stopped.append(True), plain=True)
    ui.say = lines.append  # type: ignore[method-assign,assignment]
    ui.input_closed()
    assert not stopped
    ui.handle_line("/chat hello")
    ui.handle_line("quit")
    assert stopped == [True]
    assert view.name(0) == "p0"
    assert view.by(0, "You play {card}.", "{name} plays {card}.", card="7♥") == "p0 plays 7♥."
    assert not view.my_turn()


PEER = ["--bot", "random", "--bind", LOOPBACK]
"""The options of the host and joiner processes below (and the hosts announce nothing)."""


async def test_the_watch_command_follows_a_host_process_and_its_record_verifies(
    tmp_path: Path,
) -> None:
    """``belote-p2p host`` prints a watch code; ``belote-p2p watch CODE --save`` waits for
    the table while the lobby fills, follows the game to its end in plain lines, and keeps a
    record ``verify`` passes. A host with ``--no-watch`` refuses the same command, which
    says why and ends with status 1."""
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            closed = await start(
                nursery, "closed",
                cli_argv("host", "--port", "0", "--bots", "1", "--no-watch", "--no-beacon", *PEER,
                         "--name", "Shut", "--home", tmp_path / "closed"),
                tmp_path,
            )  # fmt: skip
            refused_code = await watch_code_of(closed)
            refused = await run_cli(tmp_path, "watch", refused_code, "--plain", timeout=30)
            assert refused.returncode == 1
            assert b"does not let anyone watch" in refused.stderr, refused.stderr
            closed.process.kill()
            host = await start(
                nursery, "host",
                cli_argv("host", "--port", "0", "--bots", "2", "--fill", "random", "--no-beacon",
                         *PEER, "--seed", "1", "--target", "151", "--name", "Hana",
                         "--home", tmp_path / "host"),
                tmp_path,
            )  # fmt: skip
            code = await watch_code_of(host)
            assert "Watching is off" in closed.output
            record = tmp_path / "seen.watch"
            watcher = await start(
                nursery, "watcher", cli_argv("watch", code, "--plain", "--save", record), tmp_path
            )
            invitation = host.output.split("belote-p2p join ")[1].split()[0]
            joiner = await start(
                nursery, "joiner",
                cli_argv("join", invitation, *PEER, "--seed", "2", "--name", "Jo",
                         "--home", tmp_path / "joiner", "--quiet"),
                tmp_path,
            )  # fmt: skip
            for proc in (host, joiner, watcher):
                await proc.process.wait()
    statuses = {p.name: p.process.returncode for p in (host, joiner, watcher)}
    assert statuses == {"host": 0, "joiner": 0, "watcher": 0}, watcher.output
    assert "envelopes all check" in watcher.output
    assert "Hana" in watcher.output and "Jo" in watcher.output
    assert "Hand:" not in watcher.output and "You " not in watcher.output
    verified = await run_cli(tmp_path, "verify", str(record), timeout=60)
    assert verified.returncode == 0 and b"OK: " in verified.stdout, verified.stdout


async def watch_code_of(proc: Process) -> str:
    """The watch code a host process prints (once it has)."""
    proc.wanted = "Others join with"
    await proc.line_seen.wait()
    if "belote-p2p watch " not in proc.output:
        return watch_code(read_invitation_of(proc.output))
    return proc.output.split("belote-p2p watch ")[1].split()[0]


def read_invitation_of(output: str) -> Invitation:
    return Invitation.decode(output.split("belote-p2p join ")[1].split()[0])


@pytest.mark.parametrize("name", ["a forged decryption share", "bid out of turn"])
def test_a_lying_peer_cannot_fool_a_watcher(name: str) -> None:
    """A host's record in which a seat cheated (a signed lie): the watcher's observer finds
    it as a verifier does, and its table says who broke the protocol."""
    cheat = {"a forged decryption share": lambda: ForeignCard(forge_share=True),
             "bid out of turn": OutOfTurn}[name]()  # fmt: skip
    table = play_cheat(cheat)
    definition = table.definition
    seen = replay(definition, [e.encode() for e in table.sessions[0].transcript])
    spectator = Spectator(definition)
    for e in table.sessions[0].transcript:
        spectator.receive(e.encode())
    assert spectator.fault is not None and spectator.fault.seat == cheat.seat
    result = WatchResult(definition, spectator.state, 1, None, False, spectator.fault)
    assert ending(result, None).startswith(f"The game stopped: p{cheat.seat} (seat {cheat.seat})")
    assert result.status == 1
    assert seen.view.ended is not None
    assert seen.view.ended.startswith(f"The game stopped: p{cheat.seat} broke the protocol")


async def test_a_watcher_waiting_for_a_game_that_never_comes_is_told() -> None:
    """A watcher waits while the lobby fills; if the host gives up before any game, the
    watcher gets a refusal with the host's reason instead of waiting on."""
    definition, _ = make_table("classic", target=151, seed=9)
    hub = WatchHub(definition.table_id)
    refused: list[str] = []

    async def watcher(invitation: Invitation) -> None:
        with pytest.raises(WatchRefused) as caught:
            async with open_watch(invitation):
                pass
        refused.append(str(caught.value))

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as port_nursery:
            _, port = await serve_hub(port_nursery, hub)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watcher, code_for(definition, port))
                while hub.stats.watching < 1:
                    await trio.testing.wait_all_tasks_blocked()
                hub.finish("the lobby closed")
            port_nursery.cancel_scope.cancel()
    assert refused == ["the lobby closed"]
    assert hub.stats.served == 0


# -- through a relay ----------------------------------------------------------------------


NOWHERE = f"{LOOPBACK}:1"
"""A direct address of a watch code that answers nothing (the host is not reachable)."""


def relayed_table(
    seed: int, host: trio.SocketListener, target: int = 151
) -> tuple[TableDefinition, list[Identity]]:
    """A classic table whose host listens on ``host`` and whose three joiners do not
    (``--no-listen``: every other link goes through the relay)."""
    ids = identities(seed)
    port = host.socket.getsockname()[1]
    seats = tuple(
        Seat(f"p{s}", ids[s].public_key_bytes, f"{LOOPBACK}:{port}" if s == 0 else "")
        for s in range(4)
    )
    return TableDefinition(TABLE, RULE_SETS["classic"].with_(target=target), seats), ids


async def stuck_watcher(
    relay: tuple[str, int], definition: TableDefinition, ready: trio.Event
) -> None:
    """A watcher at the relay that sends its hello and never reads again."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STUCK_RECEIVE_BUFFER)
    await sock.connect(relay)
    stream = trio.SocketStream(sock)
    await stream.send_all(frame(watch_message(*watch_key(definition))))
    got = b""
    while len(got) < len(PAIRED):
        got += await stream.receive_some(len(PAIRED) - len(got))
    assert got == PAIRED
    await stream.send_all(frame(hello_message(definition.table_id[:8])))
    ready.set()
    await trio.sleep_forever()  # never reads: its seat must drop it, and nobody wait


WATCH_DEAL_SEED = 3
"""The deals of the relay watch test: with its bots, a game of 361 envelopes (404 KB) to 501,
more than every buffer between a seat and the stuck watcher holds (with random deals, a game
to 301 sometimes ended in 126 envelopes, 137 KB, which they held: nobody dropped it)."""


@pytest.mark.usefixtures("proofs_checked_once")
async def test_watchers_through_a_relay_process_at_a_table_of_no_listen_joiners(
    tmp_path: Path,
) -> None:
    """A standalone relay process; the three joiners do not listen and the watch code's
    direct address answers nothing, so the watchers come through the relay, each served by
    one seat's feed: two from the start, one mid-game and one that stops reading (cut by the
    seat serving it or by the relay, delaying nobody). Each reading watcher checks the whole
    game, sees the public state of every action, never knows a card before it is played, and
    keeps a record that verifies."""
    host = (await trio.open_tcp_listeners(0, host=LOOPBACK))[0]
    definition, ids = relayed_table(41, host, target=501)
    proposal = definition.propose(ids[0])
    hubs = [WatchHub(definition.table_id, queue=16) for _ in range(4)]
    for hub in hubs:
        hub.open(definition, proposal)
    results: dict[str, WatchResult] = {}
    seen = {name: Seen(definition) for name in ("first", "second", "late")}
    late_go = trio.Event()
    watched = trio.Event()  # every watcher has its result
    players: dict[int, PeerResult] = {}

    def host_step(envelopes: Sequence[Envelope]) -> None:
        hubs[0].publish(envelopes)
        if hubs[0].recorded >= 40:
            late_go.set()

    async def seat(s: int, relay: tuple[str, int], play: trio.Event) -> None:
        async with trio.open_nursery() as feeding:
            feeding.start_soon(hubs[s].feed, relay, ids[s], s)
            await play.wait()
            players[s] = await run_peer(
                definition, s, ids[s], BotPlayer("random", seed=s),
                transcript=tmp_path / f"seat{s}.transcript",
                listeners=[host] if s == 0 else [],
                secrets=SeededSecrets(WATCH_DEAL_SEED, s),
                proposal=proposal, relay=relay,
                on_step=host_step if s == 0 else hubs[s].publish,
            )  # fmt: skip
            hubs[s].finish("the game is over")
            # A reading watcher dropped late (slower than the game) may still be catching up
            # the whole record through this seat's feed, or be about to connect again for
            # it: the feeds stay until every watcher has its result.
            with trio.move_on_after(WATCH_PATIENCE):
                await watched.wait()
            feeding.cancel_scope.cancel()

    async def watcher(name: str, invitation: Invitation, go: trio.Event | None = None) -> None:
        if go is not None:
            await go.wait()
        results[name] = await run_watch(
            invitation, on_event=seen[name].event, on_envelope=seen[name].envelope,
            save=tmp_path / f"{name}.watch",
        )  # fmt: skip
        if len(results) == len(seen):
            watched.set()

    # A loaded machine may make a watcher wait out the relay's pairing and a seat back off
    # before it offers its feed again (up to FEED_RETRY_MAX): room for a few of those.
    with trio.fail_after(TIMEOUT * 4):
        async with trio.open_nursery() as outer:
            relay_proc, port = await start_relay_process(outer, tmp_path)
            relay = (LOOPBACK, port)
            invitation = Invitation.of(
                definition.table_id, definition.host_key, (NOWHERE,), f"{LOOPBACK}:{port}"
            )
            code = read_watch_code(watch_code(invitation))
            assert code.relay == f"{LOOPBACK}:{port}"
            stuck_in, play = trio.Event(), trio.Event()
            async with trio.open_nursery() as nursery:
                for s in range(4):
                    nursery.start_soon(seat, s, relay, play)
                # The stuck watcher is served before the game starts (the record so far is
                # empty): all the game's envelopes go to its queue, which fills.
                outer.start_soon(stuck_watcher, relay, definition, stuck_in)
                await stuck_in.wait()
                while sum(h.stats.served for h in hubs) < 1:
                    await trio.testing.wait_all_tasks_blocked()
                await trio.testing.wait_all_tasks_blocked()
                assert sum(h.recorded for h in hubs) == 0
                play.set()
                nursery.start_soon(watcher, "first", code)
                nursery.start_soon(watcher, "second", code)
                nursery.start_soon(watcher, "late", code, late_go)
            relay_proc.line_seen, relay_proc.wanted = trio.Event(), '"watchers"'
            relay_proc.process.send_signal(signal.SIGINT)  # it prints its counts, and ends
            await relay_proc.line_seen.wait()
            await relay_proc.process.wait()
            outer.cancel_scope.cancel()  # the stuck watcher
    check_agreement([players[s] for s in range(4)])
    # The stuck watcher's seat cannot have sent it the whole record: the record is more
    # than the kernel buffers (each doubled by Linux), the relay's queue (and one chunk it
    # reads) and the hub's queue of 16 envelopes hold between them.
    record = read_transcript(players[0].transcript).envelopes
    held = 2 * (STUCK_RECEIVE_BUFFER + 3 * WATCH_RELAY_QUEUE) + WATCH_RELAY_QUEUE + (1 << 16)
    assert sum(map(len, record)) > held + 16 * max(map(len, record)), len(record)
    assert [players[s].relayed for s in range(4)] == [0, 2, 2, 2]  # the joiners: each other
    by_seat_1 = replay(definition, read_transcript(players[1].transcript).envelopes)
    served, dropped = served_and_dropped(list(results.values()), stuck=1)
    assert sum(h.stats.served for h in hubs) == served
    check_watches(tmp_path, results, seen, players[0], by_seat_1)
    counts = json.loads(relay_proc.output.split("RELAY ")[-1].splitlines()[0])
    # The relay paired every watcher a seat served; on a loaded machine a pairing may also
    # fail before the seat serves it (a hello that did not leave in time: the watcher then
    # connects again), and the relay counts that one too.
    assert counts["watchers"] >= served and counts["paired"] == 3, counts
    # The stuck one was cut, by the seat serving it (its queue filled) or by the relay (a
    # frame to it did not leave in time: on a loaded machine the relay's wait, which starts
    # first, may run out before the seat's queue fills), and nobody waited for it.
    by_seats = sum(h.stats.dropped for h in hubs)
    assert by_seats in range(dropped.stop), ([h.stats for h in hubs], counts)
    assert by_seats >= 1 or counts["refused"].get(NOT_READING, 0) >= 1, counts
