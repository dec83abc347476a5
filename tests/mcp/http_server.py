"""``agentd mcp --http`` as a test runs it: a real process on a free loopback port, its
address read from the line it prints on stderr, its token from the token file it created."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.harness import Home, stop, wait_until

SERVING = re.compile(r"serving (http://\S+/mcp); token in (\S+)")


@dataclass
class HttpServer:
    url: str
    token_file: Path
    process: subprocess.Popen[bytes]

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/mcp")


def served(home: Home) -> tuple[str, str] | None:
    """The URL and token path ``agentd mcp --http`` printed, once it has."""
    found = SERVING.search(home.stderr.read_text()) if home.stderr.exists() else None
    return (found[1], found[2]) if found else None


@contextlib.contextmanager
def agentd_mcp_http(home: Home, *extra: str) -> Iterator[HttpServer]:
    """``agentd mcp --http 127.0.0.1:0`` with the mock provider, rooted at the project;
    stopped (SIGTERM) at the end."""
    argv = [sys.executable, "-m", "agentd", "mcp", "--provider", "mock"]
    argv += ["--root", str(home.project), "--http", "127.0.0.1:0", *extra]
    with home.stderr.open("ab") as errlog:
        process = subprocess.Popen(
            argv, env=home.env, cwd=home.project, stdin=subprocess.DEVNULL, stderr=errlog
        )
    try:
        url, token_file = wait_until(
            lambda: served(home) or _exited(process), 60, "agentd mcp --http to listen"
        )
        yield HttpServer(url, Path(token_file), process)
    finally:
        stop(process)


def _exited(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        raise AssertionError(f"agentd mcp --http exited with {process.returncode}")
