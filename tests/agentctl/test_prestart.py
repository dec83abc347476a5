"""The early start of a private daemon (``agentctl.prestart``), with real daemon processes."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from agentctl import launch, prestart
from agentctl.client import spawn_stdio
from agentd.protocol.methods import PromptParams, SessionNewParams
from tests.agentctl.harness import Sandbox
from tests.harness import wait_until


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["send", "--daemon-process", "hi"], True),
        (["send", "--stdio", "hi"], False),  # the session runs in agentctl's own process
        (["chat", "--stdio"], True),
        (["send", "hi"], False),
        (["sessions", "--stdio"], False),
        (["send", "--daemon-process", "--help"], False),
        (["send", "--daemon-process", "--cwd", "/tmp", "hi"], False),
        (["send", "--daemon-process", "--cwd=/tmp", "hi"], False),
        (["send", "--", "--daemon-process"], False),
        ([], False),
    ],
)
def test_which_command_lines_start_a_daemon_early(args: list[str], wanted: bool) -> None:
    assert prestart.wants_private_daemon(args) is wanted


@pytest.fixture
def in_sandbox(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """This process runs in the sandbox: its environment and its project directory."""
    for name, value in sandbox.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(sandbox.project)
    return sandbox


def _exited(pid: int, timeout: float = 10.0) -> bool:
    """True once child ``pid`` has exited (it is collected); False after ``timeout`` s."""
    try:
        wait_until(lambda: os.waitpid(pid, os.WNOHANG)[0], timeout, f"pid {pid} to exit")
    except TimeoutError:
        return False
    return True


def test_the_early_daemon_is_the_one_the_client_uses(in_sandbox: Sandbox) -> None:
    prestart.start_early(["send", "--daemon-process", "hi"])
    early = prestart._early
    assert early is not None

    async def use() -> tuple[int, int, str]:
        client = await spawn_stdio(cwd=str(in_sandbox.project), log_path=launch.private_log())
        process = client.process
        assert process is not None
        async with client:
            info = await client.sessions.create(
                SessionNewParams(cwd=str(in_sandbox.project), provider="mock")
            )
            result = await client.sessions.prompt(
                PromptParams(session_id=info.session_id, text="hi")
            )
        code = await process.wait()
        return getattr(process, "pid", -1), code, result.stop_reason

    pid, code, last = asyncio.run(use())
    assert (pid, code, last) == (early.pid, 0, "end_turn")
    assert prestart._early is None
    assert "daemon started" in in_sandbox.log.read_text()


def test_an_early_daemon_that_does_not_match_is_discarded(in_sandbox: Sandbox) -> None:
    prestart.start_early(["send", "--daemon-process", "hi"])
    early = prestart._early
    assert early is not None
    elsewhere = in_sandbox.root / "elsewhere"
    elsewhere.mkdir()

    async def use() -> int:
        client = await spawn_stdio(cwd=str(elsewhere), log_path=launch.private_log())
        async with client:
            await client.status()
        process = client.process
        assert process is not None
        return getattr(process, "pid", -1)

    assert asyncio.run(use()) != early.pid
    assert _exited(early.pid), "the discarded daemon did not exit"


def test_a_usage_error_leaves_no_daemon_behind(sandbox: Sandbox) -> None:
    mark = f"agentd-prestart-{os.getpid()}-{time.monotonic_ns()}"
    sandbox.env["AGENTD_TEST_MARK"] = mark
    result = sandbox.run("send", "--daemon-process", "--no-such-flag", "hi")
    assert result.returncode == 2
    assert "--no-such-flag" in result.stderr

    def marked_daemons() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if f"AGENTD_TEST_MARK={mark}".encode() in environ.split(b"\0"):
                found.append(int(entry.name))
        return found

    wait_until(lambda: not marked_daemons(), 10, "the early daemon to exit", 0.05)
