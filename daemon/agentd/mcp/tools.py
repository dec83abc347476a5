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

from agentd.protocol.content import ImageContent, TextContent, UserContent
from agentd.protocol.events import Location, ToolKind
from agentd.tools.base import Tool, ToolContext, ToolResult
from agentd.tools.files.truncate import Limits, notice, truncate_head

if TYPE_CHECKING:
    import mcp.types as mcp_types

    from agentd.mcp.connection import Connection

ToolRunner = Callable[[Tool, dict[str, Any], ToolContext], Any]


class _Arguments(msgspec.Struct):
    """Unused: an MCP tool's arguments go to its server as the model wrote them."""


class McpTool:
    """Tool ``tool`` of server ``server``, named ``mcp__<server>__<tool>`` for the model.
    ``mutating`` unless the server marks it ``readOnlyHint`` (then ``ask`` and ``read-only``
    sessions run it without asking)."""

    Params: ClassVar[type[msgspec.Struct]] = _Arguments
    kind: ClassVar[ToolKind] = "other"

    def __init__(
        self,
        name: str,
        server: str,
        tool: mcp_types.Tool,
        connection: Callable[[], Connection | None],
        timeout: float,
    ) -> None:
        self.name = name
        self.server = server
        self.tool_name = tool.name
        self.description = tool.description or f"The {tool.name} tool of MCP server {server}."
        self.schema: dict[str, Any] = dict(tool.input_schema or {"type": "object"})
        hints = tool.annotations
        self.mutating = not (hints is not None and hints.read_only_hint is True)
        self._connection = connection
        self.timeout = timeout

    def locations(self, params: Any, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:  # the loop uses call()
        return await self.call({}, ctx)

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; every failure is an error result for the model."""
        from mcp.shared.exceptions import MCPError

        connection = self._connection()
        base = {"server": self.server, "tool": self.tool_name}
        if connection is None or not connection.alive:
            why = f"MCP server {self.server} is not running"
            return ToolResult(f"{why}; its tools cannot be used now.", base, is_error=True)
        try:
            result = await connection.call(self.tool_name, arguments, self.timeout)
        except MCPError as exc:
            return ToolResult(f"MCP server {self.server}: {exc}", base, is_error=True)
        except (TimeoutError, ConnectionError, OSError) as exc:
            text = f"MCP server {self.server} failed: {exc or type(exc).__name__}"
            return ToolResult(text, base, is_error=True)
        return convert(result, ctx, base)


def convert(result: mcp_types.CallToolResult, ctx: ToolContext, base: dict[str, Any]) -> ToolResult:
    """A ``tools/call`` result as a tool result (see the module docstring)."""
    import mcp.types as mcp_types

    texts: list[str] = []
    images: list[UserContent] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            if ctx.settings.accept_images:
                images.append(ImageContent(data=block.data, mime_type=block.mime_type))
            else:
                texts.append(f"[an image ({block.mime_type}) the model cannot see]")
        else:
            texts.append(_describe_block(block))
    details = dict(base)
    if result.structured_content is not None:
        details["structuredContent"] = result.structured_content
        if not texts and not images:
            texts.append(msgspec.json.encode(result.structured_content).decode())
    text = _limited("\n".join(texts), ctx, details)
    if not images:
        return ToolResult(text or "(no output)", details, is_error=result.is_error)
    content: list[UserContent] = [TextContent(text=text)] if text else []
    return ToolResult(content + images, details, is_error=result.is_error)


def _describe_block(block: Any) -> str:
    """Audio, resource links and embedded resources, as text."""
    import mcp.types as mcp_types

    if isinstance(block, mcp_types.ResourceLink):
        about = f" - {block.description}" if block.description else ""
        return f"[resource link] {block.name}: {block.uri}{about}"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        size = len(getattr(resource, "blob", "")) * 3 // 4
        return f"[resource {resource.uri}: {resource.mime_type or 'binary'}, {size} bytes]"
    if isinstance(block, mcp_types.AudioContent):
        return f"[audio ({block.mime_type}) omitted]"
    return f"[{getattr(block, 'type', 'unknown')} content omitted]"


def _limited(text: str, ctx: ToolContext, details: dict[str, Any]) -> str:
    limits = Limits.from_settings(ctx.settings)
    cut = truncate_head(text, limits)
    details["truncated"] = cut.truncated
    if not cut.truncated:
        return text
    return f"{cut.text.removesuffix(chr(10))}\n[{notice(cut, kept='first', limits=limits)}]"


def runner(builtin: ToolRunner) -> ToolRunner:
    """The session's tool runner: MCP tools through :meth:`McpTool.call`, the others
    through ``builtin`` (``agentd.tools.run_tool``)."""

    async def run(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if isinstance(tool, McpTool):
            return await tool.call(arguments, ctx)
        result: ToolResult = await builtin(tool, arguments, ctx)
        return result

    return run
