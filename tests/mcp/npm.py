"""The npm packages of the MCP tests (the MCP Inspector, the reference servers), each folder
a ``package.json`` with its ``package-lock.json``, installed with ``npm ci`` into its
git-ignored ``node_modules``.

``make pytest`` installs them first (``make mcp-npm``); a test run without it installs a
folder on first use, once, under a file lock (parallel workers wait for one install). The
stamp ``node_modules/.lock-sha256`` records the lock file it was installed from: a changed
lock installs again. Without node or npm, or when the install fails, the tests skip and say
why.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled

HERE = Path(__file__).parent
INSPECTOR = HERE / "inspector"
REFERENCE = HERE / "reference"
NPM_CI = ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]


def node() -> str:
    """The ``node`` executable; skips the test when node or npm is missing."""
    found, npm = shutil.which("node"), shutil.which("npm")
    if found is None or npm is None:
        pytest.skip("node and npm are needed for the npm MCP packages and are not installed")
    return found


def installed(folder: Path) -> Path:
    """``folder/node_modules``, installed from ``folder/package-lock.json`` if it was not
    (or was from another lock); skips the test when the install fails."""
    node()
    modules = folder / "node_modules"
    stamp = modules / ".lock-sha256"
    want = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    with (folder / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text().strip() == want:
            return modules
        npm = shutil.which("npm")
        assert npm is not None
        done = subprocess.run(
            [npm, *NPM_CI],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=scaled(600),
            check=False,
        )
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            pytest.skip(f"npm ci in {folder.name} failed: {tail}")
        stamp.write_text(want)
    return modules
