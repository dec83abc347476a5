"""agentctl shows subagents: the children's tool calls and text nested under the task call
on a real terminal (tmux), and ``sessions list`` puts each child's session under its parent.
Real daemon, mock LLM."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.agentctl.screen import Screen
from tests.harness import Home, scaled, stop

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


def running_children(send: subprocess.Popen[bytes]) -> str:
    """Read ``send --json`` until its first child started; the parent's session id."""
    assert send.stdout is not None
    while True:
        line = json.loads(send.stdout.readline())
        if line.get("event", {}).get("type") == "subagent_start":
            return str(line["sessionId"])


def test_attach_mid_run_nests_the_running_children(daemon: Home) -> None:
    """``attach --until-end`` while two children run: the run from its start, then each
    child's reply nested under its task (not dropped, not drawn as the parent's), and the
    parent's end (not a child's) ends the attach."""
    send = subprocess.Popen(
        agentctl(daemon, "send", "--json", "--provider", "mock", "delegate two watched tasks"),
        env=daemon.env,
        cwd=daemon.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        session_id = running_children(send)
        code, screen = on_screen(daemon, "attach", session_id, "--until-end")
        send.communicate(timeout=scaled(30))
    finally:
        send.kill()
    print(screen)
    assert code == 0
    assert "› delegate two watched tasks" in screen
    assert "  │ task task_a  Slow one done." in screen
    assert "  │ task task_b  Slow two done." in screen
    assert screen.index("Slow one done.") < screen.index("Both subagents reported.")


def test_attach_json_carries_the_childrens_events(daemon: Home) -> None:
    """``attach --json`` on the parent: the children's events come too, each under its own
    ``sessionId``; the attach ends with the parent's ``agent_end``."""
    send = subprocess.Popen(
        agentctl(daemon, "send", "--json", "--provider", "mock", "delegate two watched tasks"),
        env=daemon.env,
        cwd=daemon.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        session_id = running_children(send)
        attach = subprocess.run(
            agentctl(daemon, "attach", session_id, "--until-end", "--json"),
            env=daemon.env,
            cwd=daemon.project,
            capture_output=True,
            text=True,
            timeout=scaled(60),
            check=False,
        )
        send.communicate(timeout=scaled(30))
    finally:
        send.kill()
    assert attach.returncode == 0, attach.stderr
    lines = [json.loads(line) for line in attach.stdout.splitlines()]
    children = {
        e["event"]["childSessionId"] for e in lines if e["event"]["type"] == "subagent_start"
    }
    assert len(children) == 2
    seen = {e["sessionId"] for e in lines}
    assert seen == {session_id, *children}
    assert lines[-1]["sessionId"] == session_id
    assert lines[-1]["event"]["type"] == "agent_end"


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
