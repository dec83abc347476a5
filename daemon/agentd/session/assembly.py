"""A session runtime put together once, from values: :class:`SessionPlan` (what the
parameters and the configuration chose) and :class:`SessionLink` (how the session joins the
daemon) in, the runtime's parts built in dependency order out — policy, bus, the tools'
environment and ports, change recorder, approver, run state, the sink, then what reports
through the sink (hooks, MCP tools, compaction) and the agent — each given its collaborators
at construction (:func:`assemble`). :mod:`agentd.session.factory` makes the plan and calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.agent.hooks import NO_HOOKS
from agentd.agent.loop import Agent
from agentd.agent.prompt import build_system_prompt
from agentd.agent.run import ModelBinding
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.skills import SkillInfo
from agentd.session import parts
from agentd.session.approval import Approver
from agentd.session.binding import ModelSource, UnresolvedProvider
from agentd.session.bus import EventBus, resumed_seq
from agentd.session.changes import ChangeRecorder
from agentd.session.compaction import Compactor, SessionCompaction
from agentd.session.files import ClientFiles
from agentd.session.langservers import SessionLanguageServers
from agentd.session.mcp_setup import McpChoice, mcp_runner, session_mcp_tools
from agentd.session.phase import RunState
from agentd.session.questions import Questioner
from agentd.session.runtime import SessionRuntime
from agentd.session.settings import AgentParts, RuntimeParts, SessionTools, Settings
from agentd.session.sink import SessionSink
from agentd.store import SessionFile
from agentd.store.tree import LoadWarning
from agentd.tools import run_tool, toolset
from agentd.tools.base import PathLocks, Subagents, Tool, ToolContext, ToolPorts
from agentd.tools.files.history import history_in
from agentd.tools.files.locks import FileLocks
from agentd.tools.process.table import ProcessTable

if TYPE_CHECKING:
    from agentd.config.load import Config
    from agentd.hooks.session import SessionHooks
    from agentd.mcp.servers import ServerDef
    from agentd.permissions.policy import PermissionPolicy
    from agentd.session.shared import SharedResources


class SessionLink(msgspec.Struct, frozen=True):
    """How a session joins the daemon: ``subagent_of`` (parent session id, ``task`` call id)
    for a subagent's, its ``extra_prompt`` and its parent's ``config`` (reused); the family's
    per-file ``locks`` (None: its own); ``subagents``, the ``task`` tool's port for a session
    id (None: no subagents); a subagent's ``mcp_servers``."""

    subagent_of: tuple[str, str] | None = None
    extra_prompt: str | None = None
    config: Config | None = None
    locks: PathLocks | None = None
    subagents: Callable[[str], Subagents] | None = None
    mcp_servers: list[ServerDef] | None = None
    """A subagent's MCP servers: exactly its parent's, narrowed (None: the configured ones
    and the client's)."""


ALONE = SessionLink()
"""A session of its own: no parent, no subagents."""


class SessionPlan(msgspec.Struct):
    """What a runtime is built from, whether the session is new or loaded."""

    cwd: Path
    config: Config
    binding: ModelBinding | None
    """None for a loaded session: its provider is resolved at the first model call."""
    provider: str
    model: str
    params: SessionNewParams
    tools: dict[str, Tool]
    mode: str
    sandbox: str
    notes: list[str]
    """Warnings about how the session's settings were chosen."""
    extra_prompt: str | None = None
    """Added to the system prompt after the instructions (a subagent's instructions)."""
    agent_profiles: tuple[str, list[str]] | None = None
    """The task tool's profile lines and the warnings about skipped profile files; None
    without the task tool."""
    project_context: str = ""
    """The context files' text (AGENTS.md…) for the system prompt. Both are project files,
    read in a worker thread (:func:`~agentd.session.parts.project_files`)."""
    skills: list[SkillInfo] = msgspec.field(default_factory=list)
    """The Agent Skills the session can load (``skill`` tool)."""
    language_servers: list[Any] = msgspec.field(default_factory=list)
    """The language servers it can use (``lsp`` tool, diagnostics after a change):
    :class:`agentd.langserver.defs.ServerDef` each."""


