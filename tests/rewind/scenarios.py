"""Mock LLM scenarios of the rewind tests: runs that write, edit and run bash in the project.

Turn 1 (``rewind turn one``) writes ``a.txt``, edits the existing ``keep.txt`` and has bash
create ``made.txt``; turn 2 (``rewind turn two``) edits ``a.txt`` again, has bash create
``sub/deep.txt`` and rewrite ``keep.txt`` after its own edit. ``rewind a formatted write``
writes ``fmt.py`` badly spaced and edits ``style.py`` (for a formatter hook to tidy up).
"""

from __future__ import annotations

from typing import Any

from tests.scenarios import tool_call

KEEP_BEFORE = "keep line\n"
"""The content of ``keep.txt`` before the runs (the test writes it)."""


def steps(name: str, trigger: str, calls: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """A scenario whose replies make ``calls`` (one reply per list), then end."""
    steps: list[dict[str, Any]] = [{"response": {"content": "", "tool_calls": c}} for c in calls]
    steps.append({"response": {"content": f"{name} done."}})
    return {"name": name, "trigger": trigger, "steps": steps}


SCENARIOS: list[dict[str, Any]] = [
    steps(
        "rewind-one",
        "rewind turn one",
        [
            [tool_call("write", {"path": "a.txt", "content": "one\n"}, "w1")],
            [
                tool_call(
                    "edit",
                    {"path": "keep.txt", "old_string": "keep", "new_string": "kept"},
                    "e1",
                )
            ],
            [tool_call("bash", {"command": "echo made > made.txt"}, "b1")],
        ],
    ),
    steps(
        "rewind-two",
        "rewind turn two",
        [
            [tool_call("edit", {"path": "a.txt", "old_string": "one", "new_string": "two"}, "e2")],
            [
                tool_call(
                    "edit",
                    {"path": "keep.txt", "old_string": "kept", "new_string": "kept twice"},
                    "e3",
                )
            ],
            [
                tool_call(
                    "bash",
                    {"command": "mkdir -p sub && echo deep > sub/deep.txt && echo x >> keep.txt"},
                    "b2",
                )
            ],
        ],
    ),
    steps(
        "rewind-big",
        "rewind a big file",
        [[tool_call("bash", {"command": "head -c 9000000 /dev/zero > big.bin"}, "b3")]],
    ),
    steps(
        "rewind-foreign",
        "rewind a foreign change",
        [[tool_call("bash", {"command": "echo changed >> outside-made.txt"}, "b4")]],
    ),
    steps(
        "rewind-undo",
        "rewind then undo",
        [[tool_call("undo_edit", {"path": "a.txt"}, "u1")]],
    ),
    steps(
        "rewind-formatted",
        "rewind a formatted write",
        [
            [tool_call("write", {"path": "fmt.py", "content": "x  =  1\n"}, "f1")],
            [tool_call("edit", {"path": "style.py", "old_string": "0", "new_string": "5  "}, "f2")],
        ],
    ),
    steps(
        "rewind-slow",
        "rewind while sleeping",
        [[tool_call("bash", {"command": "touch slept-started; sleep 30"}, "b5")]],
    ),
]
