"""A session's sandbox host under bubblewrap (:mod:`agentd.tools.process.host_pool`): with a
real bwrap, real bash and real files, a session's first two bash calls run in sandboxes of
their own, the later ones in one long-lived host; hosted calls keep every bash contract
(output, exit codes, signals, cwd, timeouts, cancellation) and the same confinement; a
control file that appears moves the calls to a new host; a host ends with its session, and a
dead one only costs speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.tools.base import ToolContext, ToolResult
from agentd.tools.process import host_pool, mountns
from agentd.tools.process.table import ProcessTable
from tests.harness import wait_until_async
from tests.tools.conftest import call, text_of
from tests.tools.test_tool_bash import live_processes, marker_seconds

pytestmark = pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")

WHERE = "tr '\\0' ' ' < /proc/2/cmdline; echo"
"""Prints what runs as pid 2 of the command's process namespace: the host, when hosted."""


@pytest.fixture
def workspace() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="agentd-host-", dir="/tmp")).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ctx(workspace: Path) -> Iterator[ToolContext]:
    session = f"host-{uuid.uuid4().hex[:12]}"
    yield ToolContext(cwd=workspace, session_id=session, workspace=workspace)
    host_pool.retire(session)


def _mine(ctx: ToolContext) -> list[host_pool.SandboxHost]:
    return [host for host in host_pool.hosts() if host.owner == ctx.session_id]


async def _bash(ctx: ToolContext, command: str, **args: object) -> ToolResult:
    return await call("bash", ctx, command=command, **args)


async def _hosted(ctx: ToolContext) -> host_pool.SandboxHost:
    """Two calls, after which the session's host is up; the host."""
    for _ in range(2):
        assert "hostproc" not in text_of(await _bash(ctx, WHERE))
    await _bash(ctx, "true")  # waits for the host the second call started
    hosts = _mine(ctx)
    assert len(hosts) == 1
    return hosts[0]


async def test_the_first_two_calls_run_alone_and_later_ones_in_the_host(ctx: ToolContext) -> None:
    first = await _bash(ctx, WHERE)
    assert "hostproc" not in text_of(first)
    assert _mine(ctx) == []  # a one-shot run starts no host
    second = await _bash(ctx, WHERE)
    assert "hostproc" not in text_of(second)
    third = await _bash(ctx, f"{WHERE}; echo $$")
    assert "hostproc.py" in text_of(third)
    fourth = await _bash(ctx, f"{WHERE}; echo $$")
    assert "hostproc.py" in text_of(fourth)
    assert len(_mine(ctx)) == 1
    assert text_of(third).splitlines()[1] != text_of(fourth).splitlines()[1]  # a shell each


async def test_a_hosted_call_keeps_the_bash_contract(ctx: ToolContext, workspace: Path) -> None:
    await _hosted(ctx)
    (workspace / "sub").mkdir()
    result = await _bash(ctx, "echo out; echo err >&2; cat; cd sub; exit 3")
    assert text_of(result).startswith("out\nerr\n")
    assert result.details.exit_code == 3
    assert ctx.cwd == workspace / "sub"
    assert "TMPDIR=" in text_of(await _bash(ctx, "env | grep ^TMPDIR="))
    killed = await _bash(ctx, "kill -TERM $$")
    assert killed.details.signal == "SIGTERM"
    assert killed.details.exit_code is None
    assert "hostproc" in text_of(await _bash(ctx, WHERE))


async def test_a_hosted_call_keeps_the_confinement(ctx: ToolContext, workspace: Path) -> None:
    (workspace / ".agentd.toml").write_text("max_turns = 3\n")
    outside = Path(tempfile.mkdtemp(prefix="agentd-out-", dir="/tmp"))
    try:
        await _hosted(ctx)
        result = await _bash(
            ctx,
            f"{WHERE}; echo x > .agentd.toml; touch {outside}/escaped; echo ok > fine.txt; "
            "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1",
        )
        text = text_of(result)
        assert "hostproc" in text
        assert "Read-only file system" in text
        assert "PermissionError" in text  # no Unix socket from inside
        assert not (outside / "escaped").exists()
        assert (workspace / ".agentd.toml").read_text() == "max_turns = 3\n"
        assert (workspace / "fine.txt").read_text() == "ok\n"
    finally:
        shutil.rmtree(outside, ignore_errors=True)


