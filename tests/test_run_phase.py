"""A session's run phase (``RunState``) in process: a real runtime built by the factory, a
real session file, the agent and the HTTP provider against the in-process mock LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.agent.run import RunRequest
from agentd.api.subscriber import QueueSubscriber
from agentd.errors import SessionBusy, SessionIdle
from agentd.protocol.events import AgentEnd, AgentStart
from agentd.protocol.methods import SessionNewParams
from agentd.session.factory import new_session
from agentd.session.runtime import SessionRuntime
from agentd.session.shared import SharedResources


@pytest.fixture
async def runtime(xdg_home: Path) -> AsyncIterator[SessionRuntime]:
    project = xdg_home / "project"
    project.mkdir()
    services = SharedResources(xdg_home / "sessions")
    params = SessionNewParams(cwd=str(project), provider="mock", permission_mode="ask")
    runtime = await new_session(services, params)
    try:
        yield runtime
    finally:
        await runtime.shutdown()
        await services.close()


async def test_a_run_cancelled_before_it_began_still_reports_its_start_and_end(
    runtime: SessionRuntime,
) -> None:
    """starting → cancelling (a second cancel changes nothing) → idle: the run still sends
    agent_start and agent_end, the session is busy throughout and idle after."""
    watcher = QueueSubscriber()
    runtime.bus.subscribe(watcher)
    task = runtime.start_run(RunRequest("be slow"))
    state = runtime.state()
    assert (state.phase, state.status) == ("starting", "running")
    with pytest.raises(SessionBusy, match="is running"):
        runtime.start_run(RunRequest("hello world"))
    assert runtime.cancel().cancelled is True
    assert runtime.state().phase == "cancelling"
    assert runtime.cancel().cancelled is True
    assert runtime.state().phase == "cancelling"
    result = await task
    assert result.stop_reason == "cancelled"
    assert (runtime.state().phase, runtime.state().status) == ("idle", "idle")
    assert runtime.run.task is None
    kinds = []
    while (item := watcher.get_nowait()) is not None:
        kinds.append(type(item.event))
    assert kinds[0] is AgentStart
    assert kinds[-1] is AgentEnd
    with pytest.raises(SessionIdle):
        runtime.enqueue("too late", steer=True)
    assert runtime.cancel().cancelled is False


async def test_the_model_and_permission_mode_are_read_from_one_place(
    runtime: SessionRuntime,
) -> None:
    """What the session reports is what the agent calls and what the policy applies: a
    change in one place shows everywhere, with no copy to keep in step."""
    assert runtime.info().model == runtime.agent.model == runtime.state().model
    assert runtime.info().provider == runtime.agent.provider.name == "mock"
    await runtime.set_permission_mode("read-only")
    assert runtime.policy.mode == "read-only"
    assert runtime.approver.policy is runtime.policy
    assert runtime.agent.context.settings.permission_policy is runtime.policy
    assert runtime.info().permission_mode == runtime.state().permission_mode == "read-only"
    assert runtime.file.settings().permission_mode == "read-only"  # type: ignore[union-attr]
