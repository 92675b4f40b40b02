"""One error hierarchy, and one class per name, across the whole package."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import belote_p2p
from belote_p2p.errors import BeloteError, LocalProtocolError, RemoteProtocolError


def package_modules() -> list[ModuleType]:
    names = [
        info.name
        for info in pkgutil.walk_packages(belote_p2p.__path__, prefix="belote_p2p.")
        if info.name != "belote_p2p.__main__"
    ]
    return [belote_p2p, *(importlib.import_module(name) for name in names)]


def defined_classes() -> list[type]:
    """Every class the package defines (each once, in the module that defines it)."""
    found = []
    for module in package_modules():
        for _, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_every_error_the_package_defines_is_a_belote_error() -> None:
    errors = [c for c in defined_classes() if issubclass(c, BaseException)]
    assert len(errors) > 20
    assert [c for c in errors if not issubclass(c, BeloteError)] == []


def test_local_and_remote_errors_are_apart() -> None:
    assert not issubclass(LocalProtocolError, RemoteProtocolError)
    assert not issubclass(RemoteProtocolError, LocalProtocolError)
    error = RemoteProtocolError("bad", seat=2, evidence=(b"x",))
    assert (error.seat, error.evidence, error.sender) == (2, (b"x",), None)


def test_no_two_public_classes_share_a_name() -> None:
    by_name: dict[str, list[str]] = {}
    for c in defined_classes():
        if not c.__name__.startswith("_"):
            by_name.setdefault(c.__name__, []).append(c.__module__)
    assert {name: where for name, where in by_name.items() if len(where) > 1} == {}