async def test_a_timeout_kills_the_hosted_tree(ctx: ToolContext) -> None:
    await _hosted(ctx)
    seconds = marker_seconds()
    result = await _bash(ctx, f"sleep {seconds} & sleep {seconds}", timeout=1)
    assert result.details.timed_out
    await wait_until_async(lambda: not live_processes(f"sleep {seconds}"), what="tree killed")


async def test_cancelling_a_hosted_call_kills_it(ctx: ToolContext) -> None:
    await _hosted(ctx)
    seconds = marker_seconds()
    running = asyncio.ensure_future(_bash(ctx, f"sleep {seconds}"))
    await wait_until_async(lambda: live_processes(f"sleep {seconds}"), what="the command runs")
    running.cancel()
    try:
        got = await running
    except asyncio.CancelledError:
        got = None
    assert got is None, text_of(got)
    await wait_until_async(lambda: not live_processes(f"sleep {seconds}"), what="it was killed")


async def test_a_control_file_that_appears_moves_the_calls_to_a_new_host(
    ctx: ToolContext, workspace: Path
) -> None:
    old = await _hosted(ctx)
    made = await _bash(ctx, "mkdir .git && touch .git/inside && echo made")
    assert "made" in text_of(made)
    for _ in range(3):  # own sandbox, own sandbox (starting a host), the new host
        result = await _bash(ctx, f"{WHERE}; touch .git/planted 2>&1")
        assert "Read-only file system" in text_of(result)
    assert "hostproc" in text_of(result)
    assert not (workspace / ".git" / "planted").exists()
    hosts = _mine(ctx)
    assert len(hosts) == 2
    assert old in hosts


async def test_a_host_ends_with_its_session_and_takes_its_jobs(ctx: ToolContext) -> None:
    host = await _hosted(ctx)
    seconds = marker_seconds()
    await _bash(ctx, f"sleep {seconds} > /dev/null 2>&1 &")
    assert live_processes(f"sleep {seconds}")  # a job left running stays for the session
    await ProcessTable(ctx.session_id).close(grace=1)
    await wait_until_async(lambda: host.process.poll() is not None, what="the host ended")
    await wait_until_async(lambda: not live_processes(f"sleep {seconds}"), what="its job ended")
    assert _mine(ctx) == []


async def test_a_dead_host_only_costs_speed(ctx: ToolContext) -> None:
    host = await _hosted(ctx)
    os.kill(host.process.pid, signal.SIGKILL)
    await wait_until_async(lambda: not host.alive, what="the pool saw the host end")
    result = await _bash(ctx, f"{WHERE}; echo still works")
    assert "still works" in text_of(result)
    assert "hostproc" not in text_of(result)  # its own sandbox, and a new host starting
    assert "hostproc" in text_of(await _bash(ctx, WHERE))


async def test_a_host_that_dies_before_serving_is_not_tried_again(ctx: ToolContext) -> None:
    """A host that ends before its first command (it cannot run here) leaves the session's
    calls in sandboxes of their own, without a new host tried for every call."""
    for _ in range(2):
        await _bash(ctx, "true")
    host = await wait_until_async(lambda: next(iter(_mine(ctx)), None), what="the host is up")
    os.kill(host.process.pid, signal.SIGKILL)
    await wait_until_async(lambda: not host.alive, what="the pool saw the host end")
    for _ in range(3):
        result = await _bash(ctx, f"{WHERE}; echo ran")
        assert "ran" in text_of(result)
        assert "hostproc" not in text_of(result)
    assert _mine(ctx) == []


