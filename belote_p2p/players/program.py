"""Bots in any language: a program that speaks JSON lines on its standard input and output
(``protocol/BOTS.md``), seated as a bot (``exec:cmd=./mybot``), as chess engines speak UCI.

The table writes one compact JSON object a line (``hello``, ``new_game``, ``new_round``,
``decide``, ``quit``); the program answers ``hello`` and each ``decide``, one line each.
Cards and actions are the project's words: a card as :class:`~belote_p2p.game.cards.Card`
writes it (``JS``, ``TH``), an action as :func:`action_word` writes it (``play JS``,
``bid 80 H``, ``pass``).

:class:`ProgramBot` runs the program. Every read and write is bounded by the caller's
per-decision deadline (``decide(..., deadline_s=...)``: the peer's bot deadline, the arena's
``--bot-deadline``), so a program that hangs never stalls a table. A program that crashes,
hangs or writes what is not the protocol raises a :class:`ProgramError` naming the cause and
is stopped, then started again at its next decision (at most ``restarts`` times); an illegal
action raises :class:`ProgramIllegal` and the program goes on. The caller's one mechanism
for a failing bot (:func:`belote_p2p.players.bots.call_bot`) plays a seeded random legal
action instead and counts the failure by cause.

Starting a program costs more than a decision, and the arena makes fresh bots at every
table: a stopped bot hands a healthy program back to a pool of idle programs of the same
command and options, and the next bot of that command takes it over (it gets ``new_game``
first, and the protocol asks a program to answer from what it was sent since). Every
program still running is stopped when this process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import selectors
import shlex
import subprocess
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

from belote_p2p.game.cards import Card, cards_of
from belote_p2p.game.engine import Action, Bid, BidKind
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import CLASSIC, RuleSet
from belote_p2p.game.tables import trump_letter

from .arena import board_decks, play_table
from .bots import BotAnsweredIllegal, BotFailed, BotTimedOut, SafePlayer

PROTOCOL_VERSION = 1
STARTUP_SECONDS = 10.0
"""How long a program has to answer ``hello`` when a bot is made (option ``startup``)."""
DECISION_SECONDS = 10.0
"""A decision's deadline when the caller gives none."""
MAX_LINE = 1 << 20
"""The longest line a program may write (bytes): a longer one is garbage."""
IDLE_PER_COMMAND = 8
"""Idle programs kept per command and options."""


class ProgramError(BotFailed):
    """A bot program failed; ``command`` is its command line. The subclasses say how."""

    def __init__(self, message: str, command: Sequence[str]) -> None:
        super().__init__(f"bot program {shlex.join(command)}: {message}")
        self.command = tuple(command)


class ProgramCrashed(ProgramError):
    """The program could not be started, exited, or closed its output."""


class ProgramTimedOut(ProgramError, BotTimedOut):
    """The program did not answer (or read) within the deadline."""


class ProgramGarbage(ProgramError):
    """The program wrote something that is not the protocol: not JSON, not the expected
    message, a stale answer, an action that is no action."""


class ProgramIllegal(ProgramError, BotAnsweredIllegal):
    """The program answered a well-formed action that is not among the legal ones."""


# -- the words ---------------------------------------------------------------------------


def action_word(action: Action) -> str:
    """``play JS`` for a card, ``bid 80 H`` / ``bid capot S`` for a coinche bid, else the
    bid as the wire writes it: ``pass``, ``take``, ``choose H``, ``coinche``, ``surcoinche``."""
    if isinstance(action, Bid):
        return f"bid {action}" if action.kind is BidKind.BID else str(action)
    return f"play {action}"


def parse_action_word(text: str) -> Action:
    """The action :func:`action_word` writes as ``text``; ``ValueError`` otherwise."""
    verb, _, rest = text.partition(" ")
    if verb == "play":
        return Card.parse(rest)
    if verb == "bid" and len(rest.split()) == 2:
        return Bid.parse(rest)
    if verb in ("pass", "take", "coinche", "surcoinche") and not rest:
        return Bid.parse(verb)
    if verb == "choose" and len(rest.split()) == 1:
        return Bid.parse(text)
    raise ValueError(f"not an action: {text!r} (play JS, bid 80 H, pass, take, choose H...)")


