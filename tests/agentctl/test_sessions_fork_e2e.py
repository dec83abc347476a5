"""``agentctl sessions fork ID`` and ``sessions rename ID TITLE`` against the real shared
daemon and the mock LLM, and the fork's mark in ``sessions list`` (its parent and branch
point, the entry it branched at)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox, json_lines

pytestmark = pytest.mark.e2e


def entries(sandbox: Sandbox, session_id: str) -> list[dict[str, Any]]:
    """The entries of a stored session (its file, header left out)."""
    (path,) = [
        p for p in Path(sandbox.env["XDG_DATA_HOME"]).rglob("*.jsonl") if session_id in p.name
    ]
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def listed(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    result = sandbox.run("sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    return {item["sessionId"]: item for item in json.loads(result.stdout)["sessions"]}


def test_fork_rename_and_the_fork_mark_in_the_list(sandbox: Sandbox) -> None:
    first = sandbox.run("send", "--json", "--provider", "mock", "how are you")
    assert first.returncode == 0, first.stderr
    parent = json_lines(first.stdout)[0]["sessionId"]
    prompt_entry = next(e["id"] for e in entries(sandbox, parent) if e["type"] == "message")

    forked = sandbox.run(
        "sessions", "fork", parent[:6], "--entry", prompt_entry, "--title", "plan B"
    )
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.startswith(f"forked {parent} → ")
    child = forked.stdout.split("→ ")[1].split()[0]
    assert [e["message"]["role"] for e in entries(sandbox, child) if e["type"] == "message"] == [
        "user"
    ]

    table = sandbox.run("sessions", "list").stdout
    (row,) = [line for line in table.splitlines() if line.startswith(child)]
    assert "plan B" in row
    assert f"⑂ fork of {parent} at {prompt_entry}" in row
    (parent_row,) = [line for line in table.splitlines() if line.startswith(parent)]
    assert "⑂" not in parent_row

    renamed = sandbox.run("sessions", "rename", child, "second", "try")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout == f"renamed {child}: second try\n"
    sessions = listed(sandbox)
    assert sessions[child]["title"] == "second try"
    assert (sessions[child]["parentSession"], sessions[child]["parentEntryId"]) == (
        parent,
        prompt_entry,
    )

    whole = sandbox.run("sessions", "fork", parent, "--json")  # default: at the last entry
    assert whole.returncode == 0, whole.stderr
    fork_id = json.loads(whole.stdout)["sessionId"]
    last_entry = entries(sandbox, parent)[-1]["id"]
    assert listed(sandbox)[fork_id]["parentEntryId"] == last_entry


def test_fork_and_rename_errors_are_usage_errors(sandbox: Sandbox) -> None:
    first = sandbox.run("send", "--json", "--provider", "mock", "how are you")
    parent = json_lines(first.stdout)[0]["sessionId"]
    bad_entry = sandbox.run("sessions", "fork", parent, "--entry", "nope")
    assert bad_entry.returncode == 2
    assert "no entry 'nope'" in bad_entry.stderr
    unknown = sandbox.run("sessions", "rename", "0123456789abcdef", "x")
    assert unknown.returncode == 2, unknown.stderr
    assert "Traceback" not in unknown.stderr + bad_entry.stderr
