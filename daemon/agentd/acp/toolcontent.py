"""What a finished tool call shows in the editor: diffs for file changes, output for the rest.

Edits and writes become ACP ``diff`` content: one ``{path, oldText, newText}`` per hunk of the
unified diff agentd's tools put in ``details.diff`` (the changed lines with their context), or
the whole new text for a file the call created. Everything else shows the result text the model
saw (command output in a code fence), images as images. Running bash output is shown as a
bounded tail, so a long-running command costs O(tail) bytes per update, not O(output).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentd.protocol.acp import ContentItem, DiffItem, ImageBlock, TextBlock, ToolCallContent
from agentd.protocol.approval import ApprovalPreview
from agentd.protocol.content import ImageContent, TextContent
from agentd.protocol.document_details import NotebookEditDetails
from agentd.protocol.lsp_details import PROBLEMS_HEADING
from agentd.protocol.tool_details import EditDetails, ToolDetails, UndoEditDetails, WriteDetails

MAX_PREVIEW_BYTES = 256 * 1024
"""Largest existing file whose old text a write's approval request shows."""
LIVE_TAIL_CHARS = 16_000
"""Characters of running output shown while a command runs (the end of it)."""


def fenced(text: str) -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def live_output(output: str) -> list[ToolCallContent]:
    """The running output of a command, as the tail that fits in one update."""
    if len(output) > LIVE_TAIL_CHARS:
        output = "…" + output[-LIVE_TAIL_CHARS:]
    return [ContentItem(content=TextBlock(text=fenced(output)))]


def diff_hunks(diff: str, path: str) -> list[DiffItem]:
    """One DiffItem per ``@@`` hunk of a unified diff: old and new text of that region."""
    items: list[DiffItem] = []
    old: list[str] | None = None
    new: list[str] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            if old is not None:
                items.append(_item(path, old, new))
            old, new = [], []
        elif old is None:  # the ---/+++ header
            continue
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith(" ") or not line:
            old.append(line[1:])
            new.append(line[1:])
    if old is not None:
        items.append(_item(path, old, new))
    return items


def _item(path: str, old: list[str], new: list[str]) -> DiffItem:
    return DiffItem(path=path, old_text="\n".join(old) + "\n", new_text="\n".join(new) + "\n")


def permission_content(
    name: str, args: dict[str, Any], preview: ApprovalPreview | None, path: str | None
) -> list[ToolCallContent]:
    """What a call waiting for approval would do, from the daemon's preview: an edit or a
    write as one diff of the whole file (``oldText``/``newText``; a new file: ``oldText``
    null), or per hunk when the file is too big to send whole; the command with its
    directory; the URL; an MCP call's arguments. Without a preview, from the arguments."""
    if preview is None:
        return proposed_content(name, args, path)
    if preview.kind == "diff" and path is not None:
        if preview.new_text is not None:
            return [DiffItem(path=path, old_text=preview.old_text, new_text=preview.new_text)]
        if preview.diff:
            return list(diff_hunks(preview.diff, path))
        if preview.error:
            return [ContentItem(content=TextBlock(text=f"This call would fail: {preview.error}"))]
    if preview.kind == "command" and preview.command is not None:
        text = f"{fenced(preview.command)}\nin `{preview.cwd}`"
        return [ContentItem(content=TextBlock(text=text))]
    if preview.kind == "url" and preview.url is not None:
        return [ContentItem(content=TextBlock(text=f"Fetch {preview.url}"))]
    if preview.kind == "mcp":
        arguments = json.dumps(preview.arguments or {}, indent=2, ensure_ascii=False)
        title = f"MCP server `{preview.server}`, tool `{preview.tool}`"
        return [ContentItem(content=TextBlock(text=f"{title}\n{fenced(arguments)}"))]
    return proposed_content(name, args, path)


def proposed_content(name: str, args: dict[str, Any], path: str | None) -> list[ToolCallContent]:
    """What a call waiting for approval would do: the edit's replacements or the written
    text as diffs (a write over an existing file shows its whole old text when it is small),
    the command in a code fence."""
    if name == "bash" and isinstance(args.get("command"), str):
        return [ContentItem(content=TextBlock(text=fenced(args["command"])))]
    if path is None:
        return []
    if name == "edit":
        edits = args.get("edits")
        items: list[Any] = edits if isinstance(edits, list) else [args]
        return [
            DiffItem(path=path, old_text=item["old_string"], new_text=item["new_string"])
            for item in items
            if isinstance(item, dict)
            and isinstance(item.get("old_string"), str)
            and isinstance(item.get("new_string"), str)
        ]
    if name == "write" and isinstance(args.get("content"), str):
        return [DiffItem(path=path, old_text=_current_text(path), new_text=args["content"])]
    return []


def _current_text(path: str) -> str | None:
    """The file's text when it exists, is small and decodes; None otherwise (a new file)."""
    try:
        file = Path(path)
        if file.stat().st_size > MAX_PREVIEW_BYTES:
            return None
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def result_content(
    name: str,
    args: dict[str, Any],
    result: list[TextContent | ImageContent],
    is_error: bool,
    details: ToolDetails | None,
    path: str | None,
) -> list[ToolCallContent]:
    """The content of a finished call (see the module docstring)."""
    if not is_error and path is not None:
        diff = _file_change(args, details, path)
        if diff:
            return [*diff, *_problems(result, details)]
    blocks: list[ToolCallContent] = []
    for block in result:
        if isinstance(block, ImageContent):
            image = ImageBlock(data=block.data, mime_type=block.mime_type)
            blocks.append(ContentItem(content=image))
        elif block.text:
            text = fenced(block.text) if name == "bash" else block.text
            blocks.append(ContentItem(content=TextBlock(text=text)))
    return blocks


def _problems(
    result: list[TextContent | ImageContent], details: ToolDetails | None
) -> list[ToolCallContent]:
    """After a change's diff: the new problems a language server found, as the model read
    them (the result text from their heading on)."""
    if not getattr(details, "diagnostics", None):
        return []
    text = "".join(block.text for block in result if isinstance(block, TextContent))
    start = text.find(PROBLEMS_HEADING)
    return [ContentItem(content=TextBlock(text=text[start:]))] if start >= 0 else []


def _file_change(args: dict[str, Any], details: ToolDetails | None, path: str) -> list[DiffItem]:
    """The change a write, edit, undo_edit or notebook_edit made, from its details (else
    nothing)."""
    if isinstance(details, NotebookEditDetails):  # the cell's source, as a diff of the notebook
        return diff_hunks(details.diff, path) if details.diff else []
    if not isinstance(details, WriteDetails | EditDetails | UndoEditDetails):
        return []
    content = args.get("content")
    if isinstance(details, WriteDetails) and details.created and isinstance(content, str):
        return [DiffItem(path=path, old_text=None, new_text=content)]
    return diff_hunks(details.diff, path) if details.diff else []
