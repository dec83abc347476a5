"""Agent Skills as the wire shows them: what a session can use (``session/skills``) and where
each came from."""

from __future__ import annotations

from typing import Literal

from agentd.protocol.base import Result

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
