"""An MCP server's tool as a session tool, and its results as tool results.

:class:`McpTool` satisfies the loop's tool contract; its arguments are sent as the model
wrote them (the server validates them against its schema). Results: text as text, images as
images (text-only models get a note), resource links and embedded resources as text,
``structuredContent`` in ``details``; ``isError`` becomes an error result. Text past the
session's output limits is cut (the first part kept) with the same notice as bash's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from agentd.mcp.connection import CallFailed, Progress
from agentd.mcp.elicit import call_elicitor
from agentd.protocol.content import ImageContent, TextContent, UserContent
from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import McpDetails
from agentd.tools.base import Tool, ToolContext, ToolResult
from agentd.tools.files.truncate import Limits, notice, truncate_head

if TYPE_CHECKING:
    from agentd.mcp.connection import Connection

ToolRunner = Callable[[Tool, dict[str, Any], ToolContext], Any]


class _Arguments(msgspec.Struct):
    """Unused: an MCP tool's arguments go to its server as the model wrote them."""


class McpTool:
    """Tool ``tool`` (a ``tools/list`` entry) of server ``server``, named
    ``mcp__<server>__<tool>`` for the model. ``mutating`` unless the server marks it
    ``readOnlyHint`` *and* ``trust_annotations`` (the user's own config trusts the server's
    annotations): only then do ``ask`` and ``read-only`` sessions run it without asking. A
    server's annotations are its own claims; any other server's ``readOnlyHint`` is ignored."""

    Params: ClassVar[type[msgspec.Struct]] = _Arguments
    kind: ClassVar[ToolKind] = "other"

    def __init__(
        self,
        name: str,
        server: str,
        tool: dict[str, Any],
        connection: Callable[[], Connection | None],
        timeout: float,
        trust_annotations: bool = False,
    ) -> None:
        self.name = name
        self.server = server
        self.tool_name = str(tool["name"])
        described = tool.get("description")
        self.description = (
            described
            if isinstance(described, str) and described
            else f"The {self.tool_name} tool of MCP server {server}."
        )
        schema = tool.get("inputSchema")
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else {"type": "object"}
        hints = tool.get("annotations")
        read_only = isinstance(hints, dict) and hints.get("readOnlyHint") is True
        self.mutating = not (read_only and trust_annotations)
        self._connection = connection
        self.timeout = timeout

    def locations(self, params: Any, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:  # the loop uses call()
        return await self.call({}, ctx)

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; every failure is an error result for the model."""
        connection = self._connection()
        base = McpDetails(server=self.server, tool=self.tool_name)
        if connection is None or not connection.alive:
            why = f"MCP server {self.server} is not running"
            return ToolResult(f"{why}; its tools cannot be used now.", base, is_error=True)
        asker = ctx.ports.questions
        elicit = call_elicitor(asker, self.server, ctx.tool_call_id or None, base.elicited)
        try:
            result = await connection.call(
                self.tool_name, arguments, self.timeout, _progress_lines(ctx), elicit, asker
            )
        except CallFailed as exc:
            return ToolResult(f"MCP server {self.server}: {exc}", base, is_error=True)
        return convert(result, ctx, base)


def _progress_lines(ctx: ToolContext) -> Progress:
    """The server's progress notifications as lines of the call's streamed output
    (``tool_execution_update``): ``[progress 2/5] message``."""

    def progressed(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        ctx.on_update(f"[progress {done}]{' ' + message if message else ''}\n")

    return progressed


def convert(result: dict[str, Any], ctx: ToolContext, base: McpDetails) -> ToolResult:
    """A ``tools/call`` result as a tool result (see the module docstring)."""
    texts: list[str] = []
    images: list[UserContent] = []
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image" and ctx.settings.accept_images:
            mime = str(block.get("mimeType", "image/png"))
            images.append(ImageContent(data=str(block.get("data", "")), mime_type=mime))
        elif kind == "image":
            texts.append(f"[an image ({block.get('mimeType')}) the model cannot see]")
        else:
            texts.append(_describe_block(block if isinstance(block, dict) else {}))
    structured = result.get("structuredContent")
    details = msgspec.structs.replace(base, structured_content=structured)
    if structured is not None and not texts and not images:
        texts.append(msgspec.json.encode(structured).decode())
    text, details.truncated = _limited("\n".join(texts), ctx)
    is_error = result.get("isError") is True
    if not images:
        return ToolResult(text or "(no output)", details, is_error=is_error)
    blocks: list[UserContent] = [TextContent(text=text)] if text else []
    return ToolResult(blocks + images, details, is_error=is_error)


def _describe_block(block: dict[str, Any]) -> str:
    """Audio, resource links and embedded resources, as text."""
    kind = block.get("type")
    if kind == "resource_link":
        about = f" - {block['description']}" if block.get("description") else ""
        return f"[resource link] {block.get('name')}: {block.get('uri')}{about}"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return f"[resource {resource.get('uri')}]\n{resource['text']}"
        size = len(str(resource.get("blob", ""))) * 3 // 4
        mime = resource.get("mimeType") or "binary"
        return f"[resource {resource.get('uri')}: {mime}, {size} bytes]"
    if kind == "audio":
        return f"[audio ({block.get('mimeType')}) omitted]"
    return f"[{kind or 'unknown'} content omitted]"


def _limited(text: str, ctx: ToolContext) -> tuple[str, bool]:
    """``text`` within the output limits, and whether it was cut."""
    limits = Limits.from_settings(ctx.settings)
    cut = truncate_head(text, limits)
    if not cut.truncated:
        return text, False
    return f"{cut.text.removesuffix(chr(10))}\n[{notice(cut, kept='first', limits=limits)}]", True


def runner(builtin: ToolRunner) -> ToolRunner:
    """The session's tool runner: MCP tools through :meth:`McpTool.call`, the others
    through ``builtin`` (``agentd.tools.run_tool``)."""

    async def run(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if isinstance(tool, McpTool):
            return await tool.call(arguments, ctx)
        result: ToolResult = await builtin(tool, arguments, ctx)
        return result

    return run
