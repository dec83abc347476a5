"""The configuration snippets of ``editors/lsp/README.md``: every marked snippet parses in its
language (the untested editors' too), and each editor's "tested" claim names a test file that
runs that snippet (the Neovim and Emacs tests read the snippets from the README)."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.lsp_editors.harness import DOCS, find_emacs, snippet

MARKED = re.findall(r"<!-- snippet: ([\w-]+) -->\n```(\w+)\n", DOCS.read_text())
TESTS = Path(__file__).parent
TESTED = ("nvim-start", "nvim-config", "nvim-07", "nvim-command", "eglot")


def test_the_readme_marks_every_editor_snippet() -> None:
    names = {name for name, _ in MARKED}
    assert set(TESTED) <= names
    assert {"lsp-mode", "helix", "sublime", "kate"} <= names


@pytest.mark.parametrize(("name", "language"), [m for m in MARKED if m[1] in ("toml", "json")])
def test_toml_and_json_snippets_parse(name: str, language: str) -> None:
    text = snippet(name)
    parsed = tomllib.loads(text) if language == "toml" else json.loads(text)
    assert "agentd" in json.dumps(parsed)


def test_helix_snippet_declares_the_server() -> None:
    config = tomllib.loads(snippet("helix"))
    assert config["language-server"]["agentd"] == {"command": "agentd", "args": ["lsp"]}
    assert all("agentd" in language["language-servers"] for language in config["language"])


@pytest.mark.parametrize("name", [name for name, language in MARKED if language == "elisp"])
def test_elisp_snippets_read(name: str, tmp_path: Path) -> None:
    """Every form of the snippet reads (balanced, well-formed) in a real Emacs."""
    source = tmp_path / f"{name}.el"
    source.write_text(snippet(name))
    reader = (
        f"(with-temp-buffer (insert-file-contents {json.dumps(str(source))})"
        " (condition-case nil (while t (read (current-buffer))) (end-of-file nil)))"
    )
    done = subprocess.run(
        [find_emacs(), "--batch", "--eval", reader], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_tested_snippets_are_run_by_the_tests_the_readme_names() -> None:
    """The README's "tested (tests/lsp_editors/X.py)" claims name files that exist and
    that run every snippet called tested."""
    claims = set(re.findall(r"tests/lsp_editors/(test_\w+\.py)", DOCS.read_text()))
    assert claims == {"test_nvim.py", "test_emacs.py"}
    sources = "".join((TESTS / claim).read_text() for claim in claims)
    assert [name for name in TESTED if f'"{name}"' not in sources] == []
