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


PLAN_FIRST = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress", "priority": "high"},
    {"content": "Run the tests", "status": "pending", "priority": "low"},
]
"""The plan the ``plan-steps`` scenario writes first."""
PLAN_DONE = [{**step, "status": "completed"} for step in PLAN_FIRST]
"""The plan it writes second: every step completed."""


def plan_steps() -> dict[str, Any]:
    """A scenario: a ``todo`` plan, its update with every step done, then a final reply."""
    return {
        "name": "plan-steps",
        "trigger": "work through a plan",
        "steps": [
            {
                "response": {
                    "content": "Planning.",
                    "tool_calls": [tool_call("todo", {"todos": PLAN_FIRST}, "plan_1")],
                }
            },
            {
                "response": {
                    "content": "Done with it.",
                    "tool_calls": [tool_call("todo", {"todos": PLAN_DONE}, "plan_2")],
                }
            },
            {"response": {"content": "All three steps are done."}},
        ],
    }


def plan_quietly() -> dict[str, Any]:
    """A scenario: two ``todo`` replies in a row with no text between, then a reply."""
    return {
        "name": "plan-quietly",
        "trigger": "update the plan quietly",
        "steps": [
            {"response": {"tool_calls": [tool_call("todo", {"todos": PLAN_FIRST}, "plan_1")]}},
            {  # a pause between the two plans long enough to see the first on a loaded machine
                "delay_ms": 1500,
                "response": {"tool_calls": [tool_call("todo", {"todos": PLAN_DONE}, "plan_2")]},
            },
            {"response": {"content": "Finished quietly."}},
        ],
    }


E2E_SCENARIOS: list[dict[str, Any]] = [
    plan_quietly(),
    plan_steps(),
    _tool_then_reply(
        "plan-empty-step",
        "write an empty plan step",
        "Planning.",
        [
            tool_call(
                "todo",
                {
                    "todos": [
                        {"content": "a", "status": "pending"},
                        {"content": "  ", "status": "pending"},
                    ]
                },
            )
        ],
        "Oops.",
    ),
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
