"""The daemon's language servers in process: one process per (definition, root) however many
ask, stopped once idle (``shutdown``/``exit``), restarted after a crash with a budget."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lsprotocol import types

from agentd.langserver.defs import ServerDef
from agentd.langserver.pool import LspPool
from agentd.langserver.server import MAX_RESTARTS
from tests.harness import wait_until_async
from tests.langserver.conftest import HOSTILE

HOVER = types.HoverParams(
    text_document=types.TextDocumentIdentifier(uri="file:///x.py"),
    position=types.Position(line=0, character=0),
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, reaped by its parent's wait soon, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _definition(mode: str, tag: Path) -> ServerDef:
    return ServerDef("hostile", sys.executable, (str(HOSTILE), mode, str(tag)), extensions=(".py",))


async def test_one_process_per_root_stopped_when_idle(tmp_path: Path) -> None:
    pool = LspPool(idle_seconds=0.5)
    definition = _definition("good", tmp_path)
    first = pool.get(definition, tmp_path, dict(os.environ))
    assert pool.get(definition, tmp_path, dict(os.environ)) is first
    await first.ready()
    pid = first.pid
    assert pid is not None
    assert Path(f"/proc/{pid}").exists()
    assert first.state == "ready"
    await wait_until_async(lambda: not pool.servers, 20, "the idle server to be stopped")
    await wait_until_async(lambda: not _alive(pid), 10, "its process to exit")
    assert first.state == "stopped"
    await pool.close()


async def test_a_crashing_server_is_restarted_within_its_budget(tmp_path: Path) -> None:
    pool = LspPool()
    server = pool.get(_definition("crash", tmp_path), tmp_path, dict(os.environ))
    failures = []
    for _ in range(MAX_RESTARTS + 2):
        try:
            await server.request(types.TEXT_DOCUMENT_HOVER, HOVER, 10)
        except Exception as exc:
            failures.append(str(exc))
    assert server.state == "crashed"
    assert server.restarts == MAX_RESTARTS
    assert failures[-1].startswith("hostile is not available:")
    await pool.close()
