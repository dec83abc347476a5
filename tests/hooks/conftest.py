"""Fixtures of the hooks tests: a session service in a fresh XDG home whose mock LLM plays
:data:`SCENARIOS`, and helpers that write real hook scripts and the user's hook config."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentd.api.subscriber import QueueSubscriber
from agentd.protocol.events import AgentEnd, SessionEvent
from agentd.session.service import SessionService
from tests.harness import BUILTIN_SCENARIOS, TEST_MCP_STARTUP, TEST_MODE, TEST_OPT_IN, scaled
from tests.scenarios import tool_call


def _tool_then_reply(trigger: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "On it.", "tool_calls": calls}},
            {"response": {"content": "All done."}},
        ],
    }


SCENARIOS = [
    _tool_then_reply("list the files", [tool_call("bash", {"command": "echo listed > out.txt"})]),
    _tool_then_reply(
        "write and list",
        [
            tool_call("write", {"path": "a.txt", "content": "alpha\n"}, "call_w"),
            tool_call("bash", {"command": "echo ran >> out.txt"}, "call_b"),
        ],
    ),
    _tool_then_reply("remove everything", [tool_call("bash", {"command": "rm -rf build"})]),
]
"""Scenarios in front of the built-in ones: a bash call; a write and a bash call; an
``rm -rf`` a policy hook should block."""


@pytest.fixture
def project(xdg_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's cwd; the mock LLM plays :data:`SCENARIOS` first."""
    path = xdg_home / "project"
    path.mkdir()
    scenarios = json.loads(BUILTIN_SCENARIOS.read_text())
    scenarios["scenarios"] = [*SCENARIOS, *scenarios["scenarios"]]
    file = xdg_home / "scenarios.json"
    file.write_text(json.dumps(scenarios))
    monkeypatch.setenv("AGENTD_MOCK_SCENARIOS", str(file))
    return path


@pytest.fixture
async def service(xdg_home: Path) -> AsyncIterator[SessionService]:
    service = SessionService(session_dir=xdg_home / "sessions")
    try:
        yield service
    finally:
        await service.close()


def script(folder: Path, name: str, body: str) -> Path:
    """An executable bash script ``folder/name``: ``body`` after the shebang."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return path


def user_hooks(xdg_home: Path, hooks: str, extra: str = "") -> None:
    """The user's config.toml: the tests' run mode, ``extra`` top-level keys and ``hooks``
    (``[[hooks.EVENT]]`` tables)."""
    config = xdg_home / "con" / "agentd" / "config.toml"
    config.write_text(TEST_MODE + TEST_MCP_STARTUP + extra + TEST_OPT_IN + "\n" + hooks)


def hook(event: str, command: str, matcher: str = "*", timeout: float = 20) -> str:
    """One ``[[hooks.EVENT]]`` table (TOML)."""
    return (
        f"[[hooks.{event}]]\nmatcher = {json.dumps(matcher)}\n"
        f"command = {json.dumps(command)}\ntimeout = {timeout}\n"
    )


async def until_end(queue: QueueSubscriber) -> list[Any]:
    """The events of ``queue`` up to and including ``agent_end`` (their ``event`` members)."""
    seen: list[SessionEvent] = []
    async with asyncio.timeout(scaled(60)):
        async for item in queue.events():
            seen.append(item)
            if isinstance(item.event, AgentEnd):
                return [e.event for e in seen]
    raise AssertionError("queue closed before agent_end")
