"""Build steps the VS Code tests need, cached on disk (make rebuilds only what an input changed).

The build takes a lock (``editors/vscode/dist/.build.lock``), so test files on different xdist
workers may ask for it at once: the first builds, the others wait and then find it current.
"""

from __future__ import annotations

import fcntl
import subprocess

import pytest

from tests.vscode.codeserver import REPO


def _make(target: str) -> None:
    lock = REPO / "editors" / "vscode" / "dist" / ".build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(["make", "-s", target], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"make {target} failed:\n{done.stdout}\n{done.stderr}")


def build_extension(*, vsix: bool = False) -> None:
    """npm ci (when the lock changed) and the esbuild bundles; with ``vsix``, the package too."""
    _make("vscode-vsix" if vsix else "vscode-build")


def setup_code_server() -> None:
    """Install code-server under editors/vscode/.code-server, or skip saying why it cannot."""
    done = subprocess.run(
        ["editors/vscode/scripts/setup-code-server.sh"], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode == 3:
        pytest.skip(f"code-server cannot be installed here: {done.stderr.strip()}")
    if done.returncode != 0:
        raise RuntimeError(f"setting up code-server failed:\n{done.stderr[-4000:]}")
