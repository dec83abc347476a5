"""``seq`` never repeats across loads of a session: after ``session/close`` and after a daemon
restart, a client's last seen seq is recognised as stale."""

from __future__ import annotations

import pytest

from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e


async def _resume(home: Home, sid: str, last: int, *, close_first: bool) -> tuple[dict, list]:  # type: ignore[type-arg]
    async with stdio_client(home) as client:
        if close_first:
            await client.call("session/load", {"sessionId": sid})
            await client.call("session/close", {"sessionId": sid})
        loaded = await client.call("session/load", {"sessionId": sid})
        sub = await client.call("session/subscribe", {"sessionId": sid, "sinceSeq": last})
        _, events = await run(client, sid, "how are you")
    assert loaded["lastSeq"] > last
    return sub, events


@pytest.mark.parametrize("close_first", [False, True], ids=["restart", "close-and-load"])
async def test_a_stale_since_seq_is_never_complete_and_seq_goes_on(
    home: Home, close_first: bool
) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "hello world")
    last = events[-1]["seq"]
    assert [e["seq"] for e in events] == list(range(1, last + 1))
    sub, later = await _resume(home, sid, last, close_first=close_first)
    assert sub["complete"] is False
    assert sub["replayed"] == 0
    seqs = [e["seq"] for e in later]
    assert seqs[0] > last
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
