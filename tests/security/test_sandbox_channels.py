"""Nothing inside the workspace sandbox reaches the daemon: a program the model runs with
``bash`` (:mod:`tests.security.channel_probe`) tries the daemon's Unix socket by its path,
through ``/proc/<daemon pid>/root``, ``/proc/<other pid>/root`` and ``/proc/self/fd``, reads
the TCP token file (directly and through ``/proc``), connects over loopback TCP to a
``--tcp`` daemon (with the right token, as if it had leaked), and to an abstract Unix
socket. Under bubblewrap and under the Landlock fallback (a ``bwrap`` that cannot run first
on the daemon's PATH), every way is blocked; with ``sandbox_network = true`` ordinary
loopback TCP works while the daemon's port still refuses the command.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.hardening import landlock_abi
from agentd.tools.process import mountns
from tests.harness import Home, new_session, run, socket_client, stop
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
needs_bwrap = pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")
needs_landlock = pytest.mark.skipif(landlock_abi() < 6, reason="needs Landlock ABI 6")
PROBE = Path(__file__).with_name("channel_probe.py")
TRIGGER = "probe the daemon"
WAYS = [
    "unix-path", "unix-proc-root", "unix-proc-fd", "unix-parent-root", "token-file",
    "token-proc-root", "tcp-daemon", "abstract", "socket-file", "daemon-proc",
]  # fmt: skip


def _scenario(hosted: bool = False) -> dict[str, Any]:
    """One bash call running the probe; ``hosted``: as the session's third call, which runs
    in the session's sandbox host (the command checks it does, or prints nothing)."""
    command = f"{sys.executable} {PROBE}"
    warm_up: list[dict[str, Any]] = []
    if hosted:
        command = f"grep -q hostproc /proc/2/cmdline && {command}"
        calls = [tool_call("bash", {"command": "true"}, f"w{n}") for n in (1, 2)]
        warm_up = [{"response": {"content": "", "tool_calls": [call]}} for call in calls]
    steps = [
        *warm_up,
        {
            "response": {
                "content": "Probing.",
                "tool_calls": [tool_call("bash", {"command": command}, "p1")],
            }
        },
    ]
    return {
        "name": "probe",
        "trigger": TRIGGER,
        "steps": [*steps, {"response": {"content": "done"}}],
    }


class _Listeners:
    """An abstract Unix socket and a plain loopback TCP server, both answering ``hi``."""

    def __init__(self) -> None:
        self.abstract = f"agentd-probe-{secrets.token_hex(6)}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract)
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        for server in (self.unix, self.tcp):
            server.listen()
            threading.Thread(target=self._serve, args=(server,), daemon=True).start()

    @staticmethod
    def _serve(server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hi\n")

    def close(self) -> None:
        self.unix.close()
        self.tcp.close()


@pytest.fixture
def listeners() -> Iterator[_Listeners]:
    made = _Listeners()
    yield made
    made.close()


async def _probe(home: Home, listeners: _Listeners, hosted: bool = False) -> dict[str, str]:
    """Start a socket daemon and a TCP daemon, run the probe in a sandboxed session of the
    first; its lines by way."""
    home.use_scenarios([_scenario(hosted)])
    # the TCP daemon keeps its token where a daemon does by default (the session's daemon
    # hides its own configured paths and the default places, not another one's --token-file)
    home.tcp_token_file = home.runtime_dir / "agentd" / "tcp.token"
    daemon = home.start_socket_daemon()
    tcp_daemon, port = home.start_tcp_daemon()
    try:
        targets = {
            "socket": str(home.socket), "daemon_pid": daemon.pid, "test_pid": os.getpid(),
            "token_file": str(home.tcp_token_file), "leaked_token": home.tcp_token(),
            "tcp_port": port, "abstract": listeners.abstract, "web_port": listeners.port,
        }  # fmt: skip
        (home.project / "probe.json").write_text(json.dumps(targets))
        async with socket_client(home) as client:
            sid = await new_session(client, home, sandbox="workspace", permissionMode="auto")
            _, events = await run(client, sid, TRIGGER, timeout=120)
    finally:
        stop(tcp_daemon)
        stop(daemon)
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    text = " ".join(part.get("text", "") for part in ends[-1]["result"])
    lines = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    assert set(WAYS) <= set(lines), text
    return lines


def _reached(lines: dict[str, str]) -> list[str]:
    return [f"{way}: {lines[way]}" for way in WAYS if lines[way].startswith("REACHED")]


@needs_bwrap
@pytest.mark.parametrize("hosted", [False, True], ids=["own-sandbox", "sandbox-host"])
async def test_bubblewrap_keeps_the_command_off_the_daemon(
    listeners: _Listeners, hosted: bool
) -> None:
    with Home() as home:
        lines = await _probe(home, listeners, hosted)
    assert _reached(lines) == []
    assert lines["tcp-other"].startswith("blocked")  # no network unless the rules allow it


@needs_bwrap
async def test_allowed_network_reaches_loopback_but_not_the_daemon(listeners: _Listeners) -> None:
    with Home() as home:
        home.user_config("[tools]\nsandbox_network = true\n")
        lines = await _probe(home, listeners)
        refused = [
            e for e in home.log_events() if e.get("event") == "peer rejected: a tool process"
        ]
    assert _reached(lines) == []
    assert lines["tcp-other"].startswith("REACHED")  # legit networked commands work
    assert refused, "the TCP daemon saw and refused the tool process"


@needs_landlock
async def test_landlock_fallback_keeps_the_command_off_the_daemon(listeners: _Listeners) -> None:
    with Home() as home:
        fake = home.root / "nobwrap"
        fake.mkdir()
        (fake / "bwrap").write_text("#!/bin/sh\nexit 1\n")
        (fake / "bwrap").chmod(0o755)
        home.env["PATH"] = f"{fake}:{home.env['PATH']}"
        lines = await _probe(home, listeners)
    # Landlock cannot hide files: the token file and the socket are there to see, and every
    # way to use them (the socket, the port) stays closed.
    hidden_only_by_bwrap = ("token-file", "socket-file", "daemon-proc")
    assert [r for r in _reached(lines) if not r.startswith(hidden_only_by_bwrap)] == []
    assert lines["tcp-other"].startswith("blocked")


_CLIENT = """
import socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
sock.settimeout(10)
try:
    sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\\n')
    print(repr(sock.recv(65536)))
except OSError as error:  # the daemon closed at once: a reset
    print(f"closed: {error}")
"""


def test_a_tool_process_is_refused_on_the_socket() -> None:
    """Defence in depth, without any sandbox: a process carrying a tool-run marker (as every
    bash call, hook and MCP server of a session does) is disconnected at once; the same
    client without it is answered."""
    with Home() as home:
        daemon = home.start_socket_daemon()
        try:
            answers = {}
            for name, extra in (("plain", {}), ("marked", {"AGENTD_TOOL_RUN": "1-abc"})):
                ran = subprocess.run(
                    [sys.executable, "-c", _CLIENT, str(home.socket)],
                    env={**home.env, **extra}, capture_output=True, text=True, timeout=30,
                )  # fmt: skip
                answers[name] = ran.stdout.strip()
            refused = [
                e for e in home.log_events() if e.get("event") == "peer rejected: a tool process"
            ]
        finally:
            stop(daemon)
    assert '"result"' in answers["plain"]
    assert answers["marked"] == "b''" or answers["marked"].startswith("closed:"), answers
    assert refused
    assert "tool call" in refused[0]["reason"]
