"""Session persistence: append-only JSONL files holding an entry tree (see README.md).

Synchronous file I/O only (no asyncio, no httpx): appends are small enough to run on the
event loop; callers may run :meth:`SessionFile.open` and :func:`list_sessions` in a thread.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentd.redact import Redactor, redactor
from agentd.store.file import INTERRUPTED_TEXT, SessionFile
from agentd.store.paths import cwd_slug, default_root, find_session
from agentd.store.tree import LoadWarning, SessionTree, UnknownEntry

_LAZY = {
    "export_html": "agentd.store.export",
    "export_markdown": "agentd.store.export",
    "list_sessions": "agentd.store.index",
}
"""Names imported on first use (the HTML export's imports are needed by no other path; the
index's only when sessions are listed, which a one-shot run never does)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentd.store' has no attribute {name!r}")

    return getattr(importlib.import_module(module), name)


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
