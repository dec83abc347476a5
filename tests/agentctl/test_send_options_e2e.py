"""``send``'s session options reach the daemon and the LLM: a recording OpenAI-compatible
server on a real port stands in for the provider, so what the model was sent can be checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.agentctl.recording_llm import recording_llm

pytestmark = pytest.mark.e2e


@pytest.fixture
def llm() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The server's base URL and the request bodies it received."""
    with recording_llm() as server:
        yield server.url, server.requests


def test_session_options_reach_the_session_and_the_model(
    sandbox: Sandbox, llm: tuple[str, list[dict[str, Any]]]
) -> None:
    """--provider --base-url --model --cwd --system-prompt @FILE --permission --title."""
    base_url, requests = llm
    other = sandbox.root / "elsewhere"
    other.mkdir()
    prompt_file = sandbox.root / "system.txt"
    prompt_file.write_text("You are a terse reviewer. Marker 7731.")
    result = sandbox.run(
        "send",
        "--stdio",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        base_url,
        "--model",
        "fake-1",
        "--cwd",
        str(other),
        "--system-prompt",
        f"@{prompt_file}",
        "--permission",
        "read-only",
        "--title",
        "review",
        "how are you",
    )
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    head, final = lines[0], lines[-1]
    assert (head["cwd"], head["provider"], head["model"]) == (str(other), "openai", "fake-1")
    assert head["permissionMode"] == "read-only"
    assert final["stopReason"] == "end_turn"
    (request,) = requests
    assert request["model"] == "fake-1"
    assert request["messages"][0]["role"] == "system"
    assert "Marker 7731" in request["messages"][0]["content"]
    assert request["messages"][-1]["content"] in (
        "how are you",
        [{"type": "text", "text": "how are you"}],
    )
    listing = json.loads(sandbox.run("sessions", "list", "--json", "--cwd", str(other)).stdout)
    assert [item.get("title") for item in listing["sessions"]] == ["review"]
