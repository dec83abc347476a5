"""The project's control files, which a sandboxed session may read but never change.

``.agentd.toml`` and ``.agentd/`` configure agentd itself (a session that rewrote them would
set the rules of the next one), ``.mcp.json`` names the programs other agents start, and
``.git/`` holds hooks and ``core.fsmonitor``/``core.pager`` settings that git runs outside
any sandbox at the user's next ``git commit`` or ``git status``. Under ``sandbox =
"workspace"`` the file tools refuse to create, change or delete anything whose path inside
the workspace has one of :data:`CONTROL_NAMES` as a component (at any depth: a nested
``.agentd.toml`` applies to sessions started below it, a nested ``.git`` is a repository
too), or that lies in a git dir the repository enters (a ``.git`` symlink's target, a
submodule's gitfile target: :mod:`agentd.tools.process.gitdirs`). bash gets the same
protection from read-only mounts (:mod:`agentd.tools.process.mountns`).

:func:`refuse_control` checks a resolved path before a tool does anything (an editor's write
included); :func:`check_directory_fd` checks the directory a write really lands in, through
its descriptor, so a folder swapped for a symlink to ``.git`` between the check and the
write is caught too.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentd.tools.base import ToolError
from agentd.tools.process.gitdirs import inside_git_dir

CONTROL_NAMES = frozenset({".git", ".agentd", ".agentd.toml", ".mcp.json"})
"""Names of the control files and folders (see the module docstring)."""


def control_part(path: Path, workspace: Path) -> str | None:
    """The first component of ``path`` (relative to the workspace's real path) that is a
    control name, or None (also for a path outside the workspace)."""
    root = Path(os.path.realpath(workspace))
    if not path.is_relative_to(root):
        return None
    found = next((part for part in path.relative_to(root).parts if part in CONTROL_NAMES), None)
    if found is None and inside_git_dir(path, root):
        return ".git"  # a git dir reached through a .git symlink or gitfile
    return found


def refuse_control(path: Path, workspace: Path | None, shown: str) -> None:
    """Raise ToolError when ``workspace`` is set (a sandboxed session) and ``path`` is or
    lies inside a control file or folder."""
    if workspace is None:
        return
    part = control_part(path, workspace)
    if part is not None:
        raise _refusal(shown, part)


def check_directory_fd(dir_fd: int, name: str, workspace: Path, shown: str) -> None:
    """Raise ToolError when the directory open as ``dir_fd`` is (inside) a control folder of
    ``workspace``, or ``name`` in it is a control name. The directory's real path is read
    from the descriptor (``/proc/self/fd``), so it is the folder the write will land in."""
    if name in CONTROL_NAMES:
        raise _refusal(shown, name)
    try:
        real = Path(f"/proc/self/fd/{dir_fd}").readlink()
    except OSError:
        return  # no /proc: the path check before the open stands alone
    part = control_part(real, workspace)
    if part is not None:
        raise _refusal(shown, part)


def _refusal(shown: str, part: str) -> ToolError:
    return ToolError(
        f"Refused: {shown} is inside the project's control file or folder {part} "
        f"({', '.join(sorted(CONTROL_NAMES))}), which a sandboxed session may read but not "
        "change. Ask the user to make this change."
    )
