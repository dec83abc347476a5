"""A pending approval belongs to the session: the client asked first may go away (a reloaded
page, a restarted editor) without refusing the call, a client that subscribes meanwhile is
asked (and its replay holds the request), and only the timeout refuses it, saying so. Real
socket daemon, mock LLM, agentctl's client library as the editors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, scaled, socket_client, stop, wait_until_async

pytestmark = pytest.mark.e2e


@pytest.fixture
def daemon(home: Home) -> Any:
    process = home.start_socket_daemon()
    yield process
    stop(process)


def _events(client: Any, session_id: str) -> tuple[Any, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    stream = client.raw_events(session_id)

    async def collect() -> None:
        async for params in stream:
            seen.append(params["event"])

    return asyncio.ensure_future(collect()), seen


async def test_an_approval_survives_its_client_and_is_answered_by_the_next(
    home: Home, daemon: Any
) -> None:
    asked_first: list[str] = []
    never = asyncio.Event()

    async def first(params: RequestPermissionParams) -> Any:
        asked_first.append(params.tool)
        await never.wait()  # goes away without answering

    async def second(params: RequestPermissionParams) -> Any:
        return "allow_once"

    async with socket_client(home) as runner:  # prompts; answers nothing
        sid = await new_session(runner, home, permissionMode="ask")
        async with socket_client(home, permission_handler=first) as leaving:
            await leaving.call("session/subscribe", {"sessionId": sid})
            run = asyncio.ensure_future(
                runner.call("session/prompt", {"sessionId": sid, "text": "hello world"})
            )
            await wait_until_async(lambda: asked_first, 30, "the first client to be asked")
        async with socket_client(home, permission_handler=second) as arriving:
            collector, replayed = _events(arriving, sid)
            await arriving.call("session/subscribe", {"sessionId": sid, "sinceSeq": 0})
            result = await asyncio.wait_for(run, scaled(60))
            collector.cancel()
    assert result["stopReason"] == "end_turn"
    assert (Path(home.project) / "hello.py").exists()
    kinds = [event["type"] for event in replayed]
    assert "permission_request" in kinds  # the replay showed the pending request
    resolved = [e for e in replayed if e["type"] == "permission_resolved"]
    assert resolved[0]["outcome"] == "allow_once"


async def test_with_its_clients_gone_an_approval_waits_for_the_timeout(home: Home) -> None:
    """Nobody comes back: the call is refused at the configured timeout, and the reason says
    that no client answered in that time (not before)."""
    config = home.config_dir / "agentd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[permissions]\ntimeout = 3\n")
    process = home.start_socket_daemon()
    try:
        never = asyncio.Event()
        asked: list[str] = []

        async def silent(params: RequestPermissionParams) -> Any:
            asked.append(params.tool)
            await never.wait()

        async with socket_client(home) as runner:
            sid = await new_session(runner, home, permissionMode="ask")
            collector, seen = _events(runner, sid)
            await runner.call("session/subscribe", {"sessionId": sid})
            async with socket_client(home, permission_handler=silent) as leaving:
                await leaving.call("session/subscribe", {"sessionId": sid})
                run = asyncio.ensure_future(
                    runner.call("session/prompt", {"sessionId": sid, "text": "hello world"})
                )
                await wait_until_async(lambda: asked, 30, "the client to be asked")
            gone_at = asyncio.get_running_loop().time()
            await asyncio.wait_for(run, scaled(60))
            refused_after = asyncio.get_running_loop().time() - gone_at
            collector.cancel()
        resolved = [e for e in seen if e["type"] == "permission_resolved"]
        assert resolved[0]["outcome"] == "reject_once"
        assert resolved[0]["reason"] == "no client answered within 3 s"
        assert refused_after > 1.0  # it waited on after the client left (3 s from the ask)
        assert not (Path(home.project) / "hello.py").exists()
    finally:
        stop(process)
