"""A notebook edit through a real daemon and the mock LLM: recorded for ``session/rewind``
(which restores the notebook byte for byte), and shown in the event stream with its details;
a session that never touches a document imports none of the document libraries."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.documents.notebooks import fixture_cells, write_notebook
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

SCENARIO = {
    "name": "notebook-edit",
    "trigger": "edit the notebook",
    "steps": [
        {
            "response": {
                "content": "",
                "tool_calls": [tool_call("read", {"path": "nb.ipynb"}, "r1")],
            }
        },
        {
            "response": {
                "content": "",
                "tool_calls": [
                    tool_call(
                        "notebook_edit",
                        {"path": "nb.ipynb", "cell_id": "code-2", "source": "print(2)"},
                        "n1",
                    )
                ],
            }
        },
        {"response": {"content": "notebook edited."}},
    ],
}


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        box.use_scenarios([SCENARIO])
        yield box


async def test_rewind_restores_an_edited_notebook(home: Home) -> None:
    path = home.project / "nb.ipynb"
    before = write_notebook(path, fixture_cells()[:3])  # no image: the mock's turns stay plain
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "edit the notebook")
        assert result["stopReason"] == "end_turn"
        ends = [e["event"] for e in events if e["event"].get("type") == "tool_execution_end"]
        details = {e["toolCallId"]: e.get("details") for e in ends}
        assert details["r1"]["type"] == "read_notebook"
        assert details["n1"]["type"] == "notebook_edit"
        assert details["n1"]["outputsCleared"] is True
        assert b'"print(2)"' in path.read_bytes()
        rewound = await client.call("session/rewind", {"sessionId": sid})
    assert rewound["restored"] == [str(path)]
    assert path.read_bytes() == before


def test_a_plain_session_imports_no_document_library(tmp_path: Path) -> None:
    """A session and a run on the mock that write a file load neither nbformat, pypdf,
    pypdfium2 nor the document modules."""
    code = f"""
import asyncio, os, sys
for name, folder in [("XDG_CONFIG_HOME", "c"), ("XDG_DATA_HOME", "d"), ("XDG_STATE_HOME", "s"),
                     ("XDG_CACHE_HOME", "k"), ("XDG_RUNTIME_DIR", "r")]:
    os.makedirs({str(tmp_path)!r} + "/" + folder, mode=0o700, exist_ok=True)
    os.environ[name] = {str(tmp_path)!r} + "/" + folder
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.session.service import SessionService

async def main():
    service = SessionService()
    info = await service.create(SessionNewParams(cwd={str(tmp_path)!r}, provider="mock"))
    await service.prompt(PromptParams(session_id=info.session_id, text="write a file"))
    await service.close()

asyncio.run(main())
heavy = ("nbformat", "jsonschema", "pypdf", "pypdfium2", "agentd.tools.documents",
         "agentd.tools.websearch")
print("LOADED:", *(m for m in sys.modules if m.startswith(heavy)))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.splitlines()[-1] == "LOADED:"
