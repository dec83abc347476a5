"""``agentctl lsp list``: the language servers the daemon runs (``daemon/status``'s
``languageServers``): each one's state (not started, starting, indexing, ready, crashed,
stopped), project root, pid, open documents, restarts and last error."""

from __future__ import annotations

import json
import sys
from typing import Any

from agentctl.common import open_client, run_command
from agentctl.options import LspList, LspOptions
from agentctl.run import outcome
from agentd.protocol.controls import scrub


def lsp_main(options: LspOptions) -> int:
    """Dispatch ``lsp list``."""
    if isinstance(options, LspList):
        listing = options
        return run_command(lambda: _list(listing))
    raise ValueError(f"no lsp action {options.lsp_command!r}")


async def _list(options: LspList) -> int:
    async with await open_client(options) as client:
        status = await client.call("daemon/status", {})
    servers: list[dict[str, Any]] = status.get("languageServers", [])
    if options.json:
        sys.stdout.write(json.dumps({"servers": servers}) + "\n")
        return outcome.OK
    if not servers:
        sys.stdout.write("no language server running (one starts when a session needs it)\n")
    for server in servers:
        sys.stdout.write(describe(server))
    return outcome.OK


def describe(server: dict[str, Any]) -> str:
    """Two lines (three with an error) about one server."""
    pid = f"  pid {server['pid']}" if server.get("pid") else ""
    head = f"{scrub(server['name'])}  {server['state']}{pid}\n"
    body = (
        f"  {scrub(server['command'])}  root {scrub(server['root'])}  "
        f"{server.get('openDocuments', 0)} open documents  {server.get('restarts', 0)} restarts\n"
    )
    error = f"  last error: {scrub(server['lastError'])}\n" if server.get("lastError") else ""
    return head + body + error
