"""Hooks seen from agentctl against a real daemon: a line per block, exit code 8 (stop
reason ``blocked``) when a hook blocks the prompt, hook_result events in ``--json``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox, event_types, json_lines
from tests.hooks.conftest import hook, script

pytestmark = pytest.mark.e2e

MOCK = ("--stdio", "--provider", "mock")


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    try:
        yield box
    finally:
        box.close()


def configure(sandbox: Sandbox, hooks: str) -> None:
    sandbox.user_config(hooks)


def test_a_blocked_prompt_exits_8_with_a_block_line(sandbox: Sandbox) -> None:
    policy = script(sandbox.root, "policy.sh", 'echo "prompts may not mention prod" >&2\nexit 2\n')
    configure(sandbox, hook("user_prompt", str(policy)))
    result = sandbox.run("send", *MOCK, "deploy to prod")
    assert result.returncode == 8, result.stderr
    shown = result.stderr  # the progress lines (stdout keeps the answer)
    assert "⊘ user_prompt hook blocked the prompt: prompts may not mention prod" in shown
    assert "── blocked by a hook · 0 turns" in shown

    as_json = sandbox.run("send", *MOCK, "--json", "deploy to prod")
    assert as_json.returncode == 8
    lines = json_lines(as_json.stdout)
    assert "hook_result" in event_types(lines)
    final = lines[-1]
    assert (final["stopReason"], final["exitCode"], final["turns"]) == ("blocked", 8, 0)
    assert final["error"] == "blocked by a hook: prompts may not mention prod"


def test_a_blocked_tool_call_prints_a_line_and_the_run_goes_on(sandbox: Sandbox) -> None:
    """The built-in ``hello world`` scenario writes hello.py; a pre_tool hook on ``write``
    blocks it: one ⊘ line naming the tool and the reason, exit 0, no file."""
    policy = script(
        sandbox.root,
        "no-writes.sh",
        'echo \'{"decision": "block", "reason": "this repository is read-only"}\'\n',
    )
    configure(sandbox, hook("pre_tool", str(policy), matcher="write|edit"))
    result = sandbox.run("send", *MOCK, "hello world")
    assert result.returncode == 0, result.stderr
    blocks = [line for line in result.stderr.splitlines() if line.startswith("⊘")]
    assert len(blocks) == 1
    assert blocks[0].startswith("⊘ pre_tool hook blocked write: this repository is read-only (")
    assert not (sandbox.project / "hello.py").exists()
