"""Mock LLM scenarios for parents that start subagents and for the children they start.

A child's first request has the task's ``prompt`` as its last user message, so a scenario
whose trigger occurs in that prompt scripts the child (the parent's trigger must not occur in
it). Children's triggers here are ``child …`` phrases.
"""

from __future__ import annotations

from typing import Any

from tests.scenarios import tool_call


def task_call(
    call_id: str, prompt: str, agent: str | None = None, title: str = ""
) -> dict[str, Any]:
    """One ``task`` tool call."""
    args: dict[str, Any] = {"description": title or f"task {call_id}", "prompt": prompt}
    if agent is not None:
        args["agent"] = agent
    return tool_call("task", args, call_id)


def _parent(name: str, trigger: str, calls: list[dict[str, Any]], reply: str) -> dict[str, Any]:
    return {
        "name": name,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Delegating.", "tool_calls": calls}},
            {"response": {"content": reply}},
        ],
    }


def _child(
    name: str, trigger: str, steps: list[dict[str, Any]], *, repeat: bool = False
) -> dict[str, Any]:
    return {"name": name, "trigger": trigger, "steps": steps, "repeat": repeat}


SUBAGENT_SCENARIOS: list[dict[str, Any]] = [
    _parent(
        "delegate-one",
        "delegate the answer",
        [task_call("task_1", "child alpha: find the answer", title="Find the answer")],
        "The subagent says the answer is 42.",
    ),
    _child("child-alpha", "child alpha", [{"response": {"content": "The answer is 42."}}]),
    _parent(
        "delegate-two-slow",
        "delegate two slow tasks",
        [
            task_call("task_a", "child slow one: take your time"),
            task_call("task_b", "child slow two: take your time"),
        ],
        "Both subagents reported.",
    ),
    _child(
        "child-slow-one",
        "child slow one",
        [{"delay_ms": 2000, "response": {"content": "Slow one done."}}],
    ),
    _child(
        "child-slow-two",
        "child slow two",
        [{"delay_ms": 2000, "response": {"content": "Slow two done."}}],
    ),
    # Long enough (6 s) for a second client to attach while they run, even on a loaded machine.
    _parent(
        "delegate-two-watched",
        "delegate two watched tasks",
        [
            task_call("task_a", "child watched one: take your time"),
            task_call("task_b", "child watched two: take your time"),
        ],
        "Both subagents reported.",
    ),
    _child(
        "child-watched-one",
        "child watched one",
        [{"delay_ms": 6000, "response": {"content": "Slow one done."}}],
    ),
    _child(
        "child-watched-two",
        "child watched two",
        [{"delay_ms": 6000, "response": {"content": "Slow two done."}}],
    ),
    _parent(
        "delegate-sleeper",
        "delegate a sleeper",
        [task_call("task_s", "child sleeper: sleep for a long time")],
        "Unreachable.",
    ),
    _child(
        "child-sleeper",
        "child sleeper",
        [
            {
                "response": {
                    "content": "Sleeping.",
                    "tool_calls": [tool_call("bash", {"command": "sleep 60"})],
                }
            },
            {"response": {"content": "Woke up."}},
        ],
    ),
    _parent(
        "delegate-writer",
        "delegate a write",
        [task_call("task_w", "child writer: write the file")],
        "The subagent wrote it.",
    ),
    _child(
        "child-writer",
        "child writer",
        [
            {
                "response": {
                    "content": "Writing.",
                    "tool_calls": [tool_call("write", {"path": "child.txt", "content": "hi\n"})],
                }
            },
            {"response": {"content": "Wrote child.txt."}},
        ],
    ),
    _parent(
        "delegate-explorer-write",
        "delegate an explorer write",
        [task_call("task_x", "child writer: write the file", agent="explore")],
        "Done.",
    ),
    _parent(
        "delegate-spender",
        "delegate a spender",
        [task_call("task_m", "child spender: loop")],
        "Unreachable.",
    ),
    _child(
        "child-spender",
        "child spender",
        [
            {
                "usage": {"input_tokens": 400, "output_tokens": 100},
                "response": {
                    "content": "Looping.",
                    "tool_calls": [tool_call("ls", {})],
                },
            }
        ],
        repeat=True,
    ),
    _parent(
        "delegate-unknown",
        "delegate to nobody",
        [task_call("task_u", "child alpha: find the answer", agent="nobody")],
        "That profile does not exist.",
    ),
    _parent(
        "delegate-broken",
        "delegate to a broken profile",
        [task_call("task_b", "child alpha: find the answer", agent="broken")],
        "That profile is broken.",
    ),
    _parent(
        "delegate-nested",
        "delegate a nesting task",
        [task_call("task_n", "child nester: start another one", agent="nester")],
        "Nested done.",
    ),
    _parent(
        "child-nester",
        "child nester",
        [task_call("task_nn", "child grandchild: say hi", agent="nester")],
        "The grandchild replied.",
    ),
    _parent(
        "delegate-twenty",
        "delegate twenty tasks",
        [task_call(f"task_{i}", f"child quick {i}: report back") for i in range(20)],
        "All twenty reported.",
    ),
    _child("child-quick", "child quick", [{"delay_ms": 300, "response": {"content": "Quick."}}]),
    _parent(
        "delegate-nested-fanout",
        "delegate a fan-out nesting task",
        [task_call("task_f", "child fanner: start three", agent="nester")],
        "Fanned out.",
    ),
    _parent(
        "child-fanner",
        "child fanner",
        [task_call(f"task_f{i}", f"child quick f{i}: report back") for i in range(3)],
        "The three reported.",
    ),
    _parent(
        "delegate-to-writer-profile",
        "delegate to the writer profile",
        [task_call("task_wp", "child writer: write the file", agent="writer")],
        "Done.",
    ),
    _parent(
        "delegate-mcp",
        "delegate an mcp call",
        [task_call("task_mcp", "child mcp caller: add two numbers")],
        "The subagent added.",
    ),
    _child(
        "child-mcp-caller",
        "child mcp caller",
        [
            {
                "response": {
                    "content": "Adding.",
                    "tool_calls": [
                        tool_call("mcp__t__add", {"a": 2, "b": 3}, "c_add"),
                        tool_call("mcp__t__fail", {"reason": "called"}, "c_fail"),
                    ],
                }
            },
            {"response": {"content": "Child mcp done."}},
        ],
    ),
    _parent(
        "child-grandchild",
        "child grandchild",
        [task_call("task_nnn", "child alpha: find the answer", agent="nester")],
        "Grandchild end.",
    ),
]
"""Parents first (their triggers never occur in a child's prompt), then children."""
