"""Agent profiles: what a subagent started by the ``task`` tool may do.

Two are built in: ``general`` (the parent's tools, except ``task``) and ``explore`` (read,
grep, find and ls only). More come from Markdown files with front matter, one profile per
file::

    ---
    name: reviewer
    description: Reviews a diff for bugs and style; read-only.
    tools: read, grep, find, ls
    model: mock/mock-model
    ---
    You review code. Report problems with file and line; change nothing.

``name`` (default: the file name without ``.md``) and ``description`` are required;
``tools`` (a comma list, ``[a, b]`` or ``- item`` lines; default: the parent's tools) and
``model`` (``model`` or ``provider/model``; default: the parent's) are optional; the body is
added to the child's system prompt. A profile naming ``task`` among its tools may start
subagents itself (never deeper than :data:`MAX_DEPTH`).

User profiles live in ``$XDG_CONFIG_HOME/agentd/agents/*.md``, project ones in
``.agentd/agents/*.md`` at or above the session's cwd (up to the repository root), read only
when the project's folder is trusted and the folder is the one trusted (its content is pinned,
:mod:`agentd.config.trust`). A project profile wins over
a user one of the same name, which wins over a built-in. A file that cannot be read or lacks
a name or description is skipped with a warning. The front matter grammar is the one custom
commands use (:mod:`agentd.config.frontmatter`); keys agentd does not know are skipped.

Profiles are read like every instruction file a repository controls
(:func:`agentd.config.textfile.read_capped_bytes`): regular files only (a FIFO, a device or a
socket named ``*.md`` is skipped, never opened for blocking), at most
:data:`MAX_PROFILE_BYTES` each and :data:`MAX_PROFILE_FILES` per folder; callers on the
event loop run :func:`load_profiles` in a worker thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import msgspec

from agentd.config import trust
from agentd.config.frontmatter import parse_front_matter
from agentd.config.textfile import pinned_entries, project_folder, read_capped_bytes

MAX_DEPTH = 2
"""A session started by a task is depth 1, its own subagents depth 2; these never get
``task``."""
READ_ONLY_TOOLS = ("read", "grep", "find", "ls")
MAX_PROFILE_BYTES = 64 * 1024
MAX_PROFILE_FILES = 200
"""Profile files read per folder (the first ones by name); the rest are skipped, warned of."""
TOOLS = ("tools",)
"""The front matter's list keys."""


class AgentProfile(msgspec.Struct, frozen=True):
    """One profile: ``tools`` None means the parent's tools (without ``task``)."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    prompt: str = ""
    source: str = "built-in"


BUILT_IN: tuple[AgentProfile, ...] = (
    AgentProfile(
        name="general",
        description=(
            "General-purpose agent for multi-step work in its own context: researching, "
            "searching and changing code. Has the same tools as you (except task)."
        ),
    ),
    AgentProfile(
        name="explore",
        description=(
            "Fast read-only explorer: finds files, searches code and answers questions "
            "about the codebase. Tools: read, grep, find, ls. Changes nothing."
        ),
        tools=READ_ONLY_TOOLS,
    ),
)

SUBAGENT_PROMPT = (
    "You are a subagent: another agent gave you the task below and reads only your final "
    "message. Do the task fully, then end with a concise report of what you found or did "
    "(paths, line numbers, results); do not ask questions back."
)
"""What every child's system prompt adds after the instructions (then the profile's body)."""


def load_profiles(
    cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[dict[str, AgentProfile], list[str]]:
    """Every profile a session in ``cwd`` may start, by name, and warnings about skipped
    files (see the module docstring for where they come from and which wins)."""
    env = os.environ if env is None else env
    profiles = {profile.name: profile for profile in BUILT_IN}
    warnings: list[str] = []
    _add_profiles(profiles, trust.config_dir(env) / "agents", None, warnings)
    project = project_folder(cwd, env, "agents")
    if project is not None:
        state, snapshot = trust.checked_folder(project, env)
        if state == "trusted" and snapshot is not None:
            _add_profiles(profiles, project, snapshot.files, warnings)
        else:
            problem = snapshot.problem if snapshot else None
            warnings.append(trust.folder_warning(project, "agent profiles", state, problem))
    return profiles, warnings


def _add_profiles(
    profiles: dict[str, AgentProfile],
    folder: Path,
    files: dict[str, bytes] | None,
    warnings: list[str],
) -> None:
    """Add the ``*.md`` profiles of ``folder`` (a project's: from ``files``, the bytes its
    trust was checked on), at most :data:`MAX_PROFILE_FILES` of them."""
    if files is None:
        paths = _profile_files(folder, warnings)
    else:
        paths = pinned_entries(_profile_files(folder, warnings), files, "agent profile", warnings)
    for path in paths:
        try:
            profile = parse_profile(path, None if files is None else files[path.name])
        except ValueError as exc:
            warnings.append(f"ignored agent profile {path}: {exc}")
            continue
        profiles[profile.name] = profile


def _profile_files(folder: Path, warnings: list[str]) -> list[Path]:
    """The ``*.md`` entries of ``folder`` by name (none when it is not a folder), at most
    :data:`MAX_PROFILE_FILES` of them."""
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix == ".md")
    except OSError:  # no such folder (the usual case), or unreadable
        return []
    _warn_if_capped(folder, len(paths), warnings)
    return paths[:MAX_PROFILE_FILES]


def _warn_if_capped(folder: Path, count: int, warnings: list[str]) -> None:
    if count > MAX_PROFILE_FILES:
        warnings.append(
            f"read only the first {MAX_PROFILE_FILES} agent profiles of {folder} ({count} files)"
        )


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def parse_profile(path: Path, data: bytes | None = None) -> AgentProfile:
    """The profile in ``path`` (whose bytes are ``data`` when given); ValueError saying what
    is wrong with it."""
    if data is None:
        try:
            data = read_capped_bytes(path, MAX_PROFILE_BYTES)
        except OSError as exc:  # NotRegularFile too: a FIFO, a device, a folder
            raise ValueError(exc.strerror or str(exc)) from None
    if len(data) > MAX_PROFILE_BYTES:
        raise ValueError(f"larger than {MAX_PROFILE_BYTES // 1024} KB")
    fields, body = parse_front_matter(data.decode("utf-8", "replace"), required=True, lists=TOOLS)
    name = str(fields.get("name") or path.stem)
    if not _NAME.match(name):
        raise ValueError(f"bad name {name!r} (letters, digits, '_', '-', '.')")
    description = str(fields.get("description") or "").strip()
    if not description:
        raise ValueError("no description in its front matter")
    tools = fields.get("tools")
    model = fields.get("model")
    return AgentProfile(
        name=name,
        description=description,
        tools=tuple(tools) if isinstance(tools, list) else None,
        model=str(model) if model else None,
        prompt=body.strip(),
        source=str(path),
    )
