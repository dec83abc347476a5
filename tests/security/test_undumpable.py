"""A whole daemon, run as an unprivileged user, keeps its environment from the commands bash
runs: they cannot read ``/proc/$PPID/environ`` or ``/proc/<daemon pid>/environ``, because the
daemon makes itself non-dumpable at start.

As root, the daemon runs as ``nobody`` (a second uid, through
:mod:`tests.security.daemon_as_user`), as a user's own daemon would; otherwise as the user
running the tests, which is the same situation: bash's commands run as the daemon's uid. A
decoy process of that same uid, holding a marker in its environment, shows that the probe
does read what the kernel lets it read.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentctl.client import STREAM_LIMIT, AgentClient
from tests.harness import IsolatedHome, connectable, run, scaled, start_daemon

pytestmark = pytest.mark.e2e

REPO = Path(__file__).parents[2]
PLANTED = "planted-daemon-marker-7c1e5a93"
DECOY = "decoy-marker-9b2d4f"
USER = "nobody"


def _as_root() -> bool:
    return os.geteuid() == 0


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _owner() -> tuple[int, int]:
    """The uid and gid the daemon runs as."""
    if not _as_root():
        return os.getuid(), os.getgid()
    entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


class DaemonBox(IsolatedHome):
    """An isolated home (with its own HOME) owned by :func:`_owner`, for one daemon."""

    prefix = "undump-"

    def __init__(self) -> None:
        super().__init__()
        self.root.chmod(0o755)
        self.socket = self.runtime_dir / "agentd.sock"
        self.stderr = self.root / "daemon.log"
        self.scenarios = self.root / "scenarios.json"
        (self.root / "home").mkdir(mode=0o700)
        self.env |= {
            "HOME": str(self.root / "home"),
            "AGENTD_MOCK_SCENARIOS": str(self.scenarios),
            "PLANTED_MARKER": PLANTED,  # only the daemon's own environment holds it
        }
        uid, gid = _owner()
        for path in [self.root, *self.root.iterdir(), *self.config_dir.rglob("*")]:
            os.chown(path, uid, gid)  # the user config (the tests' run mode) included

    def start(self) -> subprocess.Popen[bytes]:
        """The daemon, serving the socket; returns once it accepts connections."""
        socket_path = str(self.socket)
        if _as_root():
            argv = [sys.executable, "-m", "tests.security.daemon_as_user", USER, socket_path]
        else:
            argv = self.agentd("serve", "--socket", socket_path)
        # as root it imports all it will need before dropping to nobody: slower than a plain start
        return start_daemon(
            argv, self.env, self.stderr, lambda: connectable(socket_path), timeout=30, cwd=REPO
        )

    def write_probe(self, daemon_pid: int, decoy_pid: int) -> str:
        """A scenario whose bash call reads the environment of the daemon and the decoy."""
        command = (
            "tr '\\0' '\\n' < /proc/$PPID/environ; "
            f"tr '\\0' '\\n' < /proc/{daemon_pid}/environ; "
            f"tr '\\0' '\\n' < /proc/{decoy_pid}/environ; echo probe-done"
        )
        call = {"id": "c1", "type": "function"}
        call["function"] = {"name": "bash", "arguments": json.dumps({"command": command})}
        scenario = {
            "name": "read-environ",
            "trigger": "read the environment",
            "steps": [
                {"response": {"content": "Reading.", "tool_calls": [call]}},
                {"response": {"content": "Done."}},
            ],
        }
        self.scenarios.write_text(json.dumps({"scenarios": [scenario]}))
        return command

    def logs(self) -> str:
        """The daemon's stderr and its log file."""
        paths = [self.stderr, *sorted(self.state_dir.rglob("*.log"))]
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())


@pytest.fixture
def box() -> Iterator[DaemonBox]:
    made = DaemonBox()
    try:
        yield made
    finally:
        print(made.logs())  # shown when the test fails
        made.cleanup()


def _decoy() -> subprocess.Popen[bytes]:
    """A dumpable process of the daemon's uid with a marker in its environment."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "DECOY_MARKER": DECOY}
    if not _as_root():
        return subprocess.Popen(["sleep", "60"], env=env)
    uid, gid = _owner()
    return subprocess.Popen(["sleep", "60"], env=env, user=uid, group=gid, extra_groups=[])


def _connect_as(uid: int, gid: int, path: str) -> socket.socket:
    """A connection to the daemon's socket made by a process of ``uid`` (the daemon accepts
    only its own user, by ``SO_PEERCRED``, taken at connect time): a forked child switches
    user, connects and passes the connected socket back."""
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            with socket.socket(socket.AF_UNIX) as connection:
                connection.connect(path)
                socket.send_fds(child, [b"fd"], [connection.fileno()])
            code = 0
        finally:
            os._exit(code)
    child.close()
    with parent:
        _message, fds, _flags, _address = socket.recv_fds(parent, 2, 1)
    os.waitpid(pid, 0)
    return socket.socket(fileno=fds[0])


async def _client(path: str) -> AgentClient:
    """An initialized client of the daemon, connected as the daemon's user."""
    connection = _connect_as(*_owner(), path) if _as_root() else None
    if connection is None:
        reader, writer = await asyncio.open_unix_connection(path, limit=STREAM_LIMIT)
    else:
        reader, writer = await asyncio.open_unix_connection(sock=connection, limit=STREAM_LIMIT)
    client = AgentClient(reader, writer, transport="unix")
    await client.initialize()
    return client


def _process_uids(pid: int) -> list[int]:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("Uid:"))
    return [int(field) for field in line.split()[1:]]


@pytest.mark.skipif(_as_root() and not _has_user(USER), reason=f"no `{USER}` user")
async def test_bash_cannot_read_the_environment_of_a_whole_daemon(box: DaemonBox) -> None:
    decoy = _decoy()
    daemon = box.start()
    try:
        box.write_probe(daemon.pid, decoy.pid)
        uid, _gid = _owner()
        assert _process_uids(daemon.pid) == [uid] * 4  # real, effective, saved, filesystem
        # the kernel hands the /proc files of a non-dumpable process to root
        assert os.stat(f"/proc/{daemon.pid}/environ").st_uid == 0
        assert os.stat(f"/proc/{decoy.pid}/environ").st_uid == uid
        client = await _client(str(box.socket))
        try:
            status = await client.call("daemon/status", {})
            params: dict[str, Any] = {"cwd": str(box.project), "provider": "mock"}
            info = await client.call("session/new", params | {"permissionMode": "auto"})
            result, events = await run(client, info["sessionId"], "read the environment")
        finally:
            await client.close()
    finally:
        daemon.terminate()
        daemon.wait(timeout=scaled(10))
        decoy.kill()
        decoy.wait()
    assert status["security"]["dumpable"] is False
    assert result["stopReason"] == "end_turn", box.logs()
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    output = json.dumps(end)
    assert "probe-done" in output, box.logs()
    assert f"DECOY_MARKER={DECOY}" in output  # the probe reads what the kernel allows
    assert PLANTED not in output
    assert "Permission denied" in output
