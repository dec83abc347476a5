"""Builds session runtimes: config, provider, tools, permission policy, prompt and file.

Everything heavy (httpx, the providers, the mock LLM) is imported here, on first session use,
never on the daemon's start-up path.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.errors import ConfigError, InvalidParams, SessionNotFound
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.session_file import SettingsEntry
from agentd.session.binding import ModelSource, ResolvedModel, UnresolvedProvider
from agentd.session.compaction import CompactionSettings
from agentd.session.runtime import SessionRuntime
from agentd.session.settings import AgentParts, SessionTools, Settings
from agentd.session.shared import (
    Services,
    process_registry,
    project_dir,
    spill_root,
)
from agentd.tools.base import Tool, ToolContext, Toolset

if TYPE_CHECKING:
    from agentd.agent.scheduling import ToolRunner
    from agentd.config.load import Config, ModelChoice
    from agentd.permissions.policy import PermissionPolicy
    from agentd.providers.base import Provider
    from agentd.providers.retry import RetryPolicy
    from agentd.store import SessionFile


class _Parts(msgspec.Struct):
    """What a runtime is built from, whether the session is new or loaded."""

    cwd: Path
    config: Config
    choice: ModelChoice | None
    """None for a loaded session: its provider is resolved at the first model call."""
    provider: str
    model: str
    base_url: str | None
    tools: dict[str, Tool]
    mode: str
    sandbox: str
    system_prompt: str | None
    max_turns: int | None
    provider_env: dict[str, str] | None
    notes: list[str] = msgspec.field(default_factory=list)
    """Warnings about how the session's settings were chosen."""
    extra_prompt: str | None = None
    """Added to the system prompt after the instructions (a subagent's instructions)."""
    mcp_servers: list[McpServerParam] | None = None


async def new_session(
    services: Services,
    params: SessionNewParams,
    *,
    subagent_of: tuple[str, str] | None = None,
    extra_prompt: str | None = None,
    config: Config | None = None,
) -> SessionRuntime:
    """Create a session file (header written at once) and its runtime; ``subagent_of``
    (parent session id, ``task`` call id) links a subagent's session to its parent, whose
    ``config`` it reuses (read fresh when None), and its settings are fsynced with its first
    turn rather than at once (it starts running right away)."""
    from agentd.store import SessionFile

    parts = await _parts(services, params, config=config)
    parts.extra_prompt = extra_prompt
    file = await asyncio.to_thread(  # in a thread: creating fsyncs the file and its folder
        SessionFile.create,
        services.session_root,
        cwd=str(parts.cwd),
        session_id=params.session_id,
        secrets=services.secrets(params.provider_env),
        lock=True,
        subagent_of=subagent_of,
    )
    _record_settings(file, parts, params, durable=subagent_of is None)
    return _assemble(services, file, parts, [], params.title)


async def load_session(
    services: Services,
    *,
    session_id: str | None = None,
    path: str | None = None,
    client_env: dict[str, str] | None = None,
) -> SessionRuntime:
    """Open an existing session file, repair it, and build its runtime (its provider resolved
    from ``client_env`` when given, see :func:`provider_environment`)."""
    from agentd.session.bus import resumed_seq
    from agentd.store import find_session

    file_path = Path(path) if path else find_session(services.session_root, session_id or "")
    if file_path is None or not file_path.is_file():
        raise SessionNotFound(f"no session {session_id or path!r} (see session/list)")
    # in a thread: a big file takes a while to parse, and the event loop must stay free
    secrets = services.secrets(client_env)
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
    )
    parts = await _parts(services, params, resolve=False)
    runtime = _assemble(services, file, parts, messages, title)
    runtime.bus.seq = resumed_seq(file.header.created_at)
    return runtime


def _read_session(path: Path, secrets: Any) -> tuple[Any, list[Any], str | None]:
    """Open (locked), repair and read a session file: the slow part of a load, run in a
    thread. The objects it built are then frozen out of the cyclic garbage collector, so
    collections on the event loop never walk a big session's millions of objects."""
    import gc

    from agentd.store import SessionFile

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
    services: Services,
    runtime: SessionRuntime,
    provider: str | None,
    model: str,
    client_env: dict[str, str] | None = None,
) -> None:
    """Point the session at another provider/model from the next LLM call on; a given
    ``client_env`` becomes the session's provider environment."""
    from agentd.providers import make_provider

    config = await asyncio.to_thread(services.config, Path(runtime.settings.cwd))
    if client_env is not None:
        runtime.settings.provider_env = client_env
        runtime.file.add_secrets(services.secrets(client_env))
    env = runtime.settings.provider_env
    name = provider or runtime.agent.provider.name
    choice = await services.choose_model(config, name, model, None, env)
    client = make_provider(choice, services.http_for(choice), retry=retry_policy(config))
    runtime.use_model(client, choice.model)


