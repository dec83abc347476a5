"""Budget of the web chat's syntax highlighting: a 2,000-line code block ≤ 50 ms of the page's
main-thread time.

The real path: a real daemon's mock model replies with a fenced 2,000-line Python block; the
page (system Chromium, Playwright) renders it with marked, then ``code.js`` has it highlighted
by its worker (``highlight-worker.js``, the vendored highlight.js) and swaps the result in.
Measured in the page:

* ``main thread``: the page's time spent putting the highlighting in: the swap of the block
  into runs of plain lines, then the markup of the runs near the screen, each from its
  ``agentd-highlight-start`` mark to the end of the style and layout it causes (forced in the
  same task by a MutationObserver); summed per block, median of 5 replies. The runs far from
  the screen get their markup only when scrolled to (each run: 100 lines).
* ``longest main-thread task``: Chromium's Long Tasks API (tasks over 50 ms): the longest of
  those that contain a part of the highlighting's main-thread work, or none.
* ``worker, off the main thread``: from the reply's rendering to the swap (the highlighter's
  own time, with the message round trip); median.
* ``the same highlighting on the main thread``: ``hljs.highlight`` of the same text timed in
  the page; what the worker saves the main thread; median of 5.

Run: ``python -m tests.bench.bench_web_highlight`` (or ``python -m tests.bench``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
from pathlib import Path
from typing import Any

from tests.bench.smoke import size

Row = tuple[str, str, str]
LINES = size(2_000, 20)
RUNS = size(5)


def python_block(lines: int = LINES) -> str:
    """``lines`` lines of Python with the usual tokens (keywords, strings, numbers, comments)."""
    unit = [
        "def f{i}(x, y=3):",
        '    """Doc {i}."""',
        '    s = "text %d" % x  # comment',
        "    for k in range(10):",
        "        y += k * 2.5",
        "    if y > 10 and x: return [y, None, True]",
        "    return {{'a': y}}",
        "",
    ]
    out = [line.format(i=i) for i in range(lines // len(unit) + 1) for line in unit]
    return "\n".join(out[:lines])


def _scenarios(root: Path) -> Path:
    content = f"Here it is:\n\n```python\n{python_block()}\n```\n\nDone."
    scenario = {
        "name": "code",
        "trigger": "long code",
        "steps": [{"response": {"content": content}}],
    }
    path = root / "highlight-scenarios.json"
    path.write_text(json.dumps({"scenarios": [scenario], "default_response": {"content": "?"}}))
    return path


WATCH = """() => {
  window.bench = { tasks: [], costs: [], swaps: 0 };
  new PerformanceObserver((list) => {
    for (const task of list.getEntries()) window.bench.tasks.push([task.startTime, task.duration]);
  }).observe({ type: 'longtask' });
  new MutationObserver((records) => {
    const ours = records.filter((r) => r.target.closest?.('code.hljs'));
    if (!ours.length) return;
    document.body.offsetHeight;  // style and layout, in the same task as the change
    const marks = performance.getEntriesByName('agentd-highlight-start');
    const start = marks[marks.length - 1].startTime;
    window.bench.costs.push([start, performance.now() - start]);
    if (ours.some((r) => r.attributeName === 'class')) window.bench.swaps += 1;
  }).observe(document.querySelector('.log'),
    { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
}"""

ONE_REPLY = """async (n) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const blocks = () => document.querySelectorAll('.code-block code.language-python').length;
  while (blocks() < n) await sleep(10);
  const renderedAt = performance.now();
  // The block's start on the screen (the log follows the reply's end otherwise).
  document.querySelectorAll('.code-block')[n - 1].scrollIntoView({ block: 'start' });
  while (window.bench.swaps < n) await sleep(10);
  const swappedAt = performance.now();
  await sleep(500);  // the runs near the screen get their markup
  const costs = window.bench.costs.filter(([start]) => start >= renderedAt);
  const tasks = window.bench.tasks.filter(([start]) => start >= renderedAt - 1);
  const code = document.querySelectorAll('.code-block code.hljs')[n - 1];
  const runs = code.querySelectorAll('.code-run');
  const filled = [...runs].filter((r) => r.firstElementChild).length;
  const overlaps = ([ts, td]) => costs.some(([cs, cd]) => cs < ts + td && ts < cs + cd);
  const during = tasks.filter(overlaps);
  return { mainThread: costs.reduce((sum, [, d]) => sum + d, 0), worker: swappedAt - renderedAt,
    longest: Math.max(0, ...during.map(([, d]) => d)), filled, runs: runs.length };
}"""

IDLE = "() => !document.querySelector('.agentd-chat form').classList.contains('running')"

MAIN_THREAD_HLJS = """async (text) => {
  const hljs = (await import('/ui/vendor/highlight.min.js')).default;
  const times = [];
  for (let i = 0; i < 5; i += 1) {
    const start = performance.now();
    hljs.highlight(text, { language: 'python', ignoreIllegals: true });
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[2];
}"""


def main() -> list[Row]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return [("code highlighting (chromium not installed)", "skipped", "—")]
    from tests.harness import Home
    from tests.web.conftest import WebDaemon

    home = Home()
    home.env["AGENTD_MOCK_SCENARIOS"] = str(_scenarios(home.root))
    web = WebDaemon(home)
    try:
        results, plain = _measure(chromium, web)
    finally:
        web.close()
        home.cleanup()
    main_ms = statistics.median(r["mainThread"] for r in results)
    longest = max(r["longest"] for r in results)
    filled = f"{results[0]['filled']} of {results[0]['runs']} runs"
    return [
        (
            f"highlight a {LINES:,}-line block: main thread (median of {RUNS})",
            f"{main_ms:.1f} ms ({filled})",
            "≤ 50 ms",
        ),
        (
            "  longest main-thread task while highlighting",
            f"{longest:.0f} ms" if longest else "none > 50 ms",
            "none > 50 ms",
        ),
        (
            "  highlighting in the worker (off the main thread)",
            f"{statistics.median(r['worker'] for r in results):.0f} ms",
            "—",
        ),
        ("  the same highlighting on the main thread", f"{plain:.0f} ms", "(avoided)"),
    ]


def _measure(chromium: str, web: Any) -> tuple[list[dict[str, float]], float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            signed = context.request.get(web.new_link(), max_redirects=0).text()
            key = signed.split("#key=")[1].split('"')[0]
            context.add_init_script(f"sessionStorage.setItem('agentd-key', '{key}')")
            page = context.new_page()
            page.goto(f"{web.base}/?cwd={web.home.project}")
            page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
            page.evaluate(WATCH)
            results = []
            box = page.get_by_role("textbox", name="Message")
            for n in range(1, RUNS + 1):
                box.fill("long code")
                box.press("Enter")
                results.append(page.evaluate(ONE_REPLY, n))
                page.wait_for_function(IDLE)
            plain = float(page.evaluate(MAIN_THREAD_HLJS, python_block()))
        finally:
            browser.close()
    return results, plain


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    from tests.bench.__main__ import render

    print(render([(*row, "bench_web_highlight") for row in main()]))
