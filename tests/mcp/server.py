"""An MCP server for the tests, written with the official SDK.

``python server.py [--http PORT] [--hang] [--flood] [--marker FILE] [--page-size N]``: stdio
by default, streamable HTTP on 127.0.0.1:PORT with ``--http``; ``--hang`` never answers
``initialize``; ``--flood`` writes thousands of stderr lines at start-up; ``--marker FILE``
appends the pid to FILE at start (tests count starts and find the process); ``--page-size N``
answers ``tools/list`` N tools at a time (``nextCursor``: the offset of the next page; a
request without a cursor gets the first page again, so a client that drops the cursor never
sees the end).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.types import (
    EmbeddedResource,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextResourceContents,
    ToolAnnotations,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


class PagedServer(MCPServer):
    """The SDK's server, its tool list in pages of :attr:`page_size` (0: one page)."""

    page_size = 0

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = (await super()._handle_list_tools(ctx, params)).tools
        if not self.page_size:
            return ListToolsResult(tools=tools)
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        more = str(end) if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=more)


app = PagedServer("testserver")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def fail(reason: str = "broken") -> str:
    """Always fails."""
    raise ValueError(reason)


@app.tool()
def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


@app.tool()
def resources() -> list[EmbeddedResource | ResourceLink]:
    """An embedded text resource and a link."""
    text = TextResourceContents(
        uri="file:///notes.txt", text="embedded notes", mime_type="text/plain"
    )
    return [
        EmbeddedResource(type="resource", resource=text),
        ResourceLink(type="resource_link", uri="file:///big.log", name="big.log"),
    ]


@app.tool()
async def slow(seconds: float, marker: str = "") -> str:
    """Sleeps; writes ``marker`` (a file) first and ``marker.cancelled`` when cancelled."""
    if marker:
        Path(marker).write_text("started")
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        if marker:
            Path(marker + ".cancelled").write_text("cancelled")
        raise
    return "slept"


@app.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress ``steps`` times (``step i``), then says done."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return "counted"


@app.tool()
def crash() -> str:
    """Kills the server mid-call."""
    os._exit(3)


@app.tool()
def env(name: str) -> str:
    """The value of an environment variable, or <unset>."""
    return os.environ.get(name, "<unset>")


@app.tool()
def long_text(lines: int) -> str:
    """Many lines of text."""
    return "\n".join(f"line {i}" for i in range(lines))


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(key: str) -> str:
    """A read-only lookup."""
    return f"value of {key}"


@app.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool ``extra`` and announces the new list."""

    def extra() -> str:
        """Added later."""
        return "extra ran"

    app.add_tool(extra, name="extra")
    await ctx.session.send_tool_list_changed()
    return "grown"


def main() -> None:
    args = sys.argv[1:]
    if "--marker" in args:
        with open(args[args.index("--marker") + 1], "a") as marker:
            marker.write(f"{os.getpid()}\n")
    if "--flood" in args:
        for i in range(5000):
            print(f"flood line {i}", file=sys.stderr)
    if "--page-size" in args:
        app.page_size = int(args[args.index("--page-size") + 1])
    if "--hang" in args:
        while True:
            time.sleep(3600)
    if "--http" in args:
        port = int(args[args.index("--http") + 1])
        app.run("streamable-http", host="127.0.0.1", port=port)
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
