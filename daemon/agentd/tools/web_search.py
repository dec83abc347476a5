"""The ``web_search`` tool: titles, URLs and snippets from the configured backend
(``[web_search]``: SearXNG, Brave or Tavily), for the model to follow with ``web_fetch``.

Offered only when the session has a backend (``ctx.settings.web_search``). ``network = True``:
it asks in ``ask`` and ``read-only`` mode unless a rule allows it. The domain filters (the
model's and ``[web_search]``'s) apply to every backend; the query also asks the backend for
those sites where it can (``site:``), so a filtered search still fills its results.

With ``backend = "provider"`` the search runs on the provider's side: the spec carries a
:class:`~agentd.toolspec.ServerSearch` (:meth:`WebSearchTool.server_search`) and nothing runs
here. The call cannot be asked about while the provider runs it, so :func:`offered_specs`
offers it only when the session's policy allows ``web_search`` outright (``auto`` mode, or an
allow rule in ``ask`` / ``read-only``).
"""

from __future__ import annotations

import time
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.document_details import WebSearchDetails, WebSearchHit
from agentd.protocol.events import Location, ToolKind
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.defaults import ToolSettings
from agentd.toolspec import ServerSearch, ToolSpec


class WebSearchParams(msgspec.Struct, forbid_unknown_fields=True):
    query: Annotated[str, msgspec.Meta(min_length=1, description="What to search for.")]
    allowed_domains: Annotated[
        list[str] | None,
        msgspec.Meta(description="Only results from these domains (and their subdomains)."),
    ] = None
    blocked_domains: Annotated[
        list[str] | None, msgspec.Meta(description="Never results from these domains.")
    ] = None
    max_results: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=20)] | None,
        msgspec.Meta(description="How many results (1-20; default set by the user)."),
    ] = None


class WebSearchTool:
    name: ClassVar[str] = "web_search"
    description: ClassVar[str] = (
        "Search the web. Returns titles, URLs and short snippets; read a page with web_fetch. "
        "Narrow the results with allowed_domains / blocked_domains (a domain covers its "
        "subdomains). Results come from a search engine: check what matters on the page."
    )
    Params: ClassVar[type[WebSearchParams]] = WebSearchParams
    kind: ClassVar[ToolKind] = "search"
    mutating: ClassVar[bool] = False
    network: ClassVar[bool] = True

    def locations(self, params: WebSearchParams, ctx: ToolContext) -> list[Location]:
        return []

    @staticmethod
    def server_search(settings: ToolSettings) -> ServerSearch | None:
        """The provider-side search of ``settings`` (None: a backend of ours runs it)."""
        search = settings.web_search
        if search is None or search.backend != "provider":
            return None
        return ServerSearch(
            max_uses=search.max_uses,
            allowed_domains=tuple(search.allowed_domains),
            blocked_domains=tuple(search.blocked_domains),
        )

    async def run(self, params: WebSearchParams, ctx: ToolContext) -> ToolResult:
        settings = ctx.settings.web_search
        if settings is None:
            raise ToolError("web_search is not configured in this session.")
        if settings.backend == "provider":
            raise ToolError("web_search runs on the provider's side in this session.")
        from agentd.tools.websearch import backends  # httpx and the backends: first search

        count = params.max_results or settings.max_results
        configured = settings.allowed_domains or None
        blocked = [*(params.blocked_domains or []), *settings.blocked_domains] or None
        query = _with_sites(params.query, params.allowed_domains or configured, settings.backend)
        started = time.perf_counter()
        hits = await backends.search(settings, query, count * 2 if blocked else count)
        kept, dropped = backends.filter_hits(hits, params.allowed_domains, blocked)
        kept, outside = backends.filter_hits(kept, configured, None)  # the user's allow list
        dropped += outside
        kept = kept[:count]
        details = WebSearchDetails(
            query=params.query,
            backend=settings.backend,
            results=kept,
            filtered=dropped,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return ToolResult(_text(params.query, kept, dropped), details)


def offered_specs(specs: list[ToolSpec], ctx: ToolContext) -> list[ToolSpec]:
    """``specs`` without the provider-side search unless the session's policy allows
    ``web_search`` without asking (a server-side call cannot wait for an approval)."""
    if not any(spec.server_search is not None for spec in specs):
        return specs
    policy = ctx.settings.permission_policy
    allowed = policy is not None and policy.runs_unasked(WebSearchTool(), {})
    return [spec for spec in specs if spec.server_search is None or allowed]


def _with_sites(query: str, allowed: list[str] | None, backend: str) -> str:
    """The query with ``site:`` terms for the allowed domains (engines that read them)."""
    if not allowed or backend == "tavily":
        return query
    sites = " OR ".join(f"site:{domain.strip()}" for domain in allowed if domain.strip())
    return f"{query} ({sites})" if len(allowed) > 1 else f"{query} {sites}"


def _text(query: str, hits: list[WebSearchHit], dropped: int) -> str:
    lines = [f'Search results for "{query}":']
    for number, hit in enumerate(hits, 1):
        lines.append(f"{number}. {hit.title}\n   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    if not hits:
        lines.append(
            "No results." + (f" ({dropped} dropped by the domain filters.)" if dropped else "")
        )
    elif dropped:
        lines.append(f"({dropped} result(s) dropped by the domain filters.)")
    return "\n".join(lines)