def retry_policy(config: Config) -> RetryPolicy:
    """The ``[retry]`` section: ``max_attempts``, ``base_delay_ms``, ``max_delay_ms``."""
    from agentd.providers.retry import RetryPolicy

    section = config.settings.retry
    return RetryPolicy(
        max_attempts=section.max_attempts,
        base_delay=section.base_delay_ms / 1000,
        max_delay=section.max_delay_ms / 1000,
    )


def compaction_settings(config: Config, choice: ModelChoice | None) -> CompactionSettings:
    """The ``[compaction]`` section: ``keep_tokens``, ``reserve_tokens``, ``context_window``."""
    section = config.settings.compaction
    return CompactionSettings(
        context_window=section.context_window or (choice.context_window if choice else None),
        keep_tokens=section.keep_tokens,
        reserve_tokens=section.reserve_tokens,
    )


async def _parts(
    services: Services,
    params: SessionNewParams,
    *,
    resolve: bool = True,
    config: Config | None = None,
) -> _Parts:
    """What a runtime is built from; ``resolve`` False (a loaded session) leaves the provider
    to the first model call and accepts a project directory that is gone."""
    from agentd.tools import build_tools

    cwd = project_dir(params.cwd) if resolve else Path(params.cwd)
    if config is None:  # a subagent's is its parent's
        config = await asyncio.to_thread(services.config, cwd)  # files: off the event loop
    choice = None
    if resolve:
        _check_mcp_params(params.mcp_servers)
        choice = await services.choose_model(
            config, params.provider, params.model, params.base_url, params.provider_env
        )
    provider = choice.provider if choice else params.provider or config.default_provider or ""
    model = choice.model if choice else params.model or config.default_model or ""
    try:
        tools = build_tools(params.tools)
    except ValueError as exc:
        raise InvalidParams(f"{exc} - at `$.tools`") from None
    sandbox = params.sandbox or config.settings.sandbox
    mode, note = _mode(params, config, sandbox, loaded=not resolve)
    if sandbox == "workspace":
        await asyncio.to_thread(_probe_sandbox)
    prompt = params.system_prompt or config.system_prompt
    max_turns = params.max_turns or config.max_turns
    env = params.provider_env
    return _Parts(
        cwd,
        config,
        choice,
        provider,
        model,
        params.base_url,
        tools,
        mode,
        sandbox,
        prompt,
        max_turns,
        env,
        [note] if note else [],
        mcp_servers=params.mcp_servers,
    )


def _probe_sandbox() -> None:
    """bubblewrap's one probe run per daemon (:func:`agentd.tools.process.mountns.available`),
    in a worker thread, before the session's warnings and bash calls read its answer."""
    from agentd.tools.process import mountns

    mountns.available()


def _mode(
    params: SessionNewParams, config: Config, sandbox: str, *, loaded: bool
) -> tuple[str, str | None]:
    """The session's permission mode (default ``ask``) and a warning when ``auto`` could not
    apply: ``auto`` needs the workspace sandbox unless the configuration opts in
    (:func:`~agentd.permissions.policy.unsandboxed_auto`). A client asking for it gets
    InvalidParams; from the configuration, or a session saved before, it becomes ``ask``."""
    from agentd.permissions.policy import unsandboxed_auto

    mode = params.permission_mode or config.permission_mode or "ask"
    allowed = config.settings.permissions.allow_auto_without_sandbox
    problem = unsandboxed_auto(mode, sandboxed=sandbox == "workspace", allowed=allowed)
    if problem is None:
        return mode, None
    if params.permission_mode is not None and not loaded:
        raise InvalidParams(problem)
    return (
        "ask",
        f"This session asks before mutating tools instead of running in auto mode: {problem}",
    )


