"""The provider's own web search, shared by the formats that have one (Anthropic Messages'
``web_search`` server tool, the Responses API's ``web_search`` tool).

The search runs on the provider's side while the reply streams. Parsers report it as any tool
call is reported: a ``tool_execution_start`` when the call is known and a
``tool_execution_end`` with :class:`WebSearchDetails` when its result arrives, and the reply
keeps a :class:`ServerToolCall` block holding the call, its result and the provider's own
blocks (``raw``), which go back unchanged to a provider of the same format.
"""

from __future__ import annotations

from typing import Any

from agentd.protocol.content import ServerToolCall, TextContent
from agentd.protocol.document_details import WebSearchDetails, WebSearchHit
from agentd.protocol.events import ToolExecutionEnd, ToolExecutionStart
from agentd.toolspec import ServerSearch, ToolSpec

NAME = "web_search"
MAX_SNIPPET = 400


def server_search_of(tools: list[ToolSpec]) -> ServerSearch | None:
    """The provider-side search the request offers (None: it offers none)."""
    return next((t.server_search for t in tools if t.server_search is not None), None)


def function_tools(tools: list[ToolSpec]) -> list[ToolSpec]:
    """The tools that run here (what is sent as functions)."""
    return [tool for tool in tools if tool.server_search is None]


def started(call_id: str, arguments: dict[str, Any]) -> ToolExecutionStart:
    """The event for a search the provider began."""
    return ToolExecutionStart(tool_call_id=call_id, name=NAME, args=arguments, kind="search")


def finished(
    call_id: str,
    arguments: dict[str, Any],
    hits: list[WebSearchHit],
    *,
    backend: str,
    api: str,
    raw: list[dict[str, Any]],
    error: str | None = None,
) -> tuple[ServerToolCall, ToolExecutionEnd]:
    """The reply's block for a finished search and its ``tool_execution_end``."""
    query = str(arguments.get("query") or arguments.get("url") or "")
    details = WebSearchDetails(query=query, backend=backend, results=hits)
    text = f"The {backend} search failed: {error}." if error else result_text(query, hits)
    call = ServerToolCall(
        id=call_id,
        name=NAME,
        arguments=arguments,
        result=text,
        is_error=error is not None,
        details=details,
        api=api,
        raw=raw,
    )
    end = ToolExecutionEnd(
        tool_call_id=call_id,
        name=NAME,
        result=[TextContent(text=text)],
        is_error=error is not None,
        details=details,
    )
    return call, end


def failed_end(call_id: str) -> ToolExecutionEnd:
    """The end of a search whose reply broke off before its result."""
    text = "The reply ended before the provider's search returned."
    return ToolExecutionEnd(
        tool_call_id=call_id, name=NAME, result=[TextContent(text=text)], is_error=True
    )


def hit(url: Any, title: Any = "", snippet: Any = "") -> WebSearchHit | None:
    """One result, or None when it has no URL."""
    if not isinstance(url, str) or not url:
        return None
    text = str(snippet or "").strip()
    if len(text) > MAX_SNIPPET:
        text = text[: MAX_SNIPPET - 1] + "…"
    return WebSearchHit(title=str(title or url).strip(), url=url, snippet=text)


def result_text(query: str, hits: list[WebSearchHit]) -> str:
    """What clients show as the search's result."""
    lines = [f'Search results for "{query}":' if query else "Search results:"]
    lines += [f"{number}. {h.title}\n   {h.url}" for number, h in enumerate(hits, 1)]
    if not hits:
        lines.append("No results.")
    return "\n".join(lines)
