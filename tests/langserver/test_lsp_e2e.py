"""The ``lsp`` tool and the diagnostics after edits through a real daemon, the mock LLM and
real language servers (python-lsp-server with pyflakes, basedpyright) on a small project."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import (
    MAIN,
    OTHER,
    UTIL,
    ends,
    pylsp_table,
    pyright_table,
    result_text,
)

pytestmark = pytest.mark.e2e
TIMEOUT = 90


async def _calls(home: Home, *triggers: str) -> list[dict[str, Any]]:
    """Each trigger's one tool call, in one session: its ``tool_execution_end`` event."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        found = []
        for trigger in triggers:
            result, events = await run(client, sid, trigger, timeout=TIMEOUT)
            assert result["stopReason"] == "end_turn"
            (end,) = ends(events)
            found.append(end)
        status = await client.call("daemon/status", {})
    found.append(status)
    return found


@pytest.mark.parametrize("servers", [pylsp_table, pyright_table], ids=["pylsp", "basedpyright"])
async def test_positions_and_symbols_through_the_daemon(home: Home, servers: Any) -> None:
    home.user_config(servers())
    definition, references, hover, symbols, status = await _calls(
        home, "lsp-definition", "lsp-references", "lsp-hover", "lsp-symbols"
    )
    assert not definition.get("isError"), result_text(definition)
    assert "util.py:\n  1:5: def helper(x: int) -> int:" in result_text(definition)
    details = definition["details"]
    assert details["type"] == "lsp"
    assert details["operation"] == "definition"
    assert details["items"][0] == {
        "path": "util.py",
        "line": 1,
        "column": 5,
        "text": "def helper(x: int) -> int:",
    }
    text = result_text(references)
    assert "main.py:\n  1:18: from util import helper\n  5:12: return helper(2)" in text
    assert "util.py:\n  1:5: def helper" in text
    assert "other.py:\n  1:18: from util import helper\n  3:9: VALUE = helper(40)" in text
    assert references["details"]["total"] == 5
    assert "helper(x: int) -> int" in result_text(hover)
    assert "function run" in result_text(symbols)
    (server,) = status["languageServers"]
    assert server["state"] == "ready"
    assert server["root"] == str(home.project)
    assert server["pid"] > 0
    assert server["openDocuments"] >= 2


@pytest.mark.parametrize("servers", [pylsp_table, pyright_table], ids=["pylsp", "basedpyright"])
async def test_an_edit_that_breaks_gets_the_problem_and_the_fix_gets_none(
    home: Home, servers: Any
) -> None:
    home.user_config(servers())
    broken, fixed, undone, written, _ = await _calls(
        home, "lsp-break", "lsp-fix", "lsp-undo", "lsp-write-broken"
    )
    text = result_text(broken)
    assert "New problems the language server reports" in text
    assert "main.py:5:19: error:" in text
    assert "undefined_x" in text
    (problem, *_) = broken["details"]["diagnostics"]
    assert problem["severity"] == "error"
    assert (problem["path"], problem["line"], problem["column"]) == ("main.py", 5, 19)
    assert "undefined_x" in problem["message"]
    assert "New problems" not in result_text(fixed)
    assert fixed["details"]["diagnostics"] == []  # the server answered: nothing new
    assert "undefined_x" in result_text(undone)  # undoing the fix brings it back
    assert "nothing_here" in result_text(written)
    assert (home.project / "main.py").read_text() == MAIN.replace(
        "helper(2)", "helper(undefined_x)"
    )


async def test_pyright_answers_what_pylsp_does_not(home: Home) -> None:
    home.user_config(pyright_table())
    workspace, incoming, outgoing, _ = await _calls(
        home, "lsp-workspace", "lsp-incoming", "lsp-outgoing"
    )
    assert "util.py:\n  1:5 function helper: def helper(x: int) -> int:" in result_text(workspace)
    assert "main.py:\n  4:5 function run: def run() -> int:" in result_text(incoming)
    assert "other.py:\n  1:1 module" in result_text(incoming)  # a module-level use
    assert "function helper" in result_text(outgoing)


