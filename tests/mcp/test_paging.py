"""A server whose ``tools/list`` comes in pages (:mod:`tests.mcp.server` ``--page-size``), over
stdio and streamable HTTP: every page is fetched by its cursor, once, and the tools work."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.mcp.connection import Connection
from agentd.mcp.servers import ServerDef
from tests.harness import scaled, wait_until
from tests.mcp.conftest import SERVER

PAGE = ("--page-size", "2")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _connectable(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def http_url() -> Iterator[str]:
    """The test server on streamable HTTP, two tools a page."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port), *PAGE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _connectable(port), 30, "the HTTP server to listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.kill()
        server.wait()


def _names(connection: Connection) -> list[str]:
    return sorted(tool["name"] for tool in connection.tools)


async def _started(definition: ServerDef, cwd: Path) -> Connection:
    connection = Connection(definition, cwd, dict(os.environ), lambda: None, lambda: None)
    await connection.start()
    return connection


async def _check(definition: ServerDef, cwd: Path) -> None:
    connection = await _started(definition, cwd)
    try:
        names = _names(connection)
        assert len(names) == len(set(names)) > 2  # more than one page, each tool once
        assert {"add", "fail", "slow", "lookup", "grow"} <= set(names)
        result = await connection.call("add", {"a": 2, "b": 3}, 30)
        assert result["content"][0]["text"] == "5"
        await connection.refresh_tools()  # a list fetched again is fetched whole again
        assert _names(connection) == names
    finally:
        await connection.stop()


async def test_a_paged_tool_list_over_streamable_http(http_url: str, tmp_path: Path) -> None:
    definition = ServerDef(name="web", source="test", url=http_url, startup_timeout=scaled(10))
    await _check(definition, tmp_path)


async def test_a_paged_tool_list_over_stdio(tmp_path: Path) -> None:
    args = (str(SERVER), *PAGE)
    definition = ServerDef(
        name="t", source="test", command=sys.executable, args=args, startup_timeout=scaled(10)
    )
    await _check(definition, tmp_path)