def assemble(
    shared: SharedResources,
    file: SessionFile,
    plan: SessionPlan,
    link: SessionLink,
    history: tuple[list[Any], str | None],
    model_source: ModelSource | None,
) -> SessionRuntime:
    """The runtime's parts, each built once from the ones before it, then the runtime;
    ``model_source`` resolves a loaded session's provider (None: ``plan.binding`` is
    bound)."""
    messages, title = history
    session_id, config, cwd = file.header.id, plan.config, plan.cwd
    params = plan.params
    sandboxed = plan.sandbox == "workspace"
    policy = parts.permission_policy(
        config, plan.mode, cwd, sandboxed=sandboxed, config_file=shared.config_file
    )
    seq = 0 if plan.binding else resumed_seq(file.header.created_at)  # unbound: loaded
    bus = EventBus(
        session_id, parent_session_id=file.header.parent_session_id, seq=seq,
        redact=file.redact_json, telemetry=shared.telemetry, redact_text=file.redact_text,
    )  # fmt: skip
    context, changes = _tool_context(shared, file, plan, link, policy, bus)
    section = config.settings.permissions
    agent_parts, mcp_warnings, mcp_untrusted = _agent_parts(
        shared, plan, context, messages, link.mcp_servers
    )
    untrusted = config.untrusted_file or mcp_untrusted
    settings = Settings(
        session_id, str(cwd), title, params.provider_env, params.base_url,
        str(untrusted) if untrusted else None,
    )  # fmt: skip
    sandbox = parts.sandbox_warnings(plan.sandbox, plan.tools)
    warnings = [*config.warnings, *plan.notes, *mcp_warnings, *sandbox]
    file.warnings.extend(LoadWarning(line=None, message=text) for text in warnings)
    approver = Approver(policy, bus, section.timeout, context)
    compaction = parts.compaction_settings(config, plan.binding)
    run = RunState(session_id)
    sink = SessionSink(file, bus, changes, run)
    hooks = agent_parts.hooks(sink.emit) if agent_parts.hooks is not None else None
    extra = agent_parts.extra_tools(sink.warn) if agent_parts.extra_tools is not None else None
    step = SessionCompaction(Compactor(compaction, file, sink.emit), run, hooks, sink)
    agent = _agent(agent_parts, sink, approver, step, (extra, hooks))
    return SessionRuntime(
        RuntimeParts(
            settings, file, policy, bus, approver, changes, config, run, sink, step, hooks,
            extra, agent, model_source=model_source,
        )
    )  # fmt: skip


def _tool_context(
    shared: SharedResources,
    file: SessionFile,
    plan: SessionPlan,
    link: SessionLink,
    policy: PermissionPolicy,
    bus: EventBus,
) -> tuple[ToolContext, ChangeRecorder]:
    """The context the session's tools get (what is fixed for the session, and the ports
    they call) and the change recorder among those ports; the agent profiles' skipped files
    join the session's warnings."""
    profiles = None
    if plan.agent_profiles is not None:
        profiles, skipped = plan.agent_profiles
        file.warnings.extend(LoadWarning(line=None, message=text) for text in skipped)
    session_id = file.header.id
    ids = (session_id, file.redact_text)
    env = parts.tool_environment(shared, plan.config, policy, ids, profiles, plan.skills)
    state: dict[str, object] = {}
    changes = ChangeRecorder.for_session(
        plan.cwd, file.path, env.spill_dir, lambda: history_in(state, env.settings)
    )
    ports = ToolPorts(
        files=ClientFiles(session_id, lambda: bus.subscribers.values()),
        changes=changes,
        subagents=link.subagents(session_id) if link.subagents else None,
        path_locks=link.locks or FileLocks(),
        processes=ProcessTable(session_id),
        questions=Questioner(bus, plan.config.settings.permissions.question_timeout),
        language_servers=(
            SessionLanguageServers(shared, plan.language_servers, plan.cwd)
            if plan.language_servers else None
        ),
    )  # fmt: skip
    return parts.tool_context(env, ports, state), changes


def _agent(
    made: AgentParts,
    sink: SessionSink,
    approver: Approver,
    compaction: SessionCompaction,
    around: tuple[SessionTools | None, SessionHooks | None],
) -> Agent:
    """The session's agent, reporting through ``sink`` (which then reports for it)."""
    extra, hooks = around
    agent = Agent(
        provider=made.provider, model=made.model, system_prompt=made.system_prompt,
        toolset=made.toolset, context=made.context, sink=sink.emit, authorize=approver,
        run_tool=made.run_tool, messages=made.messages, max_turns=made.max_turns,
        transform_context=compaction.transform, tool_source=extra, hooks=hooks or NO_HOOKS,
        settle=sink.settle_changes,
    )  # fmt: skip
    sink.serve(agent)
    return agent


def _agent_parts(
    shared: SharedResources,
    plan: SessionPlan,
    context: ToolContext,
    messages: list[Any],
    given: list[ServerDef] | None,
) -> tuple[AgentParts, list[str], Path | None]:
    """The agent's provider, prompt and tools (the MCP servers' among them: ``given``, a
    subagent's, else the configured and the client's), warnings about servers left out,
    and the ``.mcp.json`` left out as untrusted (None: none was)."""
    tools = toolset(plan.tools, context.settings)
    config, params = plan.config, plan.params
    extra_prompt = "\n\n".join(t for t in (config.extra_prompt, plan.extra_prompt) if t)
    section = config.settings
    timeout = section.mcp_startup_timeout
    choice = McpChoice(section.mcp_servers, params.mcp_servers, timeout, given)
    mcp, mcp_warnings, mcp_untrusted = session_mcp_tools(shared, choice, plan.cwd, tools, context)
    binding = plan.binding
    agent = AgentParts(
        provider=binding.provider if binding else UnresolvedProvider(plan.provider),
        model=plan.model,
        system_prompt=build_system_prompt(
            plan.cwd,
            tools.specs,
            override=params.system_prompt or config.system_prompt,
            extra=extra_prompt or None,
            context=plan.project_context,
        ),
        toolset=tools,
        context=context,
        run_tool=run_tool if mcp is None else mcp_runner(run_tool),
        messages=messages,
        max_turns=params.max_turns or config.max_turns or 50,
        extra_tools=mcp,
        hooks=parts.hooks_maker(config, context, plan.cwd),
    )
    return agent, mcp_warnings, mcp_untrusted
