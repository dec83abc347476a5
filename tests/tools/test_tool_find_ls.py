"""find and ls against real trees."""

from __future__ import annotations

from pathlib import Path

from agentd.tools.base import ToolContext
from tests.tools.conftest import call, text_of


def touch(root: Path, *names: str) -> None:
    for name in names:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x\n")


async def test_find_by_name_at_any_depth(work: Path, ctx: ToolContext) -> None:
    touch(work, "a.py", "src/b.py", "src/deep/c.py", "src/d.txt", "build/e.py", ".hidden/f.py")
    (work / ".gitignore").write_text("build/\n")
    result = await call("find", ctx, pattern="*.py")
    assert text_of(result) == "a.py\nsrc/b.py\nsrc/deep/c.py"
    assert result.details.count == 3


async def test_find_with_path_globs(work: Path, ctx: ToolContext) -> None:
    touch(work, "a.py", "src/b.py", "src/deep/c.py", "tests/test_x.py", "tests/unit/test_y.py")
    assert text_of(await call("find", ctx, pattern="src/*.py")) == "src/b.py"
    assert text_of(await call("find", ctx, pattern="src/**/*.py")) == "src/b.py\nsrc/deep/c.py"
    both = await call("find", ctx, pattern="**/test_*.py")
    assert text_of(both) == "tests/test_x.py\ntests/unit/test_y.py"
    braces = await call("find", ctx, pattern="*.{py,txt}", path="tests/unit")
    assert text_of(braces) == "test_y.py"


async def test_find_lists_matching_directories(work: Path, ctx: ToolContext) -> None:
    touch(work, "pkg/tests/a.py", "other/tests/b.py")
    assert text_of(await call("find", ctx, pattern="tests/")) == "other/tests/\npkg/tests/"


async def test_find_explicit_hidden_name(work: Path, ctx: ToolContext) -> None:
    touch(work, ".env", "sub/.env", "node_modules/.env")
    assert text_of(await call("find", ctx, pattern=".env")) == ".env\nsub/.env"


async def test_find_cut_and_empty(work: Path, ctx: ToolContext) -> None:
    touch(work, *(f"f{n:04d}.txt" for n in range(1005)))
    result = await call("find", ctx, pattern="*.txt")
    assert result.details.cut is True
    assert text_of(result).count("\n") == 1000
    assert "[Results cut at 1000 paths." in text_of(result)
    none = await call("find", ctx, pattern="*.rs")
    assert not none.is_error
    assert "No paths match" in text_of(none)


async def test_find_needs_a_directory(work: Path, ctx: ToolContext) -> None:
    touch(work, "a.py")
    result = await call("find", ctx, pattern="*", path="a.py")
    assert result.is_error


async def test_ls_marks_dirs_shows_hidden_and_links(work: Path, ctx: ToolContext) -> None:
    touch(work, "b.txt", ".env", "sub/x")
    (work / "link").symlink_to(work / "sub")
    result = await call("ls", ctx)
    assert text_of(result) == f".env\nb.txt\nlink -> {work / 'sub'}/\nsub/"


async def test_ls_limit_and_errors(work: Path, ctx: ToolContext) -> None:
    touch(work, *(f"f{n:03d}" for n in range(510)))
    result = await call("ls", ctx)
    assert text_of(result).endswith(
        "[10 more entries not shown (500-entry limit). Use find with a pattern to narrow down.]"
    )
    assert result.details.truncated is True
    assert (await call("ls", ctx, path="f000")).is_error
    assert (await call("ls", ctx, path="missing")).is_error
    (work / "empty").mkdir()
    assert "is empty" in text_of(await call("ls", ctx, path="empty"))
