"""A program a sandboxed command runs to reach the daemon every way it can (run by
:mod:`tests.security.test_sandbox_channels` inside the real sandbox, through the bash tool).

It reads its targets from ``probe.json`` in its working directory and prints one line per
way: ``<way>: REACHED <detail>`` when the daemon answered (or a secret was read), else
``<way>: blocked <error>``. Standard library only: it runs under the sandbox's Python.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"token":"%s"}}\n'


def _talk(sock: socket.socket, token: str = "") -> str:
    """Send ``initialize``; the first answer line (empty: the daemon closed at once)."""
    sock.settimeout(10)
    sock.sendall(INITIALIZE % token.encode())
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    sock.close()
    return answer.decode(errors="replace").strip()


def _unix(path: str) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return _talk(sock)


def _via_fd(folder: str, name: str) -> str:
    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    return _unix(f"/proc/self/fd/{fd}/{name}")


def _abstract(name: str) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("\0" + name)
    sock.settimeout(10)
    return sock.recv(100).decode(errors="replace")


def _tcp(port: int, token: str) -> str:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return _talk(sock, token)


def _exists(path: str) -> str:
    """The path when it can be seen ("" when it cannot)."""
    return path if os.path.exists(path) else ""


def _read(path: str) -> str:
    return Path(path).read_text().strip()


def _try(way: str, attempt: Callable[[], str]) -> None:
    try:
        detail = attempt()
    except Exception as error:  # every failure is a result here
        print(f"{way}: blocked {type(error).__name__}: {error}")
        return
    reached = bool(detail) and '"error"' not in detail
    print(f"{way}: {'REACHED' if reached else 'blocked'} {detail[:120]!r}")


def main() -> None:
    targets = json.loads(Path("probe.json").read_text())
    sock, pid = targets["socket"], targets["daemon_pid"]
    folder, name = os.path.split(sock)
    _try("unix-path", lambda: _unix(sock))
    _try("unix-proc-root", lambda: _unix(f"/proc/{pid}/root{sock}"))
    _try("unix-proc-fd", lambda: _via_fd(folder, name))
    _try("unix-parent-root", lambda: _unix(f"/proc/{targets['test_pid']}/root{sock}"))
    _try("token-file", lambda: _read(targets["token_file"]))
    _try(
        "token-proc-root", lambda: _read(f"/proc/{targets['test_pid']}/root{targets['token_file']}")
    )
    token = ""
    for candidate in (
        targets["token_file"],
        f"/proc/{targets['test_pid']}/root{targets['token_file']}",
    ):
        with contextlib.suppress(OSError):
            token = token or _read(candidate)
    _try("tcp-daemon", lambda: _tcp(targets["tcp_port"], token or targets["leaked_token"]))
    _try("abstract", lambda: _abstract(targets["abstract"]))
    _try("socket-file", lambda: _exists(sock))
    _try("daemon-proc", lambda: _exists(f"/proc/{pid}/root/"))
    if targets.get("web_port"):
        _try("tcp-other", lambda: _tcp_plain(targets["web_port"]))
    sys.stdout.flush()


def _tcp_plain(port: int) -> str:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(10)
    data = sock.recv(100).decode(errors="replace")
    sock.close()
    return data


if __name__ == "__main__":
    main()
