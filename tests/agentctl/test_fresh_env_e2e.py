"""The shared daemon uses the provider variables of the client that asks, not the ones it
started with: a key exported after the daemon started works at once, is never written, and a
missing key says whose environment was read. Real daemon, real pipes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.recording_llm import REPLY, recording_llm

pytestmark = pytest.mark.e2e

FRESH_KEY = "sk-fresh-key-exported-later-4242"


def _without_provider_variables(sandbox: Sandbox) -> None:
    for name in list(sandbox.env):
        if name.startswith(("LLM_", "OPENAI_", "ANTHROPIC_")) or name.endswith("_API_KEY"):
            del sandbox.env[name]


def _files_containing(root: Path, needle: str) -> list[Path]:
    return [
        path
        for path in root.rglob("*")
        if path.is_file() and not path.is_socket() and needle.encode() in path.read_bytes()
    ]


def test_a_key_exported_after_the_daemon_started_is_used_and_never_written(
    sandbox: Sandbox,
) -> None:
    _without_provider_variables(sandbox)
    first = sandbox.run("send", "--provider", "mock", "how are you")
    assert first.returncode == 0, first.stderr
    daemon = sandbox.daemon_pid()

    missing = sandbox.run("send", "hi")
    assert missing.returncode == 2
    assert "no LLM provider is configured" in missing.stderr
    assert "provider variables were read from agentctl's environment" in missing.stderr
    assert "Traceback" not in missing.stderr

    with recording_llm() as llm:
        sandbox.env |= {
            "OPENAI_API_KEY": FRESH_KEY,
            "OPENAI_BASE_URL": llm.url,
            "LLM_DEFAULT_MODEL": "fake-1",
        }
        fresh = sandbox.run("send", "hi")
        assert fresh.returncode == 0, fresh.stderr
        assert REPLY in fresh.stdout
        assert llm.authorizations == [f"Bearer {FRESH_KEY}"]
        assert llm.requests[0]["model"] == "fake-1"
    assert sandbox.daemon_pid() == daemon  # the same daemon, never restarted
    assert _files_containing(sandbox.root, FRESH_KEY) == []


def test_without_the_clients_variables_the_error_names_the_daemons_environment(
    sandbox: Sandbox,
) -> None:
    """A client that sends no provider variables (here a raw call) gets the daemon's own
    environment, and the error says so, with the daemon's pid."""
    _without_provider_variables(sandbox)
    assert sandbox.run("daemon", "start").returncode == 0
    params = json.dumps({"cwd": str(sandbox.project)})
    result = sandbox.run("rpc", "session/new", params)
    assert result.returncode == 2, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "no LLM provider is configured" in output
    assert f"daemon's environment: agentd pid {sandbox.daemon_pid()}" in output
