"""Session persistence: append-only JSONL files holding an entry tree (see README.md).

Synchronous file I/O only (no asyncio, no httpx): appends are small enough to run on the
event loop; callers may run :meth:`SessionFile.open` and :func:`list_sessions` in a thread.
"""

from __future__ import annotations

from agentd.redact import Redactor, redactor
from agentd.store.export import export_html, export_markdown
from agentd.store.file import INTERRUPTED_TEXT, SessionFile
from agentd.store.index import list_sessions
from agentd.store.paths import cwd_slug, default_root, find_session
from agentd.store.tree import LoadWarning, SessionTree, UnknownEntry

__all__ = [
    "INTERRUPTED_TEXT",
    "LoadWarning",
    "Redactor",
    "SessionFile",
    "SessionTree",
    "UnknownEntry",
    "cwd_slug",
    "default_root",
    "export_html",
    "export_markdown",
    "find_session",
    "list_sessions",
    "redactor",
]
