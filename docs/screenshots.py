"""Regenerate the screenshots ``docs/screenshots/`` keeps, by hand: ``python docs/screenshots.py``.

The browser tests (``tests/test_web_browser.py``) take them as they play; a plain test run
writes them to a temporary folder, so that ``pytest`` never rewrites a tracked file. This
script runs those tests with ``$BELOTE_SCREENSHOTS`` set to this folder (extra pytest
arguments pass through, e.g. ``-k classic``), then lists what it wrote and ends with one
line of JSON: the files and pytest's exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "screenshots"


def main(argv: list[str]) -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    started = time.time()
    paths = [str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "BELOTE_SCREENSHOTS": str(FOLDER),
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
    }
    command = [sys.executable, "-m", "pytest", "-q", "tests/test_web_browser.py", *argv]
    status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    written = sorted(p.name for p in FOLDER.glob("*.png") if p.stat().st_mtime >= started)
    print(f"Screenshots written to {FOLDER.relative_to(ROOT)}/ ({len(written)}):")
    for name in written:
        print(f"  {name}")
    print(json.dumps({"written": written, "pytest_status": status}))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
