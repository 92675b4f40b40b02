"""The package's layers, kept honest: each imports only from the layers before it.

game (rules, pure) -> protocol (sans-io deck, wire and session) -> players (bots, the
Player protocol, arena) -> envs (the PettingZoo environment and the policy bot) -> net
(trio transport, lobby, peer) -> app (commands, terminal and browser tables, profiles).
``players`` sits below ``net``: the peer asks a Player for its decisions, and nothing about
choosing a move needs the network; ``envs`` builds on the game and the bot hook, and no
layer below needs it. The sans-io layers import
no I/O library, and only the app loads the terminal UI's ``rich``.

Inside the app, a seat's model (``app.seatview``: no ``rich``, no trio) is rendered by the
terminal (``app.tui``) and the browser (``app.web``); the jobs that play a seat (``app.seat``,
``host``, ``join``, ``resume``, ``local``) pick a renderer, and nothing imports them back.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "belote_p2p"
LAYERS = ("game", "protocol", "players", "envs", "net", "app")
# What a top-level module may import: the facade stays light, the bot module is for plugins;
# the error hierarchy and the words (``i18n``: the catalogs' lookup) are below every layer.
TOP_LEVEL = {
    "__init__": {"game", "top:errors"},
    "__main__": {"app"},
    "bot": {"game", "players"},
    "errors": set(),
}
FORBIDDEN = {
    "game": {"trio", "msgpack", "cryptography", "rbcl", "pluggy", "rich", "socket", "sqlite3"},
    "protocol": {"trio", "pluggy", "rich", "socket", "sqlite3"},
    "players": {"rich", "socket", "sqlite3"},
    "envs": {"trio", "rich", "socket", "sqlite3"},
    "net": {"rich", "sqlite3"},
    "app": set(),
}


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with its line (relative imports resolved
    from the file's place under ``root``)."""
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base == "belote_p2p":
                # ``from belote_p2p import game`` names a sub-package; ``__version__`` is the
                # facade's own.
                out += [
                    (node.lineno, base if a.name.startswith("__") else f"{base}.{a.name}")
                    for a in node.names
                ]
            else:
                out.append((node.lineno, base))
    return out


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "belote_p2p" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else f"top:{parts[1]}"


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1:
            allowed = TOP_LEVEL.get(path.stem)
            if allowed is None:
                found.append(f"{rel}: a top-level module outside the layers")
                continue
            forbidden: set[str] = set()
        elif rel.parts[0] == "i18n":
            allowed, forbidden = {"top:i18n", "top:errors"}, FORBIDDEN["game"]
        else:
            here = rel.parts[0]
            allowed = set(LAYERS[: LAYERS.index(here) + 1]) | {"top:errors", "top:i18n"}
            forbidden = FORBIDDEN[here]
        for line, module in imported_modules(path):
            layer = layer_of(module)
            if layer is not None and layer not in allowed:
                found.append(f"{rel}:{line}: imports {module}")
            if module.split(".")[0] in forbidden:
                found.append(f"{rel}:{line}: imports {module}, which its layer must not")
    return found


def test_each_layer_imports_only_from_the_layers_before_it() -> None:
    assert violations() == []


APP = PACKAGE / "app"
JOBS = {f"belote_p2p.app.{m}" for m in ("seat", "host", "join", "resume", "local")}
RENDERERS = {"belote_p2p.app.tui", "belote_p2p.app.web"}


def app_violations() -> list[str]:
    """The seat's model imports no renderer; no renderer imports a job."""
    found = []
    model = APP / "seatview.py"
    # The web lobby (``belote-p2p web``) is a job of its own: it hosts, joins and resumes.
    renderers = [APP / "tui.py", *sorted((APP / "web").glob("*.py"))]
    renderers.remove(APP / "web" / "lobby.py")
    for path, banned in [(model, RENDERERS | JOBS), *((r, JOBS) for r in renderers)]:
        for line, module in imported_modules(path):
            if any(module == b or module.startswith(b + ".") for b in banned):
                found.append(f"{path.relative_to(PACKAGE)}:{line}: imports {module}")
    return found


def test_the_seat_model_is_rendered_and_nothing_imports_the_jobs_back() -> None:
    assert app_violations() == []


def test_the_check_sees_a_backward_import(tmp_path: Path) -> None:
    module = tmp_path / "belote_p2p" / "game" / "bad.py"
    module.parent.mkdir(parents=True)
    module.write_text("from ..net.peer import run_peer\nfrom belote_p2p import app\nimport trio\n")
    found = imported_modules(module, tmp_path)
    assert found == [(1, "belote_p2p.net.peer"), (2, "belote_p2p.app"), (3, "trio")]


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("belote_p2p.net.peer", "rich"),
        ("belote_p2p.protocol.session", "trio"),
        ("belote_p2p", "belote_p2p.protocol"),
        ("belote_p2p.bot", "belote_p2p.net"),
        ("belote_p2p.envs.policy", "numpy"),
        ("belote_p2p.app.seatview", "rich"),
        ("belote_p2p.app.seatview", "trio"),
    ],
)
def test_importing_a_layer_loads_nothing_above_it(module: str, absent: str) -> None:
    code = f"import sys, {module}; sys.exit({absent!r} in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_the_example_bot_package_imports_only_the_public_bot_module() -> None:
    example = ROOT / "plugins" / "examples" / "belote-bot-example"
    imports = {
        module
        for path in example.rglob("*.py")
        for _, module in imported_modules(path)
        if module.startswith("belote_p2p")
    }
    assert imports == {"belote_p2p.bot"}
