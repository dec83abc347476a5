"""In a sandboxed session the language server runs under the same bubblewrap sandbox as
bash, and the ``lsp`` tool refuses paths outside the workspace like every file tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.tools.process import mountns
from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import ends, lsp, pylsp_table, result_text

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not mountns.available(), reason="bubblewrap cannot run here"),
]


async def test_the_server_runs_inside_the_sandbox(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def helper():\n    pass\n")
    home.use_scenarios(
        [lsp("lsp-outside", operation="hover", path=str(outside), line=1, symbol="helper")]
    )
    home.user_config('sandbox = "workspace"\n' + pylsp_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, hovered = await run(client, sid, "lsp-hover", timeout=90)
        _, broken = await run(client, sid, "lsp-break", timeout=90)
        _, refused = await run(client, sid, "lsp-outside", timeout=90)
        status = await client.call("daemon/status", {})
        (server,) = status["languageServers"]
        cmdline = Path(f"/proc/{server['pid']}/cmdline").read_bytes().split(b"\0")
    assert "helper(x: int) -> int" in result_text(ends(hovered)[0])
    assert "undefined_x" in result_text(ends(broken)[0])  # diagnostics work sandboxed too
    (end,) = ends(refused)
    assert end.get("isError")
    assert "outside" in result_text(end).lower()
    assert Path(cmdline[0].decode()).name == "bwrap", cmdline[:3]
