"""Builds session runtimes, new or loaded: a plan from the parameters and the configuration,
then the runtime's parts in dependency order (:func:`_assemble`), each given its collaborators
as it is built; nothing is attached to a part afterwards.

Everything heavy (httpx, the providers, the mock LLM) is imported by this module, on first
session use, never on the daemon's start-up path.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.agent.prompt import build_system_prompt
from agentd.agent.run import ModelBinding
from agentd.errors import ConfigError, InvalidParams, SessionNotFound
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry, SettingsEntry
from agentd.protocol.skills import SkillInfo
from agentd.session import parts
from agentd.session.approval import Approver
from agentd.session.binding import ModelSource, UnresolvedProvider, bind_model
from agentd.session.bus import EventBus, resumed_seq
from agentd.session.changes import ChangeRecorder
from agentd.session.files import ClientFiles
from agentd.session.knowledge import session_skills, with_configured_tools
from agentd.session.langservers import SessionLanguageServers, available
from agentd.session.mcp_setup import check_mcp_params, mcp_runner, session_mcp_tools
from agentd.session.runtime import SessionRuntime
from agentd.session.settings import AgentParts, RuntimeParts, Settings
from agentd.session.shared import SharedResources, check_sandbox_root, project_dir
from agentd.store import SessionFile, find_session
from agentd.store.tree import LoadWarning
from agentd.tools import build_tools, run_tool, toolset
from agentd.tools.base import PathLocks, Subagents, Tool, ToolContext, ToolPorts
from agentd.tools.files.history import history_in
from agentd.tools.files.locks import FileLocks

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentd.config.load import Config


class SessionLink(msgspec.Struct, frozen=True):
    """How a session joins the daemon: ``subagent_of`` (parent session id, ``task`` call id)
    for a subagent's, its ``extra_prompt`` and its parent's ``config`` (reused); the family's
    per-file ``locks`` (None: its own); ``subagents``, the ``task`` tool's port for a session
    id (None: no subagents)."""

    subagent_of: tuple[str, str] | None = None
    extra_prompt: str | None = None
    config: Config | None = None
    locks: PathLocks | None = None
    subagents: Callable[[str], Subagents] | None = None


_ALONE = SessionLink()
"""A session of its own: no parent, no subagents."""


class _SessionPlan(msgspec.Struct):
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


async def new_session(
    shared: SharedResources, params: SessionNewParams, link: SessionLink | None = None
) -> SessionRuntime:
    """Create a session file (header written at once) and its runtime; a subagent's settings
    (``link.subagent_of``) are fsynced with its first turn rather than at once (it starts
    running right away)."""
    link = link or _ALONE
    plan = await _plan(shared, params, config=link.config, extra_prompt=link.extra_prompt)
    file = await asyncio.to_thread(  # in a thread: creating fsyncs the file and its folder
        SessionFile.create,
        shared.session_root,
        cwd=str(plan.cwd),
        session_id=params.session_id,
        secrets=shared.secrets(params.provider_env),
        lock=True,
        subagent_of=link.subagent_of,
    )
    _record_settings(file, plan)
    runtime = _assemble(shared, file, plan, link, ([], params.title))
    if link.subagent_of is None:
        await runtime.durable()
    return runtime


async def load_session(
    shared: SharedResources,
    *,
    session_id: str | None = None,
    path: str | None = None,
    client_env: dict[str, str] | None = None,
    mcp_servers: list[McpServerParam] | None = None,
    link: SessionLink | None = None,
) -> SessionRuntime:
    """Open an existing session file, repair it, and build its runtime (its provider resolved
    from ``client_env`` when given, see :func:`provider_environment`), with ``mcp_servers``
    besides the configured ones."""
    file_path = Path(path) if path else find_session(shared.session_root, session_id or "")
    if file_path is None or not file_path.is_file():
        raise SessionNotFound(f"no session {session_id or path!r} (see session/list)")
    # in a thread: a big file takes a while to parse, and the event loop must stay free
    secrets = shared.secrets(client_env)
    file, messages, title = await asyncio.to_thread(_read_session, file_path, secrets)
    provider, model = file.model() or (None, None)
    saved = file.settings() or SettingsEntry()
    params = SessionNewParams(
        cwd=file.header.cwd,
        provider=provider,
        model=model,
        permission_mode=saved.permission_mode,  # type: ignore[arg-type]
        sandbox=saved.sandbox,  # type: ignore[arg-type]
        tools=saved.tools,
        max_turns=saved.max_turns,
        system_prompt=saved.system_prompt,
        base_url=saved.base_url,
        provider_env=client_env,
        mcp_servers=mcp_servers,
    )
    plan = await _plan(shared, params, resolve=False)
    return _assemble(shared, file, plan, link or _ALONE, (messages, title))


def _read_session(path: Path, secrets: Any) -> tuple[Any, list[Any], str | None]:
    """Open (locked), repair and read a session file: the slow part of a load, run in a
    thread. The objects it built are then frozen out of the cyclic garbage collector, so
    collections on the event loop never walk a big session's millions of objects."""
    enabled = gc.isenabled()
    gc.disable()  # a collection here would hold the GIL, so the event loop, for long
    try:
        file = SessionFile.open(path, secrets=secrets, lock=True)
        try:
            file.repair_interrupted()
            messages, title = file.messages(), file.title()
        except BaseException:
            file.close()
            raise
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    return file, messages, title


