"""``agentd mcp`` as MCP hosts see it, driven by the official SDK's client: the final text in
the structured result (declared as the tools' outputSchema), agentd's version in
``serverInfo``, approvals that cannot be asked failing the call at once (on a 2026-07-28
connection, or when the host fails the elicitation), and logs kept off stderr."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from agentd import __version__
from mcp import ClientSession
from tests.harness import Home, scaled, wait_until

pytestmark = pytest.mark.e2e

APPROVAL_TIMEOUT = 20
"""The approval timeout these tests configure: a call that waits for it instead of failing
at once ends after it, refused but not an error."""


@contextlib.asynccontextmanager
async def host(home: Home, *, modern: bool = False, **session: Any) -> AsyncIterator[Any]:
    """An SDK client on ``agentd mcp``: the ``initialize`` handshake, or (``modern``) the
    2026-07-28 ``server/discover``; yields (client, the handshake's result)."""
    argv = ["-m", "agentd", "mcp", "--provider", "mock", "--root", str(home.project)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=home.env)
    with home.stderr.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **session) as client,
        ):
            shook = await (client.discover() if modern else client.initialize())
            yield client, shook


def ask_mode(home: Home) -> None:
    home.user_config(f"[permissions]\ntimeout = {scaled(APPROVAL_TIMEOUT):g}\n")


async def write_in_ask_mode(client: ClientSession, home: Home) -> Any:
    call = client.call_tool(
        "agentd_run",
        {"prompt": "write a note", "cwd": str(home.project), "permissionMode": "ask"},
    )
    return await asyncio.wait_for(call, scaled(APPROVAL_TIMEOUT) + scaled(60))


def log_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of the log file so far (a line still being written is left out)."""
    if not path.exists():
        return []
    lines = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            lines.append(json.loads(line))
    return lines


async def test_final_text_is_in_the_structured_result_and_declared(home: Home) -> None:
    async with host(home) as (client, _shook):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        first = await client.call_tool(
            "agentd_run", {"prompt": "write a note", "cwd": str(home.project)}
        )
        sid = first.structured_content["sessionId"]
        second = await client.call_tool("agentd_reply", {"sessionId": sid, "prompt": "hello"})
    for name in ("agentd_run", "agentd_reply"):
        schema = tools[name].output_schema
        assert schema is not None, name
        assert {"sessionId", "text", "stopReason", "usage", "filesChanged"} <= set(
            schema["required"]
        )
    assert not first.is_error, first
    assert first.structured_content["text"] == first.content[0].text == "Written."
    assert second.structured_content["text"] == second.content[0].text
    assert second.structured_content["text"]


async def test_server_info_reports_agentds_version(home: Home) -> None:
    async with host(home) as (_client, shook):
        pass
    assert shook.server_info.name == "agentd"
    assert shook.server_info.version == __version__


async def test_ask_mode_on_a_2026_07_28_connection_fails_at_once(home: Home) -> None:
    """That protocol forbids requests from the server during a call: an ``ask`` run cannot
    ask, so the call is an error saying so (not a wait for the approval timeout)."""
    ask_mode(home)
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        asked.append(params.message)
        return ElicitResult(action="accept", content={"allow": True, "always": False})

    async with host(home, modern=True, elicitation_callback=elicit) as (client, _shook):
        assert client.protocol_version == "2026-07-28"
        started = asyncio.get_running_loop().time()
        result = await write_in_ask_mode(client, home)
        took = asyncio.get_running_loop().time() - started
    assert result.is_error, result
    text = result.content[0].text
    assert "cannot carry a request from the server during a call" in text
    assert "2026-07-28" in text
    assert "'auto' or 'read-only'" in text
    assert took < scaled(APPROVAL_TIMEOUT), took
    assert not (home.project / "note.txt").exists()


async def test_a_failed_elicitation_fails_the_call_at_once_and_is_logged(home: Home) -> None:
    """The host answers the approval's elicitation with an error: the call ends at once as an
    error naming the tool and the host's error, and a warning says so in the log."""
    ask_mode(home)

    async def elicit(context: Any, params: Any) -> Any:
        from mcp.types import ErrorData

        return ErrorData(code=-32603, message="the host's dialog broke")

    async with host(home, elicitation_callback=elicit) as (client, _shook):
        started = asyncio.get_running_loop().time()
        result = await write_in_ask_mode(client, home)
        took = asyncio.get_running_loop().time() - started
    assert result.is_error, result
    text = result.content[0].text
    assert "could not ask for approval of write" in text
    assert "the host's dialog broke" in text
    assert "the run was stopped" in text
    assert took < scaled(APPROVAL_TIMEOUT), took
    assert not (home.project / "note.txt").exists()
    log = home.state_dir / "agentd" / "mcp.log"
    warnings = wait_until(
        lambda: [line for line in log_lines(log) if line.get("event") == "approval not asked"],
        10,
        "the warning in the log file",
    )
    assert warnings[0]["tool"] == "write", warnings
    assert "approval not asked" in home.stderr.read_text()  # warnings reach stderr too


async def test_info_lines_go_to_the_log_file_not_stderr(home: Home) -> None:
    async with host(home) as (client, _shook):
        ran = await client.call_tool("agentd_run", {"prompt": "hello", "cwd": str(home.project)})
    assert not ran.is_error, ran
    stderr = home.stderr.read_text() if home.stderr.exists() else ""
    assert '"level": "info"' not in stderr, stderr[-2000:]
    assert '"level":"info"' not in stderr, stderr[-2000:]
    assert "INFO" not in stderr, stderr[-2000:]
    log = home.state_dir / "agentd" / "mcp.log"
    wait_until(
        lambda: any(line.get("level") == "info" for line in log_lines(log)),
        10,
        "info lines in the log file",
    )