async def test_a_missing_operation_symbol_or_server_is_a_clear_result(home: Home) -> None:
    home.user_config(pylsp_table())
    workspace, missing, text_file, _ = await _calls(
        home, "lsp-workspace", "lsp-missing", "lsp-text-file"
    )
    assert workspace.get("isError")
    assert "pylsp does not offer workspace_symbols" in result_text(workspace)
    assert missing.get("isError")
    assert "'nowhere' is not on line 5" in result_text(missing)
    assert not text_file.get("isError")
    assert "No language server serves notes.txt. Servers available: pylsp (.py)" in result_text(
        text_file
    )


async def test_diagnostics_of_a_file(home: Home) -> None:
    (home.project / "main.py").write_text(MAIN + "\nprint(missing_name)\n")
    home.user_config(pylsp_table())
    (found, _) = await _calls(home, "lsp-diagnostics")
    assert "Problems in main.py (1):" in result_text(found)
    assert "main.py:7:7: error: undefined name 'missing_name'" in result_text(found)
    assert found["details"]["diagnostics"][0]["source"] == "pyflakes"


async def test_rename_across_three_files_asks_once_and_rewinds(home: Home) -> None:
    home.user_config(pyright_table(), auto=False)
    asked: list[RequestPermissionParams] = []

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params)
        return "allow_once"

    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="ask")
        # the model looks before it renames; a pyright that has just started may not have
        # enumerated the project's files yet (it does so without progress reports)
        await run(client, sid, "lsp-references", timeout=TIMEOUT)
        _, events = await run(client, sid, "lsp-rename", timeout=TIMEOUT)
        (end,) = ends(events)
        renamed = {n: (home.project / n).read_text() for n in ("util.py", "main.py", "other.py")}
        rewound = await client.call("session/rewind", {"sessionId": sid})
    assert not end.get("isError"), result_text(end)
    (request,) = asked
    preview = request.preview
    assert preview is not None
    assert preview.kind == "diff"
    assert preview.diff is not None
    for name in ("util.py", "main.py", "other.py"):
        assert f"+++ b/{name}" in preview.diff
    assert "-def helper(x: int) -> int:\n+def assist(x: int) -> int:" in preview.diff
    assert renamed == {
        "util.py": UTIL.replace("helper", "assist"),
        "main.py": MAIN.replace("helper", "assist"),
        "other.py": OTHER.replace("helper", "assist"),
    }
    assert "Renamed to assist in 3 files" in result_text(end)
    assert sorted(c["path"] for c in end["details"]["changes"]) == [
        "main.py",
        "other.py",
        "util.py",
    ]
    assert end["details"]["diagnostics"] == []
    assert sorted(rewound["restored"]) == sorted(
        str(home.project / n) for n in ("main.py", "other.py", "util.py")
    )
    assert (home.project / "util.py").read_text() == UTIL
    assert (home.project / "other.py").read_text() == OTHER


async def test_a_rename_that_changed_since_its_preview_is_refused(home: Home) -> None:
    """A file the rename touches is edited while the approval is open: the approved call
    finds its changes differ from the preview and writes nothing."""
    home.user_config(pyright_table(), auto=False)
    edited = OTHER + "EXTRA = helper(1)\n"

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        assert params.preview is not None
        assert params.preview.diff is not None
        assert "+++ b/other.py" in params.preview.diff
        (home.project / "other.py").write_text(edited)  # someone edits it meanwhile
        return "allow_once"

    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="ask")
        await run(client, sid, "lsp-references", timeout=TIMEOUT)
        _, events = await run(client, sid, "lsp-rename", timeout=TIMEOUT)
    (end,) = ends(events)
    assert end.get("isError")
    text = result_text(end)
    assert "differently from the approved preview" in text
    assert "other.py" in text
    assert (home.project / "util.py").read_text() == UTIL
    assert (home.project / "main.py").read_text() == MAIN
    assert (home.project / "other.py").read_text() == edited


async def test_rename_is_refused_in_a_read_only_session(home: Home) -> None:
    home.user_config(pylsp_table(), auto=False)
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, events = await run(client, sid, "lsp-rename", timeout=TIMEOUT)
        _, hovered = await run(client, sid, "lsp-hover", timeout=TIMEOUT)
    (end,) = ends(events)
    assert end.get("isError")
    assert "read-only" in result_text(end)
    assert (home.project / "util.py").read_text() == UTIL
    (hover,) = ends(hovered)
    assert not hover.get("isError")  # reading needs no approval in read-only mode
