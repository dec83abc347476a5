"""Budgets of the VS Code extension (editors/vscode).

``python -m tests.bench.bench_vscode`` prints the table:

- activation: a fresh Node process requires the minified ``dist/extension.js`` (on a stub
  ``vscode`` module) and calls ``activate``; the median of several processes, and how many
  daemon processes activation started (it must start none);
- 10,000 deltas: the bundled webview in headless Chromium (``tests/vscode/harness.html``,
  whose ``benchStream`` and ``benchLatency`` do the measuring) is sent a reply of 10,000
  ``message_update`` deltas as separate ``postMessage`` events (200 per
  macrotask, as a fast daemon would deliver them); the longest main-thread task the Long Tasks
  API saw (tasks under 50 ms are not reported, so "< 50" means none), and the time until the
  whole reply is on screen;
- delta latency: 200 single deltas 20 ms apart; from the ``postMessage`` that delivers each to
  the first task after the frame that rendered it (the paint), median and p95.

The latency covers the webview's side (message delivery, reducer, per-frame render, paint); the
extension host forwards each notification from vscode-jsonrpc to ``postMessage`` without
buffering.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
from typing import Any

from tests.bench.smoke import size
from tests.vscode.codeserver import EXTENSION, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.webview_harness import serve_harness

Row = tuple[str, str, str]
RUNS = size(7)
DELTAS = size(10_000, 100)


def activation_rows() -> list[Row]:
    node = shutil.which("node")
    if node is None:
        return [("vscode: activation (node not installed)", "skipped", "—")]
    runs = []
    for _ in range(RUNS):
        done = subprocess.run(
            [node, "test/bench-activation.mjs"],
            cwd=EXTENSION,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    total = [run["loadMs"] + run["activateMs"] for run in runs]
    spawned = max(run["spawned"] for run in runs)
    return [
        (
            "vscode: activation (require bundle + activate), median [min]",
            f"{statistics.median(total):.1f} ms [{min(total):.1f}]",
            "≤ 50 ms",
        ),
        ("vscode: daemon processes started by activation", str(spawned), "0"),
    ]


def webview_rows() -> list[Row]:
    browser_path = chromium()
    if browser_path is None:
        return [("vscode webview (chromium not installed)", "skipped", "—")]
    from playwright.sync_api import sync_playwright

    with serve_harness() as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 420, "height": 900})
        page.goto(url)
        page.wait_for_selector("html[data-ready='true']")
        stream: dict[str, Any] = page.evaluate("(n) => benchStream(n)", DELTAS)
        page.reload()
        page.wait_for_selector("html[data-ready='true']")
        samples: list[float] = page.evaluate("(n) => benchLatency(n)", 200)
        browser.close()
    longest = stream["longest"]
    p95 = statistics.quantiles(samples, n=20)[-1]
    return [
        (
            "vscode webview: longest main-thread task, 10,000-delta reply",
            f"{longest:.0f} ms" if longest else "< 50 ms (none reported)",
            "≤ 50 ms",
        ),
        ("vscode webview: 10,000-delta reply fully shown after", f"{stream['shown']:.0f} ms", "—"),
        (
            "vscode webview: delta postMessage → painted, median / p95",
            f"{statistics.median(samples):.1f} / {p95:.1f} ms",
            "≤ 20 ms",
        ),
    ]


def main() -> list[Row]:
    build_extension()
    return activation_rows() + webview_rows()


if __name__ == "__main__":
    from tests.bench.__main__ import render

    rows = main()
    print(render([(m, v, b, "bench_vscode") for m, v, b in rows]))
