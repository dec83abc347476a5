"""``agentd mcp --sandbox`` and ``agentd_run``'s ``sandbox`` argument: ``auto`` mode runs in
the workspace sandbox; without it the refusal names the flag, the argument and the user's
config file by its real path. Driven by the official MCP SDK's client."""

from __future__ import annotations

import pytest

from tests.harness import Home
from tests.mcp.test_agentd_mcp_e2e import agentd_mcp

pytestmark = pytest.mark.e2e


def _no_opt_in(home: Home) -> str:
    """The user's config without the tests' opt-in to ``auto`` without a sandbox; its path."""
    return str(home.user_config("", auto=False))


async def test_auto_runs_with_the_sandbox_flag(home: Home) -> None:
    _no_opt_in(home)
    async with agentd_mcp(home, "--permission-mode", "auto", "--sandbox", "workspace") as client:
        result = await client.call_tool(
            "agentd_run", {"prompt": "write a note", "cwd": str(home.project)}
        )
    assert not result.is_error, result
    assert (home.project / "note.txt").read_text() == "noted\n"


async def test_auto_runs_with_the_sandbox_argument(home: Home) -> None:
    _no_opt_in(home)
    async with agentd_mcp(home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["agentd_run"].input_schema["properties"]["sandbox"]
        result = await client.call_tool(
            "agentd_run",
            {
                "prompt": "write a note",
                "cwd": str(home.project),
                "permissionMode": "auto",
                "sandbox": "workspace",
            },
        )
    assert "workspace" in str(schema)
    assert not result.is_error, result
    assert (home.project / "note.txt").read_text() == "noted\n"


async def test_auto_without_the_sandbox_names_the_ways_out(home: Home) -> None:
    config = _no_opt_in(home)
    async with agentd_mcp(home, "--permission-mode", "auto") as client:
        refused = await client.call_tool(
            "agentd_run", {"prompt": "write a note", "cwd": str(home.project)}
        )
    assert refused.is_error
    text = refused.content[0].text
    assert "--sandbox workspace" in text
    assert '"sandbox": "workspace"' in text
    assert f"`allow_auto_without_sandbox = true` under `[permissions]` in {config}" in text
    assert config.startswith(str(home.config_dir))  # the real $XDG_CONFIG_HOME, not ~/.config
    assert not (home.project / "note.txt").exists()
