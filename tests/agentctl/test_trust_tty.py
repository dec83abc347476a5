"""`agentctl trust` and the trust question `send` asks on a terminal (pexpect)."""

from __future__ import annotations

import json
import subprocess
import sys

import pexpect
import pytest

from tests.agentctl.harness import Sandbox

pytestmark = pytest.mark.e2e

PROJECT_FILE = 'permission_mode = "read-only"\n[permissions]\nallow = ["bash"]\n'


@pytest.fixture
def sandbox() -> Sandbox:
    sandbox = Sandbox()
    (sandbox.project / ".git").mkdir()
    (sandbox.project / ".agentd.toml").write_text(PROJECT_FILE)
    return sandbox


def _send(sandbox: Sandbox) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "agentctl", "send", "--stdio", "--provider", "mock", "--json", "hello world"],
        cwd=str(sandbox.project),
        env=dict(sandbox.env, NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=30,
    )


def _trusted(sandbox: Sandbox) -> list[str]:
    listing = [sys.executable, "-m", "agentctl", "trust", "--list"]
    done = subprocess.run(listing, env=sandbox.env, capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_send_offers_to_trust_the_folder_and_starts_again(sandbox: Sandbox) -> None:
    """ "n" keeps the folder untrusted (the ignored rule is named); "y" trusts it and the
    session is created again with the file applied in full (no warning the second time)."""
    child = _send(sandbox)
    child.expect("permissions.allow")
    child.expect_exact("[y/N]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    assert _trusted(sandbox) == []
    child = _send(sandbox)
    child.expect_exact("[y/N]")
    child.sendline("y")
    child.expect(pexpect.EOF)
    assert _trusted(sandbox) == [str(sandbox.project)]
    result = json.loads([line for line in child.before.splitlines() if '"type"' in line][-1])
    assert result["type"] == "result"
    again = _send(sandbox)
    again.expect(pexpect.EOF)
    assert "[y/N]" not in again.before


def test_trust_list_and_revoke(sandbox: Sandbox) -> None:
    base = [sys.executable, "-m", "agentctl", "trust"]
    run = {"env": sandbox.env, "capture_output": True, "text": True, "cwd": sandbox.project}
    assert subprocess.run(base, **run, check=True).stdout.startswith("trusted: ")
    assert _trusted(sandbox) == [str(sandbox.project)]
    revoked = subprocess.run([*base, "--revoke", str(sandbox.project)], **run, check=True)
    assert "no longer trusted" in revoked.stdout
    again = subprocess.run([*base, "--revoke", str(sandbox.project)], **run)
    assert again.returncode == 2
    missing = subprocess.run([*base, str(sandbox.root / "nope")], **run)
    assert missing.returncode == 2


def test_no_provider_offers_to_trust_the_project_file_that_has_one() -> None:
    """No provider anywhere but in an untrusted project file: the error names that file and
    `agentctl trust`, the terminal offers to trust the folder, and after "y" the run uses the
    project's provider."""
    sandbox = Sandbox()
    try:
        (sandbox.project / ".git").mkdir()
        (sandbox.project / ".agentd.toml").write_text('provider = "mock"\n')
        child = pexpect.spawn(
            sys.executable,
            ["-m", "agentctl", "send", "--stdio", "how are you"],
            cwd=str(sandbox.project),
            env=dict(sandbox.env, NO_COLOR="1", TERM="xterm"),
            encoding="utf-8",
            timeout=30,
        )
        child.expect_exact(f"agentctl trust {sandbox.project}")
        child.expect_exact("[y/N]")
        child.sendline("y")
        child.expect("doing well")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert _trusted(sandbox) == [str(sandbox.project)]
    finally:
        sandbox.close()
