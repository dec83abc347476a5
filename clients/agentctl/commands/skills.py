"""``agentctl skills list|check``: the Agent Skills sessions can load.

``list`` asks the daemon (``session/skills`` for the current folder): each skill's name,
where it came from (``user`` or ``project``, and its folder) and its description, then the
warnings (skipped files, an untrusted project, name clashes). ``check PATH`` asks the daemon
to check a skill folder (``skills/check``: front matter, the files ``SKILL.md`` names,
scripts executable); it exits 1 when there are problems.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agentctl.common import open_client, run_command
from agentctl.options import SkillsCheck, SkillsList, SkillsOptions
from agentctl.run import outcome


def skills_main(options: SkillsOptions) -> int:
    """Dispatch ``skills list`` and ``skills check``."""
    if isinstance(options, SkillsList):
        listing = options
        return run_command(lambda: _list(listing))
    if isinstance(options, SkillsCheck):
        check = options
        return run_command(lambda: _check(check))
    raise ValueError(f"no skills action {options.skills_command!r}")


async def _list(options: SkillsList) -> int:
    cwd = str(Path(options.cwd or ".").resolve())
    async with await open_client(options, cwd=cwd) as client:
        result = await client.call("session/skills", {"cwd": cwd})
    if options.json:
        sys.stdout.write(json.dumps(result) + "\n")
        return outcome.OK
    skills: list[dict[str, Any]] = result["skills"]
    if not skills:
        sys.stdout.write("no skills (put a folder with a SKILL.md in ~/.agents/skills/)\n")
    for skill in skills:
        sys.stdout.write(f"{skill['name']}  ({skill['source']})  {skill['path']}\n")
        sys.stdout.write(f"  {skill['description']}\n")
        if skill.get("allowedTools"):
            sys.stdout.write(f"  allowed tools: {', '.join(skill['allowedTools'])}\n")
    for warning in result.get("warnings", []):
        sys.stderr.write(f"warning: {warning}\n")
    return outcome.OK


async def _check(options: SkillsCheck) -> int:
    path = str(Path(options.path).resolve())
    async with await open_client(options, cwd=str(Path.cwd())) as client:
        result = await client.call("skills/check", {"path": path})
    problems: list[str] = result["problems"]
    skill = result.get("skill")
    if skill is not None:
        sys.stdout.write(f"skill {skill['name']}: {skill['description']}\n")
    for problem in problems:
        sys.stdout.write(f"problem: {problem}\n")
    if problems:
        return outcome.AGENT_ERROR  # 1: the skill has problems
    sys.stdout.write("ok: sessions started from now on can load it\n")
    return outcome.OK
