"""`agentctl trust` and the trust question `send` asks on a terminal (pexpect)."""

from __future__ import annotations

import io
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
    child.send("n")  # one key, no Enter (as approvals)
    child.expect_exact(" no\r\n")
    child.expect(pexpect.EOF)
    assert _trusted(sandbox) == []
    child = _send(sandbox)
    child.expect_exact("[y/N]")
    child.send("y")
    child.expect_exact(" yes\r\n")
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


def test_the_offer_shows_what_trust_would_apply(sandbox: Sandbox) -> None:
    """Before the question, every setting of the file is listed; the file's text reaches the
    terminal escaped (an escape sequence in it is shown as ``\\u001b``, not obeyed)."""
    (sandbox.project / ".agentd.toml").write_text(
        PROJECT_FILE + '[tools]\nsecret_env = ["X\\u001b[2J"]\npass_env = ["AWS_SECRET"]\n'
    )
    child = _send(sandbox)
    child.logfile_read = seen = io.StringIO()
    child.expect_exact("would apply in full if you trust")
    child.expect_exact('permission_mode = "read-only"')
    child.expect_exact('permissions.allow = ["bash"]')
    child.expect_exact('tools.secret_env = ["X\\u001b[2J"]')
    child.expect_exact('tools.pass_env = ["AWS_SECRET"]')
    child.expect_exact("[y/N]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    assert "\x1b[2J" not in seen.getvalue()
    assert _trusted(sandbox) == []


@pytest.mark.parametrize("which", ["root", "home", "above-home", "world-writable"])
def test_too_broad_folders_need_force(sandbox: Sandbox, which: str) -> None:
    """``/``, $HOME, a folder above it and a folder anyone can write to are refused (exit 2,
    the reason named, nothing trusted); ``--force`` trusts them with a loud warning."""
    home = sandbox.root / "users" / "me"
    home.mkdir(parents=True)
    shared = sandbox.root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    folder, reason = {
        "root": ("/", "it is the filesystem root"),
        "home": (str(home), "it is your home folder"),
        "above-home": (str(home.parent), "it holds your home folder"),
        "world-writable": (str(shared), "anyone can write to it (mode 1777)"),
    }[which]
    env = dict(sandbox.env, HOME=str(home))
    base = [sys.executable, "-m", "agentctl", "trust", folder]
    refused = subprocess.run(base, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert f"refusing to trust {folder}: {reason}" in refused.stderr
    assert "--force" in refused.stderr
    assert _trusted(sandbox) == []
    forced = subprocess.run([*base, "--force"], env=env, capture_output=True, text=True, check=True)
    assert f"WARNING: trusting {folder} although {reason}" in forced.stderr
    assert _trusted(sandbox) == [folder]


def test_a_world_writable_project_is_not_offered(sandbox: Sandbox) -> None:
    """The terminal question is not asked for a folder anyone can write to; it says why."""
    sandbox.project.chmod(0o777)
    child = _send(sandbox)
    child.expect_exact(f"Not offering to trust {sandbox.project}: anyone can write to it")
    child.expect(pexpect.EOF)
    assert "[y/N]" not in child.before
    assert _trusted(sandbox) == []
