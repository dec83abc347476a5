"""A small real filesystem (tmpfs) for full-disk tests; they are skipped where mount is refused.

``small_tmpfs(path, size)`` mounts a tmpfs of ``size`` bytes on ``path`` (created if missing)
and unmounts it afterwards. ``fill(path)`` writes a filler file until the disk is full and
returns it, so deleting it "frees the disk" again.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(path: Path, size: int) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def fill(directory: Path, leave: int = 0) -> Path:
    """Fill the filesystem of ``directory`` with ``directory/filler`` (leaving about ``leave``
    bytes free); returns the filler's path."""
    filler = directory / "filler"
    free = os.statvfs(directory)
    room = free.f_bavail * free.f_frsize - leave
    with filler.open("wb") as out, contextlib.suppress(OSError):
        while room > 0:
            out.write(b"\0" * min(room, 1 << 20))
            out.flush()
            room -= 1 << 20
    return filler
