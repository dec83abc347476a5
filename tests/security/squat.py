"""A fake agentd of another uid (``nobody``) for the socket-squatting tests (needs root).

:class:`Squat` starts it: it drops to ``nobody``, creates ``BASE/agentd-0`` (0755) and its
``agentd.sock``, answers ``initialize`` as agentd would (so a client that trusted it would go
on to send its session requests, provider keys included) and reports every connection's bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec

from agentd import __version__
from agentd.protocol.lifecycle import (
    PROTOCOL_VERSION,
    InitializeResult,
    ServerCapabilities,
    ServerInfo,
)
from tests.harness import scaled

NOBODY = 65534
KEY = "sk-squat-test-0123456789abcdef"

FAKE_DAEMON = r"""
import json, os, socket, sys
folder, answer = sys.argv[1], sys.argv[2].encode()
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
os.umask(0)
os.mkdir(folder, 0o755)
path = os.path.join(folder, "agentd.sock")
server = socket.socket(socket.AF_UNIX)
server.bind(path)
os.chmod(path, 0o777)
server.listen(16)
print(json.dumps({"ready": path}), flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(5)
    received = b""
    try:
        while chunk := conn.recv(65536):
            received += chunk
            for line in chunk.splitlines():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if message.get("method") == "initialize":
                    reply = b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (message["id"], answer)
                    conn.sendall(reply)
    except OSError:
        pass
    conn.close()
    print(json.dumps({"received": received.decode("utf-8", "replace")}), flush=True)
"""
"""The attacker: drops to ``nobody``, creates FOLDER (0755) and its ``agentd.sock``, answers
``initialize`` like agentd, and prints one JSON line per connection with what it received."""


class Squat:
    """A running fake daemon of another uid; :meth:`received` stops it and returns what
    each connection sent it."""

    def __init__(self, base: Path) -> None:
        answer = msgspec.json.encode(
            InitializeResult(
                protocol_version=PROTOCOL_VERSION,
                server_info=ServerInfo(name="agentd", version=__version__),
                capabilities=ServerCapabilities(),
            )
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", FAKE_DAEMON, str(base / "agentd-0"), answer.decode()],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.socket = Path(json.loads(self.process.stdout.readline())["ready"])

    def received(self, connections: int) -> list[str]:
        """What each connection sent (an empty string: it connected and sent nothing): the
        first ``connections`` ones are waited for (the fake reports each when it ends, at the
        latest 5 s after its last byte), then the fake stops and any others are added."""
        assert self.process.stdout is not None
        lines = [self.process.stdout.readline() for _ in range(connections)]
        self.process.terminate()
        out, _ = self.process.communicate(timeout=scaled(30))
        return [json.loads(line)["received"] for line in [*lines, *out.splitlines()] if line]


def shared_tmp(root: Path) -> Path:
    """``ROOT/tmp``, world-writable and sticky like /tmp, with ROOT traversable by all."""
    folder = root / "tmp"
    folder.mkdir(mode=0o1777)
    folder.chmod(0o1777)
    root.chmod(0o711)
    return folder
