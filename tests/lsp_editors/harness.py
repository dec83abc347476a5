"""Real editors' built-in LSP clients driving ``agentd lsp`` with the mock LLM.

Neither editor loads an agentd plugin: Neovim's ``vim.lsp`` (the pip 0.12 build and the
system's 0.7.2, through pynvim) and Emacs 28's eglot (``emacs --batch``) start ``agentd lsp``
the way the configuration in ``docs/lsp-editors.md`` does, open a file and run
``agentd.prompt`` through ``workspace/executeCommand``. The agent's edit must come back as
``workspace/applyEdit`` and land in the editor's buffer.

Every daemon runs in an isolated :class:`~tests.harness.Home` (auto permission mode, the mock
LLM answering :data:`SCENARIOS` first); a missing editor skips its tests with the reason.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, scaled
from tests.scenarios import tool_call

GREETING = "hello world\nsecond line\n"
FIXED_GREETING = "hello agentd\nsecond line\n"
DRAFT = "unsaved draft\n"
FIXED_DRAFT = "saved by agentd\n"


def _edit_then_reply(name: str, trigger: str, old: str, new: str) -> dict[str, Any]:
    """A scenario: one ``edit`` of ``notes.txt`` (``old`` → ``new``), then a final reply."""
    edit = tool_call(
        "edit", {"path": "notes.txt", "old_string": old, "new_string": new}, "call_edit"
    )
    return {
        "name": name,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Editing notes.txt.", "tool_calls": [edit]}},
            {"response": {"content": f"notes.txt now says {new}."}},
        ],
    }


SCENARIOS: list[dict[str, Any]] = [
    _edit_then_reply("lsp-fix-greeting", "fix the greeting", "hello world", "hello agentd"),
    # "unsaved draft" is only in the editor's buffer: the edit finds it only if the server
    # reads the text the editor synchronised, not the file on disk
    _edit_then_reply("lsp-fix-draft", "fix the unsaved draft", "unsaved draft", "saved by agentd"),
]


def make_home() -> Home:
    """An isolated home (trusted project, auto mode) whose mock LLM knows :data:`SCENARIOS`."""
    home = Home()
    home.user_config('provider = "mock"\n')  # the snippets start a bare `agentd lsp`
    home.use_scenarios(SCENARIOS)
    return home


def editor_env(home: Home) -> dict[str, str]:
    """``home.env`` with this interpreter's bin folder first on ``PATH`` (the snippets'
    ``agentd`` is this checkout's) and the editors' caches under the home."""
    env = dict(home.env)
    env["XDG_CACHE_HOME"] = str(home.root / "cache")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@functools.cache
def _emacs_with_eglot() -> tuple[str | None, str]:
    """The ``emacs`` binary if it can load eglot, else None and why."""
    binary = shutil.which("emacs")
    if binary is None:
        return None, "no emacs (apt-get install emacs-nox elpa-eglot; .ci/system-packages does it)"
    probe = [binary, "--batch", "--eval", "(require 'eglot)"]
    if subprocess.run(probe, capture_output=True, timeout=scaled(120), check=False).returncode != 0:
        return None, f"{binary} cannot load eglot (apt-get install elpa-eglot)"
    return binary, ""


def find_emacs() -> str:
    """The ``emacs`` binary (with eglot), or skip the test with the reason."""
    binary, reason = _emacs_with_eglot()
    if binary is None:
        pytest.skip(reason)
    return binary


DOCS = Path(__file__).parents[2] / "editors" / "lsp" / "README.md"


def snippet(name: str) -> str:
    """The code block marked ``<!-- snippet: NAME -->`` in ``editors/lsp/README.md``: the
    tests run the configuration exactly as the docs show it."""
    text = DOCS.read_text()
    marker = f"<!-- snippet: {name} -->\n```"
    start = text.index(marker) + len(marker)
    body = text.index("\n", start) + 1
    return text[body : text.index("\n```\n", body) + 1]
