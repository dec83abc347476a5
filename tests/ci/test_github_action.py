"""The GitHub Action (clients/github-action): its metadata validated against the action schema,
and its step script run as a workflow runner would, with the mock provider and fake
``GITHUB_OUTPUT`` / ``GITHUB_STEP_SUMMARY`` files."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import Scenarios, parse_scenarios
from tests.harness import scaled

ACTION = Path(__file__).resolve().parents[2] / "clients" / "github-action"
ACTION_YML = (ACTION / "action.yml").read_text()
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
    """One run of the step; what it left in the runner's files. ``log`` is its stdout and
    stderr as one stream, as the runner reads them."""

    returncode: int
    log: str
    outputs: dict[str, str]
    summary: str


def step_command() -> str:
    """The composite step's ``run:`` line from action.yml."""
    found = re.search(r"^      run: '(.+)'$", (ACTION / "action.yml").read_text(), re.MULTILINE)
    assert found is not None
    return found.group(1)


def run_step(tmp_path: Path, venv: Path | None = VENV, **inputs: str) -> Step:
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTD_", "INPUT_"))}
    env.update(
        GITHUB_ACTION_PATH=str(ACTION),
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
        PIP_COMPILE="0",  # the install step's pip: no bytecode up front (the run needs none)
    )
    if venv is not None:
        env["AGENTD_VENV"] = str(venv)
    env.update({"INPUT_" + k.upper(): v for k, v in inputs.items()})
    script = runner / "step.sh"  # the runner writes the step's run: line to a file
    script.write_text(step_command() + "\n")
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    output_file = runner / "output"
    lines = output_file.read_text().splitlines() if output_file.exists() else []
    outputs = dict(line.split("=", 1) for line in lines)
    summary_file = runner / "summary.md"
    summary = summary_file.read_text() if summary_file.exists() else ""
    return Step(result.returncode, result.stdout, outputs, summary)


def test_a_run_on_the_mock(tmp_path: Path) -> None:
    """hello world: outputs, the step summary, the session file, the final text on stdout."""
    step = run_step(tmp_path, prompt="hello world", provider="mock")
    assert step.returncode == 0, step.log
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
    assert step.returncode == code, step.log
    assert step.outputs["stop-reason"] == "error"
    assert step.outputs["exit-code"] == "2"
    assert "prices" in step.log
    assert "### agentd: could not start (exit 2)" in step.summary  # the log points at it
    assert "`max-tokens` input" in step.summary


def test_a_missing_key_writes_a_summary_saying_what_to_set(tmp_path: Path) -> None:
    """No provider and no key: the step fails, and its summary has the error and the inputs
    to set (the log's "see the step summary" leads somewhere)."""
    step = run_step(tmp_path, prompt="hi")
    assert step.returncode == 2, step.log
    assert "see the step summary" in step.log
    assert "### agentd: could not start (exit 2)" in step.summary
    assert "no LLM provider is configured" in step.summary
    assert "`api-key` input" in step.summary


def test_a_token_cap_stops_the_run_with_budget(tmp_path: Path) -> None:
    """The max-tokens input caps the run (no prices needed): exit 6, stop reason budget."""
    step = run_step(tmp_path, prompt="hello world", provider="mock", max_tokens="10")
    assert step.outputs["exit-code"] == "6", step.log
    assert step.outputs["stop-reason"] == "budget"
    assert "### agentd: budget (exit 6)" in step.summary


@contextmanager
def serve_llm(scenarios: Scenarios | None = None) -> Iterator[MockLLMServer]:
    """The mock LLM on its own thread's loop, so the synchronous step script can call it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = MockLLMServer(scenarios)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(scaled(10))
    yield server
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(scaled(10))
    loop.call_soon_threadsafe(loop.stop)
    thread.join(scaled(10))
    loop.close()


@pytest.fixture
def llm() -> Iterator[MockLLMServer]:
    with serve_llm() as server:
        yield server


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
    assert step.returncode == 0, step.log
    assert llm.request_headers[-1][header] == value
    assert "sk-test-123" not in Path(step.outputs["session-file"]).read_text()


@pytest.mark.e2e
def test_installs_agentd_from_the_repository(tmp_path: Path) -> None:
    """With no venv given, the step installs agentd from the action's repository first."""
    step = run_step(tmp_path, venv=None, prompt="how are you", provider="mock")
    assert step.returncode == 0, step.log
    assert (tmp_path / "runner" / "agentd" / "venv" / "bin" / "agentctl").exists()
    assert step.outputs["stop-reason"] == "end_turn"


