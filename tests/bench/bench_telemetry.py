"""Telemetry budgets: what OpenTelemetry export adds to a 20-turn run, and what it costs off.

``python -m tests.bench.bench_telemetry`` prints the table.

- *on vs off*: a real ``agentd serve --stdio`` (the mock provider) runs the built-in "run
  twenty commands" scenario (20 turns, a bash call each) 11 times with telemetry off and 11
  times exporting spans and metrics to a real OTLP/HTTP receiver in a process of its own
  (``[telemetry] otlp_endpoint``, the SDK's default batching); the runs alternate between
  the two daemons (ABBA, so drift in the machine's load hits both alike) and the medians are
  compared (budget: ≤ 5 % added).
- *off*: the OpenTelemetry modules a process imported for one session and one run with no
  endpoint configured (budget: none).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentctl.client import AgentClient, spawn_stdio
from tests.bench.smoke import size
from tests.harness import isolated_env
from tests.test_lazy_imports import otel_modules_after_a_run

Row = tuple[str, str, str]
RUNS = size(11)
CONFIG = 'permission_mode = "auto"\n[permissions]\nallow_auto_without_sandbox = true\n'
PROMPT = "run twenty commands"


async def _daemon(telemetry: str) -> tuple[AgentClient, str]:
    """A stdio daemon in a fresh home whose config adds ``telemetry``; its session id."""
    root = Path(tempfile.mkdtemp(prefix="bench-telemetry-", dir="/tmp"))
    env = isolated_env(root)
    config = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG + telemetry)
    client: AgentClient = await spawn_stdio(env=env, cwd=str(root))
    session = await client.call("session/new", {"cwd": str(root), "provider": "mock"})
    await _timed(client, session["sessionId"])  # warm up: imports, the mock, bash
    return client, session["sessionId"]


async def _timed(client: AgentClient, session_id: str) -> float:
    start = time.perf_counter()
    result = await client.call("session/prompt", {"sessionId": session_id, "text": PROMPT})
    assert result["turns"] == 21, result
    return time.perf_counter() - start


async def _on_and_off(endpoint: str) -> tuple[list[float], list[float]]:
    section = f'[telemetry]\notlp_endpoint = "{endpoint}"\n'
    off, off_id = await _daemon("")
    on, on_id = await _daemon(section)
    try:
        plain, exported = [], []
        for run in range(RUNS):
            first, second = ((off, off_id), (on, on_id))[:: 1 if run % 2 == 0 else -1]
            one, other = await _timed(*first), await _timed(*second)
            plain.append(one if run % 2 == 0 else other)
            exported.append(other if run % 2 == 0 else one)
        return plain, exported
    finally:
        await off.close()
        await on.close()


async def _rows() -> list[Row]:
    receiver = subprocess.Popen(
        [sys.executable, "-m", "tests.telemetry.receiver"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert receiver.stdin is not None
    assert receiver.stdout is not None
    try:
        plain, exported = await _on_and_off(receiver.stdout.readline().strip())
    finally:
        receiver.stdin.close()
        spans = int(receiver.stdout.readline() or 0)
        receiver.wait(timeout=30)
    off, on = statistics.median(plain), statistics.median(exported)
    added = (on - off) / off * 100
    with tempfile.TemporaryDirectory(prefix="bench-telemetry-off-", dir="/tmp") as root:
        imported = otel_modules_after_a_run(Path(root), {})
    return [
        ("20-turn run, telemetry off (median)", f"{off * 1000:.0f} ms", "—"),
        ("20-turn run, exporting spans and metrics (median)", f"{on * 1000:.0f} ms", "—"),
        ("telemetry on: added to the run's wall time", f"{added:+.1f} %", "≤ 5 %"),
        ("spans received over OTLP/HTTP", str(spans), "—"),
        ("telemetry off: OpenTelemetry modules imported", str(len(imported)), "0"),
    ]


def main() -> list[Row]:
    return asyncio.run(_rows())


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:56} {value:>10}   {budget}")
