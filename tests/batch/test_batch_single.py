"""``agentctl.batch.single.run_one_task``: one task end to end, plain data in and out, in a
process of its own (as a remote worker runs it), on the shared daemon or a private one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.batch.harness import EDIT, PASSES, BatchBox
from tests.harness import scaled

WORKER = """
import json, sys
from agentctl.batch.single import run_one_task
task, settings, daemon = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
events = []
record = run_one_task(task, settings, trace_id="ab" * 16, attempt=3, daemon=daemon,
                      progress=events.append, node="worker-1")
print(json.dumps({"record": record, "events": [e["kind"] for e in events]}))
"""


@pytest.mark.parametrize("daemon", ["shared", "private"])
def test_one_task_runs_end_to_end_as_plain_data(box: BatchBox, daemon: str) -> None:
    task = box.task("solo", EDIT, check=PASSES)
    settings = {"out_dir": str(box.out), "socket": str(box.socket)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(task), json.dumps(settings), daemon],
        env=box.env, cwd=box.root, capture_output=True, text=True, timeout=scaled(120),
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    record = answer["record"]
    assert record["status"] == "passed"
    assert record["trace_id"] == "ab" * 16
    assert record["attempt"] == 3
    assert record["node"] == "worker-1"
    assert record["files_changed"] == ["answer.txt"]
    assert "+42" in (box.out / record["artifacts"]["diff"]).read_text()
    assert (box.out / record["artifacts"]["session"]).is_file()
    assert answer["events"][0] == "started"
    assert "turn" in answer["events"]
    assert not (box.out / "results.jsonl").exists()  # the scheduler's file, not the worker's
