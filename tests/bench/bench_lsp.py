"""Budgets of the LSP front-end (issue: "LSP front-end on pygls").

* ``start``: ``agentd lsp`` spawned, ``initialize`` written at once, until its answer; against
  the interpreter floor: a Python that imports pygls' server and lsprotocol's types and
  answers (budget: ≤ 1.5 times the floor). 7 rounds, each measuring both; medians.
* ``code actions``: ``textDocument/codeAction`` on an open 400-line document, a range with
  two diagnostics and a selection (quickfixes and refactors), round trip over the pipes with a
  minimal client (budget: ≤ 20 ms; median and p95 of 200).
* ``1,000-delta reply``: ``agentd.prompt`` whose reply streams as 1,000 deltas over two
  seconds or more; the ``$/progress`` reports received (budget: ≤ 1 report per 50 ms: their
  count against the time from the first to the last; the shortest gap as the client saw
  them is shown too, pipe and scheduling jitter included; no text lost: the reports joined
  equal the reply).

The client here is a few lines of Content-Length framing over asyncio pipes (pygls' own client
costs more per message than the server does). Run: ``python -m tests.bench.bench_lsp`` (or
``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import sys
import time
from typing import Any

from tests.bench.smoke import size
from tests.harness import IsolatedHome, scaled

Row = tuple[str, str, str]
ROUNDS = size(7)
ACTIONS = size(200, 5)
DELTAS = size(1000, 20)
CHUNK = 5
REPLY = "".join(f"w{i % 1000:03d} " for i in range(DELTAS))  # 1,000 chunks of 5 characters
LONG = {
    "name": "bench-lsp-deltas",
    "trigger": "bench lsp deltas",
    "steps": [{"response": {"content": REPLY}, "chunk_size": CHUNK, "chunk_delay_ms": 2}],
}
FLOOR = (
    "import sys\n"
    "import pygls.lsp.server, lsprotocol.types\n"
    "sys.stdin.buffer.readline()\n"
    "sys.stdout.write('Content-Length: 2\\r\\n\\r\\n{}')\n"
    "sys.stdout.flush()\n"
)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Client:
    """A minimal LSP client on a child's pipes: requests, and every message it receives
    (with its arrival time)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.received: list[tuple[float, dict[str, Any]]] = []
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            message = json.loads(await stdout.readexactly(length))
            self.received.append((time.perf_counter(), message))
            waiter = self._waiting.pop(message.get("id", -1), None)
            if waiter is not None and "method" not in message:
                waiter.set_result(message)
            elif "method" in message and "id" in message:  # a request: answer null
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(_frame(message))

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self._next += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return await future

    async def close(self) -> None:
        await self.request("shutdown", None)
        self.send({"jsonrpc": "2.0", "method": "exit"})
        await asyncio.wait_for(self.process.wait(), scaled(30))
        self._reader.cancel()


async def _spawn(home: IsolatedHome, *argv: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        env=home.env,
        cwd=home.project,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


def _lsp_argv(home: IsolatedHome) -> list[str]:
    log = str(home.root / "lsp.log")
    return home.agentd("lsp", "--provider", "mock", "--log-file", log)


def _initialize(home: IsolatedHome, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": home.project.as_uri(),
        "capabilities": capabilities or {},
        "workspaceFolders": [{"uri": home.project.as_uri(), "name": "proj"}],
    }


async def start_times(home: IsolatedHome) -> tuple[float, float]:
    """Median seconds from spawn to the ``initialize`` answer: agentd lsp, the floor."""
    lsp: list[float] = []
    floor: list[float] = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        process = await _spawn(home, sys.executable, "-c", FLOOR)
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"go\n")
        await process.stdout.readexactly(len(b"Content-Length: 2\r\n\r\n{}"))
        floor.append(time.perf_counter() - started)
        await process.wait()
        started = time.perf_counter()
        client = Client(await _spawn(home, *_lsp_argv(home)))
        await client.request("initialize", _initialize(home))
        lsp.append(time.perf_counter() - started)
        await client.close()
    return statistics.median(lsp), statistics.median(floor)


