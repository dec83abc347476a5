"""``agentctl mcp list --check`` with a real shared daemon: a stdio server, a streamable HTTP
one, one whose command exits, one that never answers ``initialize``, an HTTP URL nobody
listens on, a disabled one; ✓/✗ lines, ``--json``, the exit code, and the pool untouched."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.harness import Home, scaled, stop, wait_until
from tests.mcp.conftest import SERVER, server_table

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def connectable(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def http_port() -> Iterator[int]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: connectable(port), 30, "the HTTP server to listen")
        yield port
    finally:
        server.kill()
        server.wait()


def agentctl(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", *args, "--socket", str(home.socket)],
        env=home.env,
        cwd=home.project,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


def test_check_lists_tools_and_errors(home: Home, http_port: int) -> None:
    nobody = free_port()
    home.user_config(
        server_table("t")
        + f'[mcp_servers.web]\nurl = "http://127.0.0.1:{http_port}/mcp"\n'
        + '[mcp_servers.exits]\ncommand = "sh"\nargs = ["-c", "echo broken >&2; exit 3"]\n'
        + server_table("mute", "--hang", startup_timeout=2)
        + f'[mcp_servers.gone]\nurl = "http://127.0.0.1:{nobody}/mcp"\n'
        + '[mcp_servers.off]\ncommand = "true"\nenabled = false\n'
    )
    daemon = home.start_socket_daemon()
    try:
        done = agentctl(home, "mcp", "list", "--check")
        assert done.returncode == 1, done.stderr
        lines = done.stdout.splitlines()
        assert any(line.startswith("✓ t  (config)") for line in lines), done.stdout
        assert any(line.startswith("✓ web  (config)  http://127.0.0.1:") for line in lines)
        assert "mcp__t__add" in done.stdout
        assert "mcp__web__add" in done.stdout
        for name in ("exits", "mute", "gone"):
            assert any(line.startswith(f"✗ {name}  (config)") for line in lines), done.stdout
        assert "it did not answer initialize within 2 s" in done.stdout
        assert "the server exited with code 3 before initialize: broken" in done.stdout
        assert f"cannot reach http://127.0.0.1:{nobody}/mcp" in done.stdout
        assert "off  disabled  (config)" in done.stdout

        as_json = agentctl(home, "mcp", "list", "--check", "--json")
        assert as_json.returncode == 1
        servers = {s["name"]: s for s in json.loads(as_json.stdout)["servers"]}
        assert servers["t"]["check"]["ok"]
        assert "mcp__t__add" in servers["t"]["check"]["tools"]
        assert "mcp__web__add" in servers["web"]["check"]["tools"]
        for name in ("exits", "mute", "gone"):
            check = servers[name]["check"]
            assert not check["ok"]
            assert check["error"]
            assert not check["login"]
            assert check["tools"] == []
        assert "check" not in servers["off"]
        assert all(s["state"] in ("stopped", "disabled") for s in servers.values())

        plain = agentctl(home, "mcp", "list", "--json")
        assert plain.returncode == 0
        assert all("check" not in s for s in json.loads(plain.stdout)["servers"])

        open_door = agentctl(home, "mcp", "login", "web", "--no-browser")
        assert open_door.returncode == 0, open_door.stderr
        assert "web (http://127.0.0.1:" in open_door.stdout
        assert "let agentd in without a new sign-in" in open_door.stdout
        assert "mcp__web__add" in open_door.stdout
    finally:
        stop(daemon)


def test_check_passes_when_every_server_answers(home: Home) -> None:
    home.user_config(server_table("t"))
    done = subprocess.run(
        [sys.executable, "-m", "agentctl", "mcp", "list", "--check", "--stdio"],
        env=home.env,
        cwd=home.project,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("✓ t  (config)")
