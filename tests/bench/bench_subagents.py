"""Subagent budgets: how fast a ``task`` child starts, and two children in parallel.

``python -m tests.bench.bench_subagents`` prints the table. A real ``agentd serve --stdio``
talks over HTTP to a mock LLM served by this process (so the arrival of each model request
is timed on the same clock as the client's events); the user config points a provider at it.

- *child start*: from the parent's ``tool_execution_start`` of the task (as the client
  receives it) to the child's first model request arriving at the LLM: creating the child
  session (its file, config, tools, prompt), linking it and starting its run. Median of 20.
- *two 2-second children*: one reply with two task calls whose children each wait 2 s for
  their model; from the first task's ``tool_execution_start`` to the last task's
  ``tool_execution_end``. Median of 3.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from agentctl.client import AgentClient, spawn_stdio
from agentd.mockllm import MockLLMServer
from agentd.mockllm.http import Request, Responder
from agentd.mockllm.scenarios import parse_scenarios
from tests.harness import isolated_env
from tests.subagents.scenarios import SUBAGENT_SCENARIOS

Row = tuple[str, str, str]
CONFIG = """provider = "bench"
model = "mock-model"

[providers.bench]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
"""


class TimedLLM(MockLLMServer):
    """The mock LLM, noting when each request arrives (perf_counter)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.arrivals: list[float] = []
        self.wall: list[float] = []

    async def handle(self, request: Request, respond: Responder) -> None:
        if request.method == "POST":
            self.arrivals.append(time.perf_counter())
            self.wall.append(time.time())
        await super().handle(request, respond)


async def _timed_prompt(
    client: AgentClient, cwd: str, text: str
) -> list[tuple[float, str, dict[str, Any]]]:
    """Prompt a new session; every event received (its arrival time, session id, event)."""
    session = await client.call("session/new", {"cwd": cwd})
    sid = session["sessionId"]
    seen: list[tuple[float, str, dict[str, Any]]] = []
    stream = client.raw_events()
    prompt = asyncio.create_task(client.call("session/prompt", {"sessionId": sid, "text": text}))
    async for params in stream:
        seen.append((time.perf_counter(), params["sessionId"], params["event"]))
        if params["sessionId"] == sid and params["event"]["type"] == "agent_end":
            break
    stream.close()
    result = await prompt
    assert result["stopReason"] == "end_turn", result
    return seen


def _created_at(root: Path, session_id: str) -> float:
    """The child's ``createdAt`` (its header, written when the file was created) in Unix time."""
    (path,) = (root / "dat").glob(f"**/*_{session_id}.jsonl")
    header = json.loads(path.read_text().splitlines()[0])
    return datetime.fromisoformat(header["createdAt"].replace("Z", "+00:00")).timestamp()


def _first(events: list[tuple[float, str, dict[str, Any]]], kind: str, name: str) -> float:
    return next(t for t, _, e in events if e["type"] == kind and e.get("name") == name)


async def _rows() -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="bench-sub-", dir="/tmp"))
    env = isolated_env(root)
    project = root / "proj"
    project.mkdir()
    scenarios = parse_scenarios({"scenarios": SUBAGENT_SCENARIOS})
    async with TimedLLM(scenarios=scenarios) as llm:
        config = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(CONFIG.format(url=llm.url))
        client = await spawn_stdio(env=env, cwd=str(project))
        try:
            await _timed_prompt(client, str(project), "delegate the answer")  # warm up
            starts, from_file = [], []
            for _ in range(20):
                llm.arrivals.clear()
                llm.wall.clear()
                events = await _timed_prompt(client, str(project), "delegate the answer")
                task_start = _first(events, "tool_execution_start", "task")
                child_request = llm.arrivals[1]  # 0: the parent's first call; 1: the child's
                starts.append(child_request - task_start)
                child = next(e["childSessionId"] for _, _, e in events if "childSessionId" in e)
                from_file.append(llm.wall[1] - _created_at(root, child))
            parallel = []
            for _ in range(3):
                events = await _timed_prompt(client, str(project), "delegate two slow tasks")
                begin = _first(events, "tool_execution_start", "task")
                ends = [t for t, _, e in events if e["type"] == "tool_execution_end"]
                parallel.append(max(ends) - begin)
        finally:
            await client.close()
    shutil.rmtree(root, ignore_errors=True)
    return [
        (
            "task child start: session created (header createdAt, ms) → first model request",
            f"{statistics.median(from_file) * 1000:.1f} ms (max {max(from_file) * 1000:.1f})",
            "≤ 20 ms",
        ),
        (
            "task child start: task call start → child's first model request (median of 20)",
            f"{statistics.median(starts) * 1000:.1f} ms (max {max(starts) * 1000:.1f})",
            "(≤ 20 ms)",
        ),
        (
            "two 2-second children in one reply: first task start → last task end (median)",
            f"{statistics.median(parallel):.2f} s",
            "≤ 2.5 s",
        ),
    ]


def main() -> list[Row]:
    return asyncio.run(_rows())


if __name__ == "__main__":
    from tests.bench.__main__ import render

    print(render([(m, v, b, "bench_subagents") for m, v, b in main()]))
