"""Budgets of the ACP front-end (``agentd acp``).

* ``start → initialize``: spawn ``python -m agentd acp`` and ``python -m agentd --stdio``
  alternately, 10 times each; time from spawn to the ``initialize`` answer on stdout; medians
  and their difference (budget: ACP ≤ native + 20 ms).
* ``mapping overhead per update``: what ACP adds per agent event, in one process: decode the
  native ``session/event`` frame, map it with :class:`UpdateMapper`, encode the ACP
  ``session/update`` notification. Text deltas, and a mixed stream (tool calls with diffs and
  streamed output). CPU time of this process (load on the machine does not count), median of
  5 rounds of 20,000 events.
* ``1,000-delta reply``: a real ``agentd acp`` on pipes answers the mock LLM's ``long reply``
  (1,000 text deltas of 5 characters); the bytes of its ``session/update`` lines, per delta;
  and, to show the growth is linear, the mapped bytes for 100 and 10,000 deltas.

Run: ``python -m tests.bench.bench_acp`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

import msgspec

from agentd.acp.updates import UpdateMapper
from agentd.protocol.acp import SessionNotification
from agentd.protocol.content import TextContent
from agentd.protocol.events import (
    Event,
    MessageStart,
    MessageUpdate,
    SessionEvent,
    TextDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from agentd.protocol.tool_details import EditDetails
from tests.harness import IsolatedHome, scaled

Row = tuple[str, str, str]
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def _time_to_initialize(home: IsolatedHome, argv: list[str]) -> float:
    started = time.perf_counter()
    with subprocess.Popen(
        argv, env=home.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        answer = process.stdout.readline()
        elapsed = time.perf_counter() - started
        assert b'"result"' in answer, answer
        process.stdin.close()
        process.wait(scaled(30))
    return elapsed


def start_times(home: IsolatedHome, runs: int = 10) -> tuple[float, float]:
    """Median seconds to ``initialize`` for ``agentd acp`` and ``agentd --stdio``."""
    acp, native = [], []
    for _ in range(runs):
        acp.append(_time_to_initialize(home, [sys.executable, "-m", "agentd", "acp"]))
        native.append(_time_to_initialize(home, [sys.executable, "-m", "agentd", "--stdio"]))
    return statistics.median(acp), statistics.median(native)


def _frames(events: list[Event]) -> list[bytes]:
    encoder = msgspec.json.Encoder()
    return [
        encoder.encode(SessionEvent(session_id="s1", seq=i + 1, event=e))
        for i, e in enumerate(events)
    ]


def _text_stream(count: int) -> list[Event]:
    deltas: list[Event] = [MessageUpdate(delta=TextDelta(text="fox ")) for _ in range(count)]
    return [MessageStart(message_id="m1", role="assistant"), *deltas]


def _mixed_stream(count: int) -> list[Event]:
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    events: list[Event] = [MessageStart(message_id="m1", role="assistant")]
    while len(events) < count:
        call = f"c{len(events)}"
        events += [MessageUpdate(delta=TextDelta(text="Editing ")) for _ in range(5)]
        events.append(
            ToolExecutionStart(tool_call_id=call, name="edit", args={"path": "a.py"}, kind="edit")
        )
        events += [ToolExecutionUpdate(tool_call_id=call, output="line\n") for _ in range(3)]
        events.append(
            ToolExecutionEnd(
                tool_call_id=call,
                name="edit",
                result=[TextContent(text="Edited a.py")],
                details=EditDetails(
                    path="/p/a.py",
                    replacements=1,
                    diff=diff,
                    first_changed_line=1,
                    added=1,
                    removed=1,
                ),
            )
        )
    return events


def translate(frames: list[bytes]) -> tuple[float, int]:
    """CPU seconds per event (this process's, so other load on the machine does not count)
    and bytes out: decode the native frame → map → encode the ACP notification."""
    decoder = msgspec.json.Decoder(SessionEvent)
    encoder = msgspec.json.Encoder()
    mapper = UpdateMapper("/home/me/project")
    size = 0
    started = time.process_time()
    for frame in frames:
        native = decoder.decode(frame)
        for update in mapper.map(native.event, native.seq):
            size += len(encoder.encode(SessionNotification(session_id="s1", update=update)))
    return (time.process_time() - started) / len(frames), size


def mapping_overhead(make: Any, rounds: int = 5, count: int = 20_000) -> float:
    frames = _frames(make(count))
    return statistics.median(translate(frames)[0] for _ in range(rounds))


def long_reply_bytes(home: IsolatedHome) -> tuple[int, int]:
    """``session/update`` bytes and deltas of a real 1,000-delta reply through ``agentd acp``."""
    argv = [sys.executable, "-m", "agentd", "acp", "--provider", "mock"]
    with subprocess.Popen(
        argv,
        env=home.env,
        cwd=home.project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        session = {"cwd": str(home.project), "mcpServers": []}
        process.stdin.write(INITIALIZE)
        process.stdin.write(_request(2, "session/new", session))
        process.stdin.flush()
        answers = _read_until(process.stdout, 2)
        sid = answers[-1]["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "long reply"}]}
        process.stdin.write(_request(3, "session/prompt", prompt))
        process.stdin.flush()
        size = deltas = 0
        for line in iter(process.stdout.readline, b""):
            message = json.loads(line)
            if message.get("method") == "session/update":
                size += len(line)
                deltas += message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            if message.get("id") == 3:
                break
        process.stdin.close()
        process.wait(scaled(30))
    return size, deltas


def _request(request_id: int, method: str, params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def _read_until(stdout: Any, request_id: int) -> list[dict[str, Any]]:
    seen = []
    for line in iter(stdout.readline, b""):
        seen.append(json.loads(line))
        if seen[-1].get("id") == request_id:
            break
    return seen


def main() -> list[Row]:
    """Measure every ACP budget; returns (measure, value, budget) rows."""
    home = IsolatedHome()
    try:
        acp, native = start_times(home)
        reply_bytes, deltas = long_reply_bytes(home)
    finally:
        home.cleanup()
    text = mapping_overhead(_text_stream)
    mixed = mapping_overhead(_mixed_stream)
    small = translate(_frames(_text_stream(100)))[1]
    big = translate(_frames(_text_stream(10_000)))[1]
    return [
        ("agentd acp start → initialize answered (median of 10)", f"{acp * 1000:.0f} ms", "—"),
        ("  agentd --stdio, same runs (median of 10)", f"{native * 1000:.0f} ms", "—"),
        ("  acp − native", f"{(acp - native) * 1000:+.0f} ms", "≤ +20 ms"),
        ("ACP mapping per update (CPU): text deltas", f"{text * 1e6:.1f} µs", "≤ 20 µs"),
        (
            "ACP mapping per update (CPU): tool calls, diffs, output",
            f"{mixed * 1e6:.1f} µs",
            "≤ 20 µs",
        ),
        (
            f"1,000-delta reply through agentd acp ({deltas} chunks)",
            f"{reply_bytes / 1024:.0f} KiB, {reply_bytes / max(deltas, 1):.0f} B/delta",
            "O(n)",
        ),
        ("  mapped bytes, 10,000 ÷ 100 deltas", f"{big / small:.1f}×", "≈ 100× (linear)"),
    ]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure.ljust(width)}  {value:>24}  {budget}")
