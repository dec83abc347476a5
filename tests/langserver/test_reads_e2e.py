"""Files the agent reads are opened in the language server already running for them, and a
read never starts one (real daemon, mock LLM, the real pylsp)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import ends, pylsp_table, result_text

pytestmark = pytest.mark.e2e
TIMEOUT = 90


def _documents(status: dict[str, Any]) -> int:
    (server,) = status["languageServers"]
    assert server["name"] == "pylsp"
    assert server["state"] in ("ready", "indexing")
    return int(server["openDocuments"])


async def test_a_read_opens_the_file_in_the_running_server(home: Home) -> None:
    home.user_config(pylsp_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "lsp-diagnostics", timeout=TIMEOUT)  # starts pylsp: main.py open
        before = await client.call("daemon/status", {})
        _, events = await run(client, sid, "lsp-read-other", timeout=TIMEOUT)
        after = await client.call("daemon/status", {})
        _, again = await run(client, sid, "lsp-read-other", timeout=TIMEOUT)
        last = await client.call("daemon/status", {})
    (read,) = ends(events)
    assert "VALUE = helper(40)" in result_text(read)
    assert _documents(after) == _documents(before) + 1  # other.py joined main.py
    assert _documents(last) == _documents(after)  # a second read reuses the open document
    (second,) = ends(again)
    assert not second.get("isError")


async def test_a_read_starts_no_server(home: Home, tmp_path: Path) -> None:
    home.user_config(pylsp_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "lsp-read-other", timeout=TIMEOUT)
        status = await client.call("daemon/status", {})
    (read,) = ends(events)
    assert "VALUE = helper(40)" in result_text(read)
    assert status["languageServers"] == []
