"""``agentctl batch`` on a real pseudo-terminal: the live line, then a line per task."""

from __future__ import annotations

import sys

import pexpect

from tests.batch.harness import EDIT, LOOK, PASSES, BatchBox
from tests.harness import scaled


def test_the_live_line_and_a_line_per_finished_task(box: BatchBox) -> None:
    box.write_tasks([box.task("edit", EDIT, check=PASSES), box.task("miss", LOOK, check="false")])
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentctl", "batch", str(box.tasks), "--out", str(box.out), "--concurrency", "1"],
        cwd=str(box.project),
        env=dict(box.env, TERM="xterm"),
        encoding="utf-8",
        timeout=scaled(60),
        dimensions=(40, 200),
    )
    child.expect_exact("done 0 · running 1 · failed 0 · queued 1 · pass – · $0.0000 · ETA –")
    child.expect_exact("✓ edit passed turns=2 check=0")
    child.expect_exact("done 1 · running")
    child.expect_exact("✗ miss failed turns=1 check=1")
    child.expect_exact("agentctl batch: 1 failed, 1 passed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
