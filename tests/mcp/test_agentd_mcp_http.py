"""``agentd mcp --http``: streamable HTTP with the daemon's TCP rules (a token, loopback by
default), driven by the official MCP SDK's streamable-HTTP client as a remote host."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp import ClientSession
from tests.harness import Home, scaled
from tests.mcp.http_server import HttpServer, agentd_mcp_http

pytestmark = pytest.mark.e2e

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}


@contextlib.asynccontextmanager
async def http_client(server: HttpServer, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


async def test_a_host_with_the_token_runs_a_turn(home: Home) -> None:
    with agentd_mcp_http(home) as server:
        async with http_client(server, server.token) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool(
                "agentd_run", {"prompt": "write a note", "cwd": str(home.project)}
            )
        info = os.stat(server.token_file)
    assert server.process.returncode == 0  # SIGTERM: a clean stop
    assert names == ["agentd_run", "agentd_reply"]
    assert not result.is_error, result
    assert result.structured_content["stopReason"] == "end_turn"
    assert (home.project / "note.txt").read_text() == "noted\n"
    assert server.token_file == home.runtime_dir / "agentd" / "mcp.token"
    assert info.st_mode & 0o777 == 0o600


async def test_a_request_without_the_token_is_refused(home: Home) -> None:
    with agentd_mcp_http(home) as server:
        async with httpx.AsyncClient(timeout=scaled(30)) as http:
            bare = await http.post(server.url, json=INITIALIZE, headers=ACCEPT)
            wrong = await http.post(
                server.url, json=INITIALIZE, headers={**ACCEPT, "authorization": "Bearer nope"}
            )
            right = await http.post(
                server.url,
                json=INITIALIZE,
                headers={**ACCEPT, "authorization": f"Bearer {server.token}"},
            )
    assert (bare.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert str(server.token_file) in bare.json()["error"]["message"]
    assert bare.headers["www-authenticate"].startswith("Bearer")
    assert "mcp-session-id" in right.headers


async def test_a_given_token_file_is_used(home: Home) -> None:
    token_file = home.root / "my.token"
    token_file.write_text("s3cret-token-of-the-user\n")
    token_file.chmod(0o600)
    with agentd_mcp_http(home, "--token-file", str(token_file)) as server:
        async with http_client(server, "s3cret-token-of-the-user") as client:
            tools = await client.list_tools()
    assert server.token_file == token_file
    assert len(tools.tools) == 2


def _agentd_mcp(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "agentd", "mcp", "--provider", "mock", *args]
    return subprocess.run(
        argv, env=home.env, capture_output=True, text=True, timeout=scaled(60), check=False
    )


def test_a_remote_address_needs_allow_remote(home: Home) -> None:
    refused = _agentd_mcp(home, "--http", "0.0.0.0:0")
    assert refused.returncode == 1
    assert "not a loopback address" in refused.stderr
    assert "--allow-remote" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_readable_token_file_is_refused(home: Home) -> None:
    token_file = home.root / "open.token"
    token_file.write_text("x" * 40)
    token_file.chmod(0o644)
    refused = _agentd_mcp(home, "--http", "127.0.0.1:0", "--token-file", str(token_file))
    assert refused.returncode == 1
    assert f"chmod 600 {token_file}" in refused.stderr


def test_http_options_need_http(home: Home) -> None:
    refused = _agentd_mcp(home, "--allow-remote")
    assert refused.returncode == 2
    assert "go with --http" in refused.stderr
