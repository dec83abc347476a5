"""The per-file locks a session shares with its subagents: two edits of one file by two
children never interleave (the second waits), and a holder that keeps the file too long makes
the waiter fail with a clear error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentd.tools import run_tool
from agentd.tools.base import ToolContext, ToolError
from agentd.tools.edit import EditTool
from agentd.tools.files.locks import FileLocks


class SlowEditor:
    """A :class:`~agentd.tools.base.FileAccess` that serves the disk's text but lets the event
    loop run between reading and writing: without a lock, two edits read the same text."""

    def __init__(self) -> None:
        self.reads = 0

    async def read_text(self, path: Path) -> str | None:
        self.reads += 1
        text = path.read_text()
        for _ in range(5):
            await asyncio.sleep(0)
        return text

    async def write_text(self, path: Path, text: str) -> bool | None:
        path.write_text(text)
        return True


def child_context(cwd: Path, locks: FileLocks | None, name: str) -> ToolContext:
    return ToolContext(cwd, session_id=name, files=SlowEditor(), path_locks=locks)


async def edit_both(tmp_path: Path, locks: FileLocks | None) -> str:
    target = tmp_path / "shared.txt"
    target.write_text("alpha\nbeta\n")
    edit = EditTool()
    first = run_tool(
        edit,
        {"path": "shared.txt", "old_string": "alpha", "new_string": "ALPHA"},
        child_context(tmp_path, locks, "child-a"),
    )
    second = run_tool(
        edit,
        {"path": "shared.txt", "old_string": "beta", "new_string": "BETA"},
        child_context(tmp_path, locks, "child-b"),
    )
    results = await asyncio.gather(first, second)
    assert not any(result.is_error for result in results), results
    return target.read_text()


async def test_two_children_editing_one_file_both_land(tmp_path: Path) -> None:
    assert await edit_both(tmp_path, FileLocks()) == "ALPHA\nBETA\n"


async def test_without_the_shared_lock_one_edit_is_lost(tmp_path: Path) -> None:
    """The race the lock prevents is real: unlocked, the second write wins alone."""
    assert await edit_both(tmp_path, None) != "ALPHA\nBETA\n"


async def test_a_waiter_fails_clearly_when_the_holder_keeps_the_file(tmp_path: Path) -> None:
    locks = FileLocks(wait=0.05)
    path = tmp_path / "busy.txt"
    async with locks.hold(path, "child-a"):
        with pytest.raises(ToolError) as refused:
            async with locks.hold(path, "child-b"):
                pass
    assert "session child-a" in str(refused.value)
    assert str(path) in str(refused.value)
    assert locks.held() == []


async def test_locks_of_other_files_do_not_wait(tmp_path: Path) -> None:
    locks = FileLocks(wait=0.05)
    async with locks.hold(tmp_path / "a", "one"), locks.hold(tmp_path / "b", "two"):
        assert sorted(locks.held()) == sorted([str(tmp_path / "a"), str(tmp_path / "b")])
