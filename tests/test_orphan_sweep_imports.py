"""The start-up sweep of killed daemons' processes imports its code on the starting thread:
a module imported by two threads at once fails halfway when their imports meet in a cycle
(a partially initialised module in one, a KeyError in the other), which once failed a
daemon's first prompt while its sweep thread imported the tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from agentd.housekeeping import start_orphan_sweep
start_orphan_sweep()
print("agentd.tools.process.orphans" in sys.modules)  # at once: not left to the thread
"""


def _imported_before_the_thread(state: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(state), "HOME": str(state)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_busy_registry_is_swept_with_code_imported_by_the_caller(tmp_path: Path) -> None:
    procs = tmp_path / "agentd" / "procs"
    procs.mkdir(parents=True)
    (procs / "999999-0").write_text("*\n1\n")  # a killed daemon's entry
    assert _imported_before_the_thread(tmp_path) == "True"


def test_an_empty_registry_imports_no_tools(tmp_path: Path) -> None:
    assert _imported_before_the_thread(tmp_path) == "False"
