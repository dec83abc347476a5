"""A prompt larger than the model's context window is refused before the model is called:
a clear error with the sizes and exit 2 (real daemon over a pipe, mock LLM)."""

from __future__ import annotations

import pytest

from tests.agentctl.harness import Sandbox, json_lines

pytestmark = pytest.mark.e2e


def _small_window(sandbox: Sandbox, tokens: int) -> None:
    sandbox.user_config(f'provider = "mock"\n[compaction]\ncontext_window = {tokens}\n')


def test_an_oversized_prompt_is_refused_with_the_sizes(sandbox: Sandbox) -> None:
    _small_window(sandbox, 12000)
    prompt = "x" * 200_000 + "\n"
    result = sandbox.run("send", "--stdio", input=prompt)
    assert result.returncode == 2, result.stderr
    assert "the prompt is too large for mock-model: about 50.0k tokens (195 KB)" in result.stderr
    assert "context window is 12.0k tokens" in result.stderr
    assert "compaction" not in result.stderr
    assert "Traceback" not in result.stderr
    as_json = json_lines(sandbox.run("send", "--stdio", "--json", input=prompt).stdout)
    assert as_json[-1]["exitCode"] == 2
    assert "too large" in as_json[-1]["error"]
    assert not any(line.get("event", {}).get("type") == "agent_start" for line in as_json)


def test_a_prompt_that_fits_runs(sandbox: Sandbox) -> None:
    _small_window(sandbox, 12000)
    result = sandbox.run("send", "--stdio", "how are you")
    assert result.returncode == 0, result.stderr
