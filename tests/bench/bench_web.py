"""Budgets of the web chat (``agentd serve --http`` and the page).

* ``page load → interactive``: Chromium (system browser, Playwright) loads the signed-in page
  of a real daemon 10 times; the time from navigation start to the page's ``agentd-ready``
  mark (history listed, modules loaded, input usable); median.
* ``10,000-delta reply``: the page follows a reply streamed as 10,000 text deltas (Markdown
  paragraphs, one character each); Chromium's Long Tasks API counts main-thread tasks over
  50 ms while it renders (count and the longest).
* ``SSE cost per event``: an in-process daemon (session service and HTTP front-end on one
  loop; the mock LLM a process of its own, reached as an OpenAI-compatible provider over
  loopback, so that its pace is its own as a real provider's is) runs a reply with 0 and then
  50 Server-Sent-Events
  clients (a separate process reading them); the extra CPU time of the daemon's process
  divided by events times clients. "burst": 2,000 deltas as fast as the mock sends them (many
  events per loop step share one write); "paced": 1,000 deltas ~2 ms apart (one write per
  event and client).
* ``50 SSE clients p99 delay``: the same run with 50 clients and a reply streamed at ~500
  deltas/s; the delay of each event from its publication (stamped by an in-process
  subscriber) to its arrival at each client (CLOCK_MONOTONIC is shared by both processes);
  p99 over every event and client, and the run's duration against the run with no clients.

Run: ``python -m tests.bench.bench_web`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.mock_server import LocalServer
from tests.bench.smoke import size

Row = tuple[str, str, str]
LIMIT = "≤ 200 µs"
CLIENTS = size(50, 3)
CLIENT_SCRIPT = Path(__file__).with_name("sse_clients.py")


def _scenarios(root: Path) -> Path:
    """A scenarios file with the replies the benches stream."""
    paragraph = "Some **bold** words, a `code` span and plain text.\n\n"  # 52 characters
    scenarios = [
        {
            "name": "ten-thousand",
            "trigger": "ten thousand deltas",
            "steps": [{"chunk_size": 1, "response": {"content": paragraph, "content_repeat": 193}}],
        },
        {
            "name": "burst",
            "trigger": "burst",
            "steps": [{"chunk_size": 1, "response": {"content": "x" * 50, "content_repeat": 40}}],
        },
        {
            "name": "paced",
            "trigger": "paced",
            "steps": [
                {
                    "chunk_size": 1,
                    "chunk_delay_ms": 2,
                    "response": {"content": "y" * 50, "content_repeat": 20},
                }
            ],
        },
    ]
    path = root / "bench-scenarios.json"
    path.write_text(json.dumps({"scenarios": scenarios, "default_response": {"content": "?"}}))
    return path


# --- the page in Chromium ---------------------------------------------------------------------


def page_rows() -> list[Row]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return [("web page (chromium not installed)", "skipped", "—")]
    from playwright.sync_api import sync_playwright

    from tests.harness import Home
    from tests.web.conftest import WebDaemon

    home = Home()
    os.environ["AGENTD_MOCK_SCENARIOS"] = str(_scenarios(home.root))
    home.env["AGENTD_MOCK_SCENARIOS"] = os.environ["AGENTD_MOCK_SCENARIOS"]
    web = WebDaemon(home)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            context = browser.new_context()
            signed = context.request.get(web.new_link(), max_redirects=0).text()
            key = signed.split("#key=")[1].split('"')[0]
            context.add_init_script(f"sessionStorage.setItem('agentd-key', '{key}')")
            page = context.new_page()
            loads = [_load_once(page, web.base) for _ in range(11)][1:]  # first: cold cache
            tasks, longest, seconds = _stream_ten_thousand(page, web)
            browser.close()
    finally:
        web.close()
        home.cleanup()
    return [
        (
            "page load → interactive (median of 10)",
            f"{statistics.median(loads):.0f} ms",
            "≤ 300 ms",
        ),
        (
            "10,000-delta reply: main-thread tasks > 50 ms",
            f"{tasks} (longest {longest:.0f} ms, {seconds:.1f} s)",
            "0",
        ),
    ]


def _load_once(page: Any, base: str) -> float:
    page.goto(f"{base}/")
    page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
    return float(page.evaluate("() => performance.getEntriesByName('agentd-ready')[0].startTime"))


LONG_TASKS = """() => {
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
  }).observe({ type: 'longtask' });
}"""


REPLY_DONE = """() => new Promise((resolve) => {
  const check = () => {
    const reply = document.querySelector('.item--assistant');
    if (reply && !reply.classList.contains('streaming')) resolve(window.longTasks);
    else setTimeout(check, 100);
  };
  check();
})"""


def _stream_ten_thousand(page: Any, web: Any) -> tuple[int, float, float]:
    """Send the prompt, then wait inside the page (no Playwright selector engine runs while
    long tasks are counted: its first use is itself a long task)."""
    box = page.get_by_role("textbox", name="Message")
    box.fill("ten thousand deltas")
    page.evaluate(LONG_TASKS)
    started = time.monotonic()
    box.press("Enter")
    durations: list[float] = page.evaluate(REPLY_DONE)
    return len(durations), max(durations, default=0.0), time.monotonic() - started


# --- the server side ---------------------------------------------------------------------------


class Stamps:
    """A session subscriber that notes when each event was published (``deliver`` runs
    inside the bus's ``publish``)."""

    key = 1 << 50
    closed = False
    answers_permissions = False

    def __init__(self) -> None:
        self.at: dict[int, float] = {}
        self.ended = asyncio.Event()

    def deliver(self, item: Any) -> None:
        self.at[item.seq] = time.monotonic()
        if b'"agent_end"' in item.frame:
            self.ended.set()

    async def request_permission(self, params: Any, timeout: float) -> None:
        return None


async def _serve_run(root: Path, text: str, clients: int) -> dict[str, Any]:
    """One run on an in-process daemon with ``clients`` SSE readers in another process, the
    model the provider ``local`` of ``root/config.toml`` (a mock LLM process of its own)."""
    import httpx

    from agentd.protocol.methods import PromptParams, SessionNewParams, SubscribeParams
    from agentd.session.service import SessionService
    from agentd.web.server import WebServer

    service = SessionService(root / "sessions", root / "config.toml")
    server = WebServer("127.0.0.1", 0)
    await server.start(service)
    try:
        info = await service.create(SessionNewParams(cwd=str(root), provider="local"))
        stamps = Stamps()
        await service.subscribe(SubscribeParams(session_id=info.session_id), stamps)
        reader = None
        if clients:
            link = server.link()
            base = link.split("/?")[0]
            async with httpx.AsyncClient(base_url=base, headers={"Origin": base}) as http:
                answer = await http.get(link)
                cookie = "; ".join(f"{k}={v}" for k, v in answer.cookies.items())
                http.headers["X-Agentd-Key"] = answer.text.split("#key=")[1].split('"')[0]
                tickets = [
                    (await http.post("/api/ticket", json={})).json()["ticket"]
                    for _ in range(clients)
                ]
            reader = await asyncio.create_subprocess_exec(
                sys.executable,
                str(CLIENT_SCRIPT),
                base,
                cookie,
                info.session_id,
                str(clients),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert reader.stdin is not None
            reader.stdin.write("".join(f"{ticket}\n" for ticket in tickets).encode())
            await reader.stdin.drain()
            reader.stdin.close()
            assert reader.stdout is not None
            assert (await reader.stdout.readline()).strip() == b"ready"
        cpu, wall = time.process_time(), time.monotonic()
        run = await service.start_prompt(PromptParams(session_id=info.session_id, text=text))
        await run.result()
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        arrivals: dict[str, list[list[float]]] = {}
        if reader is not None:
            output, _ = await reader.communicate()
            arrivals = json.loads(output)
        return {"cpu": cpu, "wall": wall, "stamps": stamps.at, "arrivals": arrivals}
    finally:
        await server.close()
        await service.close()


def server_rows() -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="bench-web-", dir="/tmp"))
    server = None
    try:
        # The model streams from a process of its own, as a provider does: in the daemon's
        # process its paced sleeps would wait behind the daemon's own work for the clients.
        server = LocalServer(dict(os.environ), root, _scenarios(root))
        (root / "config.toml").write_text(server.provider_config)
        quiet = asyncio.run(_serve_run(root, "burst", 0))
        loud = asyncio.run(_serve_run(root, "burst", CLIENTS))
        paced_alone = asyncio.run(_serve_run(root, "paced", 0))
        paced = asyncio.run(_serve_run(root, "paced", CLIENTS))
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(root, ignore_errors=True)
    events = len(loud["stamps"])
    per_event = (loud["cpu"] - quiet["cpu"]) / (events * CLIENTS)
    paced_events = len(paced["stamps"])
    per_paced_event = (paced["cpu"] - paced_alone["cpu"]) / (paced_events * CLIENTS)
    delays = sorted(
        (arrived - paced["stamps"][int(seq)]) * 1000
        for samples in paced["arrivals"].values()
        for seq, arrived in samples
        if int(seq) in paced["stamps"]
    )
    p99 = delays[int(len(delays) * 0.99) - 1] if delays else float("nan")
    slower = paced["wall"] / paced_alone["wall"] - 1
    return [
        (
            f"SSE cost per event per client, burst ({events} events × {CLIENTS})",
            f"{per_event * 1e6:.1f} µs",
            "≤ 30 µs",
        ),
        (
            f"SSE cost per event per client, paced ({paced_events} events × {CLIENTS})",
            f"{per_paced_event * 1e6:.1f} µs",
            "≤ 30 µs",
        ),
        (
            f"{CLIENTS} SSE clients: p99 event delay ({len(delays)} arrivals)",
            f"{p99:.1f} ms",
            "≤ 20 ms",
        ),
        (
            f"{CLIENTS} SSE clients: paced run duration vs none",
            f"{paced['wall']:.2f} s vs {paced_alone['wall']:.2f} s ({slower * 100:+.0f} %)",
            "≈ 0 %",
        ),
    ]


