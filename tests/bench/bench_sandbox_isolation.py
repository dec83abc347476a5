"""What keeping a sandboxed command off the daemon costs per bash call: its own process
namespace and ``/proc``, its own network namespace, the daemon's control folders under
tmpfs, every git dir read-only, and the seccomp program (one pipe per call) — against the
bubblewrap command line a call had before (read-only root, the control files bound
read-only, nothing else). Both run ``true`` through the same shell runner in pairs (the order
switching every pair), and the extra cost is the median of the pairs' differences: on a
loaded machine one call's time swings by more than the difference, and a pair sees the same
load. The same pairing of the earlier line with itself shows the noise left. The daemon-side
work of a call (building the command line, the seccomp pipe, the ``.git`` snapshot and check)
is timed apart and added. Budget: ≤ 5 ms over the earlier command line.

Run: ``python -m tests.bench.bench_sandbox_isolation``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentd.tools.base import ToolContext
from agentd.tools.bash import confinement
from agentd.tools.files.truncate import Limits
from agentd.tools.process import mountns
from agentd.tools.process.gitdirs import restore, snapshot
from agentd.tools.process.output import OutputCapture
from agentd.tools.process.shell import run_shell
from tests.bench.smoke import size

Row = tuple[str, str, str]
CALLS = size(60, 2)
BUDGET_MS = 5.0


def _before(root: Path, tmp: Path) -> list[str]:
    """The bubblewrap prefix a sandboxed call ran under before these protections."""
    program = mountns.bwrap_path()
    assert program is not None
    args = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--cap-drop", "ALL"]
    args += ["--die-with-parent", "--bind", str(root), str(root), "--bind", str(tmp), str(tmp)]
    for path in mountns.control_paths(root):
        args += ["--ro-bind", str(path), str(path)]
    return [*args, "--"]


async def _one(root: Path, wrapper: list[str], fds: list[int]) -> float:
    capture = OutputCapture(Limits.from_settings(ToolContext(cwd=root).settings), None, 1, 1 << 20)
    start = time.perf_counter()
    outcome = await run_shell(
        "true", cwd=root, env={"PATH": os.defpath}, timeout=30, capture=capture,
        on_output=lambda _: None, wrapper=wrapper, pass_fds=fds,
    )  # fmt: skip
    elapsed = (time.perf_counter() - start) * 1000
    for fd in fds:
        os.close(fd)
    assert outcome.exit_code == 0, outcome
    return elapsed


def _daemon_side_ms(ctx: ToolContext) -> float:
    """The median time of what the bash tool now does around each sandboxed call."""
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        _, wrapper, fds = confinement(ctx, {})
        restore(snapshot(ctx.cwd))
        times.append((time.perf_counter() - start) * 1000)
        for fd in fds:
            os.close(fd)
        assert wrapper
    return statistics.median(times)


def main() -> list[Row]:
    if not mountns.available():
        return [("sandbox isolation (bubblewrap cannot run here)", "skipped", "—")]
    root = Path(tempfile.mkdtemp(prefix="bench-iso-"))
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".agentd.toml").write_text("max_turns = 5\n")
        ctx = ToolContext(cwd=root, workspace=root, session_id="bench-isolation")
        _, now_wrapper, fds = confinement(ctx, {})
        for fd in fds:
            os.close(fd)
        tmp = Path(now_wrapper[now_wrapper.index("--bind", now_wrapper.index(str(root))) + 1])
        old = _before(root, tmp)
        before, after, diff = _pairs(root, old, lambda: confinement(ctx, {})[1:])
        _, _, noise = _pairs(root, old, lambda: (old, []))
        side = _daemon_side_ms(ctx)
        return [
            ("bash `true` under the earlier bubblewrap line (median)", f"{before:.1f} ms", "—"),
            ("bash `true` under pid+net ns, tmpfs, seccomp (median)", f"{after:.1f} ms", "—"),
            ("noise: the earlier line paired with itself (median diff)", f"{noise:+.1f} ms", "—"),
            ("daemon side per call: command line, seccomp pipe, .git check", f"{side:.2f} ms", "—"),
            (
                "extra cost per sandboxed bash call (median paired diff + daemon side)",
                f"{diff + side:.1f} ms",
                f"≤ {BUDGET_MS:g} ms",
            ),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _pairs(
    root: Path, old: list[str], new: Callable[[], tuple[list[str], list[int]]]
) -> tuple[float, float, float]:
    """Median ms of a call under ``old`` and under ``new()`` (a wrapper and the descriptors
    it reads), and the median of the pairs' differences (new - old)."""

    async def calls() -> tuple[list[float], list[float]]:
        olds, news = [], []
        for index in range(CALLS):
            wrapper, fds = new()
            if index % 2:
                news.append(await _one(root, wrapper, fds))
                olds.append(await _one(root, old, []))
            else:
                olds.append(await _one(root, old, []))
                news.append(await _one(root, wrapper, fds))
        return olds, news

    olds, news = asyncio.run(calls())
    diffs = [b - a for a, b in zip(olds, news, strict=True)]
    return statistics.median(olds), statistics.median(news), statistics.median(diffs)


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:64} {value:>10} {budget}")
