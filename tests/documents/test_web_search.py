"""``web_search`` against fake SearXNG, Brave and Tavily servers on loopback: their JSON
shapes, the domain filters, errors and rate limits, the key kept out of results, and the tool
offered only when configured (asking in ``ask`` mode, running in ``read-only``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.config.load import load_config
from agentd.permissions.policy import PermissionPolicy
from agentd.protocol.document_details import WebSearchDetails
from agentd.session.knowledge import web_search_settings, with_configured_tools
from agentd.tools import DEFAULT_TOOLS, build_tools
from agentd.tools.base import ToolContext
from agentd.tools.defaults import Secret, ToolSettings, WebSearchSettings
from tests.documents.searchserver import KEY, search_server, url_of
from tests.tools.conftest import call, text_of


@pytest.fixture
def server() -> Iterator[Any]:
    with search_server() as running:
        yield running


def _ctx(work: Path, backend: str, url: str, key: str | None = KEY) -> ToolContext:
    settings = WebSearchSettings(
        backend=backend,  # type: ignore[arg-type]
        url=url,
        api_key=Secret(key) if key else None,
        timeout=5,
    )
    return ToolContext(cwd=work, settings=ToolSettings(web_search=settings))


@pytest.mark.parametrize("backend", ["searxng", "brave", "tavily"])
async def test_each_backend_gives_titles_urls_and_snippets(
    work: Path, server: Any, backend: str
) -> None:
    ctx = _ctx(work, backend, url_of(server), None if backend == "searxng" else KEY)
    result = await call("web_search", ctx, query="json module", max_results=2)
    assert not result.is_error, text_of(result)
    assert text_of(result) == (
        'Search results for "json module":\n'
        "1. Python docs\n   https://docs.python.org/3/library/json.html\n   The json module.\n"
        "2. Blog post\n   https://blog.example.com/json\n   Parsing JSON quickly."
    )
    details = result.details
    assert isinstance(details, WebSearchDetails)
    assert details.backend == backend
    assert [hit.url for hit in details.results] == [
        "https://docs.python.org/3/library/json.html",
        "https://blog.example.com/json",
    ]
    (seen,) = server.seen
    if backend == "searxng":
        assert seen["query"] == {"q": ["json module"], "format": ["json"]}
    elif backend == "brave":
        assert seen["headers"]["X-Subscription-Token"] == KEY
        assert seen["query"]["count"] == ["2"]
    else:
        assert seen["body"] == {"api_key": KEY, "query": "json module", "max_results": 2}
    assert KEY not in text_of(result)


@pytest.mark.parametrize("backend", ["searxng", "brave", "tavily"])
async def test_domain_filters_apply_to_every_backend(work: Path, server: Any, backend: str) -> None:
    ctx = _ctx(work, backend, url_of(server))
    allowed = await call("web_search", ctx, query="json", allowed_domains=["docs.python.org"])
    details = allowed.details
    assert isinstance(details, WebSearchDetails)
    assert [h.url for h in details.results] == [
        "https://docs.python.org/3/library/json.html",
        "https://dev.docs.python.org/x",
    ]
    assert details.filtered == 2
    blocked = await call("web_search", ctx, query="json", blocked_domains=["tracker.net"])
    assert "ads.tracker.net" not in text_of(blocked)
    assert "(1 result(s) dropped by the domain filters.)" in text_of(blocked)
    if backend != "tavily":
        assert server.seen[0]["query"]["q"] == ["json site:docs.python.org"]


async def test_errors_and_rate_limits_are_clear_results(work: Path, server: Any) -> None:
    ctx = _ctx(work, "brave", url_of(server))
    server.status = 429
    limited = await call("web_search", ctx, query="x")
    assert limited.is_error
    assert text_of(limited) == "The brave search is rate limited (HTTP 429). Retry after 30 s."
    server.status = 500
    failed = await call("web_search", ctx, query="x")
    assert text_of(failed) == "The brave search failed with HTTP 500."
    server.status = 200
    wrong_key = await call(
        "web_search", _ctx(work, "brave", url_of(server), "sk-wrong-key"), query="x"
    )
    assert "refused the API key (HTTP 401)" in text_of(wrong_key)
    no_key = await call("web_search", _ctx(work, "tavily", url_of(server), None), query="x")
    assert "its API key is not set" in text_of(no_key)
    down = await call("web_search", _ctx(work, "searxng", "http://127.0.0.1:9"), query="x")
    assert down.is_error
    assert text_of(down).startswith("The searxng search failed:")
    server.hits = []
    empty = await call("web_search", _ctx(work, "searxng", url_of(server)), query="x")
    assert text_of(empty) == 'Search results for "x":\nNo results.'


def _config(tmp_path: Path, text: str) -> Any:
    (tmp_path / "cfg").mkdir(exist_ok=True)
    (tmp_path / "cfg" / "agentd").mkdir(exist_ok=True)
    (tmp_path / "cfg" / "agentd" / "config.toml").write_text(text)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    return load_config(tmp_path, env=env)


def test_offered_only_when_configured(tmp_path: Path) -> None:
    assert "web_search" not in DEFAULT_TOOLS
    plain = _config(tmp_path, "")
    assert "web_search" not in with_configured_tools(build_tools(), plain, None)
    asked = build_tools(["read", "web_search"])
    assert list(with_configured_tools(asked, plain, ["read", "web_search"])) == ["read"]
    assert web_search_settings(plain) is None
    configured = _config(tmp_path, '[web_search]\nbackend = "brave"\n')
    assert "web_search" in with_configured_tools(build_tools(), configured, None)
    assert "web_search" not in with_configured_tools(build_tools(["read"]), configured, ["read"])
    settings = web_search_settings(configured, {"BRAVE_API_KEY": KEY})
    assert settings is not None
    assert settings.url == "https://api.search.brave.com"
    assert settings.api_key is not None
    assert settings.api_key.value == KEY
    assert KEY not in repr(settings)


def test_asks_in_ask_and_read_only_mode(work: Path) -> None:
    """A query reaches another host (and can carry what the session read): it asks in
    ``read-only`` too, like ``web_fetch``, unless a rule allows it."""
    tool = build_tools(["web_search"])["web_search"]
    args = {"query": "x"}
    assert PermissionPolicy("ask", cwd=work).check(tool, args).action == "ask"
    assert PermissionPolicy("read-only", cwd=work).check(tool, args).action == "ask"
    ruled = PermissionPolicy("read-only", ["web_search"], cwd=work).check(tool, args)
    assert ruled.action == "allow"
    allowed = PermissionPolicy("ask", ["web_search"], cwd=work).check(tool, args)
    assert allowed.action == "allow"
    denied = PermissionPolicy("auto", [], ["web_search"], cwd=work).check(tool, args)
    assert denied.action == "deny"


def test_an_untrusted_project_cannot_set_a_backend(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".agentd.toml").write_text('[web_search]\nbackend = "searxng"\nurl = "http://x"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    config = load_config(project, env=env)
    assert web_search_settings(config) is None
    assert any("web_search" in warning for warning in config.warnings)


async def test_the_configured_domain_filters_apply_whatever_the_model_asks(
    work: Path, server: Any
) -> None:
    """``[web_search]`` ``allowed_domains`` narrows the model's own filters (never widens
    them) and its ``blocked_domains`` join the model's."""
    settings = WebSearchSettings(
        backend="searxng",
        url=url_of(server),
        allowed_domains=["python.org", "example.com"],
        blocked_domains=["dev.docs.python.org"],
        timeout=5,
    )
    ctx = ToolContext(cwd=work, settings=ToolSettings(web_search=settings))
    result = await call("web_search", ctx, query="json")
    assert isinstance(result.details, WebSearchDetails)
    assert [hit.url for hit in result.details.results] == [
        "https://docs.python.org/3/library/json.html",
        "https://blog.example.com/json",
    ]
    assert result.details.filtered == 2  # the tracker (not allowed), the blocked subdomain
    narrowed = await call("web_search", ctx, query="json", allowed_domains=["example.com"])
    assert isinstance(narrowed.details, WebSearchDetails)
    assert [hit.url for hit in narrowed.details.results] == ["https://blog.example.com/json"]
    widened = await call("web_search", ctx, query="json", allowed_domains=["tracker.net"])
    assert isinstance(widened.details, WebSearchDetails)
    assert widened.details.results == []  # outside the configured allow list
