"""``agentd lsp --sandbox workspace``: ``--permission-mode auto`` runs bash unasked; without
the sandbox the prompt is refused with a message naming the flag and the user's config file
by its real path."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Box, Editor, spawn


async def test_auto_with_the_sandbox_runs_unasked(box: Box) -> None:
    box.user_config("", auto=False)  # no opt-in to auto without a sandbox
    editor = Editor(approval="Reject")
    async with spawn(box, editor, "--permission-mode", "auto", "--sandbox", "workspace"):
        answer = await editor.run("agentd.prompt", {"prompt": "say approved"})
    assert answer["text"] == "Ran it."
    assert editor.approvals == []
    assert (box.project / "approved.txt").exists()


async def test_auto_without_the_sandbox_names_the_flag_and_the_config(box: Box) -> None:
    config = box.user_config("", auto=False)
    editor = Editor()
    async with spawn(box, editor, "--permission-mode", "auto"):
        with pytest.raises(JsonRpcException) as refused:
            await editor.run("agentd.prompt", {"prompt": "say approved"})
    assert "--sandbox workspace" in refused.value.message
    assert f"under `[permissions]` in {config}" in refused.value.message
    assert not (box.project / "approved.txt").exists()
