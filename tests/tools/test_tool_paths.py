"""Path resolution and the workspace sandbox, with real symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.tools.base import ToolContext, ToolError
from agentd.tools.files.paths import display_path, resolve_path
from tests.tools.conftest import call, text_of


@pytest.fixture
def sandbox(work: Path, ctx: ToolContext) -> Path:
    """``work/ws`` as the sandboxed workspace and cwd; ``work/outside`` next to it."""
    workspace = work / "ws"
    (workspace / "src").mkdir(parents=True)
    (work / "outside").mkdir()
    (work / "outside" / "secret.txt").write_text("secret\n")
    ctx.workspace = workspace
    ctx.cwd = workspace
    return workspace


def test_relative_absolute_and_dotdot(work: Path, ctx: ToolContext) -> None:
    assert resolve_path("a/../b.txt", ctx) == work / "b.txt"
    assert resolve_path(str(work / "x"), ctx) == work / "x"
    assert display_path(work / "sub" / "x", ctx) == "sub/x"
    assert display_path(Path("/etc/hosts"), ctx) == "/etc/hosts"


def test_empty_and_nul_paths_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError):
        resolve_path("", ctx)
    with pytest.raises(ToolError):
        resolve_path("a\0b", ctx)


def test_inside_workspace_allowed(sandbox: Path, ctx: ToolContext) -> None:
    assert resolve_path("src/new.py", ctx) == sandbox / "src" / "new.py"
    assert resolve_path(".", ctx) == sandbox


def test_dotdot_escape_refused(sandbox: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("../outside/secret.txt", ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("/etc/passwd", ctx)


def test_symlink_escape_refused(work: Path, sandbox: Path, ctx: ToolContext) -> None:
    (sandbox / "escape").symlink_to(work / "outside")
    (sandbox / "file_link").symlink_to(work / "outside" / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("escape/secret.txt", ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("file_link", ctx)


def test_new_file_under_symlinked_dir_refused(work: Path, sandbox: Path, ctx: ToolContext) -> None:
    (sandbox / "escape").symlink_to(work / "outside")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("escape/not/yet/created.txt", ctx)


def test_dangling_symlink_escape_refused(work: Path, sandbox: Path, ctx: ToolContext) -> None:
    (sandbox / "dangling").symlink_to(work / "outside" / "new.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("dangling", ctx)


def test_symlink_inside_workspace_allowed(sandbox: Path, ctx: ToolContext) -> None:
    (sandbox / "alias").symlink_to(sandbox / "src")
    assert resolve_path("alias/x.py", ctx) == sandbox / "src" / "x.py"


async def test_every_file_tool_refuses_escape(work: Path, sandbox: Path, ctx: ToolContext) -> None:
    (sandbox / "escape").symlink_to(work / "outside")
    calls = [
        ("read", {"path": "escape/secret.txt"}),
        ("write", {"path": "escape/new.txt", "content": "x"}),
        ("edit", {"path": "escape/secret.txt", "old_string": "secret", "new_string": "x"}),
        ("undo_edit", {"path": "escape/secret.txt"}),
        ("grep", {"pattern": "secret", "path": "escape"}),
        ("find", {"pattern": "*", "path": "escape"}),
        ("ls", {"path": "escape"}),
    ]
    for name, args in calls:
        result = await call(name, ctx, **args)
        assert result.is_error, name
        assert "outside the workspace" in text_of(result), name
    assert not (work / "outside" / "new.txt").exists()
    assert (work / "outside" / "secret.txt").read_text() == "secret\n"