async def switch_model(
    shared: SharedResources,
    runtime: SessionRuntime,
    provider: str | None,
    model: str,
    client_env: dict[str, str] | None = None,
) -> None:
    """Point the session at another provider/model from the next LLM call on (at the
    session's base URL on the same provider); a given ``client_env`` becomes the session's
    provider environment."""
    settings = runtime.settings
    env = settings.provider_env if client_env is None else client_env
    name = provider or runtime.agent.provider.name
    base_url = settings.base_url if name == runtime.agent.provider.name else None
    binding = await bind_model(shared, Path(settings.cwd), name, model, base_url, env)
    if client_env is not None:
        runtime.file.add_secrets(shared.secrets(client_env))
    runtime.use_model(binding, provider_env=env, base_url=base_url)


async def _plan(
    shared: SharedResources,
    params: SessionNewParams,
    *,
    resolve: bool = True,
    config: Config | None = None,
    extra_prompt: str | None = None,
) -> _SessionPlan:
    """What a runtime is built from; ``resolve`` False (a loaded session) leaves the provider
    to the first model call and accepts a project directory that is gone."""
    cwd = project_dir(params.cwd) if resolve else Path(params.cwd)
    if config is None:  # a subagent's is its parent's
        config = await asyncio.to_thread(shared.config, cwd)  # files: off the event loop
    check_mcp_params(params.mcp_servers)
    binding = None
    if resolve:
        binding = await bind_model(
            shared, cwd, params.provider, params.model, params.base_url, params.provider_env,
            config=config,
        )  # fmt: skip
    provider = binding.provider.name if binding else params.provider or config.default_provider
    model = binding.model if binding else params.model or config.default_model
    skills, skill_notes = await session_skills(cwd)
    servers = await asyncio.to_thread(available, config.settings.language_servers)
    try:
        tools = with_configured_tools(
            build_tools(params.tools), config, params.tools, skills, lsp=bool(servers)
        )
    except ValueError as exc:
        raise InvalidParams(f"{exc} - at `$.tools`") from None
    context, profiles = await asyncio.to_thread(parts.project_files, cwd, "task" in tools)
    sandbox = params.sandbox or config.settings.sandbox
    mode, note = parts.permission_mode(params, config, sandbox, loaded=not resolve)
    if sandbox == "workspace":
        await asyncio.to_thread(_probe_sandbox, cwd)
    return _SessionPlan(
        cwd, config, binding, provider or "", model or "", params, tools, mode, sandbox,
        [note, *skill_notes] if note else skill_notes, extra_prompt,
        agent_profiles=profiles, project_context=context, skills=skills,
        language_servers=servers,
    )  # fmt: skip


def _record_settings(file: SessionFile, plan: _SessionPlan) -> None:
    """Title, model and the session's own settings, so a reload behaves the same (the
    effective permission mode and sandbox; the other overrides as given)."""
    params = plan.params
    if params.title:
        file.append(SessionInfoEntry(title=params.title))
    file.append(ModelChangeEntry(provider=plan.provider, model=plan.model))
    file.append(
        SettingsEntry(
            permission_mode=plan.mode,
            sandbox=plan.sandbox,
            tools=params.tools,
            max_turns=params.max_turns,
            system_prompt=params.system_prompt,
            base_url=params.base_url,
        )
    )


