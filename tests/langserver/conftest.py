"""Fixtures of the language-server tests: a small Python project (three files that use one
function), scenarios that drive the ``lsp`` tool and edits through the mock LLM, and
``[language_servers]`` tables naming the real servers installed beside the interpreter."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import SLOWDOWN, Home
from tests.scenarios import tool_call

BIN = Path(sys.executable).parent
WAIT_MS = min(60_000, int(30_000 * SLOWDOWN))
HOSTILE = Path(__file__).with_name("hostile_server.py")

UTIL = "def helper(x: int) -> int:\n    return x + 1\n"
MAIN = "from util import helper\n\n\ndef run() -> int:\n    return helper(2)\n"
OTHER = "from util import helper\n\nVALUE = helper(40)\n"
BROKEN = "return helper(undefined_x)"


def server_command(name: str) -> Path | None:
    """A real server's program (beside the interpreter, else on PATH); None when absent."""
    here = BIN / name
    if here.exists():
        return here
    found = shutil.which(name)
    return Path(found) if found else None


def table(name: str, command: str | Path, *args: str, **keys: Any) -> str:
    lines = [f"[language_servers.{name}]", f"command = {json.dumps(str(command))}"]
    lines.append(f"args = {json.dumps(list(args))}")
    lines += [f"{key} = {_toml(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A value as TOML (tables inline)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def pylsp_table() -> str:
    command = server_command("pylsp")
    if command is None:
        pytest.skip("python-lsp-server is not installed (the dev extra installs it)")
    return table("pylsp", command, extensions=[".py"]) + off("basedpyright", "pyright")


def pyright_table() -> str:
    command = server_command("basedpyright-langserver")
    if command is None:
        pytest.skip("basedpyright is not installed (the dev extra installs it)")
    return table("basedpyright", command, "--stdio", extensions=[".py"]) + off("pylsp", "pyright")


def off(*names: str) -> str:
    """Tables switching the built-ins ``names`` off (a test names the one server it uses),
    and a wait for diagnostics long enough for a first analysis on a loaded machine."""
    tables = "".join(f"[language_servers.{name}]\nenabled = false\n" for name in names)
    return tables + f"[tools]\ndiagnostics_wait_ms = {WAIT_MS}\n"


def hostile_table(mode: str, tag: Path, **keys: Any) -> str:
    """The misbehaving server (:mod:`tests.langserver.hostile_server`) in ``mode`` as the
    only Python server; ``tag`` (a path of the test's own) in its argv finds its process."""
    own = table("hostile", sys.executable, str(HOSTILE), mode, str(tag), extensions=[".py"], **keys)
    return own + off("pylsp", "basedpyright", "pyright")


def one_call(trigger: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "", "tool_calls": [tool_call(name, args)]}},
            {"response": {"content": f"{trigger} done"}},
        ],
    }


def lsp(trigger: str, **args: Any) -> dict[str, Any]:
    return one_call(trigger, "lsp", args)


SCENARIOS = [
    lsp("lsp-definition", operation="definition", path="main.py", line=5, symbol="helper"),
    lsp("lsp-references", operation="references", path="util.py", line=1, symbol="helper"),
    lsp("lsp-hover", operation="hover", path="main.py", line=5, symbol="helper"),
    lsp("lsp-symbols", operation="document_symbols", path="main.py"),
    lsp("lsp-workspace", operation="workspace_symbols", query="helper", path="util.py"),
    lsp("lsp-incoming", operation="incoming_calls", path="util.py", line=1, symbol="helper"),
    lsp("lsp-outgoing", operation="outgoing_calls", path="main.py", line=4, symbol="run"),
    lsp("lsp-implementation", operation="implementation", path="main.py", line=5, column=12),
    lsp("lsp-diagnostics", operation="diagnostics", path="main.py"),
    lsp("lsp-missing", operation="hover", path="main.py", line=5, symbol="nowhere"),
    lsp("lsp-text-file", operation="hover", path="notes.txt", line=1, column=1),
    lsp(
        "lsp-rename", operation="rename", path="util.py", line=1, symbol="helper", new_name="assist"
    ),
    one_call(
        "lsp-break",
        "edit",
        {"path": "main.py", "old_string": "return helper(2)", "new_string": BROKEN},
    ),
    one_call(
        "lsp-fix",
        "edit",
        {"path": "main.py", "old_string": BROKEN, "new_string": "return helper(2)"},
    ),
    one_call("lsp-write-broken", "write", {"path": "new.py", "content": "print(nothing_here)\n"}),
    one_call("lsp-undo", "undo_edit", {"path": "main.py"}),
    one_call("lsp-read-other", "read", {"path": "other.py"}),
]


def make_project(folder: Path) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'fixture'\nversion = '0'\n")
    (folder / "util.py").write_text(UTIL)
    (folder / "main.py").write_text(MAIN)
    (folder / "other.py").write_text(OTHER)
    (folder / "notes.txt").write_text("plain text\n")


@pytest.fixture
def home() -> Iterator[Home]:
    """The e2e home with the Python fixture project and the lsp scenarios first."""
    with Home() as box:
        make_project(box.project)
        box.use_scenarios(SCENARIOS)
        yield box


def ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


def result_text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"])


C_UTIL_H = "int helper(int x);\n"
C_UTIL = '#include "util.h"\n\nint helper(int x) { return x + 1; }\n'
C_MAIN = '#include "util.h"\n\nint run(void) { return helper(2); }\n'


def clangd_table() -> str:
    command = server_command("clangd")
    if command is None:
        pytest.skip("clangd is not installed (.ci/system-packages installs it)")
    return (
        table("clangd", command, extensions=[".c", ".h"])
        + f"[tools]\ndiagnostics_wait_ms = {WAIT_MS}\n"
    )


def make_c_project(folder: Path) -> None:
    (folder / "util.h").write_text(C_UTIL_H)
    (folder / "util.c").write_text(C_UTIL)
    (folder / "main.c").write_text(C_MAIN)
    flags = "-xc\n-std=c11\n"
    (folder / "compile_flags.txt").write_text(flags)


C_SCENARIOS = [
    lsp("c-definition", operation="definition", path="main.c", line=3, symbol="helper"),
    lsp("c-hover", operation="hover", path="main.c", line=3, symbol="helper"),
    one_call(
        "c-break",
        "edit",
        {"path": "main.c", "old_string": "helper(2)", "new_string": 'helper("two")'},
    ),
    one_call(
        "c-fix",
        "edit",
        {"path": "main.c", "old_string": 'helper("two")', "new_string": "helper(2)"},
    ),
]
