"""``agentd lsp --shared``: the editor's session is the shared daemon's, seen by the other
clients (``agentctl``), and the daemon's file and permission requests still reach the
editor (its buffer gets the edit through ``workspace/applyEdit``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.harness import scaled
from tests.lsp.conftest import Box, Editor, spawn

pytestmark = pytest.mark.e2e


def agentctl(box: Box, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", *args],
        env=box.env,
        cwd=box.project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


async def test_the_editors_session_is_visible_to_another_client(box: Box) -> None:
    draft = box.project / "draft.py"
    draft.write_text("on disk\n")
    editor = Editor(approval="Allow once")
    async with spawn(box, editor, "--shared", "--permission-mode", "ask"):
        uri = editor.open(draft, "def greet(name):\n    pritn('hello', name)\n")
        answer = await editor.run("agentd.prompt", {"prompt": "fix the typo", "uri": uri})
        assert answer["text"] == "Fixed the typo."
        assert editor.approvals == ["agentd wants to run edit: draft.py"]
        assert editor.buffers[uri] == "def greet(name):\n    print('hello', name)\n"
        assert draft.read_text() == "on disk\n"
        listed = await asyncio.to_thread(agentctl, box, "sessions", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert answer["sessionId"] in listed.stdout
        sent = await asyncio.to_thread(
            agentctl, box, "send", "--session", answer["sessionId"], "hello world"
        )
        assert sent.returncode == 0, sent.stderr
        again = await editor.run(
            "agentd.prompt", {"prompt": "hello world", "sessionId": answer["sessionId"]}
        )
        assert again["sessionId"] == answer["sessionId"]
