"""Which build of the engine runs: compiled by mypyc (``setup.py``) or pure Python."""

from __future__ import annotations

from pathlib import Path

from . import engine, fastplay, solver


def build() -> str:
    """``"compiled"`` when the engine, the fast path and the solver are extension modules
    (the mypyc build), ``"pure"`` when all three are Python source, ``"mixed"`` otherwise."""
    kinds = {Path(m.__file__ or "").suffix == ".py" for m in (engine, fastplay, solver)}
    return "mixed" if len(kinds) == 2 else "pure" if kinds == {True} else "compiled"
