"""The session API: one table, one typed interface, two implementations that behave alike.

* the method table, :class:`SessionApi`, :class:`SessionService` and :class:`RemoteSessions`
  agree on every method (name, params type, result type) — what makes adding a method three
  edits (Structs, table entry, service method) and catches a missed one;
* :class:`RemoteSessions` over a real ``agentd --stdio`` child gives the same typed results and
  the same :class:`QueueSubscriber` event stream as the in-process service, routes the daemon's
  permission requests to the subscriber that asked for them, and fills ``providerEnv``;
* the error classes carry the HTTP statuses the web API answers with.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import agentd.protocol.methods
from agentd.api import QueueSubscriber, RemoteSessions, SessionApi, Subscriber
from agentd.errors import ERROR_CLASSES, MethodNotFound, SessionNotFound
from agentd.protocol.events import AgentEnd, PermissionRequest, SessionEvent
from agentd.protocol.methods import (
    ModelsListParams,
    PermissionAnswerParams,
    PromptParams,
    RequestPermissionParams,
    SessionIdParams,
    SessionNewParams,
)
from agentd.protocol.table import METHODS
from agentd.rpc import Router
from agentd.session.service import SessionService
from tests.harness import IsolatedHome, scaled, spawn_stdio_connection

CALLS = {spec.call: spec for spec in METHODS.values() if spec.call is not None}


NAMESPACE = vars(agentd.protocol.methods) | {"Subscriber": Subscriber}


def _signature(owner: type, name: str) -> tuple[object, object]:
    """``(params type, result type)`` of ``owner.name`` with its annotations resolved."""
    hints = typing.get_type_hints(getattr(owner, name), NAMESPACE)
    return hints["params"], hints["return"]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_table_the_protocol_and_the_service_agree(name: str) -> None:
    """Each ``call`` of the table is a SessionApi method and a SessionService method, both
    ``(params: Params, subscriber=None) -> Result`` with the table's types."""
    spec = CALLS[name]
    expected = (spec.params, spec.result)
    assert _signature(SessionApi, name) == expected
    assert _signature(SessionService, name) == expected
    parameters = list(inspect.signature(getattr(SessionService, name)).parameters.values())
    assert [p.name for p in parameters] == ["self", "params", "subscriber"]
    assert parameters[2].default is None
    remote = getattr(RemoteSessions, name)
    assert remote.__name__ == name
    assert spec.doc in remote.__doc__


def test_the_protocol_has_no_method_the_table_lacks() -> None:
    """SessionApi's methods (generated into agentd.api.methods from the table) are the
    table's calls, no more."""
    declared = {
        name
        for klass in SessionApi.__mro__
        for name, value in vars(klass).items()
        if inspect.iscoroutinefunction(value) and not name.startswith("_")
    }
    assert declared == set(CALLS)


def test_every_error_class_has_an_http_status() -> None:
    """The web API's status is the error class's: client mistakes 4xx, the rest 500."""
    statuses = {cls.__name__: cls.http_status for cls in ERROR_CLASSES}
    assert statuses["InvalidParams"] == 400
    assert statuses["SessionNotFound"] == 404
    assert statuses["SessionBusy"] == 409
    assert statuses["InternalError"] == 500
    assert all(400 <= status <= 599 for status in statuses.values())


# --- RemoteSessions over a real daemon -------------------------------------------------------


@pytest.fixture
async def home() -> AsyncIterator[IsolatedHome]:
    with IsolatedHome() as box:
        yield box


@pytest.fixture
async def remote(home: IsolatedHome) -> AsyncIterator[RemoteSessions]:
    """RemoteSessions on a private ``agentd --stdio``, initialized with permissions."""
    sessions = RemoteSessions()
    process, conn = await spawn_stdio_connection(home, router=sessions.routes(Router()))
    sessions.attach(conn)
    await sessions.request("initialize", {"capabilities": {"permissions": True}})
    try:
        yield sessions
    finally:
        await conn.close()
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), scaled(30))


async def _run(api: SessionApi, project: Path, text: str, **new: object) -> list[SessionEvent]:
    """A new session, one prompt; the events its subscriber saw up to agent_end."""
    watcher = QueueSubscriber(answers_permissions=True)
    info = await api.create(SessionNewParams(cwd=str(project), provider="mock", **new), watcher)
    result = await api.prompt(PromptParams(session_id=info.session_id, text=text), watcher)
    assert result.stop_reason == "end_turn"
    seen: list[SessionEvent] = []
    async with asyncio.timeout(scaled(30)):
        async for item in watcher.events():
            seen.append(item)
            if isinstance(item.event, AgentEnd):
                return seen
    raise AssertionError("no agent_end")


