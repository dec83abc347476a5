"""The system prompt: the agent's instructions, its tools, the environment, project context.

:func:`build_system_prompt` joins, in order:

1. the built-in instructions (a coding agent working in a repository: read before editing,
   exact unique edits, small changes, run the tests, be concise, act without asking), or
   ``override`` in their place (a session's or the config's ``system_prompt``);
2. when the session has the ``todo`` tool, when to plan with it (built-in instructions only);
   then the available tools, one line each (built-in instructions only);
3. the environment: working directory, platform, date;
4. project context: every ``AGENTS.md`` and ``CLAUDE.md`` from the repository root (the
   directory holding ``.git``; the filesystem root outside a repository) down to the cwd,
   outermost first, so the nearest file has the last word. Each file is capped at 64 KB.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from agentd.config.textfile import MAX_TEXT_BYTES, read_capped_text
from agentd.toolspec import ToolSpec

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_CONTEXT_BYTES = MAX_TEXT_BYTES

DEFAULT_INSTRUCTIONS = """\
You are a coding agent working in a software repository on the user's behalf. You read, \
write and edit files and run shell commands with the tools below to carry out the user's \
request.

How to work:
- Read a file before editing it, and look around the repository before changing code you \
have not seen.
- Edit with an exact piece of the current text that occurs only once in the file; include \
enough surrounding lines to make it unique.
- Prefer small, focused edits over rewriting whole files; keep to the existing style.
- After changing code, run the tests or the program to check your work, and fix what fails.
- Act without asking for confirmation; ask only when the request is truly ambiguous.
- Be concise: say what you did and what you found, without repeating file contents."""

PLAN_INSTRUCTIONS = """\
Planning: for work of three or more distinct steps (a feature across files, a refactor, a \
list of requests), write a plan with the todo tool before you start, keep exactly one step \
in_progress, and update it as each step completes, so the user can follow along. Do not \
write a plan for a question, a single edit or a quick command."""


def build_system_prompt(
    cwd: Path,
    tools: Sequence[ToolSpec],
    *,
    override: str | None = None,
    extra: str | None = None,
    now: datetime | None = None,
    context: str | None = None,
) -> str:
    """The system prompt for a session in ``cwd`` (see the module docstring); ``extra`` is
    text an untrusted project file adds after the instructions (it cannot replace them);
    ``context``: :func:`project_context` read beforehand (off the event loop), None to read
    it here."""
    sections = [override.strip() if override is not None else DEFAULT_INSTRUCTIONS]
    if override is None and any(tool.name == "todo" for tool in tools):
        sections.append(PLAN_INSTRUCTIONS)
    if extra and extra.strip():
        sections.append(extra.strip())
    if override is None and tools:
        sections.append("Tools:\n" + "\n".join(_tool_line(tool) for tool in tools))
    sections.append(_environment(cwd, now or datetime.now().astimezone()))
    context = project_context(cwd) if context is None else context
    if context:
        sections.append(context)
    return "\n\n".join(sections) + "\n"


def project_context(cwd: Path) -> str:
    """The context files above ``cwd``, each under a heading naming its path ("" if none)."""
    parts = []
    for path in context_files(cwd):
        text = _read_capped(path)
        if text.strip():
            parts.append(f"## {path}\n\n{text.strip()}")
    if not parts:
        return ""
    return "Project context (instructions from the repository; follow them):\n\n" + "\n\n".join(
        parts
    )


def context_files(cwd: Path) -> list[Path]:
    """``AGENTS.md`` / ``CLAUDE.md`` files from the repository root down to ``cwd``."""
    directories = []
    directory = cwd.resolve()
    while True:
        directories.append(directory)
        if (directory / ".git").exists() or directory.parent == directory:
            break
        directory = directory.parent
    found = []
    for directory in reversed(directories):
        found += [directory / name for name in CONTEXT_FILES if (directory / name).is_file()]
    return found


def _tool_line(tool: ToolSpec) -> str:
    summary = tool.description.strip().split("\n", 1)[0]
    return f"- {tool.name}: {summary}"


def _environment(cwd: Path, now: datetime) -> str:
    system = f"{platform.system()} {platform.release()}".strip()
    return (
        "Environment:\n"
        f"- Working directory: {cwd}\n"
        f"- Platform: {system or platform.platform()}\n"
        f"- Date: {now.strftime('%Y-%m-%d')}"
    )


def _read_capped(path: Path) -> str:
    """A context file's text, capped (see :func:`agentd.config.textfile.read_capped_text`);
    "" when it cannot be read or is no longer a regular file."""
    try:
        return read_capped_text(path, MAX_CONTEXT_BYTES)
    except OSError:
        return ""
