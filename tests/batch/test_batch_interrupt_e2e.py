"""Ctrl-C in the middle of a batch: a real SIGINT to a real ``agentctl batch`` process."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from agentctl.batch.runner import plan_batch
from tests.agentctl.harness import read_until
from tests.batch.harness import LOOK, SLOW, BatchBox
from tests.harness import scaled


def test_ctrl_c_cancels_the_running_tasks_and_writes_nothing_by_halves(box: BatchBox) -> None:
    tasks = [box.task(f"look-{n}", LOOK) for n in range(3)]
    tasks += [box.task(f"slow-{n}", SLOW, check="true") for n in range(6)]
    box.write_tasks(tasks)
    process = box.popen_bytes(
        "batch", str(box.tasks), "--out", str(box.out), "--concurrency", "3", "--json"
    )
    seen = ""
    try:
        while seen.count('"task_start"') < 6:  # the looks ended, three slow ones run
            seen += read_until(process, "stdout", '"task_start"', timeout=60)
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=scaled(60))
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    events = [json.loads(line) for line in (seen + rest.decode()).splitlines()]
    assert {"type": "batch_stop", "reason": "interrupted"} in events
    latest = box.latest()
    assert sorted(latest) == ["look-0", "look-1", "look-2", "slow-0", "slow-1", "slow-2"]
    for n in range(3):
        slow = latest[f"slow-{n}"]
        assert slow["status"] == "cancelled"
        assert slow["error"] == "interrupted"
        assert slow["stop_reason"] == "cancelled"
        assert slow["check_exit_code"] is None  # no check after a cancelled run
        session = (box.out / f"slow-{n}" / "session.jsonl").read_text()
        assert '"stopReason":"aborted"' in session
    assert events[-1]["not_started"] == 3
    leftovers = [p.name for p in Path(box.out).rglob(".*.tmp")]
    assert leftovers == []
    # the cancelled ones and the three never started run next time; the looks do not
    plan = plan_batch(box.tasks, box.out)
    assert sorted(task.id for task, _ in plan.todo) == [f"slow-{n}" for n in range(6)]
    assert plan.skipped == 3
    assert dict((task.id, attempt) for task, attempt in plan.todo)["slow-0"] == 2
