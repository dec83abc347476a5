"""Agent budgets: whole tool-using runs, streaming volume and rate, per-delta harness cost.

``python -m tests.bench.bench_agent`` prints the table.

- *20 bash tool turns*: a real ``agentd serve --stdio`` with ``--provider mock``; the time of
  ``session/prompt`` ("run twenty commands"), median of 5 runs.
- *1,000-delta reply*: the same daemon, prompt "long reply"; every ``session/event`` frame the
  client receives is counted (bytes as on the wire) and the event rate is taken from the first
  to the last event of the run.
- *per-delta overhead*: in process, the real OpenAI provider parsing a 1,000-delta SSE
  transcript (``httpx.MockTransport``) → the agent loop → the event bus → a real
  ``Connection`` writing frames to a socket that another task reads; total time / deltas.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from agentctl.client import AgentClient, spawn_stdio
from agentd.agent.loop import Agent
from agentd.agent.run import RunRequest
from agentd.config.load import ModelChoice
from agentd.jsonrpc.clients import Client
from agentd.protocol.content import ToolCall
from agentd.providers import make_provider
from agentd.rpc import Connection, Router
from agentd.session.bus import EventBus
from agentd.tools.base import Tool, ToolContext, ToolResult, Toolset
from tests.bench.bench_providers import transcript
from tests.harness import isolated_env, scaled

Row = tuple[str, str, str]


async def _daemon(root: Path) -> AgentClient:
    return await spawn_stdio(env=isolated_env(root), cwd=str(root))


async def _prompt(client: AgentClient, root: Path, text: str) -> tuple[float, int, int, float]:
    """(prompt seconds, events, event bytes, events/s over the run) for one prompt."""
    session = await client.call("session/new", {"cwd": str(root), "provider": "mock"})
    frames: list[tuple[float, int]] = []
    ended = asyncio.Event()

    def on_frame(_method: Any, data: bytes) -> None:
        frames.append((time.perf_counter(), len(data)))
        if b'"agent_end"' in data:
            ended.set()

    client.on_notification(on_frame)
    start = time.perf_counter()
    await client.call("session/prompt", {"sessionId": session["sessionId"], "text": text})
    elapsed = time.perf_counter() - start
    await asyncio.wait_for(ended.wait(), scaled(10))  # every event of the run has arrived
    envelope = len(b'{"jsonrpc":"2.0","method":"session/event","params":}\n')
    size = sum(n + envelope for _, n in frames)
    span = frames[-1][0] - frames[0][0] if len(frames) > 1 else elapsed
    client._listeners.clear()
    return elapsed, len(frames), size, len(frames) / span


async def _daemon_rows() -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="bench-", dir="/tmp"))
    client = await _daemon(root)
    try:
        await _prompt(client, root, "how are you")  # warm up: mock server, imports
        turns = [(await _prompt(client, root, "run twenty commands"))[0] for _ in range(5)]
        _, events, size, rate = await _prompt(client, root, "long reply")
    finally:
        await client.close()
    return [
        (
            "20 bash tool turns, prompt → agent_end (median)",
            f"{statistics.median(turns) * 1000:.0f} ms",
            "≤ 200 ms",
        ),
        (
            "1,000-delta reply: session/event bytes",
            f"{size / 1000:.0f} KB ({events} events)",
            "≤ 200 KB",
        ),
        ("1,000-delta reply: events/s end to end", f"{rate / 1000:.1f}k/s", "≥ 20k/s"),
    ]


class _NoTool:
    async def __call__(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("")


async def _allow(call: ToolCall, tool: Tool) -> str | None:
    return None


async def _harness_once(deltas: int) -> float:
    body = b"".join(transcript(deltas))
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left)
    conn = Connection(reader, writer, Router(), name="bench", framing="ndjson")
    serving = asyncio.create_task(conn.serve())
    counted = asyncio.create_task(_count_lines(right))
    bus = EventBus("bench", max_events=10_000, max_bytes=64 << 20)
    bus.subscribe(Client(conn))
    async with httpx.AsyncClient(transport=transport) as http:
        provider = make_provider(
            ModelChoice("bench", "openai", "m", "http://x/v1", None, None), http
        )
        agent = Agent(
            provider=provider,
            model="m",
            system_prompt="",
            toolset=Toolset({}, []),
            context=ToolContext(cwd=Path.cwd()),
            sink=bus.publish,
            authorize=_allow,
            run_tool=_NoTool(),
        )
        start = time.perf_counter()
        await agent.run(RunRequest("go"))
        await conn.close()
        lines = await counted
        elapsed = time.perf_counter() - start
    serving.cancel()
    right.close()
    assert lines >= deltas, lines
    return elapsed / deltas


async def _count_lines(sock: socket.socket) -> int:
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    lines = 0
    while data := await loop.sock_recv(sock, 1 << 20):
        lines += data.count(b"\n")
    return lines


async def _harness_rows() -> list[Row]:
    per_delta = [await _harness_once(1000) for _ in range(15)]
    return [
        (
            "per-delta harness cost, chunk in → frame out (median)",
            f"{statistics.median(per_delta) * 1e6:.1f} µs",
            "≤ 50 µs",
        )
    ]


async def _idle_session_rows(count: int = 40) -> list[Row]:
    """Python memory held per loaded, idle session after one tool-using run, minus the
    encoded size of its messages (tracemalloc; runtime, agent, event bus, file handle)."""
    import tracemalloc

    import msgspec

    from agentd import log
    from agentd.protocol.methods import SessionNewParams
    from agentd.session.manager import SessionManager
    from agentd.session.shared import SharedResources

    log.configure("warning")
    root = Path(tempfile.mkdtemp(prefix="bench-idle-", dir="/tmp"))
    manager = SessionManager(SharedResources(session_dir=root / "sessions"))
    warm = await manager.create(SessionNewParams(cwd=str(root), provider="mock"))
    await warm.start_run(RunRequest("hello world"))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    runtimes = []
    for _ in range(count):
        runtime = await manager.create(SessionNewParams(cwd=str(root), provider="mock"))
        await runtime.start_run(RunRequest("hello world"))
        runtimes.append(runtime)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    content = sum(len(msgspec.json.encode(r.agent.messages)) for r in runtimes)
    await manager.close()
    per_session = (held - content) / count
    return [
        (
            "memory per idle loaded session beyond its messages",
            f"{per_session / 1024:.0f} KiB",
            "≤ 1 MiB",
        )
    ]


def main() -> list[Row]:
    async def both() -> list[Row]:
        rows = await _harness_rows() + await _daemon_rows()
        return rows + await _idle_session_rows()

    return asyncio.run(both())


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
