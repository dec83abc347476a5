"""``AGENTD_MOCK_SCENARIOS`` is read per model request by a running shared daemon: a changed
file is answered from its new text, and each client's own variable (sent with its session,
like the provider variables) picks the file its sessions are answered from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentd.mockllm.scenarios import load_scenarios
from tests.agentctl.harness import Sandbox

pytestmark = pytest.mark.e2e


def scenarios(path: Path, answer: str) -> str:
    reply = {"response": {"content": answer}}
    body = {"scenarios": [{"name": "ping", "trigger": "ping", "steps": [reply]}]}
    path.write_text(json.dumps(body))
    return str(path)


def send(sandbox: Sandbox, env_file: str | None) -> str:
    if env_file is None:
        sandbox.env.pop("AGENTD_MOCK_SCENARIOS", None)
    else:
        sandbox.env["AGENTD_MOCK_SCENARIOS"] = env_file
    result = sandbox.run("send", "--provider", "mock", "ping")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_running_shared_daemon_reads_the_scenarios_per_run(sandbox: Sandbox) -> None:
    first = scenarios(sandbox.root / "a.json", "from a, first text")
    assert send(sandbox, first) == "from a, first text"  # autostarts the shared daemon
    pid = sandbox.daemon_pid()
    assert pid is not None

    scenarios(Path(first), "from a, changed")  # the same file, new text
    assert send(sandbox, first) == "from a, changed"

    other = scenarios(sandbox.root / "b.json", "from b")  # another client's variable
    assert send(sandbox, other) == "from b"
    built_in = load_scenarios(None).default_response.content
    assert send(sandbox, None) == built_in  # none named: the built-in ones, not the daemon's
    assert send(sandbox, first) == "from a, changed"
    assert sandbox.daemon_pid() == pid  # one daemon answered every run


def test_a_broken_file_is_a_clear_error_and_fixing_it_is_enough(sandbox: Sandbox) -> None:
    path = sandbox.root / "s.json"
    good = scenarios(path, "fine")
    assert send(sandbox, good) == "fine"
    path.write_text("{not json")
    sandbox.env["AGENTD_MOCK_SCENARIOS"] = good
    broken = sandbox.run("send", "--provider", "mock", "ping")
    assert broken.returncode != 0
    assert "s.json" in broken.stderr
    scenarios(path, "fine again")
    assert send(sandbox, good) == "fine again"
