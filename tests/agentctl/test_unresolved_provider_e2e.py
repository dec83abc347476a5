"""agentctl on a stored session whose provider the shared daemon cannot build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox, json_lines

pytestmark = pytest.mark.e2e


def test_show_export_and_rm_work_while_send_is_a_configuration_error(sandbox: Sandbox) -> None:
    first = sandbox.run("send", "--json", "--provider", "mock", "how are you")
    assert first.returncode == 0, first.stderr
    session_id = json_lines(first.stdout)[0]["sessionId"]
    assert sandbox.run("daemon", "stop").returncode == 0
    (path,) = Path(sandbox.env["XDG_DATA_HOME"]).glob(f"agentd/sessions/*/*_{session_id}.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in lines:
        if entry.get("type") == "model_change":
            entry["provider"] = "ghost"
        elif entry.get("type") == "message" and entry["message"]["role"] == "assistant":
            entry["message"]["provider"] = "ghost"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in lines))

    shown = sandbox.run("sessions", "show", session_id)
    assert shown.returncode == 0, shown.stderr
    assert "how are you" in shown.stdout
    exported = sandbox.run("sessions", "export", session_id, "--format", "html")
    assert exported.returncode == 0, exported.stderr
    assert "<html" in exported.stdout.lower()
    again = sandbox.run("send", "--session", session_id, "how are you")
    assert again.returncode == 2
    assert "ghost" in again.stderr
    removed = sandbox.run("sessions", "rm", session_id)
    assert removed.returncode == 0, removed.stderr
    assert not path.exists()
