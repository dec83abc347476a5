"""Real ``agentd`` processes for the transport tests, in isolated short temp directories."""

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
from pathlib import Path
from typing import Any

from agentd.rpc import Connection, Router
from agentd.rpc.connect import open_connection

XDG = ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


class Sandbox:
    """Temp XDG directories (short paths) and the environment that points a daemon at them."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="d-", dir="/tmp"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTD_"))}
        for name in XDG:
            path = self.root / name[4:7].lower()
            path.mkdir(mode=0o700)
            self.env[name] = str(path)
        self.socket = self.root / "run" / "agentd" / "agentd.sock"
        self.log = self.root / "daemon.log"
        self.stderr = self.root / "stderr.txt"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "agentd", *args]

    def run(self, *args: str, timeout: float = 30, **kw: Any) -> subprocess.CompletedProcess[bytes]:
        """Run ``agentd args`` to completion."""
        return subprocess.run(
            self.argv(*args), env=self.env, capture_output=True, timeout=timeout, check=False, **kw
        )

    def start_socket_daemon(self, *extra: str, path: Path | None = None) -> subprocess.Popen[bytes]:
        """``agentd serve --socket`` in the background; returns once the socket accepts."""
        path = path or self.socket
        with self.stderr.open("ab") as err:
            process = subprocess.Popen(
                self.argv("serve", "--socket", str(path), "--log-file", str(self.log), *extra),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        wait_connectable(path, process)
        return process

    def log_events(self) -> list[dict[str, Any]]:
        """The daemon log, parsed (every line must be JSON)."""
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def wait_connectable(path: Path, process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Poll until ``path`` accepts a connection; fail if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited with {process.returncode}")
        with socket.socket(socket.AF_UNIX) as probe:
            if probe.connect_ex(str(path)) == 0:
                return
        time.sleep(0.02)
    stop(process)
    raise RuntimeError("daemon did not start listening")


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> int:
    """SIGTERM the process and wait for it (SIGKILL if it hangs); return its exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


async def spawn_stdio(
    sandbox: Sandbox, *extra: str, framing: str = "ndjson", router: Router | None = None
) -> tuple[asyncio.subprocess.Process, Connection]:
    """``agentd --stdio`` as a child, with a client Connection on its pipes."""
    with sandbox.stderr.open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            *sandbox.argv("--stdio", *extra),
            env=sandbox.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    assert process.stdout is not None
    assert process.stdin is not None
    return process, open_connection(process.stdout, process.stdin, router, framing=framing)


class SyncClient:
    """A blocking newline-delimited JSON client on a Unix socket (for fuzzing)."""

    def __init__(self, path: Path, timeout: float = 10) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_line(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def read_content_length(self) -> bytes:
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(header.split(b":", 1)[1])
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            rest += chunk
        self.buffer = rest[length:]
        return rest[:length]

    def response_to(self, request_id: Any, *, content_length: bool = False) -> dict[str, Any]:
        """Skip error replies to earlier garbage until the answer to ``request_id``."""
        while True:
            raw = self.read_content_length() if content_length else self.read_line()
            message: dict[str, Any] = json.loads(raw)
            if message.get("id") == request_id:
                return message

    def close(self) -> None:
        self.sock.close()
