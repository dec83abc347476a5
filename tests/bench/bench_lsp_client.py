"""Budgets of the ``lsp`` tool and the diagnostics after edits (issue: "language servers as
tools"), against python-lsp-server on the tests' fixture project.

* ``call overhead``: ``hover`` answered by pylsp 300 times through pygls's bare client (the
  server's own time, the pipes included) and 300 times through agentd's path (the ``lsp``
  tool's :class:`~agentd.langserver.session.LspSession`: the file read, the position from a
  ``symbol``, the pooled server, the rendered result); medians and their difference (budget:
  ≤ 3 ms over the server's own answer).
* ``diagnostics``: a change that breaks and one that fixes ``main.py``, 40 of each: the bare
  client's ``didChange`` until its ``publishDiagnostics`` for that version, against agentd's
  ``changed`` (the baseline, the sync, the wait, the difference); medians (budget: ≤ the
  server's own time + 20 ms).
* ``1,000 calls``: a socket daemon's RSS after 100 warm-up ``lsp`` hover calls and after
  1,000 more (20 runs of 50 calls) (budget: growth ≤ 5 MiB), beside the same with ``ls``
  (what the session itself grows by).

Run: ``python -m tests.bench.bench_lsp_client`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agentd.langserver.defs import ServerDef
from agentd.langserver.pool import LspPool
from agentd.langserver.server import client_capabilities
from agentd.langserver.session import LspSession
from agentd.tools import run_tool
from agentd.tools.base import ToolContext, ToolPorts
from agentd.tools.lsp import LspTool
from tests.bench.bench_mcp import _rss
from tests.bench.smoke import size
from tests.harness import Home, new_session, run, socket_client, stop
from tests.langserver.conftest import (
    BROKEN,
    MAIN,
    SCENARIOS,
    make_project,
    pylsp_table,
    server_command,
)
from tests.scenarios import tool_call

Row = tuple[str, str, str]
CALLS = int(os.environ.get("BENCH_LSP_CALLS", str(size(300, 5))))
WARM_UP = size(30)
CHANGES = int(os.environ.get("BENCH_LSP_CHANGES", str(size(40, 2))))
HOVER = {"operation": "hover", "path": "main.py", "line": 5, "symbol": "helper"}
MANY = [
    {
        "name": name,
        "trigger": name,
        "steps": [
            {"response": {"tool_calls": [tool_call(tool, args, f"c{i}") for i in range(50)]}},
            {"response": {"content": "done"}},
        ],
    }
    for name, tool, args in (("bench-many-lsp", "lsp", HOVER), ("bench-many-ls", "ls", {}))
]


async def _bare(folder: Path) -> tuple[float, float]:
    """pygls's own client on pylsp: median hover time, median change-to-diagnostics time."""
    client = LanguageClient("bench", "1")
    published: dict[int, asyncio.Event] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.setdefault(params.version or 0, asyncio.Event()).set()

    # pygls pipes the server's stderr and never reads it: a full pipe would stall pylsp
    await client.start_io("sh", "-c", f"exec {server_command('pylsp')} 2>/dev/null")
    uri = (folder / "main.py").as_uri()
    params = types.InitializeParams(  # the capabilities agentd declares: the same work
        capabilities=client_capabilities(), root_uri=folder.as_uri()
    )
    answer = client.protocol.send_request("initialize", params, msg_id="init")
    client.protocol._result_types.pop("init")  # lsprotocol cannot read pylsp's capabilities
    await asyncio.wait_for(asyncio.wrap_future(answer), 60)
    client.initialized(types.InitializedParams())
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=MAIN)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    where = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri),
                              position=types.Position(line=4, character=11))  # fmt: skip
    hovers = []
    for _ in range(WARM_UP):  # as agentd's path below: jedi's caches warm first
        await asyncio.wait_for(client.text_document_hover_async(where), 30)
    for _ in range(CALLS):
        started = time.perf_counter()
        await asyncio.wait_for(client.text_document_hover_async(where), 30)
        hovers.append(time.perf_counter() - started)
    changes = []
    for version in range(2, 2 + 2 * CHANGES):
        text = MAIN.replace("return helper(2)", BROKEN) if version % 2 else MAIN
        event = published.setdefault(version, asyncio.Event())
        started = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        ))  # fmt: skip
        await asyncio.wait_for(event.wait(), 30)
        changes.append(time.perf_counter() - started)
    client.exit(None)
    await asyncio.wait_for(client.stop(), 30)
    return statistics.median(hovers), statistics.median(changes)


