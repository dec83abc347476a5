"""web_fetch through the real daemon and the mock LLM, against a local HTTP server: the
configured allow_hosts, the SSRF refusal the model reads, and the approval in ask mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call
from tests.tools.webserver import _Server, web_server

pytestmark = pytest.mark.e2e


@pytest.fixture
def server() -> Iterator[_Server]:
    with web_server() as started:
        yield started


def script_fetch(home: Home, url: str) -> None:
    home.use_scenarios(
        [
            {
                "name": "fetch-page",
                "trigger": "fetch the local page",
                "steps": [
                    {"response": {"tool_calls": [tool_call("web_fetch", {"url": url})]}},
                    {"response": {"content": "Fetched."}},
                ],
            }
        ]
    )


def allow(home: Home, hosts: str) -> None:
    home.user_config(f"[tools.web_fetch]\nallow_hosts = [{hosts}]\n")


def end_of(events: list[dict[str, object]]) -> dict[str, object]:
    (end,) = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]  # type: ignore[index]
    return end  # type: ignore[return-value]


async def test_allowed_host_is_fetched_as_markdown(home: Home, server: _Server) -> None:
    script_fetch(home, f"http://localhost:{server.server_address[1]}/page")
    allow(home, '"127.0.0.1"')
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "fetch the local page")
    end = end_of(events)
    assert "isError" not in end
    assert "# Install guide" in end["result"][0]["text"]  # type: ignore[index]
    assert end["details"]["format"] == "markdown"  # type: ignore[index]


async def test_the_model_reads_the_refusal(home: Home, server: _Server) -> None:
    script_fetch(home, f"http://localhost:{server.server_address[1]}/page")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "fetch the local page")
    end = end_of(events)
    assert end["isError"]
    assert "localhost (127.0.0.1) is a loopback address" in end["result"][0]["text"]  # type: ignore[index]
    assert server.seen == []


async def test_ask_mode_asks_before_fetching(home: Home, server: _Server) -> None:
    """In ask mode the client is asked (before any request reaches the server)."""
    script_fetch(home, f"http://localhost:{server.server_address[1]}/page")
    allow(home, '"localhost"')
    asked: list[tuple[str, int]] = []

    async def approve(params: RequestPermissionParams) -> PermissionOption:
        asked.append((params.tool, len(server.seen)))
        return "allow_once"

    async with stdio_client(home, approve) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, events = await run(client, sid, "fetch the local page")
    assert asked == [("web_fetch", 0)]
    assert "isError" not in end_of(events)
    assert [path for path, _ in server.seen] == ["/page"]


async def test_read_only_does_not_fetch_unasked(home: Home, server: _Server) -> None:
    """A read-only session (the GitHub Action's default) with no client to answer: the fetch
    is refused before any request leaves; a client that is asked can allow it; a
    ``web_fetch(domain:HOST)`` rule lets it through unasked."""
    script_fetch(home, f"http://localhost:{server.server_address[1]}/page")
    allow(home, '"localhost"')
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, events = await run(client, sid, "fetch the local page")
    end = end_of(events)
    assert end["isError"]
    assert server.seen == []
    asked: list[str] = []

    async def approve(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params.tool)
        return "allow_once"

    async with stdio_client(home, approve) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, events = await run(client, sid, "fetch the local page")
    assert asked == ["web_fetch"]
    assert "isError" not in end_of(events)
    home.user_config(
        '[tools.web_fetch]\nallow_hosts = ["localhost"]\n'
        '[permissions]\nallow = ["web_fetch(domain:localhost)"]\n'
    )
    async with stdio_client(home, approve) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, events = await run(client, sid, "fetch the local page")
    assert asked == ["web_fetch"]  # not asked again
    assert "isError" not in end_of(events)
    assert [path for path, _ in server.seen] == ["/page", "/page"]
