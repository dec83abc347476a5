"""The mock LLM scenarios of the LSP tests (played before the built-in ones): each
``trigger`` in a prompt plays its steps."""

from __future__ import annotations

from typing import Any

from tests.scenarios import tool_call

SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "lsp-fix-typo",
        "trigger": "fix the typo",
        "steps": [
            {
                "response": {
                    "content": "Fixing it.",
                    "tool_calls": [
                        tool_call(
                            "edit",
                            {"path": "draft.py", "old_string": "pritn", "new_string": "print"},
                            "call_fix",
                        )
                    ],
                }
            },
            {"response": {"content": "Fixed the typo."}},
        ],
    },
    {
        "name": "lsp-new-file",
        "trigger": "make a new module",
        "steps": [
            {
                "response": {
                    "content": "Creating it.",
                    "tool_calls": [
                        tool_call("write", {"path": "fresh.py", "content": "x = 1\n"}, "call_new")
                    ],
                }
            },
            {"response": {"content": "Created fresh.py."}},
        ],
    },
    {
        "name": "lsp-run-command",
        "trigger": "say approved",
        "steps": [
            {
                "response": {
                    "content": "Running.",
                    "tool_calls": [tool_call("bash", {"command": "touch approved.txt"}, "call_sh")],
                }
            },
            {"response": {"content": "Ran it."}},
        ],
    },
    {
        "name": "lsp-wait-long",
        "trigger": "wait a long time",
        "steps": [
            {
                "response": {
                    "content": "Waiting.",
                    "tool_calls": [
                        tool_call("bash", {"command": "echo started; sleep 30"}, "call_wait")
                    ],
                }
            },
            {"response": {"content": "Done waiting."}},
        ],
    },
    {
        "name": "lsp-wait-a-moment",
        "trigger": "wait a moment",
        "steps": [
            {
                "response": {
                    "content": "Waiting.",
                    "tool_calls": [
                        tool_call("bash", {"command": "echo started; sleep 5"}, "call_moment")
                    ],
                }
            },
            {"response": {"content": "Done waiting."}},
        ],
    },
    {
        "name": "lsp-steered",
        "trigger": "also say hi",
        "steps": [{"response": {"content": "Hi, as steered."}}],
    },
    {
        "name": "lsp-fix-and-undo",
        "trigger": "fix it then undo",
        "steps": [
            {
                "response": {
                    "content": "Fixing.",
                    "tool_calls": [
                        tool_call(
                            "edit",
                            {"path": "draft.py", "old_string": "pritn", "new_string": "print"},
                            "call_fix2",
                        )
                    ],
                }
            },
            {
                "response": {
                    "content": "Undoing.",
                    "tool_calls": [tool_call("undo_edit", {"path": "draft.py"}, "call_undo")],
                }
            },
            {"response": {"content": "Back as it was."}},
        ],
    },
    {
        "name": "lsp-provider-fails",
        "trigger": "fail at the provider",
        "fail": [{"status": 400, "message": "the request is refused", "forever": True}],
        "steps": [{"response": {"content": "never"}}],
    },
    {
        "name": "lsp-long-reply",
        "trigger": "stream a long reply",
        "steps": [{"response": {"content": " ".join(f"w{i}" for i in range(400))}}],
    },
]
