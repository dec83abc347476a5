"""Idle sessions are unloaded (their file and lock released) so descriptors stay bounded."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

import pytest

from tests.harness import Home, new_session, run, socket_client, stdio_client, stop

pytestmark = pytest.mark.e2e


async def loaded(home: Home) -> list[str]:
    async with socket_client(home) as client:
        status = await client.call("daemon/status")
    return list(status["sessions"])


async def until_loaded(
    home: Home, condition: Callable[[list[str]], bool], timeout: float = 15
) -> bool:
    """Whether the loaded sessions come to satisfy ``condition`` within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition(await loaded(home)):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True


async def test_an_unused_session_is_unloaded_and_a_watched_one_stays(home: Home) -> None:
    process = home.start_socket_daemon("--idle-unload", "1")
    try:
        async with socket_client(home) as watcher:
            kept = await new_session(watcher, home)
            async with socket_client(home) as client:
                left = await new_session(client, home)
                await run(client, left, "hello world")
            assert await until_loaded(home, lambda ids: ids == [kept])
            async with stdio_client(home) as other:  # the lock went with the unload
                await other.call("session/load", {"sessionId": left})
            async with socket_client(home) as client:
                _, events = await run(client, left, "how are you")
            assert events[-1]["event"]["type"] == "agent_end"
    finally:
        stop(process)


async def test_loaded_sessions_are_capped(home: Home) -> None:
    process = home.start_socket_daemon("--idle-unload", "0", "--max-loaded-sessions", "3")
    try:
        async with socket_client(home) as client:
            ids = [await new_session(client, home) for _ in range(12)]
        assert await until_loaded(home, lambda loaded_ids: len(loaded_ids) == 3)
        assert set(await loaded(home)) <= set(ids)
        fds = len(os.listdir(f"/proc/{process.pid}/fd"))
        assert fds < 40
    finally:
        stop(process)
