"""What the workspace sandbox adds to a bash call: ``true`` through the bash tool without a
sandbox, under bubblewrap (read-only mounts of the control files), and the bubblewrap probe a
daemon runs once. No budget is named for these; the table reports them.

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
from agentd.tools.process import mountns
from tests.bench.smoke import size

Row = tuple[str, str, str]
CALLS = size(30, 2)


def _median_call_ms(ctx: ToolContext) -> float:
    bash = build_tools()["bash"]

    async def calls() -> list[float]:
        times = []
        for _ in range(CALLS):
            start = time.perf_counter()
            result = await run_tool(bash, {"command": "true"}, ctx)
            times.append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result.output
        return times

    return statistics.median(asyncio.run(calls()))


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
            ctx = ToolContext(cwd=root, workspace=root, session_id="bench-sandboxed")
            boxed = _median_call_ms(ctx)
            rows.append(("bash `true`, sandboxed with bubblewrap (median)", f"{boxed:.1f} ms", "—"))
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:52} {value:>10} {budget}")