def _assemble(
    shared: SharedResources,
    file: SessionFile,
    plan: _SessionPlan,
    link: SessionLink,
    history: tuple[list[Any], str | None],
) -> SessionRuntime:
    """The runtime's parts, each built once from the ones before it, then the runtime."""
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
        redact=file.redact_json,
    )  # fmt: skip
    profiles = None
    if plan.agent_profiles is not None:
        profiles, skipped = plan.agent_profiles
        file.warnings.extend(LoadWarning(line=None, message=text) for text in skipped)
    ids = (session_id, file.redact_text)
    env = parts.tool_environment(shared, config, policy, ids, profiles, plan.skills)
    state: dict[str, object] = {}
    changes = ChangeRecorder.for_session(
        cwd, file.path, env.spill_dir, lambda: history_in(state, env.settings)
    )
    ports = ToolPorts(
        files=ClientFiles(session_id, lambda: bus.subscribers.values()),
        changes=changes,
        subagents=link.subagents(session_id) if link.subagents else None,
        path_locks=link.locks or FileLocks(),
        language_servers=(
            SessionLanguageServers(shared, plan.language_servers, cwd)
            if plan.language_servers else None
        ),
    )  # fmt: skip
    context = parts.tool_context(env, ports, state)
    section = config.settings.permissions
    agent, mcp_warnings, mcp_untrusted = _agent_parts(shared, plan, context, messages)
    untrusted = config.untrusted_file or mcp_untrusted
    settings = Settings(
        session_id, str(cwd), title, params.provider_env, params.base_url,
        str(untrusted) if untrusted else None,
    )  # fmt: skip
    sandbox = parts.sandbox_warnings(plan.sandbox, plan.tools)
    warnings = [*config.warnings, *plan.notes, *mcp_warnings, *sandbox]
    file.warnings.extend(LoadWarning(line=None, message=text) for text in warnings)
    return SessionRuntime(
        RuntimeParts(
            settings, file, policy, bus, Approver(policy, bus, section.timeout, context),
            changes, parts.compaction_settings(config, plan.binding), config, agent,
            model_source=None if plan.binding else _model_source(shared, plan),
        )
    )  # fmt: skip


def _agent_parts(
    shared: SharedResources, plan: _SessionPlan, context: ToolContext, messages: list[Any]
) -> tuple[AgentParts, list[str], Path | None]:
    """The agent's provider, prompt and tools (the MCP servers' among them), warnings about
    servers left out, and the ``.mcp.json`` left out as untrusted (None: none was)."""
    tools = toolset(plan.tools, context.settings)
    config, params = plan.config, plan.params
    extra_prompt = "\n\n".join(t for t in (config.extra_prompt, plan.extra_prompt) if t)
    mcp, mcp_warnings, mcp_untrusted = session_mcp_tools(
        shared, config.settings.mcp_servers, plan.cwd, params.mcp_servers, tools, context,
        config.settings.mcp_startup_timeout,
    )  # fmt: skip
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


def _model_source(shared: SharedResources, plan: _SessionPlan) -> ModelSource:
    """Resolves a loaded session's provider from the configuration current at that moment."""
    cwd, base_url = plan.cwd, plan.params.base_url

    async def resolve(provider: str, model: str, env: dict[str, str] | None) -> ModelBinding:
        if not cwd.is_dir():
            raise ConfigError(
                f"the session's project directory {cwd} does not exist here; the session "
                "can be read, exported and forked, but not run"
            )
        return await bind_model(shared, cwd, provider or None, model or None, base_url, env)

    return resolve


def _probe_sandbox(cwd: Path) -> None:
    """In a worker thread: InvalidParams for a sandbox root that covers far more than one
    project (:func:`~agentd.session.shared.check_sandbox_root`), then bubblewrap's one probe
    run per daemon (:func:`~agentd.session.parts.probe_sandbox`)."""
    check_sandbox_root(cwd)
    parts.probe_sandbox()