def _document() -> str:
    lines = [f"def function_{i}(value):\n    return valeu + {i}\n" for i in range(200)]
    return "".join(lines)


async def code_action_times(home: IsolatedHome) -> list[float]:
    """Seconds per ``textDocument/codeAction`` round trip (see the module docstring)."""
    client = Client(await _spawn(home, *_lsp_argv(home)))
    await client.request("initialize", _initialize(home))
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = (home.project / "big.py").as_uri()
    item = {"uri": uri, "languageId": "python", "version": 1, "text": _document()}
    client.send(
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
    )
    diagnostics = [
        {
            "range": {
                "start": {"line": 101, "character": 11},
                "end": {"line": 101, "character": 16},
            },
            "message": f"undefined name 'valeu' ({n})",
            "source": "pyflakes",
        }
        for n in range(2)
    ]
    params = {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 100, "character": 0}, "end": {"line": 110, "character": 0}},
        "context": {"diagnostics": diagnostics},
    }
    times: list[float] = []
    for _ in range(ACTIONS):
        started = time.perf_counter()
        answer = await client.request("textDocument/codeAction", params)
        times.append(time.perf_counter() - started)
        assert len(answer["result"]) == 5, answer
    await client.close()
    return times


async def delta_reports(home: IsolatedHome) -> tuple[int, float, float, bool]:
    """The 1,000-delta reply: reports received, the shortest gap between two (seconds), the
    stream's length (first to last report), whether the reports joined equal the reply."""
    client = Client(await _spawn(home, *_lsp_argv(home)))
    await client.request("initialize", _initialize(home))
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    params = {
        "command": "agentd.prompt",
        "arguments": [{"prompt": "bench lsp deltas"}],
        "workDoneToken": "bench",
    }
    answer = await client.request("workspace/executeCommand", params)
    assert answer.get("result", {}).get("text") == REPLY, str(answer)[:2000]
    reports = [
        (at, message["params"]["value"]["message"])
        for at, message in client.received
        if message.get("method") == "$/progress"
        and message["params"]["value"].get("kind") == "report"
    ]
    await client.close()
    times = [at for at, _ in reports]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    joined = "".join(text for _, text in reports)
    return len(reports), min(gaps, default=0.0), times[-1] - times[0], joined == REPLY


async def _measure() -> list[Row]:
    home = IsolatedHome()
    home.use_scenarios([LONG])
    try:
        lsp, floor = await start_times(home)
        actions = sorted(await code_action_times(home))
        count, gap, span, whole = await delta_reports(home)
    finally:
        home.cleanup()
    p95 = actions[int(len(actions) * 0.95) - 1]
    return [
        ("agentd lsp start → initialize answered (median of 7)", f"{lsp * 1000:.0f} ms", "—"),
        ("  floor: python importing pygls + lsprotocol", f"{floor * 1000:.0f} ms", "—"),
        ("  lsp / floor", f"{lsp / floor:.2f}×", "≤ 1.5×"),
        (
            "code actions answered (median / p95 of 200)",
            f"{statistics.median(actions) * 1000:.2f} / {p95 * 1000:.2f} ms",
            "≤ 20 ms",
        ),
        (
            f"1,000-delta reply: $/progress reports over {span * 1000:.0f} ms",
            f"{count} reports (≤ {int(span / 0.05) + 1} allowed)",
            "≤ 1 per 50 ms",
        ),
        ("  shortest gap between two reports, as received", f"{gap * 1000:.0f} ms", "—"),
        ("  reports joined == the reply", "yes" if whole else "NO: text lost", "no text lost"),
    ]


def main() -> list[Row]:
    """Measure every LSP budget; returns (measure, value, budget) rows."""
    return asyncio.run(_measure())


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
