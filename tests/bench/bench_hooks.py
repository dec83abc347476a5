"""Hooks budgets: what a ``pre_tool`` or ``post_tool`` hook adds to a tool call, and what no
hooks add.

``python -m tests.bench.bench_hooks`` prints the table.

- *hook that exits at once*: a real ``agentd serve --stdio`` (``--provider mock``) runs the
  built-in "run twenty commands" scenario (20 bash calls) with no hooks and with one
  ``[[hooks.pre_tool]]`` whose command is ``exit 0``; the difference of the medians (7 runs
  each) divided by 20 is what the hook adds per call; the same with one ``[[hooks.post_tool]]``
  (which also takes a stat snapshot of the working tree before and after the hook, to record
  what it changes for a rewind). Also, in process: one
  ``run_hook_command("exit 0")`` (spawn, stdin, wait, drain), median of 50.
- *no hooks*: the loop's hook seams with nothing configured (``pre_tool`` + ``post_tool`` on
  :data:`~agentd.agent.hooks.NO_HOOKS`), per call, median of 20,000.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from agentctl.client import AgentClient, spawn_stdio
from agentd.agent.hooks import NO_HOOKS, post_tool, pre_tool
from agentd.hooks.process import run_hook_command
from agentd.protocol.content import ToolCall
from agentd.tools.base import ToolResult
from tests.bench.smoke import size
from tests.harness import isolated_env

Row = tuple[str, str, str]
RUNS = size(7)
CALLS = size(20, 2)
HOOK = '[[hooks.pre_tool]]\nmatcher = "bash"\ncommand = "exit 0"\n'
POST_HOOK = '[[hooks.post_tool]]\nmatcher = "bash"\ncommand = "exit 0"\n'
CONFIG = 'permission_mode = "auto"\n[permissions]\nallow_auto_without_sandbox = true\n'


async def _run_times(hooks: str) -> list[float]:
    """Seconds of each "run twenty commands" prompt in a fresh daemon with ``hooks``."""
    root = Path(tempfile.mkdtemp(prefix="bench-hooks-", dir="/tmp"))
    env = isolated_env(root)
    config = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG + hooks)
    client: AgentClient = await spawn_stdio(env=env, cwd=str(root))
    try:
        session = await client.call("session/new", {"cwd": str(root), "provider": "mock"})
        params = {"sessionId": session["sessionId"], "text": "run twenty commands"}
        await client.call("session/prompt", params)  # warm up: imports, the mock, bash
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            await client.call("session/prompt", params)
            times.append(time.perf_counter() - start)
        return times
    finally:
        await client.close()


async def _spawn_times(count: int) -> list[float]:
    cwd, env = Path(tempfile.gettempdir()), dict(os.environ)
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await run_hook_command(
            "exit 0", stdin=b'{"event":"pre_tool"}', cwd=cwd, env=env, timeout=10
        )
        times.append(time.perf_counter() - start)
    return times


async def _no_hook_seconds(count: int) -> float:
    """Per call: the two seams a tool call passes with no hooks configured."""
    call = ToolCall(id="c1", name="bash", arguments={"command": "true"})
    result = ToolResult("ok")
    start = time.perf_counter()
    for _ in range(count):
        await pre_tool(NO_HOOKS, call)
        await post_tool(NO_HOOKS, call, result)
    return (time.perf_counter() - start) / count


async def _rows() -> list[Row]:
    without = statistics.median(await _run_times(""))
    with_hook = statistics.median(await _run_times(HOOK))
    added = (with_hook - without) / CALLS
    with_post = statistics.median(await _run_times(POST_HOOK))
    post_added = (with_post - without) / CALLS
    spawn = statistics.median(await _spawn_times(50))
    seams = await _no_hook_seconds(20_000)
    return [
        ("20 bash calls, no hooks (median)", f"{without * 1000:.0f} ms", "—"),
        ("20 bash calls, pre_tool hook `exit 0` (median)", f"{with_hook * 1000:.0f} ms", "—"),
        ("pre_tool hook that exits at once, per tool call", f"{added * 1000:.1f} ms", "≤ 15 ms"),
        (
            "post_tool hook `exit 0` (its file changes watched), per call",
            f"{post_added * 1000:.1f} ms",
            "≤ 15 ms",
        ),
        ("one hook command `exit 0`, in process (median)", f"{spawn * 1000:.1f} ms", "≤ 15 ms"),
        ("no hooks configured: the loop's hook seams per call", f"{seams * 1e6:.2f} µs", "≈ 0"),
    ]


def main() -> list[Row]:
    return asyncio.run(_rows())


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:62} {value:>10}   {budget}")
