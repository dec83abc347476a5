"""What a call waiting for approval would do, as lines for the terminal (stderr).

The daemon sends the preview with the request (``RequestPermissionParams.preview``): an
edit's or a write's diff (coloured, at most :data:`MAX_DIFF_LINES` lines, then how many more),
a command with its directory, a URL, an MCP server, tool and arguments. Every line is
indented and cut to the terminal's width, so the question below it stays in view.
"""

from __future__ import annotations

from agentctl.render.style import Style
from agentd.protocol.approval import ApprovalPreview

MAX_DIFF_LINES = 40
MAX_TEXT_LINES = 12
INDENT = "  "


def preview_lines(style: Style, preview: ApprovalPreview | None, width: int) -> list[str]:
    """The lines shown above the question (none without a preview); each is cut to
    ``width`` visible characters before it is coloured."""
    if preview is None:
        return []
    room = max(width - len(INDENT), 20)
    if preview.kind == "command":
        command = f"$ {preview.command or ''}".splitlines()
        lines = [_cut(line, room) for line in _capped(command, MAX_TEXT_LINES)]
        lines.append(style.dim(_cut(f"in {preview.cwd or '?'}", room)))
    elif preview.kind == "url":
        lines = [_cut(f"fetch {preview.url or ''}", room)]
    elif preview.kind == "mcp":
        import json  # only for an MCP call

        arguments = json.dumps(preview.arguments or {}, indent=2, ensure_ascii=False)
        lines = [_cut(f"MCP server {preview.server or '?'} · tool {preview.tool or '?'}", room)]
        lines += [_cut(line, room) for line in _capped(arguments.splitlines(), MAX_TEXT_LINES)]
    else:
        lines = _diff_lines(style, preview, room)
    return [INDENT + line for line in lines]


def _diff_lines(style: Style, preview: ApprovalPreview, room: int) -> list[str]:
    count = preview.added or 0
    size = (
        f"new file, {count} line{'' if count == 1 else 's'}"
        if preview.created
        else f"+{preview.added or 0} −{preview.removed or 0}"
    )
    path = preview.path or "?"
    lines = [f"{style.bold(path)}  {style.dim(size)}"]
    if preview.error:
        lines.append(style.yellow(_cut(f"this call would fail: {preview.error}", room)))
    body = [
        line
        for line in (preview.diff or "").splitlines()
        if not line.startswith(("--- ", "+++ "))  # the path is on the first line
    ]
    lines += [_colour(style, _cut(line, room)) for line in _capped(body, MAX_DIFF_LINES)]
    if preview.truncated and len(body) <= MAX_DIFF_LINES:
        lines.append(style.dim("… (the rest of the change is not shown)"))
    return lines


def _colour(style: Style, line: str) -> str:
    if line.startswith("+"):
        return style.green(line)
    if line.startswith("-"):
        return style.red(line)
    if line.startswith(("@@", "…")):
        return style.dim(line)
    return line


def _capped(lines: list[str], limit: int) -> list[str]:
    if len(lines) <= limit:
        return list(lines)
    return [*lines[:limit], f"… {len(lines) - limit} more lines"]


def _cut(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, ``…`` marking the cut."""
    return line if len(line) <= width else line[: width - 1] + "…"
