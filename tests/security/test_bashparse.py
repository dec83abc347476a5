"""The bash parse permission rules work on: simple commands in source order, with their
redirections, wherever they are nested, and every reason that makes an input opaque."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentd.tools.shellparse.grammar import SYNTAX_ERROR, SimpleCommand, parse_command
from tests.harness import scaled


def argvs(command: str) -> list[tuple[str, ...]]:
    return [simple.argv for simple in parse_command(command).commands]


def test_simple_commands_in_source_order_with_their_redirections() -> None:
    parsed = parse_command("a 1 2>&1 | b; c >/dev/null 2>&1 > out; d <in")
    assert parsed.commands == (
        SimpleCommand(("a", "1"), (), (("2>&", "1"),)),
        SimpleCommand(("b",), (), ()),
        SimpleCommand(("c",), (), ((">", "/dev/null"), ("2>&", "1"), (">", "out"))),
        SimpleCommand(("d",), (), (("<", "in"),)),
    )
    assert parsed.allowable


@pytest.mark.parametrize(
    "command",
    [
        "a && b > out",  # the grammar redirects the whole list
        "a | b > out",
        "a; { b; } > out",
        "(a; b) > out",
        "if a; then b; fi > out",
        "for i in x; do a; b; done > out",
    ],
)
def test_a_redirected_list_or_compound_statement_redirects_each_of_its_commands(
    command: str,
) -> None:
    """Bash gives ``a && b > out``'s redirection to ``b`` only; each command taking it on can
    only make a rule stricter, losing it let an allow rule approve a write."""
    commands = parse_command(command).commands
    assert [simple.argv for simple in commands if simple.argv[0] == "b"] == [("b",)]
    for simple in commands:
        if simple.argv[0] == "b" or command.startswith(("a &&", "a |", "(", "if", "for")):
            assert (">", "out") in simple.redirects, simple


def test_words_lose_their_quotes_and_expansions_are_marked() -> None:
    (simple,) = parse_command("A=1 git commit -m 'a b' \"c $HOME\" x\\ y").commands
    assert simple.assignments == ("A=1",)
    assert simple.argv == ("git", "commit", "-m", "a b", "c $HOME", "x y")
    assert simple.dynamic == frozenset({4})
    assert simple.words == ["A=1", "git", "commit", "-m", "a b", "c $HOME", "x y"]


def test_commands_nested_anywhere_are_found() -> None:
    command = 'if a; then (b | c); fi; echo "$(d $(e))" > "$(f)"; for i in x; do g; done'
    assert [argv[0] for argv in argvs(command)] == ["a", "b", "c", "echo", "d", "e", "f", "g"]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls # c", "a comment"),
        ("ls $(x)", "a command substitution"),
        ("ls `x`", "a command substitution"),
        ("diff <(a) b", "a process substitution"),
        ("cat <<EOF\nx\nEOF\n", "a here-document"),
        ("f() { ls; }", "a function definition"),
        ("A=1", "a variable assignment on its own"),
        ("export A=1 && B=2", "a variable assignment on its own"),
        ("$X a", "a command name that is not a plain word"),
        ("eval ls", "`eval`, which runs a string as commands"),
        ("/bin/source x", "`/bin/source`, which runs a string as commands"),
        ("ls 'open", SYNTAX_ERROR),
    ],
)
def test_what_makes_an_input_opaque(command: str, reason: str) -> None:
    parsed = parse_command(command)
    assert reason in parsed.opaque
    assert not parsed.allowable


def test_assignments_a_command_owns_are_not_opaque_but_their_values_are_walked() -> None:
    assert parse_command("A=1 ls; export B=2 C").opaque == ()
    parsed = parse_command("export B=$(rm x)")
    assert parsed.opaque == ("a command substitution",)
    assert argvs("export B=$(rm x)") == [("export", "B=$(rm x)"), ("rm", "x")]


def test_a_redirection_holding_a_substitution_is_walked() -> None:
    parsed = parse_command("ls 2>&1 > $(rm -rf x)")
    assert [simple.argv for simple in parsed.commands] == [("ls",), ("rm", "-rf", "x")]
    assert parsed.commands[0].redirects == (("2>&", "1"), (">", "$(rm -rf x)"))


def test_deep_nesting_and_non_ascii_text() -> None:
    deep = "echo " + "$(" * 300 + "rm x" + ")" * 300
    assert ("rm", "x") in argvs(deep)
    assert argvs("cät fü 'ä b' > ö") == [("cät", "fü", "ä b")]
    assert parse_command("cät fü > ö").commands[0].redirects == ((">", "ö"),)


def test_a_long_list_of_plain_commands() -> None:
    command = " && ".join(f"npm test -- --grep c{i} 2>&1 | tee /dev/null" for i in range(40))
    parsed = parse_command(command)
    assert parsed.allowable
    assert len(parsed.commands) == 80
    assert parsed.commands[78] == SimpleCommand(
        ("npm", "test", "--", "--grep", "c39"), (), (("2>&", "1"),)
    )


def test_distinct_commands_keep_first_occurrences_in_order() -> None:
    parsed = parse_command("a | tee log && b | tee log && a && c > f; c > f")
    assert [simple.argv for simple in parsed.commands] == [
        ("a",), ("tee", "log"), ("b",), ("tee", "log"), ("a",), ("c",), ("c",)
    ]  # fmt: skip
    assert [simple.argv for simple in parsed.distinct] == [("a",), ("tee", "log"), ("b",), ("c",)]


def test_the_parser_loads_the_grammar_without_the_packages_extras() -> None:
    """A fresh interpreter parses with tree-sitter-bash's compiled grammar while leaving its
    package's ``__init__`` (and the ``importlib.resources``, ``tempfile`` and ``shutil`` it
    brings) unimported."""
    code = (
        "import json, sys\n"
        "from agentd.tools.shellparse.grammar import parse_command\n"
        "parsed = parse_command('ls -la | grep x > out')\n"
        "argvs = [list(c.argv) for c in parsed.commands]\n"
        "extras = ('tree_sitter_bash', 'importlib.resources', 'tempfile', 'shutil')\n"
        "print(json.dumps([argvs, [m for m in extras if m in sys.modules]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60)
    )
    assert json.loads(result.stdout) == [[["ls", "-la"], ["grep", "x"]], []]