async def test_a_host_whose_bwrap_ends_first_is_seen_ended_and_its_group_killed() -> None:
    """When the host's ``bwrap`` is killed before its sandbox armed ``--die-with-parent``,
    what it started lives on and holds the channel open: the pool sees the end on the
    process itself, kills the process group, and counts the host ended."""
    import socket
    import subprocess

    seconds = marker_seconds()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setblocking(False)
    leader = subprocess.Popen(  # the leader ends; its child keeps the channel's other end
        ["sh", "-c", f"sleep {seconds} & echo $! ; exec sleep {seconds}"],
        stdout=subprocess.PIPE, start_new_session=True, pass_fds=(theirs.fileno(),),
    )  # fmt: skip
    theirs.close()
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    host = host_pool.SandboxHost(leader, ours, owner="nobody")
    try:
        os.kill(leader.pid, signal.SIGKILL)
        await wait_until_async(lambda: not host.alive, what="the pool saw the host end")
        await wait_until_async(lambda: not live_processes(f"sleep {seconds}"), what="group gone")
        with pytest.raises(host_pool.HostEnded):
            await host.start(["true"], Path("/"), {}, 1, 1)
    finally:
        host.close()
        leader.stdout.close()
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)


async def test_a_launch_given_up_with_its_loop_leaves_no_host(workspace: Path) -> None:
    """The loop ends (the daemon stops, a test ends) while a host is starting in the
    background: the host is hung up as soon as it exists, its process reaped and its channel
    closed (not left for the garbage collector, which warns of both)."""
    wrapper = mountns.wrapper(workspace, [])
    owner = f"host-{uuid.uuid4().hex[:12]}"

    async def two_calls() -> None:  # the second starts the host in the background
        for _ in range(2):
            assert await host_pool.host_for(wrapper, owner) is None

    try:
        await asyncio.to_thread(asyncio.run, two_calls())  # which cancels the launch at its end
        await wait_until_async(lambda: not live_processes(str(workspace)), what="no host left")
    finally:
        host_pool.retire(owner)


async def test_sessions_do_not_share_a_host(workspace: Path) -> None:
    contexts = [
        ToolContext(cwd=workspace, session_id=f"host-{uuid.uuid4().hex[:12]}", workspace=workspace)
        for _ in range(2)
    ]
    try:
        hosts = [await _hosted(one) for one in contexts]
        assert hosts[0] is not hosts[1]
    finally:
        for one in contexts:
            host_pool.retire(one.session_id)


def test_the_host_program_runs_requests_and_ends_when_idle(tmp_path: Path) -> None:
    """The host program alone (no sandbox): a request runs with the descriptors it carries,
    the started report names the shell's pid in the kernel's credentials, the exit report
    its status; with nothing to do for its idle time the program exits."""
    import array
    import marshal
    import socket
    import subprocess
    import sys

    from agentd.tools.process.hostproc import EXITED, REPORT, STARTED

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    program = Path(host_pool.__file__).with_name("hostproc.py")
    host = subprocess.Popen(
        [sys.executable, "-I", "-S", str(program), str(theirs.fileno()), "0.5"],
        pass_fds=(theirs.fileno(),),
    )
    theirs.close()
    out_read, out_write = os.pipe()
    cwd_read, cwd_write = os.pipe()
    request = {"id": 7, "argv": ["/bin/sh", "-c", "pwd >&3; echo $X; exit 4"],
               "cwd": str(tmp_path), "env": {"X": "hello"}}  # fmt: skip
    fds = array.array("i", [out_write, cwd_write])
    ours.sendmsg([marshal.dumps(request)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    os.close(out_write)
    os.close(cwd_write)
    ours.settimeout(30)
    data, ancillary, _, _ = ours.recvmsg(64, socket.CMSG_SPACE(12))
    assert REPORT.unpack(data)[:2] == (STARTED, 7)
    pid = host_pool._sender_pid(ancillary)
    assert pid is not None
    assert pid != host.pid
    data, _, _, _ = ours.recvmsg(64, socket.CMSG_SPACE(12))
    assert REPORT.unpack(data) == (EXITED, 7, 4)
    with os.fdopen(out_read, "rb") as out, os.fdopen(cwd_read, "rb") as cwd:
        assert out.read() == b"hello\n"
        assert cwd.read() == f"{tmp_path}\n".encode()
    assert host.wait(timeout=30) == 0  # idle for 0.5 s: it ended by itself
    ours.close()
