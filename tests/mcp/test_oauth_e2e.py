"""An OAuth-protected streamable HTTP MCP server (:mod:`tests.mcp.oauth_server`: its own
authorization server on loopback, real PKCE verification, refresh, dynamic registration)
used by a real shared daemon: the 401 named in a session warning and in ``agentctl mcp list
--check``, ``agentctl mcp login`` through a browser that follows the loopback redirect,
the stored token used and refreshed, ``logout``; tokens only in the credential file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import Home, new_session, run, scaled, socket_client, stop, wait_until
from tests.mcp.conftest import mcp_call

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
AGENTCTL = [sys.executable, "-m", "agentctl"]
BROWSER = f"{sys.executable} {HERE / 'follow_browser.py'} %s"


class OAuthServer:
    """:mod:`tests.mcp.oauth_server` in a process: ``url`` its MCP endpoint."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "oauth_server.py"), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.origin = f"http://127.0.0.1:{int(self.process.stdout.readline())}"
        self.url = f"{self.origin}/mcp"

    def stats(self) -> dict[str, int]:
        return dict(httpx.get(f"{self.origin}/_stats", timeout=scaled(10)).json())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(scaled(10))
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def oauth() -> Iterator[OAuthServer]:
    server = OAuthServer("--expires-in", "3")
    try:
        wait_until(lambda: _answers(server), 30, "the OAuth test server answers")
        yield server
    finally:
        server.stop()


def _answers(server: OAuthServer) -> bool:
    try:
        return server.stats()["refused"] == 0
    except httpx.HTTPError:
        return False