async def test_remote_and_in_process_give_the_same_typed_stream(
    home: IsolatedHome, remote: RemoteSessions, xdg_home: Path
) -> None:
    """The same prompt through RemoteSessions and through the service: the same results'
    types and the same sequence of typed events in the subscriber."""
    service = SessionService(session_dir=home.root / "local-sessions")
    try:
        local = await _run(service, home.project, "hello world")
    finally:
        await service.close()
    over_the_wire = await _run(remote, home.project, "hello world")
    assert [type(item.event) for item in over_the_wire] == [type(item.event) for item in local]
    seqs = [item.seq for item in over_the_wire]
    assert seqs == sorted(seqs)
    assert {item.session_id for item in over_the_wire} == {over_the_wire[0].session_id}


async def test_permission_requests_reach_the_subscriber_that_asked(
    home: IsolatedHome, remote: RemoteSessions
) -> None:
    """In ``ask`` mode the daemon's requests go to the subscriber of that session: its
    ``ask`` callback answers, as in-process."""
    asked: list[str] = []

    async def ask(params: RequestPermissionParams) -> typing.Any:
        asked.append(params.tool)
        return "allow_once"

    watcher = QueueSubscriber(ask=ask)
    new = SessionNewParams(cwd=str(home.project), provider="mock", permission_mode="ask")
    info = await remote.create(new, watcher)
    prompt = PromptParams(session_id=info.session_id, text="hello world")
    result = await asyncio.wait_for(remote.prompt(prompt, watcher), scaled(30))
    assert result.stop_reason == "end_turn"
    assert asked == ["write", "bash"]
    assert (home.project / "hello.py").exists()
    kinds = [type(item.event) async for item in _until_end(watcher)]
    assert kinds.count(PermissionRequest) == 2


async def _until_end(watcher: QueueSubscriber) -> AsyncIterator[SessionEvent]:
    async with asyncio.timeout(scaled(30)):
        async for item in watcher.events():
            yield item
            if isinstance(item.event, AgentEnd):
                return


async def test_a_lost_daemon_ends_the_event_stream(home: IsolatedHome) -> None:
    """When the connection closes (the daemon is gone), a subscriber's stream ends after the
    events it already received, instead of waiting for ever."""
    sessions = RemoteSessions()
    process, conn = await spawn_stdio_connection(home, router=sessions.routes(Router()))
    sessions.attach(conn)
    await sessions.request("initialize", {})
    watcher = QueueSubscriber()
    info = await sessions.create(SessionNewParams(cwd=str(home.project), provider="mock"), watcher)
    await sessions.prompt(PromptParams(session_id=info.session_id, text="how are you"), watcher)
    process.kill()
    await process.wait()
    async with asyncio.timeout(scaled(30)):
        seen = [type(item.event) async for item in watcher.events()]
    assert seen[-1] is AgentEnd
    assert watcher.closed


async def test_errors_keep_their_class_and_web_only_methods_are_refused(
    remote: RemoteSessions,
) -> None:
    with pytest.raises(SessionNotFound, match="nope"):
        await remote.state(SessionIdParams(session_id="nope"))
    answer = PermissionAnswerParams(session_id="s", tool_call_id="c", outcome="allow_once")
    with pytest.raises(MethodNotFound, match="not served over JSON-RPC"):
        await remote.answer_permission(answer)


async def test_provider_env_goes_with_the_methods_that_take_it(
    home: IsolatedHome, remote: RemoteSessions
) -> None:
    """``provider_env`` fills the table's local-only field: the daemon (started without keys)
    then lists the provider the caller has a key for; without it, it does not."""
    remote.provider_env = {"OPENAI_API_KEY": "sk-from-the-caller-0000"}
    listed = await remote.models(ModelsListParams(cwd=str(home.project)))
    assert "openai" in {model.provider for model in listed.models}
    remote.provider_env = None
    bare = await remote.models(ModelsListParams(cwd=str(home.project)))
    assert "openai" not in {model.provider for model in bare.models}
