"""Bot-vs-bot matches on duplicate boards, in-process, over several processes or on a Dask
distributed cluster.

A board is one deal: a deck order and a dealer. With four seats it is played at two
tables: bot A on seats 0 and 2 at the first, on seats 1 and 3 at the second, with the same
cards; the board score is A's net points (A's round score minus B's) summed over both
tables, which removes most of the luck of the deal.

With two or three seats (no teams) the deal rotates through every seat: table ``t`` (of 2
or 3) deals the same deck with the dealer moved on by ``t`` seats, A on seat 0 and B on the
other seats, so that A plays each hand once. A's net at a table is its round score minus
B's (with three seats: minus the mean of B's two scores).

Everything random derives from ``(seed, board)``: the board's decks and dealer, and each
bot's generator (``(seed, board, table, seat)``). A board's result therefore does not
depend on which process or machine played it, and ``--jobs`` or ``--cluster`` change only
the speed. On a cluster (``pip install 'belote-p2p[cluster]'``, the project and the bots
installed on every worker) each chunk of boards is one task; the scheduler runs again the
tasks of a worker lost before it answered, so a lost worker costs only its boards' time.

When everybody passes (twice in classic, once in coinche) the table redeals, as the rules
say, with the next dealer and the next deck of the board's deck sequence; both tables draw
from the same sequence, so a table that redeals plays the deck the other table would have
played after its own redeal. After :data:`MAX_DEALS` deals without a contract the table
scores 0.
"""

from __future__ import annotations

import importlib
import math
import random
import signal
import time
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import RuleSet, rule_set
from belote_p2p.i18n import _

from .bots import BotError, FallbackCounts, SafePlayer, bounds_its_time, load_bots, make_bot
from .hookspecs import Bot, BotInfo

MAX_DEALS = 16
BOT_DEADLINE = 10.0
"""Seconds a decision for a bot that bounds its own time (an exec bot): ``--bot-deadline``."""
Z95 = 1.959963984540054


def board_rng(seed: int, board: int) -> random.Random:
    return random.Random(f"belote-arena:{seed}:{board}")


def bot_rng(seed: int, board: int, table: int, seat: int) -> random.Random:
    return random.Random(f"belote-arena:{seed}:{board}:{table}:{seat}")


def board_decks(
    seed: int, board: int, rules: RuleSet | None = None
) -> tuple[int, Callable[[], list[Card]]]:
    """The board's first dealer and a function drawing its successive decks (of ``rules``'
    seats and cards; four seats and 32 cards by default)."""
    rng = board_rng(seed, board)
    seats = 4 if rules is None else rules.seats
    cards = CARDS if rules is None else rules.deck_cards
    dealer = rng.randrange(seats)
    decks: list[list[Card]] = []

    def deck_at(i: int) -> list[Card]:
        while len(decks) <= i:
            d = list(cards)
            rng.shuffle(d)
            decks.append(d)
        return decks[i]

    counter = iter(range(MAX_DEALS))
    return dealer, lambda: deck_at(next(counter))


@dataclass(frozen=True, slots=True)
class TableResult:
    """One table of a board: A's and B's round scores, and how many deals it took."""

    score_a: float
    score_b: float
    """B's round score (with three seats, the mean of B's two seats' scores)."""
    deals: int
    a_took: bool | None
    """Whether A held the contract (None when no contract was played; False in
    two-handed, where nobody takes)."""

    @property
    def net(self) -> float:
        return self.score_a - self.score_b


BoardTimes = tuple[list[float], list[float]]
"""A board's decision times in seconds: A's, then B's."""


