"""Telemetry budgets: what OpenTelemetry export adds to a 20-turn run, and what it costs off.

``python -m tests.bench.bench_telemetry`` prints the table.

- *on vs off*: a real ``agentd serve --stdio`` (the mock provider) runs the built-in "run
  twenty commands" scenario (20 turns, a bash call each) 11 times with telemetry off and 11
  times exporting spans and metrics to a real OTLP/HTTP receiver in a process of its own
  (``[telemetry] otlp_endpoint``, the SDK's default batching); the runs alternate between
  the two daemons (ABBA, so drift in the machine's load hits both alike) and the medians are
  compared (budget: ≤ 5 % added).
- *recording cost*: the same 20 turns' events (a model call with 5 deltas, a bash call)
  handed to the OpenTelemetry observer in this process, the SDK batching spans for an
  exporter that drops them: the CPU the daemon's event loop spends on telemetry per run,
  median of 21 (the end-to-end medians above swing by more than 5 % on a loaded machine; this
  one is what telemetry adds to them).
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
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agentctl.client import AgentClient, spawn_stdio
from agentd.protocol.content import AssistantMessage, TextContent, Usage
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TextDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
)
from agentd.telemetry.scope import RunScope
from agentd.telemetry.spans import SpanObserver
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


class _Dropped(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _twenty_turns() -> list[Event]:
    """The events of a 20-turn run that observers look at (and the deltas they skip)."""
    usage = Usage(input_tokens=900, output_tokens=40)
    events: list[Event] = [AgentStart()]
    for turn in range(1, 21):
        reply = AssistantMessage(
            id=f"m{turn}", content=[TextContent(text="ok")], provider="mock",
            model="mock-model", usage=usage, stop_reason="tool_use",
        )  # fmt: skip
        events += [TurnStart(turn=turn), MessageStart(message_id=reply.id, role="assistant")]
        events += [MessageUpdate(delta=TextDelta(text="word ")) for _ in range(5)]
        events += [
            MessageEnd(message=reply),
            ToolExecutionStart(tool_call_id=f"c{turn}", name="bash", args={"command": "ls"}),
            ToolExecutionEnd(tool_call_id=f"c{turn}", name="bash", result=[TextContent(text="x")]),
            TurnEnd(turn=turn, stop_reason="tool_use"),
        ]
    return [*events, AgentEnd(stop_reason="end_turn", turns=20)]


def _recording_seconds() -> float:
    """Median seconds to record one 20-turn run's events as spans and metrics."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(_Dropped()))
    meter_provider = MeterProvider()
    observer = SpanObserver(tracer_provider.get_tracer("bench"), meter_provider.get_meter("bench"))
    scope = RunScope("bench")
    scope.run_starts("mock", "mock-model", None)
    events, times = _twenty_turns(), []
    for _ in range(size(21, 2)):
        start = time.perf_counter()
        for event in events:
            observer.observe(scope, event)
        times.append(time.perf_counter() - start)
    tracer_provider.shutdown()
    meter_provider.shutdown()
    return statistics.median(times)


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
    recording = _recording_seconds()
    with tempfile.TemporaryDirectory(prefix="bench-telemetry-off-", dir="/tmp") as root:
        imported = otel_modules_after_a_run(Path(root), {})
    return [
        ("20-turn run, telemetry off (median)", f"{off * 1000:.0f} ms", "—"),
        ("20-turn run, exporting spans and metrics (median)", f"{on * 1000:.0f} ms", "—"),
        ("telemetry on: added to the run's wall time", f"{added:+.1f} %", "≤ 5 %"),
        ("spans received over OTLP/HTTP", str(spans), "—"),
        (
            "recording a 20-turn run's spans and metrics (in process)",
            f"{recording * 1000:.1f} ms = {recording / off * 100:.1f} % of the run",
            "≤ 5 %",
        ),
        ("telemetry off: OpenTelemetry modules imported", str(len(imported)), "0"),
    ]


def main() -> list[Row]:
    return asyncio.run(_rows())


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:56} {value:>10}   {budget}")
