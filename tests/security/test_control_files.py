"""A ``sandbox = "workspace"`` session in a trusted folder tries to rewrite the project's
control files: its own ``.agentd.toml`` (``sandbox = "none"``), ``.agentd/``, ``.mcp.json``,
a git hook and ``core.fsmonitor`` — through write, edit and undo_edit and through bash
(``>``, ``mv`` over, ``rm``, ``git config``). Against the real daemon, every attempt fails
and the files keep their bytes, while ordinary writes in the workspace still work.

bash is kept off the control files by bubblewrap's read-only mounts
(:mod:`agentd.tools.process.mountns`); the test of the mounts as an unprivileged user runs
the same command line as ``nobody``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.trust_list import add_trusted
from agentd.tools.process import mountns
from tests.harness import Home, new_session, run, scaled, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
needs_bwrap = pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")

TRIGGER = "take over the project"
HOOK = '#!/bin/sh\ntouch "$HOME/pwned"\n'
BASH_ATTACK = "; ".join(
    [
        "echo 'sandbox = \"none\"' > .agentd.toml",
        "echo 'sandbox = \"none\"' > planted && mv -f planted .agentd.toml",
        "rm -f .agentd.toml",
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
        "git config core.fsmonitor 'touch pwned'",
        "mv .git moved-git",
        "echo '{}' > .mcp.json",
        "echo x > .agentd/prompt.md",
        "echo ok > fine.txt",
        "echo done",
    ]
)


def _attack_scenario() -> dict[str, Any]:
    calls = [
        tool_call("write", {"path": ".agentd.toml", "content": 'sandbox = "none"\n'}, "w1"),
        tool_call(
            "edit",
            {"path": ".agentd.toml", "old_string": "[retry]", "new_string": "[x]"},
            "e1",
        ),
        tool_call("write", {"path": ".git/hooks/pre-commit", "content": HOOK}, "w2"),
        tool_call("write", {"path": "gitlink/config", "content": "[core]\n"}, "w3"),
        tool_call("write", {"path": "sub/.agentd.toml", "content": "max_turns = 1\n"}, "w4"),
        tool_call("write", {"path": ".mcp.json", "content": "{}"}, "w5"),
        tool_call("write", {"path": ".agentd/prompt.md", "content": "obey\n"}, "w6"),
        tool_call("undo_edit", {"path": ".agentd.toml"}, "u1"),
        tool_call("bash", {"command": BASH_ATTACK}, "b1"),
        tool_call("write", {"path": "src/ok.txt", "content": "fine\n"}, "w7"),
    ]
    steps = [{"response": {"content": "Taking over.", "tool_calls": calls}}]
    return {"name": "takeover", "trigger": TRIGGER, "steps": [*steps, {"response": {}}]}


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the control paths, by relative path."""
    files: dict[str, bytes] = {}
    for name in (".agentd.toml", ".mcp.json", ".agentd", ".git"):
        top = root / name
        paths = [top] if top.is_file() else [p for p in top.rglob("*") if p.is_file()]
        files |= {str(p.relative_to(root)): p.read_bytes() for p in paths}
    return files


@pytest.fixture
def project() -> Any:
    """A trusted project that is a git repository with .mcp.json and .agentd/."""
    with Home() as home:
        subprocess.run(["git", "init", "-q", str(home.project)], check=True)
        (home.project / ".mcp.json").write_text('{"mcpServers": {}}\n')
        (home.project / ".agentd").mkdir()
        (home.project / ".agentd" / "prompt.md").write_text("be careful\n")
        (home.project / "gitlink").symlink_to(".git")
        home.use_scenarios([_attack_scenario()])
        yield home


@needs_bwrap
async def test_sandboxed_session_cannot_change_its_control_files(project: Home) -> None:
    before = _snapshot(project.project)
    async with stdio_client(project) as client:
        sid = await new_session(client, project, sandbox="workspace", permissionMode="auto")
        _, events = await run(client, sid, TRIGGER, timeout=60)
    ends = {e["event"]["toolCallId"]: e["event"] for e in events if _is_end(e)}
    attempts = ["w1", "e1", "w2", "w3", "w4", "w5", "w6"]
    assert [cid for cid in attempts if ends[cid].get("isError")] == attempts
    assert "control file" in _text(ends["w1"])
    assert "done" in _text(ends["b1"])  # bash ran its whole command line
    assert _snapshot(project.project) == before
    assert not (project.project / "sub" / ".agentd.toml").exists()
    assert not (project.project / "moved-git").exists()
    assert (project.project / "fine.txt").read_text() == "ok\n"  # bash still writes
    assert (project.project / "src" / "ok.txt").read_text() == "fine\n"


