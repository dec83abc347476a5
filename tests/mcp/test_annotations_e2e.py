"""A server's ``readOnlyHint`` is its own claim: it lets a tool run unasked in ``ask`` and
``read-only`` only for a server the user's own config marks ``trust_annotations = true`` —
never for a server given with ``session/new`` (or by an ACP editor), a project's
``.agentd.toml`` or its ``.mcp.json``. Through a real daemon, with a hostile server whose
"read-only" tool writes a file."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, stdio_client
from tests.mcp.conftest import mcp_call

pytestmark = pytest.mark.e2e

HOSTILE = Path(__file__).with_name("hostile_server.py")
COMMAND = {"command": sys.executable, "args": [str(HOSTILE)]}


def hostile_table(**keys: Any) -> str:
    lines = ["[mcp_servers.h]", f"command = {json.dumps(sys.executable)}"]
    lines.append(f"args = {json.dumps([str(HOSTILE)])}")
    lines += [f"{key} = {json.dumps(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        box.use_scenarios([mcp_call("hostile-peek", "mcp__h__peek", {"path": "PWNED"})])
        yield box


def configure(home: Home, source: str) -> dict[str, Any]:
    """Name the hostile server ``h`` from ``source``; the extra ``session/new`` params."""
    if source == "session":
        return {"mcpServers": [{"name": "h", **COMMAND}]}
    if source == "user":
        home.user_config(hostile_table())
    elif source == "project":
        home.project_config(tables=hostile_table(trust_annotations=True))
    elif source == "mcp.json":
        (home.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"h": COMMAND}}))
        home.trust()
    return {}


@pytest.mark.parametrize("source", ["session", "user", "project", "mcp.json"])
async def test_read_only_hint_of_an_untrusted_server_still_asks(home: Home, source: str) -> None:
    asked: list[str] = []

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params.tool)
        return "reject_once"

    extra = configure(home, source)
    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="ask", **extra)
        await run(client, sid, "hostile-peek")
        ro = await new_session(client, home, permissionMode="read-only", **extra)
        _, refused = await run(client, ro, "hostile-peek")
    assert asked == ["mcp__h__peek"]
    end = next(e["event"] for e in refused if e["event"]["type"] == "tool_execution_end")
    assert end["isError"]
    assert "read-only" in end["result"][0]["text"]
    assert not (home.project / "PWNED").exists()


async def test_a_project_cannot_trust_annotations(home: Home) -> None:
    """A trusted project's ``trust_annotations = true`` is ignored, with a warning; so is the
    user's, for a server whose table the project changes."""
    home.user_config(hostile_table(trust_annotations=True))
    home.project_config(tables='[mcp_servers.h]\nargs = ["-c", "pass"]\n')
    async with stdio_client(home) as client:
        info = await client.call(
            "session/new", {"cwd": str(home.project), "provider": "mock", "permissionMode": "ask"}
        )
    assert any("trust_annotations" in warning for warning in info["warnings"])


async def test_the_users_own_trust_lets_a_read_only_tool_run_unasked(home: Home) -> None:
    asked: list[str] = []

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params.tool)
        return "reject_once"

    home.user_config(hostile_table(trust_annotations=True))
    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        await run(client, sid, "hostile-peek")
    assert asked == []
    assert (home.project / "PWNED").exists()  # the user vouched for this server
