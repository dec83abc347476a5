"""Scripting without agentctl: NDJSON JSON-RPC piped into ``agentd serve --stdio``; the demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.harness import scaled

pytestmark = pytest.mark.e2e


DRIVE_SCRIPT = Path(__file__).with_name("drive_stdio.sh")
MOCK_GREETING = "I'm doing well, thank you for asking! What shall we work on?"


@pytest.mark.skipif(shutil.which("jq") is None, reason="the documented script uses jq")
def test_documented_bash_script_drives_a_stdio_daemon(sandbox: Sandbox) -> None:
    """The README's coproc script: a session, a prompt, stdin closed mid-run, exit 0."""
    env = dict(sandbox.env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{sandbox.env['PATH']}")
    result = subprocess.run(
        ["bash", str(DRIVE_SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=sandbox.project,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0] == "agent_start"
    assert lines[-2:] == ["agent_end", "end_turn"]


def test_here_doc_of_requests_to_a_stdio_daemon(sandbox: Sandbox) -> None:
    """Requests written at once are all answered before the daemon exits on stdin EOF."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "sh"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(sandbox.project), "provider": "mock", "sessionId": "script-1"},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "script-1", "text": "how are you"},
        },
    ]
    here_doc = "".join(json.dumps(request) + "\n" for request in requests)
    result = subprocess.run(
        [sys.executable, "-m", "agentd", "serve", "--stdio"],
        input=here_doc,
        capture_output=True,
        text=True,
        env=sandbox.env,
        cwd=sandbox.project,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    answers = {line["id"]: line for line in lines if "id" in line}
    assert set(answers) == {1, 2, 3}
    assert answers[2]["result"]["sessionId"] == "script-1"
    assert answers[3]["result"]["stopReason"] == "end_turn"
    events = [line for line in lines if line.get("method") == "session/event"]
    assert events[-1]["params"]["event"]["type"] == "agent_end"
    assert lines.index(events[-1]) < lines.index(answers[3])


def test_offline_demo_runs_end_to_end(sandbox: Sandbox) -> None:
    """python -m agentctl.demo writes hello.py with the mock, runs it, lists the session."""
    result = subprocess.run(
        [sys.executable, "-m", "agentctl.demo"],
        capture_output=True,
        text=True,
        env=sandbox.env,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "● write  hello.py" in out
    assert "● bash  python3 hello.py  exit 0" in out
    assert "print('Hello, World!')" in out
    assert "ENTRIES" in out
    assert "demo" in out


def test_readme_shows_the_tested_script() -> None:
    """The script in clients/agentctl/README.md is the one this suite runs."""
    readme = (Path(__file__).parents[2] / "clients" / "agentctl" / "README.md").read_text()
    body = DRIVE_SCRIPT.read_text().split("\n", 1)[1]
    assert f"```bash\n{body}```" in readme


@pytest.mark.parametrize("readme_path", ["clients/agentctl/README.md", "README.md"])
def test_readme_python_example_runs(sandbox: Sandbox, readme_path: str) -> None:
    """The library example of each README works as written (auto-starting the daemon)."""
    readme = (Path(__file__).parents[2] / readme_path).read_text()
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    result = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        env=sandbox.env,
        cwd=sandbox.project,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [*MOCK_GREETING.split(), "end_turn"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="the documented here-doc uses jq")
def test_readme_here_doc_runs(sandbox: Sandbox) -> None:
    """The README's here-doc (session and prompt in one write) is answered in full."""
    readme = (Path(__file__).parents[2] / "clients" / "agentctl" / "README.md").read_text()
    script = readme.split("```sh\nsid=", 1)[1].split("```", 1)[0]
    env = dict(sandbox.env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{sandbox.env['PATH']}")
    ids = []
    for _ in range(2):  # as written, twice in a row: no "already exists" the second time
        result = subprocess.run(
            ["bash", "-c", "sid=" + script],
            capture_output=True,
            text=True,
            env=env,
            cwd=sandbox.project,
            timeout=scaled(60),
            check=False,
        )
        assert result.returncode == 0, result.stderr
        answers = {line["id"]: line for line in json_lines(result.stdout)}
        assert answers[2]["error"] is None, answers[2]
        ids.append(answers[2]["result"]["sessionId"])
        assert answers[3]["result"]["stopReason"] == "end_turn"
        assert answers[3]["error"] is None
    assert ids[0].startswith("demo-")
    assert ids[0] != ids[1]


def jq_examples() -> list[str]:
    """The README's ``send --json | jq`` examples: one script per leading comment."""
    readme = (Path(__file__).parents[2] / "clients" / "agentctl" / "README.md").read_text()
    block = readme.split("With `jq`", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return ["#" + example for example in block.split("\n#") if example.strip("# \n")]


@pytest.mark.skipif(shutil.which("jq") is None, reason="the documented examples use jq")
def test_readme_jq_examples_run(sandbox: Sandbox) -> None:
    """Each jq example of the README, as written, with the mock as the configured provider."""
    sandbox.user_config('provider = "mock"\n')
    sandbox.use_test_scenarios()
    env = dict(sandbox.env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{sandbox.env['PATH']}")
    outputs = []
    for script in jq_examples():
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True,
            text=True,
            env=env,
            cwd=sandbox.project,
            timeout=scaled(60),
            check=False,
        )
        assert result.returncode == 0, (script, result.stderr)
        outputs.append(result.stdout)
    answer, commands, ci, later = outputs
    assert answer == "I am the test mock.\n"
    assert commands == "$ echo '3 passed'\nexit 0\n"
    assert json.loads(ci) == {"stopReason": "end_turn", "cost": 0.0, "exitCode": 0}
    assert later == "I am the test mock.\n"  # piped: the answer only (the footer is on stderr)
