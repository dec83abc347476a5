"""Path resolution for every file tool, including the workspace sandbox.

:func:`resolve_path` is the single place a model-supplied path becomes a real path: ``~``
expands, relative paths resolve against the session cwd, and symlinks are resolved (the final
component too, and for a file not yet created the nearest existing ancestor decides). When
``ctx.workspace`` is set the session is sandboxed: a real path outside the workspace root is
refused with a :class:`ToolError`, so ``ln -s / escape`` or a dangling link cannot lead out.

The sandbox covers the file tools only; ``bash`` starts in the workspace but a shell command
can reach anything the daemon's user can.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentd.protocol.events import Location
from agentd.tools.base import ToolContext, ToolError


def locate(raw: str, ctx: ToolContext, line: int | None = None) -> list[Location]:
    """The one location a path argument names, for editors (none when the path is unusable)."""
    try:
        return [Location(path=str(absolute_path(raw, ctx)), line=line)]
    except ToolError:
        return []


def absolute_path(raw: str, ctx: ToolContext) -> Path:
    """``raw`` made absolute (``~`` expanded, relative to ``ctx.cwd``), without resolving
    symlinks or ``..``. Raises ToolError for an empty path or one containing NUL."""
    if not raw or not raw.strip():
        raise ToolError("The path is empty; give a file or directory path.")
    if "\0" in raw:
        raise ToolError("The path contains a NUL character; give a plain path.")
    try:
        expanded = Path(raw).expanduser()
    except RuntimeError as error:
        raise ToolError(f"Cannot expand {raw!r}: {error}.") from None
    return expanded if expanded.is_absolute() else Path(ctx.cwd, expanded)


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """The real absolute path for ``raw`` (symlinks resolved, ``..`` collapsed).

    Raises ToolError when ``ctx.workspace`` is set and the real path is outside it, or when
    the path cannot be resolved (a symlink loop).
    """
    try:
        real = Path(os.path.realpath(absolute_path(raw, ctx)))
    except (OSError, ValueError) as error:
        raise ToolError(f"Cannot resolve path {raw!r}: {error}.") from error
    if ctx.workspace is not None:
        check_in_workspace(real, ctx.workspace, raw)
    return real


def check_in_workspace(real: Path, workspace: Path, raw: str) -> None:
    """Raise ToolError unless the already-resolved ``real`` lies inside ``workspace``."""
    root = Path(os.path.realpath(workspace))
    if real != root and not real.is_relative_to(root):
        raise ToolError(
            f"Path {raw!r} resolves to {real}, which is outside the workspace {root}. "
            "This session is sandboxed to the workspace: use a path inside it."
        )


def display_path(path: Path, ctx: ToolContext) -> str:
    """``path`` as shown to the model: relative to the session cwd when inside it."""
    cwd = Path(os.path.realpath(ctx.cwd))
    if path.is_relative_to(cwd) and path != cwd:
        return str(path.relative_to(cwd))
    return str(path)
