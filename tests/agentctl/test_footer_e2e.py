"""The footer and exit code tell the truth: read-only refusals exit 5 with "refused", the
mock shows no cost (real daemon, pipes)."""

from __future__ import annotations

import pytest

from tests.agentctl.harness import Sandbox, json_lines

pytestmark = pytest.mark.e2e
MOCK = ("--provider", "mock")


def test_read_only_refusal_exits_5_and_the_footer_says_refused(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--stdio", *MOCK, "--permission", "read-only", "hello world")
    assert result.returncode == 5, result.stderr
    assert "── refused · " in result.stderr
    assert "── done" not in result.stderr
    assert not (sandbox.project / "hello.py").exists()
    final = json_lines(
        sandbox.run(
            "send", "--stdio", "--json", *MOCK, "--permission", "read-only", "hello world"
        ).stdout
    )[-1]
    assert final["exitCode"] == 5
    assert final["permissionsRefused"] >= 1


def test_the_mock_shows_no_cost(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--stdio", *MOCK, "how are you")
    assert result.returncode == 0
    footer = result.stderr.splitlines()[-1]
    assert footer.startswith("── done · 1 turn · ")
    assert "$" not in footer


def test_a_timed_out_run_keeps_its_token_counts(sandbox: Sandbox) -> None:
    """--timeout cuts the reply mid-stream: the footer and the result line still count the
    tokens sent (estimated for the cut call), not zero."""
    result = sandbox.run("send", "--stdio", *MOCK, "--timeout", "1", "be slow")
    assert result.returncode == 4
    footer = result.stderr.splitlines()[-1]
    assert footer.startswith("── timed out · 1 turn · ")
    assert " 0 in / " not in footer
    final = json_lines(
        sandbox.run("send", "--stdio", "--json", *MOCK, "--timeout", "1", "be slow").stdout
    )[-1]
    assert final["timedOut"] is True
    assert final["usage"]["inputTokens"] > 1000
