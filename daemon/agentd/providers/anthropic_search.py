"""Anthropic's web search server tool (``web_search_20250305``) in the Messages format.

Request: ``{"type": "web_search_20250305", "name": "web_search", "max_uses"?,
"allowed_domains" | "blocked_domains"}`` among the tools (the API takes one of the two lists:
``allowed_domains`` wins when both are configured). Reply: a ``server_tool_use`` block (its
``input`` streamed as ``input_json_delta``), then a ``web_search_tool_result`` block whose
``content`` is the list of ``web_search_result`` items (``url``, ``title``, ``page_age``,
``encrypted_content``) or a ``web_search_tool_result_error`` (``error_code``); text that
relies on a result carries ``web_search_result_location`` citations (``citations_delta``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentd.protocol.content import Citation
from agentd.protocol.document_details import WebSearchHit
from agentd.protocol.events import ToolExecutionEnd, ToolExecutionStart
from agentd.providers import server_search
from agentd.providers.assemble import MessageBuilder
from agentd.toolspec import ServerSearch

API = "anthropic"
TOOL_TYPE = "web_search_20250305"


def tool_definition(search: ServerSearch) -> dict[str, Any]:
    """The server tool's entry in the request's ``tools``."""
    tool: dict[str, Any] = {"type": TOOL_TYPE, "name": server_search.NAME}
    if search.max_uses is not None:
        tool["max_uses"] = search.max_uses
    if search.allowed_domains:
        tool["allowed_domains"] = list(search.allowed_domains)
    elif search.blocked_domains:
        tool["blocked_domains"] = list(search.blocked_domains)
    return tool


def citation(raw: Any) -> Citation | None:
    """A ``web_search_result_location`` citation (None for any other kind)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        return None
    return Citation(
        url=raw["url"],
        title=str(raw.get("title") or ""),
        cited_text=str(raw.get("cited_text") or ""),
    )


class ServerCalls:
    """The reply's server tool calls: each ``server_tool_use`` until its result arrives."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self._open: dict[int, tuple[dict[str, Any], list[str]]] = {}
        self._asked: dict[str, dict[str, Any]] = {}

    def open(self, position: int, block: dict[str, Any]) -> None:
        """A ``server_tool_use`` block began at ``position``."""
        given = block.get("input")
        parts = [msgspec.json.encode(given).decode()] if isinstance(given, dict) and given else []
        self._open[position] = (block, parts)

    def is_open(self, position: int) -> bool:
        """Whether ``position`` is a server tool call still streaming its input."""
        return position in self._open

    def add_input(self, position: int, chunk: str) -> None:
        self._open[position][1].append(chunk)

    def close(self, position: int) -> list[ToolExecutionStart]:
        """The call's input is complete: it starts (on the provider's side)."""
        block, parts = self._open.pop(position)
        try:
            arguments = msgspec.json.decode("".join(parts) or "{}")
        except msgspec.DecodeError:
            arguments = {}
        arguments = arguments if isinstance(arguments, dict) else {}
        call_id = str(block.get("id") or f"srvtoolu_{position}")
        self._asked[call_id] = {**block, "id": call_id, "input": arguments}
        return [server_search.started(call_id, arguments)]

    def result(self, block: dict[str, Any]) -> list[ToolExecutionEnd]:
        """A ``web_search_tool_result`` block: the call's end, kept in the reply."""
        call_id = str(block.get("tool_use_id") or "")
        asked = self._asked.pop(call_id, None)
        if asked is None:
            return []
        hits, error = _hits(block.get("content"))
        call, end = server_search.finished(
            call_id,
            asked["input"],
            hits,
            backend=self.builder.provider,
            api=API,
            raw=[asked, block],
            error=error,
        )
        self.builder.add_server_call(call)
        return [end]


def _hits(content: Any) -> tuple[list[WebSearchHit], str | None]:
    if isinstance(content, dict):
        return [], str(content.get("error_code") or "the search failed")
    if not isinstance(content, list):
        return [], "the search gave no results list"
    hits = []
    for item in content:
        if isinstance(item, dict):
            found = server_search.hit(item.get("url"), item.get("title"))
            if found is not None:
                hits.append(found)
    return hits, None
