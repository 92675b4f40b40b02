"""Which build of the engine runs: compiled by mypyc (``setup.py``) or pure Python."""

from __future__ import annotations

from pathlib import Path

from . import engine, fastplay


def build() -> str:
    """``"compiled"`` when the engine and the fast path are extension modules (the mypyc
    build), ``"pure"`` when both are Python source, ``"mixed"`` otherwise."""
    kinds = {Path(m.__file__ or "").suffix == ".py" for m in (engine, fastplay)}
    return "mixed" if len(kinds) == 2 else "pure" if kinds == {True} else "compiled"
