"""The preview of a tool call waiting for approval (:class:`ApprovalPreview`).

Computed once in the daemon when the approval is asked, from the call's arguments, so every
client shows the same thing before the click:

- ``edit``/``write``: the unified diff against the file as it is now (the editor's buffer when
  an editor serves the session's files, else the disk), capped at :data:`MAX_DIFF_CHARS`; a
  file the call would create shows its first :data:`HEAD_LINES` lines. A call that would fail
  (no match for ``old_string``, a directory, a path outside the workspace) carries the reason
  in ``error`` instead. Files over :data:`MAX_SOURCE_BYTES` are not diffed (``truncated``).
- ``notebook_edit``: the diff of the cell's source (``path#cellN``), or why it would fail.
- ``lsp`` rename: every file's diff, one after another (``path`` lists the files).
- ``bash``: the command and the directory it would run in; ``web_fetch``: the URL; an MCP
  tool: its server, tool and arguments.

Other tools get no preview (clients show their arguments).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from agentd.protocol.approval import ApprovalPreview
from agentd.tools.base import Tool, ToolContext, ToolError
from agentd.tools.files.diffs import summarize_change
from agentd.tools.files.edit_match import apply_edits
from agentd.tools.files.fileio import looks_binary
from agentd.tools.files.paths import display_path, resolve_path
from agentd.tools.files.safeopen import read_bytes
from agentd.tools.write import WriteParams

if TYPE_CHECKING:
    from agentd.mcp.tools import McpTool

MAX_DIFF_CHARS = 40_000
"""Longest diff a preview carries (the rest is cut, ``truncated`` set)."""
HEAD_LINES = 60
"""Lines of a file to be created that the preview shows."""
MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""Largest file (old or new) that is diffed for a preview."""
MAX_WHOLE_BYTES = 256 * 1024
"""Largest file whose whole old and new texts the preview carries (for ACP)."""
EDITOR_READ_SECONDS = 2.0
"""How long the preview waits for an editor's buffer before reading the disk."""


async def approval_preview(
    tool: Tool, args: dict[str, Any], ctx: ToolContext
) -> ApprovalPreview | None:
    """What ``tool`` would do with ``args`` (None: nothing to show beyond the arguments)."""
    mcp_tool = _as_mcp_tool(tool)
    if mcp_tool is not None:
        return ApprovalPreview(
            kind="mcp", server=mcp_tool.server, tool=mcp_tool.tool_name, arguments=dict(args)
        )
    if tool.name == "bash" and isinstance(args.get("command"), str):
        return ApprovalPreview(kind="command", command=args["command"], cwd=str(ctx.cwd))
    if tool.name == "web_fetch" and isinstance(args.get("url"), str):
        return ApprovalPreview(kind="url", url=args["url"])
    if tool.name == "notebook_edit":
        from agentd.tools.notebook_edit import notebook_preview  # the tool's, on first use

        return await notebook_preview(args, ctx)
    if tool.name == "lsp" and args.get("operation") == "rename":
        return await _rename_preview(tool, args, ctx)
    if tool.name in ("edit", "write"):
        raw = args.get("path")
        shown = raw if isinstance(raw, str) else None
        try:
            return await _file_change(tool.name, args, ctx)
        except (ToolError, msgspec.ValidationError, OSError, UnicodeError) as exc:
            return ApprovalPreview(kind="diff", path=shown, error=_reason(exc))
    return None


async def _rename_preview(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    """Every file an ``lsp`` rename would change, their diffs one after another (the server
    is asked now; the call asks again when approved)."""
    servers = ctx.ports.language_servers
    try:
        if servers is None:
            raise ToolError("the session has no language servers")
        planned = await servers.rename_plan(msgspec.convert(args, tool.Params), ctx)
    except (ToolError, msgspec.ValidationError, OSError, UnicodeError) as exc:
        return ApprovalPreview(kind="diff", path=args.get("path"), error=_reason(exc))
    diffs, added, removed = [], 0, 0
    for path, old, new in planned:
        summary = summarize_change(old, new, display_path(path, ctx))
        diffs.append(summary.diff if summary.diff.endswith("\n") else f"{summary.diff}\n")
        added, removed = added + summary.added, removed + summary.removed
    diff = "".join(diffs)
    shown = ", ".join(display_path(path, ctx) for path, _, _ in planned)
    return ApprovalPreview(
        kind="diff", path=shown, diff=_cut(diff), added=added, removed=removed,
        truncated=len(diff) > MAX_DIFF_CHARS,
    )  # fmt: skip


def _as_mcp_tool(tool: Tool) -> McpTool | None:
    """``tool`` when it is an MCP server's tool, else None. MCP is not imported for this: an
    MCP tool exists only once :mod:`agentd.mcp.tools` has been (a session with servers)."""
    module = sys.modules.get("agentd.mcp.tools")
    if module is not None and isinstance(tool, module.McpTool):
        return cast("McpTool", tool)
    return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, msgspec.ValidationError):
        return f"the arguments are invalid: {exc}"
    if isinstance(exc, OSError):
        return f"the file cannot be read: {exc.strerror or exc}"
    return str(exc)


