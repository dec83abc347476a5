"""Which language servers a session gets: built-ins only when their command is found, the
``[language_servers.NAME]`` tables over them, a project's tables only in a trusted folder,
a bad table named by its key; and the 1-based positions in each encoding."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from agentd.config.load import load_config
from agentd.config.schema import LanguageServerSection, validate
from agentd.errors import ConfigError
from agentd.langserver.defs import BUILTINS, definitions, root_for, server_for
from agentd.langserver.positions import from_units, position, to_units
from agentd.langserver.rename import apply_text_edits
from agentd.protocol.trust_list import add_trusted
from agentd.tools.base import ToolError


def test_builtins_are_used_only_when_their_command_is_found() -> None:
    found = {"pylsp": "/x/pylsp", "gopls": "/x/gopls"}
    defs = definitions({}, found.get)
    assert [d.name for d in defs] == ["pylsp", "gopls"]
    assert server_for(defs, Path("/p/a.py")).name == "pylsp"  # type: ignore[union-attr]
    assert server_for(defs, Path("/p/a.rs")) is None
    assert {d.name for d in BUILTINS} >= {"pyright", "basedpyright", "typescript", "clangd"}


def test_a_table_changes_or_switches_off_a_builtin_or_adds_a_server() -> None:
    tables = {
        "pylsp": LanguageServerSection(enabled=False),
        "gopls": LanguageServerSection(args=["serve", "-rpc.trace"]),
        "mine": LanguageServerSection(command=sys.executable, languages=["python"], env={"A": "b"}),
        "endless": LanguageServerSection(command="/opt/endless"),  # no extensions: left out
    }
    defs = definitions(tables, lambda name: f"/usr/bin/{name}")
    by_name = {d.name: d for d in defs}
    assert "pylsp" not in by_name
    assert by_name["gopls"].argv == ["gopls", "serve", "-rpc.trace"]
    assert by_name["gopls"].extensions == (".go",)
    assert by_name["mine"].extensions == (".py", ".pyi")
    assert by_name["mine"].env == (("A", "b"),)
    assert "endless" not in by_name
    assert [d.name for d in defs][:2] == ["gopls", "mine"]  # tables first: they win a file


def test_a_bad_table_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"language_servers\.py\.comand"):
        validate({"language_servers": {"py": {"comand": "pylsp"}}}, "config.toml")
    with pytest.raises(ConfigError, match=r"language_servers\.py\.startup_timeout"):
        validate({"language_servers": {"py": {"startup_timeout": -1}}}, "config.toml")


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    table = '[language_servers.mine]\ncommand = "/bin/true"\nextensions = [".py"]\n'
    (project / ".agentd.toml").write_text(table)
    return project, env


def test_an_untrusted_project_cannot_add_a_server(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    config = load_config(project, env=env)
    assert config.settings.language_servers == {}
    (warning,) = config.warnings
    assert "language_servers" in warning
    assert f"agentctl trust {project}" in warning


def test_a_trusted_project_adds_its_server(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    add_trusted(project, env)
    config = load_config(project, env=env)
    assert config.settings.language_servers["mine"].command == "/bin/true"
    assert [d.name for d in definitions(config.settings.language_servers, lambda _: None)] == [
        "mine"
    ]


def test_the_root_is_the_nearest_marker_within_the_session_folder(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "src").mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("")
    (pylsp,) = definitions({}, lambda name: name if name == "pylsp" else None)
    assert root_for(pylsp, tmp_path / "pkg" / "src" / "a.py", tmp_path) == tmp_path / "pkg"
    assert root_for(pylsp, tmp_path / "b.py", tmp_path) == tmp_path
    assert root_for(pylsp, Path("/elsewhere/c.py"), tmp_path) == tmp_path


@pytest.mark.parametrize(
    ("encoding", "units"), [("utf-16", 4), ("utf-8", 7), ("utf-32", 3)]
)  # fmt: skip
def test_columns_are_characters_converted_to_the_negotiated_encoding(
    encoding: str, units: int
) -> None:
    line = "é😀x = name"  # é: 2 UTF-8 bytes; 😀: 2 UTF-16 units, 4 UTF-8 bytes
    assert to_units(line, 2, encoding) == {"utf-16": 3, "utf-8": 6, "utf-32": 2}[encoding]
    at = position([line], 1, None, "name", encoding)
    assert at == types.Position(line=0, character=to_units(line, 6, encoding))
    assert from_units(line, at.character, encoding) == 6
    assert to_units(line, 3, encoding) == units


def test_a_symbol_not_on_the_line_or_a_line_out_of_range_is_a_clear_error() -> None:
    with pytest.raises(ToolError, match="'helper' is not on line 1"):
        position(["x = 1"], 1, None, "helper", "utf-16")
    with pytest.raises(ToolError, match="line 3 is out of range: the file has 1 lines"):
        position(["x = 1"], 3, 1, None, "utf-16")
    assert position(["helpers = helper"], 1, None, "helper", "utf-16").character == 10


def test_text_edits_apply_against_the_original_text_with_crlf() -> None:
    text = "a😀b = 1\r\nprint(a😀b)\r\n"
    edits = [
        types.TextEdit(range=types.Range(start=types.Position(line=1, character=6),
                                         end=types.Position(line=1, character=10)), new_text="z"),
        types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                         end=types.Position(line=0, character=4)), new_text="z"),
    ]  # fmt: skip
    assert apply_text_edits(text, edits, "utf-16") == "z = 1\r\nprint(z)\r\n"
    assert os.linesep  # the file's own endings are kept, whatever the platform's
