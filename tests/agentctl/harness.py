"""Running the real ``agentctl`` in an isolated home (:mod:`tests.harness`).

A :class:`Sandbox` is an :class:`~tests.harness.IsolatedHome` whose shared daemon is the one
``agentctl`` autostarts at the default socket, logging to the default log file; it runs
``agentctl`` commands in its project directory and, when closed, shuts that daemon down.
:func:`read_until` reads a live ``agentctl`` pipe until a text appears.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from tests.harness import IsolatedHome, scaled, wait_pid_exit

TEST_SCENARIOS = Path(__file__).with_name("scenarios.json")


class Sandbox(IsolatedHome):
    """Isolated directories and environment for one agentctl test."""

    prefix = "ctl-"

    def __init__(self) -> None:
        super().__init__()
        self.env.pop("NO_COLOR", None)
        self.env["PYTHONUNBUFFERED"] = "1"
        self.log = self.state_dir / "agentd" / "agentd.log"

    def use_test_scenarios(self) -> None:
        """Answer with the extra scenarios of this test folder (and the built-in ones)."""
        self.env["AGENTD_MOCK_SCENARIOS"] = str(TEST_SCENARIOS)

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "agentctl", *args]

    def run(
        self, *args: str, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run ``agentctl ARGS…`` in the project directory, stdin from ``input`` or empty."""
        return subprocess.run(
            self.command(*args),
            cwd=self.project,
            env=self.env,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=scaled(timeout),
            check=False,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start ``agentctl ARGS…`` with piped stdout/stderr (caller waits for it)."""
        return subprocess.Popen(
            self.command(*args),
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def popen_bytes(self, *args: str) -> subprocess.Popen[bytes]:
        """Start ``agentctl ARGS…`` with unbuffered byte pipes (for :func:`read_until`)."""
        return subprocess.Popen(
            self.command(*args),
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )

    def daemon_pid(self) -> int | None:
        """The pid of the sandbox's shared daemon, if one answers."""
        return asyncio.run(self._daemon(stop=False))

    def close(self) -> None:
        """Shut the sandbox's daemon down (SIGKILL if it lingers) and remove its directories."""
        pid = asyncio.run(self._daemon(stop=True))
        if pid is not None:
            wait_pid_exit(pid)
        self.cleanup()

    async def _daemon(self, *, stop: bool) -> int | None:
        """Ask the shared daemon for its pid (and to shut down); None if none answers."""
        from agentctl.client import DaemonUnavailable, connect

        if not self.socket.exists():
            return None
        try:
            client = await connect(self.socket)
        except DaemonUnavailable:
            return None
        async with client:
            pid = (await client.status()).pid
            if stop:
                await client.shutdown()
        return pid


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of ``text`` decoded as JSON (fails on a line that is not)."""
    return [json.loads(line) for line in text.splitlines() if line]


def event_types(lines: list[dict[str, Any]]) -> list[str]:
    """The ``event.type`` of each event line."""
    return [line["event"]["type"] for line in lines if "event" in line]


def read_until(
    process: subprocess.Popen[bytes], stream: str, needle: str, timeout: float = 20
) -> str:
    """Read ``process.stdout`` or ``.stderr`` (unbuffered bytes) until ``needle`` appears.

    Returns what was read; fails the test when ``timeout`` seconds pass without it.
    """
    pipe: IO[bytes] = getattr(process, stream)
    seen = b""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while needle.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} not seen in {stream} within {timeout}s: {seen[-500:]!r}"
        ready, _, _ = select.select([pipe], [], [], left)
        if ready:
            chunk = os.read(pipe.fileno(), 65536)
            assert chunk, f"{stream} closed before {needle!r}: {seen[-500:]!r}"
            seen += chunk
    return seen.decode("utf-8", "replace")