@dataclass(frozen=True, slots=True)
class BoardResult:
    board: int
    tables: tuple[TableResult, ...]
    """Two tables with four seats; one per seat (the deal rotated) with two or three."""
    times: BoardTimes | None = field(default=None, compare=False, repr=False)
    """Each side's decision times on this board (wall seconds, or a record's CPU seconds),
    where they were measured: a record keeps them with the board."""

    @property
    def score(self) -> float:
        return sum(t.net for t in self.tables)

    @property
    def bid_alike(self) -> bool:
        """Four seats: whether the same hands took at both tables, each bot bidding them in
        turn (the board's points then come from the card play); False when the other hands
        took, when a table needed another deal, or with two or three seats."""
        if len(self.tables) != 2:
            return False
        first, second = self.tables
        return (
            first.a_took is not None
            and second.a_took is not None
            and first.deals == second.deals
            and first.a_took != second.a_took
        )


@dataclass
class MatchResult:
    """The boards of a match between A and B, in board order, and the fallbacks each made."""

    bots: tuple[str, str]
    variant: str
    seed: int
    boards: list[BoardResult]
    seconds: float = 0.0
    fallbacks: tuple[FallbackCounts, FallbackCounts] = field(
        default_factory=lambda: (FallbackCounts(), FallbackCounts())
    )
    decision_seconds: tuple[list[float], list[float]] | None = None
    played: int | None = None
    """How many of the boards this run played, where the others came from a record
    (``records.py``): the seconds and the speed are those boards'."""

    def summary(self) -> dict[str, Any]:
        scores = [b.score for b in self.boards]
        n = len(scores)
        timed = n if self.played is None else self.played
        mean, sd, half = mean_interval(scores)
        rounds = [t for b in self.boards for t in b.tables if t.a_took is not None]
        round_wins = sum(1.0 if t.net > 0 else 0.5 if t.net == 0 else 0.0 for t in rounds)
        round_rate = round_wins / len(rounds) if rounds else 0.5
        board_wins = sum(1.0 if x > 0 else 0.5 if x == 0 else 0.0 for x in scores)
        board_rate = board_wins / n if n else 0.5
        out: dict[str, Any] = {
            "bots": list(self.bots),
            "variant": self.variant,
            "seed": self.seed,
            "boards": n,
            "points_per_board": round(mean, 3),
            "sd": round(sd, 3),
            "ci95": [round(mean - half, 3), round(mean + half, 3)],
            "round_win_rate": round(round_rate, 4),
            "board_win_rate": round(board_rate, 4),
            "elo": round(elo(board_rate), 1),
            "elo_ci95": [round(elo(x), 1) for x in _rate_interval(board_rate, n)],
            "seconds": round(self.seconds, 3),
            "boards_per_second": round(timed / self.seconds, 1) if timed and self.seconds else None,
            "fallbacks": {
                self.bots[0]: self.fallbacks[0].to_json(),
                self.bots[1]: self.fallbacks[1].to_json(),
            },
        }
        if self.played is not None:
            out["played"] = self.played
        alike = [b.score for b in self.boards if b.bid_alike]
        if n and len(self.boards[0].tables) == 2:
            # Where the points a board came from: the boards whose hands took alike at both
            # tables (the card play) and the others (the bidding); the shares add up to
            # ``points_per_board``.
            other = sum(scores) - sum(alike)
            out["bid_alike"] = {"boards": len(alike), "points_per_board": round(sum(alike) / n, 3)}
            out["bid_differently"] = {
                "boards": n - len(alike),
                "points_per_board": round(other / n, 3),
            }
        if self.decision_seconds is not None:
            out["decision_s"] = {
                name: time_figures(times)
                for name, times in zip(self.bots, self.decision_seconds, strict=True)
                if times
            }
        return out


