"""The command line: flags, defaults and usage errors (exit 2), without running anything."""

from __future__ import annotations

import argparse

import pytest

from agentctl.cli import main
from agentctl.parser import build_parser


def parse(*argv: str) -> dict[str, object]:
    return vars(build_parser().parse_args(list(argv)))


def test_send_flags() -> None:
    """Every documented send flag lands in the options."""
    options = parse(
        "send",
        "fix",
        "the",
        "bug",
        "--provider",
        "mock",
        "--model",
        "m",
        "--max-turns",
        "3",
        "--timeout",
        "2.5",
        "--permission",
        "ask",
        "--cwd",
        "/tmp",
        "--system-prompt",
        "@f",
        "--title",
        "t",
        "--base-url",
        "http://x",
        "--socket",
        "/s",
        "--json",
        "--stdio",
    )
    assert options["prompt"] == ["fix", "the", "bug"]
    assert options["provider"] == "mock"
    assert options["max_turns"] == 3
    assert options["timeout"] == 2.5
    assert options["permission"] == "ask"
    assert options["socket"] == "/s"
    assert options["json"] is True
    assert options["stdio"] is True


def test_session_choice_flags() -> None:
    """--session, --continue and --fork are parsed (their combination is checked later)."""
    assert parse("send", "--session", "abc", "x")["session"] == "abc"
    assert parse("send", "--continue", "x")["continue_"] is True
    assert parse("send", "--fork", "abc", "x")["fork"] == "abc"


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "--permission", "sometimes", "x"],
        ["send", "--max-turns", "0", "x"],
        ["send", "--timeout", "-1", "x"],
        ["send", "--json", "--quiet", "x"],
        ["send", "--no-such-flag"],
        ["frobnicate"],
        [],
        ["sessions", "export", "ID", "--format", "pdf"],
        ["daemon"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Bad flags, values or commands print usage to stderr and return 2."""
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """--help prints the exit codes and returns 0."""
    assert main(["--help"]) == 0
    assert "exit codes" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the package version."""
    from agentd import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"agentctl {__version__}\n"


def test_other_commands_parse() -> None:
    """sessions, attach, daemon and rpc take their documented arguments."""
    assert parse("sessions")["action"] is None
    assert parse("sessions", "export", "ID", "--format", "html", "-o", "f.html")["output"] == (
        "f.html"
    )
    assert parse("sessions", "rm", "ID", "--force")["force"] is True
    assert parse("attach", "ID", "--since", "5", "--json")["since"] == 5
    assert parse("daemon", "logs", "-n", "5", "-f")["follow"] is True
    assert parse("rpc", "daemon/status")["params"] is None
    assert parse("rpc", "session/new", '{"cwd": "."}', "--events")["events"] is True


def test_version_imports_nothing_heavy() -> None:
    """--version runs without loading msgspec, asyncio or argparse (a fresh interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from agentctl.cli import main\n"
        "main(['--version'])\n"
        "print(sorted(m for m in ('msgspec', 'asyncio', 'argparse') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == "[]"


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_a_command_line_naming_a_command_builds_its_grammar_the_same() -> None:
    """``build_parser(argv)`` builds only the part of the grammar of ``argv[0]``'s command:
    every command of the full grammar is found there, with the same help, and parses alike."""
    full = _commands(build_parser())
    for name, sub in full.items():
        narrowed = _commands(build_parser([name]))
        assert name in narrowed, name
        assert len(narrowed) < len(full), name
        assert narrowed[name].format_help() == sub.format_help(), name
    argv = ["send", "--provider", "mock", "-q", "fix", "it"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))
    argv = ["sessions", "rename", "x", "a title"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))
    assert len(_commands(build_parser(["--socket", "s", "send"]))) == len(full)
    assert len(_commands(build_parser(["nonsense"]))) == len(full)