def agentctl(home: Home, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [*AGENTCTL, *args, "--socket", str(home.socket)],
        env={**home.env, **(env or {})},
        cwd=home.project,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


def checked(home: Home) -> tuple[int, dict[str, Any]]:
    done = agentctl(home, "mcp", "list", "--check", "--json")
    assert done.stdout, done.stderr
    servers = {s["name"]: s for s in json.loads(done.stdout)["servers"]}
    return done.returncode, servers


def credential_file(home: Home) -> Path:
    return Path(home.env["XDG_DATA_HOME"]) / "agentd" / "credentials" / "mcp-oauth.json"


async def test_login_use_refresh_logout(home: Home, oauth: OAuthServer) -> None:
    home.use_scenarios([mcp_call("whoami", "mcp__remote__whoami", {})])
    home.user_config(f'[mcp_servers.remote]\nurl = "{oauth.url}"\n')
    daemon = home.start_socket_daemon()
    try:
        code, servers = checked(home)
        assert code == 1
        check = servers["remote"]["check"]
        assert not check["ok"]
        assert check["login"]
        assert "run `agentctl mcp login remote`" in check["error"]
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _result, events = await run(client, sid, "whoami")
        kinds = [e["event"] for e in events]
        warnings = [e["message"] for e in kinds if e["type"] == "session_warning"]
        assert any("agentctl mcp login remote" in w for w in warnings), warnings
        assert not any("Server returned an error response" in w for w in warnings)

        log = home.root / "browser.log"
        browser = BROWSER.replace("%s", f"--log {log} %s")
        done = agentctl(home, "mcp", "login", "remote", env={"BROWSER": browser})
        assert done.returncode == 0, done.stderr
        assert "signed in to remote" in done.stdout
        assert "mcp__remote__whoami" in done.stdout
        (opened,) = log.read_text().splitlines()
        assert opened.startswith(f"{oauth.origin}/authorize?")
        assert "code_challenge=" in opened
        assert opened in done.stderr  # printed too, for a terminal without a browser
        stats = oauth.stats()
        assert (stats["registrations"], stats["codes"], stats["grants"]) == (1, 1, 1)

        stored = credential_file(home)
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
        (entry,) = json.loads(stored.read_text())["servers"].values()
        token = entry["tokens"]["access_token"]

        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _result, events = await run(client, sid, "whoami")
        (end,) = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
        assert end["name"] == "mcp__remote__whoami"
        assert not end.get("isError"), events
        assert end["result"][0]["text"] == "authorized"
        for place in (home.sessions, home.state_dir):
            for path in place.rglob("*"):
                if path.is_file():
                    assert token not in path.read_text(errors="replace"), path

        expires = entry["expires_at"]
        wait_until(lambda: time.time() > expires + 0.5, 30, "the access token expired")
        code, servers = checked(home)
        assert code == 0, servers
        assert servers["remote"]["check"]["tools"] == ["mcp__remote__whoami"]
        assert oauth.stats()["refreshes"] >= 1
        assert oauth.stats()["refused"] == 0
        renewed = json.loads(stored.read_text())["servers"][oauth.url]
        assert renewed["tokens"]["access_token"] != token

        gone = agentctl(home, "mcp", "logout", "remote")
        assert gone.returncode == 0
        assert "forgot the OAuth tokens of remote" in gone.stdout
        code, servers = checked(home)
        assert code == 1
        assert servers["remote"]["check"]["login"]
    finally:
        stop(daemon)


async def test_login_without_a_browser_prints_the_address(home: Home, oauth: OAuthServer) -> None:
    """``--no-browser``: the address is printed; following it by hand completes the login."""
    home.user_config(f'[mcp_servers.remote]\nurl = "{oauth.url}"\n')
    daemon = home.start_socket_daemon()
    try:
        login = subprocess.Popen(
            [*AGENTCTL, "mcp", "login", "remote", "--no-browser", "--socket", str(home.socket)],
            env={**home.env, "BROWSER": "false"},
            cwd=home.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert login.stderr is not None
        address = ""
        while not address.startswith(oauth.origin):
            line = login.stderr.readline()
            assert line, "agentctl ended without printing an address"
            address = line.strip()
        assert oauth.stats()["codes"] == 0  # nothing was opened
        follow = subprocess.run(
            [sys.executable, str(HERE / "follow_browser.py"), address], timeout=scaled(60)
        )
        assert follow.returncode == 0
        out, err = login.communicate(timeout=scaled(60))
        assert login.returncode == 0, err
        assert "signed in to remote" in out
    finally:
        stop(daemon)


async def test_login_names_what_is_wrong(home: Home, oauth: OAuthServer) -> None:
    home.user_config(
        f'[mcp_servers.remote]\nurl = "{oauth.url}"\n[mcp_servers.local]\ncommand = "true"\n'
    )
    daemon = home.start_socket_daemon()
    try:
        unknown = agentctl(home, "mcp", "login", "nope")
        assert unknown.returncode == 2
        assert "no MCP server 'nope'" in unknown.stderr
        assert "remote" in unknown.stderr
        stdio = agentctl(home, "mcp", "login", "local")
        assert stdio.returncode == 2
        assert "only HTTP servers sign in" in stdio.stderr
        late = agentctl(home, "mcp", "login", "remote", "--timeout", "1", env={"BROWSER": "true"})
        assert late.returncode == 2
        assert "no authorization came back within 1 s" in late.stderr
    finally:
        stop(daemon)
    assert os.path.exists(home.root)


async def test_an_expired_token_without_refresh_asks_to_sign_in_again(home: Home) -> None:
    server = OAuthServer("--expires-in", "2", "--no-refresh")
    try:
        wait_until(lambda: _answers(server), 30, "the OAuth test server answers")
        home.user_config(f'[mcp_servers.remote]\nurl = "{server.url}"\n')
        daemon = home.start_socket_daemon()
        try:
            done = agentctl(home, "mcp", "login", "remote", env={"BROWSER": BROWSER})
            assert done.returncode == 0, done.stderr
            entry = json.loads(credential_file(home).read_text())["servers"][server.url]
            assert "refresh_token" not in entry["tokens"]
            expires = entry["expires_at"]
            wait_until(lambda: time.time() > expires + 0.5, 30, "the access token expired")
            code, servers = checked(home)
            assert code == 1
            assert servers["remote"]["check"]["login"]
            assert "agentctl mcp login remote" in servers["remote"]["check"]["error"]
            assert server.stats()["codes"] == 1  # no browser step was started unasked
        finally:
            stop(daemon)
    finally:
        server.stop()
