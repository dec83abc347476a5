"""The GitHub Action (clients/github-action): its metadata validated against the action schema,
and its step script run as a workflow runner would, with the mock provider and fake
``GITHUB_OUTPUT`` / ``GITHUB_STEP_SUMMARY`` files."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentd.mockllm import MockLLMServer

ACTION = Path(__file__).resolve().parents[2] / "clients" / "github-action"
VENV = Path(sys.executable).parent.parent


def test_action_metadata_is_valid() -> None:
    """check-jsonschema's vendored GitHub action schema accepts action.yml."""
    checker = Path(sys.executable).parent / "check-jsonschema"
    result = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-actions", str(ACTION / "action.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_input_reaches_the_script() -> None:
    """Each input is passed as INPUT_<NAME> and read by run.sh; each output is written."""
    metadata = (ACTION / "action.yml").read_text()
    script = (ACTION / "run.sh").read_text()
    inputs_block = metadata.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    inputs = re.findall(r"^  ([a-z-]+):$", inputs_block, re.MULTILINE)
    assert "prompt" in inputs
    for name in inputs:
        variable = "INPUT_" + name.upper().replace("-", "_")
        assert f"{variable}: ${{{{ inputs.{name} }}}}" in metadata, name
        assert variable in script, name
    outputs_block = metadata.split("\noutputs:\n", 1)[1].split("\nruns:\n", 1)[0]
    for name in re.findall(r"^  ([a-z-]+):$", outputs_block, re.MULTILINE):
        assert f'"{name}": ' in script, name


@dataclass
class Step:
    """One run of the step script; what it left in the runner's files."""

    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


def run_step(tmp_path: Path, venv: Path | None = VENV, **inputs: str) -> Step:
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTD_", "INPUT_"))}
    env.update(
        RUNNER_TEMP=str(runner),
        GITHUB_OUTPUT=str(runner / "output"),
        GITHUB_STEP_SUMMARY=str(runner / "summary.md"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(tmp_path),
        INPUT_WORKING_DIRECTORY=str(workspace),
        INPUT_PERMISSION_MODE="auto",
        INPUT_MAX_TURNS="30",
        INPUT_TIMEOUT="120",
        INPUT_FAIL_ON_ERROR="true",
    )
    if venv is not None:
        env["AGENTD_VENV"] = str(venv)
    env.update({"INPUT_" + k.upper(): v for k, v in inputs.items()})
    result = subprocess.run(
        ["bash", str(ACTION / "run.sh")],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output_file = runner / "output"
    lines = output_file.read_text().splitlines() if output_file.exists() else []
    outputs = dict(line.split("=", 1) for line in lines)
    summary_file = runner / "summary.md"
    summary = summary_file.read_text() if summary_file.exists() else ""
    return Step(result.returncode, result.stdout, result.stderr, outputs, summary)


def test_a_run_on_the_mock(tmp_path: Path) -> None:
    """hello world: outputs, the step summary, the session file, the final text on stdout."""
    step = run_step(tmp_path, prompt="hello world", provider="mock")
    assert step.returncode == 0, step.stderr
    assert step.outputs["stop-reason"] == "end_turn"
    assert step.outputs["exit-code"] == "0"
    assert step.outputs["turns"] == "3"
    assert float(step.outputs["cost"]) == 0.0
    session_file = Path(step.outputs["session-file"])
    assert session_file.is_file()
    assert session_file.is_relative_to(tmp_path / "runner" / "agentd" / "data")
    assert step.outputs["session-id"] in session_file.name
    assert "### agentd: end_turn (exit 0)" in step.summary
    assert "**Files changed:** `hello.py`" in step.summary
    assert (tmp_path / "workspace" / "hello.py").exists()
    assert Path(step.outputs["result-file"]).is_file()


@pytest.mark.parametrize(("fail_on_error", "code"), [("true", 2), ("false", 0)])
def test_a_refused_cost_cap_fails_the_step(tmp_path: Path, fail_on_error: str, code: int) -> None:
    """No prices for the mock model: the cap is refused; outputs are written either way."""
    step = run_step(
        tmp_path, prompt="hi", provider="mock", max_cost="1", fail_on_error=fail_on_error
    )
    assert step.returncode == code, step.stderr
    assert step.outputs["stop-reason"] == "error"
    assert step.outputs["exit-code"] == "2"
    assert "prices" in step.stderr


@pytest.fixture
def llm() -> Iterator[MockLLMServer]:
    """The mock LLM on its own thread's loop, so the synchronous step script can call it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = MockLLMServer()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    yield server
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


@pytest.mark.parametrize(
    ("provider", "header", "value"),
    [("", "authorization", "Bearer sk-test-123"), ("anthropic", "x-api-key", "sk-test-123")],
)
def test_the_api_key_reaches_the_providers_endpoint(
    tmp_path: Path, llm: MockLLMServer, provider: str, header: str, value: str
) -> None:
    """The api-key input goes to the variable the provider reads, paired with base-url."""
    step = run_step(
        tmp_path,
        prompt="how are you",
        provider=provider,
        model="mock-model",
        base_url=llm.url,
        api_key="sk-test-123",
    )
    assert step.returncode == 0, step.stderr
    assert llm.request_headers[-1][header] == value
    assert "sk-test-123" not in Path(step.outputs["session-file"]).read_text()


@pytest.mark.e2e
def test_installs_agentd_from_the_repository(tmp_path: Path) -> None:
    """With no venv given, the step installs agentd from the action's repository first."""
    step = run_step(tmp_path, venv=None, prompt="how are you", provider="mock")
    assert step.returncode == 0, step.stderr
    assert (tmp_path / "runner" / "agentd" / "venv" / "bin" / "agentctl").exists()
    assert step.outputs["stop-reason"] == "end_turn"