def _cards(mask_or_cards: int | Sequence[int]) -> list[str]:
    cards = cards_of(mask_or_cards) if isinstance(mask_or_cards, int) else mask_or_cards
    return [str(Card(c)) for c in cards]


def rules_json(rules: RuleSet) -> dict[str, Any]:
    """The rule set as :meth:`RuleSet.to_dict` writes it, with its number of seats."""
    return {**rules.to_dict(), "seats": rules.seats}


def observation_json(obs: Observation) -> dict[str, Any]:
    """What a seat sees, field by field as ``protocol/BOTS.md`` documents it."""
    winning = obs.trick_winner_so_far()
    return {
        "seat": obs.seat,
        "seats": obs.seats,
        "partner": obs.partner,
        "variant": obs.rules.variant.value,
        "phase": obs.phase.value,
        "round": obs.number,
        "dealer": obs.dealer,
        "to_act": obs.to_act,
        "hand": _cards(obs.hand),
        "legal": [action_word(a) for a in obs.legal],
        "turned": None if obs.turned is None else str(obs.turned),
        "bids": [{"seat": seat, "action": action_word(bid)} for seat, bid in obs.bids],
        "trump": None if obs.trump < 0 else trump_letter(obs.trump),
        "taker": obs.taker,
        "contract": obs.contract,
        "multiplier": obs.multiplier,
        "leader": obs.leader,
        "trick": _cards(obs.trick),
        "winning": -1 if winning is None else winning,
        "tricks": [t.to_json() for t in obs.tricks],
        "played": _cards(obs.played),
        "declared": [
            None if anns is None else [a.to_json(seat) for a in anns]
            for seat, anns in enumerate(obs.declared[: obs.seats])
        ],
        "belote": [{"seat": seat, "card": str(c)} for seat, c in obs.belote],
        "voids": [_cards(m) for m in obs.voids[: obs.seats]],
        "shown": [_cards(m) for m in obs.shown[: obs.seats]],
        "unseen": _cards(obs.unseen()),
        "masters": _cards(obs.masters()),
        "scores": list(obs.scores),
        "target": obs.target,
        "pending": obs.pending,
        "open_deck": [None if c is None else str(c) for c in obs.open_deck],
    }


def encode(message: dict[str, Any]) -> bytes:
    """One line of the protocol: compact JSON, ASCII only, and a newline."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def hello_message(options: dict[str, Any]) -> dict[str, Any]:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "options": options}


def new_game_message(rules: RuleSet, seat: int) -> dict[str, Any]:
    return {"type": "new_game", "seat": seat, "rules": rules_json(rules)}


def new_round_message(obs: Observation) -> dict[str, Any]:
    return {"type": "new_round", "observation": observation_json(obs)}


def decide_message(ident: int, obs: Observation, seed: int, seconds: float) -> dict[str, Any]:
    return {
        "type": "decide",
        "id": ident,
        "seed": seed,
        "seconds": round(seconds, 3),
        "observation": observation_json(obs),
    }


QUIT = {"type": "quit"}


def read_hello(line: bytes, command: Sequence[str]) -> tuple[str, str, dict[str, Any]]:
    """The program's name, version and declared options from its ``hello`` line."""
    data = _json(line, command)
    name, version, options = data.get("name"), data.get("version", ""), data.get("options", {})
    if data.get("type") != "hello" or data.get("protocol") != PROTOCOL_VERSION:
        raise ProgramGarbage(
            f"expected hello with protocol {PROTOCOL_VERSION}, got {_show(line)}", command
        )
    if not isinstance(name, str) or not name or not isinstance(version, str):
        raise ProgramGarbage(f"hello needs a name (and a version) as text: {_show(line)}", command)
    if not isinstance(options, dict):
        raise ProgramGarbage(f"hello's options are not an object: {_show(line)}", command)
    return name, version, options


