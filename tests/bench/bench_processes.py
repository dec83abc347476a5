"""Background processes: how fast a start returns, and what many busy ones cost the daemon.

* **Start → return** (budget ≤ 20 ms): the ``bash`` tool with ``background: true`` run the
  way the agent loop runs it (``run_tool``, a session context with a process table, spill
  files on disk), 40 times; the time from the process's start (``startedAt``, taken when the
  started shell reaches the event loop) to the call's return, p50 / p95 / max; and the whole
  call (environment, tree snapshot for rewind, spill file, fork and exec in a worker thread,
  the grace for first output) beside it.
* **Busy processes** (budgets: RSS growth ≤ 30 MiB, p99 ≤ 50 ms): a real ``agentd serve
  --socket`` with the mock LLM; one run starts 20 background processes, each printing 1 MB/s
  (1 KB lines) for 10 s; a subscribed client receives their ``process_output`` events. The
  daemon's RSS is sampled every 50 ms from before the run to the last exit (growth = peak -
  before), while a prober process on its own connection sends ``daemon/status`` back to back
  (5 ms apart); the row is the p99 of its round trips.

Run: ``python -m tests.bench.bench_processes [--procs N] [--seconds S]`` (smaller on a machine
too loaded for the full load; the rows say the scale).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from agentctl.client import connect
from tests.bench.bench_loop_lag import Prober
from tests.harness import connectable, isolated_env, scaled, start_daemon, stop

Row = tuple[str, str, str]
PRINTER = (
    "import sys, time\n"
    "line = b'x' * 1023 + b'\\n'\n"
    "start = time.monotonic()\n"
    "for tick in range({ticks}):\n"
    "    sys.stdout.buffer.write(line * 100); sys.stdout.flush()\n"
    "    time.sleep(max(0.0, start + (tick + 1) * 0.1 - time.monotonic()))\n"
)


async def _start_latency(runs: int = 40) -> list[Row]:
    from agentd.tools import build_tools, run_tool
    from agentd.tools.base import ToolContext, ToolPorts
    from agentd.tools.process.table import ProcessTable

    work = Path(tempfile.mkdtemp(prefix="agentd-bench-bg-")).resolve()
    table = ProcessTable()
    ctx = ToolContext(cwd=work, spill_dir=work / ".spill", ports=ToolPorts(processes=table))
    bash = build_tools(["bash"])["bash"]
    after_start: list[float] = []
    whole: list[float] = []
    try:
        for _ in range(runs):
            began = time.perf_counter()
            result = await run_tool(bash, {"command": "sleep 30", "background": True}, ctx)
            returned, wall = time.time(), time.perf_counter()
            assert not result.is_error, result.output
            info = result.details.process  # type: ignore[union-attr]
            after_start.append((returned - info.started_at) * 1000)
            whole.append((wall - began) * 1000)
            await table.get(info.id).kill(0.5)
    finally:
        await table.close(0.5)
        shutil.rmtree(work, ignore_errors=True)
    return [
        (f"background start → return to the model (n={runs})", _spread(after_start), "≤ 20 ms"),
        (f"background bash call, whole (n={runs})", _spread(whole), "—"),
    ]


def _spread(values: list[float]) -> str:
    ordered = sorted(values)
    p50 = ordered[len(ordered) // 2]
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {p50:.1f} / p95 {p95:.1f} / max {ordered[-1]:.1f} ms"


def _scenario(procs: int, seconds: int, script: Path) -> dict[str, Any]:
    def call(n: int) -> dict[str, Any]:
        args = {"command": f"{sys.executable} {script}", "background": True}
        return {"id": f"c{n}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps(args)}}  # fmt: skip

    return {
        "name": "printers",
        "trigger": "start the printers",
        "steps": [
            {"response": {"content": "Starting.", "tool_calls": [call(n) for n in range(procs)]}},
            {"response": {"content": "They run."}},
        ],
    }


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


async def _busy(procs: int, seconds: int) -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="agentd-bench-bgd-")).resolve()
    project = root / "proj"
    project.mkdir()
    script = root / "printer.py"
    script.write_text(PRINTER.format(ticks=seconds * 10))
    env = isolated_env(root)
    scenarios = {"scenarios": [_scenario(procs, seconds, script)]}
    (root / "scenarios.json").write_text(json.dumps(scenarios))
    env["AGENTD_MOCK_SCENARIOS"] = str(root / "scenarios.json")
    (root / "con" / "agentd").mkdir(parents=True, exist_ok=True)
    (root / "con" / "agentd" / "config.toml").write_text(
        'permission_mode = "auto"\n[permissions]\nallow_auto_without_sandbox = true\n'
        f"[tools]\nbash_max_background = {procs}\n"
    )
    socket = str(root / "run" / "agentd.sock")
    argv = [sys.executable, "-m", "agentd", "serve", "--socket", socket]
    daemon = start_daemon(argv, env, root / "daemon.log", partial(connectable, socket))
    try:
        return await _measure_busy(daemon.pid, socket, project, procs, seconds)
    finally:
        stop(daemon, timeout=30)
        shutil.rmtree(root, ignore_errors=True)


async def _measure_busy(
    pid: int, socket: str, project: Path, procs: int, seconds: int
) -> list[Row]:
    client = await connect(socket, autostart=False)
    try:
        warm = await client.call("session/new", {"cwd": str(project), "provider": "mock"})
        await client.call("session/prompt", {"sessionId": warm["sessionId"], "text": "warm up"})
        info = await client.call("session/new", {"cwd": str(project), "provider": "mock"})
        sid = info["sessionId"]
        received = {"bytes": 0, "events": 0}
        events = client.raw_events(sid)

        async def watch() -> None:
            async for params in events:
                event = params["event"]
                if event["type"] == "process_output":
                    received["bytes"] += len(event["text"])
                    received["events"] += 1

        watcher = asyncio.create_task(watch())
        idle = Prober(socket)
        await asyncio.sleep(3)
        quiet = sorted(idle.finish())
        before = peak = _rss_mib(pid)
        prober = Prober(socket)
        began = time.perf_counter()
        await client.call("session/prompt", {"sessionId": sid, "text": "start the printers"})

        async def running() -> int:
            state = await client.call("session/state", {"sessionId": sid})
            return len(state["processes"])

        deadline = time.monotonic() + scaled(seconds * 6 + 30)
        while await running() and time.monotonic() < deadline:
            peak = max(peak, _rss_mib(pid))
            await asyncio.sleep(0.05)
        took = time.perf_counter() - began
        times = sorted(prober.finish())
        listed = await client.call("session/processes", {"sessionId": sid})
        printed = sum(p["outputBytes"] for p in listed["sessions"][0]["processes"])
        watcher.cancel()
        events.close()
    finally:
        await client.close()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
    quiet_p99 = quiet[min(len(quiet) - 1, int(len(quiet) * 0.99))] * 1000
    scale = f"{procs} procs x 1 MB/s x {seconds} s"
    return [
        (
            f"another client's p99, no load (the machine's baseline, n={len(quiet)})",
            f"{quiet_p99:.1f} ms",
            "—",
        ),
        (
            f"daemon RSS growth, {scale} ({printed / 2**20:.0f} MiB printed, "
            f"{before:.0f} → {peak:.0f} MiB)",
            f"{peak - before:.1f} MiB",
            "≤ 30 MiB",
        ),
        (
            f"another client's p99, {scale} ({took:.1f} s, max {times[-1] * 1000:.0f} ms, "
            f"n={len(times)}; {received['events']} process_output events streamed)",
            f"{p99:.1f} ms",
            "≤ 50 ms",
        ),
    ]


def main(procs: int = 20, seconds: int = 10) -> list[Row]:
    rows = asyncio.run(_start_latency())
    return rows + asyncio.run(_busy(procs, seconds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--procs", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=10)
    options = parser.parse_args()
    from tests.bench.__main__ import render

    print(render([(*row, "bench_processes") for row in main(options.procs, options.seconds)]))
