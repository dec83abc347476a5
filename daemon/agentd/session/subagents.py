"""Subagents: the session layer's side of the ``task`` tool.

:class:`SubagentRunner` is a session's :class:`~agentd.tools.base.Subagents` (its tools reach
it as ``ctx.subagents``). For a ``task`` call it creates a **child session** — a real
session: its own file, linked to the parent by ``parentSessionId``/``parentToolCallId`` in its
header, listed under it, resumable and exportable — and runs it on the call's prompt:

- on the parent's provider and model (unless the profile names a model), with the profile's
  tools (:mod:`agentd.config.agents`) within the parent's, the parent's MCP servers included
  (:mod:`.subagent_tools`), in the parent's permission mode and sandbox;
- watched by the parent's subscribers (also those that subscribe to the parent later, while
  it runs), so its events reach them as ``session/event`` under its own id and its approvals
  reach the parent's clients; the parent's stream gets a ``subagent_start`` event first;
- spending into the parent run's ledger (the parent's caps cover it, parallel children
  together; the parent's usage includes it) and limited to the parent run's turn limit;
- at most ``subagents.max_parallel`` at once per session (a task call waits for a slot
  before its child is created) and ``subagents.max_per_run`` per top-level run (counted in
  that run's ledger; past it the call fails with a ToolError);
- sharing the family's per-file locks (:class:`~agentd.tools.files.locks.FileLocks`), so
  two children never change one file at once;
- cancelled when the call is (a cancel of the parent cancels its children).

Depth: a top-level session is depth 0; a child at depth :data:`~agentd.config.agents.MAX_DEPTH`
never gets the ``task`` tool, and a profile must list ``task`` for its child to get it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from agentd.agent.run import RunRequest
from agentd.config.agents import MAX_DEPTH, SUBAGENT_PROMPT, AgentProfile, load_profiles
from agentd.config.schema import SubagentsSection
from agentd.errors import RpcError
from agentd.log import get_logger
from agentd.protocol.content import AssistantMessage, TextContent
from agentd.protocol.events import SubagentStart
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.session_file import SessionHeader
from agentd.session.subagent_tools import ChildTools, child_tools, inherited_mcp_servers
from agentd.store import find_session
from agentd.tools.base import TaskOutcome, TaskRequest, ToolError
from agentd.tools.files.locks import FileLocks

if TYPE_CHECKING:
    from agentd.agent.budget import Ledger
    from agentd.agent.loop import RunResult
    from agentd.api.subscriber import Subscriber
    from agentd.config.load import Config
    from agentd.mcp.servers import ServerDef
    from agentd.session.runtime import SessionRuntime
    from agentd.session.shared import SharedResources

log = get_logger("agentd.subagents")


class Family(msgspec.Struct, frozen=True):
    """What a child session shares with the session that started it: the per-file ``locks``
    of the family, its own ``depth`` (a top-level session is depth 0) and its MCP servers
    (the parent's, narrowed to the child's tools: :func:`.inherited_mcp_servers`)."""

    locks: FileLocks
    depth: int
    mcp_servers: list[ServerDef] = msgspec.field(default_factory=list)


class Sessions(Protocol):
    """What a runner needs of the session manager (:class:`~agentd.session.manager.
    SessionManager`): creating a linked session, watching one, the loaded ones."""

    shared: SharedResources
    loaded: dict[str, SessionRuntime]

    async def create(
        self,
        params: SessionNewParams,
        *,
        subagent_of: tuple[str, str] | None = None,
        extra_prompt: str | None = None,
        config: Config | None = None,
        family: Family | None = None,
    ) -> SessionRuntime: ...

    def watch(
        self, runtime: SessionRuntime, subscriber: Subscriber, since_seq: int | None = None
    ) -> tuple[int, bool]: ...


class SubagentRunner:
    """Starts and runs the subagents of one session (see the module docstring)."""

    def __init__(
        self, manager: Sessions, runtime: SessionRuntime, family: Family | None = None
    ) -> None:
        """``family``: a child's, from its parent (None: a session of its own, whose locks
        are its tools' and whose depth is read from the headers on first use)."""
        self._manager = manager
        self._runtime = runtime
        own = runtime.agent.context.path_locks
        own = own if isinstance(own, FileLocks) else FileLocks()
        self.locks = family.locks if family is not None else own
        self.depth: int | None = family.depth if family else None
        """This session's depth (None: not known yet, read from the headers on first use)."""
        self._slots: asyncio.Semaphore | None = None

    async def run_task(self, request: TaskRequest) -> TaskOutcome:
        """Create the child, run it to its end and report; cancelled with the call. The
        call waits for one of the session's ``subagents.max_parallel`` slots first."""
        parent = self._runtime
        profiles, _ = await asyncio.to_thread(load_profiles, Path(parent.settings.cwd))
        profile = profiles.get(request.agent)
        if profile is None:
            known = ", ".join(profiles)
            raise ToolError(f"Unknown agent profile {request.agent!r}. Profiles: {known}.")
        active = parent.agent.active_run()
        if active is None:
            raise ToolError("A task can only be started from a running turn.")
        ledger, max_turns = active
        tools = self._child_tools(profile)
        limits = self._limits()
        _count(ledger, limits.max_per_run)
        async with self._slot(limits.max_parallel):
            child = await self._create(profile, request, tools)
            parent.children[child.id] = child
            try:
                self._adopt(child, profile, request)
                run = RunRequest(text=request.prompt, max_turns=max_turns, parent=ledger)
                task = child.start_run(run)
                result = await _until_done(child, task)
            finally:
                parent.children.pop(child.id, None)
        return TaskOutcome(
            text=_final_text(child),
            child_session_id=child.id,
            agent=profile.name,
            stop_reason=result.stop_reason,
            usage=result.usage,
            cost=result.usage.cost,
            turns=result.turns,
            error=result.error,
        )

    def _limits(self) -> SubagentsSection:
        config = self._runtime.config
        return config.settings.subagents if config is not None else SubagentsSection()

    def _slot(self, size: int) -> asyncio.Semaphore:
        """The session's semaphore of ``size`` running subagents (made at first use)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(size)
        return self._slots

    def _adopt(self, child: SessionRuntime, profile: AgentProfile, request: TaskRequest) -> None:
        """Announce ``child`` (created in the family: its locks, its depth) on the parent's
        stream and let the parent's subscribers watch it."""
        parent = self._runtime
        parent.emit(
            SubagentStart(
                tool_call_id=request.tool_call_id,
                child_session_id=child.id,
                agent=profile.name,
                description=request.description,
            )
        )
        for subscriber in list(parent.bus.subscribers.values()):
            self._manager.watch(child, subscriber)
        log.info("subagent started", session_id=parent.id, child=child.id, agent=profile.name)

    async def _create(
        self, profile: AgentProfile, request: TaskRequest, tools: ChildTools
    ) -> SessionRuntime:
        """The child session, created through the manager (registered, attached), with
        its parent's MCP servers narrowed to ``tools``."""
        parent = self._runtime
        provider, model = parent.agent.provider.name, parent.agent.model
        if profile.model:
            provider, _, model = profile.model.rpartition("/")
            provider = provider or parent.agent.provider.name
        params = SessionNewParams(
            cwd=parent.settings.cwd,
            provider=provider,
            model=model,
            tools=tools.builtin,
            permission_mode=parent.policy.mode,
            sandbox="workspace" if parent.policy.workspace is not None else "none",
            title=request.description,
            provider_env=parent.settings.provider_env,
            base_url=parent.settings.base_url if provider == parent.agent.provider.name else None,
        )
        prompt = "\n\n".join(t for t in (SUBAGENT_PROMPT, profile.prompt) if t)
        link = (parent.id, request.tool_call_id)
        depth = self._depth() + 1  # within MAX_DEPTH: _child_tools checked it
        try:
            child = await self._manager.create(
                params,
                subagent_of=link,
                extra_prompt=prompt,
                config=parent.config,
                family=Family(self.locks, depth, inherited_mcp_servers(parent, tools)),
            )
        except RpcError as exc:  # a bad profile model, a config error: the model reads why
            raise ToolError(f"The subagent could not start: {exc.message}") from None
        return child

    def _child_tools(self, profile: AgentProfile) -> ChildTools:
        """The profile's tools within the parent's (:mod:`.subagent_tools`); ToolError when
        the child would be too deep."""
        depth = self._depth() + 1
        if depth > MAX_DEPTH:
            raise ToolError(f"Subagents may not start subagents deeper than {MAX_DEPTH} levels.")
        toolset = self._runtime.agent.toolset
        return child_tools(profile, toolset, allow_task=depth < MAX_DEPTH)

    def _depth(self) -> int:
        """This session's depth: 0 without a parent, else one more than its parent's (read
        from the session files' headers once)."""
        if self.depth is None:
            self.depth = depth_from_headers(self._manager, self._runtime.file.header)
        return self.depth


