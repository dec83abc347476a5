"""A real ``agentd`` per test, in isolated XDG directories, driven through AgentClient."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agentctl.client import AgentClient, PermissionHandler, connect, spawn_stdio
from agentd.protocol.trust_list import add_trusted

FAST_RETRIES = "[retry]\nmax_attempts = 3\nbase_delay_ms = 10\nmax_delay_ms = 50\n"
BUILTIN_SCENARIOS = Path(__file__).parents[2] / "daemon/agentd/mockllm/scenarios.json"


def _call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    arguments = json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


EXTRA_SCENARIOS = [
    {
        "name": "brief-pause",
        "trigger": "take a moment",
        "steps": [
            {
                "chunk_delay_ms": 40,
                "chunk_size": 4,
                "response": {"content": "Let me think about this for a moment."},
            }
        ],
    },
    {
        "name": "sleepy-bash",
        "trigger": "sleep in bash",
        "steps": [
            {
                "response": {
                    "content": "Sleeping.",
                    "tool_calls": [_call("bash", {"command": "sleep 30"})],
                }
            },
            {"response": {"content": "Woke up."}},
        ],
    },
    {
        "name": "marked-sleepy-bash",
        "trigger": "nap in bash after a mark",
        "steps": [
            {
                "response": {
                    "content": "Sleeping.",
                    "tool_calls": [_call("bash", {"command": "touch bash-started; sleep 30"})],
                }
            },
            {"response": {"content": "Woke up."}},
        ],
    },
    {
        "name": "write-note",
        "trigger": "write a note",
        "steps": [
            {
                "response": {
                    "content": "Writing.",
                    "tool_calls": [_call("write", {"path": "note.txt", "content": "noted\n"})],
                }
            },
            {"response": {"content": "Written."}},
        ],
    },
    {
        "name": "write-two-notes",
        "trigger": "write two notes",
        "steps": [
            {
                "response": {
                    "content": "Writing both.",
                    "tool_calls": [
                        _call("write", {"path": "a.txt", "content": "a\n"}, "call_a"),
                        _call("write", {"path": "b.txt", "content": "b\n"}, "call_b"),
                    ],
                }
            },
            {"response": {"content": "Both written."}},
        ],
    },
    {
        "name": "leak-key",
        "trigger": "print the key",
        "steps": [
            {
                "response": {
                    "content": "Printing.",
                    "tool_calls": [
                        _call(
                            "bash", {"command": "echo key=sk-abcdefghijklmnopqrstuvwxyz0123456789"}
                        )
                    ],
                }
            },
            {"response": {"content": "Printed."}},
        ],
    },
]


class Home:
    """Short temp dirs for the daemon's runtime, state, data and config, plus a project."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="e2e-", dir="/tmp"))
        self.project = self.root / "proj"
        self.project.mkdir()
        (self.project / ".agentd.toml").write_text(FAST_RETRIES)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTD_"))}
        for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            path = self.root / name[4:7].lower()
            path.mkdir(mode=0o700)
            self.env[name] = str(path)
        add_trusted(self.project, self.env)  # tests of untrusted projects use other folders
        self.socket = str(self.root / "run" / "agentd.sock")
        self.sessions = self.root / "dat" / "agentd" / "sessions"
        scenarios = json.loads(BUILTIN_SCENARIOS.read_text())
        scenarios["scenarios"] = EXTRA_SCENARIOS + scenarios["scenarios"]
        (self.root / "scenarios.json").write_text(json.dumps(scenarios))
        self.env["AGENTD_MOCK_SCENARIOS"] = str(self.root / "scenarios.json")

    def start_socket_daemon(self) -> subprocess.Popen[bytes]:
        """``agentd serve --socket`` as a child process; returns once the socket accepts."""
        with open(self.root / "daemon.log", "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "agentd", "serve", "--socket", self.socket],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError((self.root / "daemon.log").read_text())
            with socket.socket(socket.AF_UNIX) as probe:
                if probe.connect_ex(self.socket) == 0:
                    return process
            time.sleep(0.02)
        stop(process)
        raise RuntimeError("daemon did not start")

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        process.wait(timeout=10)


@asynccontextmanager
async def stdio_client(
    home: Home, permission_handler: PermissionHandler | None = None
) -> AsyncIterator[AgentClient]:
    """A private ``agentd serve --stdio`` for one test."""
    client = await spawn_stdio(
        env=home.env,
        cwd=str(home.project),
        log_path=home.root / "daemon.log",
        permission_handler=permission_handler,
    )
    try:
        yield client
    finally:
        await client.close()


@asynccontextmanager
async def socket_client(
    home: Home, permission_handler: PermissionHandler | None = None
) -> AsyncIterator[AgentClient]:
    client = await connect(home.socket, autostart=False, permission_handler=permission_handler)
    try:
        yield client
    finally:
        await client.close()


async def new_session(client: AgentClient, home: Home, **params: Any) -> str:
    params = {"cwd": str(home.project), "provider": "mock", **params}
    info = await client.call("session/new", params)
    return str(info["sessionId"])


async def run(
    client: AgentClient, session_id: str, text: str, timeout: float = 30
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Prompt and collect this session's events up to agent_end; returns (result, events)."""
    stream = client.raw_events(session_id)
    try:
        result = await asyncio.wait_for(
            client.call("session/prompt", {"sessionId": session_id, "text": text}), timeout
        )
        events = await drain(stream, until="agent_end")
    finally:
        stream.close()
    return result, events


async def start_run(
    client: AgentClient, session_id: str, text: str, *, until: str
) -> tuple[Any, asyncio.Task[Any]]:
    """Start a prompt and wait for its first ``until`` event; returns (event stream, the
    pending prompt call)."""
    stream = client.raw_events(session_id)
    prompt = asyncio.create_task(
        client.call("session/prompt", {"sessionId": session_id, "text": text})
    )
    await drain(stream, until=until)
    return stream, prompt


async def drain(stream: Any, until: str, timeout: float = 10) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []

    async def collect() -> None:
        async for params in stream:
            events.append(params)
            if params["event"]["type"] == until:
                return

    await asyncio.wait_for(collect(), timeout)
    return events


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["type"] for e in events]


async def wait_for_file(path: Path, timeout: float = 10) -> None:
    """Wait until ``path`` exists (a command the test started has reached that point)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout} s")
        await asyncio.sleep(0.01)