def read_action(line: bytes, ident: int, obs: Observation, command: Sequence[str]) -> Action:
    """The legal action of the program's answer to the decision ``ident``."""
    data = _json(line, command)
    if data.get("type") != "action" or data.get("id") != ident:
        raise ProgramGarbage(f"expected the action of decision {ident}, got {_show(line)}", command)
    word = data.get("action")
    if not isinstance(word, str):
        raise ProgramGarbage(f"an action is text: {_show(line)}", command)
    try:
        action = parse_action_word(word)
    except ValueError as exc:
        raise ProgramGarbage(str(exc), command) from None
    if action not in obs.legal:
        legal = ", ".join(action_word(a) for a in obs.legal)
        raise ProgramIllegal(f"answered illegal {word!r} (legal: {legal})", command)
    for legal_action in obs.legal:  # the engine's own object, as call_bot returns it
        if legal_action == action:
            return legal_action
    return action  # pragma: no cover - found above


def _json(line: bytes, command: Sequence[str]) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError:
        raise ProgramGarbage(f"wrote a line that is not JSON: {_show(line)}", command) from None
    if not isinstance(data, dict):
        raise ProgramGarbage(f"wrote JSON that is not an object: {_show(line)}", command)
    return data


def _show(line: bytes) -> str:
    text = line.decode("utf-8", "replace").rstrip("\n")
    return repr(text if len(text) <= 80 else text[:77] + "...")


# -- one running program -----------------------------------------------------------------


class _Program:
    """A started program: its pipes, a line buffer, and reads and writes under deadlines."""

    def __init__(self, command: Sequence[str], options: dict[str, Any], deadline: float) -> None:
        self.command = tuple(command)
        try:
            # A process group of its own: the table stops it (quit, then the end of its
            # input), not a Ctrl-C typed at the terminal, which would leave it a traceback
            # to print over the table's last words while the table closes (BOTS.md: it
            # exits at the end of its input, whatever ends the table).
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                process_group=0 if os.name == "posix" else None,
            )  # fmt: skip
        except OSError as exc:
            raise ProgramCrashed(f"could not be started: {exc}", command) from None
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._selector = selectors.DefaultSelector()
        self._buffer = b""
        self.next_id = 1
        _RUNNING.add(self)
        try:
            self.write(encode(hello_message(options)), deadline)
            self.name, self.version, self.options = read_hello(self.read_line(deadline), command)
        except BaseException:
            self.stop()
            raise

    def write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = os.write(self._in, view)
            except BlockingIOError:
                self._wait(self._in, selectors.EVENT_WRITE, deadline, "read its input")
                continue
            except (BrokenPipeError, OSError):
                raise ProgramCrashed(self._gone("closed its input"), self.command) from None
            view = view[sent:]

    def read_line(self, deadline: float) -> bytes:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE:
                raise ProgramGarbage(f"wrote a line over {MAX_LINE} bytes", self.command)
            try:
                chunk = os.read(self._out, 65536)
            except BlockingIOError:
                self._wait(self._out, selectors.EVENT_READ, deadline, "answer")
                continue
            except OSError:
                chunk = b""
            if not chunk:
                raise ProgramCrashed(self._gone("closed its output"), self.command)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _wait(self, fd: int, event: int, deadline: float, what: str) -> None:
        remaining = deadline - time.monotonic()
        if remaining > 0:
            self._selector.register(fd, event)
            try:
                if self._selector.select(remaining):
                    return
            finally:
                self._selector.unregister(fd)
        raise ProgramTimedOut(f"did not {what} in time", self.command)

    def _gone(self, what: str) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.process.wait(timeout=0.5)
            return f"{what}: it exited with status {code}"
        return what

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and not self._buffer

    def stop(self, *, polite: bool = False) -> None:
        """End the program (``polite``: say ``quit`` first and let it exit)."""
        _RUNNING.discard(self)
        if polite and self.process.poll() is None:
            with contextlib.suppress(ProgramError):
                self.write(encode(QUIT), time.monotonic() + 0.2)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=0.5)
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=2.0)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._selector.close()


