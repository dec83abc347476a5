"""A full disk and a second writer: failed appends are cut back, files are locked."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentd.errors import SessionLocked, StoreWriteFailed
from agentd.protocol.content import Message, TextContent
from agentd.store import SessionFile
from tests.smallfs import fill, small_tmpfs
from tests.store.conftest import CWD, assistant, user


def texts(messages: list[Message]) -> list[str]:
    return [part.text for m in messages for part in m.content if isinstance(part, TextContent)]


class FullDisk(SessionFile):
    """A session file whose disk fills up on demand: the write stops half-way with ENOSPC."""

    full = False

    def _write_all(self, fd: int, data: bytes) -> None:
        if not self.full:
            super()._write_all(fd, data)
            return
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_failed_append_leaves_no_half_line_and_appending_goes_on(root: Path) -> None:
    """The fault hook: the half-written line is truncated away, the entry is not in the
    tree, and after space returns the next entries land and survive a reload."""
    session = FullDisk.create(root, cwd=CWD, session_id="s1")
    session.append_message(user("first"))
    before = session.path.read_bytes()
    session.full = True
    with pytest.raises(StoreWriteFailed, match=r"^disk full: .*No space left on device"):
        session.append_message(user("lost, and reported as not saved"))
    assert session.path.read_bytes() == before
    assert texts(session.messages()) == ["first"]
    session.full = False
    session.append_message(user("second"))
    session.append_message(assistant("answer"))
    session.close()
    reloaded = SessionFile.open(session.path)
    assert texts(reloaded.messages()) == ["first", "second", "answer"]
    assert reloaded.warnings == []


def test_on_a_real_full_filesystem(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    with small_tmpfs(root, 1 << 20):
        session = SessionFile.create(root, cwd=CWD, session_id="s1")
        session.append_message(user("first"))
        filler = fill(root, leave=100)
        with pytest.raises(StoreWriteFailed, match=r"^disk full: "):
            session.append_message(user("x" * 20_000))
        filler.unlink()
        session.append_message(user("after"))
        session.close()
        reloaded = SessionFile.open(session.path)
        assert texts(reloaded.messages()) == ["first", "after"]
        assert reloaded.warnings == []


HOLDER = """
import sys, time
from pathlib import Path
from agentd.store import SessionFile
f = SessionFile.open(Path(sys.argv[1]), lock=True)
print("locked", flush=True)
time.sleep(60)
"""


def test_a_loaded_file_is_locked_against_another_process(root: Path) -> None:
    session = SessionFile.create(root, cwd=CWD, session_id="s1")
    session.append_message(user("hi"))
    session.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(session.path)], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        with pytest.raises(SessionLocked, match=f"loaded by process {holder.pid}") as caught:
            SessionFile.open(session.path, lock=True)
        assert caught.value.data["pid"] == holder.pid
        assert texts(SessionFile.open(session.path).messages()) == ["hi"]
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    SessionFile.open(session.path, lock=True).close()  # the lock died with its process
