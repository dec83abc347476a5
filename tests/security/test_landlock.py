"""bash under sandbox = "workspace" writes only in the workspace, the session's temp dir and
/dev/null-like devices (root included); reads stay open. Where bubblewrap runs, the read-only
mounts of :mod:`agentd.tools.process.mountns` do it ("Read-only file system"), else Landlock
("Permission denied")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentd.hardening import landlock_abi
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from agentd.tools.process import mountns
from agentd.tools.process.landlock import unconfined_warning

BASH = build_tools()["bash"]
needs_landlock = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")


def bash(ctx: ToolContext, command: str) -> str:
    return str(asyncio.run(run_tool(BASH, {"command": command}, ctx)).output)


@pytest.fixture
def places(short_tmp: Path) -> tuple[ToolContext, Path]:
    workspace, outside = short_tmp / "ws", short_tmp / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    return ToolContext(cwd=workspace, workspace=workspace, session_id="ll-test"), outside


@needs_landlock
def test_bash_writes_only_inside(places: tuple[ToolContext, Path]) -> None:
    ctx, outside = places
    assert bash(ctx, "echo in > inside.txt && mkdir -p a/b && cat inside.txt") == "in"
    denied = bash(ctx, f"echo x > {outside}/new.txt; rm -f {outside}/keep.txt; touch ~/probe")
    refusal = "Read-only file system" if mountns.available() else "Permission denied"
    assert denied.count(refusal) == 3
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert bash(ctx, "echo x > /dev/null && cat /etc/hostname > /dev/null && echo ok") == "ok"
    temp = bash(ctx, 'f=$(mktemp) && echo t > "$f" && echo "$f"')
    assert "/agentd-" in temp
    assert Path(temp).read_text() == "t\n"
    assert bash(ctx, f"ln -s {outside} link; echo y > link/via.txt; echo $?").endswith("1")


def test_unsandboxed_bash_is_not_confined(places: tuple[ToolContext, Path]) -> None:
    ctx, outside = places
    ctx.workspace = None
    bash(ctx, f"echo x > {outside}/new.txt")
    assert (outside / "new.txt").exists()


def test_a_kernel_without_landlock_is_reported() -> None:
    assert unconfined_warning(7) is None
    assert "not confined" in (unconfined_warning(0) or "")
