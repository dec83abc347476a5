"""Mock LLM scenarios the end-to-end tests add in front of the built-in ones.

:class:`tests.harness.Home` writes them, followed by ``agentd/mockllm/scenarios.json``, into
its scenarios file; a prompt containing a ``trigger`` plays that scenario's steps.
"""

from __future__ import annotations

import json
from typing import Any


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """One OpenAI-style tool call as a scenario step writes it."""
    arguments = json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_then_reply(
    name: str, trigger: str, say: str, calls: list[dict[str, Any]], reply: str
) -> dict[str, Any]:
    """A scenario: one reply with tool ``calls``, then a final text ``reply``."""
    return {
        "name": name,
        "trigger": trigger,
        "steps": [
            {"response": {"content": say, "tool_calls": calls}},
            {"response": {"content": reply}},
        ],
    }


E2E_SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "brief-pause",
        "trigger": "take a moment",
        "steps": [
            {
                "chunk_delay_ms": 40,
                "chunk_size": 4,
                "response": {"content": "Let me think about this for a moment."},
            }
        ],
    },
    _tool_then_reply(
        "sleepy-bash",
        "sleep in bash",
        "Sleeping.",
        [tool_call("bash", {"command": "sleep 30"})],
        "Woke up.",
    ),
    _tool_then_reply(
        "marked-sleepy-bash",
        "nap in bash after a mark",
        "Sleeping.",
        [tool_call("bash", {"command": "touch bash-started; sleep 30"})],
        "Woke up.",
    ),
    _tool_then_reply(
        "write-note",
        "write a note",
        "Writing.",
        [tool_call("write", {"path": "note.txt", "content": "noted\n"})],
        "Written.",
    ),
    _tool_then_reply(
        "write-two-notes",
        "write two notes",
        "Writing both.",
        [
            tool_call("write", {"path": "a.txt", "content": "a\n"}, "call_a"),
            tool_call("write", {"path": "b.txt", "content": "b\n"}, "call_b"),
        ],
        "Both written.",
    ),
    _tool_then_reply(
        "leak-key",
        "print the key",
        "Printing.",
        [tool_call("bash", {"command": "echo key=sk-abcdefghijklmnopqrstuvwxyz0123456789"})],
        "Printed.",
    ),
]