def _is_end(params: dict[str, Any]) -> bool:
    return bool(params["event"]["type"] == "tool_execution_end")


def _text(end: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in end["result"])


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to another uid")
def test_control_files_stay_read_only_for_an_unprivileged_daemon(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bubblewrap command line bash runs under, started as ``nobody`` (unprivileged user
    namespaces): the workspace is writable, its control files and everything outside not.
    The command line is built here (as root) for a daemon of ``nobody``'s: its runtime and
    state folders are ``nobody``'s, as they would be."""
    user = pwd.getpwnam("nobody")
    for name in ("run", "state"):
        (short_tmp / name).mkdir()
        os.chown(short_tmp / name, user.pw_uid, user.pw_gid)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_tmp / "run"))
    monkeypatch.setenv("XDG_STATE_HOME", str(short_tmp / "state"))
    workspace, tmp, outside = short_tmp / "ws", short_tmp / "tmp", short_tmp / "out"
    for folder in (workspace / ".git" / "hooks", tmp, outside):
        folder.mkdir(parents=True)
    (workspace / ".agentd.toml").write_text("max_turns = 3\n")
    short_tmp.chmod(0o755)
    for path in [workspace, *workspace.rglob("*"), tmp, outside]:
        os.chown(path, user.pw_uid, user.pw_gid)
    script = (
        "echo x > .agentd.toml; mv -f new .agentd.toml; echo h > .git/hooks/pre-commit; "
        f"echo o > {outside}/o; echo t > {tmp}/t; echo ok > new; echo end"
    )
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    drop = [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
    argv = [*drop, *mountns.wrapper(workspace, [tmp]), "/bin/bash", "-c", script]
    ran = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=scaled(30))
    assert ran.stdout.strip() == "end", ran.stderr
    assert "Read-only file system" in ran.stderr
    assert (workspace / ".agentd.toml").read_text() == "max_turns = 3\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (outside / "o").exists()
    assert (tmp / "t").read_text() == "t\n"
    assert (workspace / "new").read_text() == "ok\n"


PLANT = "plant a project file"
PLANTED = 'permission_mode = "auto"\nsandbox = "none"\n[tools]\npass_env = ["HOME_SECRET"]\n'


@pytest.fixture
def bare_project() -> Any:
    """A trusted project without a .agentd.toml (trusted as it is: no file)."""
    with Home() as home:
        home.user_config(auto=False)  # the daemon's defaults: ask; auto only when sandboxed
        (home.project / ".agentd.toml").unlink()
        add_trusted(home.project, home.env)
        plant = f"printf '{PLANTED}' > .agentd.toml; printf '{PLANTED}' > sub/.agentd.toml"
        calls = [tool_call("bash", {"command": f"mkdir -p sub; {plant}; echo planted"}, "b1")]
        steps = [{"response": {"content": "Planting.", "tool_calls": calls}}, {"response": {}}]
        home.use_scenarios([{"name": "plant", "trigger": PLANT, "steps": steps}])
        yield home


async def test_a_project_file_planted_in_a_trusted_folder_is_not_trusted(
    bare_project: Home,
) -> None:
    """A sandboxed session's bash creates .agentd.toml (no file existed to mount over) in the
    trusted folder and in a subfolder. The next sessions there treat both as untrusted (trust
    is pinned to content): auto mode, sandbox = "none" and pass_env are ignored, with a
    warning that names `agentctl trust`. Trusted again, the file applies — and its auto mode
    without a sandbox still becomes ask, as the user never opted in."""
    home = bare_project
    async with stdio_client(home) as client:
        sid = await new_session(client, home, sandbox="workspace", permissionMode="auto")
        await run(client, sid, PLANT, timeout=60)
        assert (home.project / ".agentd.toml").read_text() == PLANTED  # bash could create it
        for cwd in (home.project, home.project / "sub"):
            info = await client.call("session/new", {"cwd": str(cwd), "provider": "mock"})
            assert info["permissionMode"] == "ask"
            assert info["untrustedConfig"] == str(cwd / ".agentd.toml")
            warning = " ".join(info["warnings"])
            assert "is not the file you trusted" in warning
            assert f"agentctl trust {cwd}" in warning
            assert "tools.pass_env" in warning
    trust = [sys.executable, "-m", "agentctl", "trust", str(home.project)]
    subprocess.run(trust, env=home.env, capture_output=True, check=True)
    async with stdio_client(home) as client:
        info = await client.call("session/new", {"cwd": str(home.project), "provider": "mock"})
    warning = " ".join(info["warnings"])
    assert info["permissionMode"] == "ask"
    assert "is not the file you trusted" not in warning
    assert "allow_auto_without_sandbox = true" in warning
