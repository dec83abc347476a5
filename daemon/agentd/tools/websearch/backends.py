"""One search on the configured backend, as a list of :class:`WebSearchHit`.

- **SearXNG**: ``GET {url}/search?q=…&format=json`` → ``results[].title/url/content``;
- **Brave**: ``GET {url}/res/v1/web/search?q=…&count=N`` with ``X-Subscription-Token`` →
  ``web.results[].title/url/description``;
- **Tavily**: ``POST {url}/search`` with the key in the JSON body →
  ``results[].title/url/content``.

No cookies, no proxy or ``.netrc`` from the environment. HTTP 429 and other failures raise
:class:`ToolError` with text for the model (the retry delay when the service gives one);
the key never appears in an error (it is replaced by ``***``). Domain filters
(:func:`filter_hits`) match a host and its subdomains and apply to every backend.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from agentd.protocol.document_details import WebSearchHit
from agentd.tools.base import ToolError
from agentd.tools.defaults import WebSearchSettings

MAX_SNIPPET = 400
_TAGS = re.compile(r"<[^>]+>")


async def search(settings: WebSearchSettings, query: str, count: int) -> list[WebSearchHit]:
    """Up to ``count`` hits for ``query`` (ToolError when the backend fails)."""
    key = settings.api_key.value if settings.api_key is not None else ""
    if settings.backend != "searxng" and not key:
        raise ToolError(
            f"web_search is configured for {settings.backend} but its API key is not set in "
            "the daemon's environment; tell the user."
        )
    base = settings.url.rstrip("/")
    try:
        async with httpx.AsyncClient(
            timeout=settings.timeout, trust_env=False, follow_redirects=False
        ) as client:
            response = await _send(client, settings.backend, base, query, count, key)
    except httpx.TimeoutException:
        raise ToolError(
            f"The {settings.backend} search timed out after {settings.timeout:g} s."
        ) from None
    except httpx.HTTPError as error:
        text = str(error).replace(key, "***") if key else str(error)
        raise ToolError(
            f"The {settings.backend} search failed: {text or type(error).__name__}."
        ) from None
    _check_status(response, settings.backend)
    try:
        body = response.json()
    except ValueError:
        raise ToolError(
            f"The {settings.backend} search answered with something not JSON."
        ) from None
    return _hits(settings.backend, body)[:count]


async def _send(
    client: httpx.AsyncClient, backend: str, base: str, query: str, count: int, key: str
) -> httpx.Response:
    if backend == "searxng":
        params = {"q": query, "format": "json"}
        return await client.get(f"{base}/search", params=params)
    if backend == "brave":
        headers = {"X-Subscription-Token": key, "Accept": "application/json"}
        params = {"q": query, "count": str(count)}
        return await client.get(f"{base}/res/v1/web/search", params=params, headers=headers)
    body = {"api_key": key, "query": query, "max_results": count}
    return await client.post(f"{base}/search", json=body)


def _check_status(response: httpx.Response, backend: str) -> None:
    if response.status_code == 429:
        after = response.headers.get("retry-after")
        wait = f" Retry after {after} s." if after and after.isdigit() else " Try again later."
        raise ToolError(f"The {backend} search is rate limited (HTTP 429).{wait}")
    if response.status_code in (401, 403):
        raise ToolError(
            f"The {backend} search refused the API key (HTTP {response.status_code}); tell the "
            "user."
        )
    if response.status_code != 200:
        raise ToolError(f"The {backend} search failed with HTTP {response.status_code}.")


def _hits(backend: str, body: Any) -> list[WebSearchHit]:
    items: Any = body.get("results") if isinstance(body, dict) else None
    snippet_key = "content"
    if backend == "brave":
        web = body.get("web") if isinstance(body, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        snippet_key = "description"
    if not isinstance(items, list):
        raise ToolError(f"The {backend} search answered without a result list.")
    hits = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        snippet = _TAGS.sub("", str(item.get(snippet_key) or "")).strip()
        if len(snippet) > MAX_SNIPPET:
            snippet = snippet[: MAX_SNIPPET - 1] + "…"
        title = _TAGS.sub("", str(item.get("title") or item["url"])).strip()
        hits.append(WebSearchHit(title=title, url=item["url"], snippet=snippet))
    return hits


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def _covers(domain: str, host: str) -> bool:
    domain = domain.strip().lower().removeprefix("*.").rstrip(".")
    return bool(domain) and (host == domain or host.endswith("." + domain))


def filter_hits(
    hits: list[WebSearchHit], allowed: list[str] | None, blocked: list[str] | None
) -> tuple[list[WebSearchHit], int]:
    """The hits whose host is in ``allowed`` (when given) and not in ``blocked``, and how many
    were dropped."""
    kept = []
    for hit in hits:
        host = _host(hit.url)
        if not host or (allowed and not any(_covers(d, host) for d in allowed)):
            continue
        if blocked and any(_covers(d, host) for d in blocked):
            continue
        kept.append(hit)
    return kept, len(hits) - len(kept)