def time_figures(times: Sequence[float]) -> dict[str, Any]:
    """A bot's decision times, in seconds: how many, their median, mean, 99th percentile
    (the time that 99% of the decisions take at most, never above the largest) and the
    largest."""
    ordered = sorted(times)
    n = len(ordered)
    if not n:
        raise ValueError("no decision times")
    return {
        "decisions": n,
        "median": round(ordered[n // 2], 6),
        "mean": round(sum(ordered) / n, 6),
        "p99": round(ordered[min(n - 1, (99 * n) // 100)], 6),
        "max": round(ordered[-1], 6),
    }


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values``, their standard deviation and the half-width of the mean's
    95% interval (zeros for want of values)."""
    n = len(values)
    mean = sum(values) / n if n else 0.0
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n) if n else 0.0
    return mean, sd, half


def elo(p: float) -> float:
    """Elo difference from a win rate (ties counted half), clipped to ±800."""
    p = min(max(p, 1e-3), 1 - 1e-3)
    return max(-800.0, min(800.0, 400 * math.log10(p / (1 - p))))


def _rate_interval(p: float, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.5, 0.5)
    half = Z95 * math.sqrt(max(p * (1 - p), 0.0) / n)
    return (max(p - half, 0.0), min(p + half, 1.0))


# -- playing ------------------------------------------------------------------------------


Clock = Callable[[], float]
"""What a decision's time is read from: ``time.perf_counter`` (wall time, the default) or
``time.thread_time`` (the CPU time of the deciding thread, whatever the machine's load)."""


class _Timed:
    """Wraps a bot to record how long each of its decisions takes, on ``clock``."""

    def __init__(self, bot: Bot, times: list[float], clock: Clock = time.perf_counter) -> None:
        self.bot = bot
        self.times = times
        self.clock = clock
        self.own_time = bounds_its_time(bot)

    def decide(self, observation: Any, rng: random.Random, deadline_s: float | None = None) -> Any:
        t = self.clock()
        try:
            if self.own_time:
                return self.bot.decide(observation, rng, deadline_s=deadline_s)  # type: ignore[call-arg]
            return self.bot.decide(observation, rng)
        finally:
            self.times.append(self.clock() - t)

    def __getattr__(self, name: str) -> Any:  # new_game, new_round, close
        return getattr(self.bot, name)


def _players(
    specs: tuple[str, str],
    sides: Sequence[int],
    bots: dict[str, BotInfo] | None,
    counts: tuple[FallbackCounts, FallbackCounts] | None,
    times: tuple[list[float], list[float]] | None,
    deadline: float,
    clock: Clock = time.perf_counter,
) -> list[SafePlayer]:
    """A table's fresh players: seat ``s`` plays ``specs[sides[s]]``. An in-process bot runs
    without a deadline (its options bound its time, and a thread abandoned at a deadline
    would make results depend on the machine's load); a bot that bounds its own time (an
    exec bot) gets ``deadline`` seconds a decision."""
    players = []
    for side in sides:
        bot = make_bot(specs[side], bots)
        if times is not None:
            bot = _Timed(bot, times[side], clock)
        own = deadline if bounds_its_time(bot) else None
        player = SafePlayer(bot, name=specs[side], deadline_s=own)
        if counts is not None:
            player.counts = counts[side]
        players.append(player)
    return players


def play_table(
    rules: RuleSet,
    players: Sequence[SafePlayer],
    rngs: Sequence[random.Random],
    dealer: int,
    next_deck: Callable[[], list[Card]],
) -> tuple[State | None, int]:
    """Play one deal (redealing after a pass-out) to its end; the state and the deals used.
    Every player is closed at the end (an exec bot's program waits for the next table)."""
    state = State.new_game(rules.with_(first_dealer=dealer))
    for seat, player in enumerate(players):
        player.new_game(state.rules, seat)
    try:
        for deals in range(1, MAX_DEALS + 1):
            state = state.deal(next_deck())
            for seat, player in enumerate(players):
                if player.wants_new_round:
                    player.new_round(observe(state, seat))
            while state.phase is not Phase.DEAL and state.phase is not Phase.GAME_OVER:
                seat = state.to_act
                action = players[seat].decide(observe(state, seat), rngs[seat])
                state = state.apply(action)
            if state.history[-1].score is not None:
                return state, deals
        return None, MAX_DEALS
    finally:
        for player in players:
            player.close()


def play_game(rules: RuleSet, specs: Sequence[str], seed: int) -> State:
    """A whole game in this process, seat ``s`` played by the bot ``specs[s]`` (called
    directly: no deadline, no fallback), the deals and each seat's randomness drawn from
    ``seed``: one seed, one game (the coach's tests and benchmark play theirs so)."""
    bots = [make_bot(spec) for spec in specs]
    rngs = [random.Random(f"game:{seed}:{s}") for s in range(rules.seats)]
    deals = random.Random(f"game:{seed}")
    state = State.new_game(rules)
    while not state.is_over:
        deck = list(rules.deck_cards)
        deals.shuffle(deck)
        state = state.deal(deck)
        number = state.number
        while state.number == number and not state.is_over:
            seat = state.to_act
            state = state.apply(bots[seat].decide(observe(state, seat), rngs[seat]))
    return state


@dataclass(frozen=True, slots=True)
class PlayedTable:
    """One table of a board as it was played: who sat where and the game's state."""

    sides: tuple[int, ...]
    """Seat ``s`` was played by bot A (0) or B (1)."""
    state: State | None
    """The game after its round (its history holds any redeals before it); None when
    :data:`MAX_DEALS` deals found no contract."""
    deals: int

    def result(self) -> TableResult:
        """A's and B's round scores at this table."""
        if self.state is None:
            return TableResult(0, 0, self.deals, None)
        record = self.state.history[-1]
        assert record.score is not None
        score = record.score.score
        n = len(self.sides)
        if n == 4:
            team_a = self.sides.index(0) % 2  # A holds seats 0/2 or 1/3
            return TableResult(
                score[team_a], score[1 - team_a], self.deals, record.taker % 2 == team_a
            )
        b = sum(score[1:]) / (n - 1)  # A on seat 0, B on the others
        return TableResult(score[0], b, self.deals, record.taker == 0)


def board_tables(
    specs: tuple[str, str],
    rules: RuleSet,
    seed: int,
    board: int,
    bots: dict[str, BotInfo] | None = None,
    counts: tuple[FallbackCounts, FallbackCounts] | None = None,
    times: tuple[list[float], list[float]] | None = None,
    deadline: float = BOT_DEADLINE,
    clock: Clock = time.perf_counter,
) -> list[PlayedTable]:
    """Every table of one board, played again from ``(seed, board)`` alone; fresh bots at
    each table, so a board stands alone. ``times`` receives each side's decision times,
    read on ``clock``.

    With four seats, A sits on seats 0/2 at the first table and 1/3 at the second; with
    two or three, A sits on seat 0 and the dealer moves on a seat a table."""
    n = rules.seats
    dealer, _ = board_decks(seed, board, rules)
    tables = []
    for table in range(2 if n == 4 else n):
        _, next_deck = board_decks(seed, board, rules)
        if n == 4:
            sides, first = [(s + table) % 2 for s in range(4)], dealer
        else:
            sides, first = [0] + [1] * (n - 1), (dealer + table) % n
        players = _players(specs, sides, bots, counts, times, deadline, clock)
        rngs = [bot_rng(seed, board, table, seat) for seat in range(n)]
        state, deals = play_table(rules, players, rngs, first, next_deck)
        tables.append(PlayedTable(tuple(sides), state, deals))
    return tables


def play_board(
    specs: tuple[str, str],
    rules: RuleSet,
    seed: int,
    board: int,
    bots: dict[str, BotInfo] | None = None,
    counts: tuple[FallbackCounts, FallbackCounts] | None = None,
    times: tuple[list[float], list[float]] | None = None,
    deadline: float = BOT_DEADLINE,
    clock: Clock = time.perf_counter,
) -> BoardResult:
    """The scores of every table of one board (:func:`board_tables`)."""
    tables = board_tables(specs, rules, seed, board, bots, counts, times, deadline, clock)
    return BoardResult(board, tuple(t.result() for t in tables))


_Chunk = tuple[list[BoardResult], tuple[FallbackCounts, FallbackCounts]]
"""A chunk of boards played: the results (with their decision times where timed) and each
side's fallbacks."""


def _play_chunk(
    specs: tuple[str, str],
    variant: str,
    seed: int,
    boards: Sequence[int],
    timed: bool,
    deadline: float = BOT_DEADLINE,
) -> _Chunk:
    bots = load_bots()
    rules = rule_set(variant)
    counts = (FallbackCounts(), FallbackCounts())
    results = []
    for b in boards:
        times: BoardTimes | None = ([], []) if timed else None
        result = play_board(specs, rules, seed, b, bots, counts, times, deadline)
        results.append(result if times is None else replace(result, times=times))
    return results, counts


def _chunks(boards: Sequence[int], jobs: int) -> list[Sequence[int]]:
    n = len(boards)
    size = max(1, min(200, n // (jobs * 8) or 1))
    return [boards[i : i + size] for i in range(0, n, size)]


Progress = Callable[[str, int, int], None]
"""Told a match's label, the boards done and the boards in all, as a match goes."""


def run_match(
    specs: tuple[str, str],
    *,
    boards: int,
    variant: str = "classic",
    seed: int = 0,
    jobs: int = 1,
    progress: Progress | None = None,
    timed: bool = False,
    cluster: Any = None,
    deadline: float = BOT_DEADLINE,
    skip: Collection[int] = (),
    on_boards: Callable[[list[BoardResult]], None] | None = None,
) -> MatchResult:
    """Play ``boards`` duplicate boards of A (``specs[0]``) against B over ``jobs`` processes,
    or on ``cluster`` (a Dask ``distributed.Client``, see :func:`open_cluster`) when given.

    ``progress`` is told the match's label, the boards done and the boards in all, as each
    chunk of boards comes back and once at the start. ``deadline`` is the seconds a
    decision of a bot that bounds its own time (an exec bot). The boards in ``skip`` are
    not played (a record holds them already: ``records.py``); ``on_boards`` is given each
    chunk's boards as it comes back, in the order chunks finish."""
    rule_set(variant)
    known = load_bots()
    for spec in specs:
        make_bot(spec, known)  # fail early on a bad name or option
    start = time.perf_counter()
    results: list[BoardResult] = []
    counts = (FallbackCounts(), FallbackCounts())
    label = _("{a} vs {b}").format(a=specs[0], b=specs[1])
    todo = [b for b in range(boards) if b not in skip]
    if progress is not None:
        progress(label, 0, len(todo))
    if cluster is not None:
        jobs = max(1, sum(cluster.nthreads().values()))
    chunks = _chunks(todo, jobs)
    done: Generator[_Chunk, None, None]
    if cluster is not None:
        done = _on_cluster(cluster, specs, variant, seed, chunks, timed, deadline)
    elif jobs <= 1:
        done = (_play_chunk(specs, variant, seed, ch, timed, deadline) for ch in chunks)
    else:
        done = _on_processes(jobs, specs, variant, seed, chunks, timed, deadline)
    with closing(done):  # a match that stops (Ctrl-C, a record not written) stops its chunks
        for part, c in done:
            _merge(results, counts, part, c)
            if on_boards is not None:
                on_boards(part)
            if progress is not None:
                progress(label, len(results), len(todo))
    results.sort(key=lambda r: r.board)
    times = decision_times(results) if timed else None
    return MatchResult(specs, variant, seed, results, time.perf_counter() - start, counts, times)


def _on_processes(
    jobs: int,
    specs: tuple[str, str],
    variant: str,
    seed: int,
    chunks: list[Sequence[int]],
    timed: bool,
    deadline: float,
) -> Generator[_Chunk, None, None]:
    """The chunks played on ``jobs`` processes, in the order they finish. The processes
    ignore Ctrl-C, which this one hears. Whatever ends the match early (Ctrl-C, a chunk
    that failed, the caller done with it) ends them at once, with the chunks they were
    playing and the others: an executor's own shutdown would first play every chunk it
    was given, however long. A worker that dies (a bot's plugin that ends its process)
    fails the match with a :class:`BotError` naming its boards, never hangs it."""
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_hear_no_interrupt)
    futures = {
        pool.submit(_play_chunk, specs, variant, seed, ch, timed, deadline): ch for ch in chunks
    }
    try:
        for future in as_completed(futures):
            try:
                part = future.result()
            except BrokenProcessPool as exc:
                boards = futures[future]
                raise BotError(
                    _("a process playing boards {first} to {last} ended abruptly: a bot that "
                      "ends its process, a crash in compiled code or a lack of memory").format(
                        first=boards[0], last=boards[-1])
                ) from exc  # fmt: skip
            yield part
    finally:
        if not all(future.done() for future in futures):
            _end_workers(pool)  # the executor then fails every chunk left, none played
        pool.shutdown(wait=True)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool``'s processes now, in the middle of their chunks."""
    stop = getattr(pool, "terminate_workers", None)  # Python 3.14
    if stop is not None:
        stop()
        return
    for process in list((pool._processes or {}).values()):
        process.terminate()


def _hear_no_interrupt() -> None:
    """A worker's start: Ctrl-C reaches the whole foreground process group, and only the
    parent acts on it (by ending its workers). A handler that does nothing rather than
    ``SIG_IGN``, which the programs of exec bots would inherit: they still stop at Ctrl-C."""
    signal.signal(signal.SIGINT, _unheard)


def _unheard(signum: int, frame: object) -> None:
    """Ctrl-C in a worker: nothing (its parent ends it)."""


def _on_cluster(
    client: Any,
    specs: tuple[str, str],
    variant: str,
    seed: int,
    chunks: list[Sequence[int]],
    timed: bool,
    deadline: float,
) -> Generator[_Chunk, None, None]:
    """The chunks as tasks of a Dask cluster, in the order they finish. A task whose worker
    is lost is run again by the scheduler elsewhere; ``retries`` also runs again a task
    that failed on a worker (a broken connection, a worker out of memory)."""
    distributed = _distributed()
    futures = [
        client.submit(_play_chunk, specs, variant, seed, ch, timed, deadline, pure=False, retries=2)
        for ch in chunks
    ]
    try:
        for future in distributed.as_completed(futures):
            yield future.result()
    finally:
        client.cancel(futures)


def _distributed() -> Any:
    """Dask distributed, an optional dependency (untyped calls: a module of ``Any``)."""
    try:
        return importlib.import_module("distributed")
    except ImportError as exc:
        raise ValueError(_("--cluster needs Dask: pip install 'belote-p2p[cluster]'")) from exc


@contextmanager
def open_cluster(address: str, workers: int = 1, *, processes: bool = True) -> Iterator[Any]:
    """A Dask ``distributed.Client`` for the arena: connected to the scheduler at
    ``address``, or for ``"local"`` to a ``LocalCluster`` of ``workers`` single-threaded
    workers started here (``processes=False``: in this process, as threads)."""
    distributed = _distributed()
    if address != "local":
        with distributed.Client(address) as client:
            yield client
        return
    with (
        distributed.LocalCluster(
            n_workers=max(1, workers),
            threads_per_worker=1,
            processes=processes,
            dashboard_address=":0",  # any free port: never in the way of another cluster
        ) as local,
        distributed.Client(local) as client,
    ):
        yield client


def _merge(
    results: list[BoardResult],
    counts: tuple[FallbackCounts, FallbackCounts],
    part: list[BoardResult],
    c: tuple[FallbackCounts, FallbackCounts],
) -> None:
    results.extend(part)
    counts[0].add(c[0])
    counts[1].add(c[1])


def decision_times(boards: Iterable[BoardResult]) -> BoardTimes:
    """Each side's decision times over ``boards`` (those that have them)."""
    times: BoardTimes = ([], [])
    for board in boards:
        if board.times is not None:
            times[0].extend(board.times[0])
            times[1].extend(board.times[1])
    return times
