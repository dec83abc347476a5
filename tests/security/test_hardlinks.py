"""A hard link in the workspace to a file outside it (``ln ~/.ssh/id_rsa notes.txt``): a
sandboxed session's file tools refuse to read it (the other name cannot be found cheaply, so
any regular file with more than one link is refused), while a session without the sandbox
reads it as the user's own tools would. Against the real daemon."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

SECRET = "-----BEGIN PRIVATE KEY----- hardlinked-secret-4242"
TRIGGER = "read the linked notes"


@pytest.fixture
def linked() -> Any:
    """A project holding ``notes.txt``, a second name of a file outside it."""
    with Home() as home:
        outside = home.root / "outside"
        outside.mkdir()
        (outside / "id_rsa").write_text(SECRET + "\n")
        os.link(outside / "id_rsa", home.project / "notes.txt")
        calls = [
            tool_call("read", {"path": "notes.txt"}, "r1"),
            tool_call("edit", {"path": "notes.txt", "old_string": "4242", "new_string": "x"}, "e1"),
            tool_call("write", {"path": "notes.txt", "content": "mine\n"}, "w1"),
        ]
        steps = [{"response": {"content": "Reading.", "tool_calls": calls}}, {"response": {}}]
        home.use_scenarios([{"name": "linked", "trigger": TRIGGER, "steps": steps}])
        yield home


def _ends(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    return {end["toolCallId"]: end for end in ends}


def _text(end: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in end["result"])


async def test_sandboxed_read_refuses_a_hard_linked_file(linked: Home) -> None:
    async with stdio_client(linked) as client:
        sid = await new_session(client, linked, sandbox="workspace", permissionMode="auto")
        _, events = await run(client, sid, TRIGGER, timeout=60)
    ends = _ends(events)
    for call in ("r1", "e1", "w1"):  # write too: it would read the old content for undo
        assert ends[call].get("isError")
        assert "hard links" in _text(ends[call])
        assert SECRET not in str(ends[call])
    assert SECRET not in str(events)
    assert (linked.root / "outside" / "id_rsa").read_text() == SECRET + "\n"


async def test_unsandboxed_read_follows_the_link(linked: Home) -> None:
    """Documented: without the sandbox the file tools read any file the user can."""
    async with stdio_client(linked) as client:
        sid = await new_session(client, linked, sandbox="none", permissionMode="auto")
        _, events = await run(client, sid, TRIGGER, timeout=60)
    assert SECRET in _text(_ends(events)["r1"])
