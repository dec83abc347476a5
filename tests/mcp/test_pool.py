"""The daemon's MCP server pool with real server processes (:mod:`tests.mcp.server`): a
server no session uses is stopped once idle (and kept when a session comes back in time),
and one that keeps dying is restarted after its back-off, at most ``MAX_RESTARTS`` times."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.mcp.connection import CallFailed, Connection, StartFailed
from agentd.mcp.pool import MAX_RESTARTS, McpPool
from agentd.mcp.servers import ServerDef
from tests.e2e.test_orphans import running
from tests.harness import wait_until_async
from tests.mcp.conftest import SERVER

USER = object()


def definition(marker: Path) -> ServerDef:
    """The test server, appending its pid to ``marker`` at each start."""
    args = (str(SERVER), "--marker", str(marker))
    return ServerDef(name="t", source="test", command=sys.executable, args=args)


def pids(marker: Path) -> list[int]:
    return [int(line) for line in marker.read_text().split()] if marker.exists() else []


@pytest.fixture
async def pool() -> AsyncIterator[McpPool]:
    pool = McpPool(idle_seconds=0.5, backoff=(0.4, 0.4, 0.4))
    try:
        yield pool
    finally:
        await pool.close()


async def acquire(pool: McpPool, marker: Path, cwd: Path) -> Connection:
    return await pool.acquire(definition(marker), cwd, USER, dict(os.environ), lambda: None)


async def test_an_unused_server_stops_when_idle(pool: McpPool, tmp_path: Path) -> None:
    marker = tmp_path / "starts"
    connection = await acquire(pool, marker, tmp_path)
    assert running(str(marker)) == pids(marker)
    pool.release(definition(marker), tmp_path, USER)
    assert pool.state_of(definition(marker), tmp_path) is not None  # not at once
    await wait_until_async(lambda: not running(str(marker)), 30, "the idle server to stop")
    assert pool.infos() == []
    await wait_until_async(lambda: not connection.alive, 30, "the connection to end")
    again = await acquire(pool, marker, tmp_path)  # the next session starts a new one
    assert again is not connection
    assert len(pids(marker)) == 2


async def test_a_session_back_before_the_idle_time_keeps_the_process(
    pool: McpPool, tmp_path: Path
) -> None:
    pool.idle_seconds = 30
    marker = tmp_path / "starts"
    first = await acquire(pool, marker, tmp_path)
    pool.release(definition(marker), tmp_path, USER)
    second = await acquire(pool, marker, tmp_path)
    assert second is first
    assert len(pids(marker)) == 1
    info = pool.state_of(definition(marker), tmp_path)
    assert info is not None
    assert (info.state, info.sessions) == ("running", 1)


async def test_a_server_that_keeps_dying_is_restarted_a_few_times_then_left(
    pool: McpPool, tmp_path: Path
) -> None:
    marker = tmp_path / "starts"
    for crash in range(MAX_RESTARTS + 1):
        connection = await acquire(pool, marker, tmp_path)
        with pytest.raises(CallFailed):
            await connection.call("crash", {}, 30)
        await wait_until_async(lambda: not connection.alive, 30, "the crash to be seen")  # noqa: B023
        if crash < MAX_RESTARTS:
            with pytest.raises(StartFailed, match="restarted in"):
                await acquire(pool, marker, tmp_path)  # within the back-off
            await wait_until_async(lambda: _may_retry(pool, marker, tmp_path), 30, "back-off")
    assert len(pids(marker)) == MAX_RESTARTS + 1
    with pytest.raises(StartFailed, match=f"failed {MAX_RESTARTS + 1} times, not restarted"):
        await acquire(pool, marker, tmp_path)
    info = pool.state_of(definition(marker), tmp_path)
    assert info is not None
    assert info.state == "failed"
    assert len(pids(marker)) == MAX_RESTARTS + 1  # no further start
    assert not running(str(marker))


def _may_retry(pool: McpPool, marker: Path, cwd: Path) -> bool:
    try:
        pool._may_start(pool._entry(definition(marker), cwd))
    except StartFailed:
        return False
    return True
