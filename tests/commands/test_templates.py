"""Custom command files: parsing, names, arguments and expansion (real files in tmp dirs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentd.config.commands import (
    MAX_COMMAND_FILES,
    MAX_EXPANSION_CHARS,
    CommandTemplate,
    expand,
    load_commands,
    parse_command,
    parse_invocation,
    split_arguments,
)
from agentd.protocol.trust_list import add_trusted


def template(body: str) -> CommandTemplate:
    return CommandTemplate(name="t", description="d", body=body, source="user", path="/t.md")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"two words" three', ["two words", "three"]),
        ("it's 'single quoted' x", ["its single", "quoted x"]),  # a quote opened mid-word
        ('say "a \\"b\\"" done', ["say", 'a "b"', "done"]),
        ('"" empty', ["", "empty"]),
        ('"unclosed rest of it', ["unclosed rest of it"]),
        ("back\\ slash", ["back slash"]),
        ("   ", []),
    ],
)
def test_arguments_split_at_unquoted_spaces(text: str, words: list[str]) -> None:
    assert split_arguments(text) == words


def test_placeholders_take_the_arguments() -> None:
    body = "Review $1 for $2.$3 All: $ARGUMENTS; not $10 nor $PATH."
    expanded = expand(template(body), 'src/a.py "race conditions"')
    assert expanded == (
        'Review src/a.py for race conditions. All: src/a.py "race conditions"; '
        "not src/a.py0 nor $PATH."
    )


def test_a_body_without_placeholders_gets_the_arguments_appended() -> None:
    assert expand(template("Summarise the diff."), "") == "Summarise the diff."
    assert expand(template("Summarise the diff."), "HEAD~2") == (
        "Summarise the diff.\n\nArguments: HEAD~2"
    )


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        ("/review a.py  b", "review", "a.py  b"),
        ("/review", "review", ""),
        ("/review\nmore lines\n", "review", "more lines"),
        ("/etc/hosts is broken", None, None),
        (" /review", None, None),
        ("review", None, None),
        ("/-x", None, None),
    ],
)
def test_what_invokes_a_command(text: str, name: str | None, arguments: str | None) -> None:
    invocation = parse_invocation(text)
    if name is None:
        assert invocation is None
    else:
        assert invocation is not None
        assert (invocation.name, invocation.arguments) == (name, arguments)


def test_front_matter_and_defaults(tmp_path: Path) -> None:
    full = tmp_path / "review.md"
    full.write_text(
        "---\ndescription: 'Review a file'\nargument-hint: FILE [FOCUS]\n"
        "model: mock/big-model\n---\nReview $1.\n"
    )
    command = parse_command(full, "user")
    assert (command.name, command.description, command.argument_hint, command.model) == (
        "review", "Review a file", "FILE [FOCUS]", "mock/big-model"
    )  # fmt: skip
    assert command.body == "Review $1."
    bare = tmp_path / "standup.md"
    bare.write_text("\n  Summarise yesterday's commits in three bullets.\nThen stop.\n")
    command = parse_command(bare, "project")
    assert command.description == "Summarise yesterday's commits in three bullets."
    assert command.argument_hint is None
    assert command.model is None


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("bad name.md", "Body", "bad name 'bad name'"),
        ("_x.md", "Body", "bad name '_x'"),
        ("open.md", "---\ndescription: x\nBody", "not closed"),
        ("typo.md", "---\ndescripton: x\n---\nBody", "unknown front matter key 'descripton'"),
        ("junk.md", "---\njust words\n---\nBody", "line 2 of its front matter"),
        ("empty.md", "---\ndescription: x\n---\n\n", "prompt (the text after"),
        ("model.md", "---\nmodel: a b\n---\nBody", "bad model 'a b'"),
        ("huge.md", "x" * (64 * 1024 + 1), "larger than 64 KB"),
    ],
)
def test_invalid_files_say_what_is_wrong(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_command(path, "user")


def test_project_commands_win_and_need_trust(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    user = tmp_path / "config" / "agentd" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("---\ndescription: user review\n---\nUser $1")
    (user / "standup.md").write_text("Standup")
    (user / "broken name.md").write_text("x")
    (user / "notes.txt").write_text("not a command")
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".agentd" / "commands").mkdir(parents=True)
    (project / ".agentd" / "commands" / "review.md").write_text("Project $1")
    cwd = project / "src" / "deep"
    cwd.mkdir(parents=True)

    untrusted = load_commands(cwd, env)
    assert {n: c.source for n, c in untrusted.commands.items()} == {
        "review": "user", "standup": "user"
    }  # fmt: skip
    assert any("not trusted" in w and "agentctl trust" in w for w in untrusted.warnings)
    assert any("broken name.md" in w and "bad name" in w for w in untrusted.warnings)

    add_trusted(project, env)
    trusted = load_commands(cwd, env)
    assert trusted.commands["review"].source == "project"
    assert trusted.commands["review"].body == "Project $1"
    assert not any("not trusted" in w for w in trusted.warnings)


def test_a_folder_with_too_many_files_is_cut_with_a_warning(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    folder = tmp_path / "config" / "agentd" / "commands"
    folder.mkdir(parents=True)
    for n in range(MAX_COMMAND_FILES + 5):
        (folder / f"c{n:04d}.md").write_text(f"Command {n}")
    scan = load_commands(tmp_path, env)
    assert len(scan.commands) == MAX_COMMAND_FILES
    assert "c0000" in scan.commands
    assert f"c{MAX_COMMAND_FILES:04d}" not in scan.commands
    assert any(f"only the first {MAX_COMMAND_FILES}" in w for w in scan.warnings)


def test_an_expansion_is_capped() -> None:
    greedy = template("$ARGUMENTS " * 100)
    with pytest.raises(ValueError, match="would expand to more than 8 MiB"):
        expand(greedy, "x" * (MAX_EXPANSION_CHARS // 50))
    assert len(expand(greedy, "x" * 1000)) == 100 * 1001


def test_the_docs_example_reads_without_its_comments(tmp_path: Path) -> None:
    """The example of docs/commands.md, verbatim: its trailing ``# comments`` are comments."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
    example = re.search(r"```markdown\n(---\n.*?)```", docs.read_text(encoding="utf-8"), re.S)
    assert example is not None
    assert "# shown in menus" in example[1]
    path = tmp_path / "review.md"
    path.write_text(example[1], encoding="utf-8")
    command = parse_command(path, "user")
    assert (command.description, command.argument_hint, command.model) == (
        "Review a file for bugs", "FILE [FOCUS]", "openai/gpt-4.1"
    )  # fmt: skip
    assert command.body.startswith("Review $1 for bugs")