def test_the_default_mode_runs_no_command_and_changes_no_file(tmp_path: Path) -> None:
    """Without permission-mode the agent may only read: hello world's write and bash are
    refused, nothing is written."""
    assert re.search(r"permission-mode:\n(?:    .*\n)*?    default: read-only\n", ACTION_YML)
    step = run_step(tmp_path, prompt="hello world", provider="mock", permission_mode="")
    assert not (tmp_path / "workspace" / "hello.py").exists()
    session = Path(step.outputs["session-file"]).read_text()
    assert '"permissionMode":"read-only"' in session.replace(" ", "")
    assert step.outputs["exit-code"] == "5"  # refused: the step fails, saying so
    assert "exit code 5" in step.log
    assert step.outputs["stop-reason"] == "refused"  # one stop reason per exit code
    assert "### agentd: refused (exit 5)" in step.summary


# --- a hostile model: workflow commands, HTML in the summary, the key --------------------------

KEY = "sk-test-9f8e7d6c5b4a"
CANARY = "canary-5e1f"
HOSTILE_TEXT = """All done.
::error title=pwned::the model wrote this error
::add-mask::All
::stop-commands::guessed
  ::warning::indented
<img src="https://beacon.invalid/read.png"> ![x](https://beacon.invalid/md.png)
`broken code span <script>alert(1)</script>"""
HOSTILE_FILE = "notes ::error::from-a-file-name `x` <b>bold</b>.md"
SCAN = (
    "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\" 2>/dev/null; done"
    f" | grep -aoE '{KEY}|{CANARY}' | rev | sort -u"
)


def hostile_scenarios() -> Scenarios:
    def call(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, object]:
        function = {"name": name, "arguments": json.dumps(arguments)}
        return {"id": call_id, "type": "function", "function": function}

    steps = [
        {
            "response": {
                "content": "Looking.",
                "tool_calls": [call("c1", "bash", {"command": SCAN})],
            }
        },
        {
            "response": {
                "content": "::error::from a tool-call turn",
                "tool_calls": [call("c2", "write", {"path": HOSTILE_FILE, "content": "x\n"})],
            }
        },
        {"response": {"content": HOSTILE_TEXT}},
    ]
    return parse_scenarios({"scenarios": [{"name": "hostile", "trigger": "go", "steps": steps}]})


def obeyed_commands(log: str) -> list[str]:
    """The workflow commands a runner would obey in ``log``: lines starting with ``::`` (leading
    blanks ignored), none while ``::stop-commands::TOKEN`` holds, until ``::TOKEN::``."""
    obeyed: list[str] = []
    stopped: str | None = None
    for line in log.splitlines():
        command = line.strip()
        if not command.startswith("::"):
            continue
        if stopped is not None:
            if command == f"::{stopped}::":
                stopped = None
                obeyed.append("resume")
            continue
        obeyed.append(command)
        if command.startswith("::stop-commands::"):
            stopped = command.removeprefix("::stop-commands::")
    return obeyed


@pytest.fixture(scope="module")
def hostile_step(tmp_path_factory: pytest.TempPathFactory) -> Step:
    """One auto-mode run of the hostile model with the key given as the api-key input, without
    the workspace sandbox (opted in by the runner's config), so bash reads what root reads."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    config = tmp_path / "config" / "agentd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[permissions]\nallow_auto_without_sandbox = true\n")
    with serve_llm(hostile_scenarios()) as server:
        return run_step(
            tmp_path,
            prompt="go",
            provider="openai",
            model="mock-model",
            base_url=server.url,
            api_key=KEY,
            canary=CANARY,
            sandbox="none",
        )


def test_model_output_cannot_issue_workflow_commands(hostile_step: Step) -> None:
    assert hostile_step.returncode == 0, hostile_step.log
    assert "::error title=pwned::" in hostile_step.log  # the model's lines are in the log
    assert "from-a-file-name" in hostile_step.log
    obeyed = obeyed_commands(hostile_step.log)
    assert obeyed[0].startswith("::stop-commands::")
    assert len(obeyed[0]) > 40
    assert obeyed[1:] == ["resume"], obeyed


def test_the_step_summary_renders_no_model_html(hostile_step: Step) -> None:
    """The summary as GitHub renders it (Markdown with raw HTML): the answer verbatim in a code
    block, the odd file name in a code span, no image, link, script or bold of the model's."""
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(hostile_step.summary)
    for tag in ("<img", "<script", "<b>", "<a ", "<strong>bold"):
        assert tag not in html, (tag, html)
    assert "&lt;img src=&quot;https://beacon.invalid/read.png&quot;&gt;" in html
    assert "`broken code span &lt;script&gt;" in html
    assert "<code>notes ::error::from-a-file-name `x` &lt;b&gt;bold&lt;/b&gt;.md</code>" in html


def test_the_key_is_in_no_process_environment(hostile_step: Step) -> None:
    """bash scanned every /proc/PID/environ it could read (as root here: all of them, as with
    sudo on a hosted runner): it found the canary input, not the key — in no process of the
    step, agentctl or the daemon."""
    session = Path(hostile_step.outputs["session-file"]).read_text()
    assert CANARY[::-1] in session  # the scan works: bash's output, in the session
    for text in (hostile_step.log, session, hostile_step.summary):
        assert KEY[::-1] not in text
        assert KEY not in text
