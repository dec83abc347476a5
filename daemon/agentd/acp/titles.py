"""How a tool call looks in an editor: a title written for people and an ACP tool kind.

``Edit src/app.py``, ``Run npm test``, ``Search for "TODO" in src``. Paths are shown relative
to the session's working directory when they are inside it. The kind drives the editor's
icon: agentd's own tool kinds map one to one, and a bash command is ``delete``, ``move`` or
``fetch`` when its first word is ``rm``, ``mv`` or ``curl``/``wget`` (a display hint only;
it decides nothing).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from agentd.protocol.acp import ToolKind

MAX_TITLE = 80

_BASH_KINDS: dict[str, ToolKind] = {
    "rm": "delete",
    "rmdir": "delete",
    "mv": "move",
    "curl": "fetch",
    "wget": "fetch",
}
_NATIVE_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "edit": "edit",
    "execute": "execute",
    "search": "search",
}


def shown_path(raw: object, cwd: str) -> str:
    """``raw`` relative to ``cwd`` when it lies inside it, else as given."""
    if not isinstance(raw, str) or not raw:
        return "."
    absolute = os.path.normpath(Path(cwd, raw))
    if absolute == cwd:
        return "."
    if absolute.startswith(cwd.rstrip("/") + "/"):
        return absolute[len(cwd.rstrip("/")) + 1 :]
    return absolute


def absolute_path(raw: object, cwd: str) -> str | None:
    """``raw`` made absolute against ``cwd`` (ACP paths are absolute); None if not a path."""
    if not isinstance(raw, str) or not raw:
        return None
    return os.path.normpath(Path(cwd, raw))


def _clip(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) > MAX_TITLE or "\n" in text.strip():
        return line[: MAX_TITLE - 1].rstrip() + "…"
    return line


def tool_title(name: str, args: dict[str, Any], cwd: str) -> str:
    """A short title for a call of tool ``name`` with ``args``."""
    path = shown_path(args.get("path"), cwd)
    if name == "read":
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"Read {path} (lines {offset}-{offset + limit - 1})"
        if isinstance(offset, int):
            return f"Read {path} (from line {offset})"
        return f"Read {path}"
    if name == "write":
        return f"Write {path}"
    if name == "edit":
        return f"Edit {path}"
    if name == "undo_edit":
        return f"Undo the last edit of {path}"
    if name == "skill":
        return _clip(f"Load the skill {args.get('name', '')}")
    if name == "web_search":
        query = args.get("query")
        return (
            _clip(f'Search the web for "{query}"') if isinstance(query, str) else "Search the web"
        )
    if name == "notebook_edit":
        cell = args.get("cell_id") or args.get("index") or "?"
        action = args.get("action") if isinstance(args.get("action"), str) else "replace"
        return _clip(f"Notebook {path}: {action} cell {cell}")
    if name == "bash":
        command = args.get("command")
        return f"Run {_clip(command)}" if isinstance(command, str) else "Run a command"
    if name == "grep":
        pattern = args.get("pattern", "")
        return _clip(f'Search for "{pattern}" in {path}')
    if name == "find":
        return _clip(f"Find {args.get('pattern', '')} in {path}")
    if name == "ls":
        return f"List {path}"
    return name


def tool_kind(name: str, args: dict[str, Any], native_kind: str) -> ToolKind:
    """The ACP kind of a call (``native_kind``: the tool's own kind in agentd)."""
    if name == "bash":
        command = args.get("command")
        first = command.split(maxsplit=1)[0] if isinstance(command, str) and command.strip() else ""
        return _BASH_KINDS.get(PurePosixPath(first).name, "execute")
    if name == "ls":
        return "read"
    return _NATIVE_KINDS.get(native_kind, "other")


def native_kind_of(name: str) -> str:
    """The kind agentd's tool ``name`` declares (for history replay, where events are gone)."""
    return {
        "read": "read",
        "ls": "read",
        "write": "edit",
        "edit": "edit",
        "undo_edit": "edit",
        "notebook_edit": "edit",
        "skill": "read",
        "web_search": "search",
        "bash": "execute",
        "grep": "search",
        "find": "search",
    }.get(name, "other")