async def _ours(folder: Path) -> tuple[float, float]:
    """agentd's path on the same server: median lsp hover, median change's new problems."""
    command = server_command("pylsp")
    assert command is not None
    pool = LspPool()
    session = LspSession(pool, [ServerDef("pylsp", str(command), extensions=(".py",))], folder)
    ctx = ToolContext(folder, ports=ToolPorts(language_servers=session))
    tool = LspTool()
    for _ in range(WARM_UP):  # the first starts the server
        await run_tool(tool, HOVER, ctx)
    hovers = []
    for _ in range(CALLS):
        started = time.perf_counter()
        result = await run_tool(tool, HOVER, ctx)
        hovers.append(time.perf_counter() - started)
        assert not result.is_error, result.output
    path, changes = folder / "main.py", []
    texts = [MAIN.encode(), MAIN.replace("return helper(2)", BROKEN).encode()]
    for index in range(2 * CHANGES):
        before, after = texts[index % 2], texts[(index + 1) % 2]
        started = time.perf_counter()
        found = await session.changed(path, before, after, ctx)
        changes.append(time.perf_counter() - started)
        assert found is not None
    await pool.close()
    return statistics.median(hovers), statistics.median(changes)


async def rss_growth(trigger: str) -> tuple[int, int]:
    with Home() as home:
        make_project(home.project)
        home.use_scenarios([*SCENARIOS, *MANY])
        home.user_config(pylsp_table())
        daemon = home.start_socket_daemon()
        try:
            async with socket_client(home) as client:
                sid = await new_session(client, home)
                for _ in range(2):
                    await run(client, sid, trigger, 300)
                before = _rss(daemon.pid)
                for _ in range(20):
                    await run(client, sid, trigger, 300)
                after = _rss(daemon.pid)
        finally:
            stop(daemon)
    return before, after


async def _measure() -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    try:
        make_project(folder)
        raw_hover, raw_change = await _bare(folder)
        (folder / "main.py").write_text(MAIN)
        our_hover, our_change = await _ours(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if os.environ.get("BENCH_LSP_NO_RSS"):
        return _rows(raw_hover, our_hover, raw_change, our_change, (0, 0), (0, 0))
    lsp = await rss_growth("bench-many-lsp")
    ls = await rss_growth("bench-many-ls")
    return _rows(raw_hover, our_hover, raw_change, our_change, lsp, ls)


def _rows(
    raw_hover: float, our_hover: float, raw_change: float, our_change: float,
    lsp: tuple[int, int], ls: tuple[int, int],
) -> list[Row]:  # fmt: skip
    (before, after), (ls_before, ls_after) = lsp, ls
    mib = 2**20
    return [
        (
            f"hover, pygls's bare client on pylsp (median of {CALLS})",
            f"{raw_hover * 1000:.2f} ms",
            "—",
        ),
        (f"lsp hover through agentd (median of {CALLS})", f"{our_hover * 1000:.2f} ms", "—"),
        ("  agentd's overhead per call", f"{(our_hover - raw_hover) * 1000:+.2f} ms", "≤ 3 ms"),
        (
            f"change → diagnostics, bare client (median of {2 * CHANGES})",
            f"{raw_change * 1000:.1f} ms",
            "—",
        ),
        (
            f"change → new problems through agentd (median of {2 * CHANGES})",
            f"{our_change * 1000:.1f} ms",
            "—",
        ),
        ("  agentd's extra time", f"{(our_change - raw_change) * 1000:+.1f} ms", "≤ 20 ms"),
        (
            "daemon RSS, 1,000 lsp calls after 100",
            f"{(after - before) / mib:+.1f} MiB ({after / mib:.0f} MiB)",
            "≤ 5 MiB",
        ),
        (
            "  same, 1,000 built-in ls calls (the session's own growth)",
            f"{(ls_after - ls_before) / mib:+.1f} MiB",
            "—",
        ),
    ]


def main() -> list[Row]:
    return asyncio.run(_measure())


def _print(rows: list[Any]) -> None:
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure.ljust(width)}  {value:>22}  {budget}")


if __name__ == "__main__":
    _print(main())
