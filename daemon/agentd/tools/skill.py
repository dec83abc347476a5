"""The ``skill`` tool: progressive disclosure of Agent Skills.

The model sees each skill's name and description in this tool's description (the session's
``ctx.settings.skills``, listed within :data:`MAX_LISTING` bytes); ``skill {name}`` returns
the body of its ``SKILL.md`` and the files of its folder, which the model reads with
``read`` and runs with ``bash`` (normal approvals and rules). A skill's ``allowed-tools``
narrow the run while it is followed (:func:`narrowed_out`, checked by ``run_tool``): the
other tools are refused until the run ends or another skill is loaded. It never widens a
permission. Loading is recorded in the session like every call (``SkillDetails``).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.document_details import SkillDetails
from agentd.protocol.events import Location, ToolKind
from agentd.protocol.skills import SkillInfo
from agentd.tools.base import ToolContext, ToolError, ToolResult

_PREAMBLE = (
    "Load a skill: instructions (and the files they use) for a kind of task. When a task "
    "matches a skill below, load it first and follow it; read the files it names with "
    "read and run its scripts with bash. Skills:\n"
)
MAX_LISTING = 4096 - len(_PREAMBLE.encode())
"""Bytes of skill names and descriptions the tool's description carries at most: the whole
description, its fixed words included, stays within 4 KB however many skills are installed."""
MAX_BODY = 256 * 1024
MAX_FILES = 200
STATE = "skill"
"""``ctx.state`` key: (skill name, tools allowed) while a skill with allowed-tools is followed."""
_ALIASES = {
    "glob": "find", "webfetch": "web_fetch", "websearch": "web_search", "notebookedit":
    "notebook_edit", "todowrite": "todo", "multiedit": "edit", "ls": "ls",
}  # fmt: skip


class SkillParams(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(description="The skill to load, as listed.")]


class SkillTool:
    name: ClassVar[str] = "skill"
    description: ClassVar[str] = _PREAMBLE + "{skills}"
    Params: ClassVar[type[SkillParams]] = SkillParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False

    def locations(self, params: SkillParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: SkillParams, ctx: ToolContext) -> ToolResult:
        skill = next((s for s in ctx.settings.skills if s.name == params.name), None)
        if skill is None:
            names = ", ".join(s.name for s in ctx.settings.skills) or "none"
            raise ToolError(f"No skill named {params.name!r}. Skills: {names}.")
        body, files = await asyncio.to_thread(_load, Path(skill.path))
        allowed = tool_names(skill.allowed_tools) if skill.allowed_tools else None
        if allowed is None:
            ctx.state.pop(STATE, None)
        else:
            ctx.state[STATE] = (skill.name, allowed)
        details = SkillDetails(
            name=skill.name, path=skill.path, source=skill.source,
            allowed_tools=sorted(allowed) if allowed is not None else None,
        )  # fmt: skip
        return ToolResult(_text(skill, body, files, allowed), details)


def listing(skills: list[SkillInfo]) -> str:
    """``- name: description`` per skill, within :data:`MAX_LISTING` bytes (descriptions
    shortened first, then skills left out with a note)."""
    if not skills:
        return "(none)"
    room = MAX_LISTING // max(len(skills), 1) - 6
    lines = []
    size = 0
    for number, skill in enumerate(skills):
        text = skill.description
        if len(skill.name) + len(text) > room:
            text = text[: max(room - len(skill.name), 40)].rstrip() + "…"
        line = f"- {skill.name}: {text}"
        if size + len(line.encode()) + 1 > MAX_LISTING - 60:
            lines.append(f"(and {len(skills) - number} more: ask the user for their names)")
            break
        lines.append(line)
        size += len(line.encode()) + 1
    return "\n".join(lines)


def tool_names(allowed: list[str]) -> set[str]:
    """agentd's tool names for a skill's ``allowed-tools`` (``Bash(git:*)`` → ``bash``,
    ``Read`` → ``read``, ``Glob`` → ``find``); ``skill`` itself is always allowed."""
    names = {"skill"}
    for entry in allowed:
        base = re.sub(r"\(.*\)$", "", entry.strip()).strip().lower()
        names.add(_ALIASES.get(base.replace("_", ""), base))
    return names


def narrowed_out(tool_name: str, state: dict[str, object]) -> str | None:
    """Why ``tool_name`` may not run while a skill narrows the run (None: it may)."""
    active = state.get(STATE)
    if not isinstance(active, tuple):
        return None
    name, allowed = active
    if tool_name in allowed:
        return None
    return (
        f"{tool_name} is not among the tools the skill {name!r} allows "
        f"({', '.join(sorted(allowed))}); while following it use only those."
    )


def _load(folder: Path) -> tuple[str, list[str]]:
    with (folder / "SKILL.md").open("rb") as file:
        text = file.read(MAX_BODY).decode("utf-8", "replace")
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    body = "\n".join(lines[end + 1 :]).strip()
    files: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if len(files) >= MAX_FILES:
                return body, files
            relative = str((Path(root) / name).relative_to(folder))
            if relative != "SKILL.md" and not name.startswith("."):
                files.append(relative)
    return body, files


def _text(skill: SkillInfo, body: str, files: list[str], allowed: set[str] | None) -> str:
    parts = [f"Skill {skill.name} ({skill.source}), folder {skill.path}", body]
    if files:
        shown = "\n".join(f"- {name}" for name in files)
        parts.append(f"Files of the skill (paths relative to {skill.path}):\n{shown}")
    if allowed is not None:
        parts.append(
            "While following this skill only these tools may be used: "
            f"{', '.join(sorted(allowed))}."
        )
    return "\n\n".join(parts)
