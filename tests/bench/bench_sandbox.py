"""What the workspace sandbox adds to a bash call: ``true`` through the bash tool without a
sandbox, under bubblewrap (read-only mounts of the control files) in a sandbox of its own (a
session's first two calls) and in the session's sandbox host (its later calls,
:mod:`agentd.tools.process.host_pool`), and the bubblewrap probe a daemon runs once. No
budget is named for these; the table reports them.

Run: ``python -m tests.bench.bench_sandbox``.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from agentd.tools.process import host_pool, mountns
from tests.bench.smoke import size

Row = tuple[str, str, str]
CALLS = size(30, 4)
SESSIONS = size(10, 1)


async def _call_ms(ctx: ToolContext, count: int) -> list[float]:
    """The wall time of ``count`` bash ``true`` calls in one session, in order."""
    bash = build_tools()["bash"]
    times = []
    for _ in range(count):
        start = time.perf_counter()
        result = await run_tool(bash, {"command": "true"}, ctx)
        times.append((time.perf_counter() - start) * 1000)
        assert not result.is_error, result.output
    return times


def _median_call_ms(ctx: ToolContext) -> float:
    return statistics.median(asyncio.run(_call_ms(ctx, CALLS)))


def _sandboxed_ms(root: Path) -> tuple[float, float]:
    """Medians over SESSIONS sessions: a session's first two calls (a sandbox each), and its
    later ones (in the session's host, once it is up)."""

    async def sessions() -> tuple[list[float], list[float]]:
        own, hosted = [], []
        for n in range(SESSIONS):
            ctx = ToolContext(cwd=root, workspace=root, session_id=f"bench-sandboxed-{n}")
            times = await _call_ms(ctx, CALLS)
            own += times[:2]
            hosted += times[3:]  # the third may wait for the host to come up
            host_pool.retire(ctx.session_id)
        return own, hosted

    own, hosted = asyncio.run(sessions())
    return statistics.median(own), statistics.median(hosted)


def main() -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    try:
        (root / ".git" / "hooks").mkdir(parents=True)
        (root / ".agentd.toml").write_text("max_turns = 5\n")
        rows: list[Row] = []
        plain = _median_call_ms(ToolContext(cwd=root, session_id="bench-plain"))
        rows.append(("bash `true`, no sandbox (median)", f"{plain:.1f} ms", "—"))
        start = time.perf_counter()
        usable = mountns.available()
        probe = (time.perf_counter() - start) * 1000
        rows.append(("bubblewrap probe, once per daemon", f"{probe:.1f} ms", "—"))
        if usable:
            own, hosted = _sandboxed_ms(root)
            rows.append(("bash `true`, sandboxed, own bwrap (median)", f"{own:.1f} ms", "—"))
            rows.append(
                ("bash `true`, sandboxed, session's host (median)", f"{hosted:.1f} ms", "—")
            )
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:52} {value:>10} {budget}")
