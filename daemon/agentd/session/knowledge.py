"""What a session can know beyond its files: the ``web_search`` backend (from the
``[web_search]`` configuration table, the key from the daemon's environment) and the Agent
Skills installed for the user and the project (:mod:`agentd.config.skills`).

The factory calls :func:`session_skills` and :func:`with_configured_tools` on the tools it
built, and :func:`web_search_settings` for the tools' settings; a tool that is not
configured is not offered (the model never hears of a tool that cannot work).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.config.skills import discover
from agentd.protocol.skills import (
    SkillInfo,
)
from agentd.tools import CONFIGURED_TOOLS, build_tools
from agentd.tools.base import Tool
from agentd.tools.defaults import Secret, WebSearchSettings

if TYPE_CHECKING:
    from agentd.config.load import Config

KEY_ENV = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY"}
DEFAULT_URLS = {"brave": "https://api.search.brave.com", "tavily": "https://api.tavily.com"}


def with_configured_tools(
    tools: dict[str, Tool],
    config: Config,
    requested: Sequence[str] | None,
    skills: Sequence[SkillInfo] = (),
    *,
    lsp: bool = False,
) -> dict[str, Tool]:
    """``tools`` with the configured-only tools the session may have: each one added when
    the client named no tools, kept when it named it, dropped when it is not configured
    (``skill``: when there are no ``skills``; ``lsp``: without a language server)."""
    available = {
        "web_search": config.settings.web_search is not None, "skill": bool(skills), "lsp": lsp,
    }  # fmt: skip
    kept = {n: t for n, t in tools.items() if n not in CONFIGURED_TOOLS or available.get(n)}
    if requested is None:
        wanted = [name for name in CONFIGURED_TOOLS if available.get(name) and name not in kept]
        kept.update(build_tools(wanted))
    return kept


def web_search_settings(
    config: Config, env: Mapping[str, str] | None = None
) -> WebSearchSettings | None:
    """The session's search backend (None: no ``[web_search]`` table). The key is read from
    ``api_key_env`` (default ``BRAVE_API_KEY`` / ``TAVILY_API_KEY``) and kept in memory only."""
    section = config.settings.web_search
    if section is None:
        return None
    env = os.environ if env is None else env
    key_name = section.api_key_env or KEY_ENV.get(section.backend)
    key = env.get(key_name) if key_name else None
    url = section.url or DEFAULT_URLS.get(section.backend, "")
    return WebSearchSettings(
        backend=section.backend,
        url=url,
        api_key=Secret(key) if key else None,
        max_results=section.max_results,
        timeout=section.timeout,
        allowed_domains=list(section.allowed_domains),
        blocked_domains=list(section.blocked_domains),
        max_uses=section.max_uses,
    )


async def session_skills(cwd: Path) -> tuple[list[SkillInfo], list[str]]:
    """The skills a session in ``cwd`` can use and warnings about the others (the folders
    are read in a worker thread)."""
    return await asyncio.to_thread(discover, cwd)