_RUNNING: weakref.WeakSet[_Program] = weakref.WeakSet()
_IDLE: dict[tuple[str, ...], list[_Program]] = {}
_IDLE_LOCK = threading.Lock()


def _pool_key(command: Sequence[str], options: dict[str, Any]) -> tuple[str, ...]:
    return (*command, json.dumps(options, sort_keys=True))


def _take_idle(key: tuple[str, ...]) -> _Program | None:
    while True:
        with _IDLE_LOCK:
            idle = _IDLE.get(key)
            if not idle:
                return None
            program = idle.pop()
        if program.alive:
            return program
        program.stop()


def _give_back(key: tuple[str, ...], holder: list[_Program | None]) -> None:
    """A bot is done: its program, when healthy, waits in the pool for the next bot."""
    program, holder[0] = holder[0], None
    if program is None:
        return
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(key, [])
        if program.alive and len(idle) < IDLE_PER_COMMAND:
            idle.append(program)
            return
    program.stop()


@atexit.register
def stop_all() -> None:
    """Stop every program this process started (idle or not)."""
    with _IDLE_LOCK:
        _IDLE.clear()
    for program in list(_RUNNING):
        program.stop(polite=True)


# -- the bot -----------------------------------------------------------------------------


class ProgramBot:
    """A bot program (``cmd``, split as a shell would, run without one) seated as a bot.

    ``restarts`` bounds how many times a program that failed is started again for this bot;
    ``startup`` is how long it has to answer ``hello`` when the bot is made. Every other
    option goes to the program in ``hello``, and must be one the program declares.
    """

    def __init__(
        self, cmd: str, restarts: int = 3, startup: float = STARTUP_SECONDS, **options: Any
    ) -> None:
        if not isinstance(cmd, str) or not shlex.split(cmd):
            raise ProgramCrashed("no command (exec:cmd=PROGRAM)", ())
        self.command = tuple(shlex.split(cmd))
        self.options = options
        self.restarts = restarts
        self.restarted = 0
        self._key = _pool_key(self.command, options)
        self._holder: list[_Program | None] = [None]
        self._finalizer = weakref.finalize(self, _give_back, self._key, self._holder)
        program = _take_idle(self._key) or _Program(
            self.command, options, time.monotonic() + startup
        )
        self._holder[0] = program
        self.name, self.version = program.name, program.version
        unknown = sorted(set(options) - set(program.options))
        if unknown:
            self.close()
            declared = ", ".join(sorted(program.options)) or "none"
            raise ProgramGarbage(
                f"has no option {', '.join(unknown)} (its options: {declared})", self.command
            )
        self._context: list[bytes] = []
        """``new_game`` and the last ``new_round``: what a restarted program is told again."""
        self._unsent: list[bytes] = []
        """Notices not written yet: they go with the next decision, under its deadline."""

    def new_game(self, rules: RuleSet, seat: int) -> None:
        line = encode(new_game_message(rules, seat))
        self._context = [line]
        self._unsent = [line]

    def new_round(self, observation: Observation) -> None:
        line = encode(new_round_message(observation))
        self._context = [*self._context[:1], line]
        self._unsent.append(line)

    def decide(
        self, observation: Observation, rng: random.Random, deadline_s: float | None = None
    ) -> Action:
        seconds = DECISION_SECONDS if deadline_s is None else deadline_s
        deadline = time.monotonic() + seconds
        seed = rng.getrandbits(32)
        program = self._program(deadline)
        try:
            ident = program.next_id
            program.next_id += 1
            lines = [*self._unsent, encode(decide_message(ident, observation, seed, seconds))]
            self._unsent = []
            program.write(b"".join(lines), deadline)
            return read_action(program.read_line(deadline), ident, observation, self.command)
        except ProgramIllegal:
            raise
        except ProgramError:
            self._holder[0] = None
            program.stop()
            raise

    def _program(self, deadline: float) -> _Program:
        program = self._holder[0]
        if program is not None:
            return program
        if self.restarted >= self.restarts:
            raise ProgramCrashed(f"stopped for good after {self.restarted} restarts", self.command)
        self.restarted += 1
        program = _Program(self.command, self.options, deadline)
        self._holder[0] = program
        self._unsent = list(self._context)
        return program

    def close(self) -> None:
        """Done with this bot: its program waits in the pool for the next one."""
        self._finalizer()


