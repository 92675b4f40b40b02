"""Files only their owner reads: the home, its key, its round secrets, its transcripts and its
profile.

``mkdir(mode=0o700)`` and ``open`` take their modes *through* the umask, and ``parents=True``
creates the parents with the umask's default: under ``umask 000`` a home came out 0777 and a
transcript 0666. These functions set the modes explicitly, whatever the umask.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """``path`` and every missing parent, created 0700 (an existing directory is left as
    it is: a home may be under a folder that is not ours)."""
    missing = []
    at = path
    while not at.exists():
        missing.append(at)
        if at.parent == at:
            break
        at = at.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIRECTORY_MODE)
        except FileExistsError:
            continue  # another process made it: its mode is that process's business
        os.chmod(directory, DIRECTORY_MODE)
    return path


def private_fd(path: Path, flags: int) -> int:
    """``os.open(path, flags)``, a file it creates being 0600 whatever the umask."""
    fd = os.open(path, flags, FILE_MODE)
    try:
        if flags & os.O_CREAT and os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private(path: Path, mode: str = "ab") -> IO[bytes]:
    """A binary file opened for appending (``"ab"``) or writing (``"wb"``), 0600."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "ab" else os.O_TRUNC)
    return os.fdopen(private_fd(path, flags), mode)


def write_private(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, 0600."""
    with open_private(path, "wb") as f:
        f.write(data)
