"""The ``[[hooks.<event>]]`` configuration: strict validation with precise errors, the
user's and a trusted project's hooks joined, an untrusted project's left out and named."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.load import load_config
from agentd.config.schema import validate
from agentd.errors import ConfigError
from agentd.hooks.session import matches
from agentd.protocol.trust_list import add_trusted

USER_HOOK = '[[hooks.pre_tool]]\nmatcher = "bash"\ncommand = "user-policy"\n'
PROJECT_HOOKS = (
    '[[hooks.pre_tool]]\nmatcher = "write|edit"\ncommand = "scripts/policy-check"\n'
    'timeout = 10\n[[hooks.stop]]\ncommand = "notify-send done"\n'
)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            {"hooks": {"pre_tool": [{"comand": "x"}]}},
            "unknown key 'hooks.pre_tool[0].comand' in [hooks.pre_tool[0]] (did you mean "
            "command?); valid keys: command, matcher, timeout",
        ),
        (
            {"hooks": {"pretool": []}},
            "unknown key 'hooks.pretool' in [hooks] (did you mean pre_tool?)",
        ),
        (
            {"hooks": {"pre_tool": [{"matcher": "bash"}]}},
            "key hooks.pre_tool[0]: Object missing required field `command`",
        ),
        (
            {"hooks": {"pre_tool": [{"command": ""}]}},
            "key hooks.pre_tool[0].command: Expected `str` of length >= 1",
        ),
        (
            {"hooks": {"pre_tool": [{"command": "x", "timeout": 0}]}},
            "key hooks.pre_tool[0].timeout: Expected `float` > 0.0",
        ),
        (
            {"hooks": {"post_tool": [{"command": "x", "timeout": 601}]}},
            "key hooks.post_tool[0].timeout: Expected `float` <= 600.0",
        ),
        (
            {"hooks": {"pre_tool": {"command": "x"}}},
            "key hooks.pre_tool: Expected `array`, got `object`",
        ),
        (
            {"hooks": {"pre_tool": [{"command": "x", "matcher": "bash||edit"}]}},
            "key hooks.pre_tool[0].matcher: 'bash||edit' has an empty alternative",
        ),
        (
            {"hooks": {"stop": [{"command": "x", "matcher": "bash"}]}},
            "key hooks.stop[0].matcher: stop hooks have no tool to match",
        ),
    ],
)
def test_a_bad_hook_table_is_an_error_naming_the_key(toml: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        validate(toml, "/home/me/.config/agentd/config.toml")
    assert str(raised.value).startswith("config file /home/me/.config/agentd/config.toml: ")
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("bash", "bash", True),
        ("bash", "bashful", False),
        ("write|edit", "edit", True),
        ("write | edit", "write", True),
        ("write|edit", "read", False),
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__gitlab__create_issue", False),
        ("mcp__*__search", "mcp__docs__search", True),
        ("*", "mcp__anything__at_all", True),
        ("*", None, True),
    ],
)
def test_matchers_are_tool_name_globs(matcher: str, tool: str | None, expected: bool) -> None:
    assert matches(matcher, tool) is expected


def _home(tmp_path: Path) -> tuple[dict[str, str], Path]:
    (tmp_path / "xdg" / "agentd").mkdir(parents=True)
    (tmp_path / "xdg" / "agentd" / "config.toml").write_text(USER_HOOK)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".agentd.toml").write_text(PROJECT_HOOKS)
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}, repo


def test_a_trusted_project_adds_hooks_after_the_users(tmp_path: Path) -> None:
    env, repo = _home(tmp_path)
    add_trusted(repo, env)
    config = load_config(repo, env=env)
    hooks = config.settings.hooks
    assert [h.command for h in hooks.pre_tool] == ["user-policy", "scripts/policy-check"]
    assert hooks.pre_tool[1].timeout == 10
    assert [h.command for h in hooks.stop] == ["notify-send done"]
    assert not config.warnings


def test_an_untrusted_projects_hooks_are_left_out_and_named(tmp_path: Path) -> None:
    env, repo = _home(tmp_path)
    config = load_config(repo, env=env)
    assert [h.command for h in config.settings.hooks.pre_tool] == ["user-policy"]
    assert config.settings.hooks.stop == []
    [warning] = [w for w in config.warnings if "hooks" in w]
    assert "so its hooks do not run" in warning
    assert "pre_tool `scripts/policy-check` (matcher write|edit)" in warning
    assert "stop `notify-send done`" in warning
    assert f"agentctl trust {repo}" in warning
    assert config.untrusted_file == repo / ".agentd.toml"


def test_a_project_file_changed_since_trusted_loses_its_hooks(tmp_path: Path) -> None:
    env, repo = _home(tmp_path)
    add_trusted(repo, env)
    (repo / ".agentd.toml").write_text(PROJECT_HOOKS + '[[hooks.user_prompt]]\ncommand = "x"\n')
    config = load_config(repo, env=env)
    assert [h.command for h in config.settings.hooks.pre_tool] == ["user-policy"]
    assert any("user_prompt `x`" in w for w in config.warnings)
