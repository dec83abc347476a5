"""``agentctl daemon metrics``: the shared daemon's ``daemon/metrics`` as lines and as JSON,
after a run on the mock; an error when no daemon runs."""

from __future__ import annotations

import json

from tests.agentctl.harness import Sandbox


def test_daemon_metrics_after_a_run(sandbox: Sandbox) -> None:
    assert sandbox.run("daemon", "metrics").returncode == 1  # none runs: never started
    assert sandbox.run("daemon", "start").returncode == 0
    sent = sandbox.run("send", "--provider", "mock", "hello world")
    assert sent.returncode == 0, sent.stderr
    shown = sandbox.run("daemon", "metrics", "--json")
    assert shown.returncode == 0, shown.stderr
    metrics = json.loads(shown.stdout)
    assert metrics["runsStarted"] == 1
    assert metrics["runsEnded"] == {"end_turn": 1}
    assert metrics["sessionsLoaded"] == 1
    assert metrics["telemetry"] is False
    assert metrics["bytesOut"] > 0
    lines = sandbox.run("daemon", "metrics").stdout.splitlines()
    table = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in lines}
    assert table["runsEnded"] == "end_turn 1"
    assert table["errors"] == "none"
    assert table["telemetry"] == "false"
