"""MCP server names cannot reach across servers: a name holding ``__`` (or ending with
``_``) is refused wherever it comes from — ``session/new``'s ``mcpServers`` (an error naming
it), the user's config (a config error naming it), a project's ``.mcp.json`` (left out with a
warning) — and MCP rules match the (server, tool) pair, so ``mcp__github__*`` never approves
the tools of a server ``github__evil``. Through a real daemon, with a hostile server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.client import AgentClient
from agentd.errors import RpcError
from agentd.permissions.rules import Rule
from tests.harness import Home, new_session, run, stdio_client
from tests.mcp.conftest import mcp_call

pytestmark = pytest.mark.e2e

HOSTILE = Path(__file__).with_name("hostile_server.py")
COMMAND = {"command": sys.executable, "args": [str(HOSTILE)]}


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        box.use_scenarios([mcp_call("evil-peek", "mcp__github__evil__peek", {"path": "PWNED"})])
        box.user_config('permission_mode = "ask"\n[permissions]\nallow = ["mcp__github__*"]\n')
        yield box


async def test_a_session_server_named_across_a_boundary_is_refused(home: Home) -> None:
    """The rule the user wrote for ``github`` must not approve ``github__evil``'s tool."""

    async def attempt(client: AgentClient) -> None:
        params = {"mcpServers": [{"name": "github__evil", **COMMAND}]}
        sid = await new_session(client, home, **params)
        await run(client, sid, "evil-peek")  # what a name like this would allow

    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as caught:
            await attempt(client)
    assert "'github__evil'" in caught.value.message
    assert "may not contain '__'" in caught.value.message
    assert not (home.project / "PWNED").exists()


async def test_a_configured_server_named_across_a_boundary_is_a_config_error(home: Home) -> None:
    table = f"[mcp_servers.github_]\ncommand = {json.dumps(sys.executable)}\n"
    home.user_config('permission_mode = "ask"\n' + table)
    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as caught:
            await new_session(client, home)
    assert "[mcp_servers.github_]" in caught.value.message
    assert "'github_'" in caught.value.message


async def test_an_mcp_json_server_named_across_a_boundary_is_left_out(home: Home) -> None:
    (home.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github__evil": COMMAND}}))
    home.trust()
    async with stdio_client(home) as client:
        info = await client.call("session/new", {"cwd": str(home.project), "provider": "mock"})
        await run(client, info["sessionId"], "evil-peek")
    (warning,) = [w for w in info["warnings"] if "github__evil" in w]
    assert "left out" in warning
    assert "may not contain '__'" in warning
    assert not (home.project / "PWNED").exists()


@pytest.mark.parametrize(
    ("rule", "tool", "matches"),
    [
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__githubx__create_issue", False),
        ("mcp__git*__read", "mcp__gitlab__read", True),
        ("mcp__git*__read", "mcp__gitlab__files__read", False),  # server gitlab, tool files__read
        ("mcp__*__read*", "mcp__db__drop__read", False),
        ("mcp__*", "mcp__anything__at_all", True),
        ("mcp__db__drop_table", "mcp__db__drop_table", True),
    ],
)
def test_rules_match_the_server_and_tool_pair(rule: str, tool: str, matches: bool) -> None:
    assert Rule.parse(rule).matches_mcp(tool) is matches


@pytest.mark.parametrize("name", ["github__evil", "github_", "git.", "a.__b", ""])
def test_names_that_would_cross_a_boundary(name: str) -> None:
    from agentd.protocol.mcp import server_name_problem

    assert server_name_problem(name) is not None


@pytest.mark.parametrize("name", ["github", "my-server", "_private", "a_b", "x1"])
def test_ordinary_names_are_fine(name: str) -> None:
    from agentd.protocol.mcp import server_name_problem

    assert server_name_problem(name) is None
