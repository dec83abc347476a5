"""Idle sessions are unloaded (their file and lock released) so descriptors stay bounded."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from tests.harness import (
    Home,
    drain,
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


async def test_an_unused_session_is_unloaded(home: Home) -> None:
    process = home.start_socket_daemon("--idle-unload", "1")
    try:
        async with socket_client(home) as client:
            left = await new_session(client, home)
            await run(client, left, "hello world")
        await until_loaded(home, lambda ids: ids == [])
        async with stdio_client(home) as other:  # the lock went with the unload
            await other.call("session/load", {"sessionId": left})
        async with socket_client(home) as client:
            _, events = await run(client, left, "how are you")
        assert events[-1]["event"]["type"] == "agent_end"
    finally:
        stop(process)


async def test_a_watched_session_is_unloaded_and_its_watcher_still_gets_events(
    home: Home,
) -> None:
    """Being subscribed does not keep an idle session loaded; when another client uses it
    again, the watcher (still subscribed, never told anything) receives the run's events."""
    process = home.start_socket_daemon("--idle-unload", "1")
    try:
        async with socket_client(home) as watcher:
            watched = await new_session(watcher, home)  # the creator is subscribed
            stream = watcher.raw_events(watched)
            await until_loaded(home, lambda ids: ids == [])
            async with socket_client(home) as client:
                result, _ = await run(client, watched, "how are you")
            assert result["stopReason"] == "end_turn"
            seen = await drain(stream, until="agent_end")
            assert seen[0]["event"]["type"] == "agent_start"
            assert {e["sessionId"] for e in seen} == {watched}
            await until_loaded(home, lambda ids: ids == [])
            # unsubscribing while it is unloaded finds the subscription kept aside
            unsubscribed = await watcher.call("session/unsubscribe", {"sessionId": watched})
            assert unsubscribed == {"ok": True}
    finally:
        stop(process)


async def test_one_connection_watching_many_sessions_keeps_descriptors_bounded(
    home: Home,
) -> None:
    """300 sessions created (and so watched) on one connection: the loaded ones come down to
    the cap, descriptors stay few, and the first session still streams to that connection."""
    process = home.start_socket_daemon("--idle-unload", "0", "--max-loaded-sessions", "8")
    try:
        async with socket_client(home) as client:
            ids = [await new_session(client, home) for _ in range(300)]
            await until_loaded(home, lambda loaded_ids: len(loaded_ids) <= 8, timeout=30)
            assert len(os.listdir(f"/proc/{process.pid}/fd")) < 60
            assert ids[0] not in await loaded(home)
            _, events = await run(client, ids[0], "how are you")
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
