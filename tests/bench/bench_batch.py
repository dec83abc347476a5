"""``agentctl batch`` with the local engine: throughput and memory over a whole batch.

``python -m tests.bench batch`` runs the real ``agentctl batch`` on TASKS tasks (200) against
the mock LLM, each task five ``bash`` tool turns in its own git worktree plus a check
command, and reports:

- tool turns per second across the whole batch (worktrees, sessions, checks, diffs and
  artifacts included): TASKS x 5 / the batch's wall time;
- the CPU time per tool turn of the driver and the daemon, their child processes (git, the
  checks, the sandboxed shells) included: what the turns/s would be on two idle cores;
- the whole machine's busy CPU time per tool turn over the batch (``/proc/stat``: hosts and
  shells not yet reaped, and the kernel's work, counted too) and how many cores were busy;
- the growth of the driver's (``agentctl batch``) and the shared daemon's resident memory
  from the moment 20 tasks are done to the moment 200 are (sampled from ``/proc``);
- the Ray engine's overhead per task over the local engine (:mod:`tests.bench.batch_ray`;
  skipped in a smoke run).

The daemon is started (and its mock LLM warmed) before the clock starts. Numbers from a
loaded machine: the ``uptime`` load is printed beside them.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.batch.harness import FIVE, BatchBox
from tests.bench import batch_ray
from tests.bench.smoke import size
from tests.harness import scaled

TASKS = size(200, 4)
EARLY = size(20, 1)
CONCURRENCY = int(os.environ.get("AGENTD_BENCH_BATCH_CONCURRENCY", "8"))
TURNS_PER_TASK = 5


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _cpu_s(pid: int | None) -> float:
    """User + system time of ``pid`` and its waited-for children, in seconds."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """The whole machine's busy CPU time so far (``/proc/stat``: every process, waited for or
    not, and the kernel's own threads), in seconds."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _done(results: Path) -> int:
    try:
        return results.read_bytes().count(b"\n")
    except OSError:
        return 0


class _Run:
    """One timed batch and the memory samples taken while it ran."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.driver: dict[str, int] = {}
        self.daemon: dict[str, int] = {}
        self.passed = 0
        self.cpu = 0.0
        self.machine_cpu = 0.0


def _sample(run: _Run, key: str, driver: int, daemon: int | None) -> None:
    for store, pid in ((run.driver, driver), (run.daemon, daemon)):
        value = _rss_kib(pid) if pid else None
        if value is not None:
            store[key] = value


def measure() -> _Run:
    box = BatchBox()
    run = _Run()
    try:
        box.env.pop("PYTHONDONTWRITEBYTECODE", None)
        box.write_tasks([box.task("warm", FIVE)])
        warm = box.run("batch", str(box.tasks), "--out", str(box.root / "warm"), timeout=120)
        if warm.returncode != 0:
            raise RuntimeError(f"warm-up failed: {warm.stdout} {warm.stderr}")
        daemon = box.daemon_pid()
        box.write_tasks(
            [box.task(f"t{n:03d}", FIVE, check="test $(wc -l < log.txt) -eq 5")
             for n in range(TASKS)]
        )  # fmt: skip
        results = box.out / "results.jsonl"
        daemon_cpu, before, machine = _cpu_s(daemon), os.times(), _machine_busy_s()
        stderr = (box.root / "batch.stderr").open("wb")
        started = time.perf_counter()
        process = subprocess.Popen(
            [*box.command("batch", str(box.tasks), "--out", str(box.out)),
             "--concurrency", str(CONCURRENCY)],
            cwd=box.project, env=box.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
        deadline = time.monotonic() + scaled(600)
        while process.poll() is None and time.monotonic() < deadline:
            done = _done(results)
            if done >= EARLY and "early" not in run.driver:
                _sample(run, "early", process.pid, daemon)
            if done >= TASKS - 1 or "early" in run.driver:
                _sample(run, "late", process.pid, daemon)
            time.sleep(0.02)
        code = process.wait(timeout=scaled(60))
        stderr.close()
        run.wall = time.perf_counter() - started
        run.machine_cpu = _machine_busy_s() - machine
        after = os.times()
        children = after.children_user + after.children_system
        run.cpu = _cpu_s(daemon) - daemon_cpu + children - before.children_user
        run.cpu -= before.children_system
        if code != 0:
            tail = (box.root / "batch.stderr").read_text()[-2000:]
            raise RuntimeError(f"batch exited {code}: {tail}")
        run.passed = sum(1 for _ in results.read_text().splitlines())
    finally:
        box.close()
    return run


def main() -> list[tuple[str, str, str]]:
    """Rows of (measure, value, budget)."""
    load = os.getloadavg()[0]
    run = measure()
    turns = TASKS * TURNS_PER_TASK / run.wall
    rows = [
        (f"batch: {TASKS} tasks × 5 bash turns, concurrency {CONCURRENCY} (load {load:.1f})",
         f"{turns:.0f} turns/s ({run.wall:.1f} s)", "≥ 100 turns/s"),
    ]  # fmt: skip
    for name, samples in (("driver", run.driver), ("daemon", run.daemon)):
        early, late = samples.get("early"), samples.get("late")
        growth = "—" if early is None or late is None else f"{(late - early) / 1024:+.1f} MiB"
        rows.append((f"batch: {name} RSS growth {EARLY} → {TASKS} tasks", growth, "≤ 10 MiB"))
    per_turn = run.cpu / (TASKS * TURNS_PER_TASK) * 1000
    capacity = f"{per_turn:.1f} ms (≈ {2000 / per_turn:.0f} turns/s on 2 idle cores)"
    rows.insert(1, ("batch: CPU per tool turn (driver + daemon + children)", capacity, "—"))
    machine = run.machine_cpu / (TASKS * TURNS_PER_TASK) * 1000
    cores = run.machine_cpu / run.wall
    rows.insert(
        2,
        (
            "batch: whole machine's CPU per tool turn (/proc/stat, kernel included)",
            f"{machine:.1f} ms ({cores:.2f} of {os.cpu_count()} cores busy)",
            "—",
        ),
    )
    return rows + batch_ray.rows()


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
