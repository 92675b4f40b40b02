"""Finding installed bots, and calling them safely.

Bots come from pluggy plugins (:mod:`belote_p2p.players.hookspecs`) announced in the entry-point
group ``belote_p2p.bots``. :func:`call_bot` runs one decision, in-process (the arena) or in
a worker thread under a deadline (live tables), and replaces an illegal answer, an
exception or a timeout by a seeded random legal action, logged and counted.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, cast

import pluggy

from belote_p2p.errors import BeloteError
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import Action, Bid
from belote_p2p.game.observation import Observation
from belote_p2p.game.rules import RuleSet
from belote_p2p.i18n import ngettext

from . import hookspecs
from .hookspecs import ENTRY_POINT_GROUP, PROJECT_NAME, Bot, BotInfo

log = logging.getLogger(__name__)

BUILTIN_MODULE = "belote_bots"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class BotError(BeloteError):
    """Bots could not be loaded or found (duplicate or unknown name, bad option)."""


class BotFailed(BotError):
    """A bot failed one decision (an exec bot's program crashed, for one): :func:`call_bot`
    plays a random legal action instead and counts an error."""


class BotTimedOut(BotFailed):
    """A bot that bounds its own time did not answer by the deadline: counted as a timeout."""


class BotAnsweredIllegal(BotFailed):
    """A bot's answer was no legal action: counted as illegal."""


# -- discovery ----------------------------------------------------------------------------


def make_plugin_manager(*, entry_points: bool = True, builtin: bool = True) -> pluggy.PluginManager:
    """A plugin manager with the bot hook, the installed plugins and the built-in bots.

    ``builtin`` registers :mod:`belote_bots` directly when no entry point brought it in
    (running from a source tree that is not installed).
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    if entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    if builtin and pm.get_plugin("builtin") is None:
        module = _import_builtin()
        if module is not None and not pm.is_registered(module):
            pm.register(module, name="builtin")
    pm.check_pending()
    return pm


def _import_builtin() -> ModuleType | None:
    try:
        return importlib.import_module(BUILTIN_MODULE)
    except ImportError:
        return None


def _packages(pm: pluggy.PluginManager) -> dict[int, str]:
    """Plugin object id -> the distribution (name and version) that provides it."""
    out: dict[int, str] = {}
    for plugin, dist in pm.list_plugin_distinfo():
        out[id(plugin)] = f"{dist.project_name} {dist.version}"
    return out


def collect_bots(pm: pluggy.PluginManager) -> dict[str, BotInfo]:
    """Every bot the registered plugins provide, by name; ``BotError`` on a duplicate name."""
    packages = _packages(pm)
    bots: dict[str, BotInfo] = {}
    for impl in pm.hook.belote_bots.get_hookimpls():
        plugin = impl.plugin
        package = packages.get(id(plugin)) or pm.get_name(plugin) or impl.plugin_name
        result = cast("Iterable[object] | None", impl.function())
        for info in result or ():
            if not isinstance(info, BotInfo):
                raise BotError(f"plugin {package} returned {info!r}, not a BotInfo")
            if not _NAME.match(info.name):
                raise BotError(f"plugin {package}: bad bot name {info.name!r}")
            if info.name in bots:
                raise BotError(
                    f"two bots named {info.name!r}: from {bots[info.name].package} and {package}"
                )
            bots[info.name] = replace(info, package=info.package or package)
    return bots


def load_bots(pm: pluggy.PluginManager | None = None) -> dict[str, BotInfo]:
    """Installed bots by name (the built-ins included)."""
    return collect_bots(pm if pm is not None else make_plugin_manager())


def get_bot(name: str, bots: dict[str, BotInfo] | None = None) -> BotInfo:
    """The installed bot called ``name``; ``BotError`` naming the known ones otherwise."""
    bots = load_bots() if bots is None else bots
    try:
        return bots[name]
    except KeyError:
        raise BotError(f"no bot named {name!r}; installed: {', '.join(sorted(bots))}") from None


def _split(text: str, sep: str) -> list[str]:
    """``text`` cut at each ``sep`` outside single or double quotes (quotes kept)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == sep:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quote:
        raise BotError(f"unclosed quote {quote} in {text!r}")
    parts.append("".join(current))
    return parts


def split_specs(text: str) -> list[str]:
    """``"exec:cmd='node bot.js',rules"`` -> ``["exec:cmd='node bot.js'", "rules"]``: a list
    of bot specs cut at the commas outside quotes (empty ones dropped)."""
    return [s.strip() for s in _split(text, ",") if s.strip()]


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:iterations=40:seconds=0.5"`` -> ``("pimc", {"iterations": 40, "seconds": 0.5})``.

    Values are read as int, then float, then kept as text. A value in single or double
    quotes is text, and may hold ``:`` and ``,`` (``exec:cmd='python3 bot.py --x=1:2'``).
    """
    name, *parts = _split(spec.strip(), ":")
    options: dict[str, Any] = {}
    for part in parts:
        key, sep, text = part.partition("=")
        if not sep or not key:
            raise BotError(f"bad option {part!r} in {spec!r} (expected key=value)")
        value: Any = text
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            value = text[1:-1]
        else:
            for kind in (int, float):
                try:
                    value = kind(text)
                    break
                except ValueError:
                    pass
        options[key.strip()] = value
    return name, options


def _check_options(name: str, create: Callable[..., Any], options: dict[str, Any]) -> None:
    """A number option given something else (``pimc:iterations=abc``) is refused now, not
    in the middle of a match."""
    try:
        parameters = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return
    for key, value in options.items():
        parameter = parameters.get(key)
        if parameter is None or parameter.default is inspect.Parameter.empty:
            continue
        default = parameter.default
        wrong = (type(default) is int and type(value) is not int) or (
            type(default) is float and type(value) not in (int, float)
        )
        if wrong:
            kind = "a whole number" if type(default) is int else "a number"
            raise BotError(f"bot {name!r}: option {key}={value!r} is not {kind}")


def make_bot(spec: str, bots: dict[str, BotInfo] | None = None) -> Bot:
    """A fresh bot from a spec ``name[:key=value...]``."""
    name, options = parse_spec(spec)
    info = get_bot(name, bots)
    _check_options(name, info.factory, options)
    try:
        return info.create(**options)
    except TypeError as exc:
        raise BotError(f"bot {name!r} rejects options {options}: {exc}") from None


# -- safe calling -------------------------------------------------------------------------


@dataclass(slots=True)
class FallbackCounts:
    """How often a bot's answer was replaced, by cause."""

    decisions: int = 0
    illegal: int = 0
    errors: int = 0
    timeouts: int = 0

    @property
    def fallbacks(self) -> int:
        return self.illegal + self.errors + self.timeouts

    def add(self, other: FallbackCounts) -> None:
        self.decisions += other.decisions
        self.illegal += other.illegal
        self.errors += other.errors
        self.timeouts += other.timeouts

    def to_json(self) -> dict[str, int]:
        return {
            "decisions": self.decisions,
            "illegal": self.illegal,
            "errors": self.errors,
            "timeouts": self.timeouts,
        }


def fallback_text(counts: Mapping[str, int]) -> str:
    """``2 illegal actions, 0 errors, 1 timeout of 310 decisions``, in the reader's
    language, from :meth:`FallbackCounts.to_json`."""
    illegal, errors = counts.get("illegal", 0), counts.get("errors", 0)
    timeouts, decisions = counts.get("timeouts", 0), counts.get("decisions", 0)
    failures = ", ".join(
        (
            ngettext("{n} illegal action", "{n} illegal actions", illegal).format(n=illegal),
            ngettext("{n} error", "{n} errors", errors).format(n=errors),
            ngettext("{n} timeout", "{n} timeouts", timeouts).format(n=timeouts),
        )
    )
    return ngettext("{failures} of {n} decision", "{failures} of {n} decisions", decisions).format(
        failures=failures, n=decisions
    )


def failed(counts: object) -> bool:
    """Whether fallback counts (as :meth:`FallbackCounts.to_json` writes them) hold a failure."""
    return isinstance(counts, Mapping) and any(
        counts.get(k) for k in ("illegal", "errors", "timeouts")
    )


def legal_answer(answer: object, legal: Iterable[Action]) -> Action | None:
    """The legal action ``answer`` stands for (a card may come as a plain int), or None."""
    legal = tuple(legal)
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        if 0 <= answer < 32 and CARDS[answer] in legal:
            return CARDS[answer]
        return None
    if isinstance(answer, Bid):
        for action in legal:
            if action == answer:
                return action
    return None


_OWN_TIME: dict[type, bool] = {}


def bounds_its_time(bot: Bot) -> bool:
    """Whether ``bot.decide`` takes the caller's deadline as a keyword ``deadline_s`` (an
    exec bot bounds its reads with it): such a bot runs in the caller's thread, never
    abandoned in a worker, and raises :class:`BotTimedOut` when the time is up."""
    kind = type(bot)
    known = _OWN_TIME.get(kind)
    if known is None:
        try:
            known = "deadline_s" in inspect.signature(bot.decide).parameters
        except (TypeError, ValueError):
            known = False
        _OWN_TIME[kind] = known
    return known


def fallback_rng(obs: Observation) -> random.Random:
    """A generator seeded from the decision point, independent of the bot's own ``rng``."""
    seed = ((obs.number * 4 + obs.seat) << 40) ^ (obs.played << 6) ^ len(obs.bids)
    return random.Random(seed)


class _Outcome:
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: object = None
        self.error: BaseException | None = None


def _run(bot: Bot, obs: Observation, rng: random.Random, out: _Outcome) -> None:
    try:
        out.value = bot.decide(obs, rng)
    except BaseException as exc:  # a bot's failure of any kind becomes a fallback
        out.error = exc
    finally:
        out.done.set()


def call_bot(
    bot: Bot,
    obs: Observation,
    rng: random.Random,
    deadline_s: float | None = None,
    *,
    counts: FallbackCounts | None = None,
    fallback: random.Random | None = None,
    name: str = "bot",
    threaded: bool = False,
) -> Action:
    """Ask ``bot`` for an action; never fails while ``obs.legal`` is not empty.

    With ``deadline_s`` the bot runs in a daemon worker thread; past the deadline its
    thread is abandoned (its late answer is ignored). Without, it runs in this thread.
    ``threaded``: this thread is already a worker whose caller abandons it past
    ``deadline_s`` (a live peer's, :class:`~belote_p2p.players.player.BotPlayer`, and
    calls :func:`timed_out` then): the bot runs here, and only a bot that bounds its own
    time is given the deadline. An illegal answer, an exception or a timeout is replaced
    by a random legal action drawn from ``fallback`` (default :func:`fallback_rng`),
    logged as a warning and counted.
    """
    if not obs.legal:
        raise ValueError(f"seat {obs.seat} has no legal action to choose from")
    if counts is not None:
        counts.decisions += 1
    own_time = bounds_its_time(bot)
    if deadline_s is None or own_time or threaded:
        # The arena's path (no thread and no event, little more than a plain call), that
        # of a bot bounding its own time under the caller's deadline (an exec bot), and that
        # of a live peer's worker thread (one thread per decision, not two).
        try:
            if own_time:
                answer: object = bot.decide(obs, rng, deadline_s=deadline_s)  # type: ignore[call-arg]
            else:
                answer = bot.decide(obs, rng)
        except BotTimedOut as exc:
            return _fallback(obs, fallback, counts, "timeouts", f"failed: {exc}", name)
        except BotAnsweredIllegal as exc:
            return _fallback(obs, fallback, counts, "illegal", f"failed: {exc}", name)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and not threaded:
                raise  # in the caller's own thread, Ctrl-C is the caller's
            # anything else (a SystemExit too) is the bot's failure, as in a worker thread
            return _fallback(obs, fallback, counts, "errors", f"raised {exc!r}", name)
    else:
        out = _Outcome()
        worker = threading.Thread(
            target=_run, args=(bot, obs, rng, out), name=f"bot-{name}", daemon=True
        )
        worker.start()
        if not out.done.wait(max(deadline_s, 0.0)):
            return timed_out(obs, deadline_s, fallback, counts, name)
        if out.error is not None:
            return _fallback(obs, fallback, counts, "errors", f"raised {out.error!r}", name)
        answer = out.value
    if type(answer) is Card and answer in obs.legal:
        return answer
    action = legal_answer(answer, obs.legal)
    if action is None:
        return _fallback(obs, fallback, counts, "illegal", f"answered illegal {answer!r}", name)
    return action


def timed_out(
    obs: Observation,
    deadline_s: float,
    fallback: random.Random | None,
    counts: FallbackCounts | None,
    name: str,
) -> Action:
    """The action of a bot that did not answer within ``deadline_s`` (its thread is
    abandoned): a random legal one, logged and counted as a timeout."""
    why = f"timed out after {deadline_s:.3f} s"
    return _fallback(obs, fallback, counts, "timeouts", why, name)


def _fallback(
    obs: Observation,
    rng: random.Random | None,
    counts: FallbackCounts | None,
    cause: str,
    why: str,
    name: str,
) -> Action:
    log.warning("bot %s %s (seat %d); playing a random legal action", name, why, obs.seat)
    if counts is not None:
        setattr(counts, cause, getattr(counts, cause) + 1)
    return (rng or fallback_rng(obs)).choice(obs.legal)


@dataclass
class SafePlayer:
    """A bot, its name and deadline, its fallback generator and its fallback counts."""

    bot: Bot
    name: str = "bot"
    deadline_s: float | None = None
    fallback: random.Random | None = None
    counts: FallbackCounts = field(default_factory=FallbackCounts)

    def decide(self, obs: Observation, rng: random.Random, *, threaded: bool = False) -> Action:
        """:func:`call_bot` with this player's deadline (``threaded``: see there)."""
        return call_bot(
            self.bot,
            obs,
            rng,
            self.deadline_s,
            counts=self.counts,
            fallback=self.fallback,
            name=self.name,
            threaded=threaded,
        )

    def timed_out(self, obs: Observation) -> Action:
        """The answer to a ``threaded`` decision abandoned past the deadline."""
        return timed_out(obs, self.deadline_s or 0.0, self.fallback, self.counts, self.name)

    def new_game(self, rules: RuleSet, seat: int) -> None:
        self._notify("new_game", rules, seat)

    @property
    def wants_new_round(self) -> bool:
        return getattr(self.bot, "new_round", None) is not None

    def new_round(self, obs: Observation) -> None:
        self._notify("new_round", obs)

    def close(self) -> None:
        """The bot's game is over: a bot with a ``close`` (an exec bot) is told."""
        self._notify("close")

    def _notify(self, hook: str, *args: object) -> None:
        method = getattr(self.bot, hook, None)
        if method is None:
            return
        try:
            method(*args)
        except Exception as exc:
            log.warning("bot %s raised %r in %s", self.name, exc, hook)
            self.counts.errors += 1
