"""Fixtures shared by every test folder (keep this small; folders have their own)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import XDG_DIRS


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh directory under /tmp with a short path (Unix socket paths must stay < 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def xdg_home(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every XDG base directory of this process at fresh directories under ``short_tmp``
    (in-process tests; a child process gets :class:`tests.harness.IsolatedHome`'s env)."""
    for name, folder in XDG_DIRS.items():
        path = short_tmp / folder
        path.mkdir(mode=0o700)
        monkeypatch.setenv(name, str(path))
    return short_tmp
