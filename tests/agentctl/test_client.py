"""The client library against a small in-test JSON-RPC server on a real Unix socket.

The server is built from ``agentd.rpc`` (the same Connection and Router the daemon uses) with
scripted handlers, so routing of events per session, the permission hook, typed helpers and
connection loss are checked without the full daemon.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentctl.client import AgentClient, DaemonUnavailable, connect
from agentd.errors import SessionNotFound
from agentd.protocol.content import Usage
from agentd.protocol.events import AgentEnd, AgentStart, SessionEvent, TurnStart
from agentd.protocol.methods import (
    InitializeParams,
    InitializeResult,
    PromptParams,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
    ServerCapabilities,
    ServerInfo,
    SessionIdParams,
)
from agentd.protocol.table import METHODS
from agentd.rpc import Connection, Router
from tests.harness import scaled


@dataclass
class FakeDaemon:
    """Records what the client sent; its prompt emits events for two sessions."""

    initialize: list[InitializeParams] = field(default_factory=list)
    permission_answers: list[str] = field(default_factory=list)
    connections: list[Connection] = field(default_factory=list)

    def router(self) -> Router:
        router = Router()
        for method, handler in (
            ("initialize", self.on_initialize),
            ("session/prompt", self.on_prompt),
            ("session/state", self.on_state),
        ):
            router.add(method, handler, METHODS[method].params)
        return router

    async def on_initialize(self, conn: Connection, params: InitializeParams) -> InitializeResult:
        self.initialize.append(params)
        return InitializeResult(
            protocol_version=1,
            server_info=ServerInfo(name="fake", version="0"),
            capabilities=ServerCapabilities(),
        )

    async def on_prompt(self, conn: Connection, params: PromptParams) -> PromptResult:
        events: list[tuple[str, Any]] = [
            (params.session_id, AgentStart()),
            ("other", TurnStart(turn=1)),
            (params.session_id, TurnStart(turn=1)),
        ]
        for seq, (session_id, event) in enumerate(events, 1):
            conn.notify("session/event", SessionEvent(session_id=session_id, seq=seq, event=event))
        future_event = {"sessionId": params.session_id, "seq": 4, "event": {"type": "new_kind"}}
        conn.notify("session/event", future_event)
        if params.text == "ask":
            answer = await conn.request(
                "session/requestPermission",
                RequestPermissionParams(
                    session_id=params.session_id,
                    tool_call_id="c1",
                    tool="bash",
                    args={"command": "ls"},
                    options=["allow_once", "reject_once"],
                ),
                result_type=RequestPermissionResult,
            )
            self.permission_answers.append(answer.outcome)
        end = AgentEnd(stop_reason="end_turn", turns=1)
        conn.notify("session/event", SessionEvent(session_id=params.session_id, seq=5, event=end))
        return PromptResult(stop_reason="end_turn", turns=1, usage=Usage(), cost=0.0)

    async def on_state(self, conn: Connection, params: SessionIdParams) -> Any:
        raise SessionNotFound(f"no session {params.session_id!r}")

    async def serve(self, path: str) -> asyncio.Server:
        router = self.router()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = Connection(reader, writer, router, transport="unix")
            self.connections.append(conn)
            await conn.serve()

        return await asyncio.start_unix_server(accept, path)


@pytest.fixture
async def daemon() -> AsyncIterator[tuple[FakeDaemon, str]]:
    path = os.path.join(tempfile.mkdtemp(dir="/tmp"), "s.sock")
    fake = FakeDaemon()
    server = await fake.serve(path)
    try:
        yield fake, path
    finally:
        for conn in fake.connections:
            await conn.close()
        server.close()
        await server.wait_closed()


async def test_events_are_routed_per_session_and_typed(daemon: tuple[FakeDaemon, str]) -> None:
    """A session's stream sees only its events; the typed one skips unknown event types."""
    fake, path = daemon
    async with await connect(path) as client:
        assert fake.initialize[0].capabilities.permissions is False
        typed = client.events("s1")
        raw = client.raw_events("s1")
        every = client.events()
        result = await client.sessions.prompt(PromptParams(session_id="s1", text="go"))
        typed.close()
        raw.close()
        every.close()
        assert result.stop_reason == "end_turn"
        assert [item.seq async for item in typed] == [1, 3, 5]
        assert [item["seq"] async for item in raw] == [1, 3, 4, 5]
        assert [item.session_id async for item in every] == ["s1", "other", "s1", "s1"]


async def test_permission_requests_reach_the_handler(daemon: tuple[FakeDaemon, str]) -> None:
    """With a handler, initialize declares the capability and the handler's answer is sent."""
    fake, path = daemon
    seen: list[RequestPermissionParams] = []

    async def approve(params: RequestPermissionParams) -> Any:
        seen.append(params)
        return "allow_once"

    async with await connect(path, permission_handler=approve) as client:
        await client.sessions.prompt(PromptParams(session_id="s1", text="ask"))
    assert fake.initialize[0].capabilities.permissions is True
    assert [p.args for p in seen] == [{"command": "ls"}]
    assert fake.permission_answers == ["allow_once"]


async def test_without_a_handler_requests_are_refused(daemon: tuple[FakeDaemon, str]) -> None:
    """A client that cannot ask anybody refuses rather than hangs."""
    fake, path = daemon
    async with await connect(path) as client:
        await client.sessions.prompt(PromptParams(session_id="s1", text="ask"))
    assert fake.permission_answers == ["reject_once"]


async def test_rpc_errors_keep_their_class(daemon: tuple[FakeDaemon, str]) -> None:
    """A daemon error arrives as the matching RpcError subclass with its message."""
    _, path = daemon
    async with await connect(path) as client:
        with pytest.raises(SessionNotFound, match="no session 'x'"):
            await client.sessions.state(SessionIdParams(session_id="x"))
        raw = await client.call("session/prompt", {"sessionId": "s1", "text": "go"})
        assert raw["stopReason"] == "end_turn"


async def test_streams_end_when_the_connection_closes(daemon: tuple[FakeDaemon, str]) -> None:
    """When the daemon goes away, event iteration ends instead of hanging."""
    fake, path = daemon
    client = await connect(path)
    stream = client.events()
    await fake.connections[0].close()
    items = [item async for item in stream]
    assert items == []
    await client.wait_closed()
    assert client.closed
    await client.close()


async def test_missing_socket_without_autostart() -> None:
    """Nobody listening and no autostart: DaemonUnavailable with a hint."""
    path = os.path.join(tempfile.mkdtemp(dir="/tmp"), "none.sock")
    with pytest.raises(DaemonUnavailable, match="agentctl daemon start"):
        await connect(path)


async def test_autostart_reports_a_daemon_that_cannot_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A daemon that exits at once (unusable socket dir) is reported, with its exit status."""
    root = tempfile.mkdtemp(dir="/tmp")
    blocker = os.path.join(root, "file")
    with open(blocker, "w") as handle:
        handle.write("not a directory")
    monkeypatch.setenv("XDG_STATE_HOME", root)
    with pytest.raises(DaemonUnavailable, match=r"could not start agentd .*exited with status"):
        await connect(
            os.path.join(blocker, "agentd.sock"), autostart=True, startup_timeout=scaled(10)
        )


def test_client_type_is_exported_lazily() -> None:
    """``from agentctl import AgentClient`` works without importing it up front."""
    import agentctl

    assert agentctl.AgentClient is AgentClient
    with pytest.raises(AttributeError):
        agentctl.nothing_here  # noqa: B018
