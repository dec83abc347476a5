"""The bash tool with a real bash: cwd, streaming, limits, timeouts, cancellation, env."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from agentd.permissions.policy import PermissionPolicy
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from tests.harness import scaled, wait_until_async
from tests.tools.conftest import call, text_of


def live_processes(marker: str) -> list[int]:
    """Pids of running (not zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def marker_seconds() -> str:
    """A sleep duration nobody else uses, to find our processes in /proc."""
    return f"{3000 + uuid.uuid4().int % 5000}.{uuid.uuid4().int % 1000:03d}"


async def test_output_exit_code_and_details(ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="echo out; echo err >&2; exit 3")
    assert not result.is_error
    assert text_of(result) == "out\nerr\n[Exit code 3.]"
    assert result.details.exit_code == 3
    assert result.details.timed_out is False
    assert result.details.duration_ms >= 0


async def test_no_output_and_stdin_is_empty(ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="cat")
    assert text_of(result) == "(no output)"
    assert result.details.exit_code == 0


async def test_cwd_persists_env_does_not(work: Path, ctx: ToolContext) -> None:
    (work / "sub").mkdir()
    first = await call("bash", ctx, command="cd sub && export FOO=bar")
    assert ctx.cwd == work / "sub"
    assert "Working directory is now" in text_of(first)
    second = await call("bash", ctx, command='pwd; echo "foo=${FOO:-unset}"')
    assert text_of(second) == f"{work / 'sub'}\nfoo=unset"
    (work / "sub" / "x.txt").write_text("hi\n")
    assert text_of(await call("read", ctx, path="x.txt")) == "     1\thi"


async def test_cwd_kept_after_failing_command_that_changed_it(work: Path, ctx: ToolContext) -> None:
    (work / "sub").mkdir()
    await call("bash", ctx, command="cd sub; false")
    assert ctx.cwd == work / "sub"


async def test_timeout_kills_the_whole_tree(ctx: ToolContext) -> None:
    marker = marker_seconds()
    started = time.monotonic()
    result = await call(
        "bash", ctx, command=f"sleep {marker} & sleep {marker}; echo never", timeout=0.5
    )
    assert time.monotonic() - started < scaled(5)
    assert result.details.timed_out is True
    assert "Timed out after 0.5 s" in text_of(result)
    assert not result.is_error
    assert live_processes(marker) == []


async def test_term_ignoring_children_get_killed_after_grace(ctx: ToolContext) -> None:
    marker = marker_seconds()
    ctx.settings.bash_kill_grace = 0.3
    command = f"bash -c 'trap \"\" TERM; sleep {marker}' & sleep {marker}"
    result = await call("bash", ctx, command=command, timeout=0.3)
    assert result.details.timed_out is True
    assert live_processes(marker) == []


async def test_cancel_kills_the_tree(ctx: ToolContext) -> None:
    marker = marker_seconds()
    task = asyncio.create_task(call("bash", ctx, command=f"sleep {marker} & sleep {marker}"))
    await wait_until_async(lambda: len(live_processes(marker)) >= 3, 10, "the tree to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_processes(marker) == []


async def test_no_registry_entry_is_left_after_a_call_or_a_cancel(work: Path) -> None:
    """While a command runs, the process registry holds its entry (a daemon started after a
    crash of this one ends what it names); once the call has ended, or was cancelled, the
    entry is gone."""
    registry = work / "procs"
    settings = ToolSettings(process_registry=registry)
    ctx = ToolContext(cwd=work, session_id="test", spill_dir=work / ".spill", settings=settings)
    marker = marker_seconds()
    task = asyncio.create_task(call("bash", ctx, command=f"sleep {marker}"))
    await wait_until_async(
        lambda: registry.is_dir() and any(registry.iterdir()), 10, "the call's entry"
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert list(registry.iterdir()) == []
    for _ in range(3):
        assert text_of(await call("bash", ctx, command="echo done")).startswith("done")
    assert list(registry.iterdir()) == []


async def test_timeout_kills_children_that_left_the_group(ctx: ToolContext) -> None:
    """setsid, a daemonizing double fork and an ``env -i`` grandchild are all found."""
    marker = marker_seconds()
    command = (
        f"setsid sleep {marker} & (setsid sleep {marker} &); "
        f"setsid bash -c 'env -i sleep {marker} & wait' & sleep {marker}"
    )
    result = await call("bash", ctx, command=command, timeout=0.5)
    assert result.details.timed_out is True
    assert live_processes(marker) == []


async def test_cancel_kills_children_that_left_the_group(ctx: ToolContext) -> None:
    marker = marker_seconds()
    command = f"(setsid sleep {marker} &); setsid -f sleep {marker}; sleep {marker}"
    task = asyncio.create_task(call("bash", ctx, command=command))
    await wait_until_async(lambda: len(live_processes(marker)) >= 3, 10, "the tree to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The call waits (up to KILLED_WAIT_SECONDS) for the killed tree to be gone; on a loaded
    # machine the kernel may still be tearing the last one down, so allow it a few seconds.
    await wait_until_async(lambda: live_processes(marker) == [], 5, "the tree to be gone")


async def test_streaming_updates_arrive_before_the_end(ctx: ToolContext) -> None:
    updates: list[tuple[float, str]] = []
    ctx.on_update = lambda delta: updates.append((time.monotonic(), delta))
    result = await call("bash", ctx, command="echo first; sleep 0.6; echo second")
    ended = time.monotonic()
    assert "".join(delta for _, delta in updates) == "first\nsecond\n"
    first_time = next(t for t, delta in updates if "first" in delta)
    assert ended - first_time > 0.4
    assert text_of(result) == "first\nsecond"


async def test_updates_are_throttled(ctx: ToolContext) -> None:
    updates: list[str] = []
    ctx.on_update = updates.append
    await call("bash", ctx, command="for i in $(seq 1 2000); do echo line $i; done")
    assert "".join(updates).count("\n") == 2000
    assert len(updates) < 50


async def test_huge_output_keeps_tail_and_spills(work: Path, ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="seq 1 200000")
    out = text_of(result)
    assert out.splitlines()[-2] == "200000"
    assert "showing the last 2000 of 200000 lines" in out
    assert result.details.truncated is True
    spill = Path(result.details.spill_path)
    assert spill.parent == work / ".spill"
    assert str(spill) in out
    assert spill.read_text().splitlines() == [str(n) for n in range(1, 200_001)]


async def test_wide_output_cut_by_bytes(ctx: ToolContext) -> None:
    result = await call(
        "bash", ctx, command="for i in 1 2 3; do head -c 40000 /dev/zero | tr '\\0' x; echo; done"
    )
    out = text_of(result)
    assert "50 KB limit" in out
    assert len(out.encode()) < 52 * 1024


async def test_small_output_is_not_spilled(work: Path, ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="echo hi")
    assert result.details.spill_path is None
    assert not (work / ".spill").exists()


async def test_only_allow_listed_and_passed_variables_reach_bash(ctx: ToolContext) -> None:
    ctx.env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": "sk-secret-1",
        "GITHUB_TOKEN": "ghp-secret-2",
        "LLM_AUTH_TOKEN": "secret-3",
        "DB_PASSWORD": "secret-4",
        "CORP_CRED": "secret-5",
        "DATABASE_URL": "postgres://app:secret-6@db/app",
        "SENTRY_DSN": "https://secret-7@sentry.example/1",
        "HTTPS_PROXY": "http://me:secret-8@proxy:3128",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "KEEP_ME": "visible",
    }
    ctx.settings.pass_env = ["KEEP_*"]
    out = text_of(await call("bash", ctx, command="env"))
    assert "KEEP_ME=visible" in out
    assert "LANG=C.UTF-8" in out
    assert "LC_ALL=C.UTF-8" in out
    assert "secret" not in out
    assert "GIT_TERMINAL_PROMPT=0" in out


async def test_credentials_are_scrubbed_from_daemon_env(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("PLAIN_SETTING", "not on the allow-list")
    monkeypatch.setenv("TZ", "UTC")
    out = text_of(await call("bash", ctx, command="env"))
    assert "secret" not in out
    assert "PLAIN_SETTING" not in out
    assert "TZ=UTC" in out


async def test_pass_env_keeps_a_named_credential(ctx: ToolContext) -> None:
    ctx.env = {"PATH": os.environ["PATH"], "GH_TOKEN": "wanted"}
    ctx.settings.pass_env = ["GH_TOKEN"]
    assert "GH_TOKEN=wanted" in text_of(await call("bash", ctx, command="env"))


async def test_dangerous_command_refused(ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="sudo rm  -r -f /")
    assert result.is_error
    assert "Refused" in text_of(result)
    assert "deny-list" in text_of(result)


async def test_dangerous_command_runs_when_explicitly_allowed(work: Path, ctx: ToolContext) -> None:
    command = f"git -C {work} push --force"
    assert (await call("bash", ctx, command=command)).is_error
    ctx.settings.permission_policy = PermissionPolicy("auto", allow=[f"bash({command})"])
    allowed = await call("bash", ctx, command=command)
    assert not allowed.is_error
    assert allowed.details.exit_code != 0
    ctx.settings.permission_policy = PermissionPolicy("auto", allow_dangerous=True)
    assert not (await call("bash", ctx, command=command)).is_error


async def test_killed_by_signal(ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="kill -9 $$")
    assert result.details.signal == signal.Signals.SIGKILL.name
    assert result.details.exit_code is None
    assert "Killed by SIGKILL" in text_of(result)


async def test_background_job_holding_the_pipe_does_not_hang(ctx: ToolContext) -> None:
    marker = marker_seconds()
    started = time.monotonic()
    try:
        result = await call("bash", ctx, command=f"sleep {marker} & echo started")
        assert time.monotonic() - started < scaled(3)
        assert text_of(result) == "started"
    finally:
        for pid in live_processes(marker):
            os.kill(pid, signal.SIGKILL)


async def test_timeout_is_capped(ctx: ToolContext) -> None:
    ctx.settings.bash_max_timeout = 0.3
    result = await call("bash", ctx, command="sleep 5", timeout=100)
    assert result.details.timed_out is True
    assert "capped at the 0.3 s maximum" in text_of(result)


async def test_sandbox_starts_in_workspace_and_keeps_cd_inside(
    work: Path, ctx: ToolContext
) -> None:
    ctx.workspace = work
    ctx.cwd = Path("/")
    first = await call("bash", ctx, command="pwd")
    assert text_of(first).splitlines()[0] == str(work)
    result = await call("bash", ctx, command="cd /; pwd")
    assert ctx.cwd == work
    assert "outside the workspace" in text_of(result)


async def test_deleted_cwd_falls_back(work: Path, ctx: ToolContext) -> None:
    gone = work / "gone"
    gone.mkdir()
    ctx.cwd = gone
    gone.rmdir()
    ctx.workspace = work
    result = await call("bash", ctx, command="pwd")
    assert text_of(result).startswith(str(work))
    assert "no longer exists" in text_of(result)


async def test_empty_command_refused(ctx: ToolContext) -> None:
    result = await call("bash", ctx, command="  ")
    assert result.is_error
