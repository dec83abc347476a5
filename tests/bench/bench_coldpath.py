"""The cold path, against the interpreter's own floor.

The floor is ``python -c "import asyncio, msgspec"`` in the same venv: what any asyncio +
msgspec process pays before doing anything. Each row is a median of whole-process runs and its
ratio to that floor (which makes the rows comparable across machines):

* ``agentd --stdio``: spawn → ``initialize`` answered (the agent, tools, providers and the
  store are not imported for it);
* ``agentctl send --stdio --provider mock``: the whole process — a private daemon, a session,
  a one-turn reply, exit;
* the same with 20 bash tool turns (the mock's ``run twenty commands`` scenario).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.agentctl.harness import Sandbox

RUNS = 7
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'


def _agentctl() -> list[str]:
    script = Path(sys.executable).with_name("agentctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def _run(argv: list[str], sandbox: Sandbox) -> float:
    """Seconds one successful process takes."""
    started = time.perf_counter()
    result = subprocess.run(
        argv, cwd=sandbox.project, env=sandbox.env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{argv} failed: {result.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def _median(measure: object, runs: int = RUNS) -> float:
    assert callable(measure)
    measure()  # warm the page cache and the bytecode
    return statistics.median(measure() for _ in range(runs))


def _initialize(sandbox: Sandbox) -> float:
    """Seconds from spawning ``agentd --stdio`` to its ``initialize`` answer."""
    started = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-m", "agentd", "--stdio"],
        env=sandbox.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        answer = process.stdout.readline()
        elapsed = time.perf_counter() - started
        assert b'"result"' in answer, answer
        process.stdin.close()
        process.wait(30)
    return elapsed


def main() -> list[tuple[str, str, str]]:
    """Rows of (measure, value, budget)."""
    sandbox = Sandbox()
    sandbox.env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        floor = _median(lambda: _run([sys.executable, "-c", "import asyncio, msgspec"], sandbox))
        start = _median(lambda: _initialize(sandbox))
        send = [*_agentctl(), "send", "--stdio", "--provider", "mock"]
        one = _median(lambda: _run([*send, "how are you"], sandbox))
        twenty = _median(lambda: _run([*send, "run twenty commands"], sandbox), runs=3)
    finally:
        sandbox.close()

    def row(name: str, seconds: float, budget: str) -> tuple[str, str, str]:
        return (name, f"{seconds * 1000:.0f} ms = {seconds / floor:.2f}× floor", budget)

    return [
        ("floor: python -c 'import asyncio, msgspec'", f"{floor * 1000:.0f} ms", "—"),
        row("agentd --stdio: start → initialize answered", start, "≤ 1.3× floor"),
        row("agentctl send --stdio, one-turn reply (whole process)", one, "≤ 3× floor"),
        row("agentctl send --stdio, 20 bash tool turns", twenty, "≤ 4.5× floor"),
    ]


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:<55}  {value:>26}  {budget}")
