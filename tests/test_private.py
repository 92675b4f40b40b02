"""The home and what it keeps are the owner's alone, whatever the umask (protocol/private.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import make_table

from belote_p2p.app.home import Home
from belote_p2p.app.profile import open_db
from belote_p2p.protocol.transcript import TranscriptWriter


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_the_home_and_its_files_are_private_under_umask_000(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    home = Home(tmp_path / "deep" / "home")
    home.identity()
    home.save_name("Ana")
    definition, _ = make_table("classic")
    home.secrets(definition, 0).save(0, b"k" * 32, b"s" * 32)
    TranscriptWriter(home.transcript(definition, 0), definition, 0).close()
    with open_db(home.profile_db):
        pass
    assert mode(tmp_path) == 0o755  # not made here: left as it is
    for directory in (tmp_path / "deep", home.root, home.games, home.root / "secrets"):
        assert mode(directory) == 0o700, directory
    files = [p for p in home.root.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"name", "profile.sqlite3"}
    assert len(files) >= 5
    for path in files:
        assert mode(path) == 0o600, path
