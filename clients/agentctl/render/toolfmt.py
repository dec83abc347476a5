"""One-line descriptions of tool calls and their outcomes, for the terminal renderer.

Pure functions over the event's values (its ``args``, typed ``details`` and result text), so
they are easy to test. ``args`` are what the model wrote and may have any shape: a missing or
mistyped argument falls back to a shorter description, never an exception.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from agentd.protocol.document_details import (
    NotebookEditDetails,
    ReadNotebookDetails,
    ReadPdfDetails,
    SkillDetails,
    WebSearchDetails,
)
from agentd.protocol.lsp_details import LspDetails
from agentd.protocol.tool_details import (
    BashDetails,
    EditDetails,
    TaskDetails,
    ToolDetails,
    UndoEditDetails,
    WriteDetails,
)

SUMMARY_WIDTH = 72
"""Longest call summary shown before it is cut with an ellipsis."""


def shorten(text: str, width: int = SUMMARY_WIDTH) -> str:
    """The first line of ``text``, cut to ``width`` characters with ``…`` when longer."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > width:
        return first[: width - 1] + "…"
    return first + (" …" if more else "")


def display_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else unchanged."""
    if not cwd or not path:
        return path
    try:
        relative = Path(path).relative_to(cwd)
    except ValueError:
        return path
    return str(relative) or "."


def _text_arg(args: dict[str, Any], *names: str) -> str:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def describe_call(name: str, args: dict[str, Any], cwd: str | None = None) -> str:
    """What a call does, in a few words: the command for bash, the path for file tools."""
    if name == "bash":
        return shorten(_text_arg(args, "command"))
    if name in ("read", "write", "edit", "ls"):
        path = display_path(_text_arg(args, "path", "file_path"), cwd)
        offset = args.get("offset")
        pages = args.get("pages")
        if name == "read" and isinstance(pages, str) and pages:
            return f"{path} pages {pages}"
        if name == "read" and isinstance(offset, int):
            return f"{path}:{offset}"
        return path or ("." if name == "ls" else "")
    if name == "notebook_edit":
        return _notebook_call(args, cwd)
    if name == "web_search":
        return shorten(_text_arg(args, "query"))
    if name == "skill":
        return _text_arg(args, "name")
    if name == "task":
        agent = _text_arg(args, "agent") or "general"
        return shorten(f"{_text_arg(args, 'description')}  ({agent})")
    if name == "web_fetch":
        return shorten(_text_arg(args, "url"))
    if name == "ask_user":
        asked = args.get("questions")
        heads = (
            [q.get("header") or "" for q in asked if isinstance(q, dict)]
            if isinstance(asked, list)
            else []
        )
        return shorten(", ".join(h for h in heads if isinstance(h, str) and h))
    if name == "todo":
        todos = args.get("todos")
        return f"{len(todos)} steps" if isinstance(todos, list) else ""
    if name in ("grep", "find"):
        pattern = _text_arg(args, "pattern")
        where = display_path(_text_arg(args, "path"), cwd)
        return shorten(f"{pattern}  {where}".strip() if where else pattern)
    if not args:
        return ""
    return shorten(msgspec.json.encode(args).decode())  # compact JSON, as sent


def _notebook_call(args: dict[str, Any], cwd: str | None) -> str:
    """``nb.ipynb cell abc (replace)``: the notebook, the cell and what happens to it."""
    path = display_path(_text_arg(args, "path"), cwd)
    cell = _text_arg(args, "cell_id")
    index = args.get("index")
    if not cell and isinstance(index, int):
        cell = f"#{index}"
    action = _text_arg(args, "action") or "replace"
    return shorten(f"{path} cell {cell} ({action})" if cell else f"{path} ({action})")


def call_failed(details: ToolDetails | None, is_error: bool) -> bool:
    """True when a call did not do its job: an error result, or a bash command that exited
    non-zero or timed out (the model sees those as results, the user as failures)."""
    if is_error:
        return True
    if not isinstance(details, BashDetails):
        return False
    return details.timed_out or (details.exit_code is not None and details.exit_code != 0)


def format_bytes(count: int) -> str:
    """``512 B``, ``1.5 KB``, ``2.0 MB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def format_seconds(seconds: float) -> str:
    """``0.3s``, ``12s``, ``2m05s``."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def _bash_outcome(details: BashDetails) -> str:
    parts: list[str] = []
    if details.timed_out:
        parts.append("timed out")
    elif details.exit_code is not None:
        parts.append(f"exit {details.exit_code}")
    parts.append(format_seconds(details.duration_ms / 1000))
    if details.truncated:
        spill = details.spill_path
        parts.append(f"output truncated, full in {spill}" if spill else "output truncated")
    return " · ".join(parts)


def edit_counts(details: EditDetails | WriteDetails | UndoEditDetails) -> str:
    """``(+3 -1)`` (real minus sign) from a change's ``added``/``removed`` counts, or ``""``."""
    added, removed = details.added, details.removed
    if added is None and removed is None:
        return ""
    return f"(+{added or 0} −{removed or 0})"


