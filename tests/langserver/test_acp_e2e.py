"""Through ``agentd acp`` and the official ACP SDK as the editor: the language server sees
the editor's unsaved buffer (ACP ``fs``), and an edit's new problems are in the tool call's
content the editor shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.langserver.conftest import BROKEN, MAIN, SCENARIOS, make_project, pylsp_table

pytestmark = pytest.mark.e2e


def _box() -> Box:
    box = Box()
    make_project(box.project)
    scenarios = box.root / "lsp-scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": SCENARIOS}))
    box.env["AGENTD_MOCK_SCENARIOS"] = str(scenarios)
    box.write_config(pylsp_table())
    return box


def _shown(editor: Editor) -> str:
    """The text of the last tool call's content as the editor got it."""
    update = editor.of("tool_call_update")[-1]
    return "".join(
        getattr(getattr(block, "content", None), "text", "") for block in update.content or []
    )


async def test_the_server_sees_the_editors_buffer_and_edits_show_new_problems() -> None:
    with _box() as box:
        main = box.project / "main.py"
        unsaved = MAIN + "\nprint(only_in_the_buffer)\n"
        editor = Editor(fs=True, permission="allow_once", buffers={str(main): unsaved})
        async with spawn(box, editor) as (conn, _):
            session = await conn.new_session(cwd=str(box.project))
            sid = session.session_id
            await conn.prompt(session_id=sid, prompt=[acp.text_block("lsp-diagnostics")])
            diagnosed = _shown(editor)
            await conn.prompt(session_id=sid, prompt=[acp.text_block("lsp-break")])
            broken = _shown(editor)
        assert "undefined name 'only_in_the_buffer'" in diagnosed
        assert "main.py:7:7" in diagnosed
        assert "New problems the language server reports" in broken
        assert "undefined_x" in broken
        assert editor.buffers[str(main)] == unsaved.replace("return helper(2)", BROKEN)
        assert Path(main).read_text() == MAIN  # the editor owns the file
