"""Builds session runtimes: config, provider, tools, permission policy, prompt and file.

Everything heavy (httpx, the providers, the mock LLM) is imported here, on first session use,
never on the daemon's start-up path.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.config.project_rules import project_rules, save_project_rules
from agentd.errors import ConfigError, InvalidParams, SessionNotFound
from agentd.paths import config_dir
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.session_file import SettingsEntry
from agentd.session.binding import ModelSource, ResolvedModel, UnresolvedProvider
from agentd.session.compaction import CompactionSettings
from agentd.session.mcp_setup import check_mcp_params, mcp_runner, session_mcp_tools
from agentd.session.runtime import SessionRuntime
from agentd.session.settings import AgentParts, Settings
from agentd.session.shared import (
    SharedResources,
    process_registry,
    project_dir,
    spill_root,
)
from agentd.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from agentd.config.load import Config, ModelChoice
    from agentd.hooks.session import SessionHooks
    from agentd.permissions.policy import PermissionPolicy
    from agentd.providers.base import Provider
    from agentd.providers.retry import RetryPolicy
    from agentd.store import SessionFile


class _SessionPlan(msgspec.Struct):
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
    agent_profiles: tuple[str, list[str]] | None = None
    """The task tool's profile lines and the warnings about skipped profile files; None
    without the task tool."""
    project_context: str = ""
    """The context files' text (AGENTS.md…) for the system prompt. Both are project files,
    read in a worker thread (:func:`_project_files`)."""


async def new_session(
    shared: SharedResources,
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

    plan = await _plan(shared, params, config=config)
    plan.extra_prompt = extra_prompt
    file = await asyncio.to_thread(  # in a thread: creating fsyncs the file and its folder
        SessionFile.create,
        shared.session_root,
        cwd=str(plan.cwd),
        session_id=params.session_id,
        secrets=shared.secrets(params.provider_env),
        lock=True,
        subagent_of=subagent_of,
    )
    _record_settings(file, plan, params, durable=subagent_of is None)
    return _assemble(shared, file, plan, [], params.title)


async def load_session(
    shared: SharedResources,
    *,
    session_id: str | None = None,
    path: str | None = None,
    client_env: dict[str, str] | None = None,
) -> SessionRuntime:
    """Open an existing session file, repair it, and build its runtime (its provider resolved
    from ``client_env`` when given, see :func:`provider_environment`)."""
    from agentd.session.bus import resumed_seq
    from agentd.store import find_session

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
    )
    plan = await _plan(shared, params, resolve=False)
    runtime = _assemble(shared, file, plan, messages, title)
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
    shared: SharedResources,
    runtime: SessionRuntime,
    provider: str | None,
    model: str,
    client_env: dict[str, str] | None = None,
) -> None:
    """Point the session at another provider/model from the next LLM call on; a given
    ``client_env`` becomes the session's provider environment."""
    from agentd.providers import make_provider

    config = await asyncio.to_thread(shared.config, Path(runtime.settings.cwd))
    if client_env is not None:
        runtime.settings.provider_env = client_env
        runtime.file.add_secrets(shared.secrets(client_env))
    env = runtime.settings.provider_env
    name = provider or runtime.agent.provider.name
    choice = await shared.choose_model(config, name, model, None, env)
    client = make_provider(choice, shared.http_for(choice), retry=retry_policy(config))
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


