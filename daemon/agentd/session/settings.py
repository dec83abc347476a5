"""What a session runtime is built from and what a run answers: :class:`Settings` (the
session's own facts), :class:`RuntimeParts` (every part of a runtime), :class:`AgentParts`
(the agent's provider, prompt and tools) and :func:`prompt_result` (the ``session/prompt``
result of a finished run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from agentd.protocol.methods import PromptResult, RefusedCall

if TYPE_CHECKING:
    from agentd.agent.loop import Agent, RunResult
    from agentd.agent.scheduling import ToolRunner
    from agentd.config.load import Config
    from agentd.hooks.session import SessionHooks
    from agentd.permissions.policy import PermissionPolicy
    from agentd.protocol.content import Message
    from agentd.protocol.events import Event
    from agentd.providers.base import Provider
    from agentd.session.approval import Approver
    from agentd.session.binding import ModelSource
    from agentd.session.bus import EventBus
    from agentd.session.changes import ChangeRecorder
    from agentd.session.compaction import SessionCompaction
    from agentd.session.phase import RunState
    from agentd.session.sink import SessionSink
    from agentd.store import SessionFile
    from agentd.tools.base import ToolContext, Toolset


class Settings(msgspec.Struct):
    """A session's own facts that ``session/state`` and ``SessionInfo`` report besides its
    model and permission mode (those live once, in the agent and the permission policy: see
    :meth:`agentd.session.runtime.SessionRuntime.info`)."""

    session_id: str
    cwd: str
    title: str | None = None
    provider_env: dict[str, str] | None = None
    """The client's provider variables (memory only, never written, never shown)."""
    base_url: str | None = None
    """The session's own base URL for its provider (``session/new``'s ``baseUrl``)."""
    untrusted_config: str | None = None

    def __repr__(self) -> str:  # provider variables may hold keys: not shown
        shown = ", ".join(
            f"{name}={'<hidden>' if name == 'provider_env' and value else repr(value)}"
            for name, value in msgspec.structs.asdict(self).items()
        )
        return f"Settings({shown})"


class SessionTools(Protocol):
    """Tools besides the built-in ones (a session's MCP servers, :mod:`agentd.mcp.session`):
    the agent's :class:`~agentd.agent.loop.ToolSource`, told where warnings go, closed with
    the session."""

    warn: Callable[[str], None]

    async def prepare(self) -> Toolset: ...

    async def refresh(self) -> Toolset | None: ...

    async def close(self) -> None: ...


HooksMaker = Callable[["Callable[[Event], None]"], "SessionHooks | None"]
"""Builds the session's hooks around the session's event sink."""

ToolsMaker = Callable[["Callable[[str], None]"], SessionTools]
"""Builds the session's extra tools around the session's warnings."""


class AgentParts(msgspec.Struct):
    """What the session's agent is built from (see :class:`agentd.agent.loop.Agent`);
    ``extra_tools`` and ``hooks`` are made around the session's sink by
    :func:`agentd.session.assembly.assemble`."""

    provider: Provider
    model: str
    system_prompt: str
    toolset: Toolset
    context: ToolContext
    run_tool: ToolRunner
    messages: list[Message] = msgspec.field(default_factory=list)
    max_turns: int = 50
    extra_tools: ToolsMaker | None = None
    hooks: HooksMaker | None = None
    """The configured hooks (None: none configured)."""


class RuntimeParts(msgspec.Struct):
    """Everything a :class:`~agentd.session.runtime.SessionRuntime` is made of, built once by
    :mod:`agentd.session.assembly` in dependency order (file → settings → policy → bus →
    approver → change recorder → tools' context → run state → sink → hooks, extra tools →
    compaction → agent); the runtime only stores them. ``model_source`` set: the provider in
    ``agent`` is a stand-in, resolved through it (:mod:`agentd.session.binding`)."""

    settings: Settings
    file: SessionFile
    policy: PermissionPolicy
    bus: EventBus
    approver: Approver
    changes: ChangeRecorder
    config: Config
    run: RunState
    sink: SessionSink
    compaction: SessionCompaction
    hooks: SessionHooks | None
    extra_tools: SessionTools | None
    agent: Agent
    model_source: ModelSource | None = None


def prompt_result(result: RunResult) -> PromptResult:
    """The ``session/prompt`` answer for a finished run."""
    return PromptResult(
        stop_reason=result.stop_reason,
        turns=result.turns,
        usage=result.usage,
        cost=result.usage.cost,
        error=result.error,
        permissions_refused=[
            RefusedCall(tool_call_id=call.id, name=call.name, reason=reason)
            for call, reason in result.refused
        ],
    )
