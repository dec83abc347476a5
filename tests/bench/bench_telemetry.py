"""Telemetry budgets: what OpenTelemetry export adds to a 20-turn run, and what it costs off.

``python -m tests.bench.bench_telemetry`` prints the table.

- *on vs off*: a real ``agentd serve --stdio`` (the mock provider) runs the built-in "run
  twenty commands" scenario (20 turns, a bash call each) 7 times with telemetry off and 7
  times exporting spans and metrics to a real OTLP/HTTP receiver in this process
  (``[telemetry] otlp_endpoint``, the SDK's default batching); the runs alternate between
  the two daemons so load on the machine hits both alike; the medians are compared
  (budget: ≤ 5 % added).
- *off*: the OpenTelemetry modules a process imported for one session and one run with no
  endpoint configured (budget: none).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentctl.client import AgentClient, spawn_stdio
from tests.bench.smoke import size
from tests.harness import isolated_env
from tests.telemetry.receiver import Receiver
from tests.test_lazy_imports import otel_modules_after_a_run

Row = tuple[str, str, str]
RUNS = size(7)
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


async def _on_and_off(receiver: Receiver) -> tuple[list[float], list[float]]:
    section = f'[telemetry]\notlp_endpoint = "{receiver.endpoint}"\n'
    off, off_id = await _daemon("")
    on, on_id = await _daemon(section)
    try:
        plain, exported = [], []
        for _ in range(RUNS):
            plain.append(await _timed(off, off_id))
            exported.append(await _timed(on, on_id))
        return plain, exported
    finally:
        await off.close()
        await on.close()


async def _rows() -> list[Row]:
    receiver = Receiver()
    try:
        plain, exported = await _on_and_off(receiver)
        spans = len(receiver.spans())
    finally:
        receiver.close()
    off, on = statistics.median(plain), statistics.median(exported)
    added = (on - off) / off * 100
    with tempfile.TemporaryDirectory(prefix="bench-telemetry-off-", dir="/tmp") as root:
        imported = otel_modules_after_a_run(Path(root), {})
    return [
        ("20-turn run, telemetry off (median)", f"{off * 1000:.0f} ms", "—"),
        ("20-turn run, exporting spans and metrics (median)", f"{on * 1000:.0f} ms", "—"),
        ("telemetry on: added to the run's wall time", f"{added:+.1f} %", "≤ 5 %"),
        ("spans received over OTLP/HTTP (before shutdown)", str(spans), "—"),
        ("telemetry off: OpenTelemetry modules imported", str(len(imported)), "0"),
    ]


def main() -> list[Row]:
    return asyncio.run(_rows())


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:56} {value:>10}   {budget}")
