"""Hooks that misbehave: a timeout kills the hook's whole process group, a flood of output is
cut without holding the daemon, a crash or a bad answer is a warning; the run goes on."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentd.api.subscriber import QueueSubscriber
from agentd.hooks.answer import interpret
from agentd.hooks.process import OUTPUT_CAP, run_hook_command
from agentd.protocol.events import HookResult, SessionWarning
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.session.service import SessionService
from tests.harness import scaled, wait_until, wait_until_async
from tests.hooks.conftest import hook, script, until_end, user_hooks


async def test_a_timeout_kills_the_hook_and_its_children(tmp_path: Path) -> None:
    """The hook and a child it left in the background (same group) are both killed."""
    pid_file = tmp_path / "child.pid"
    result = await run_hook_command(
        f"sleep 300 & echo $! > {pid_file}; sleep 300",
        stdin=b"{}",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=0.5,
    )
    assert result.timed_out
    assert result.exit_code is None
    child = int(pid_file.read_text())
    assert wait_until(lambda: not Path(f"/proc/{child}").exists() or _zombie(child), 10)
    answer = interpret(result, 0.5)
    assert answer.decision == "error"
    assert answer.reason == "timed out after 0.5 s and was killed"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


async def test_a_flood_of_output_is_cut_at_the_cap(tmp_path: Path) -> None:
    """``yes`` on both streams: each keeps OUTPUT_CAP bytes, the pipes are closed past that
    (the writer dies of SIGPIPE), well before the timeout."""
    started = time.monotonic()
    result = await run_hook_command(
        "yes flood >&2 & yes flood",
        stdin=b"{}",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=scaled(30),
    )
    assert not result.timed_out
    assert time.monotonic() - started < scaled(25)
    assert len(result.stdout.encode()) == OUTPUT_CAP
    assert len(result.stderr.encode()) == OUTPUT_CAP
    assert set(result.cut) == {"stdout", "stderr"}
    answer = interpret(result, 30)
    assert answer.decision == "error"
    assert "passed 64 KiB and was cut" in (answer.reason or "")
    assert len(answer.reason or "") < 5000


async def test_a_hook_that_never_reads_stdin_still_answers(tmp_path: Path) -> None:
    """A big event (a large tool result) on stdin to a hook that ignores it."""
    payload = b'{"event":"post_tool","result":"' + b"x" * (1 << 20) + b'"}'
    result = await run_hook_command(
        "echo fine; exit 0", stdin=payload, cwd=tmp_path, env=dict(os.environ), timeout=scaled(20)
    )
    assert (result.exit_code, result.stdout) == (0, "fine\n")


async def test_a_crash_and_a_bad_answer_are_errors(tmp_path: Path) -> None:
    crashed = await run_hook_command(
        "kill -SEGV $$", stdin=b"{}", cwd=tmp_path, env=dict(os.environ), timeout=scaled(20)
    )
    assert crashed.exit_code is None
    assert interpret(crashed, 20).reason == "was killed by a signal"
    bad = await run_hook_command(
        "echo '{\"decision\": 3}'",
        stdin=b"{}",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=scaled(20),
    )
    answer = interpret(bad, 20)
    assert answer.decision == "error"
    assert "printed JSON that is not a hook answer" in (answer.reason or "")
    plain = await run_hook_command(
        "echo checked", stdin=b"{}", cwd=tmp_path, env=dict(os.environ), timeout=scaled(20)
    )
    assert interpret(plain, 20).decision == "allow"
    reason = await run_hook_command(
        "exit 2", stdin=b"{}", cwd=tmp_path, env=dict(os.environ), timeout=scaled(20)
    )
    assert interpret(reason, 20).reason == "(the hook gave no reason)"


async def test_a_hook_that_times_out_in_a_run_is_a_warning(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """A pre_tool hook past its timeout: killed, reported (``timedOut``), the call runs."""
    slow = script(xdg_home, "slow.sh", "sleep 300\n")
    user_hooks(xdg_home, hook("pre_tool", str(slow), timeout=0.5))
    queue = QueueSubscriber()
    info = await service.create(SessionNewParams(cwd=str(project), provider="mock"), queue)
    result = await service.prompt(PromptParams(session_id=info.session_id, text="list the files"))
    seen = await until_end(queue)
    assert result.stop_reason == "end_turn"
    assert (project / "out.txt").read_text() == "listed\n"
    [timed_out] = [e for e in seen if isinstance(e, HookResult)]
    assert timed_out.timed_out
    assert timed_out.exit_code is None
    assert timed_out.decision == "error"
    assert any("timed out after 0.5 s" in e.message for e in seen if isinstance(e, SessionWarning))


async def test_a_flooding_hook_in_a_run_does_not_stop_it(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    flood = script(xdg_home, "flood.sh", "yes 'policy output'\n")
    user_hooks(xdg_home, hook("post_tool", str(flood)))
    queue = QueueSubscriber()
    info = await service.create(SessionNewParams(cwd=str(project), provider="mock"), queue)
    result = await service.prompt(PromptParams(session_id=info.session_id, text="list the files"))
    seen = await until_end(queue)
    assert result.stop_reason == "end_turn"
    [flooded] = [e for e in seen if isinstance(e, HookResult)]
    assert flooded.decision == "error"
    assert "stdout passed 64 KiB" in (flooded.reason or "")
    assert len(Path(info.path).read_bytes()) < 200_000


async def test_a_cancel_during_a_hook_kills_it_and_ends_the_run(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """A run cancelled while its pre_tool hook runs ends ``cancelled`` at once; the hook's
    process is killed; the stop hook still reports how the run ended."""
    pid_file = xdg_home / "hook.pid"
    stops = xdg_home / "stops.txt"
    slow = script(xdg_home, "slow.sh", f"echo $$ > {pid_file}\nsleep 300\n")
    told = script(xdg_home, "told.sh", f"cat >> {stops}\n")
    user_hooks(xdg_home, hook("pre_tool", str(slow), timeout=300) + hook("stop", str(told)))
    info = await service.create(SessionNewParams(cwd=str(project), provider="mock"))
    run = await service.start_prompt(
        PromptParams(session_id=info.session_id, text="list the files")
    )
    assert await wait_until_async(lambda: pid_file.exists() and pid_file.read_text(), 30)
    pid = int(pid_file.read_text())
    started = time.monotonic()
    run.cancel()
    result = await run.result()
    assert result.stop_reason == "cancelled"
    assert time.monotonic() - started < scaled(20)  # not the hook's 300 s
    assert wait_until(lambda: _zombie(pid), 10)
    assert not (project / "out.txt").exists()
    assert '"stopReason":"cancelled"' in stops.read_text()