async def _plan(
    shared: SharedResources,
    params: SessionNewParams,
    *,
    resolve: bool = True,
    config: Config | None = None,
) -> _SessionPlan:
    """What a runtime is built from; ``resolve`` False (a loaded session) leaves the provider
    to the first model call and accepts a project directory that is gone."""
    from agentd.tools import build_tools

    cwd = project_dir(params.cwd) if resolve else Path(params.cwd)
    if config is None:  # a subagent's is its parent's
        config = await asyncio.to_thread(shared.config, cwd)  # files: off the event loop
    choice = None
    if resolve:
        check_mcp_params(params.mcp_servers)
        choice = await shared.choose_model(
            config, params.provider, params.model, params.base_url, params.provider_env
        )
    provider = choice.provider if choice else params.provider or config.default_provider or ""
    model = choice.model if choice else params.model or config.default_model or ""
    try:
        tools = build_tools(params.tools)
    except ValueError as exc:
        raise InvalidParams(f"{exc} - at `$.tools`") from None
    context, profiles = await asyncio.to_thread(_project_files, cwd, "task" in tools)
    sandbox = params.sandbox or config.settings.sandbox
    mode, note = _mode(params, config, sandbox, loaded=not resolve)
    if sandbox == "workspace":
        await asyncio.to_thread(_probe_sandbox)
    prompt = params.system_prompt or config.system_prompt
    max_turns = params.max_turns or config.max_turns
    env = params.provider_env
    return _SessionPlan(
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
        agent_profiles=profiles,
        project_context=context,
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


def _record_settings(
    file: SessionFile, plan: _SessionPlan, params: SessionNewParams, *, durable: bool = True
) -> None:
    """Title, model and the session's own settings, so a reload behaves the same (the
    effective permission mode and sandbox; the other overrides as given); fsynced when
    ``durable`` (else by the next sync of the file)."""
    from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry

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
    if durable:
        file.sync()


def _shown_path(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _assemble(
    shared: SharedResources,
    file: SessionFile,
    plan: _SessionPlan,
    messages: list[Any],
    title: str | None,
) -> SessionRuntime:
    from agentd.agent.prompt import build_system_prompt
    from agentd.tools import run_tool, toolset

    policy, timeout = _approval(plan, shared.config_file)
    context = _tool_context(shared, file, plan, policy)
    tools = toolset(plan.tools, context.settings)
    extra_prompt = "\n\n".join(t for t in (plan.config.extra_prompt, plan.extra_prompt) if t)
    configured = plan.config.settings
    mcp, mcp_warnings, mcp_untrusted = session_mcp_tools(
        shared, configured.mcp_servers, plan.cwd, plan.mcp_servers, tools, context,
        configured.mcp_startup_timeout,
    )  # fmt: skip
    agent_parts = AgentParts(
        provider=_provider(shared, plan),
        model=plan.model,
        system_prompt=build_system_prompt(
            plan.cwd,
            tools.specs,
            override=plan.system_prompt,
            extra=extra_prompt or None,
            context=plan.project_context,
        ),
        toolset=tools,
        context=context,
        run_tool=run_tool if mcp is None else mcp_runner(run_tool),
        messages=messages,
        max_turns=plan.max_turns or 50,
        extra_tools=mcp,
        hooks=_hooks(plan, context),
    )
    settings = Settings(
        session_id=file.header.id,
        cwd=str(plan.cwd),
        title=title,
        provider_env=plan.provider_env,
        config_warnings=[*plan.config.warnings, *plan.notes, *mcp_warnings],
        untrusted_config=_shown_path(plan.config.untrusted_file or mcp_untrusted),
    )
    _warn_about_config(file, plan.config, plan, mcp_warnings)
    runtime = SessionRuntime(
        settings,
        file,
        policy,
        agent_parts,
        compaction=compaction_settings(plan.config, plan.choice),
        approval_timeout=timeout,
        model_source=None if plan.choice else _model_source(shared, plan),
    )
    runtime.config = plan.config
    return runtime


def _hooks(plan: _SessionPlan, context: ToolContext) -> SessionHooks | None:
    """The ``[hooks]`` of the configuration (the user's, and a trusted project's: an
    untrusted project's were left out, with a warning, when it was loaded); None without
    any, so that nothing of :mod:`agentd.hooks` is imported."""
    settings = plan.config.settings.hooks
    if not any(getattr(settings, event) for event in settings.__struct_fields__):
        return None
    from agentd.hooks.session import session_hooks

    return session_hooks(settings, context, plan.cwd)


def _provider(shared: SharedResources, plan: _SessionPlan) -> Provider:
    """The session's provider, or a stand-in until it is resolved (see :mod:`.binding`)."""
    from agentd.providers import make_provider

    if plan.choice is None:
        return UnresolvedProvider(plan.provider)
    http = shared.http_for(plan.choice)
    return make_provider(plan.choice, http, retry=retry_policy(plan.config))


def _model_source(shared: SharedResources, plan: _SessionPlan) -> ModelSource:
    """Resolves a loaded session's provider from the configuration current at that moment."""
    cwd, base_url = plan.cwd, plan.base_url

    async def resolve(provider: str, model: str, env: dict[str, str] | None) -> ResolvedModel:
        from agentd.providers import make_provider

        if not cwd.is_dir():
            raise ConfigError(
                f"the session's project directory {cwd} does not exist here; the session "
                "can be read, exported and forked, but not run"
            )
        config = await asyncio.to_thread(shared.config, cwd)
        choice = await shared.choose_model(config, provider or None, model or None, base_url, env)
        client = make_provider(choice, shared.http_for(choice), retry=retry_policy(config))
        return ResolvedModel(client, choice.model, choice.context_window)

    return resolve


def _warn_about_config(
    file: SessionFile, config: Config, plan: _SessionPlan, extra: list[str]
) -> None:
    """Config warnings, and an unconfined bash under a workspace sandbox, become
    ``session_warning`` events for every client that watches."""
    from agentd.hardening import landlock_abi
    from agentd.store.tree import LoadWarning
    from agentd.tools.process.landlock import unconfined_warning
    from agentd.tools.process.mountns import unprotected_warning

    texts = [*config.warnings, *plan.notes, *extra]
    if plan.sandbox == "workspace" and "bash" in plan.tools:
        protected = unprotected_warning()  # bubblewrap confines bash on its own
        texts += [protected] if protected else []
        texts += [text for text in [unconfined_warning(landlock_abi())] if text and protected]
    file.warnings.extend(LoadWarning(line=None, message=text) for text in texts)


def _approval(plan: _SessionPlan, config_file: Path | None) -> tuple[PermissionPolicy, float]:
    """The ``[permissions]`` policy (plus ``timeout``) and ``sandbox``: ``"workspace"`` confines
    the file tools to the session's cwd, ``"none"`` (the default) does not. The user's
    ``[[project_rules]]`` of the session's folder come after ``[permissions]``' rules; an
    "always in this project" answer appends to the user's ``config_file`` (default:
    ``$XDG_CONFIG_HOME/agentd/config.toml``)."""
    from agentd.permissions.policy import PermissionPolicy

    section = plan.config.settings.permissions
    sandboxed = plan.sandbox == "workspace"
    allow, deny = project_rules(plan.config.settings, plan.cwd)
    policy = PermissionPolicy(
        plan.mode,
        [*section.allow, *allow],
        [*section.deny, *deny],
        workspace=plan.cwd if sandboxed else None,
        cwd=plan.cwd,
        allow_dangerous=section.allow_dangerous,
    )
    policy.allow_auto_without_sandbox = section.allow_auto_without_sandbox
    user_file = config_file or config_dir() / "config.toml"
    policy.keep_in_project = partial(save_project_rules, user_file, plan.cwd)
    return policy, section.timeout


def _tool_context(
    shared: SharedResources, file: SessionFile, plan: _SessionPlan, policy: PermissionPolicy
) -> ToolContext:
    """The ``[tools]`` settings, the credential names bash must not see, the spill dir."""
    from agentd.store.tree import LoadWarning
    from agentd.tools.settings import tool_settings

    settings = tool_settings(plan.config.settings.tools)
    if plan.agent_profiles is not None:
        settings.agent_profiles, warnings = plan.agent_profiles
        file.warnings.extend(LoadWarning(line=None, message=text) for text in warnings)
    settings.secret_env = sorted({*shared.secret_names(), *settings.secret_env})
    settings.permission_policy = policy
    settings.process_registry = process_registry()
    return ToolContext(
        cwd=plan.cwd,
        session_id=file.header.id,
        workspace=policy.workspace,
        spill_dir=spill_root() / file.header.id,
        redact=file.redact_text,
        settings=settings,
    )


def _project_files(cwd: Path, task: bool) -> tuple[str, tuple[str, list[str]] | None]:
    """What a session reads of its project (run in a worker thread): the context files'
    text and, with the ``task`` tool (``task``), the agent profiles it offers (its
    description's list) and warnings about skipped profile files."""
    from agentd.agent.prompt import project_context
    from agentd.config.agents import load_profiles
    from agentd.tools.task import render_profiles

    context = project_context(cwd)
    if not task:
        return context, None
    profiles, warnings = load_profiles(cwd)
    lines = render_profiles([(p.name, p.description) for p in profiles.values()])
    return context, (lines, warnings)
