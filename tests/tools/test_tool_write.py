"""The write and undo_edit tools against real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentd.tools.base import ToolContext
from agentd.tools.files.fileio import STAMPS_KEY, stamp_of
from agentd.tools.files.history import UndoHistory
from tests.tools.conftest import call, text_of


async def test_creates_parents_and_reports_created(work: Path, ctx: ToolContext) -> None:
    result = await call("write", ctx, path="deep/er/new.txt", content="hello\nworld\n")
    assert (work / "deep/er/new.txt").read_text() == "hello\nworld\n"
    assert text_of(result) == "Created deep/er/new.txt (12 bytes, 2 lines)."
    assert result.details.created is True
    assert result.details.added == 2


async def test_overwrite_keeps_mode_and_reports_diff(work: Path, ctx: ToolContext) -> None:
    target = work / "run.sh"
    target.write_text("echo one\n")
    target.chmod(0o751)
    result = await call("write", ctx, path="run.sh", content="echo two\n")
    assert text_of(result).startswith("Overwrote run.sh")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert "-echo one\n+echo two\n" in result.details.diff
    assert (result.details.added, result.details.removed) == (1, 1)


async def test_new_file_mode_follows_umask(work: Path, ctx: ToolContext) -> None:
    old = os.umask(0o027)
    try:
        await call("write", ctx, path="f.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((work / "f.txt").stat().st_mode) == 0o640


async def test_atomic_write_leaves_no_temp_files(work: Path, ctx: ToolContext) -> None:
    for n in range(3):
        await call("write", ctx, path="a.txt", content=f"v{n}")
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


async def test_write_through_symlink_keeps_the_link(work: Path, ctx: ToolContext) -> None:
    (work / "real.txt").write_text("old")
    (work / "link.txt").symlink_to(work / "real.txt")
    await call("write", ctx, path="link.txt", content="new")
    assert (work / "link.txt").is_symlink()
    assert (work / "real.txt").read_text() == "new"


async def test_write_refreshes_read_stamp(work: Path, ctx: ToolContext) -> None:
    await call("write", ctx, path="a.txt", content="x")
    assert ctx.state[STAMPS_KEY][str(work / "a.txt")] == stamp_of(work / "a.txt")


async def test_directory_target_refused(work: Path, ctx: ToolContext) -> None:
    (work / "d").mkdir()
    result = await call("write", ctx, path="d", content="x")
    assert result.is_error
    assert "directory" in text_of(result)


async def test_parent_is_a_file(work: Path, ctx: ToolContext) -> None:
    (work / "f").write_text("x")
    result = await call("write", ctx, path="f/g.txt", content="x")
    assert result.is_error


async def test_undo_restores_then_deletes_created_file(work: Path, ctx: ToolContext) -> None:
    await call("write", ctx, path="a.txt", content="one\n")
    await call("write", ctx, path="a.txt", content="two\n")
    result = await call("undo_edit", ctx, path="a.txt")
    assert (work / "a.txt").read_text() == "one\n"
    assert "-two\n+one\n" in result.details.diff
    assert result.details.remaining == 1
    result = await call("undo_edit", ctx, path="a.txt")
    assert not (work / "a.txt").exists()
    assert result.details.deleted is True
    result = await call("undo_edit", ctx, path="a.txt")
    assert result.is_error
    assert "no write or edit" in text_of(result)


async def test_undo_after_edit(work: Path, ctx: ToolContext) -> None:
    (work / "a.py").write_text("x = 1\n")
    await call("edit", ctx, path="a.py", old_string="x = 1", new_string="x = 2")
    await call("undo_edit", ctx, path="a.py")
    assert (work / "a.py").read_text() == "x = 1\n"


def test_history_bounds_per_file_and_total() -> None:
    history = UndoHistory(max_per_file=3, max_bytes=100)
    a, b = Path("/a"), Path("/b")
    for n in range(5):
        history.push(a, bytes([n]) * 10)
    assert history.depth(a) == 3
    assert history.total_bytes == 30
    history.push(b, b"y" * 60)
    history.push(b, b"z" * 30)
    assert history.total_bytes <= 100
    assert history.depth(a) == 1
    assert history.pop(a) is not None
    assert history.pop(a) is None
    assert history.push(b, b"w" * 101) is False
    snapshot = history.pop(b)
    assert snapshot is not None
    assert snapshot.content == b"z" * 30
