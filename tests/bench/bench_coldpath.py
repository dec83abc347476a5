"""The cold path, against the interpreter's own floor.

The floor is ``python -c "import asyncio, msgspec"`` in the same venv: what any asyncio +
msgspec process pays before doing anything. Each row is a median of whole-process runs and its
ratio to the median of floor runs taken alternately with them (which makes the rows
comparable across machines, and keeps the ratio honest on a busy one):

* ``agentd --stdio``: spawn → ``initialize`` answered (the agent, tools, providers and the
  store are not imported for it);
* ``agentctl send --stdio --provider mock``: the whole process — a private daemon, a session,
  a one-turn reply, exit;
* the same with 20 bash tool turns (the mock's ``run twenty commands`` scenario);
* both again with the OpenAI-compatible provider talking HTTP to a local server, the way a
  user runs it against Ollama, vLLM or LiteLLM: a standalone ``agentd mock-llm`` process
  (started once, outside the timings) configured as ``[providers.local]`` with its
  ``http://127.0.0.1:PORT/v1`` base URL. This is the path the in-process mock skips: the shared
  HTTP client, the connection and the SSE parsing.

Every ``agentctl`` row is timed the way ``$(agentctl send …)`` waits: until the process has
exited *and* both of its output pipes have closed (EOF), so a daemon or tool process left
holding them would be counted.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.agentctl.harness import Sandbox
from tests.bench.smoke import size
from tests.harness import scaled, wait_until

RUNS = size(7)
FLOOR = [sys.executable, "-c", "import asyncio, msgspec"]
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'


def _agentctl() -> list[str]:
    script = Path(sys.executable).with_name("agentctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def _run(argv: list[str], sandbox: Sandbox) -> float:
    """Seconds one successful process takes, until it has exited and its stdout and stderr
    pipes are closed (``communicate`` reads both to EOF, whoever holds them)."""
    started = time.perf_counter()
    with subprocess.Popen(
        argv,
        cwd=sandbox.project,
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        _, err = process.communicate(timeout=scaled(120))
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{argv} failed: {err.decode(errors='replace')[-2000:]}")
    return elapsed


class LocalServer:
    """A standalone ``agentd mock-llm`` on a free port, configured in the sandbox's user
    config file as the OpenAI-compatible provider ``local`` (as a user configures Ollama)."""

    def __init__(self, sandbox: Sandbox) -> None:
        argv = [sys.executable, "-m", "agentd", "mock-llm", "--port", "0"]
        self.log = sandbox.root / "mock-llm.log"
        with self.log.open("wb") as log:  # a file, not a pipe nobody reads
            self.process = subprocess.Popen(
                argv, env=sandbox.env, stdin=subprocess.DEVNULL, stderr=log
            )

        def url() -> str | None:
            if self.process.poll() is not None:
                raise RuntimeError(f"mock-llm exited: {self.log.read_text()}")
            match = re.search(r"(http://127\.0\.0\.1:\d+/v1)", self.log.read_text())
            return match.group(1) if match else None

        try:
            base_url = wait_until(url, 30, "mock-llm to print its URL")
        except BaseException:
            self.close()
            raise
        sandbox.user_config(  # the tests' run mode kept: bash runs without asking
            f'[providers.local]\napi = "openai"\nbase_url = "{base_url}"\nmodels = ["mock-model"]\n'
        )

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(scaled(15))


def _paired(
    measure: Callable[[], float], floor: Callable[[], float], runs: int
) -> tuple[float, float]:
    """Medians of ``measure`` and of ``floor``, run alternately (after one warm-up each), so
    that a busy machine slows both alike and the ratio stays meaningful."""
    measure()
    floor()
    mine: list[float] = []
    base: list[float] = []
    for _ in range(runs):
        base.append(floor())
        mine.append(measure())
    return statistics.median(mine), statistics.median(base)


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
        process.wait(scaled(30))
    return elapsed


def main() -> list[tuple[str, str, str]]:
    """Rows of (measure, value, budget)."""
    sandbox = Sandbox()
    sandbox.env.pop("PYTHONDONTWRITEBYTECODE", None)
    server = LocalServer(sandbox)
    send = [*_agentctl(), "send", "--stdio", "--provider", "mock"]
    http = [*_agentctl(), "send", "--stdio", "--provider", "local"]
    rows: list[tuple[str, Callable[[], float], str, int]] = [
        ("agentd --stdio: start → initialize answered", lambda: _initialize(sandbox), "1.3", RUNS),
        (
            "agentctl send --stdio, one-turn reply (whole process)",
            lambda: _run([*send, "how are you"], sandbox),
            "3",
            RUNS,
        ),
        (
            "agentctl send --stdio, 20 bash tool turns",
            lambda: _run([*send, "run twenty commands"], sandbox),
            "4.5",
            size(5),
        ),
        (
            "… one-turn reply, OpenAI-compatible over HTTP",
            lambda: _run([*http, "how are you"], sandbox),
            "3",
            RUNS,
        ),
        (
            "… 20 bash tool turns, OpenAI-compatible over HTTP",
            lambda: _run([*http, "run twenty commands"], sandbox),
            "4.5",
            size(5),
        ),
    ]
    table: list[tuple[str, str, str]] = []
    floors: list[float] = []
    try:
        for name, measure, budget, runs in rows:
            seconds, floor = _paired(measure, lambda: _run(FLOOR, sandbox), runs)
            floors.append(floor)
            value = f"{seconds * 1000:.0f} ms = {seconds / floor:.2f}× floor"
            table.append((name, value, f"≤ {budget}× floor"))
    finally:
        server.close()
        sandbox.close()
    floor_row = (
        "floor: python -c 'import asyncio, msgspec'",
        f"{statistics.median(floors) * 1000:.0f} ms",
        "—",
    )
    return [floor_row, *table]


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:<55}  {value:>26}  {budget}")
