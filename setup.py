"""The build: the engine's hot modules compiled with mypyc where that can be done, pure
Python otherwise (``pyproject.toml`` holds the rest of the build's settings).

``pip install .`` compiles :data:`COMPILED` into C extension modules when mypyc (a build
requirement) and a working C compiler with the Python headers are there; the ``.py``
sources ship beside them, and Python imports the compiled module first. Without either,
or when a step of the compilation fails, it builds the same package in pure Python and
says why (``pip install -v`` shows it). ``BELOTE_P2P_PURE=1`` forces the pure build; an
editable install (``pip install -e``) is always pure, so that the tree runs its own source.

The build also compiles the message catalogs (``belote_p2p/locale/*/LC_MESSAGES/*.po``) into
the ``.mo`` files that gettext reads (:class:`BuildPyWithCatalogs`, with Babel, a build
requirement), so that ``pip install .`` speaks every language of the catalogs.

Compiled, the engine checks its argument types at run time (mypyc does), and runs whole
random rounds about 1.7 times as fast, the fast path about 3 times, the double-dummy solver
about 3 times (``docs/speed.md``); the install takes about 30 s of CPU more.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

COMPILED = [
    "belote_p2p/game/engine.py",
    "belote_p2p/game/fastplay.py",
    "belote_p2p/game/solver.py",
]
"""The modules mypyc compiles: a whole round's time is spent in the first two, an exact
endgame's (the ``expert`` bot's, the coach's) in the solver."""
PURE_SWITCH = "BELOTE_P2P_PURE"
BUILD_COMMANDS = {"bdist_wheel", "build", "build_ext", "install"}
"""The setup commands that build modules (pip also runs this file for metadata only)."""


def say(text: str) -> None:
    print(f"belote-p2p build: {text}", file=sys.stderr)


def compiler_problem() -> str | None:
    """Why no C extension can be built here (``None`` when a test one compiles)."""
    from distutils.ccompiler import new_compiler
    from distutils.sysconfig import customize_compiler

    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").is_file():
        return f"no Python headers (Python.h) in {include}"
    compiler: Any = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "probe.c")
        source.write_text("#include <Python.h>\nint probe(void) { return Py_IsInitialized(); }\n")
        try:
            compiler.compile([str(source)], output_dir=tmp, include_dirs=[include])
        except Exception as exc:  # no compiler, a broken one: the pure build
            return f"no working C compiler ({exc})"
    return None


def pure_reason() -> str | None:
    """Why this build is pure Python, or ``None`` to compile."""
    if os.environ.get(PURE_SWITCH, "") not in ("", "0"):
        return f"{PURE_SWITCH} is set"
    if sys.implementation.name != "cpython":
        return f"mypyc builds for CPython, not {sys.implementation.name}"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy)"
    return compiler_problem()


class OptionalBuildExt(build_ext):
    """build_ext that leaves a pure package, rather than a failed install, when the C
    compilation fails: the modules compiled so far are removed, the sources stay."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            say(f"the C compilation failed, building pure Python instead ({exc})")
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)


class BuildPyWithCatalogs(build_py):
    """build_py that also compiles each language's ``.po`` into the ``.mo`` beside it in the
    build, with the package's own compiler (``belote_p2p/i18n/mo.py``, loaded alone: the
    package's dependencies are not in the build's environment)."""

    def run(self) -> None:
        super().run()
        spec = importlib.util.spec_from_file_location("belote_mo", "belote_p2p/i18n/mo.py")
        assert spec is not None and spec.loader is not None
        mo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mo)
        for po in sorted(Path("belote_p2p/locale").glob("*/LC_MESSAGES/*.po")):
            target = Path(self.build_lib) / po.with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(mo.compile_po(po.read_bytes(), po.parts[-3]))
            say(f"compiled the {po.parts[-3]} catalog")


def extensions() -> list[Any]:
    if "editable_wheel" in sys.argv:
        say("pure Python build: an editable install runs the source tree")
        return []
    if not BUILD_COMMANDS & set(sys.argv[1:]):
        return []  # metadata only
    reason = pure_reason()
    if reason is None:
        from mypyc.build import mypycify

        try:
            modules: list[Any] = mypycify(COMPILED, opt_level="3", group_name="belote_p2p_native")
        except (Exception, SystemExit) as exc:  # mypyc refused (a type error, a new mypy)
            reason = f"mypyc failed ({exc!r})"
        else:
            say(f"compiling {', '.join(COMPILED)} with mypyc")
            return modules
    say(f"pure Python build: {reason}")
    return []


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithCatalogs},
)
