"""The mock's provider-side web search: a step's ``server_searches`` and ``citations`` planned
against what the request offers, and rendered in the Anthropic Messages and Responses shapes.

A search is answered only when the request offers the provider's search tool (Anthropic: a
``web_search_*`` tool; Responses: ``{"type": "web_search"}``), as a real model cannot search
otherwise; its results keep to the request's domain filters, and searches past ``max_uses``
fail with ``max_uses_exceeded``. Citations go with the text only when a search ran.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import msgspec

from agentd.mockllm.scenarios import CitationSpec, ResponseSpec, SearchOffer, SearchResultSpec


class PlannedSearch(msgspec.Struct, frozen=True):
    """One search as the provider answers it."""

    number: int
    query: str
    results: list[SearchResultSpec]
    error: str | None


class PlannedSearches(msgspec.Struct, frozen=True):
    """The searches of a reply and the citations of its text."""

    searches: list[PlannedSearch] = []
    citations: list[CitationSpec] = []
    sources: bool = True


def plan_searches(response: ResponseSpec, offer: SearchOffer | None) -> PlannedSearches:
    """The searches ``response`` scripts, as the request's ``offer`` lets them run."""
    if offer is None or not response.server_searches:
        return PlannedSearches()
    searches = []
    for number, spec in enumerate(response.server_searches):
        over = offer.max_uses is not None and number >= offer.max_uses
        kept = [r for r in spec.results if _passes(r.url, offer)]
        error = "max_uses_exceeded" if over else spec.error
        searches.append(PlannedSearch(number, spec.query, [] if error else kept, error))
    return PlannedSearches(searches, list(response.citations), offer.sources)


def _passes(url: str, offer: SearchOffer) -> bool:
    host = (urlsplit(url).hostname or "").lower()

    def covers(domain: str) -> bool:
        return host == domain.lower() or host.endswith("." + domain.lower())

    if offer.allowed_domains and not any(covers(d) for d in offer.allowed_domains):
        return False
    return not any(covers(d) for d in offer.blocked_domains)


# --- Anthropic Messages ---------------------------------------------------------------------


def anthropic_offer(body: dict[str, Any]) -> SearchOffer | None:
    """The web search server tool of a Messages request, if any."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and str(tool.get("type", "")).startswith("web_search_"):
            return SearchOffer(
                allowed_domains=tuple(tool.get("allowed_domains") or ()),
                blocked_domains=tuple(tool.get("blocked_domains") or ()),
                max_uses=tool.get("max_uses"),
            )
    return None


def anthropic_blocks(planned: PlannedSearches) -> list[tuple[dict[str, Any], str]]:
    """Per search: the ``server_tool_use`` block (empty input) and its input JSON, then the
    ``web_search_tool_result`` block (no input)."""
    blocks: list[tuple[dict[str, Any], str]] = []
    for search in planned.searches:
        call_id = f"srvtoolu_mock_{search.number}"
        use = {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {}}
        blocks.append((use, msgspec.json.encode({"query": search.query}).decode()))
        blocks.append((_anthropic_result(call_id, search), ""))
    return blocks


def _anthropic_result(call_id: str, search: PlannedSearch) -> dict[str, Any]:
    content: Any
    if search.error:
        content = {"type": "web_search_tool_result_error", "error_code": search.error}
    else:
        content = [
            {
                "type": "web_search_result",
                "url": result.url,
                "title": result.title,
                "encrypted_content": f"mock-encrypted-{search.number}-{index}",
                "page_age": None,
            }
            for index, result in enumerate(search.results)
        ]
    return {"type": "web_search_tool_result", "tool_use_id": call_id, "content": content}


def anthropic_citations(planned: PlannedSearches) -> list[dict[str, Any]]:
    """The ``citations_delta`` deltas of the text."""
    if not planned.searches:
        return []
    return [
        {
            "type": "citations_delta",
            "citation": {
                "type": "web_search_result_location",
                "url": cite.url,
                "title": cite.title,
                "cited_text": cite.cited_text,
                "encrypted_index": f"mock-index-{index}",
            },
        }
        for index, cite in enumerate(planned.citations)
    ]


# --- OpenAI Responses -----------------------------------------------------------------------


def responses_offer(body: dict[str, Any]) -> SearchOffer | None:
    """The ``web_search`` tool of a Responses request, if any."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "web_search":
            given = tool.get("filters")
            filters: dict[str, Any] = given if isinstance(given, dict) else {}
            include = body.get("include") or []
            return SearchOffer(
                allowed_domains=tuple(filters.get("allowed_domains") or ()),
                max_uses=body.get("max_tool_calls"),
                sources="web_search_call.action.sources" in include,
            )
    return None


def responses_items(planned: PlannedSearches) -> list[dict[str, Any]]:
    """The ``web_search_call`` output items, complete."""
    items = []
    for search in planned.searches:
        action: dict[str, Any] = {"type": "search", "query": search.query}
        if planned.sources and not search.error:
            action["sources"] = [{"type": "url", "url": r.url} for r in search.results]
        status = "failed" if search.error else "completed"
        items.append(
            {
                "type": "web_search_call",
                "id": f"ws_mock_{search.number}",
                "status": status,
                "action": action,
            }
        )
    return items


def responses_annotations(planned: PlannedSearches, text: str) -> list[dict[str, Any]]:
    """The ``url_citation`` annotations of the message's text."""
    if not planned.searches:
        return []
    notes = []
    for cite in planned.citations:
        start = max(text.find(cite.cited_text), 0) if cite.cited_text else 0
        end = start + len(cite.cited_text) if cite.cited_text else len(text)
        notes.append(
            {
                "type": "url_citation",
                "url": cite.url,
                "title": cite.title,
                "start_index": start,
                "end_index": end,
            }
        )
    return notes
