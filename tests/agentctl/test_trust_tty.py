"""`agentctl trust` and the trust question `send` asks on a terminal (pexpect)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pexpect
import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import scaled

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
        timeout=scaled(30),
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
            timeout=scaled(30),
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


def test_an_untrusted_mcp_json_gets_the_same_offer_listing_what_trust_covers() -> None:
    """No ``.agentd.toml``, an untrusted ``.mcp.json``: ``send`` on a terminal lists every
    control file trust would cover (each server with its command line, escaped; the absent
    folders that would need trusting once they appear), asks, and after "y" starts again
    with the server running."""
    from tests.mcp.conftest import SERVER

    sandbox = Sandbox()
    try:
        (sandbox.project / ".git").mkdir()
        marker = sandbox.root / "started"
        entry = {"command": sys.executable, "args": [str(SERVER), "--marker", str(marker)]}
        servers = {"tools": entry, "odd\u001b]0;x": {"command": "echo"}}
        (sandbox.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        child = _send(sandbox)
        child.logfile_read = seen = io.StringIO()
        child.expect_exact(".mcp.json (MCP servers (programs agentd starts)):")
        child.expect_exact(f"server tools: {sys.executable} {SERVER} --marker {marker}")
        child.expect_exact(".agentd/commands/ (custom commands): none now; one created later")
        child.expect_exact("until you run `agentctl trust")
        child.expect_exact("[y/N]")
        assert not marker.exists()
        child.send("y")
        child.expect_exact(" yes\r\n")
        child.expect(pexpect.EOF)
        assert "\x1b]0;x" not in seen.getvalue()
        assert "odd\\u001b]0;x" in seen.getvalue()
        assert _trusted(sandbox) == [str(sandbox.project)]
        assert marker.exists(), "trusted, the session started again with its server"
    finally:
        sandbox.close()


def test_trust_lists_what_it_covers(sandbox: Sandbox) -> None:
    (sandbox.project / ".agentd.toml").write_text(
        PROJECT_FILE + '[[hooks.pre_tool]]\nmatcher = "bash"\ncommand = ".agentd/hooks/check"\n'
    )
    (sandbox.project / ".agentd" / "hooks").mkdir(parents=True)
    (sandbox.project / ".agentd" / "hooks" / "check").write_text("#!/bin/sh\n")
    done = subprocess.run(
        [sys.executable, "-m", "agentctl", "trust"],
        env=sandbox.env,
        capture_output=True,
        text=True,
        check=True,
        cwd=sandbox.project,
    )
    out = done.stdout
    assert 'permissions.allow = ["bash"]' in out
    assert 'hook pre_tool: ".agentd/hooks/check" (matcher "bash")' in out
    assert ".agentd/hooks/ (scripts the hooks run):\n      check\n" in out
    assert ".mcp.json (MCP servers (programs agentd starts)): none now" in out
    assert ".agentd/skills/ (skills): none now" in out
    assert "if any of them changes, or one that does not exist appears" in out