def running() -> Iterator[int]:
    """The process ids of the programs running now (idle ones included), for tests."""
    return (p.process.pid for p in list(_RUNNING) if p.process.poll() is None)


# -- the vector of a whole exchange ------------------------------------------------------

VECTOR_HELLO = {
    "type": "hello",
    "protocol": PROTOCOL_VERSION,
    "name": "first-legal",
    "version": "1.0",
    "options": {},
}
"""The ``hello`` of the vector's program, which plays the first legal action."""
VECTOR_SEED = 7
VECTOR_SECONDS = 2.0


class _FirstLegal:
    def decide(self, observation: Observation, rng: Any) -> Action:
        return observation.legal[0]


class _Recording:
    """Seat 0 of the vector's table: the lines :class:`ProgramBot` would exchange with a
    program that plays the first legal action, written down instead of sent."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = [
            ("table", hello_message({})),
            ("program", VECTOR_HELLO),
        ]
        self.next_id = 1

    def new_game(self, rules: RuleSet, seat: int) -> None:
        self.lines.append(("table", new_game_message(rules, seat)))

    def new_round(self, observation: Observation) -> None:
        self.lines.append(("table", new_round_message(observation)))

    def decide(self, observation: Observation, rng: Any, deadline_s: float | None = None) -> Action:
        seconds = DECISION_SECONDS if deadline_s is None else deadline_s
        ident, self.next_id = self.next_id, self.next_id + 1
        self.lines.append(
            ("table", decide_message(ident, observation, rng.getrandbits(32), seconds))
        )
        action = observation.legal[0]
        self.lines.append(
            ("program", {"type": "action", "id": ident, "action": action_word(action)})
        )
        return action


def vector_table(
    seat0: Any, rules: RuleSet | None = None
) -> tuple[RuleSet, list[Any], list[Any], int, Any]:
    """The vector's table: ``seat0`` and three first-legal bots on one classic deal of
    :data:`VECTOR_SEED` (``play_table``'s arguments, its players wrapped by the caller)."""
    rules = rules or CLASSIC.with_(target=1)  # one round is the whole game
    dealer, next_deck = board_decks(VECTOR_SEED, 0)
    players = [SafePlayer(seat0, "program", deadline_s=VECTOR_SECONDS)]
    players += [SafePlayer(_FirstLegal()) for _ in range(3)]
    rngs = [random.Random(f"bots-exchange:{seat}") for seat in range(4)]
    return rules, players, rngs, dealer, next_deck


def exchange_vector() -> str:
    """``protocol/vectors/bots-exchange.jsonl``: every line between a table and a program
    that plays the first legal action, for a whole game of one round (``target=1``). Each
    line of the file is ``{"from": "table" | "program", "line": message}``; the protocol's
    bytes of a message are :func:`encode`'s."""
    recording = _Recording()
    rules, players, rngs, dealer, next_deck = vector_table(recording)
    play_table(rules, players, rngs, dealer, next_deck)
    recording.lines.append(("table", QUIT))
    return "".join(encode({"from": who, "line": line}).decode() for who, line in recording.lines)


if __name__ == "__main__":
    import sys

    sys.stdout.write(exchange_vector())
