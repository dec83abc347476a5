"""Project trust: which ``.agentd.toml`` files are read, and what an untrusted one may change.

A project file comes with the repository, so until the user trusts its folder it may only
make a session *safer* (:func:`tighten`): a stricter ``permission_mode``, ``sandbox =
"workspace"``, more deny rules, ``allow_dangerous = false``, lower limits, more
``secret_env`` names, and extra system-prompt text (from a file inside the project). Every
other key it sets is ignored, and named in a warning that says how to trust the folder.

Trusted folders are listed in ``$XDG_CONFIG_HOME/agentd/trusted.json``, written by
``agentctl trust`` (format: :mod:`agentd.protocol.trust_list`). Trust is pinned to the content
of every control path (:mod:`agentd.protocol.control_pins`): a project file, or a project
folder of hooks, commands or agent profiles (:func:`checked_folder`), that changed (or
appeared) since its folder was trusted is treated as untrusted, with a warning
(:func:`changed_warning`, :func:`folder_warning`) until the user trusts it again.

:func:`find_project_file` searches upwards from the session's cwd and stops at the
repository root (a directory holding ``.git``), below ``$HOME`` and below ``/``. Like
OpenSSH's StrictModes, a file that is not owned by the user (or root), or that group or
others may write, is ignored with a warning.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentd.config.schema import ConfigFile
from agentd.protocol.control_pins import Snapshot, read_control
from agentd.protocol.trust_list import (
    FileTrust,
    config_dir,
    control_trust,
    file_trust,
    is_trusted,
)
from agentd.tools.settings import tool_default

__all__ = [
    "changed_warning",
    "checked_folder",
    "config_dir",
    "control_trust",
    "file_trust",
    "find_project_file",
    "folder_warning",
    "hooks_warning",
    "ignored_warning",
    "is_trusted",
    "tighten",
]

PROJECT_FILE = ".agentd.toml"
_MODE_RANK = {"auto": 0, "ask": 1, "read-only": 2}
_LIMIT_TABLES = ("tools", "retry", "compaction")


def find_project_file(cwd: Path, env: Mapping[str, str]) -> tuple[Path | None, list[str]]:
    """The nearest usable ``.agentd.toml`` at or above ``cwd``, and warnings about ignored
    ones (wrong owner, writable by others). See the module docstring for where it stops."""
    warnings: list[str] = []
    home = Path(os.path.realpath(env.get("HOME") or Path.home()))
    directory = Path(os.path.realpath(cwd))
    while directory != home and directory.parent != directory:
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            problem = unsafe_file_reason(candidate)
            if problem is None:
                return candidate, warnings
            warnings.append(f"ignored {candidate}: {problem}")
        if (directory / ".git").exists():
            break
        directory = directory.parent
    return None, warnings


def unsafe_file_reason(path: Path) -> str | None:
    """Why ``path`` must not be read as configuration (StrictModes-like), or None."""
    try:
        info = path.stat()
    except OSError as exc:
        return f"cannot stat it ({exc.strerror})"
    if info.st_uid not in (os.geteuid(), 0):
        return f"it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others may write it (mode {stat.filemode(info.st_mode)})"
    return None


def tighten(
    base: ConfigFile, project: dict[str, Any], project_dir: Path
) -> tuple[dict[str, Any], list[str]]:
    """The part of an untrusted ``project`` file that may apply over ``base`` (the trusted
    settings), and the dotted names of the keys ignored because they would loosen them."""
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in project.items():
        if key in _LIMIT_TABLES or key == "permissions":
            section, dropped = _tighten_table(key, value, getattr(base, key))
            if section:
                kept[key] = section
            ignored += dropped
        elif _tightens(key, value, base, project_dir):
            kept[key] = value
        else:
            ignored.append(key)
    return kept, ignored


def _tightens(key: str, value: Any, base: ConfigFile, project_dir: Path) -> bool:
    if key == "permission_mode":
        return bool(_MODE_RANK.get(value, -1) >= _MODE_RANK[base.permission_mode])
    if key == "sandbox":
        return value in ("workspace", base.sandbox)
    if key == "max_turns":
        return isinstance(value, int) and bool(value <= base.max_turns)
    if key == "system_prompt":
        return True
    if key == "system_prompt_file":
        return isinstance(value, str) and _inside(project_dir, project_dir / value)
    return False


def _tighten_table(name: str, section: Any, base: Any) -> tuple[dict[str, Any], list[str]]:
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in (section or {}).items():
        if _table_value_tightens(key, value, base):
            kept[key] = value
        else:
            ignored.append(f"{name}.{key}")
    return kept, ignored


def _table_value_tightens(key: str, value: Any, base: Any) -> bool:
    if key in ("deny", "secret_env", "grep_backend"):
        return True
    if key in ("allow", "pass_env"):
        return not value
    if isinstance(value, bool):
        loosening_when_true = (
            "allow_dangerous",
            "accept_images",
            "allow_auto_without_sandbox",
            "sandbox_network",
        )
        return value is False if key in loosening_when_true else False
    if isinstance(value, int | float):
        current = getattr(base, key, None)
        if current is None:
            current = tool_default(key)
        return current is not None and value <= current
    return False


def _inside(root: Path, path: Path) -> bool:
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path.expanduser()))
    return real.is_relative_to(real_root)


def ignored_warning(path: Path, keys: list[str]) -> str:
    """The warning for keys of an untrusted project file that were ignored."""
    folder = path.parent
    return (
        f"{path} is in a folder you have not trusted, so these settings in it were ignored: "
        f"{', '.join(keys)}. An untrusted project file may only tighten settings; if you "
        f"trust this folder, run `agentctl trust {folder}`."
    )


def hooks_warning(path: Path, hooks: dict[str, Any], changed_scripts: Path | None = None) -> str:
    """The warning for the hooks of an untrusted project file: none of them runs; each is
    named (event, command, matcher) so the user sees what the project wanted to run.
    ``changed_scripts``: the file is trusted, but its hook scripts folder is not the one
    trusted."""
    named = [
        f"{event} `{hook.get('command', '')}`"
        + (f" (matcher {hook['matcher']})" if hook.get("matcher", "*") != "*" else "")
        for event, entries in hooks.items()
        for hook in entries
        if isinstance(hook, dict)
    ]
    why = "is in a folder you have not trusted (or changed since you trusted it)"
    if changed_scripts is not None:
        why = (
            f"names hooks, and the scripts folder {changed_scripts} changed (or appeared) "
            "since you trusted its folder"
        )
    return (
        f"{path} {why}, so its hooks do not run: {', '.join(named) or '(none)'}. If you "
        f"trust this folder, run `agentctl trust {path.parent}`."
    )


def changed_warning(path: Path) -> str:
    """The warning for a project file in a trusted folder whose content is not the one the
    user trusted."""
    return (
        f"{path} is not the file you trusted: its content changed (or it appeared) since you "
        f"trusted its folder, so it is treated as untrusted and may only tighten settings. "
        f"Review it; to trust its current content, run `agentctl trust {path.parent}`."
    )


def checked_folder(folder: Path, env: Mapping[str, str]) -> tuple[FileTrust, Snapshot | None]:
    """Whether the control folder ``folder`` (``X/.agentd/commands``…) is trusted as it is now,
    and what was read of it (None when it does not exist): use its :attr:`Snapshot.files`,
    the bytes that were checked, never the folder read again."""
    snapshot = read_control(folder)
    return control_trust(folder, snapshot.pin if snapshot else None, env), snapshot


def folder_warning(folder: Path, what: str, state: FileTrust, problem: str | None = None) -> str:
    """The warning for a project folder of ``what`` (``custom commands``…) that was not read
    because it is untrusted (``state``) or not the content the user trusted."""
    owner = folder.parent.parent
    if state == "untrusted":
        return (
            f"ignored the {what} in {folder}: the folder {owner} is not trusted (to use them, "
            f"run `agentctl trust {owner}`)"
        )
    why = f" ({problem}: it cannot be pinned)" if problem else ""
    return (
        f"ignored the {what} in {folder}: they are not the ones you trusted — the folder "
        f"changed (or appeared) since you trusted {owner}{why}. Review it; to trust its current "
        f"content, run `agentctl trust {owner}`"
    )
