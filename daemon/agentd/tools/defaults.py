"""The tools' built-in limits, and :class:`ToolSettings`: what a session's tools read.

Every limit is defined once, here. A session's :class:`ToolSettings` is the ``[tools]``
table of its configuration with these defaults filled in (:func:`agentd.tools.settings.
tool_settings`), plus what the daemon adds: the credential variable names bash must not see,
the session's permission policy, and the registry of running shells. The tools read it as
``ctx.settings`` (:class:`agentd.tools.base.ToolContext`). A leaf module: it imports no tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from agentd.protocol.skills import SkillInfo

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
DEFAULT_MAX_LINE_CHARS = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
BASH_TIMEOUT = 120.0
BASH_MAX_TIMEOUT = 600.0
BASH_KILL_GRACE = 2.0
BASH_UPDATE_INTERVAL = 0.05
SPILL_KEEP_PER_SESSION = 20
SPILL_MAX_BYTES = 64 * 1024 * 1024
BASH_MAX_BACKGROUND = 8
"""Background processes one session may run at once."""
GREP_TIMEOUT = 10.0
FIND_MAX_RESULTS = 1000
LS_MAX_ENTRIES = 500
UNDO_MAX_PER_FILE = 20
UNDO_MAX_BYTES = 50 * 1024 * 1024
DIAGNOSTICS_WAIT_MS = 5000
"""How long a change waits for a language server's diagnostics (``diagnostics_wait_ms``)."""
NOTEBOOK_MAX_BYTES = 64 * 1024 * 1024
"""Largest notebook read or edited."""
PDF_MAX_PAGES = 20
"""Pages of a PDF one read returns at most."""
PDF_MAX_BYTES = 128 * 1024 * 1024
"""Largest PDF read."""
PDF_TIMEOUT = 30.0
"""Seconds a PDF's parse may take before the read gives up (the parse runs in a child)."""
PDF_MAX_IMAGES = 5
"""Scanned pages one read renders as images at most."""

GrepBackend = Literal["auto", "rg", "python"]


class Policy(Protocol):
    """What the tools ask of the session's permission policy."""

    def allows_dangerous(self, command: str) -> bool:
        """Whether a deny-listed bash ``command`` may run all the same."""
        ...

    def read_denied(self, path: Path) -> bool:
        """Whether a ``read(…)`` deny rule covers ``path`` (skipped while walking)."""
        ...

    def runs_unasked(self, tool: Any, args: dict[str, Any]) -> bool:
        """Whether a call of ``tool`` with ``args`` would run without asking anyone."""
        ...


class Secret:
    """A credential held in memory: its ``repr`` never shows it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "Secret(***)"


class WebSearchSettings(msgspec.Struct, kw_only=True):
    """The ``web_search`` backend of a session (from ``[web_search]``, the key resolved)."""

    backend: Literal["searxng", "brave", "tavily", "provider"]
    url: str
    api_key: Secret | None = None
    max_results: int = 8
    timeout: float = 15.0
    allowed_domains: list[str] = []
    blocked_domains: list[str] = []
    max_uses: int | None = None


class ToolSettings(msgspec.Struct, kw_only=True):
    """The limits and environment of one session's tools, every value given.

    The first group mirrors the ``[tools]`` table (see :mod:`agentd.tools.settings`);
    ``bash_update_interval`` is how often bash streams output (seconds); ``permission_policy``
    (None: no rules, nothing deny-listed may run) and ``process_registry`` (None: running
    shells are not recorded) are set by the daemon.
    """

    max_output_lines: int = DEFAULT_MAX_LINES
    max_output_bytes: int = DEFAULT_MAX_BYTES
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS
    max_image_bytes: int = MAX_IMAGE_BYTES
    accept_images: bool = True
    bash_timeout: float = BASH_TIMEOUT
    bash_max_timeout: float = BASH_MAX_TIMEOUT
    bash_kill_grace: float = BASH_KILL_GRACE
    bash_update_interval: float = BASH_UPDATE_INTERVAL
    bash_spill_keep: int = SPILL_KEEP_PER_SESSION
    bash_spill_max_bytes: int = SPILL_MAX_BYTES
    bash_max_background: int = BASH_MAX_BACKGROUND
    grep_backend: GrepBackend = "auto"
    grep_timeout: float = GREP_TIMEOUT
    find_max_results: int = FIND_MAX_RESULTS
    ls_max_entries: int = LS_MAX_ENTRIES
    undo_max_per_file: int = UNDO_MAX_PER_FILE
    undo_max_bytes: int = UNDO_MAX_BYTES
    diagnostics_wait_ms: int = DIAGNOSTICS_WAIT_MS
    secret_env: list[str] = []
    pass_env: list[str] = []
    web_fetch_allow_hosts: list[str] = []
    sandbox_network: bool = False
    permission_policy: Policy | None = None
    process_registry: Path | None = None
    pdf_timeout: float = PDF_TIMEOUT
    """Seconds a PDF's parse may take (:data:`PDF_TIMEOUT`)."""
    web_search: WebSearchSettings | None = None
    skills: list[SkillInfo] = []
    """The skills the ``skill`` tool offers (set by the daemon; empty: the tool is not offered)."""
    """The ``web_search`` backend (None: not configured, the tool is not offered)."""
    agent_profiles: str = "- general: a general-purpose agent with your tools"
    """The ``task`` tool's profile list as its description shows it (set by the daemon)."""
