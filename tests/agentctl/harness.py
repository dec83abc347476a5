"""Running the real ``agentctl`` and ``agentd`` in isolated XDG directories.

A :class:`Sandbox` owns a short temp directory (Unix socket paths stay far below 100 bytes)
with its own runtime, state, data and config directories and a project directory; every
process it starts gets that environment, so tests never touch the user's daemon or sessions.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentctl.client import DaemonUnavailable, connect

TEST_SCENARIOS = Path(__file__).with_name("scenarios.json")


class Sandbox:
    """Isolated directories and environment for one test."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ctl-", dir="/tmp"))
        self.project = self.root / "proj"
        self.project.mkdir()
        self.env = dict(os.environ)
        for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            path = self.root / name.removeprefix("XDG_").lower()[:3]
            path.mkdir(mode=0o700)
            self.env[name] = str(path)
        for name in ("AGENTD_SOCKET", "NO_COLOR", "AGENTD_MOCK_SCENARIOS"):
            self.env.pop(name, None)
        self.env["PYTHONUNBUFFERED"] = "1"

    @property
    def socket(self) -> Path:
        return Path(self.env["XDG_RUNTIME_DIR"]) / "agentd" / "agentd.sock"

    @property
    def log(self) -> Path:
        return Path(self.env["XDG_STATE_HOME"]) / "agentd" / "agentd.log"

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
            timeout=timeout,
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
        """Stop the sandbox's daemon (if any) and remove its directories."""
        pid = asyncio.run(self._daemon(stop=True))
        if pid is not None:
            _wait_exit(pid)
        shutil.rmtree(self.root, ignore_errors=True)

    async def _daemon(self, *, stop: bool) -> int | None:
        """Ask the shared daemon for its pid (and to shut down); None if none answers."""
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


def _wait_exit(pid: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


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
    import select

    pipe = getattr(process, stream)
    seen = b""
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
