"""``agentd mcp`` driven by the MCP Inspector's CLI mode (``@modelcontextprotocol/inspector``
from npm, ``tests/mcp/inspector/package-lock.json`` installed by :mod:`tests.mcp.npm`; without
node/npm, or when the install fails, the test is skipped and says why)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import Home, scaled
from tests.mcp.npm import INSPECTOR, installed, node

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The command that runs the Inspector (installed once: :mod:`tests.mcp.npm`)."""
    modules = installed(INSPECTOR)
    cli = modules / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"
    return [node(), str(cli), "--cli"]


def call(home: Home, inspector: list[str], *args: str) -> dict:  # type: ignore[type-arg]
    server = [
        sys.executable,
        "-m",
        "agentd",
        "mcp",
        "--provider",
        "mock",
        "--root",
        str(home.project),
    ]
    done = subprocess.run(
        [*inspector, *server, *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
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
