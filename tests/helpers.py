"""The helpers that more than one test module uses: one copy of each.

Tests import them with ``from helpers import ...`` (``tests/`` is on ``sys.path`` as it is
for ``conftest``); a test never imports ``conftest`` or another ``test_*`` module
(``test_layout.py`` checks it). Fixtures stay in ``conftest.py``; the cheating sessions are
in ``cheaters.py``.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import signal
import socket
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from belote_p2p.app.output import parse_result
from belote_p2p.app.web.server import WebServer
from belote_p2p.game.cards import CARDS, Card, parse_cards
from belote_p2p.game.engine import Phase, State, under_position
from belote_p2p.game.rules import RULE_SETS, RuleSet
from belote_p2p.net.peer import PeerConfig, PeerControl, PeerResult, PeerStatus, run_peer
from belote_p2p.net.transport import MeshConfig
from belote_p2p.players.player import BotPlayer
from belote_p2p.protocol import group
from belote_p2p.protocol.deck import DeckPeer, encode_message
from belote_p2p.protocol.events import ActionTaken, DecisionNeeded, SeatLeft
from belote_p2p.protocol.group import L, scalar_bytes
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import Action as RelayAction
from belote_p2p.protocol.relay import RelayServer
from belote_p2p.protocol.relay import Send as RelaySend
from belote_p2p.protocol.secretstore import FileSecrets, MemorySecrets
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.transcript import TranscriptWriter, read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope, FrameDecoder, decode, frame

ROOT = Path(__file__).resolve().parents[1]
"""The source tree the tests run from."""
LOOPBACK = "127.0.0.1"
"""The host every listener and address of the tests is on."""
HEARING = 3.0
"""Seconds a test that must hear a table listens for its beacons (sent every 0.05 s): a
loaded machine may run the listener or the sender late, and a few tenths of a second missed
them now and then. A test that must hear nothing listens briefly."""
TIMEOUT = 60
"""Seconds a whole game between four peers over loopback TCP may take."""

# -- cards and games -----------------------------------------------------------------------


def cards(text: str) -> tuple[Card, ...]:
    """The cards named in ``text``, separated by spaces ("7H 8H 9H")."""
    return parse_cards(text.split())


def random_deck(rng: random.Random, rules: RuleSet | None = None) -> list[Card]:
    """The 32 cards (or the cards of ``rules``' deck) in an order drawn from ``rng``."""
    deck = list(CARDS if rules is None else rules.deck_cards)
    rng.shuffle(deck)
    return deck


def dealt(rules: RuleSet, seed: int) -> State:
    """A new game of ``rules`` dealt from a deck shuffled by ``random.Random(seed)``."""
    return State.new_game(rules).deal(random_deck(random.Random(seed), rules))


def play_round(state: State, rng: random.Random) -> State:
    """``state`` after the rest of its round played with random legal actions."""
    while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


# -- identities and tables -----------------------------------------------------------------

TABLE = bytes(range(16))
"""The table id of the tables built here."""
PLAYERS = [Identity.from_seed(bytes([seat + 1]) * 32) for seat in range(4)]
"""Four fixed identities, one per seat, for the wire and transport tests."""
ROSTER = [p.public_key_bytes for p in PLAYERS]
"""The public keys of :data:`PLAYERS`, in seat order."""


def identities(seed: int, count: int = 4) -> list[Identity]:
    """``count`` identities derived from ``seed``, the same on every run."""
    return [Identity.from_seed(bytes([seed, i]) * 16) for i in range(count)]


def address_of(listener: trio.SocketListener) -> tuple[str, int]:
    """The host and port ``listener`` listens on."""
    host, port = listener.socket.getsockname()[:2]
    return host, port


def make_table(
    variant: str,
    target: int = 501,
    seed: int = 0,
    *,
    listeners: list[trio.SocketListener] | None = None,
) -> tuple[TableDefinition, list[Identity]]:
    """A table of ``variant`` (its rules' seats: 4, 3 or 2) to ``target`` with the identities
    of ``seed``; its seats' addresses are those of ``listeners`` (else 127.0.0.1:7000...)."""
    rules = RULE_SETS[variant].with_(target=target)
    n = rules.seats
    ids = identities(seed)[:n]
    if listeners is None:
        addresses = [f"{LOOPBACK}:{7000 + i}" for i in range(n)]
    else:
        addresses = [f"{LOOPBACK}:{address_of(listener)[1]}" for listener in listeners]
    seats = tuple(Seat(f"p{i}", ids[i].public_key_bytes, addresses[i]) for i in range(n))
    return TableDefinition(TABLE, rules, seats), ids


class SeededSecrets(MemorySecrets):
    """Deck secrets derived from a seed, so that two runs deal the same cards."""

    def __init__(self, seed: int, seat: int) -> None:
        super().__init__()
        self.seed, self.seat = seed, seat

    def load(self, round_number: int) -> tuple[bytes, bytes] | None:
        got = super().load(round_number)
        if got is None:
            rng = random.Random(f"{self.seed}/{self.seat}/{round_number}")
            got = (scalar_bytes(rng.randrange(1, 2**250)), rng.randbytes(32))
            self.save(round_number, *got)
        return got


def table_sessions(
    definition: TableDefinition, ids: list[Identity], deal_seed: int | None = None
) -> list[TableSession]:
    """One session per seat (with :class:`SeededSecrets` of ``deal_seed`` if given)."""
    n = len(definition.seats)
    secrets = [None if deal_seed is None else SeededSecrets(deal_seed, i) for i in range(n)]
    proposal = definition.propose(ids[0])
    return [
        TableSession(definition, i, ids[i], secrets=secrets[i], proposal=proposal) for i in range(n)
    ]


def write_transcript(path: Path, session: TableSession) -> Path:
    """Write ``session``'s transcript (its seat's record of the game) to ``path``."""
    assert session.seat is not None
    with TranscriptWriter(path, session.definition, session.seat) as writer:
        for envelope in session.transcript:
            writer.append(envelope.encode())
    return path


def played_game(home: Path, seed: int, variant: str = "classic", target: int = 151) -> Path:
    """A whole game of ``variant`` to ``target`` between four sessions (deals and message
    order of ``seed``), seat 0's transcript kept in the home ``home`` as a peer keeps it
    (``belote-p2p games`` lists it)."""
    from belote_p2p.app.home import Home

    definition, ids = make_table(variant, target=target, seed=seed)
    sessions = table_sessions(definition, ids, deal_seed=seed)
    Net(sessions, random.Random(seed)).run()
    return write_transcript(Home(home).transcript(definition, 0), sessions[0])


def hexed(value: object) -> object:
    """``value`` with every ``bytes`` in hex, for JSON vectors."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [hexed(v) for v in value]
    if isinstance(value, dict):
        return {k: hexed(v) for k, v in value.items()}
    return value


def check_turn_ups(definition: TableDefinition, envelopes: list[Envelope]) -> int:
    """A two-handed record, in the order one seat holds it: every seat's shares of a
    face-down card (``deck.open``) come right after the trick that turned it up (exactly
    the positions under the trick's face-up cards), from both seats, and no deal shares a
    face-down position. Returns how many positions were opened."""
    rules = definition.rules
    played: dict[int, list[int]] = {}
    opened: dict[tuple[int, int], set[int]] = {}
    for envelope in envelopes:
        body = envelope.body
        seat = definition.roster.index(envelope.sender)
        if body["type"] == "play":
            played.setdefault(body["round"], []).append(body["deck"]["position"])
        elif body["type"] == "deck" and body["msg"]["type"] == "deck.shares":
            assert len(body["msg"]["shares"]) == 16  # the face-up cards only
        elif body["type"] == "deck" and body["msg"]["type"] == "deck.open":
            plays = played.get(body["round"], [])
            assert plays and len(plays) % 2 == 0, "shares before the trick ended"
            dealer = definition.rules.first_dealer  # under_position does not use it
            under = {under_position(rules, dealer, p) for p in plays[-2:]} - {None}
            assert set(body["msg"]["positions"]) == under
            for p in body["msg"]["positions"]:
                opened.setdefault((body["round"], p), set()).add(seat)
    assert all(seats == {0, 1} for seats in opened.values())
    return len(opened)


# -- four sessions in memory ---------------------------------------------------------------


class Net:
    """Per-pair FIFO queues, delivered in a seeded random interleaving."""

    def __init__(self, sessions: list[TableSession], rng: random.Random) -> None:
        self.sessions = sessions
        self.rng = rng
        n = self.n = len(sessions)
        self.queues = {(a, b): deque[bytes]() for a in range(n) for b in range(n) if a != b}
        self.bots = [random.Random(rng.random()) for _ in range(n)]
        self.events: list[list[object]] = [[] for _ in range(n)]

    def flush(self, seat: int) -> None:
        """Queue what ``seat`` sent to every other seat; its bot answers what it is asked."""
        s = self.sessions[seat]
        for data in s.take_outbox():
            for other in range(self.n):
                if other != seat:
                    self.queues[seat, other].append(data)
        # Record every event before answering any: an answer flushes again (its own events
        # come after these).
        events = s.take_events()
        self.events[seat].extend(events)
        for event in events:
            if isinstance(event, DecisionNeeded):
                self.decide(seat, event)

    def decide(self, seat: int, event: DecisionNeeded) -> None:
        """``seat``'s bot answers ``event`` (a seeded random legal action)."""
        self.sessions[seat].act(self.bots[seat].choice(event.observation.legal))
        self.flush(seat)

    def start(self) -> None:
        """Start every session and queue what it sends first."""
        for seat in range(self.n):
            self.sessions[seat].start()
            self.flush(seat)

    def sync(self) -> None:
        """Every peer asks every other for what it lacks (as on a reconnection)."""
        for a in range(self.n):
            for b in range(self.n):
                if a != b and not self.sessions[a].closed:
                    self.queues[a, b].append(self.sessions[a].sync_request())

    def in_flight(self) -> list[tuple[int, int]]:
        """The (sender, receiver) pairs with something queued."""
        return [k for k, q in self.queues.items() if q]

    def deliver(self, a: int, b: int) -> None:
        """Give ``b`` the oldest frame from ``a``; queue its replies back to ``a``."""
        replies = self.sessions[b].receive(self.queues[a, b].popleft())
        self.queues[b, a].extend(replies)
        self.flush(b)

    def step(self) -> None:
        """Deliver one queued frame, chosen at random among the pairs in flight."""
        a, b = self.rng.choice(self.in_flight())
        self.deliver(a, b)

    def run(self, limit: int = 200_000, honest: tuple[int, ...] | None = None) -> None:
        """Start, then deliver (syncing when nothing moves) until the ``honest`` seats (by
        default every seat) close."""
        if honest is None:
            honest = tuple(range(self.n))
        self.start()
        self.deliver_until(lambda: all(self.sessions[i].closed for i in honest), limit)

    def deliver_until(self, done: Callable[[], bool], limit: int = 200_000) -> None:
        """Deliver (syncing when nothing moves) until ``done()``."""
        steps = 0
        synced = False
        while not done():
            busy = self.in_flight()
            if not busy:
                assert not synced, "deadlock: nothing in flight even after a sync"
                self.sync()
                synced = True
                continue
            synced = False
            a, b = self.rng.choice(busy)
            self.deliver(a, b)
            steps += 1
            assert steps < limit


class HoldingNet(Net):
    """A net whose seat ``held`` does not answer its ``after``-th decision until told."""

    def __init__(self, sessions: list[TableSession], rng: random.Random, held: int, after: int):
        super().__init__(sessions, rng)
        self.held, self.after = held, after
        self.asked = 0
        self.pending: DecisionNeeded | None = None

    def decide(self, seat: int, event: DecisionNeeded) -> None:
        if seat == self.held:
            self.asked += 1
            if self.asked == self.after:
                self.pending = event
                return
        super().decide(seat, event)

    def release(self) -> None:
        assert self.pending is not None
        event, self.pending = self.pending, None
        super().decide(self.held, event)


# -- loopback networking -------------------------------------------------------------------


def thread_aware_clock(
    monkeypatch: pytest.MonkeyPatch, threshold: float = 0.01
) -> trio.testing.MockClock:
    """Virtual time that jumps ahead whenever every task has waited ``threshold`` s of real
    time, and never while a worker thread runs (a bot's decision, a save of the secrets):
    a silence of minutes passes in a moment, and a decision that takes longer than the
    threshold on a loaded machine costs no virtual time, so no deadline passes during it."""
    clock = trio.testing.MockClock(autojump_threshold=threshold)
    real = trio.to_thread.run_sync
    busy = 0

    async def run_sync(*args: Any, **kwargs: Any) -> Any:
        nonlocal busy
        busy += 1
        clock.autojump_threshold = math.inf
        try:
            return await real(*args, **kwargs)
        finally:
            busy -= 1
            if busy == 0:
                clock.autojump_threshold = threshold

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)
    return clock


async def open_listeners(count: int = 4) -> list[trio.SocketListener]:
    """``count`` TCP listeners on free loopback ports."""
    return [(await trio.open_tcp_listeners(0, host=LOOPBACK))[0] for _ in range(count)]


def has_ipv6_loopback() -> bool:
    """Whether this machine can listen on ``::1``."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


def free_udp_port() -> int:
    """A loopback UDP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((LOOPBACK, 0))
        port: int = s.getsockname()[1]
    return port


async def play_table(
    variant: str,
    tmp_path: Path,
    *,
    target: int = 151,
    seed: int = 9,
    config: PeerConfig | None = None,
    mesh_config: MeshConfig | None = None,
    players: dict[int, Any] | None = None,
    on_status: list[list[PeerStatus]] | None = None,
    watch: dict[int, Callable[[object], None]] | None = None,
    timeout: float = TIMEOUT,
    until: int | None = None,
    configs: dict[int, PeerConfig] | None = None,
    controls: dict[int, PeerControl] | None = None,
) -> tuple[list[PeerResult], list[list[object]]]:
    """The peers of a table (four, or three or two as the variant seats) play over loopback
    TCP (seeded random bots, or ``players``); the results of seats 0 to ``until - 1`` (by
    default every seat; the other seats are cancelled once those are done) and the events
    each seat saw. ``configs`` and ``controls`` give a seat its own peer config or control."""
    n = RULE_SETS[variant].seats
    if until is None:
        until = n
    listeners = await open_listeners(n)
    definition, ids = make_table(variant, target, seed, listeners=listeners)
    results: list[PeerResult | None] = [None] * n
    events: list[list[object]] = [[] for _ in range(n)]
    finished = trio.Event()

    async def one(seat: int) -> None:
        def on_event(event: object) -> None:
            events[seat].append(event)
            if watch and seat in watch:
                watch[seat](event)

        results[seat] = await run_peer(
            definition,
            seat,
            ids[seat],
            (players or {}).get(seat) or BotPlayer("random", seed=seat),
            transcript=tmp_path / f"seat{seat}.transcript",
            listeners=[listeners[seat]],
            secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
            proposal=definition.propose(ids[0]),
            on_event=on_event,
            on_status=on_status[seat].append if on_status is not None else None,
            config=(configs or {}).get(seat, config),
            mesh_config=mesh_config,
            control=(controls or {}).get(seat),
        )
        if all(r is not None for r in results[:until]):
            finished.set()

    with trio.fail_after(timeout):
        async with trio.open_nursery() as nursery:
            for seat in range(n):
                nursery.start_soon(one, seat)
            await finished.wait()
            nursery.cancel_scope.cancel()
    done = [r for r in results[:until] if r is not None]
    assert len(done) == until
    return done, events


def check_agreement(results: list[PeerResult]) -> None:
    """Every peer finished the game cleanly, with the same scores and the same record."""
    for r in results:
        assert r.ok, (r.seat, r.fault, r.error)
        assert r.state.is_over
    assert len({r.state.scores for r in results}) == 1
    contents = []
    for r in results:
        transcript = read_transcript(r.transcript)
        assert not transcript.truncated
        assert transcript.seat == r.seat
        assert len(transcript.envelopes) == r.envelopes
        contents.append({Envelope.decode(e).hash for e in transcript.envelopes})
    assert all(c == contents[0] for c in contents)
    dones = [Envelope.decode(e) for e in read_transcript(results[0].transcript).envelopes]
    scores = [e.body["scores"] for e in dones if e.body["type"] == "done"]
    assert len(scores) == len(results)
    assert all(s == list(results[0].state.scores) for s in scores)


# -- a seat that leaves -------------------------------------------------------------------


class StoppingPlayer(BotPlayer):
    """Plays its first few decisions, then raises ``error`` (a closed terminal, or a person
    who resigns)."""

    def __init__(self, decisions: int, error: Exception) -> None:
        super().__init__("random", seed=5)
        self.left = decisions
        self.error = error

    async def decide(self, observation: Any) -> Any:
        self.left -= 1
        if self.left < 0:
            raise self.error
        return await super().decide(observation)


def check_played_on(results: list[PeerResult], events: list[list[object]], gone: int) -> None:
    """Seat ``gone`` left and its partner played its open hand: the three others finished
    the game alike, their records verify to one verdict naming the leave, the leaver's own
    record ends as left, and the partner played cards for the dummy."""
    others = [r for r in results if r.seat != gone]
    check_agreement(others)
    assert all(r.left == gone and r.abandoned is None for r in results)
    assert all(r.error is None and r.fault is None for r in others)
    summaries = {verify_transcript(r.transcript).summary() for r in others}
    assert len(summaries) == 1, summaries
    summary = summaries.pop()
    assert summary.startswith("OK: ") and f"(seat {gone} (" in summary, summary
    own = verify_transcript(results[gone].transcript)
    assert own.ok and own.summary().startswith(f"LEFT: seat {gone} "), own.summary()
    assert not results[gone].ok
    seen = events[(gone + 1) % 4]
    left = next(i for i, e in enumerate(seen) if isinstance(e, SeatLeft))
    assert any(isinstance(e, ActionTaken) and e.seat == gone for e in seen[left:])


# -- child processes -----------------------------------------------------------------------


def cli_argv(*args: object) -> list[str]:
    """The command line that runs ``belote-p2p`` with ``args`` under this interpreter."""
    return [sys.executable, "-m", "belote_p2p", *(str(a) for a in args)]


def source_pythonpath(*more: str) -> str:
    """A ``PYTHONPATH`` that finds this source tree and its built-in bots (then ``more``)."""
    return os.pathsep.join([str(ROOT), str(ROOT / "plugins"), *more])


async def run_cli(cwd: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[bytes]:
    """Run ``belote-p2p args`` in ``cwd`` to its end (at most ``timeout`` seconds), with
    this source tree on its path and nothing on its input; its output captured."""
    env = dict(os.environ)
    env["PYTHONPATH"] = source_pythonpath(env.get("PYTHONPATH", ""))
    with trio.fail_after(timeout):
        return await trio.run_process(
            cli_argv(*args), capture_stdout=True, capture_stderr=True, check=False, env=env,
            cwd=cwd, stdin=subprocess.DEVNULL,
        )  # fmt: skip


class Process:
    """A peer process whose output is read as it comes."""

    def __init__(self, name: str, process: trio.Process) -> None:
        self.name = name
        self.process = process
        self.output = ""
        self.line_seen = trio.Event()
        self.wanted = ""

    async def pump(self) -> None:
        """Read the output until the process closes it; cancelled (the test failed or ran
        out of time, and its nursery is cancelled), kill the process: no test leaves a
        child behind."""
        assert self.process.stdout is not None
        try:
            async for chunk in self.process.stdout:
                self.output += chunk.decode("utf-8", "replace")
                if self.wanted and self.wanted in self.output:
                    self.line_seen.set()
        except BaseException:
            if self.process.returncode is None:
                self.process.kill()
            raise


def hear_interrupts() -> None:
    """In a child about to start: SIGINT back to its default, so that the child's Python
    stops on it (tests stop a relay so, for its counts) even when the tests themselves were
    started where SIGINT is ignored (a shell script's ``&`` job ignores it, and a child
    inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def start(nursery: trio.Nursery, name: str, args: list[str], tmp: Path) -> Process:
    """Start ``belote-p2p`` (``args``, from :func:`cli_argv`) as a child process; its
    standard error goes to ``tmp/<name>.stderr``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = source_pythonpath()
    log = open(tmp / f"{name}.stderr", "ab")  # noqa: SIM115  (closed with the test's tmp)
    process = await trio.lowlevel.open_process(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=env, cwd=tmp,
        preexec_fn=hear_interrupts,
    )  # fmt: skip
    proc = Process(name, process)
    nursery.start_soon(proc.pump)
    return proc


async def start_relay_process(nursery: trio.Nursery, tmp_path: Path) -> tuple[Process, int]:
    """A standalone ``belote-p2p relay`` on a free loopback port; its port once it listens."""
    relay = await start(
        nursery, "relay", cli_argv("relay", "--port", "0", "--bind", LOOPBACK), tmp_path
    )
    await until_seen(relay, "Tables use it with")
    return relay, int(relay.output.split("(port ")[1].split(")")[0])


@contextmanager
def ended(procs: list[Process]) -> Iterator[None]:
    """Kill whichever of ``procs`` still runs when the block ends (a failed test leaves no
    peer behind)."""
    try:
        yield
    finally:
        for proc in procs:
            if proc.process.returncode is None:
                proc.process.kill()


async def until_seen(proc: Process, text: str) -> None:
    proc.wanted = text
    if text not in proc.output:
        await proc.line_seen.wait()


def check_games(procs: list[Process], tmp_path: Path) -> list[dict[str, Any]]:
    """Every process exited 0 with a RESULT line; the four transcripts verify alike."""
    results = []
    for proc in procs:
        log = (tmp_path / f"{proc.name}.stderr").read_text()
        assert proc.process.returncode == 0, (proc.name, proc.output, log[-3000:])
        result = parse_result(proc.output)
        assert result is not None and result["ok"], (proc.name, proc.output)
        results.append(result)
    verdicts = [verify_transcript(Path(r["transcript"])) for r in results]
    assert all(v.ok and v.finished for v in verdicts), [v.summary() for v in verdicts]
    assert len({v.summary() for v in verdicts}) == 1
    assert len({tuple(r["scores"]) for r in results}) == 1
    return results


# -- the deck protocol's tests and vectors ----------------------------------------------

TABLE_ID = b"deck-test-table!"


def secret_key(seat: int, tag: bytes = b"") -> bytes:
    digest = hashlib.sha512(b"deck test secret key/" + tag + bytes([seat])).digest()
    return group.scalar_bytes(int.from_bytes(digest, "little") % L)


def shuffle_seed(seat: int, tag: bytes = b"") -> bytes:
    return hashlib.sha256(b"deck test shuffle seed/" + tag + bytes([seat])).digest()


def deck_peers(
    rules: RuleSet,
    *,
    dealer: int,
    key: Callable[[int], bytes] = secret_key,
    seed: Callable[[int], bytes] = shuffle_seed,
    table_id: bytes = TABLE_ID,
    overlap: bool = False,
) -> list[DeckPeer]:
    """The deterministic round 1's peers, one per seat, with the secrets ``key`` and ``seed``
    give each seat."""
    return [
        DeckPeer(
            rules,
            seat=s,
            dealer=dealer,
            table_id=table_id,
            round_number=1,
            secret_key=key(s),
            shuffle_seed=seed(s),
            overlap=overlap,
        )
        for s in range(rules.seats)
    ]


VECTOR_ARGUMENTS = {
    "set_taker": ("taker",),
    "play": ("position",),
    "open": ("positions",),
    "release": ("gone",),
    "set_gone": ("gone",),
    "play_for": ("gone", "position"),
}
"""The arguments of each local step, as the deck vectors name them."""


def vector_events(recorded: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """A table's recorded events as the deck vectors write them (DECK.md §12): a local
    step with its arguments, or a message with its canonical bytes and its fields."""
    events: list[dict[str, Any]] = []
    for event in recorded:
        kind, seat = event[0], event[1]
        if kind == "message":
            msg = event[2]
            raw = encode_message(msg).hex()
            fields = hexed(msg.to_wire())
            events.append(
                {"event": "message", "from": seat, "canonical_msgpack": raw, "fields": fields}
            )
        else:
            args = dict(zip(VECTOR_ARGUMENTS.get(kind, ()), event[2:], strict=True))
            events.append({"event": kind, "seat": seat, **args})
    return events


# -- a relay's client, sans-io -------------------------------------------------------------


class RelayClient:
    """One connection to a sans-io :class:`~belote_p2p.protocol.relay.RelayServer`, its
    client's side spoken by hand: what it sends goes in as bytes, what the server answers
    it comes out as frames (:attr:`inbox`) and its close (:attr:`closed`)."""

    numbers = iter(range(1, 1_000_000))

    def __init__(self, server: RelayServer, now: float = 0.0, source: str = "") -> None:
        self.server = server
        self.number = next(RelayClient.numbers)
        self.inbox: list[bytes] = []
        self.closed: str | None = None
        self._decoder = FrameDecoder()
        self.take(server.connected(self.number, now, source))

    def take(self, actions: list[RelayAction]) -> list[RelayAction]:
        """Keep what the actions do to this connection; return them all."""
        for a in actions:
            if a.conn != self.number:
                continue
            if isinstance(a, RelaySend):
                self.inbox += self._decoder.feed(a.data)
            else:
                self.closed = a.reason
        return actions

    def send(self, payload: bytes, now: float = 0.0) -> list[RelayAction]:
        return self.take(self.server.data_received(self.number, frame(payload), now))

    def error(self) -> str:
        """The reason of the ``relay-error`` the server answered last."""
        msg = decode(self.inbox[-1])
        assert msg["type"] == "relay-error", msg
        reason: str = msg["reason"]
        return reason


# -- the browser page's server, over HTTP ------------------------------------------------


async def http(
    web: WebServer, path: str, headers: dict[str, str] | None = None, *, base: bool = True
) -> tuple[int, dict[str, str], bytes]:
    """One GET of ``path`` below the page's base (or, ``base=False``, from the root) over a
    new connection: status, headers (lower-case), body."""
    head = {"Host": f"127.0.0.1:{web.port}", "Connection": "close", **(headers or {})}
    target = f"{web.base}{path}" if base else path
    request = f"GET {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
    stream = await trio.open_tcp_stream("127.0.0.1", web.port)
    async with stream:
        await stream.send_all((request + "\r\n").encode())
        data = b""
        while chunk := await stream.receive_some():
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


def cookie(web: WebServer) -> dict[str, str]:
    return {"Cookie": f"{web.cookie_name}={web.token}"}
