"""``session/skills`` and ``skills/check``: the skills a session (or a folder) can use, and
the checks of one skill folder (:func:`agentd.config.skills.check_skill`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.config.skills import check_skill
from agentd.errors import InvalidParams, SessionNotFound
from agentd.protocol.session_file import SessionHeader
from agentd.protocol.skills import (
    SessionSkillsParams,
    SessionSkillsResult,
    SkillCheckParams,
    SkillCheckResult,
)
from agentd.session.knowledge import session_skills

if TYPE_CHECKING:
    from agentd.session.manager import SessionManager


async def list_skills(sessions: SessionManager, params: SessionSkillsParams) -> SessionSkillsResult:
    """``session/skills``: the skills of a session (its cwd's, found again now) or of a new
    one in ``cwd``; a session that is not loaded is not loaded for this."""
    if (params.session_id is None) == (params.cwd is None):
        raise InvalidParams("give exactly one of `sessionId` and `cwd`")
    if params.cwd is not None:
        folder = Path(params.cwd)
        if not folder.is_absolute() or not folder.is_dir():
            raise InvalidParams(f"`cwd` must be an absolute path to a directory: {params.cwd!r}")
    else:
        runtime = sessions.loaded.get(params.session_id or "")
        if runtime is not None:
            folder = Path(runtime.settings.cwd)
        else:
            path = sessions.find_path(params.session_id or "")
            folder = Path(await asyncio.to_thread(_stored_cwd, path))
    skills, warnings = await session_skills(folder)
    return SessionSkillsResult(skills=skills, warnings=warnings)


def _stored_cwd(path: Path) -> str:
    """The cwd in a stored session's header (SessionNotFound when it cannot be read)."""
    try:
        with path.open("rb") as file:
            return msgspec.json.decode(file.readline(), type=SessionHeader).cwd
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionNotFound(f"cannot read the session file {path}: {exc}") from None


async def check_skill_folder(params: SkillCheckParams) -> SkillCheckResult:
    """``skills/check``: the problems of the skill folder at ``path`` (absolute)."""
    path = Path(params.path)
    if not path.is_absolute():
        raise InvalidParams(f"`path` must be absolute: {params.path!r}")
    problems, skill = await asyncio.to_thread(check_skill, path)
    return SkillCheckResult(problems=problems, skill=skill)
