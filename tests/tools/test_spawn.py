"""Child processes are waited for through a pidfd watched by the event loop."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from agentd.tools.process.spawn import Child
from tests.harness import scaled


def _child(code: str) -> Child:
    return Child(subprocess.Popen([sys.executable, "-c", code]))


async def test_wait_gives_the_exit_status_and_a_killing_signal() -> None:
    assert await _child("raise SystemExit(3)").wait() == 3
    sleeper = _child("import time; time.sleep(30)")
    assert sleeper.returncode is None
    sleeper_task = asyncio.ensure_future(sleeper.wait())
    await asyncio.sleep(0)
    subprocess.run(["kill", "-9", str(sleeper.pid)], check=True)
    assert await asyncio.wait_for(sleeper_task, scaled(10)) == -9
    assert sleeper.returncode == -9


async def test_many_waiters_and_a_cancelled_one() -> None:
    """A cancelled wait leaves the other waiters waiting; all see the same status."""
    child = _child("import time; time.sleep(30)")
    first = asyncio.ensure_future(child.wait())
    second = asyncio.ensure_future(child.wait())
    await asyncio.sleep(0)  # one loop turn: both waits have reached their await
    first.cancel()
    subprocess.run(["kill", "-TERM", str(child.pid)], check=True)
    assert await asyncio.wait_for(second, scaled(10)) == -15
    assert await child.wait() == -15
    assert first.cancelled()


async def test_the_loop_runs_while_a_child_is_waited_for() -> None:
    """Waiting holds no thread and no loop time: 50 loop turns happen while it runs."""
    child = _child("import time; time.sleep(0.5)")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while child.returncode is None:
            ticks += 1
            await asyncio.sleep(0.005)  # a loop turn of the ticker: what the test counts

    await asyncio.gather(child.wait(), tick())
    assert ticks >= 50
