"""Each permission bypass of a hostile model or repository, on real files: it must fail."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentd.permissions.policy import PermissionPolicy
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings

TOOLS = build_tools()


def decide(policy: PermissionPolicy, tool: str, **args: Any) -> str:
    return policy.check(TOOLS[tool], args).action


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "repo" / ".env").write_text("PASSWORD=hunter2-secret\n")
    (tmp_path / "repo" / "notes.txt").write_text("PASSWORD is in .env\n")
    (tmp_path / "repo" / "link").symlink_to(tmp_path / "repo" / ".env")
    (tmp_path / "repo" / "src" / "up").symlink_to(tmp_path)
    return tmp_path / "repo"


@pytest.mark.parametrize(
    "command",
    [
        "npm test #x\ntouch p",
        "npm test a#b; touch p",
        "npm test && touch p",
        "npm test | sh",
        "npm test $(touch p)",
        "npm test `touch p`",
        "npm test <(touch p)",
        "npm test > package.json",
        "npm test; eval touch p",
        "eval npm test",
        "cat <<EOF | sh\ntouch p\nEOF",
        "LD_PRELOAD=./evil.so npm test",
        "npm test 'unterminated",
        "f() { touch p; }; npm test",
        "$NPM test",
        "PATH=. ; npm test",
        "npm test\ntouch p",
        "(npm test; touch p)",
        "if npm test; then touch p; fi",
        "npm test && npm test > package.json",
        "npm test | npm test 2>&1 > package.json",
        "{ npm test; } > package.json",
        "(npm test) >> package.json",
    ],
)
def test_a_prefix_rule_approves_only_that_command(command: str) -> None:
    """`bash(npm test:*)` never approves another command hidden in the same input."""
    ask = PermissionPolicy("ask", allow=["bash(npm test:*)"])
    assert decide(ask, "bash", command=command) == "ask"
    readonly = PermissionPolicy("read-only", allow=["bash(npm test:*)"])
    assert decide(readonly, "bash", command=command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "npm test",
        "npm test -- -k 'a b'",
        "npm test 2>&1",
        "npm test >/dev/null 2>&1",
        "npm test < in",
    ],
)
def test_a_prefix_rule_still_approves_its_command(command: str) -> None:
    policy = PermissionPolicy("ask", allow=["bash(npm test:*)"])
    assert decide(policy, "bash", command=command) == "allow"
    assert decide(policy, "bash", command=f"{command} && npm test") == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "/bin/rm -rf build",
        "rm -rf build",
        "sudo rm x",
        "env A=1 /usr/bin/rm x",
        "timeout 5 rm x",
        "echo ok; rm x",
        "echo $(rm x)",
        "bash -c 'rm x'",
        'sh -lc "echo; rm x"',
        "eval 'rm x'",
        "ls | xargs rm",
        "if true; then rm x; fi",
        "npm test #comment\nrm x",
    ],
)
def test_deny_rules_see_every_simple_command(command: str) -> None:
    """`bash(rm:*)` refuses rm wherever it hides, even in auto mode with an allow-all."""
    policy = PermissionPolicy("auto", allow=["bash"], deny=["bash(rm:*)"])
    assert decide(policy, "bash", command=command) == "deny"


def test_path_allow_rules_use_the_resolved_path(repo: Path) -> None:
    """`write(src/**)` does not allow leaving src through `..` or a symlink."""
    policy = PermissionPolicy("ask", allow=["write(src/**)"], cwd=repo)
    assert decide(policy, "write", path="src/a.py") == "allow"
    assert decide(policy, "write", path="src/../../outside.txt") == "ask"
    assert decide(policy, "write", path="src/../package.json") == "ask"
    assert decide(policy, "write", path="src/up/outside.txt") == "ask"
    assert decide(policy, "write", path=str(repo / "src" / "b.py")) == "allow"


def test_path_deny_rules_use_normalised_and_resolved_paths(repo: Path) -> None:
    """`write(.git/**)` stops `src/../.git/…`; `read(.env)` stops a symlink to it."""
    policy = PermissionPolicy(
        "auto", deny=["write(.git/**)", "edit(.git/**)", "read(.env)"], cwd=repo
    )
    assert decide(policy, "write", path="src/../.git/hooks/pre-commit") == "deny"
    assert decide(policy, "edit", path="./.git/config") == "deny"
    assert decide(policy, "read", path="link") == "deny"
    assert decide(policy, "read", path="src/../.env") == "deny"
    assert decide(policy, "read", path="notes.txt") == "allow"
    assert decide(policy, "bash", command="true && echo x > .git/hooks/pre-commit") == "deny"
    assert decide(policy, "bash", command="{ echo x; } >> src/../.git/config") == "deny"


def test_read_deny_rules_cover_every_reading_tool_and_bash(repo: Path) -> None:
    """grep, find and ls on the denied file, and bash naming it, are refused."""
    policy = PermissionPolicy("auto", deny=["read(.env)"], cwd=repo)
    assert decide(policy, "grep", pattern="PASSWORD", path=".env") == "deny"
    assert decide(policy, "grep", pattern="PASSWORD", path="link") == "deny"
    assert decide(policy, "find", pattern="*", path=".env") == "deny"
    assert decide(policy, "ls", path="link") == "deny"
    assert decide(policy, "bash", command="grep PASSWORD .env") == "deny"
    assert decide(policy, "bash", command="cat < link") == "deny"
    assert decide(policy, "bash", command="grep --file=.env x") == "deny"
    assert decide(policy, "bash", command="grep PASSWORD notes.txt") == "allow"


def test_grep_over_a_folder_skips_denied_files(repo: Path) -> None:
    """A recursive grep does not show lines of a file a read deny rule covers."""
    policy = PermissionPolicy("auto", deny=["read(.env)"], cwd=repo)
    for backend in ("python", "rg"):
        ctx = ToolContext(
            cwd=repo, settings=ToolSettings(permission_policy=policy, grep_backend=backend)
        )
        args = {"pattern": "PASSWORD", "path": "."}
        result = asyncio.run(run_tool(TOOLS["grep"], args, ctx))
        assert "hunter2" not in str(result.output), backend
        assert "notes.txt" in str(result.output), backend


def test_precedence_mode_ceiling_then_deny_then_allow(repo: Path) -> None:
    """read-only ignores allow rules; deny beats allow; ask asks without a rule."""
    readonly = PermissionPolicy("read-only", allow=["bash", "write", "edit"], cwd=repo)
    for tool, args in (("bash", {"command": "ls"}), ("write", {"path": "a"})):
        assert decide(readonly, tool, **args) == "deny"
    both = PermissionPolicy("ask", allow=["write"], deny=["write(*.lock)"], cwd=repo)
    assert decide(both, "write", path="a.lock") == "deny"
    assert decide(both, "write", path="a.txt") == "allow"
    assert decide(PermissionPolicy("ask", cwd=repo), "write", path="a.txt") == "ask"


def test_remembered_rules_come_from_the_parse() -> None:
    """An *always* answer remembers one prefix rule per simple command of the parse."""
    policy = PermissionPolicy("ask")
    command = "FOO=1 npm test -- -x && git commit -m 'a; b'"
    assert policy.remember("bash", {"command": command}, True) == (
        "bash(npm test:*), bash(git commit:*)"
    )


def test_words_that_cannot_be_paths_do_not_break_the_check(repo: Path) -> None:
    """A 2 KB argument (too long for a file name) is checked without an error."""
    policy = PermissionPolicy("ask", allow=["bash(git commit:*)"], deny=["read(.env)"], cwd=repo)
    message = "x" * 2000
    assert decide(policy, "bash", command=f"git commit -m '{message}'") == "allow"
