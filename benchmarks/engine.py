"""Engine throughput: whole random rounds, on the checked engine and on the fast path, side by
side with OpenSpiel's ``python_belote`` when it is importable.

    python benchmarks/engine.py [--seconds S] [--seed N] [--openspiel FILE] [--installed]

A round is: deal a shuffled deck, bid until a contract (a deal where everybody passes is
redealt and belongs to the same round, as OpenSpiel counts it), play the 32 cards, score.
Every choice is uniform over the legal actions, drawn from a seeded ``random.Random``:

* checked: ``rng.choice(state.legal_actions())`` applied with ``State.apply`` (every
  action checked, every state a new immutable value);
* fast path: :func:`belote_p2p.game.fastplay.random_round` (bitmask hands, unchecked plays,
  scoring without records);
* OpenSpiel (``pip install open_spiel``, and its ``python_belote`` source, by default
  ``../shared/bench/openspiel_belote.py`` beside the checkout, or in a folder above it;
  neither is a dependency of this project):
  ``game.new_initial_state()``, then chance outcomes and legal actions chosen with
  ``rng.choice`` until ``is_terminal()``.

The three run in turns of about half a second in one process, so that a busy machine slows
them alike; times are CPU seconds of this process (one core). Prints a readable report and
ends with one JSON line of its figures.

It measures this checkout's source (pure Python), or with ``--installed`` the installed
package, compiled with mypyc where ``pip install`` could (``setup.py``); the report and the
JSON line (``"build"``) say which build ran.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if "--installed" not in sys.argv[1:]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's source

from belote_p2p.game import engine
from belote_p2p.game.build import build
from belote_p2p.game.cards import CARDS
from belote_p2p.game.engine import Phase, State
from belote_p2p.game.fastplay import random_round
from belote_p2p.game.rules import RULE_SETS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path("shared", "bench", "openspiel_belote.py")
"""Where OpenSpiel's ``python_belote`` source lies, beside the checkout: ``../shared/bench/``."""


def openspiel_source(root: Path = ROOT) -> Path:
    """The shared reference beside the checkout: ``../shared/bench/openspiel_belote.py``
    from the checkout, or from a folder above it (a worktree kept one level deeper); the
    place beside the checkout when there is none (the report says it is missing)."""
    for folder in root.parents:
        if (folder / REFERENCE).is_file():
            return folder / REFERENCE
    return root.parent / REFERENCE


OPENSPIEL_SOURCE = openspiel_source()

Runner = Callable[[int], None]
"""Plays that many whole rounds."""


def checked_runner(variant: str, seed: int) -> Runner:
    rng = random.Random(seed)
    choice = rng.choice
    start = State.new_game(RULE_SETS[variant].with_(target=10**9))
    deck = list(start.rules.deck_cards)

    def run(n: int) -> None:
        s = start
        for _ in range(n):
            while True:
                rng.shuffle(deck)
                s = s.deal(deck)
                while s.phase is not Phase.DEAL:
                    s = s.apply(choice(s.legal_actions()))
                if s.history[-1].score is not None:
                    break
            s = start  # a fresh game: the history does not grow

    return run


def fast_runner(variant: str, seed: int) -> Runner:
    rng = random.Random(seed)
    rules = RULE_SETS[variant]

    def run(n: int) -> None:
        dealer = 0
        for _ in range(n):
            random_round(rules, rng, dealer).score()
            dealer = (dealer + 1) & 3

    return run