# --- the sign-in check ----------------------------------------------------------------------


def auth_rows() -> list[Row]:
    """The gate's check of one API request (Host, cookie, page key, Origin: what each request
    pays before it is served) and of one event stream's ticket (minted, then redeemed), with
    the tables at their bounds; in-process, median of 7 rounds."""
    from agentd.web.http import parse_head
    from agentd.web.logins import MAX_SIGN_INS
    from agentd.web.security import Gate

    gate = Gate("127.0.0.1", 8765, loopback=True)
    for _ in range(MAX_SIGN_INS):
        new = gate.logins.exchange(gate.logins.mint_link_token())
    assert new is not None
    head = (
        "POST /api/session/prompt HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n"
        "Origin: http://127.0.0.1:8765\r\nContent-Type: application/json\r\n"
        f"Content-Length: 50\r\nCookie: agentd_8765={new.cookie}\r\n"
        f"X-Agentd-Key: {new.key}\r\nSec-Fetch-Site: same-origin\r\n\r\n"
    ).encode()
    request = parse_head(head)

    def ticket_round() -> None:
        ticket = gate.logins.mint_ticket(new.sign_in)
        stream = parse_head(
            f"GET /api/events?sessionId=s&ticket={ticket} HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n"
            f"Cookie: agentd_8765={new.cookie}\r\n\r\n".encode()
        )
        gate.admit(stream)

    check = _per_call(lambda: gate.admit(request), 20_000)
    stream = _per_call(ticket_round, 5_000)
    return [
        (
            "web API sign-in check per request (Host, cookie, key, Origin)",
            f"{check:.1f} µs",
            "≤ 200 µs",
        ),
        ("event stream: ticket minted + head parsed + admitted", f"{stream:.1f} µs", "≤ 200 µs"),
    ]


def _per_call(call: Any, count: int) -> float:
    """Microseconds per ``call()``: the median of 7 rounds of ``count`` calls."""
    rounds = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(count):
            call()
        rounds.append((time.perf_counter() - started) / count * 1e6)
    return statistics.median(rounds)


def main() -> list[Row]:
    return auth_rows() + page_rows() + server_rows()


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:60} {value:>28} {budget}")
