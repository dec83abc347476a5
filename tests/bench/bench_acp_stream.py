"""Budget: a long streamed reply reaches an ACP client about as fast as a native client.

A 5,000-delta reply (the mock LLM, ``chunk_size`` 4: one delta per word) is asked of a real
``agentd acp --provider mock`` (ACP on pipes) and of a real ``agentd --stdio`` (agentd's own
protocol on pipes), each one process kept for every run, the runs interleaved (ACP, native,
ACP, …) on fresh sessions. Each run is timed from the ``session/prompt`` request written to
its answer read, the client reading and decoding every line on the way (as a real client
does). Medians of 7 runs each, and their ratio (budget: ACP at most 1.1 times native).

Run: ``python -m tests.bench.bench_acp_stream`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.bench.smoke import size
from tests.harness import IsolatedHome, scaled

Row = tuple[str, str, str]
DELTAS = size(5_000, 50)
RUNS = size(7)
TRIGGER = "stream five thousand"


def _scenarios(path: Path) -> Path:
    """A scenario file whose reply is ``DELTAS`` words, one delta each."""
    reply = {"content": "fox ", "content_repeat": DELTAS}
    scenario = {"name": "long", "trigger": TRIGGER, "steps": [{"response": reply, "chunk_size": 4}]}
    path.write_text(json.dumps({"scenarios": [scenario], "default_response": {"content": "ok"}}))
    return path


class Peer:
    """One agentd process on pipes, spoken to in NDJSON JSON-RPC."""

    def __init__(self, argv: list[str], home: IsolatedHome, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv,
            env=env,
            cwd=home.project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._next = 0

    def send(self, method: str, params: Any) -> int:
        assert self.process.stdin is not None
        self._next += 1
        message = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return self._next

    def answer(self, request_id: int) -> tuple[Any, int]:
        """The result of ``request_id`` and how many notifications came before it."""
        assert self.process.stdout is not None
        for notes, line in enumerate(iter(self.process.stdout.readline, b"")):
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"], notes
        raise RuntimeError("the process closed its stdout")

    def call(self, method: str, params: Any) -> Any:
        return self.answer(self.send(method, params))[0]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(scaled(30))


def _acp_run(peer: Peer, cwd: str) -> tuple[float, int]:
    session = peer.call("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": TRIGGER}]}
    started = time.perf_counter()
    result, notes = peer.answer(peer.send("session/prompt", prompt))
    elapsed = time.perf_counter() - started
    assert result["stopReason"] == "end_turn", result
    return elapsed, notes


def _native_run(peer: Peer, cwd: str) -> tuple[float, int]:
    session = peer.call("session/new", {"cwd": cwd, "provider": "mock"})["sessionId"]
    started = time.perf_counter()
    result, notes = peer.answer(
        peer.send("session/prompt", {"sessionId": session, "text": TRIGGER})
    )
    elapsed = time.perf_counter() - started
    assert result["stopReason"] == "end_turn", result
    return elapsed, notes


def measure(runs: int = RUNS) -> tuple[float, float, int, int]:
    """Median seconds (ACP, native) and the messages each client read per reply."""
    home = IsolatedHome()
    env = home.env | {"AGENTD_MOCK_SCENARIOS": str(_scenarios(home.root / "long.json"))}
    python = [sys.executable, "-m", "agentd"]
    acp = Peer([*python, "acp", "--provider", "mock"], home, env)
    native = Peer([*python, "--stdio"], home, env)
    try:
        acp.call("initialize", {"protocolVersion": 1})
        native.call("initialize", {"protocolVersion": 1})
        cwd = str(home.project)
        _acp_run(acp, cwd), _native_run(native, cwd)  # warm-up: imports, first session
        acp_times, native_times = [], []
        acp_notes = native_notes = 0
        for _ in range(runs):
            elapsed, acp_notes = _acp_run(acp, cwd)
            acp_times.append(elapsed)
            elapsed, native_notes = _native_run(native, cwd)
            native_times.append(elapsed)
    finally:
        acp.close()
        native.close()
        home.cleanup()
    return statistics.median(acp_times), statistics.median(native_times), acp_notes, native_notes


def main() -> list[Row]:
    """The budget rows: (measure, value, budget)."""
    acp, native, acp_notes, native_notes = measure()
    return [
        (
            f"{DELTAS:,}-delta reply to an ACP client ({acp_notes} updates, median of {RUNS})",
            f"{acp * 1000:.0f} ms",
            "—",
        ),
        (
            f"  same reply to a native --stdio client ({native_notes} events)",
            f"{native * 1000:.0f} ms",
            "—",
        ),
        ("  ACP ÷ native", f"{acp / native:.2f}×", "≤ 1.1×"),
    ]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure_name, value, budget in rows:
        print(f"{measure_name.ljust(width)}  {value:>10}  {budget}")