def describe_outcome(details: ToolDetails | None, is_error: bool, result_text: str) -> str:
    """How a finished call went, in a few words (empty when there is nothing to add).

    Errors show the first line of the result the model saw; bash shows exit code and
    duration; edit the added/removed line counts; write whether it created the file.
    """
    if isinstance(details, BashDetails):
        outcome = _bash_outcome(details)
        if is_error and not outcome:
            return shorten(result_text)
        return outcome
    if is_error:
        return shorten(result_text) or "failed"
    if isinstance(details, EditDetails):
        return edit_counts(details)
    if isinstance(details, WriteDetails):
        verb = "created" if details.created else "wrote"
        return f"{verb} {format_bytes(details.bytes)}"
    document = _document_outcome(details)
    if document is not None:
        return document
    if isinstance(details, TaskDetails):
        turns = f"{details.turns} turn{'s' if details.turns != 1 else ''}"
        return f"{turns} · session {details.child_session_id}"
    return ""


def _document_outcome(details: ToolDetails | None) -> str | None:
    """The outcome of a notebook, PDF, search or skill call (None: another tool)."""
    if isinstance(details, NotebookEditDetails):
        verb = {"replace": "replaced", "insert": "inserted", "delete": "deleted"}[details.action]
        text = (
            f"{verb} {details.cell_type} cell {details.index} (+{details.added} −{details.removed})"
        )
        return text + (" · outputs cleared" if details.outputs_cleared else "")
    if isinstance(details, ReadNotebookDetails):
        last = details.offset + details.shown - 1
        images = f" · {details.images} image(s)" if details.images else ""
        return f"cells {details.offset}-{last} of {details.cells}{images}"
    if isinstance(details, ReadPdfDetails):
        scans = f" · {len(details.image_pages)} scanned" if details.image_pages else ""
        return f"pages {details.first}-{details.last} of {details.pages}{scans}"
    if isinstance(details, WebSearchDetails):
        count = len(details.results)
        return f"{count} result{'s' if count != 1 else ''} · {details.backend}"
    if isinstance(details, SkillDetails):
        return f"skill: {details.name} ({details.source})"
    return None


def format_count(value: int) -> str:
    """Token counts for humans: ``950``, ``1.2k``, ``3.4M``."""
    if value < 1000:
        return str(value)
    if value < 1_000_000:
        return f"{value / 1000:.1f}k"
    return f"{value / 1_000_000:.1f}M"


def format_cost(cost: float) -> str:
    """``$0.0012`` below a cent, ``$1.23`` above, ``$0`` for free runs."""
    if cost <= 0:
        return "$0"
    if cost < 0.01:
        return f"${cost:.4f}"
    return f"${cost:.2f}"


MAX_PROBLEM_LINES = 10


def problem_lines(details: ToolDetails | None) -> list[str]:
    """The new problems a change introduced (a write, edit, undo_edit or lsp rename), one
    ``  path:line:col severity: message`` line each, at most :data:`MAX_PROBLEM_LINES`."""
    found = getattr(details, "diagnostics", None) if details is not None else None
    if not found or (isinstance(details, LspDetails) and details.operation == "diagnostics"):
        return []
    rows = [
        f"  {d.path}:{d.line}:{d.column} {d.severity}: {shorten(d.message.splitlines()[0])}"
        for d in found[:MAX_PROBLEM_LINES]
    ]
    if len(found) > MAX_PROBLEM_LINES:
        rows.append(f"  … {len(found) - MAX_PROBLEM_LINES} more")
    return rows
