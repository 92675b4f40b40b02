"""The test suite's own layout: shared helpers come from ``helpers`` (or ``cheaters``), never
from ``conftest`` or another test module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules ``path`` imports, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(TESTS.glob("test_*.py")), ids=lambda p: p.name)
def test_a_test_module_imports_no_conftest_and_no_other_test_module(path: Path) -> None:
    wrong = sorted(
        name for name in imported_modules(path) if name == "conftest" or name.startswith("test_")
    )
    assert not wrong, f"{path.name} imports {wrong}: shared helpers belong in helpers.py"


def test_the_rule_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import os\nimport test_a\nfrom conftest import x\n"
        "def f():\n    from test_b.sub import y\n    import conftest as c\n"
    )
    assert imported_modules(sample) == {"os", "test_a", "conftest", "test_b"}
