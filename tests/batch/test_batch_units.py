"""The batch's parts on their own: task lines, shards, the results file, diffs' paths,
the budget and pace, the report's escaping."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from agentctl.batch.budget import BatchBudget, Pace
from agentctl.batch.engine import TaskEvent
from agentctl.batch.records import ResultRecord, TaskUsage
from agentctl.batch.report import html_report, markdown_report, summarise
from agentctl.batch.store import ResultsFile, latest_records, read_records
from agentctl.batch.tasks import Task, TaskLineError, in_shard, parse_line, read_tasks
from agentctl.batch.workspace import changed_paths
from agentd.api.tracecontext import new_trace_id


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"id": "a", "cwd": "."}', "prompt"),
        ('{"id": "a", "prompt": "p"}', "cwd"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "repo": "r"}', "repo"),
        ('{"id": "a b", "prompt": "p", "cwd": "."}', "id"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "timeout": -1}', "timeout"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "max_turns": "3"}', "max_turns"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "permission": "yolo"}', "permission"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "env": ["A=B"]}', "env"),
        ('{"id": "a", "prompt": "p", "cwd": ".", "colour": "red"}', "colour"),
        ("not json", "(line)"),
    ],
)
def test_a_bad_line_names_its_line_and_field(line: str, field: str) -> None:
    error = parse_line(line, 7)
    assert isinstance(error, TaskLineError)
    assert error.line == 7
    assert error.field == field
    assert str(error).startswith("line 7")


def test_task_file_skips_blanks_and_comments_and_refuses_repeated_ids(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    one = {"id": "one", "prompt": "p", "repo": "r", "ref": "main", "env": ["TOKEN"]}
    path.write_text(f"# a comment\n\n{json.dumps(one)}\n{json.dumps(one)}\n")
    items = list(read_tasks(path))
    assert isinstance(items[0], Task)
    assert items[0].env == ["TOKEN"]
    assert isinstance(items[1], TaskLineError)
    assert (items[1].line, items[1].field) == (4, "id")


def test_shards_split_positions_round_robin() -> None:
    shards = [[p for p in range(7) if in_shard(p, (k, 3))] for k in (1, 2, 3)]
    assert shards == [[0, 3, 6], [1, 4], [2, 5]]
    assert all(in_shard(p, None) for p in range(3))


def _record(task_id: str, status: str = "passed", cost: float = 0.0) -> ResultRecord:
    return ResultRecord(id=task_id, status=status, stop_reason="end_turn", exit_code=0,  # type: ignore[arg-type]
                        cost=cost, trace_id=new_trace_id())  # fmt: skip


def test_results_file_appends_whole_lines_and_cuts_a_torn_one(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path)
    results.append(_record("a"))
    results.close()
    with (tmp_path / "results.jsonl").open("ab") as torn:
        torn.write(b'{"id": "b", "sta')  # a write cut short by a crash
    assert [r.id for r in read_records(tmp_path)] == ["a"]
    results = ResultsFile(tmp_path)  # opening again cuts the torn end off
    results.append(_record("a", "failed"))
    results.close()
    text = (tmp_path / "results.jsonl").read_text()
    assert text.count("\n") == 2
    assert latest_records(tmp_path)["a"].status == "failed"


def test_trace_ids_are_w3c_shaped_and_distinct() -> None:
    ids = {new_trace_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(re.fullmatch(r"[0-9a-f]{32}", value) for value in ids)


def test_changed_paths_of_a_patch() -> None:
    patch = (
        b"diff --git a/src/x.py b/src/x.py\nindex 1..2\n"
        b"diff --git a/with space.txt b/with space.txt\nnew file mode 100644\n"
        b'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\n'
    )
    assert changed_paths(patch) == ["café.txt", "src/x.py", "with space.txt"]


def test_budget_counts_live_settles_and_caps_runs() -> None:
    budget = BatchBudget(max_cost=1.0, max_tokens=None)
    task = Task(id="t", prompt="p", cwd=".", max_cost=0.5)
    caps, from_batch = budget.caps_for(task)
    assert (caps.max_cost, from_batch) == (0.5, False)  # the task's own cap is lower
    budget.observe(TaskEvent(kind="turn", task_id="t", cost=0.7, tokens=100))
    caps, from_batch = budget.caps_for(task)
    assert caps.max_cost == pytest.approx(0.3)
    assert from_batch
    record = _record("t", cost=0.8)
    record.usage = TaskUsage(input_tokens=120)
    budget.settle(record)
    assert budget.cost == pytest.approx(0.8)
    assert budget.tokens == 120
    assert not budget.reached
    budget.observe(TaskEvent(kind="turn", task_id="u", cost=0.2))
    assert budget.reached


def test_pace_holds_starts_after_a_429_and_halves_the_limit() -> None:
    pace = Pace(concurrency=8, rate=None)
    pace.observe(TaskEvent(kind="retry", task_id="a", delay_ms=200, status=429))
    assert pace.limit == 4
    assert pace.holding
    started = time.monotonic()
    asyncio.run(pace.wait_start())
    assert time.monotonic() - started >= 0.15
    pace.observe(TaskEvent(kind="finished", task_id="a"))  # it backed off: no ramp yet
    assert pace.limit == 4
    pace.observe(TaskEvent(kind="finished", task_id="b"))  # after the hold: one more
    assert pace.limit == 5


def test_rate_spaces_the_starts() -> None:
    pace = Pace(concurrency=2, rate=20.0)

    async def three() -> float:
        started = time.monotonic()
        for _ in range(3):
            await pace.wait_start()
        return time.monotonic() - started

    assert asyncio.run(three()) >= 0.09


def test_reports_escape_what_the_model_can_reach(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path)
    record = _record("t1", "error")
    record.error = "run: <img src=x onerror=alert(1)> `code` | pipe"
    results.append(record)
    results.append(_record("t2"))
    results.close()
    summary = summarise(tmp_path)
    assert summary.pass_rate == 0.5
    page = html_report(summary)
    assert "<img" not in page
    assert "&lt;img" in page
    markdown = markdown_report(summary)
    assert "`` run: <img src=x onerror=alert(1)> `code` \\| pipe ``" in markdown