async def _file_change(name: str, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    """The diff an edit or a write would make (raises ToolError when it would fail)."""
    path = resolve_path(str(args.get("path", "")), ctx)
    shown = display_path(path, ctx)
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path.")
    old = await _current_text(path, ctx)
    if name == "edit":
        from agentd.tools.edit import EditParams, replacements_of  # the tool's, on first use

        params = msgspec.convert(args, EditParams)
        if old is None:
            raise ToolError(f"{shown} does not exist. Use the write tool to create it.")
        new, _count = apply_edits(old, replacements_of(params), shown)
    else:
        new = msgspec.convert(args, WriteParams).content
    return _diff_preview(shown, old, new)


async def _current_text(path: Path, ctx: ToolContext) -> str | None:
    """The file's text as the tools would see it (None: it does not exist). As the tools do,
    an editor is asked only about a file that exists (it refuses the others)."""
    if ctx.files is not None and path.exists():
        try:
            async with asyncio.timeout(EDITOR_READ_SECONDS):
                text = await ctx.files.read_text(path)
        except TimeoutError:
            text = None
        if text is not None:
            return text
    return await asyncio.to_thread(_disk_text, path, ctx.workspace)


def _disk_text(path: Path, workspace: Path | None) -> str | None:
    try:
        data = read_bytes(path, workspace)
    except FileNotFoundError:
        return None
    if looks_binary(data):
        raise ToolError("the file looks binary (it contains NUL bytes); no diff to show.")
    return data.decode("utf-8", "surrogateescape")


def _diff_preview(shown: str, old: str | None, new: str) -> ApprovalPreview:
    """The preview of ``old`` → ``new`` (``old`` None: a file to create)."""
    if max(len(old or ""), len(new)) > MAX_SOURCE_BYTES:
        return ApprovalPreview(kind="diff", path=shown, created=old is None, truncated=True)
    whole = max(len(old or ""), len(new)) <= MAX_WHOLE_BYTES
    if old is None:
        lines = new.splitlines(keepends=True)
        head = "".join("+" + line for line in lines[:HEAD_LINES])
        if head and not head.endswith("\n"):
            head += "\n"
        return ApprovalPreview(
            kind="diff",
            path=shown,
            diff=f"--- /dev/null\n+++ b/{shown}\n@@ -0,0 +1,{len(lines)} @@\n{head}",
            created=True,
            added=len(lines),
            removed=0,
            truncated=len(lines) > HEAD_LINES,
            new_text=new if whole else None,
        )
    summary = summarize_change(old, new, shown)
    diff = summary.diff
    truncated = summary.truncated or len(diff) > MAX_DIFF_CHARS
    return ApprovalPreview(
        kind="diff",
        path=shown,
        diff=_cut(diff),
        added=summary.added,
        removed=summary.removed,
        truncated=truncated,
        old_text=old if whole else None,
        new_text=new if whole else None,
    )


def _cut(diff: str) -> str:
    """``diff`` up to the last whole line within :data:`MAX_DIFF_CHARS`."""
    if len(diff) <= MAX_DIFF_CHARS:
        return diff
    return diff[: diff.rfind("\n", 0, MAX_DIFF_CHARS) + 1]


def without_texts(preview: ApprovalPreview | None) -> ApprovalPreview | None:
    """``preview`` without the whole file texts (what the event stream carries)."""
    if preview is None or (preview.old_text is None and preview.new_text is None):
        return preview
    return msgspec.structs.replace(preview, old_text=None, new_text=None)
