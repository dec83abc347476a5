"""The marker scan at a daemon's stop: every process carrying one of its markers is found, and
only processes younger than the daemon have their environment read."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from agentd.tools.process import proctree
from tests.harness import scaled, wait_until


def _start_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19])


def test_a_marked_process_is_found_unless_it_is_older_than_the_daemon() -> None:
    """SIGCONT (harmless to a sleeping process) stands for the SIGKILL of a real stop."""
    env = {**os.environ, proctree.MARKER_VAR: proctree.new_marker()}
    child = subprocess.Popen(["sleep", "60"], env=env)
    try:
        environ = Path(f"/proc/{child.pid}/environ")
        wait_until(lambda: proctree.MARKER_VAR.encode() in environ.read_bytes(), scaled(10))
        own_start = _start_ticks(os.getpid())
        found = proctree.signal_daemon_marked(os.getpid(), signal.SIGCONT, own_start)
        assert child.pid in found
        assert child.pid in proctree.signal_daemon_marked(os.getpid(), signal.SIGCONT)
        later = _start_ticks(child.pid) + 1  # a daemon that started after the child did
        assert child.pid not in proctree.signal_daemon_marked(os.getpid(), signal.SIGCONT, later)
    finally:
        child.kill()
        child.wait(scaled(10))
