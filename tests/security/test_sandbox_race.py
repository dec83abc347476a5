"""The workspace sandbox under a swap race: a folder and a symlink to the outside are
exchanged (renameat2 RENAME_EXCHANGE) as fast as possible while the file tools work, with
no editor and with editors (``ToolContext.files``) that serve reads only (writes fall back to
the disk) or hold every write in their buffers. The same attack against the real daemon, with
real JSON-RPC editor clients, is in ``test_sandbox_race_daemon.py``."""

from __future__ import annotations

import asyncio
import ctypes
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.hardening import openat2_available
from agentd.tools import build_tools, run_tool
from agentd.tools.base import FileAccess, ToolContext

AT_FDCWD = -100
RENAME_EXCHANGE = 2
ROUNDS = 300
TOOLS = build_tools()


def _exchange(libc: ctypes.CDLL, first: bytes, second: bytes) -> None:
    libc.renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE)


class BufferEditor:
    """An editor holding buffers (text by path, taken before the race starts): reads of an
    open buffer are served, others go to the disk (None); ``takes_writes`` False declines
    every write (the daemon writes to the disk), True keeps them in the buffers."""

    def __init__(self, buffers: dict[Path, str], *, takes_writes: bool) -> None:
        self.buffers = dict(buffers)
        self.takes_writes = takes_writes

    async def read_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    async def write_text(self, path: Path, text: str) -> bool | None:
        if not self.takes_writes:
            return None
        self.buffers[path] = text
        return True


def _editor(kind: str, workspace: Path) -> FileAccess | None:
    if kind == "no-editor":
        return None
    buffers = {workspace / "d" / "secret.txt": "INSIDE\n"}
    return BufferEditor(buffers, takes_writes=kind == "editor-takes-writes")


@pytest.fixture
def swapped(tmp_path: Path) -> Iterator[tuple[Path, Path, list[int]]]:
    """ws/d (a folder) and ws/l (a symlink to ../outside) swapped in a loop."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        pytest.skip("the C library has no renameat2")
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    outside.mkdir()
    (workspace / "d" / "secret.txt").write_text("INSIDE\n")
    (outside / "secret.txt").write_text("OUTSIDE\n")
    (workspace / "l").symlink_to(outside)
    stop, swaps = threading.Event(), [0]
    first, second = bytes(workspace / "d"), bytes(workspace / "l")

    def swap() -> None:
        while not stop.is_set():
            _exchange(libc, first, second)
            swaps[0] += 1

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield workspace, outside, swaps
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("editor", ["no-editor", "editor-reads-only", "editor-takes-writes"])
@pytest.mark.parametrize("walk", [False, True], ids=["openat2", "nofollow-walk"])
def test_swap_race_lands_nothing_outside(
    swapped: tuple[Path, Path, list[int]],
    walk: bool,
    editor: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hundreds of reads, writes, edits and undos through the swapped folder: no read
    returns outside content, nothing outside is created, changed or deleted; both the
    openat2 path and the O_NOFOLLOW walk, with and without an editor."""
    workspace, outside, swaps = swapped
    if walk:
        openat2_available.cache_clear()
        monkeypatch.setattr("agentd.hardening.openat2_available", lambda: False)
    elif not openat2_available():
        pytest.skip("this kernel has no openat2")
    ctx = ToolContext(cwd=workspace, workspace=workspace, files=_editor(editor, workspace))

    async def rounds() -> tuple[int, int]:
        reads_ok = writes_ok = 0
        for index in range(ROUNDS):
            read = await run_tool(TOOLS["read"], {"path": "d/secret.txt"}, ctx)
            assert "OUTSIDE" not in str(read.output)
            reads_ok += "INSIDE" in str(read.output)
            args = {"path": f"d/new_{index}.txt", "content": "planted\n"}
            written = await run_tool(TOOLS["write"], args, ctx)
            writes_ok += not written.is_error
            change = {"path": "d/secret.txt", "old_string": "SIDE", "new_string": "SIDE"}
            await run_tool(TOOLS["edit"], change | {"new_string": "SIDE!"}, ctx)
            await run_tool(TOOLS["undo_edit"], {"path": "d/secret.txt"}, ctx)
            await run_tool(TOOLS["undo_edit"], {"path": f"d/new_{index}.txt"}, ctx)
        return reads_ok, writes_ok

    reads_ok, writes_ok = asyncio.run(rounds())
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "OUTSIDE\n"
    assert swaps[0] > ROUNDS  # the race really ran
    assert reads_ok > 0  # the tools still worked between swaps
    assert writes_ok > 0
