"""``agentctl send`` for CI: budget caps (exit 6), ``--result-file`` and ``--summary-file``,
against the real daemon and the mock LLM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.harness import scaled

pytestmark = pytest.mark.e2e

MOCK = ("--provider", "mock")
PRICED = '[prices."mock-model"]\ninput = 1000.0\noutput = 1000.0\n'


def price_the_mock(sandbox: Sandbox) -> None:
    """$1,000 per million tokens: a mock call costs about a dollar per thousand tokens."""
    sandbox.user_config(PRICED)


def test_token_cap_stops_the_run_with_exit_6(sandbox: Sandbox) -> None:
    """twenty bash turns under a 12,000-token cap: stopped early, figures in the result."""
    result_file = sandbox.root / "result.json"
    result = sandbox.run(
        "send", "--stdio", "--json", *MOCK, "--max-tokens", "12000",
        "--result-file", str(result_file), "run twenty commands",
    )  # fmt: skip
    assert result.returncode == 6, result.stderr
    line = json_lines(result.stdout)[-1]
    assert line == json.loads(result_file.read_text())
    assert line["stopReason"] == "budget"
    assert line["exitCode"] == 6
    assert "budget of 12,000 tokens" in line["error"]
    assert 1 <= line["turns"] < 20
    usage = line["usage"]
    assert sum(v for k, v in usage.items() if k.endswith("Tokens")) <= 12000
    assert Path(line["sessionFile"]).is_file()


def test_cost_cap_with_known_prices(sandbox: Sandbox) -> None:
    price_the_mock(sandbox)
    result_file = sandbox.root / "result.json"
    result = sandbox.run(
        "send", "--stdio", "-q", *MOCK, "--max-cost", "20",
        "--result-file", str(result_file), "run twenty commands",
    )  # fmt: skip
    assert result.returncode == 6, result.stderr
    line = json.loads(result_file.read_text())
    assert line["stopReason"] == "budget"
    assert 0 < line["cost"] <= 20
    assert "budget reached" in result.stderr or "budget of $20.0000" in result.stderr


def test_cost_cap_with_unknown_prices_is_refused(sandbox: Sandbox) -> None:
    """A local model with no price: the cap is refused (exit 2), never silently ignored."""
    result_file = sandbox.root / "result.json"
    result = sandbox.run(
        "send", "--stdio", *MOCK, "--max-cost", "1", "--result-file", str(result_file), "hi"
    )
    assert result.returncode == 2
    assert "prices" in result.stderr
    assert "mock-model" in result.stderr
    line = json.loads(result_file.read_text())
    assert (line["stopReason"], line["exitCode"]) == ("error", 2)


def test_summary_file_for_the_step_summary(sandbox: Sandbox) -> None:
    """The Markdown summary: how it ended, the prompt, the answer, tools, changed files."""
    summary = sandbox.root / "summary.md"
    summary.write_text("# earlier step\n")
    result = sandbox.run("send", "--stdio", *MOCK, "--summary-file", str(summary), "hello world")
    assert result.returncode == 0, result.stderr
    text = summary.read_text()
    assert text.startswith("# earlier step\n### agentd: end_turn (exit 0)")
    assert "**Prompt**\n\n```text\nhello world\n```" in text
    assert "**Tools:** `bash` ×1, `write` ×1" in text
    assert "**Files changed:** `hello.py`" in text
    assert "| Turns | 3 |" in text


def test_a_project_folder_named_agentd_does_not_shadow_the_daemon(sandbox: Sandbox) -> None:
    """--stdio spawns the daemon from the project directory: its own ``agentd`` folder (a
    CI runner's temp dir, a checkout) must not be imported in place of the package."""
    (sandbox.project / "agentd").mkdir()
    agentctl = str(Path(sys.executable).parent / "agentctl")  # as installed, not python -m
    result = subprocess.run(
        [agentctl, "send", "--stdio", *MOCK, "how are you"],
        cwd=sandbox.project,
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "doing well" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("PATH=/tmp/evil\n", "line 1: expected NAME=VALUE with a provider variable"),
        ("# the key\nOPENAI_API_KEY\n", "line 2: expected NAME=VALUE"),
        ("x" * 70_000, "larger than 65536 bytes"),
    ],
)
def test_provider_env_file_refuses_what_is_not_a_provider_variable(
    sandbox: Sandbox, content: str, message: str
) -> None:
    """--provider-env-file takes provider variables only; anything else is a usage error
    (exit 2) naming the line, and nothing runs."""
    variables = sandbox.root / "provider.env"
    variables.write_text(content)
    result = sandbox.run(
        "send", "--stdio", *MOCK, "--provider-env-file", str(variables), "hello world"
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert not (sandbox.project / "hello.py").exists()


def test_missing_provider_env_file_is_a_usage_error(sandbox: Sandbox) -> None:
    missing = sandbox.root / "nope.env"
    result = sandbox.run("send", "--stdio", *MOCK, "--provider-env-file", str(missing), "hi")
    assert result.returncode == 2
    assert f"--provider-env-file {missing}: No such file or directory" in result.stderr


def test_a_timed_out_run_reports_its_cost_and_one_stop_reason(sandbox: Sandbox) -> None:
    """--timeout with prices set: the result line and the summary say timeout (exit 4) and
    count the tokens and cost up to the cancel; cost is rounded to 6 decimals."""
    price_the_mock(sandbox)
    summary_file = sandbox.root / "summary.md"
    result = sandbox.run(
        "send", "--stdio", "--json", *MOCK, "--timeout", "1",
        "--summary-file", str(summary_file), "be slow",
    )  # fmt: skip
    assert result.returncode == 4, result.stderr
    line = json_lines(result.stdout)[-1]
    assert line["stopReason"] == "timeout"
    assert line["usage"]["inputTokens"] > 0
    assert line["cost"] > 0
    assert line["cost"] == round(line["cost"], 6)
    summary = summary_file.read_text()
    assert "### agentd: timeout (exit 4)" in summary
    assert "| Cost | $0.000000 |" not in summary
