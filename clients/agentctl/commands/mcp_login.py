"""``agentctl mcp login NAME`` and ``agentctl mcp logout NAME``: an HTTP MCP server's OAuth.

``login`` asks the daemon to sign in (``mcp/login``): the daemon discovers the server's
authorization server, registers itself as a client if needed and listens on a loopback
port for the redirect; this command prints the authorization address, opens it in the
browser (unless ``--no-browser``, or on a Linux without a display; ``$BROWSER`` chooses the
browser), and waits (``mcp/loginFinish``) until the approval came back and the daemon
stored the tokens, then prints the server's tools. ``logout`` forgets the stored tokens
(``mcp/logout``). The tokens stay in the daemon's credential file; this command never sees
them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agentctl.common import open_client
from agentctl.options import McpLogin, McpLogout
from agentctl.run import outcome
from agentd.protocol.controls import scrub

SLACK_SECONDS = 60.0
"""How much longer than the login's own timeout the wait for its end may take."""


async def login(options: McpLogin) -> int:
    cwd = str(Path(options.cwd or ".").resolve())
    params = {"name": options.name, "cwd": cwd, "timeout": options.timeout}
    async with await open_client(options, cwd=cwd) as client:
        begun: dict[str, Any] = await client.call("mcp/login", params, timeout=SLACK_SECONDS)
        if not begun["done"]:
            _show(begun, browse=not options.no_browser)
            wait = options.timeout + SLACK_SECONDS
            ended = await client.call(
                "mcp/loginFinish", {"loginId": begun["loginId"]}, timeout=wait
            )
        else:
            ended = begun
    tools = ", ".join(ended["tools"]) or "none"
    server = f"{ended['name']} ({scrub(ended['url'])})"
    if begun["done"]:  # a valid stored token, or a server that asks for none
        sys.stdout.write(f"{server} let agentd in without a new sign-in; its tools: {tools}\n")
    else:
        sys.stdout.write(f"signed in to {server}; its tools: {tools}\n")
    return outcome.OK


async def logout(options: McpLogout) -> int:
    cwd = str(Path(options.cwd or ".").resolve())
    async with await open_client(options, cwd=cwd) as client:
        result = await client.call("mcp/logout", {"name": options.name, "cwd": cwd})
    if result["removed"]:
        sys.stdout.write(f"forgot the OAuth tokens of {result['name']} ({result['url']})\n")
    else:
        sys.stdout.write(f"no OAuth tokens were stored for {result['name']} ({result['url']})\n")
    return outcome.OK


def _show(begun: dict[str, Any], browse: bool) -> None:
    """Print the authorization address (to stderr: stdout is the result) and open it."""
    address = begun["authorizationUrl"]
    opened = browse and _can_browse() and _open(address)
    how = "opened in your browser" if opened else "open it in a browser"
    sys.stderr.write(
        f"To sign in to {begun['name']} ({scrub(begun['url'])}), approve agentd here ({how}):\n"
        f"  {address}\nwaiting for the approval…\n"
    )
    sys.stderr.flush()


def _can_browse() -> bool:
    """``$BROWSER`` set, or a graphical session (a text browser would take the terminal)."""
    from agentctl.commands.web import can_open_browser

    return bool(os.environ.get("BROWSER")) or can_open_browser()


def _open(address: str) -> bool:
    from agentctl.commands.web import open_browser

    try:
        return open_browser(address)
    except Exception:  # a broken $BROWSER: the printed address still works
        return False
