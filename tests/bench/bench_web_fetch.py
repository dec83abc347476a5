"""Budgets of ``web_fetch`` (issue: a 1 MB HTML page converts in ≤ 150 ms; RSS grows by
≤ 20 MiB).

* ``conversion``: :func:`agentd.tools.net.convert.to_text` of a generated ~1 MB HTML page
  (headings, paragraphs with links and code, lists, tables, scripts and a nav bar), after one
  warm-up conversion (the converter's import is not counted); CPU time of this process
  (load on the machine does not count) and wall time, median of 7 runs.
* ``whole call``: the real tool (``run_tool``) fetching that page from a local HTTP server
  (allowed by ``allow_hosts``), median of 10 calls.
* ``RSS growth``: the process's resident set (``/proc/self/statm``): what the first two
  calls add (httpx and the converter loaded, the converter thread's heap grown to hold a
  page and the previous result), and what 10 more calls add (the budget: pages must not
  pile up).

Run: ``python -m tests.bench.bench_web_fetch`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from agentd.tools.net.convert import to_text

Row = tuple[str, str, str]


def page(target: int = 1024 * 1024) -> bytes:
    """A realistic HTML page of about ``target`` bytes."""
    head = (
        "<!doctype html><html><head><title>Docs</title><style>body{margin:0}</style>"
        "<script>window.analytics = {};</script></head><body><nav><a href='/'>Home</a>"
        "<a href='/docs'>Docs</a></nav><main>"
    )
    parts = [head]
    size, i = len(head), 0
    while size < target:
        block = (
            f"<h2 id='s{i}'>Section {i}</h2><p>Paragraph {i} explains <a href='/p/{i}'>a "
            f"topic</a> with <code>call({i})</code> and <em>emphasis</em>. Lorem ipsum dolor "
            "sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>"
            f"<ul><li>point {i}.1</li><li>point {i}.2</li></ul>"
            f"<table><tr><th>name</th><th>value</th></tr><tr><td>k{i}</td><td>{i}</td></tr>"
            "</table><pre><code>for x in range(3):\n    print(x)\n</code></pre>"
        )
        parts.append(block)
        size += len(block)
        i += 1
    parts.append("</main></body></html>")
    return "".join(parts).encode()


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_conversion(body: bytes) -> list[Row]:
    to_text(body, "text/html; charset=utf-8")
    cpu, wall = [], []
    for _ in range(7):
        c, w = time.process_time(), time.perf_counter()
        to_text(body, "text/html; charset=utf-8")
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    size = f"{len(body) / 1048576:.2f} MB"
    return [
        (
            f"web_fetch conversion of a {size} page (CPU)",
            f"{statistics.median(cpu) * 1000:.0f} ms",
            "≤ 150 ms",
        ),
        (
            f"web_fetch conversion of a {size} page (wall)",
            f"{statistics.median(wall) * 1000:.0f} ms",
            "—",
        ),
    ]


async def bench_calls(body: bytes) -> list[Row]:
    from tests.tools.webserver import web_server

    with web_server() as server, tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "page.html").write_bytes(body)
        server.pages["/bench"] = body
        url = f"http://127.0.0.1:{server.server_address[1]}/bench"
        tool = build_tools(["web_fetch"])["web_fetch"]
        ctx = ToolContext(
            cwd=Path(tmp),
            spill_dir=Path(tmp) / "spill",
            settings=ToolSettings(web_fetch_allow_hosts=["127.0.0.1"]),
        )
        fresh = _rss()
        for _ in range(2):  # the first loads httpx and the converter; the second overlaps it
            first = await run_tool(tool, {"url": url}, ctx)
            assert not first.is_error, first.output
        del first
        before = _rss()
        times = []
        for _ in range(10):
            started = time.perf_counter()
            result = await run_tool(tool, {"url": url}, ctx)
            times.append(time.perf_counter() - started)
            assert not result.is_error, result.output
        grown = (_rss() - before) / 1048576
    first_growth = (before - fresh) / 1048576
    return [
        (
            "web_fetch whole call, 1 MB page, local server",
            f"{statistics.median(times) * 1000:.0f} ms",
            "—",
        ),
        (
            "web_fetch RSS growth, first 2 calls (httpx, converter loaded)",
            f"{first_growth:.1f} MiB",
            "—",
        ),
        ("web_fetch RSS growth over 10 more calls", f"{grown:.1f} MiB", "≤ 20 MiB"),
    ]


def main() -> list[Row]:
    """Measure the web_fetch budgets; returns (measure, value, budget) rows."""
    body = page()
    rows = asyncio.run(bench_calls(body))  # first: its first call loads the converter
    return bench_conversion(body) + rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
