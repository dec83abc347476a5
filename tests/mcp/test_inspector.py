"""``agentd mcp`` driven by the MCP Inspector's CLI mode (``@modelcontextprotocol/inspector``
from npm, installed on first use with ``npm ci`` from ``tests/mcp/inspector/package-lock.json``
into the git-ignored ``node_modules``; without node/npm, or when the install fails, the test is
skipped and says why)."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import Home

pytestmark = pytest.mark.e2e

INSPECTOR_DIR = Path(__file__).parent / "inspector"
INSPECTOR_CLI = INSPECTOR_DIR / "node_modules" / "@modelcontextprotocol" / "inspector"
CLI = INSPECTOR_CLI / "cli" / "build" / "cli.js"


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The command that runs the Inspector (installed once, under a file lock)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the MCP Inspector test and are not installed")
    with (INSPECTOR_DIR / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not CLI.exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=INSPECTOR_DIR,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0 or not CLI.exists():
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                pytest.skip(f"the MCP Inspector could not be installed: {' '.join(tail)}")
    return [node, str(CLI), "--cli"]


def call(home: Home, inspector: list[str], *args: str) -> dict:  # type: ignore[type-arg]
    server = [sys.executable, "-m", "agentd", "mcp", "--provider", "mock"]
    done = subprocess.run(
        [*inspector, *server, *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_inspector_lists_and_calls_the_tools(home: Home, inspector: list[str]) -> None:
    listed = call(home, inspector, "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == ["agentd_run", "agentd_reply"]
    result = call(
        home,
        inspector,
        "--method",
        "tools/call",
        "--tool-name",
        "agentd_run",
        "--tool-arg",
        "prompt=write a note",
        "--tool-arg",
        f"cwd={home.project}",
    )
    assert result["isError"] is False
    assert result["content"][0]["text"] == "Written."
    assert result["structuredContent"]["filesChanged"] == [str(home.project / "note.txt")]
    assert (home.project / "note.txt").read_text() == "noted\n"
