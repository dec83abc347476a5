"""Start-up budgets of the shell client, measured as whole processes.

``python -m tests.bench.bench_agentctl`` prints the table. Each figure is the median wall time
of several runs of the real ``agentctl`` console script in an isolated sandbox (own XDG
directories), with the mock LLM, so it counts interpreter start, imports, connecting, the run
and exit.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.agentctl.harness import Sandbox

VERSION_RUNS = 15
SEND_RUNS = 7
AUTOSTART_RUNS = 5


def _agentctl() -> list[str]:
    script = Path(sys.executable).with_name("agentctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def _timed(argv: list[str], sandbox: Sandbox) -> float:
    """Milliseconds one process takes; it must succeed."""
    started = time.perf_counter()
    result = subprocess.run(
        argv,
        cwd=sandbox.project,
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        raise RuntimeError(f"{argv} failed: {result.stderr.decode(errors='replace')}")
    return elapsed


def measure_version() -> float:
    """Median ms of ``agentctl --version``."""
    sandbox = Sandbox()
    try:
        return statistics.median(
            _timed([*_agentctl(), "--version"], sandbox) for _ in range(VERSION_RUNS)
        )
    finally:
        sandbox.close()


SEND = ("send", "--provider", "mock", "how are you")


def measure_send_warm() -> float:
    """Median ms of ``agentctl send --provider mock "how are you"`` with the daemon running."""
    sandbox = Sandbox()
    try:
        _timed([*_agentctl(), "daemon", "start"], sandbox)
        _timed([*_agentctl(), *SEND], sandbox)  # the daemon's first run starts the mock LLM
        return statistics.median(_timed([*_agentctl(), *SEND], sandbox) for _ in range(SEND_RUNS))
    finally:
        sandbox.close()


def measure_send_autostart() -> float:
    """Median ms of the same send when it has to start the shared daemon first."""
    samples = []
    for _ in range(AUTOSTART_RUNS):
        sandbox = Sandbox()
        try:
            samples.append(_timed([*_agentctl(), *SEND], sandbox))
        finally:
            sandbox.close()
    return statistics.median(samples)


def main() -> list[tuple[str, str, str]]:
    """Rows of (measure, value, budget)."""
    return [
        ("agentctl --version", f"{measure_version():.0f} ms", "≤ 60 ms"),
        ("agentctl send (daemon running)", f"{measure_send_warm():.0f} ms", "≤ 200 ms"),
        ("agentctl send (daemon auto-started)", f"{measure_send_autostart():.0f} ms", "≤ 500 ms"),
    ]


def _print_table(rows: list[tuple[str, str, str]]) -> None:
    widths = [max(len(row[i]) for row in [("measure", "value", "budget"), *rows]) for i in range(3)]
    for row in [("measure", "value", "budget"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    _print_table(main())
