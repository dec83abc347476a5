"""A sandboxed session still does everything legitimate, through the real daemon and the
real bubblewrap sandbox with its namespaces and seccomp filter: build and run a program,
run a test suite that serves on loopback within the command, use ``multiprocessing`` (pipes,
``socketpair``, POSIX semaphores), read the repository with git and commit in a new
repository of its own, write its temp dir."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentd.tools.process import mountns
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
TRIGGER = "do ordinary work"
TEST_FILE = """
import socket, threading
def test_loopback():
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: server.accept()[0].sendall(b"ok"), daemon=True).start()
    assert socket.create_connection(server.getsockname()).recv(2) == b"ok"
"""
POOL = "import multiprocessing as m; print('pool', m.Pool(2).map(abs, [-1, -2]))"
PAIR = "import socket; a, b = socket.socketpair(); a.send(b'p'); print('pair', b.recv(1))"


def _command() -> str:
    parts = [
        f"{sys.executable} -m pytest -q -p no:cacheprovider t_loopback.py 2>&1 | tail -1",
        f'{sys.executable} -c "{POOL}"',
        f'{sys.executable} -c "{PAIR}"',
        "git status --short | wc -l; git log --oneline | wc -l",
        "git init -q scratch && git -C scratch -c user.name=a -c user.email=a@b commit -q "
        "--allow-empty -m x && echo committed",
        'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"',
    ]
    if shutil.which("cc"):
        parts.append("printf 'int main(void){return 0;}' > m.c && cc -o m m.c && ./m && echo built")
    return "; ".join(parts)


@pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")
async def test_a_sandboxed_session_does_ordinary_work() -> None:
    with Home() as home:
        subprocess.run(["git", "init", "-q", str(home.project)], check=True)
        (home.project / "t_loopback.py").write_text(TEST_FILE)
        call = tool_call("bash", {"command": _command(), "timeout": 120}, "b1")
        steps = [{"response": {"tool_calls": [call]}}, {"response": {"content": "ok"}}]
        home.use_scenarios([{"name": "work", "trigger": TRIGGER, "steps": steps}])
        async with stdio_client(home) as client:
            sid = await new_session(client, home, sandbox="workspace", permissionMode="auto")
            _, events = await run(client, sid, TRIGGER, timeout=180)
        project = Path(home.project)
        ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
        text = " ".join(part.get("text", "") for part in ends[0]["result"])
        assert "1 passed" in text, text
        assert "pool [1, 2]" in text
        assert "pair b'p'" in text
        assert "committed" in text
        assert "\nt\n" in f"\n{text}\n"
        if shutil.which("cc"):
            assert "built" in text
            assert (project / "m").exists()
