"""A flood of follow-ups against a real shared daemon: the queue is capped, the flood is
refused with a clear error, and every ``queue_update`` stays small (it used to carry the
whole queue each time: 3,000 follow-ups stalled every client for 13 s)."""

from __future__ import annotations

import asyncio

import pytest

from agentd.agent.scheduling import MAX_QUEUED_BYTES, MAX_QUEUED_MESSAGES
from agentd.errors import RpcError, SessionBusy
from tests.harness import (
    Home,
    drain,
    new_session,
    scaled,
    socket_client,
    start_run,
    stop,
    wait_for_file,
)

pytestmark = pytest.mark.e2e
FLOOD = 3000


async def test_a_flood_of_follow_ups_is_capped(home: Home) -> None:
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client, socket_client(home) as other:
            sid = await new_session(client, home)
            stream, prompt = await start_run(
                client, sid, "nap in bash after a mark", until="tool_execution_start"
            )
            await wait_for_file(home.project / "bash-started")

            calls = (
                client.call("session/followUp", {"sessionId": sid, "text": f"m{n}"})
                for n in range(FLOOD)
            )
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
            refused = [o for o in outcomes if isinstance(o, BaseException)]
            assert {type(o) for o in refused} == {SessionBusy}  # the client maps codes
            assert len(refused) == FLOOD - MAX_QUEUED_MESSAGES
            assert "the session's queue is full (64 messages" in str(refused[0])
            assert "wait until the run takes them, or cancel it" in str(refused[0])
            assert (await other.call("daemon/status", {}))["pid"] == daemon.pid
            state = await client.call("session/state", {"sessionId": sid})
            assert len(state["followUp"]) == MAX_QUEUED_MESSAGES
            with pytest.raises(RpcError, match="queue is full"):  # steering shares the cap
                await client.call("session/steer", {"sessionId": sid, "text": "now"})
            cancel = await client.call("session/cancel", {"sessionId": sid})
            assert len(cancel["dropped"]) == MAX_QUEUED_MESSAGES
            await asyncio.wait_for(prompt, scaled(30))
            events = await drain(stream, until="agent_end")
        updates = [e["event"] for e in events if e["event"]["type"] == "queue_update"]
        assert len(updates) == MAX_QUEUED_MESSAGES + 1  # one per accepted text, one drop
        assert max(len(u.get("followUp", [])) for u in updates) == MAX_QUEUED_MESSAGES
    finally:
        stop(daemon)


async def test_bytes_are_capped_too(home: Home) -> None:
    """A few large texts fill the queue by size; the queue takes more once emptied."""
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _, prompt = await start_run(
                client, sid, "nap in bash after a mark", until="tool_execution_start"
            )
            quarter = "y" * (MAX_QUEUED_BYTES // 4)
            for _ in range(4):
                await client.call("session/steer", {"sessionId": sid, "text": quarter})
            with pytest.raises(RpcError, match=r"queue is full \(4 messages, 262,144 bytes"):
                await client.call("session/followUp", {"sessionId": sid, "text": "z"})
            await client.call("session/cancel", {"sessionId": sid})
            await asyncio.wait_for(prompt, scaled(30))
    finally:
        stop(daemon)
