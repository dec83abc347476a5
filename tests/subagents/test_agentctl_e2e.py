"""agentctl shows subagents: the children's tool calls and text nested under the task call
on a real terminal (tmux), and ``sessions list`` puts each child's session under its parent.
Real daemon, mock LLM."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from tests.agentctl.screen import Screen
from tests.harness import Home, stop

pytestmark = pytest.mark.e2e


@pytest.fixture
def daemon(home: Home) -> Iterator[Home]:
    process = home.start_socket_daemon()
    try:
        yield home
    finally:
        stop(process)


def agentctl(home: Home, *args: str) -> list[str]:
    return [sys.executable, "-m", "agentctl", *args]


def on_screen(home: Home, *args: str) -> tuple[int, str]:
    screen = Screen(agentctl(home, *args), home.env, home.project)
    try:
        return screen.finish()
    finally:
        screen.close()


def test_a_childs_calls_are_nested_under_the_task(daemon: Home) -> None:
    code, screen = on_screen(daemon, "send", "--provider", "mock", "delegate a write")
    print(screen)
    assert code == 0
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("⇢ task  task task_w"))
    assert "(general) · session " in lines[start]
    child = [line for line in lines[start + 1 :] if line.startswith("  ")]
    assert child == [
        "  │ task task_w  Writing.",
        "  │ task task_w  ● write  child.txt  created 3 B",
        "  │ task task_w  Wrote child.txt.",
        "  └ task task_w  done · 2 turns",
    ]
    task_end = next(line for line in lines if line.startswith("● task  task task_w"))
    assert lines.index(task_end) > lines.index(child[-1])
    assert task_end.endswith("2 turns · session " + lines[start].rsplit(" ", 1)[-1])
    assert "The subagent wrote it." in screen


def test_parallel_children_each_keep_their_title(daemon: Home) -> None:
    code, screen = on_screen(daemon, "send", "--provider", "mock", "delegate two slow tasks")
    print(screen)
    assert code == 0
    assert "  │ task task_a  Slow one done." in screen
    assert "  │ task task_b  Slow two done." in screen
    assert screen.count("  └ task task_") == 2


def test_sessions_list_shows_children_under_their_parent(daemon: Home) -> None:
    code, _ = on_screen(daemon, "send", "--provider", "mock", "delegate two slow tasks")
    assert code == 0
    code, listing = on_screen(daemon, "sessions", "list")
    print(listing)
    assert code == 0
    rows = listing.splitlines()[1:]
    assert rows[0].split()[-1] == "tasks"  # the parent: title "delegate two slow tasks"
    children = rows[1:3]  # the two ran in parallel: either may have been created first
    assert all(row.startswith("└ ") for row in children)
    assert {row.rsplit("  ", 1)[-1].strip() for row in children} == {"task task_a", "task task_b"}
    code, raw = on_screen(daemon, "sessions", "list", "--json")
    parent = json.loads(raw.replace("\n", ""))["sessions"]
    assert sum(1 for s in parent if s.get("parentSessionId")) == 2
