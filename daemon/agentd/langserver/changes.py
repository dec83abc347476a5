"""The problems a change brings: a file's diagnostics after the change that it did not have
before, as the language server reports them (pulled or pushed, :meth:`~agentd.langserver.server.
LanguageServer.diagnostics_of`)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lsprotocol import types

from agentd.langserver.client import RequestFailed, ServerLost
from agentd.langserver.positions import lines_of
from agentd.langserver.render import diagnostic_items
from agentd.langserver.server import LanguageServer
from agentd.log import get_logger
from agentd.protocol.lsp_details import LspDiagnostic
from agentd.tools.base import ToolContext
from agentd.tools.files.paths import display_path

log = get_logger("agentd.langserver")


async def new_problems(
    server: LanguageServer,
    changes: list[tuple[Path, str | None, str]],
    ctx: ToolContext,
) -> list[list[LspDiagnostic] | None]:
    """For each changed file, the problems its new text has that its old one did not (a
    multiset difference by severity, message, code and source: positions move with an
    edit); None for a file the server gave no diagnostics for in time. Every file's old
    text is checked before any new one is sent, so a change spanning files (a rename)
    is compared with the project as it was."""
    wait = ctx.settings.diagnostics_wait_ms / 1000
    try:
        baselines = await asyncio.gather(
            *(_baseline(server, path, before, wait) for path, before, _ in changes)
        )
        since = time.monotonic()
        documents = [await server.sync(path, after) for path, _, after in changes]
        found = await asyncio.gather(
            *(
                server.diagnostics_of(path, document, since, wait)
                for (path, _, _), document in zip(changes, documents, strict=True)
            )
        )
    except (ServerLost, RequestFailed) as exc:
        log.info("no diagnostics after a change", server=server.name, reason=str(exc))
        return [None] * len(changes)
    return [
        None if now is None else _fresh(server, path, after, baseline, now, ctx)
        for (path, _, after), baseline, now in zip(changes, baselines, found, strict=True)
    ]


def _fresh(
    server: LanguageServer,
    path: Path,
    after: str,
    baseline: list[types.Diagnostic],
    found: list[types.Diagnostic],
    ctx: ToolContext,
) -> list[LspDiagnostic]:
    left = Counter(_identity(d) for d in baseline)
    fresh = []
    for item in found:
        if left[_identity(item)] > 0:
            left[_identity(item)] -= 1
        else:
            fresh.append(item)
    shown = display_path(path, ctx)
    return diagnostic_items(fresh, lines_of(after), server.encoding, shown, server.name)


async def _baseline(
    server: LanguageServer, path: Path, before: str | None, wait: float
) -> list[types.Diagnostic]:
    uri = path.as_uri()
    document = server.documents.get(uri)
    if before is None:
        return []
    if document is not None and document.text == before:
        known = server.diagnostics.get(uri)
        if known is not None and (known[0] is None or known[0] >= document.version):
            return known[1]
        since = 0.0
    else:
        since = time.monotonic()
        document = await server.sync(path, before)
    return await server.diagnostics_of(path, document, since, wait) or []


def _identity(item: types.Diagnostic) -> tuple[Any, ...]:
    return (item.severity, item.message, str(item.code), item.source)
