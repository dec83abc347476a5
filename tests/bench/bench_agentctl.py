"""Start-up budgets of the shell client, measured as whole processes.

``python -m tests.bench.bench_agentctl`` prints the table. Each figure is the wall time of
whole runs of the real ``agentctl`` console script in an isolated sandbox (own XDG directories)
with the mock LLM, so it counts interpreter start, imports, connecting, the run and exit:
the median, and in brackets the fastest run (the best estimate on a busy machine).

Bytecode caching is left on (``PYTHONDONTWRITEBYTECODE`` is dropped for these processes), as
in any installed copy; the first, unmeasured run of each kind fills the cache.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.agentctl.harness import Sandbox
from tests.bench.smoke import size
from tests.harness import scaled

VERSION_RUNS = size(15)
SEND_RUNS = size(7)
AUTOSTART_RUNS = size(5)


def _agentctl() -> list[str]:
    script = Path(sys.executable).with_name("agentctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def _sandbox() -> Sandbox:
    sandbox = Sandbox()
    sandbox.env.pop("PYTHONDONTWRITEBYTECODE", None)
    return sandbox


def _summary(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} ms ({min(samples):.0f})"


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


def measure_version() -> list[float]:
    """ms of ``agentctl --version`` runs."""
    sandbox = _sandbox()
    try:
        _timed([*_agentctl(), "--version"], sandbox)
        return [_timed([*_agentctl(), "--version"], sandbox) for _ in range(VERSION_RUNS)]
    finally:
        sandbox.close()


SEND = ("send", "--provider", "mock", "how are you")


def measure_send_warm() -> list[float]:
    """ms of ``agentctl send --provider mock "how are you"`` runs with the daemon running."""
    sandbox = _sandbox()
    try:
        _timed([*_agentctl(), "daemon", "start"], sandbox)
        _timed([*_agentctl(), *SEND], sandbox)  # the daemon's first run starts the mock LLM
        return [_timed([*_agentctl(), *SEND], sandbox) for _ in range(SEND_RUNS)]
    finally:
        sandbox.close()


def measure_send_tty() -> list[float]:
    """ms of the warm send on a colour pseudo-terminal, where the reply is rendered as
    Markdown (rich is imported then, and only then)."""
    import pexpect

    sandbox = _sandbox()
    try:
        _timed([*_agentctl(), "daemon", "start"], sandbox)
        _timed([*_agentctl(), *SEND], sandbox)
        samples = []
        for _ in range(SEND_RUNS):
            started = time.perf_counter()
            argv = _agentctl()
            child = pexpect.spawn(
                argv[0],
                [*argv[1:], *SEND],
                cwd=str(sandbox.project),
                env=dict(sandbox.env, TERM="xterm"),
                timeout=scaled(30),
            )
            child.expect(pexpect.EOF)
            child.close()
            samples.append((time.perf_counter() - started) * 1000)
        return samples
    finally:
        sandbox.close()


def measure_send_autostart() -> list[float]:
    """ms of the same send when it has to start the shared daemon first."""
    samples = []
    for _ in range(AUTOSTART_RUNS + 1):
        sandbox = _sandbox()
        try:
            samples.append(_timed([*_agentctl(), *SEND], sandbox))
        finally:
            sandbox.close()
    return samples[1:]


def main() -> list[tuple[str, str, str]]:
    """Rows of (measure, value, budget)."""
    return [
        ("agentctl --version", _summary(measure_version()), "≤ 60 ms"),
        ("agentctl send (daemon running)", _summary(measure_send_warm()), "≤ 200 ms"),
        ("agentctl send on a terminal (Markdown)", _summary(measure_send_tty()), "—"),
        ("agentctl send (daemon auto-started)", _summary(measure_send_autostart()), "≤ 500 ms"),
    ]


def _print_table(rows: list[tuple[str, str, str]]) -> None:
    widths = [max(len(row[i]) for row in [("measure", "value", "budget"), *rows]) for i in range(3)]
    for row in [("measure", "value", "budget"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    _print_table(main())
