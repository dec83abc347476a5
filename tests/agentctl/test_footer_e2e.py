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
