"""Files a project plants cannot stall the daemon: a FIFO named like an agent profile or a
custom command is skipped with a warning (never opened for a blocking read), through the
real daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from tests.harness import Home, new_session, scaled, stdio_client
from tests.subagents.test_task_e2e import child_ids, prompt_and_collect

pytestmark = pytest.mark.e2e


def release(fifo: Path) -> None:
    """Let a reader blocked on ``fifo`` go on (an open for writing, closed at once); nothing
    when no one reads it."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_fifo_among_the_profiles_does_not_freeze_the_daemon(home: Home) -> None:
    agents = home.project / ".agentd" / "agents"
    agents.mkdir(parents=True)
    fifo = agents / "evil.md"
    os.mkfifo(fifo)
    (agents / "fine.md").write_text("---\nname: fine\ndescription: A real profile.\n---\n")
    commands = home.project / ".agentd" / "commands"
    commands.mkdir()
    command_fifo = commands / "trap.md"
    os.mkfifo(command_fifo)
    home.trust()  # trust pins the folders' content: trust them as planted
    try:
        async with stdio_client(home) as client:
            try:
                info = await asyncio.wait_for(
                    client.call("session/new", {"cwd": str(home.project), "provider": "mock"}),
                    scaled(20),
                )
                sid = info["sessionId"]
                result, events = await prompt_and_collect(client, sid, "delegate the answer")
                # another session is served meanwhile: the daemon never waited on the FIFO
                other = await asyncio.wait_for(new_session(client, home), scaled(20))
                loaded = await client.call("session/load", {"sessionId": sid})
                listed = await asyncio.wait_for(
                    client.call("session/commands", {"sessionId": sid}), scaled(20)
                )
            finally:
                release(fifo)
                release(command_fifo)
    finally:
        release(fifo)
        release(command_fifo)
    assert other
    assert result["stopReason"] == "end_turn"
    assert len(child_ids(events)) == 1
    (warning,) = {w for w in loaded["warnings"] if "evil.md" in w}
    assert "not a regular file (a FIFO)" in warning
    assert "trap" not in {c["name"] for c in listed["commands"]}
    assert any("trap.md" in w and "not a regular file" in w for w in listed["warnings"])
