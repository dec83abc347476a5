"""``agentctl mcp add|list|remove`` and ``daemon/status`` with a real shared daemon."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import Home, new_session, run, scaled, socket_client, stop
from tests.mcp.conftest import SERVER

pytestmark = pytest.mark.e2e


def agentctl(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", *args],
        env=home.env,
        cwd=home.project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


async def test_add_list_run_status_remove(home: Home) -> None:
    added = agentctl(home, "mcp", "add", "t", "--env", "A=b", "--", sys.executable, str(SERVER))
    assert added.returncode == 0, added.stderr
    config = (home.config_dir / "agentd" / "config.toml").read_text()
    assert "[mcp_servers.t]" in config
    assert 'env = { A = "b" }' in config
    again = agentctl(home, "mcp", "add", "t", "--", "x")
    assert again.returncode == 2
    assert "already has an MCP server 't'" in again.stderr
    daemon = home.start_socket_daemon()
    try:
        listed = agentctl(home, "mcp", "list", "--socket", str(home.socket), "--json")
        assert listed.returncode == 0, listed.stderr
        (server,) = json.loads(listed.stdout)["servers"]
        assert (server["name"], server["state"], server["source"]) == ("t", "stopped", "config")
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await run(client, sid, "mcp-add")
            status = await client.call("daemon/status")
        (running,) = status["mcpServers"]
        assert running["state"] == "running"
        assert "mcp__t__add" in running["tools"]
        text = agentctl(home, "mcp", "list", "--socket", str(home.socket)).stdout
        assert "t  running  (config)" in text
        assert "mcp__t__add" in text
    finally:
        stop(daemon)
    removed = agentctl(home, "mcp", "remove", "t")
    assert removed.returncode == 0, removed.stderr
    assert "mcp_servers" not in (home.config_dir / "agentd" / "config.toml").read_text()
    missing = agentctl(home, "mcp", "remove", "t")
    assert missing.returncode == 2


async def test_list_shows_an_untrusted_mcp_json(home: Home) -> None:
    untrusted = home.root / "elsewhere"
    (untrusted / ".git").mkdir(parents=True)
    entry = {"command": sys.executable, "args": [str(SERVER)]}
    (untrusted / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": entry}}))
    listed = agentctl(home, "mcp", "list", "--stdio", "--cwd", str(untrusted), "--json")
    assert listed.returncode == 0, listed.stderr
    (server,) = json.loads(listed.stdout)["servers"]
    assert server["state"] == "untrusted"
    assert f"agentctl trust {untrusted}" in server["error"]
