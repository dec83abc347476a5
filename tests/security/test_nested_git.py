"""Nested git directories stay read-only in a sandboxed session: a project whose ``.git`` is
a symlink to a git dir inside the workspace (``store/``, as ``git init --separate-git-dir``
makes one) and that has a submodule (``sub/.git``, a gitfile). Through the real daemon, bash
and the file tools try to plant ``core.fsmonitor`` in the resolved git dir, to repoint the
submodule's gitfile and the top ``.git`` link at a planted git dir, and to create a ``.git``
in the submodule's folder; git must find everything as it was, while ``git status`` and
``git log`` still work inside the sandbox."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.tools.process import mountns
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
TRIGGER = "plant a git dir"
EVIL = "[core]\n\tfsmonitor = touch PWNED\n\tbare = false\n"
BASH_ATTACK = "; ".join(
    [
        "git config core.fsmonitor 'touch PWNED'",
        "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> store/config",
        "mkdir -p evil && cp -r store/. evil/ 2>/dev/null; printf '%s' \"$EVIL\" > evil/config",
        "printf 'gitdir: ../evil\\n' > sub/.git",
        "mv -f sub/.git sub/old-git",
        "rm -f .git && ln -s evil .git",
        "git status --short > status.txt; echo status=$?",
        "git log --oneline | wc -l",
        "echo done",
    ]
)


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _make_project(project: Path, other: Path) -> None:
    """``project``: a commit, ``.git`` a symlink to ``store/``, a submodule at ``sub``."""
    ident = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]
    other.mkdir()
    _git("init", "-q", cwd=other)
    (other / "o.txt").write_text("o\n")
    _git("add", ".", cwd=other)
    _git(*ident, "commit", "-qm", "o", cwd=other)
    _git("init", "-q", "--separate-git-dir", str(project / "store"), str(project), cwd=project)
    (project / ".git").unlink()
    (project / ".git").symlink_to("store")
    _git(*ident, "submodule", "add", "-q", str(other), "sub", cwd=project)
    _git("add", ".", cwd=project)
    _git(*ident, "commit", "-qm", "first", cwd=project)


def _scenario() -> dict[str, Any]:
    calls = [
        tool_call("write", {"path": "store/config", "content": EVIL}, "w1"),
        tool_call("write", {"path": "store/hooks/pre-commit", "content": "#!/bin/sh\n"}, "w2"),
        tool_call("bash", {"command": f"EVIL='{EVIL}'; {BASH_ATTACK}"}, "b1"),
    ]
    steps = [{"response": {"content": "Planting.", "tool_calls": calls}}]
    return {"name": "plant", "trigger": TRIGGER, "steps": [*steps, {"response": {}}]}


@pytest.fixture
def project() -> Iterator[Home]:
    with Home() as home:
        _make_project(home.project, home.root / "other")
        home.project_config()  # trust the project file again (the commit did not change it)
        home.use_scenarios([_scenario()])
        yield home


@pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here")
async def test_nested_git_dirs_stay_read_only(project: Home) -> None:
    root = project.project
    config_before = (root / "store" / "config").read_text()
    gitfile_before = (root / "sub" / ".git").read_text()
    async with stdio_client(project) as client:
        sid = await new_session(client, project, sandbox="workspace", permissionMode="auto")
        _, events = await run(client, sid, TRIGGER, timeout=90)
    ends = {e["event"]["toolCallId"]: e["event"] for e in events if _is_end(e)}
    assert ends["w1"].get("isError")
    assert ends["w2"].get("isError")
    bash = " ".join(part.get("text", "") for part in ends["b1"]["result"])
    assert "done" in bash
    assert "status=0" in bash  # git still works inside the sandbox
    assert (root / "store" / "config").read_text() == config_before
    assert (root / "sub" / ".git").read_text() == gitfile_before
    assert (root / ".git").readlink() == Path("store")
    assert "fsmonitor" not in _git("config", "--list", cwd=root)
    assert "has been put back" in bash  # the repointed .git link was restored
    for planted in (root / "PWNED", root / "sub" / "PWNED"):
        planted.unlink(missing_ok=True)  # made inside the sandbox, by its own git status
    _git("status", "--short", cwd=root)  # the user's next git status, outside any sandbox
    _git("status", "--short", cwd=root / "sub")
    assert not (root / "PWNED").exists()
    assert not (root / "sub" / "PWNED").exists()


def _is_end(params: dict[str, Any]) -> bool:
    return bool(params["event"]["type"] == "tool_execution_end")
