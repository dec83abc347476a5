"""``agentctl batch`` end to end with the local engine: the real command, the real shared
daemon, the mock LLM, real git worktrees and check commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.batch.harness import EDIT, LOOK, PASSES, SLOW, BatchBox

HEX32 = re.compile(r"^[0-9a-f]{32}$")


def fifty_tasks(box: BatchBox) -> None:
    """20 edits that pass their check, 10 that fail it, 17 looks without a check, a copy of
    a plain folder, one that times out, one bad line (no prompt) at line 49."""
    plain = box.root / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not a repository\n")
    tasks: list[dict[str, object] | str] = []
    tasks += [box.task(f"edit-{n}", EDIT, check=PASSES) for n in range(20)]
    tasks += [box.task(f"fail-{n}", EDIT, check="test -f missing.txt") for n in range(10)]
    tasks += [box.task(f"look-{n}", LOOK) for n in range(17)]
    tasks.append({"id": "copy", "prompt": EDIT, "cwd": str(plain), "provider": "mock",
                  "check": PASSES})  # fmt: skip
    tasks.append('{"id": "bad", "repo": "/nowhere"}')
    tasks.append(box.task("slow", SLOW, timeout=1))
    box.write_tasks(tasks)


def test_fifty_tasks_results_artifacts_rerun_and_retry(box: BatchBox) -> None:
    fifty_tasks(box)
    done = box.batch("--concurrency", "4")
    assert done.returncode == 1, done.stderr
    assert "line 49 (task bad): prompt:" in done.stderr
    lines = box.results()
    assert sorted(line["id"] for line in lines) == sorted(
        [f"edit-{n}" for n in range(20)] + [f"fail-{n}" for n in range(10)]
        + [f"look-{n}" for n in range(17)] + ["copy", "slow"]
    )  # fmt: skip
    batch = json.loads((box.out / "batch.json").read_text())
    assert {line["trace_id"] for line in lines} == {batch["batch_trace_id"]}  # one trace
    assert len({line["span_id"] for line in lines}) == 49  # a span per attempt
    latest = box.latest()
    for name, line in latest.items():
        assert re.fullmatch("[0-9a-f]{16}", line["span_id"]), line
        assert line["attempt"] == 1
        assert line["engine"] == "local"
        assert line["session_id"]
        assert line["duration_ms"] > 0
        assert (box.out / line["artifacts"]["session"]).is_file()
        assert (box.out / line["artifacts"]["diff"]).is_file()
        assert line["artifacts"]["diff"] == f"{name}/diff.patch"
    for n in range(20):
        line = latest[f"edit-{n}"]
        assert line["status"] == "passed"
        assert line["check_exit_code"] == 0
        assert line["stop_reason"] == "end_turn"
        assert line["exit_code"] == 0
        assert line["turns"] == 2
        assert line["usage"]["input_tokens"] > 0
        assert line["files_changed"] == ["answer.txt"]
        assert "+42" in (box.out / f"edit-{n}" / "diff.patch").read_text()
        assert (box.out / f"edit-{n}" / "check.txt").exists()
        assert (box.out / "work" / f"edit-{n}" / "answer.txt").read_text() == "42\n"
    for n in range(10):
        line = latest[f"fail-{n}"]
        assert line["status"] == "failed"
        assert line["check_exit_code"] == 1
    for n in range(17):
        line = latest[f"look-{n}"]
        assert line["status"] == "passed"
        assert line["check_exit_code"] is None
        assert line["files_changed"] == []
        assert "check" not in line["artifacts"]
        assert (box.out / f"look-{n}" / "diff.patch").read_bytes() == b""
    copy = latest["copy"]
    assert copy["status"] == "passed"
    assert copy["files_changed"] == ["answer.txt"]
    assert not (box.root / "plain" / "answer.txt").exists()
    slow = latest["slow"]
    assert slow["status"] == "timeout"
    assert slow["exit_code"] == 4
    assert slow["stop_reason"] == "cancelled"
    assert "timed out" in slow["error"]
    assert '"stopReason":"aborted"' in (box.out / "slow" / "session.jsonl").read_text()
    assert box.git("status", "--porcelain") == ""  # the repository itself is untouched
    assert HEX32.match(batch["batch_trace_id"])
    assert batch["invalid_lines"][0]["line"] == 49
    assert batch["invalid_lines"][0]["field"] == "prompt"

    again = box.batch("--concurrency", "4")
    assert again.returncode == 1  # the bad line still is
    assert "49 task(s) already done" in again.stderr
    assert len(box.results()) == 49

    retried = box.batch("--concurrency", "4", "--retry-failed", "--json")
    events = [json.loads(line) for line in retried.stdout.splitlines()]
    ended = sorted(e["id"] for e in events if e["type"] == "task_end")
    assert ended == sorted([f"fail-{n}" for n in range(10)] + ["slow"])
    assert events[-1]["type"] == "batch_end"
    assert events[-1]["skipped"] == 38
    assert len(box.results()) == 60
    assert box.latest()["fail-3"]["attempt"] == 2
    assert (
        json.loads((box.out / "batch.json").read_text())["batch_trace_id"]
        == (batch["batch_trace_id"])
    )

    report = box.run("batch", "report", str(box.out))
    assert report.returncode == 0, report.stderr
    assert re.search(r"pass rate\s+77\.6%", report.stdout)  # 38 of 49
    assert re.search(r"check exited 1\s+10", report.stdout)
    assert (box.out / "report.md").read_text().startswith("# Batch report")
    assert "<table>" in (box.out / "report.html").read_text()


def test_strict_refuses_a_file_with_a_bad_line(box: BatchBox) -> None:
    box.write_tasks([box.task("one", LOOK), '{"id": "two", "prompt": "x", "cwd": 3}'])
    done = box.batch("--strict")
    assert done.returncode == 2
    assert "line 2 (task two): cwd:" in done.stderr
    assert not (box.out / "results.jsonl").exists()


def test_shard_runs_every_nth_line(box: BatchBox) -> None:
    box.write_tasks([box.task(f"look-{n}", LOOK) for n in range(5)])
    done = box.batch("--shard", "2/2")
    assert done.returncode == 0, done.stderr
    assert sorted(box.latest()) == ["look-1", "look-3"]
    assert json.loads((box.out / "batch.json").read_text())["shard"] == "2/2"


def test_whole_batch_cost_cap(box: BatchBox) -> None:
    box.user_config('[prices."mock-model"]\ninput = 1.0\noutput = 1.0\n')
    box.write_tasks([box.task(f"edit-{n}", EDIT) for n in range(12)])
    cap = 0.08
    done = box.batch("--max-cost", str(cap), "--concurrency", "2", "--json")
    assert done.returncode == 6, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"type": "batch_stop", "reason": "batch budget reached"} in events
    lines = box.results()
    assert 0 < len(lines) < 12
    spent = sum(line["cost"] for line in lines)
    one_call = max(line["cost"] for line in lines) / 2
    assert spent <= cap + 2 * one_call  # at most one model call per running task past it
    for line in lines:
        if line["status"] != "passed":
            assert line["status"] == "cancelled"
            assert line["error"] == "batch budget reached"
    assert events[-1]["not_started"] == 12 - len(lines)


def test_a_task_that_cannot_get_its_workspace_is_an_error(box: BatchBox) -> None:
    box.write_tasks([box.task("gone", LOOK, ref="no-such-ref"), box.task("fine", LOOK)])
    done = box.batch()
    assert done.returncode == 1
    latest = box.latest()
    assert latest["gone"]["status"] == "error"
    assert "workspace" in latest["gone"]["error"]
    assert latest["fine"]["status"] == "passed"


def test_setup_runs_first_with_only_the_named_variables(box: BatchBox) -> None:
    box.env["BATCH_SECRET"] = "s3cret-value"
    box.env["NOT_PASSED"] = "x"
    setup = 'echo "$BATCH_SECRET" > from-setup.txt; echo "${NOT_PASSED:-unset}" >> from-setup.txt'
    box.write_tasks([box.task("env", LOOK, setup=setup, env=["BATCH_SECRET"],
                              check="grep -q s3cret from-setup.txt")])  # fmt: skip
    done = box.batch()
    assert done.returncode == 0, done.stdout + done.stderr
    line = box.latest()["env"]
    assert line["artifacts"]["setup"] == "env/setup.txt"
    written = (box.out / "work" / "env" / "from-setup.txt").read_text()
    assert written == "s3cret-value\nunset\n"
    for path in Path(box.out).glob("*.json*"):
        assert "s3cret-value" not in path.read_text()


def test_a_provider_429_is_a_task_retry_event(box: BatchBox) -> None:
    box.write_tasks([box.task("limited", "rate limited"), box.task("look", LOOK)])
    done = box.batch("--json", "--concurrency", "1")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    retries = [e for e in events if e["type"] == "task_retry"]
    assert retries
    assert retries[0]["id"] == "limited"
    assert retries[0]["status"] == 429
    assert [e["id"] for e in events if e["type"] == "task_end"] == ["limited", "look"]
