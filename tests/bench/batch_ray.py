"""The Ray rows of ``bench_batch``: the Ray engine's overhead per task over the local engine.

TASKS tasks (one mock turn each, in a git worktree, no check) run one at a time
(``--concurrency 1``) with the local engine and with ``--engine ray`` on a one-node Ray
cluster on this machine (inside a private network namespace, :mod:`tests.batch.netns`),
``--json`` read as it comes. An engine's cost per task is the median time between two
consecutive ``task_end`` lines, which leaves out what a batch pays once (the driver joining
the cluster, Ray starting the job's worker process and its daemon); the overhead per task
is Ray's median minus local's. The rest of the difference in wall time is the second row,
the fixed cost per batch. The cluster's start-up and a warm-up batch on each engine come
before the clocks start. Skipped in a smoke run (a cluster takes tens of seconds to start)
and where no network namespace can be made.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time

from tests.batch import netns
from tests.batch.harness import LOOK, BatchBox
from tests.batch.ray_cluster import RayCluster
from tests.bench.smoke import enabled
from tests.harness import REPO, scaled

TASKS = 25
BUDGET = "≤ 300 ms"
MEASURE = f"batch: Ray engine overhead per task over local ({TASKS} tasks, one at a time)"
FIXED = "batch: Ray engine fixed cost per batch over local (joining the cluster, the worker)"


class _Timing:
    """One batch's wall time and the moments its ``task_end`` lines arrived."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.ends: list[float] = []

    @property
    def per_task(self) -> float:
        gaps = sorted(b - a for a, b in itertools.pairwise(self.ends))
        return gaps[len(gaps) // 2] if gaps else 0.0


def _timed(command: list[str], box: BatchBox, network: netns.PrivateNetwork | None) -> _Timing:
    timing = _Timing()
    argv = command if network is None else network.command(command)
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=box.project, env=box.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith('{"type":"task_end"'):
            timing.ends.append(time.perf_counter())
    _, stderr = process.communicate(timeout=scaled(300))
    timing.wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"batch exited {process.returncode}: {stderr[-2000:]}")
    return timing


def _batch(box: BatchBox, name: str, count: int, *extra: str) -> list[str]:
    tasks = box.root / f"{name}.jsonl"
    box.tasks = tasks
    box.write_tasks([box.task(f"{name}-{n:02d}", LOOK) for n in range(count)])
    out = box.root / name
    return [sys.executable, "-m", "agentctl", "batch", str(tasks), "--out", str(out),
            "--concurrency", "1", "--json", *extra]  # fmt: skip


def measure() -> tuple[_Timing, _Timing]:
    """The local and the Ray batch of :data:`TASKS` tasks."""
    box = BatchBox()
    network = netns.PrivateNetwork()
    try:
        box.env["PYTHONPATH"] = ":".join(str(REPO / p) for p in ("daemon", "clients", "."))
        cluster = RayCluster(network, box.root, box.env)
        cluster.start_head(num_cpus=1, resources={"batch": 1})
        ray = ["--engine", "ray", "--address", cluster.address,
               "--ray-work-dir", str(box.root / "nodes")]  # fmt: skip
        _timed(_batch(box, "warm-local", 2), box, None)
        _timed(_batch(box, "warm-ray", 2, *ray), box, network)
        local = _timed(_batch(box, "local", TASKS), box, None)
        remote = _timed(_batch(box, "ray", TASKS, *ray), box, network)
        cluster.stop()
        return local, remote
    finally:
        network.close()
        box.close()


def rows() -> list[tuple[str, str, str]]:
    """The Ray rows (one: the overhead per task; or why it was skipped)."""
    if enabled():
        return [(MEASURE, "skipped in smoke (a Ray cluster takes tens of seconds)", BUDGET)]
    reason = netns.unavailable()
    if reason is not None:
        return [(MEASURE, f"skipped: {reason}", BUDGET)]
    local, remote = measure()
    per_task = remote.per_task - local.per_task
    fixed = (remote.wall - local.wall) - TASKS * per_task
    value = (
        f"{per_task * 1000:+.0f} ms (a task: local {local.per_task * 1000:.0f} ms, "
        f"ray {remote.per_task * 1000:.0f} ms)"
    )
    return [(MEASURE, value, BUDGET), (FIXED, f"{fixed:+.1f} s", "—")]
