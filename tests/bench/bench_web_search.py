"""Costs of web search and of what the issue's budgets say is never paid when unused.

* ``web_search`` on SearXNG: the real tool against a local fake SearXNG (loopback, 4 hits),
  after one warm-up search; median of 10, CPU of this process and wall.
* The provider's own search: one reply with two server-side searches and a cited answer,
  streamed by the real Anthropic and Responses provider code over real HTTP from the mock
  LLM, against the same reply without the searches; median of 10 wall times each.
* Imports: in a fresh interpreter, the daemon's modules and a session's whole default
  toolset built and described to the model (what every session does): how many of the
  modules behind notebooks, PDFs, web search and skills got imported (budget: none).

Run: ``python -m tests.bench.bench_web_search`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from agentd.protocol.content import TextContent, UserMessage
from agentd.providers.base import ProviderRequest, StreamEnd
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings, WebSearchSettings
from agentd.toolspec import ServerSearch, ToolSpec
from tests.bench.smoke import size
from tests.documents.searchserver import search_server, url_of

Row = tuple[str, str, str]
RUNS = size(10)
DOCS = "https://docs.python.org/3/whatsnew/3.13.html"
SEARCHES = [
    {"query": "python 3.13 what's new", "results": [{"url": DOCS, "title": "What's New"}] * 5},
    {"query": "python 3.13 jit", "results": [{"url": "https://peps.python.org/pep-0744/"}]},
]
ANSWER = "Python 3.13 has a new interactive interpreter and an experimental JIT. " * 8
LAZY = (
    "pypdf",
    "pypdfium2",
    "nbformat",
    "agentd.tools.documents.notebook",
    "agentd.tools.documents.pdf",
    "agentd.tools.websearch.backends",
    "agentd.config.skill_frontmatter",
    "agentd.providers.anthropic_search",
)
IMPORT_PROBE = """
import sys
import agentd.daemon, agentd.session.service
from agentd.tools import build_tools, toolset
toolset(build_tools(None))
print(",".join(name for name in {names!r} if name in sys.modules))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure_searxng() -> Row:
    with search_server() as server:
        settings = ToolSettings(web_search=WebSearchSettings(backend="searxng", url=url_of(server)))
        ctx = ToolContext(cwd=Path.cwd(), settings=settings)
        tool = build_tools(["web_search"])["web_search"]
        await run_tool(tool, {"query": "json"}, ctx)  # warm-up: imports, first connection
        walls, cpus = [], []
        for _ in range(RUNS):
            wall, cpu = time.perf_counter(), _cpu()
            result = await run_tool(tool, {"query": "json"}, ctx)
            walls.append(time.perf_counter() - wall)
            cpus.append(_cpu() - cpu)
            assert not result.is_error, result.output
    return (
        "web_search on a local SearXNG, 4 hits (CPU / wall)",
        f"{statistics.median(cpus) * 1000:.1f} / {statistics.median(walls) * 1000:.1f} ms",
        "(network-bound)",
    )


def _scenarios(searches: list[dict[str, Any]]) -> Any:
    step = {"response": {"content": ANSWER, "server_searches": searches}}
    return parse_scenarios({"scenarios": [{"name": "s", "trigger": "go", "steps": [step]}]})


async def _reply_ms(api: str, searches: list[dict[str, Any]]) -> float:
    from agentd.config.load import ModelChoice
    from agentd.providers import make_provider
    from agentd.providers.transport import new_http_client

    spec = ToolSpec("web_search", "Search.", {"type": "object"}, ServerSearch())
    message = UserMessage(id="u", content=[TextContent(text="go")], timestamp=0.0)
    request = ProviderRequest(
        model="mock-model", system_prompt="", messages=[message], tools=[spec]
    )
    async with MockLLMServer(_scenarios(searches), keep_requests=0) as server:
        base = server.url if api != "anthropic" else server.url.removesuffix("/v1")
        http = new_http_client()
        provider = make_provider(ModelChoice("p", api, "mock-model", base, None, None), http)
        walls = []
        for run in range(RUNS + 1):
            started = time.perf_counter()
            async for item in provider.stream(request):
                if isinstance(item, StreamEnd):
                    assert item.message.stop_reason == "stop", item.message.error_message
                    assert len(item.message.server_tool_calls()) == len(searches)
            if run:  # the first one opens the connection
                walls.append(time.perf_counter() - started)
        await http.aclose()
    return statistics.median(walls) * 1000


async def measure_provider() -> list[Row]:
    rows = []
    for api, label in (("anthropic", "Anthropic"), ("openai-responses", "Responses")):
        plain = await _reply_ms(api, [])
        searched = await _reply_ms(api, SEARCHES)
        rows.append(
            (
                f"{label} reply with 2 provider-side searches vs none (wall)",
                f"{searched:.1f} vs {plain:.1f} ms",
                "(parsing overhead)",
            )
        )
    return rows


def measure_imports() -> Row:
    probe = IMPORT_PROBE.format(names=LAZY)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = [name for name in out.stdout.strip().split(",") if name]
    shown = ", ".join(loaded) if loaded else "none"
    return (
        f"doc/search/skill modules imported: daemon start + session tools (of {len(LAZY)})",
        shown,
        "none",
    )


def main() -> list[Row]:
    rows = [asyncio.run(measure_searxng())]
    rows += asyncio.run(measure_provider())
    rows.append(measure_imports())
    return rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
