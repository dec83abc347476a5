"""Approval requests over a real socket: first answer wins, no client, timeout, cancel."""

from __future__ import annotations

import asyncio

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import (
    Home,
    drain,
    new_session,
    run,
    scaled,
    socket_client,
    start_run,
    stdio_client,
    stop,
    wait_until_async,
)

pytestmark = pytest.mark.e2e


def answering(outcome: PermissionOption, delay: float = 0.0, asked: list[str] | None = None):  # type: ignore[no-untyped-def]
    async def handler(params: RequestPermissionParams) -> PermissionOption:
        if asked is not None:
            asked.append(params.tool)
        await asyncio.sleep(delay)
        return outcome

    return handler


async def test_first_answer_wins_between_two_clients(home: Home) -> None:
    """Both clients are asked; the first answer decides, the other client's request is
    withdrawn; everyone sees permission_resolved.

    The first client answers only once the second has been asked: otherwise, on a loaded
    machine, the second's request and its withdrawal can reach it in one read, and its
    handler is rightly never called. The second never answers by itself (a delay would race
    the first answer)."""
    daemon = home.start_socket_daemon()
    slow_asked = asyncio.Event()
    withdrawn: list[str] = []

    async def first(params: RequestPermissionParams) -> PermissionOption:
        await asyncio.wait_for(slow_asked.wait(), scaled(30))
        return "allow_once"

    async def second(params: RequestPermissionParams) -> PermissionOption:
        slow_asked.set()
        try:
            await asyncio.sleep(scaled(120))
        except asyncio.CancelledError:
            withdrawn.append(params.tool)
            raise
        return "reject_once"

    try:
        async with (
            socket_client(home, first) as fast,
            socket_client(home, second) as slow,
        ):
            sid = await new_session(fast, home, permissionMode="ask")
            watch = slow.raw_events(sid)
            await slow.call("session/subscribe", {"sessionId": sid})
            result, events = await run(fast, sid, "write a note")
            seen = await drain(watch, until="agent_end")
            await wait_until_async(lambda: withdrawn == ["write"], 30, "the withdrawal")
    finally:
        stop(daemon)
    assert result["stopReason"] == "end_turn"
    assert (home.project / "note.txt").read_text() == "noted\n"
    resolved = [e["event"] for e in seen if e["event"]["type"] == "permission_resolved"]
    assert [r["outcome"] for r in resolved] == ["allow_once"]
    assert any(e["event"]["type"] == "permission_request" for e in events)


async def test_rejection_is_an_error_result_and_nothing_is_written(home: Home) -> None:
    async with stdio_client(home, answering("reject_once")) as client:
        sid = await new_session(client, home, permissionMode="ask")
        result, events = await run(client, sid, "write a note")
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    assert end["isError"]
    assert "Permission denied" in end["result"][0]["text"]
    assert not (home.project / "note.txt").exists()
    assert result["stopReason"] == "end_turn"
    refused = result["permissionsRefused"]
    assert [(r["toolCallId"], r["name"]) for r in refused] == [(end["toolCallId"], "write")]
    assert "Permission denied" in refused[0]["reason"]


async def test_allow_always_is_remembered_for_the_session(home: Home) -> None:
    asked: list[str] = []
    async with stdio_client(home, answering("allow_always", asked=asked)) as client:
        sid = await new_session(client, home, permissionMode="ask")
        await run(client, sid, "write a note")
        await run(client, sid, "write a note")
    assert asked == ["write"]


async def test_no_client_that_can_answer_refuses_at_once(home: Home) -> None:
    """A headless ask-mode run never hangs: the call is refused with a reason."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="ask")
        result, events = await asyncio.wait_for(run(client, sid, "write a note"), scaled(10))
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    assert "no connected client can answer" in end["result"][0]["text"]
    assert result["stopReason"] == "end_turn"


async def test_no_answer_within_the_timeout_is_a_refusal(home: Home) -> None:
    home.project_config(tables="[permissions]\ntimeout = 0.3\n")
    async with stdio_client(home, answering("allow_once", 30)) as client:
        sid = await new_session(client, home, permissionMode="ask")
        result, events = await asyncio.wait_for(run(client, sid, "write a note"), scaled(10))
    resolved = next(e["event"] for e in events if e["event"]["type"] == "permission_resolved")
    assert resolved["outcome"] == "reject_once"
    assert "within 0.3 s" in resolved["reason"]
    assert not (home.project / "note.txt").exists()
    assert result["stopReason"] == "end_turn"


async def test_cancel_while_waiting_for_approval(home: Home) -> None:
    async with stdio_client(home, answering("allow_once", 30)) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, prompt = await start_run(client, sid, "write a note", until="permission_request")
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(5))
    assert result["stopReason"] == "cancelled"
    assert not (home.project / "note.txt").exists()


async def test_read_only_mode_refuses_mutating_tools(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, events = await run(client, sid, "write a note")
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    assert end["isError"]
    assert not (home.project / "note.txt").exists()