def _count(ledger: Ledger, limit: int) -> None:
    """Count one more subagent in the top-level run of ``ledger``; ToolError past ``limit``."""
    root = ledger.root
    if root.subagents >= limit:
        raise ToolError(
            f"This prompt's run has already started {root.subagents} subagents, the limit "
            f"(subagents.max_per_run); do the rest of the work without more task calls."
        )
    root.subagents += 1


async def _until_done(child: SessionRuntime, task: asyncio.Task[RunResult]) -> RunResult:
    """The child's run result; a cancel of the waiting call cancels the child and waits for
    it to settle before passing the cancel on."""
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        child.cancel()
        await child.settled()
        raise


def _final_text(child: SessionRuntime) -> str:
    """The text of the child's last assistant message."""
    for message in reversed(child.agent.messages):
        if isinstance(message, AssistantMessage):
            return "".join(b.text for b in message.content if isinstance(b, TextContent))
    return ""


def depth_from_headers(manager: Sessions, header: SessionHeader) -> int:
    """How many ``task`` links lead from ``header``'s session up to a top-level one (a
    missing parent file ends the walk)."""
    depth, seen = 0, {header.id}
    while header.parent_session_id and depth < MAX_DEPTH + 1:
        depth += 1
        parent_id = header.parent_session_id
        loaded = manager.loaded.get(parent_id)
        if loaded is not None:
            header = loaded.file.header
        else:
            path = find_session(manager.shared.session_root, parent_id)
            if path is None or parent_id in seen:
                break
            with path.open("rb") as file:
                header = msgspec.json.decode(file.readline(), type=SessionHeader)
        seen.add(header.id)
    return depth
