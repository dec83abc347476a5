"""Agent Skills: folders holding a ``SKILL.md``, found where users and projects keep them.

Searched, in this order: ``$XDG_CONFIG_HOME/agentd/skills/``, ``~/.agents/skills/`` (the
user's), then the project's ``.agentd/skills/`` and ``.agents/skills/`` (the session's
project directory: the nearest folder at or above the cwd holding ``.git``, else the cwd).
Each direct sub-folder with a ``SKILL.md`` is a skill; its front matter
(:mod:`agentd.config.skill_frontmatter`) must give ``name`` (lowercase letters, digits and hyphens,
at most 64 characters) and ``description`` (at most 1,024); ``allowed-tools``, ``license``,
``metadata`` and other agents' keys are accepted. A bad one is skipped with a warning naming
the file and the problem.

Project skills count only in a trusted folder (``agentctl trust``), else one warning says
so. A project skill beats a user skill of the same name, with a warning. Only the front
matter is read here (the first :data:`MAX_HEAD` bytes): the body is read when the model
loads the skill (:func:`skill_body`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from agentd.config import trust
from agentd.config.skill_frontmatter import FrontMatterError, parse, split
from agentd.protocol.skills import SkillInfo, SkillSource
from agentd.protocol.trust_list import config_dir, is_trusted

MAX_HEAD = 16 * 1024
"""Bytes of a SKILL.md read to find its front matter."""
MAX_BODY = 256 * 1024
"""Bytes of a SKILL.md body loaded at most."""
MAX_SKILLS = 500
"""Skills per folder looked at (the rest are left out, with a warning)."""
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def skill_folders(project: Path, env: Mapping[str, str]) -> list[tuple[Path, SkillSource]]:
    """The folders skills are looked for in, the user's first."""
    home = Path(env.get("HOME") or Path.home())
    return [
        (config_dir(env) / "skills", "user"),
        (home / ".agents" / "skills", "user"),
        (project / ".agentd" / "skills", "project"),
        (project / ".agents" / "skills", "project"),
    ]


def project_root(cwd: Path) -> Path:
    """The nearest folder at or above ``cwd`` holding ``.git`` (else ``cwd``)."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def discover(cwd: Path, env: Mapping[str, str] | None = None) -> tuple[list[SkillInfo], list[str]]:
    """The skills a session in ``cwd`` can use (by name) and warnings about the others."""
    env = os.environ if env is None else env
    project = project_root(cwd)
    found: dict[str, SkillInfo] = {}
    warnings: list[str] = []
    trusted: bool | None = None
    for folder, source in skill_folders(project, env):
        if not folder.is_dir():
            continue
        if source == "project":
            trusted = is_trusted(project, env) if trusted is None else trusted
            if not trusted:
                warnings.append(
                    f"project skills in {folder} are not used: the folder {project} is not "
                    f"trusted (run `agentctl trust {project}` to use them)"
                )
                continue
            if folder.parent.name == ".agentd" and not _as_pinned(folder, env, warnings):
                continue
        for skill in _folder_skills(folder, source, warnings):
            known = found.get(skill.name)
            if known is not None and known.source == source:
                warnings.append(
                    f"skill {skill.name!r} in {skill.path} is a duplicate of {known.path}; "
                    "the first is used"
                )
                continue
            if known is not None:
                warnings.append(
                    f"project skill {skill.name!r} ({skill.path}) is used instead of the "
                    f"user's ({known.path})"
                )
            found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name), warnings


def _as_pinned(folder: Path, env: Mapping[str, str], warnings: list[str]) -> bool:
    """Whether ``.agentd/skills/`` is as it was when its folder was trusted (trust pins the
    control folders' content, :mod:`agentd.config.trust`); a warning when it is not."""
    state, snapshot = trust.checked_folder(folder, env)
    if state == "trusted":
        return True
    problem = snapshot.problem if snapshot else None
    warnings.append(trust.folder_warning(folder, "project skills", state, problem))
    return False


def _folder_skills(folder: Path, source: SkillSource, warnings: list[str]) -> list[SkillInfo]:
    skills = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as error:
        warnings.append(f"cannot list skills in {folder}: {error.strerror or error}")
        return []
    for entry in entries[:MAX_SKILLS]:
        manifest = Path(entry.path) / "SKILL.md"
        if not entry.is_dir() or entry.name.startswith(".") or not manifest.is_file():
            continue
        try:
            skills.append(read_skill(manifest, source))
        except (FrontMatterError, OSError, UnicodeDecodeError) as error:
            warnings.append(f"skill {manifest} skipped: {error}")
    if len(entries) > MAX_SKILLS:
        warnings.append(f"only the first {MAX_SKILLS} entries of {folder} were looked at")
    return skills


def read_skill(manifest: Path, source: SkillSource) -> SkillInfo:
    """The skill of one ``SKILL.md`` (FrontMatterError naming the problem)."""
    with manifest.open("rb") as file:
        head = file.read(MAX_HEAD).decode("utf-8")
    lines, _body = split(head)
    fields = parse(lines)
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not name:
        raise FrontMatterError("`name` is missing")
    if not isinstance(description, str) or not description.strip():
        raise FrontMatterError("`description` is missing")
    if len(name) > 64 or not _NAME.match(name):
        raise FrontMatterError(
            f"`name` {name!r} must be lowercase letters, digits and single hyphens (at most 64)"
        )
    if len(description) > 1024:
        raise FrontMatterError("`description` is longer than 1,024 characters")
    return SkillInfo(
        name=name,
        description=" ".join(description.split()),
        path=str(manifest.parent),
        source=source,
        allowed_tools=_allowed_tools(fields.get("allowed-tools")),
    )


def _allowed_tools(value: object) -> list[str] | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return [part for part in re.split(r"[,\s]+", value) if part]
    if isinstance(value, list):
        return [str(part) for part in value if str(part).strip()]
    raise FrontMatterError("`allowed-tools` must be a list or a space-separated string")


_REFERENCED = re.compile(r"(?<![\w/.-])((?:scripts|references|assets)/[\w./-]*[\w-])")


def check_skill(path: Path) -> tuple[list[str], SkillInfo | None]:
    """What is wrong with the skill at ``path`` (its folder or its SKILL.md): the front
    matter, a ``name`` other than the folder's, files the body names under ``scripts/``,
    ``references/`` or ``assets/`` that are missing, scripts that are not executable."""
    folder = path.parent if path.name == "SKILL.md" else path
    manifest = folder / "SKILL.md"
    if not manifest.is_file():
        return [f"{manifest} does not exist"], None
    try:
        skill = read_skill(manifest, "user")
    except (FrontMatterError, OSError, UnicodeDecodeError) as error:
        return [f"{manifest}: {error}"], None
    problems = []
    if skill.name != folder.name:
        problems.append(f"`name` {skill.name!r} differs from the folder's name {folder.name!r}")
    body = manifest.read_bytes()[:MAX_BODY].decode("utf-8", "replace")
    for relative in sorted(set(_REFERENCED.findall(body))):
        if not (folder / relative).exists():
            problems.append(f"{relative} is named in SKILL.md but does not exist")
    scripts = folder / "scripts"
    for script in sorted(scripts.rglob("*")) if scripts.is_dir() else []:
        if script.is_file() and not os.access(script, os.X_OK):
            problems.append(f"{script.relative_to(folder)} is not executable (chmod +x)")
    return problems, skill
