"""Idle sessions are unloaded (their file and lock released) so descriptors stay bounded."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from tests.harness import (
    Home,
    new_session,
    run,
    socket_client,
    stdio_client,
    stop,
    wait_until_async,
)

pytestmark = pytest.mark.e2e


async def loaded(home: Home) -> list[str]:
    async with socket_client(home) as client:
        status = await client.call("daemon/status")
    return list(status["sessions"])


async def until_loaded(
    home: Home, condition: Callable[[list[str]], bool], timeout: float = 15
) -> None:
    """Wait until the loaded sessions satisfy ``condition`` (fails after ``timeout`` s)."""

    async def holds() -> bool:
        return condition(await loaded(home))

    await wait_until_async(holds, timeout, "the loaded sessions", 0.1)


async def test_an_unused_session_is_unloaded_and_a_watched_one_stays(home: Home) -> None:
    process = home.start_socket_daemon("--idle-unload", "1")
    try:
        async with socket_client(home) as watcher:
            kept = await new_session(watcher, home)
            async with socket_client(home) as client:
                left = await new_session(client, home)
                await run(client, left, "hello world")
            await until_loaded(home, lambda ids: ids == [kept])
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
        await until_loaded(home, lambda loaded_ids: len(loaded_ids) == 3)
        assert set(await loaded(home)) <= set(ids)
        fds = len(os.listdir(f"/proc/{process.pid}/fd"))
        assert fds < 40
    finally:
        stop(process)
