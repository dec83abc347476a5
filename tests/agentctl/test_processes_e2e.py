"""Background processes in agentctl: the process line of a run, ``agentctl ps`` and
``agentctl kill`` against the shared daemon (the process outlives the ``send`` that started
it). Real daemon, mock LLM, real processes."""

from __future__ import annotations

import json

import pytest

from tests.agentctl.harness import Sandbox
from tests.e2e.test_orphans import running
from tests.harness import wait_until
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

NEEDLE = "sleep 32749"


def _scenario() -> dict[str, object]:
    start = {"command": f"echo warming; {NEEDLE}", "background": True, "description": "nap"}
    return {
        "name": "nap",
        "trigger": "nap in the background",
        "steps": [
            {"response": {"tool_calls": [tool_call("bash", start)]}},
            {"response": {"content": "Napping."}},
        ],
    }


def test_ps_lists_and_kill_ends_a_process_that_outlived_its_send(sandbox: Sandbox) -> None:
    sandbox.use_scenarios([_scenario()])
    sent = sandbox.run("send", "--provider", "mock", "nap in the background")
    assert sent.returncode == 0, sent.stderr
    shown = sent.stdout + sent.stderr
    assert "⚙ p1 started: echo warming; sleep 32749 (nap) (pid " in shown, shown
    assert running(NEEDLE), "the process ends with its send"
    listed = sandbox.run("ps", "--json")
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)["sessions"]
    assert [p["id"] for p in sessions[0]["processes"]] == ["p1"]
    sid = sessions[0]["sessionId"]
    table = sandbox.run("ps", sid[:6])
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()
    assert header.split() == ["SESSION", "ID", "STATE", "RUNTIME", "OUTPUT", "COMMAND"]
    assert row.split()[:3] == [sid[:8], "p1", "running"]
    assert row.endswith("echo warming; sleep 32749 (nap)")
    killed = sandbox.run("kill", sid, "p1")
    assert killed.returncode == 0, killed.stderr
    assert killed.stdout.startswith("p1 killed (SIGTERM) after ")
    wait_until(lambda: not running(NEEDLE), 10)
    unknown = sandbox.run("kill", sid, "p7")
    assert unknown.returncode != 0
    assert "No background process 'p7'" in unknown.stderr
    after = sandbox.run("ps", sid)
    assert "killed (SIGTERM)" in after.stdout
