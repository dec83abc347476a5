"""Budgets of ``web_fetch`` (issue: a 1 MB HTML page converts in ≤ 150 ms; RSS grows by
≤ 20 MiB).

* ``conversion``: :func:`agentd.tools.net.convert.to_text` of a generated ~1 MB HTML page
  (headings, paragraphs with links and code, lists, tables, scripts and a nav bar), after one
  warm-up conversion (the converter's import is not counted); CPU time of this process
  (load on the machine does not count) and wall time, median of 7 runs.
* Memory, measured in a fresh child process (``--memory``) so that other benchmarks run in
  the same ``python -m tests.bench`` leave nothing behind, with httpx imported first (the
  daemon's providers import it) and the page served by ``python -m http.server`` in another
  process (the server's buffers are not counted). Resident set from ``/proc/self/statm``:

  - ``import``: what importing the converter (``html_to_markdown``, with ``agentd.tools.net``)
    adds, and how long it takes;
  - ``first fetch``: what the first 1 MB fetch adds, the import included (the budget);
  - ``10 more fetches``: what ten more add (the budget too: pages must not pile up);
  - ``peak``: the highest resident set during one fetch above the set before it (the
    kernel's ``VmHWM``, reset through ``/proc/self/clear_refs``): the converter's working
    set, handed back after the fetch (:mod:`agentd.tools.net.heap`).
* ``whole call``: the real tool (``run_tool``) fetching that page, median of those 10 calls.

Run: ``python -m tests.bench.bench_web_fetch`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentd.tools.net.convert import to_text
from tests.harness import scaled

Row = tuple[str, str, str]
MIB = 1024 * 1024


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


def _status(field: str) -> float:
    """A ``/proc/self/status`` size field (``VmRSS``, ``VmHWM``) in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise LookupError(field)


def _rss() -> float:
    """This process's resident set in MiB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def _reset_peak() -> None:
    """Start ``VmHWM`` over from the current resident set (Linux ≥ 4.0)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def bench_conversion(body: bytes) -> list[Row]:
    to_text(body, "text/html; charset=utf-8")
    cpu, wall = [], []
    for _ in range(7):
        c, w = time.process_time(), time.perf_counter()
        to_text(body, "text/html; charset=utf-8")
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    size = f"{len(body) / MIB:.2f} MB"
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


@contextmanager
def served(body: bytes) -> Iterator[str]:
    """The URL of ``body`` as an HTML page served by ``python -m http.server`` in a child
    process."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "page.html").write_bytes(body)
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0"],
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            banner = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (...) ..."
            port = int(banner.split(" port ", 1)[1].split()[0])
            yield f"http://127.0.0.1:{port}/page.html"
        finally:
            server.terminate()
            server.wait(scaled(10))


async def measure_memory(url: str) -> dict[str, float]:
    """The memory figures (see the module docstring), in MiB and ms."""
    import httpx  # noqa: F401  (loaded by the daemon's providers before any fetch)

    from agentd.tools import build_tools, run_tool
    from agentd.tools.base import ToolContext
    from agentd.tools.defaults import ToolSettings

    tool = build_tools(["web_fetch"])["web_fetch"]
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(
            cwd=Path(tmp),
            spill_dir=Path(tmp) / "spill",
            settings=ToolSettings(web_fetch_allow_hosts=["127.0.0.1"]),
        )
        fresh = _rss()
        started = time.perf_counter()
        import html_to_markdown  # noqa: F401

        import agentd.tools.net.convert
        import agentd.tools.net.fetch  # noqa: F401

        import_ms = (time.perf_counter() - started) * 1000
        imported = _rss()
        result = await run_tool(tool, {"url": url}, ctx)
        assert not result.is_error, result.output
        del result
        first = _rss()
        times, peaks = [], []
        for _ in range(10):
            _reset_peak()
            before, started = _rss(), time.perf_counter()
            result = await run_tool(tool, {"url": url}, ctx)
            times.append((time.perf_counter() - started) * 1000)
            peaks.append(_status("VmHWM") - before)
            assert not result.is_error, result.output
            del result
        return {
            "import": imported - fresh,
            "import_ms": import_ms,
            "first": first - fresh,
            "more": _rss() - first,
            "peak": statistics.median(peaks),
            "call_ms": statistics.median(times),
        }


def bench_memory(body: bytes) -> list[Row]:
    """Run :func:`measure_memory` in a fresh interpreter; its rows."""
    with served(body) as url:
        child = subprocess.run(
            [sys.executable, "-m", "tests.bench.bench_web_fetch", "--memory", url],
            capture_output=True,
            text=True,
            timeout=scaled(300),
            check=True,
        )
    m = json.loads(child.stdout)
    return [
        ("web_fetch whole call, 1 MB page, local server", f"{m['call_ms']:.0f} ms", "—"),
        (
            "web_fetch converter import (httpx already loaded)",
            f"{m['import']:.1f} MiB, {m['import_ms']:.0f} ms",
            "—",
        ),
        (
            "web_fetch RSS growth, first 1 MB fetch, import included",
            f"{m['first']:.1f} MiB",
            "≤ 20 MiB",
        ),
        ("web_fetch RSS growth over 10 more fetches", f"{m['more']:.1f} MiB", "≤ 20 MiB"),
        (
            "web_fetch peak RSS above the start of a fetch (returned after)",
            f"{m['peak']:.1f} MiB",
            "—",
        ),
    ]


def main() -> list[Row]:
    """Measure the web_fetch budgets; returns (measure, value, budget) rows."""
    body = page()
    return bench_conversion(body) + bench_memory(body)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        print(json.dumps(asyncio.run(measure_memory(sys.argv[2]))))
    else:
        for row in main():
            print(" | ".join(row))
