"""Tool processes die with the daemon: SIGKILL the daemon mid-command, and the shell dies at
once (PR_SET_PDEATHSIG); what it started is killed when the next daemon starts."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from agentctl.client import connect
from agentd.tools.process import mountns
from tests.e2e.test_tools import add_scenarios, scenario
from tests.harness import Home, new_session, socket_client, start_run, stop, wait_until_async

pytestmark = pytest.mark.e2e

COMMAND = "sleep 31415 & (sleep 27182; true) & wait"


def running(needle: str) -> list[int]:
    """Pids (not zombies) whose command line contains ``needle``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


async def test_tool_processes_die_with_a_killed_daemon(home: Home) -> None:
    add_scenarios(home, scenario("start sleepers", "bash", {"command": COMMAND}))
    process = home.start_socket_daemon()
    try:
        client = await connect(home.socket, autostart=False)
        sid = await new_session(client, home)
        stream, _prompt = await start_run(
            client, sid, "start sleepers", until="tool_execution_start"
        )
        await wait_until_async(lambda: running("sleep 31415") and running("sleep 27182"), 5)
        leaders = [pid for pid in running(COMMAND) if os.getpgid(pid) == pid]
        assert len(leaders) == 1
        process.send_signal(signal.SIGKILL)
        process.wait()
        stream.close()
        await client.close()
        await wait_until_async(
            lambda: leaders[0] not in running(COMMAND), 5, "the shell to die with the daemon"
        )
        process = home.start_socket_daemon()
        await wait_until_async(lambda: not running("sleep 31415"), 5)
        await wait_until_async(lambda: not running("sleep 27182"), 5)
        async with socket_client(home) as again:
            await again.call("daemon/status")
        registry = home.root / "sta" / "agentd" / "procs"
        # the start-up sweep runs beside the first answers: wait for it, not for a moment;
        # what stays is the new daemon's own entry
        own = [f"{process.pid}-0"]
        entries = lambda: [entry.name for entry in registry.iterdir()]  # noqa: E731
        await wait_until_async(lambda: entries() == own, 10, "the registry sweep")
    finally:
        stop(process)
        for pid in running("sleep 31415") + running("sleep 27182"):
            os.kill(pid, signal.SIGKILL)


async def test_mcp_and_hook_children_die_with_a_stopped_daemon(home: Home) -> None:
    """An MCP server that starts a detached child (``setsid``), and a hook that daemonizes
    one: neither carries a tool call's marker of its own, and both used to outlive the
    daemon. Stopping the daemon ends them."""
    from tests.mcp.conftest import SERVER

    server = f"setsid sleep 41421 </dev/null >/dev/null 2>&1 & exec {sys.executable} {SERVER}"
    hook_command = "setsid sleep 41422 </dev/null >/dev/null 2>&1 &"
    home.user_config(
        f'[mcp_servers.t]\ncommand = "/bin/sh"\nargs = ["-c", {json.dumps(server)}]\n\n'
        f'[[hooks.user_prompt]]\nmatcher = "*"\ncommand = {json.dumps(hook_command)}\n'
    )
    process = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await client.call("session/prompt", {"sessionId": sid, "text": "hello"})
            await wait_until_async(lambda: running("sleep 41421") and running("sleep 41422"), 30)
        stop(process)
        await wait_until_async(lambda: not running("sleep 41421"), 10, "the MCP server's child")
        await wait_until_async(lambda: not running("sleep 41422"), 10, "the hook's child")
    finally:
        for pid in running("sleep 4142"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        stop(process)


def _sandboxed_scenario(hosted: bool) -> dict[str, object]:
    """The sleepers as the session's first bash call (its own bubblewrap sandbox) or, after
    two warm-up calls, its third (in the session's sandbox host)."""
    calls = [("true", f"w{n}") for n in (1, 2)] if hosted else []
    steps: list[dict[str, object]] = []
    for command, call_id in [*calls, (COMMAND, "sleepers")]:
        arguments = json.dumps({"command": command})
        call = {"id": call_id, "type": "function",
                "function": {"name": "bash", "arguments": arguments}}  # fmt: skip
        steps.append({"response": {"content": "", "tool_calls": [call]}})
    steps.append({"response": {"content": "ok"}})
    return {"name": "sandboxed sleepers", "trigger": "sandboxed sleepers", "steps": steps}


@pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")
@pytest.mark.parametrize("hosted", [False, True], ids=["own-sandbox", "sandbox-host"])
async def test_sandboxed_tool_processes_die_with_a_killed_daemon(home: Home, hosted: bool) -> None:
    """Under the workspace sandbox bubblewrap's ``--die-with-parent`` ends the sandbox, and
    with it every process in it, when the daemon is killed; no sweep is needed."""
    add_scenarios(home, _sandboxed_scenario(hosted))
    process = home.start_socket_daemon()
    try:
        client = await connect(home.socket, autostart=False)
        sid = await new_session(client, home, sandbox="workspace", permissionMode="auto")
        stream, _prompt = await start_run(client, sid, "sandboxed sleepers", until="agent_start")
        await wait_until_async(lambda: running("sleep 31415") and running("sleep 27182"), 30)
        hosts = running("hostproc.py")
        assert bool(hosts) == hosted
        process.send_signal(signal.SIGKILL)
        process.wait()
        stream.close()
        await client.close()
        gone = lambda: not running("sleep 31415") and not running("sleep 27182")  # noqa: E731
        await wait_until_async(gone, 10, "the sandbox to die with the daemon")
        assert [pid for pid in hosts if pid in running("hostproc.py")] == []
    finally:
        stop(process)
        for pid in running("sleep 31415") + running("sleep 27182"):
            os.kill(pid, signal.SIGKILL)
