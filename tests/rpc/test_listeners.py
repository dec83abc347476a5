"""Listener pieces in-process: peer uid check, loopback rule, token file."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from agentd.daemon import DaemonOptions, build_daemon
from agentd.hosts import is_loopback
from agentd.transports import ListenError, UnixListener, load_or_create_token
from tests.harness import scaled


@pytest.mark.parametrize("same_user", [True, False])
async def test_peers_of_another_uid_are_disconnected(xdg_home: Path, same_user: bool) -> None:
    """SO_PEERCRED decides: our own uid is served, any other uid is cut off unanswered."""
    path = xdg_home / "a.sock"
    allowed = os.getuid() if same_user else os.getuid() + 1
    daemon = build_daemon(DaemonOptions(socket_path=path))
    listener = UnixListener(path, allowed_uid=allowed)
    await listener.start(daemon)
    try:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}\n')
        try:
            async with asyncio.timeout(scaled(10)):
                line = await reader.readline()
        except ConnectionResetError:
            line = b""
        writer.close()
        if same_user:
            assert b'"result"' in line
        else:
            assert line == b""
    finally:
        await listener.stop()
        for connection in list(daemon.connections):
            await connection.close()
        await listener.close()
    assert not path.exists()


def test_only_loopback_addresses_count_as_local() -> None:
    """IPv4/IPv6 loopback and ``localhost`` are local; anything else is remote."""
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.4", "::", "example.com"))


def test_token_file_is_created_private_and_reused(short_tmp: Path) -> None:
    """First use writes a random 0600 token; later uses read the same one."""
    path = short_tmp / "run" / "tcp.token"
    token = load_or_create_token(path)
    assert len(token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_or_create_token(path) == token


def test_token_file_readable_by_others_or_empty_is_refused(short_tmp: Path) -> None:
    """A token others can read is no secret; an empty one is no token."""
    path = short_tmp / "tcp.token"
    path.write_text("x" * 40)
    path.chmod(0o644)
    with pytest.raises(ListenError, match="chmod 600"):
        load_or_create_token(path)
    path.write_text("short")
    path.chmod(0o600)
    with pytest.raises(ListenError, match="no usable token"):
        load_or_create_token(path)
