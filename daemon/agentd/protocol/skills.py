"""Agent Skills as the wire shows them: what a session can use (``session/skills``) and where
each came from."""

from __future__ import annotations

from typing import Literal

import msgspec

from agentd.protocol.base import Params, Result

SkillSource = Literal["user", "project"]


class SkillInfo(Result):
    """One skill a session can load: its ``name`` and ``description`` (what the model sees),
    the folder holding its ``SKILL.md`` (``path``), where it was found (``source``), and the
    tools it narrows a run to while it is followed (``allowed_tools``; None: no narrowing)."""

    name: str
    description: str
    path: str
    source: SkillSource
    allowed_tools: list[str] | None = None


class SessionSkillsParams(Params):
    """``session/skills``: the skills of the session ``sessionId``, or (``cwd`` instead) those
    a new session in ``cwd`` would have. Exactly one of the two."""

    session_id: str | None = None
    cwd: str | None = None


class SessionSkillsResult(Result):
    """``session/skills``: the skills by name, found again on every call; ``warnings``: the
    ones skipped and why (bad front matter, an untrusted project, a name clash)."""

    skills: list[SkillInfo]
    warnings: list[str] = msgspec.field(default_factory=list)


class SkillCheckParams(Params):
    """``skills/check``: check the skill folder (or its ``SKILL.md``) at ``path``."""

    path: str


class SkillCheckResult(Result):
    """``skills/check``: ``problems`` found (empty: the skill is usable), and the skill as a
    session would list it when its front matter is valid."""

    problems: list[str]
    skill: SkillInfo | None = None