def _check_mcp_params(servers: list[McpServerParam] | None) -> None:
    """InvalidParams for an ``mcpServers`` entry that cannot be started."""
    from agentd.mcp.servers import from_param

    for index, server in enumerate(servers or ()):
        try:
            from_param(server)
        except ValueError as exc:
            raise InvalidParams(f"{exc} - at `$.mcpServers[{index}]`") from None


def _record_settings(
    file: SessionFile, parts: _Parts, params: SessionNewParams, *, durable: bool = True
) -> None:
    """Title, model and the session's own settings, so a reload behaves the same (the
    effective permission mode and sandbox; the other overrides as given); fsynced when
    ``durable`` (else by the next sync of the file)."""
    from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry

    if params.title:
        file.append(SessionInfoEntry(title=params.title))
    file.append(ModelChangeEntry(provider=parts.provider, model=parts.model))
    file.append(
        SettingsEntry(
            permission_mode=parts.mode,
            sandbox=parts.sandbox,
            tools=params.tools,
            max_turns=params.max_turns,
            system_prompt=params.system_prompt,
            base_url=params.base_url,
        )
    )
    if durable:
        file.sync()


def _assemble(
    services: Services, file: SessionFile, parts: _Parts, messages: list[Any], title: str | None
) -> SessionRuntime:
    from agentd.agent.prompt import build_system_prompt
    from agentd.tools import run_tool, toolset

    policy, timeout = _approval(parts)
    context = _tool_context(services, file, parts, policy)
    tools = toolset(parts.tools, context.settings)
    extra_prompt = "\n\n".join(t for t in (parts.config.extra_prompt, parts.extra_prompt) if t)
    mcp, mcp_warnings = _mcp_servers(services, parts, tools, context)
    agent_parts = AgentParts(
        provider=_provider(services, parts),
        model=parts.model,
        system_prompt=build_system_prompt(
            parts.cwd, tools.specs, override=parts.system_prompt, extra=extra_prompt or None
        ),
        toolset=tools,
        context=context,
        run_tool=run_tool if mcp is None else _mcp_runner(run_tool),
        messages=messages,
        max_turns=parts.max_turns or 50,
        extra_tools=mcp,
    )
    settings = Settings(
        session_id=file.header.id,
        cwd=str(parts.cwd),
        title=title,
        provider_env=parts.provider_env,
        config_warnings=[*parts.config.warnings, *parts.notes, *mcp_warnings],
        untrusted_config=str(parts.config.untrusted_file) if parts.config.untrusted_file else None,
    )
    _warn_about_config(file, parts.config, parts, mcp_warnings)
    runtime = SessionRuntime(
        settings,
        file,
        policy,
        agent_parts,
        compaction=compaction_settings(parts.config, parts.choice),
        approval_timeout=timeout,
        model_source=None if parts.choice else _model_source(services, parts),
    )
    runtime.config = parts.config
    return runtime


def _provider(services: Services, parts: _Parts) -> Provider:
    """The session's provider, or a stand-in until it is resolved (see :mod:`.binding`)."""
    from agentd.providers import make_provider

    if parts.choice is None:
        return UnresolvedProvider(parts.provider)
    http = services.http_for(parts.choice)
    return make_provider(parts.choice, http, retry=retry_policy(parts.config))


def _model_source(services: Services, parts: _Parts) -> ModelSource:
    """Resolves a loaded session's provider from the configuration current at that moment."""
    cwd, base_url = parts.cwd, parts.base_url

    async def resolve(provider: str, model: str, env: dict[str, str] | None) -> ResolvedModel:
        from agentd.providers import make_provider

        if not cwd.is_dir():
            raise ConfigError(
                f"the session's project directory {cwd} does not exist here; the session "
                "can be read, exported and forked, but not run"
            )
        config = await asyncio.to_thread(services.config, cwd)
        choice = await services.choose_model(config, provider or None, model or None, base_url, env)
        client = make_provider(choice, services.http_for(choice), retry=retry_policy(config))
        return ResolvedModel(client, choice.model, choice.context_window)

    return resolve


