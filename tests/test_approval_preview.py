"""The preview of a call waiting for approval, computed in the daemon (real files in tmp)."""

from __future__ import annotations

from pathlib import Path

from agentd.mcp.tools import McpTool
from agentd.session.preview import MAX_DIFF_CHARS, approval_preview, without_texts
from agentd.tools import TOOLS
from agentd.tools.base import ToolContext


async def test_an_mcp_call_shows_server_tool_and_arguments(tmp_path: Path) -> None:
    tool = McpTool(
        "mcp__tracker__create_issue",
        "tracker",
        {"name": "create_issue", "inputSchema": {"type": "object"}},
        lambda: None,
        30.0,
    )
    args = {"title": "Crash on start", "labels": ["bug"]}
    preview = await approval_preview(tool, args, ToolContext(tmp_path))
    assert preview is not None
    assert preview.kind == "mcp"
    assert (preview.server, preview.tool, preview.arguments) == ("tracker", "create_issue", args)


async def test_a_big_change_is_cut_at_a_line_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"old {n}\n" for n in range(40_000)))
    content = "".join(f"new {n}\n" for n in range(40_000))
    preview = await approval_preview(
        TOOLS["write"](), {"path": "big.txt", "content": content}, ToolContext(tmp_path)
    )
    assert preview is not None
    assert preview.truncated
    assert preview.diff is not None
    assert len(preview.diff) <= MAX_DIFF_CHARS
    assert preview.diff.endswith("\n")
    assert preview.added == 40_000
    assert preview.removed == 40_000
    assert preview.old_text is None  # over the whole-text limit: only the diff


async def test_a_path_outside_the_workspace_is_an_error_not_a_diff(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("key\n")
    args = {"path": "../secret.txt", "old_string": "key", "new_string": "x"}
    ctx = ToolContext(workspace, workspace=workspace)
    preview = await approval_preview(TOOLS["edit"](), args, ctx)
    assert preview is not None
    assert preview.diff is None
    assert preview.old_text is None
    assert preview.error


async def test_the_event_copy_has_no_whole_texts(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    args = {"path": "a.txt", "content": "two\n"}
    preview = await approval_preview(TOOLS["write"](), args, ToolContext(tmp_path))
    assert preview is not None
    assert preview.old_text == "one\n"
    assert preview.new_text == "two\n"
    slim = without_texts(preview)
    assert slim is not None
    assert slim.old_text is None
    assert slim.new_text is None
    assert slim.diff == preview.diff


async def test_tools_without_a_preview_get_none(tmp_path: Path) -> None:
    assert await approval_preview(TOOLS["ls"](), {"path": "."}, ToolContext(tmp_path)) is None
