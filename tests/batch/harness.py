"""The batch tests' sandbox: a git repository, mock LLM scenarios, task files, and the
``agentctl batch`` command run for real against the sandbox's shared daemon."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.agentctl.harness import Sandbox
from tests.scenarios import tool_call

SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "batch-edit",
        "trigger": "batch: write the answer",
        "steps": [
            {"response": {"content": "Writing.", "tool_calls": [
                tool_call("bash", {"command": "echo 42 > answer.txt"})]}},
            {"response": {"content": "Wrote it."}},
        ],
    },
    {
        "name": "batch-look",
        "trigger": "batch: just look",
        "steps": [{"response": {"content": "Nothing to change."}}],
    },
    {
        "name": "batch-slow",
        "trigger": "batch: take your time",
        "steps": [{"delay_ms": 60_000, "response": {"content": "Late."}}],
    },
    {
        "name": "batch-five",
        "trigger": "batch: five commands",
        "steps": [
            *({"response": {"tool_calls": [
                tool_call("bash", {"command": f"echo {n} >> log.txt"}, f"c{n}")]}}
              for n in range(5)),
            {"response": {"content": "Five done."}},
        ],
    },
]  # fmt: skip
"""Prompts of the batch tests: an edit, a look (no change), a slow reply, five commands."""
EDIT = "batch: write the answer"
LOOK = "batch: just look"
SLOW = "batch: take your time"
FIVE = "batch: five commands"
PASSES = 'test "$(cat answer.txt)" = 42'
"""The check of an edit task: the answer file holds 42."""


class BatchBox(Sandbox):
    """A sandbox with a committed git repository (``repo``) and the batch scenarios."""

    prefix = "bat-"

    def __init__(self) -> None:
        super().__init__()
        self.use_scenarios(SCENARIOS)
        self.repo = self.root / "repo"
        self.repo.mkdir()
        (self.repo / "README").write_text("a repository\n")
        self.git("init", "--quiet")
        self.git("add", ".")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one")
        self.out = self.root / "out"
        self.tasks = self.root / "tasks.jsonl"

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.repo), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def write_tasks(self, tasks: Sequence[dict[str, Any] | str]) -> Path:
        """One line per task (a string is written as it is: a bad line)."""
        lines = [t if isinstance(t, str) else json.dumps(t) for t in tasks]
        self.tasks.write_text("\n".join(lines) + "\n")
        return self.tasks

    def task(self, task_id: str, prompt: str, **fields: Any) -> dict[str, Any]:
        """A task on the repository at HEAD with the mock provider."""
        return {"id": task_id, "prompt": prompt, "repo": str(self.repo), "ref": "HEAD",
                "provider": "mock", **fields}  # fmt: skip

    def batch(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``agentctl batch TASKS --out OUT ARGS…``."""
        return self.run("batch", str(self.tasks), "--out", str(self.out), *args, timeout=timeout)

    def results(self) -> list[dict[str, Any]]:
        """Every line of ``results.jsonl`` (each must be whole JSON)."""
        text = (self.out / "results.jsonl").read_text()
        assert not text or text.endswith("\n")
        return [json.loads(line) for line in text.splitlines()]

    def latest(self) -> dict[str, dict[str, Any]]:
        return {line["id"]: line for line in self.results()}