def openspiel_runner(source: Path, seed: int) -> tuple[Runner | None, str]:
    """A runner for OpenSpiel's ``python_belote``, or None and why it is not available."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None, "open_spiel is not installed (pip install open_spiel==2.0.2)"
    if not source.is_file():
        return None, f"OpenSpiel's python_belote source is not at {source} (--openspiel FILE)"
    spec = importlib.util.spec_from_file_location("openspiel_python_belote", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        game = pyspiel.load_game("python_belote")
    except Exception as exc:  # its registration or import failed: report, do not crash
        return None, f"OpenSpiel's python_belote did not load: {exc!r}"
    rng = random.Random(seed)
    choice = rng.choice

    def run(n: int) -> None:
        for _ in range(n):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    s.apply_action(choice(s.chance_outcomes())[0])
                else:
                    s.apply_action(choice(s.legal_actions()))

    return run, "pyspiel " + getattr(pyspiel, "__version__", "?")


def race(runners: dict[str, Runner], seconds: float) -> dict[str, float]:
    """Rounds per CPU second of each runner, run in turns of about half a second."""
    batch = dict.fromkeys(runners, 10)
    rounds = dict.fromkeys(runners, 0)
    spent = dict.fromkeys(runners, 0.0)
    for name, run in runners.items():  # warm up and size the batches
        t = time.process_time()
        run(10)
        rate = 10 / max(time.process_time() - t, 1e-6)
        batch[name] = max(10, int(rate * 0.5))
    while min(spent.values()) < seconds:
        for name, run in runners.items():
            t = time.process_time()
            run(batch[name])
            spent[name] += time.process_time() - t
            rounds[name] += batch[name]
    return {name: rounds[name] / spent[name] for name in runners}


def legal_moves(seconds: float, seed: int) -> tuple[int, float]:
    """Calls of ``legal_actions()`` on play positions sampled from random rounds."""
    rng = random.Random(seed)
    positions: list[State] = []
    s = State.new_game(RULE_SETS["classic"].with_(target=10**9))
    while len(positions) < 2000:
        deck = list(CARDS)
        rng.shuffle(deck)
        s = s.deal(deck)
        while s.phase is not Phase.DEAL:
            if s.phase is Phase.PLAY:
                positions.append(s)
            s = s.apply(rng.choice(s.legal_actions()))
    n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for p in positions:
            p._cat_cache = None  # measure the computation, not the per-state cache
            p.legal_actions()
        n += len(positions)
    return n, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per contender")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--openspiel", type=Path, default=OPENSPIEL_SOURCE, help="python_belote")
    ap.add_argument(
        "--installed", action="store_true", help="the installed package, not this checkout"
    )
    args = ap.parse_args()
    figures: dict[str, Any] = {"build": build()}
    print(f"belote-p2p engine benchmark (CPython {sys.version.split()[0]}, one core, CPU time)")
    print(f"  {figures['build']} build: {Path(engine.__file__ or '?').parent}")
    os_run, os_note = openspiel_runner(args.openspiel, args.seed)
    runners: dict[str, Runner] = {
        "checked": checked_runner("classic", args.seed),
        "fast": fast_runner("classic", args.seed),
    }
    if os_run is not None:
        runners["openspiel"] = os_run
        print(f"  OpenSpiel python_belote: {args.openspiel} ({os_note})")
    else:
        print(f"  OpenSpiel: not measured: {os_note}")
    rates = race(runners, args.seconds)
    print("  whole random classic rounds (deal, bidding, 32 plays, scoring):")
    labels = {
        "checked": "checked State.apply",
        "fast": "fast path (FastState)",
        "openspiel": "OpenSpiel python_belote",
    }
    for name, rate in rates.items():
        print(f"    {labels[name]:<26} {rate:>9.0f} rounds/s")
    figures["classic_rounds_per_s"] = round(rates["checked"])
    figures["fast_classic_rounds_per_s"] = round(rates["fast"])
    if "openspiel" in rates:
        base = rates["openspiel"]
        figures["openspiel_rounds_per_s"] = round(base)
        figures["checked_vs_openspiel"] = round(rates["checked"] / base, 2)
        figures["fast_vs_openspiel"] = round(rates["fast"] / base, 2)
        print(
            f"    ratio to OpenSpiel: checked {rates['checked'] / base:.2f}x (target 4x), "
            f"fast path {rates['fast'] / base:.2f}x (target 15x)"
        )
    else:
        figures["openspiel_rounds_per_s"] = None
        print("    ratio to OpenSpiel: not measured (see above)")
    coinche = {
        "checked": checked_runner("coinche", args.seed),
        "fast": fast_runner("coinche", args.seed),
    }
    co = race(coinche, args.seconds / 2)
    figures["coinche_rounds_per_s"] = round(co["checked"])
    figures["fast_coinche_rounds_per_s"] = round(co["fast"])
    print(
        f"  coinche rounds: checked {co['checked']:.0f} rounds/s, fast path {co['fast']:.0f}"
        " rounds/s"
    )
    few = race(
        {
            "three-handed": checked_runner("three-handed", args.seed),
            "two-handed": checked_runner("two-handed", args.seed),
        },
        args.seconds / 2,
    )
    figures["three_handed_rounds_per_s"] = round(few["three-handed"])
    figures["two_handed_rounds_per_s"] = round(few["two-handed"])
    print(
        f"  checked rounds with fewer players: three-handed {few['three-handed']:.0f} "
        f"rounds/s (24 plays), two-handed {few['two-handed']:.0f} rounds/s (32 plays)"
    )
    n, t = legal_moves(min(args.seconds, 3.0), args.seed)
    figures["legal_actions_per_s"] = round(n / t)
    print(f"  legal_actions() alone: {n / t:>10.0f} calls/s ({t / n * 1e6:.2f} µs/call)")
    figures["rounds_per_s"] = figures["classic_rounds_per_s"]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