def _mcp_servers(
    services: Services, parts: _Parts, builtin: Toolset, context: ToolContext
) -> tuple[SessionTools | None, list[str]]:
    """The session's MCP servers (None when it has none: then nothing of MCP is imported)
    and warnings about those left out (an untrusted ``.mcp.json``)."""
    from agentd.mcp.servers import gather

    found = gather(parts.config.settings.mcp_servers, parts.cwd, parts.mcp_servers)
    if not found.servers:
        return None, found.warnings
    from agentd.mcp.session import McpSession

    pool = services.mcp_pool()
    return McpSession(pool, found.servers, parts.cwd, builtin, context.settings), found.warnings


def attach_mcp_servers(
    services: Services, runtime: SessionRuntime, servers: list[McpServerParam]
) -> None:
    """Add ``servers`` (by name) to a loaded session's MCP servers, from its next run on
    (``session/load`` with ``mcpServers``); InvalidParams for a bad entry."""
    from agentd.mcp.servers import from_param
    from agentd.mcp.session import McpSession

    _check_mcp_params(servers)
    definitions = [from_param(server) for server in servers]
    current = runtime.extra_tools
    if isinstance(current, McpSession):
        current.add(definitions)
        return
    agent = runtime.agent
    cwd = Path(runtime.settings.cwd)
    extra = McpSession(services.mcp_pool(), definitions, cwd, agent.toolset, agent.context.settings)
    extra.warn = runtime.extra_warn
    runtime.extra_tools = agent.tool_source = extra
    agent.run_tool = _mcp_runner(agent.run_tool)


def _mcp_runner(builtin: ToolRunner) -> ToolRunner:
    from agentd.mcp.tools import runner

    return runner(builtin)


def _warn_about_config(file: SessionFile, config: Config, parts: _Parts, extra: list[str]) -> None:
    """Config warnings, and an unconfined bash under a workspace sandbox, become
    ``session_warning`` events for every client that watches."""
    from agentd.hardening import landlock_abi
    from agentd.store.tree import LoadWarning
    from agentd.tools.process.landlock import unconfined_warning
    from agentd.tools.process.mountns import unprotected_warning

    texts = [*config.warnings, *parts.notes, *extra]
    if parts.sandbox == "workspace" and "bash" in parts.tools:
        protected = unprotected_warning()  # bubblewrap confines bash on its own
        texts += [protected] if protected else []
        texts += [text for text in [unconfined_warning(landlock_abi())] if text and protected]
    file.warnings.extend(LoadWarning(line=None, message=text) for text in texts)


def _approval(parts: _Parts) -> tuple[PermissionPolicy, float]:
    """The ``[permissions]`` policy (plus ``timeout``) and ``sandbox``: ``"workspace"`` confines
    the file tools to the session's cwd, ``"none"`` (the default) does not."""
    from agentd.permissions.policy import PermissionPolicy

    section = parts.config.settings.permissions
    sandboxed = parts.sandbox == "workspace"
    policy = PermissionPolicy(
        parts.mode,
        section.allow,
        section.deny,
        workspace=parts.cwd if sandboxed else None,
        cwd=parts.cwd,
        allow_dangerous=section.allow_dangerous,
    )
    policy.allow_auto_without_sandbox = section.allow_auto_without_sandbox
    return policy, section.timeout


def _tool_context(
    services: Services, file: SessionFile, parts: _Parts, policy: PermissionPolicy
) -> ToolContext:
    """The ``[tools]`` settings, the credential names bash must not see, the spill dir."""
    from agentd.tools.settings import tool_settings

    settings = tool_settings(parts.config.settings.tools)
    if "task" in parts.tools:
        settings.agent_profiles = _profile_lines(file, parts.cwd)
    settings.secret_env = sorted({*services.secret_names(), *settings.secret_env})
    settings.permission_policy = policy
    settings.process_registry = process_registry()
    return ToolContext(
        cwd=parts.cwd,
        session_id=file.header.id,
        workspace=policy.workspace,
        spill_dir=spill_root() / file.header.id,
        redact=file.redact_text,
        settings=settings,
    )


def _profile_lines(file: SessionFile, cwd: Path) -> str:
    """The agent profiles the ``task`` tool offers (its description's list); skipped
    profile files become load warnings of the session."""
    from agentd.config.agents import load_profiles
    from agentd.store.tree import LoadWarning
    from agentd.tools.task import render_profiles

    profiles, warnings = load_profiles(cwd)
    file.warnings.extend(LoadWarning(line=None, message=text) for text in warnings)
    return render_profiles([(p.name, p.description) for p in profiles.values()])
