"""A smoke test with a real headless ACP client from npm: ``acpx`` 0.1.15 (runs on node 20).

``acpx`` is installed on first use with ``npm ci`` from ``tests/acp/acpx/package-lock.json``
into ``tests/acp/acpx/node_modules`` (git-ignored); without node/npm or when the install fails
(no registry), the tests are skipped and say why.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import Box
from tests.harness import scaled

pytestmark = pytest.mark.e2e

ACPX_DIR = Path(__file__).parent / "acpx"
ACPX_CLI = ACPX_DIR / "node_modules" / "acpx" / "dist" / "cli.js"


@pytest.fixture(scope="module")
def acpx() -> list[str]:
    """The command that runs acpx (installed once, under a file lock)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the acpx smoke test and are not installed")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    major = int(version.stdout.strip().lstrip("v").split(".")[0] or 0)
    if major < 18:
        pytest.skip(f"acpx 0.1.15 needs node >= 18; this node is {version.stdout.strip()}")
    with (ACPX_DIR / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ACPX_CLI.exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=ACPX_DIR,
                capture_output=True,
                text=True,
                timeout=scaled(300),
                check=False,
            )
            if done.returncode != 0 or not ACPX_CLI.exists():
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                pytest.skip(f"acpx could not be installed with npm ci: {' '.join(tail)}")
    return [node, str(ACPX_CLI)]


def run_acpx(
    box: Box, acpx: list[str], agent: str, *args: str, status: int = 0
) -> list[dict[str, Any]]:
    """acpx's JSON lines; ``status``: its expected exit status."""
    env = dict(box.env, HOME=str(box.root))
    done = subprocess.run(
        [*acpx, "--agent", agent, "--format", "json", "--timeout", "60", *args],
        cwd=box.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert done.returncode == status, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def agent_command(box: Box, *extra: str) -> str:
    return " ".join(box.argv(*extra))


def updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def test_acpx_runs_a_prompt_with_edits(box: Box, acpx: list[str]) -> None:
    messages = run_acpx(box, acpx, agent_command(box), "--approve-all", "exec", "edit the notes")
    answers = [m["result"] for m in messages if "result" in m and "stopReason" in m["result"]]
    assert answers == [{"stopReason": "end_turn"}]
    seen = updates(messages)
    titles = [u["title"] for u in seen if u["sessionUpdate"] == "tool_call"]
    assert titles == ["Write notes.txt", "Edit notes.txt"]
    diffs = [
        c for u in seen if u["sessionUpdate"] == "tool_call_update" for c in u.get("content", [])
    ]
    assert [d["type"] for d in diffs] == ["diff", "diff"]
    assert diffs[1]["newText"] == "one\n2\nthree\n"
    methods = [m.get("method") for m in messages]
    assert "fs/write_text_file" in methods, "acpx offers fs: the edits went through it"
    assert (box.project / "notes.txt").read_text() == "one\n2\nthree\n"


def test_acpx_deny_all_in_ask_mode(box: Box, acpx: list[str]) -> None:
    """acpx exits 5 when it denied a permission; the run itself ends normally."""
    agent = agent_command(box, "--permission-mode", "ask")
    messages = run_acpx(box, acpx, agent, "--deny-all", "exec", "write the report", status=5)
    asked = [m for m in messages if m.get("method") == "session/request_permission"]
    assert len(asked) == 1
    assert [o["kind"] for o in asked[0]["params"]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    failed = [u for u in updates(messages) if u.get("status") == "failed"]
    assert failed
    assert not (box.project / "report.md").exists()
