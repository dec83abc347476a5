"""The typed options: every command line the parser accepts becomes its command's Struct,
with argparse's values and types; a parser and Struct out of step is an error, not a
silently missing field."""

from __future__ import annotations

import argparse

import msgspec
import pytest

from agentctl.options import (
    OPTIONS_OF,
    DaemonOptions,
    McpAdd,
    SendOptions,
    SessionsList,
    SessionsRename,
    SkillsCheck,
    command_key,
    typed_options,
)
from agentctl.parser import build_parser

COMMAND_LINES = [
    ["send", "--stdio", "--provider", "mock", "--max-turns", "3", "--image", "a.png", "hi"],
    ["send", "--json", "--timeout", "2.5", "--max-cost", "0.1", "--max-tokens", "9", "x"],
    ["send", "--fork", "abc", "--sandbox", "workspace", "--permission", "auto", "x"],
    ["chat", "--continue", "--model", "m", "--socket", "/tmp/s"],
    ["attach", "abc", "--since", "4", "--until-end"],
    ["cancel", "abc"],
    ["status", "--json"],
    ["sessions"],
    ["sessions", "list", "--limit", "5", "--cwd", "/tmp"],
    ["sessions", "show", "abc", "-v"],
    ["sessions", "export", "abc", "--format", "html", "-o", "out.html"],
    ["sessions", "fork", "abc", "--entry", "e1", "--title", "t"],
    ["sessions", "rename", "abc", "a", "new", "title"],
    ["sessions", "rm", "abc", "--force"],
    ["daemon", "logs", "-n", "7", "-f"],
    ["daemon", "start"],
    ["rpc", "session/list", "{}", "--events"],
    ["rpc"],
    ["trust", "--revoke", "/tmp"],
    ["mcp", "list", "--json"],
    ["mcp", "add", "name", "--", "cmd", "arg"],
    ["mcp", "remove", "name"],
    ["skills", "list", "--cwd", "/tmp"],
    ["skills", "check", "/tmp/skill"],
    ["web", "--no-open", "--port", "9"],
    ["rewind", "abc", "--turns", "2", "--dry-run", "--no-files"],
    ["bridge"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_every_command_line_builds_its_struct(argv: list[str]) -> None:
    """Each namespace converts to its Struct holding exactly argparse's values."""
    namespace = build_parser().parse_args(argv)
    options = typed_options(namespace)
    assert type(options) is OPTIONS_OF[command_key(namespace)]
    values = msgspec.structs.asdict(options)
    assert {name: values[name] for name in vars(namespace)} == vars(namespace)


def test_values_keep_their_types() -> None:
    options = typed_options(
        build_parser().parse_args(["send", "--max-turns", "3", "--timeout", "2.5", "a", "b"])
    )
    assert isinstance(options, SendOptions)
    assert (options.max_turns, options.timeout, options.prompt) == (3, 2.5, ["a", "b"])
    renamed = typed_options(build_parser().parse_args(["sessions", "rename", "x", "a", "b"]))
    assert isinstance(renamed, SessionsRename)
    assert renamed.title == ["a", "b"]
    assert isinstance(typed_options(build_parser().parse_args(["sessions"])), SessionsList)
    check = typed_options(build_parser().parse_args(["skills", "check", "p"]))
    assert isinstance(check, SkillsCheck)
    assert check.path == "p"
    add = typed_options(build_parser().parse_args(["mcp", "add", "n", "--", "c"]))
    assert isinstance(add, McpAdd)
    assert add.words == ["n", "--", "c"]


def test_every_parser_command_has_a_struct() -> None:
    """A command (or, for those with one Struct per action, an action) added to the parser
    without its Struct fails here."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    keys: set[str] = set()
    for name, sub in commands.choices.items():
        actions = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if name in ("sessions", "mcp", "skills", "lsp"):
            keys.update(f"{name} {child}" for action in actions for child in action.choices)
        else:
            keys.add(name)
    assert len(keys) > 20
    assert keys <= set(OPTIONS_OF)


def test_a_destination_the_struct_lacks_is_rejected() -> None:
    """A flag added to the parser but not to the Struct is an error at once."""
    namespace = build_parser().parse_args(["send", "hi"])
    namespace.brand_new_flag = True
    with pytest.raises(msgspec.ValidationError, match="brand_new_flag"):
        typed_options(namespace)


def test_a_value_of_another_type_is_rejected() -> None:
    """A parser whose type= changed (a string where the Struct says int) is an error."""
    namespace = build_parser().parse_args(["daemon", "logs"])
    namespace.lines = "50"
    with pytest.raises(msgspec.ValidationError, match="lines"):
        typed_options(namespace)
    namespace = build_parser().parse_args(["send", "--permission", "ask", "x"])
    namespace.permission = "sometimes"
    with pytest.raises(msgspec.ValidationError, match="permission"):
        typed_options(namespace)


def test_options_are_values() -> None:
    """Frozen: a refinement makes a new value."""
    options = typed_options(build_parser().parse_args(["daemon", "status"]))
    assert isinstance(options, DaemonOptions)
    with pytest.raises(AttributeError):
        options.action = "stop"  # type: ignore[misc]
    assert msgspec.structs.replace(options, action="stop").action == "stop"
    assert options.action == "status"
