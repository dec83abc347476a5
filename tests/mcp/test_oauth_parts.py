"""The pieces of MCP OAuth on their own: the credential file (modes, keyed by URL, forget),
the loopback receiver over real HTTP (a code, an authorization error, a stray request), a
project that may not name an OAuth client secret, the credential folder hidden from the
sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path

import httpx
import pytest

from agentd.config.load import load_config
from agentd.mcp.credentials import CredentialStore, PreRegistered, ServerCredentials
from agentd.mcp.login import LoginFailed, LoopbackReceiver
from agentd.paths import control_paths, credentials_dir
from tests.harness import Home, scaled


def test_the_store_is_private_and_keyed_by_url(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "credentials" / "mcp-oauth.json")
    store.update("https://a/mcp", tokens={"access_token": "t1", "token_type": "Bearer"})
    store.update("https://b/mcp", client={"client_id": "c"})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert store.has_tokens("https://a/mcp")
    assert not store.has_tokens("https://b/mcp")
    assert store.get("https://a/mcp/") == {}  # another URL, nothing of a's
    store.update("https://a/mcp", tokens=None)
    assert not store.has_tokens("https://a/mcp")
    assert store.forget("https://b/mcp")
    assert not store.forget("https://b/mcp")
    assert json.loads(store.path.read_text()) == {"servers": {"https://a/mcp": {}}}
    assert [p.name for p in store.path.parent.iterdir() if p.suffix == ".tmp"] == []


async def test_stored_tokens_know_when_they_expire(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthToken

    store = CredentialStore(tmp_path / "c.json")
    credentials = ServerCredentials(store, "https://a/mcp")
    await credentials.set_tokens(OAuthToken(access_token="x", expires_in=60))
    expires = credentials.expires_at()
    assert expires is not None
    assert 50 < expires - time.time() <= 60
    assert (await credentials.get_tokens()).access_token == "x"


async def test_a_pre_registered_client_is_used_as_it_is(tmp_path: Path) -> None:
    client = PreRegistered("id-1", "s3cret", 8123)
    credentials = ServerCredentials(
        CredentialStore(tmp_path / "c.json"),
        "https://a/mcp",
        client,
        "http://127.0.0.1:8123/callback",
    )
    info = await credentials.get_client_info()
    assert (info.client_id, info.client_secret) == ("id-1", "s3cret")
    assert info.token_endpoint_auth_method == "client_secret_basic"
    assert [str(u) for u in info.redirect_uris] == ["http://127.0.0.1:8123/callback"]
    os.environ["AGENTD_TEST_OAUTH_SECRET"] = "from-env"
    try:
        read = PreRegistered.of("id-2", "AGENTD_TEST_OAUTH_SECRET", None)
    finally:
        del os.environ["AGENTD_TEST_OAUTH_SECRET"]
    assert read == PreRegistered("id-2", "from-env", None)
    assert PreRegistered.of(None, "X", 1) is None


async def test_the_loopback_receiver_takes_one_code() -> None:
    receiver = LoopbackReceiver()
    await receiver.start()
    try:
        async with httpx.AsyncClient() as browser:
            base = f"http://127.0.0.1:{receiver.port}"
            stray = await browser.get(f"{base}/favicon.ico")
            assert stray.status_code == 404
            answer = await browser.get(f"{receiver.redirect_uri}?code=abc&state=s1")
            assert answer.status_code == 200
            assert "Signed in" in answer.text
            again = await browser.get(f"{receiver.redirect_uri}?code=other&state=s2")
            assert again.status_code == 404  # one sign-in per listener
        assert await receiver.code(scaled(5)) == ("abc", "s1")
    finally:
        await receiver.close()


async def test_the_loopback_receiver_reports_a_refusal() -> None:
    receiver = LoopbackReceiver()
    await receiver.start()
    try:
        async with httpx.AsyncClient() as browser:
            url = f"{receiver.redirect_uri}?error=access_denied&error_description=user+said+no"
            answer = await browser.get(url)
        assert answer.status_code == 400
        with pytest.raises(LoginFailed, match="user said no"):
            await receiver.code(scaled(5))
    finally:
        await receiver.close()


async def test_a_fixed_callback_port_that_is_taken_fails() -> None:
    taken = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = taken.sockets[0].getsockname()[1]
    try:
        receiver = LoopbackReceiver()
        with pytest.raises(LoginFailed, match=f"127.0.0.1:{port}"):
            await receiver.start(port, fixed=True)
        fallback = LoopbackReceiver()
        await fallback.start(port)  # not fixed: another port
        assert fallback.port not in (0, port)
        await fallback.close()
    finally:
        taken.close()


def test_a_project_cannot_name_a_client_secret() -> None:
    with Home() as home:
        home.user_config('[mcp_servers.docs]\nurl = "https://mcp.example.com/mcp"\n')
        home.project_config(
            tables='[mcp_servers.docs]\noauth_client_secret_env = "OPENAI_API_KEY"\n'
        )
        config = load_config(home.project, env=home.env)
    assert config.settings.mcp_servers["docs"].oauth_client_secret_env is None
    assert any("oauth_client_secret_env" in w for w in config.warnings)


def test_the_credentials_folder_is_hidden_from_the_sandbox(tmp_path: Path) -> None:
    """The folder is covered once it exists; before, the data dir above it stays visible."""
    from agentd.tools.process.mountns import hidden_args

    data = tmp_path / "data"
    (data / "agentd" / "sessions").mkdir(parents=True)
    old = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(data)
    try:
        assert credentials_dir() / "mcp-oauth.json" in control_paths()
        before = hidden_args([tmp_path / "workspace"])
        CredentialStore().update("https://a/mcp", tokens={"access_token": "t"})
        after = hidden_args([tmp_path / "workspace"])
    finally:
        if old is None:
            del os.environ["XDG_DATA_HOME"]
        else:
            os.environ["XDG_DATA_HOME"] = old
    folder = str(data / "agentd" / "credentials")
    assert str(data / "agentd") not in before
    assert folder not in before
    assert after[after.index(folder) - 1] == "--tmpfs"
