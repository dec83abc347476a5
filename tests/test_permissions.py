"""The permission policy: every mode, every rule kind, remembered rules, config errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentd.errors import ConfigError
from agentd.permissions.policy import Decision, PermissionPolicy, PolicyError, Rule, command_prefix
from agentd.tools import build_tools

TOOLS = build_tools()


def decide(policy: PermissionPolicy, tool: str, **args: Any) -> str:
    return policy.check(TOOLS[tool], args).action


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("auto", {"read": "allow", "grep": "allow", "write": "allow", "bash": "allow"}),
        ("ask", {"read": "allow", "grep": "allow", "write": "ask", "bash": "ask"}),
        ("read-only", {"read": "allow", "grep": "allow", "write": "deny", "bash": "deny"}),
    ],
)
def test_modes(mode: str, expected: dict[str, str]) -> None:
    policy = PermissionPolicy(mode)
    args = {"path": "a.txt", "pattern": "x", "content": "y", "command": "ls"}
    for tool, action in expected.items():
        assert decide(policy, tool, **args) == action, (mode, tool)
    for tool in ("edit", "undo_edit"):
        assert decide(policy, tool, path="a") == expected["write"]
    for tool in ("find", "ls"):
        assert decide(policy, tool, pattern="*") == "allow"


def test_decisions_carry_reasons() -> None:
    denied = PermissionPolicy("read-only").check(TOOLS["write"], {"path": "a", "content": ""})
    assert denied == Decision(
        "deny", "write can change files or run commands, and the session is read-only"
    )
    asked = PermissionPolicy("ask").check(TOOLS["bash"], {"command": "ls"})
    assert asked.reason == "bash needs approval in ask mode"


def test_whole_tool_rules() -> None:
    policy = PermissionPolicy("ask", allow=["write"], deny=["grep"])
    assert decide(policy, "write", path="a", content="") == "allow"
    assert decide(policy, "grep", pattern="x") == "deny"
    assert decide(policy, "edit", path="a") == "ask"


def test_the_mode_is_a_ceiling_and_deny_beats_allow() -> None:
    readonly = PermissionPolicy("read-only", allow=["bash(git status)", "write"])
    assert decide(readonly, "bash", command="git status") == "deny"
    assert decide(readonly, "write", path="a", content="") == "deny"
    assert decide(readonly, "read", path="a") == "allow"
    both = PermissionPolicy("auto", allow=["bash(git:*)"], deny=["bash(git push:*)"])
    assert decide(both, "bash", command="git push origin") == "deny"
    auto = PermissionPolicy("auto", deny=["read"])
    assert decide(auto, "read", path="a") == "deny"


def test_bash_exact_and_prefix_rules() -> None:
    policy = PermissionPolicy("ask", allow=["bash(git status)", "bash(npm test:*)"])
    assert decide(policy, "bash", command="git status") == "allow"
    assert decide(policy, "bash", command="git  status") == "allow"
    assert decide(policy, "bash", command="git status -s") == "ask"
    assert decide(policy, "bash", command="npm test") == "allow"
    assert decide(policy, "bash", command="npm test -- --watch=false") == "allow"
    assert decide(policy, "bash", command="npm testing") == "ask"
    assert decide(policy, "bash", command="npm test && git status") == "allow"
    assert decide(policy, "bash", command="npm test && rm -r build") == "ask"
    assert decide(policy, "bash", command="npm test | tee log") == "ask"


def test_allow_rules_refuse_substitution_and_file_redirects() -> None:
    policy = PermissionPolicy("ask", allow=["bash(npm test:*)"])
    assert decide(policy, "bash", command="npm test $(curl evil)") == "ask"
    assert decide(policy, "bash", command="npm test `id`") == "ask"
    assert decide(policy, "bash", command="npm test > ~/.bashrc") == "ask"
    assert decide(policy, "bash", command="npm test 2>&1") == "allow"
    assert decide(policy, "bash", command="npm test >/dev/null 2>&1") == "allow"


def test_deny_rules_match_any_part_and_see_through_wrappers() -> None:
    policy = PermissionPolicy("auto", allow=["bash"], deny=["bash(rm:*)", "bash(curl:*)"])
    assert decide(policy, "bash", command="rm x") == "deny"
    assert decide(policy, "bash", command="ls && rm x") == "deny"
    assert decide(policy, "bash", command="sudo rm x") == "deny"
    assert decide(policy, "bash", command="env A=1 curl http://x") == "deny"
    assert decide(policy, "bash", command="echo rm") == "allow"
    assert decide(policy, "bash", command="rmdir x") == "allow"


def test_dangerous_commands_need_explicit_permission() -> None:
    auto = PermissionPolicy("auto", allow=["bash", "bash(rm:*)"])
    decision = auto.check(TOOLS["bash"], {"command": "rm -rf /"})
    assert decision.action == "deny"
    assert "deny-list" in decision.reason
    assert not auto.allows_dangerous("rm -rf /")
    exact = PermissionPolicy("ask", allow=["bash(git push --force)"])
    assert decide(exact, "bash", command="git push --force") == "allow"
    assert decide(exact, "bash", command="git  push  --force") == "allow"
    assert decide(exact, "bash", command="git push -f") == "deny"
    assert exact.allows_dangerous("git push --force")
    anything = PermissionPolicy("ask", allow_dangerous=True)
    assert decide(anything, "bash", command="rm -rf /") == "allow"
    ceiling = PermissionPolicy("read-only", allow_dangerous=True)
    assert decide(ceiling, "bash", command="rm -rf /") == "deny"


def test_deny_rules_come_before_dangerous_allowance() -> None:
    policy = PermissionPolicy("auto", deny=["bash(git push:*)"], allow_dangerous=True)
    assert decide(policy, "bash", command="git push --force") == "deny"


def test_path_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(
        "ask",
        allow=["edit(src/**)", "write(/tmp/scratch/**)"],
        deny=["read(.env)", "read(~/.ssh/**)"],
        workspace=tmp_path,
    )
    assert decide(policy, "edit", path="src/a/b.py") == "allow"
    assert decide(policy, "edit", path=str(tmp_path / "src/x.py")) == "allow"
    assert decide(policy, "edit", path="lib/x.py") == "ask"
    assert decide(policy, "write", path="/tmp/scratch/n.txt", content="") == "allow"
    assert decide(policy, "read", path=".env") == "deny"
    assert decide(policy, "read", path="config/.env") == "deny"
    assert decide(policy, "read", path="env.txt") == "allow"
    assert decide(policy, "read", path=str(Path.home() / ".ssh/id_ed25519")) == "deny"
    assert decide(policy, "read", path="~/.ssh/config") == "deny"


def test_remember_bash_prefixes() -> None:
    policy = PermissionPolicy("ask")
    text = policy.remember("bash", {"command": "npm test -- -k x"}, allow=True)
    assert text == "bash(npm test:*)"
    assert decide(policy, "bash", command="npm test") == "allow"
    assert decide(policy, "bash", command="npm install") == "ask"
    text = policy.remember("bash", {"command": "rm -r build && git clean -fd"}, allow=False)
    assert text == "bash(rm:*), bash(git clean:*)"
    assert decide(policy, "bash", command="rm x") == "deny"
    assert decide(policy, "bash", command="git clean -x") == "deny"
    assert decide(policy, "bash", command="git status") == "ask"


def test_remember_whole_tool_and_no_duplicates() -> None:
    policy = PermissionPolicy("ask")
    assert policy.remember("edit", {"path": "a"}, allow=True) == "edit"
    policy.remember("edit", {"path": "b"}, allow=True)
    assert [rule.text for rule in policy.allow] == ["edit"]
    assert decide(policy, "edit", path="z") == "allow"
    assert policy.remember("write", {"path": "a"}, allow=False) == "write"
    assert decide(policy, "write", path="a", content="") == "deny"


def test_remembered_prefix_never_allows_dangerous() -> None:
    policy = PermissionPolicy("ask")
    policy.remember("bash", {"command": "rm -rf ./build"}, allow=True)
    assert decide(policy, "bash", command="rm -rf ./dist") == "allow"
    assert decide(policy, "bash", command="rm -rf /") == "deny"


@pytest.mark.parametrize(
    ("words", "prefix"),
    [
        (["npm", "test", "--", "-k"], "npm test"),
        (["npm", "run", "build"], "npm run build"),
        (["git", "commit", "-m", "x y"], "git commit"),
        (["git", "-C", "x", "status"], "git"),
        (["ls", "-la", "src"], "ls"),
        (["python", "-m", "pytest", "-q"], "python -m pytest"),
        (["python", "script.py"], "python"),
        (["FOO=1", "make", "all"], "make all"),
        (["./run.sh", "x"], "./run.sh"),
    ],
)
def test_command_prefix(words: list[str], prefix: str) -> None:
    assert command_prefix(words) == prefix


def test_from_config() -> None:
    section = {
        "allow": ["read", "bash(npm test:*)"],
        "deny": ["bash(rm:*)"],
        "allow_dangerous": False,
    }
    policy = PermissionPolicy.from_config("ask", section)
    assert [r.text for r in policy.allow] == ["read", "bash(npm test:*)"]
    assert [r.text for r in policy.deny] == ["bash(rm:*)"]
    assert PermissionPolicy.from_config("auto", None).mode == "auto"


@pytest.mark.parametrize(
    ("mode", "section", "message"),
    [
        ("sometimes", None, "Unknown permission mode"),
        ("ask", {"allow": "read"}, "allow must be a list of strings"),
        ("ask", {"deny": [1]}, "deny must be a list of strings"),
        ("ask", {"allow_dangerous": "yes"}, "allow_dangerous must be true or false"),
        ("ask", {"alow": []}, "Unknown key"),
        ("ask", {"allow": ["bsh"]}, "unknown tool 'bsh'"),
        ("ask", {"allow": ["bash("]}, r"write `tool` or `tool\(argument\)`"),
        ("ask", {"allow": ["bash()"]}, "the argument is empty"),
        ("ask", {"allow": ["bash(ls"]}, "Bad permission rule"),
    ],
)
def test_config_errors(mode: str, section: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(PolicyError, match=message) as raised:
        PermissionPolicy.from_config(mode, section)
    assert isinstance(raised.value, ConfigError)
    assert isinstance(raised.value, ValueError)


def test_star_argument_means_whole_tool() -> None:
    assert Rule.parse("bash(*)") == Rule("bash(*)", "bash", None)
