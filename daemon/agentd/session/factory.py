"""Builds session runtimes, new or loaded: a plan from the parameters and the configuration
(:class:`~agentd.session.assembly.SessionPlan`), then the runtime's parts in dependency order
(:func:`agentd.session.assembly.assemble`), each given its collaborators as it is built.

Everything heavy (httpx, the providers, the mock LLM) is imported by this module, on first
session use, never on the daemon's start-up path.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.agent.run import ModelBinding
from agentd.errors import ConfigError, InvalidParams, SessionNotFound
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import SessionNewParams
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry, SettingsEntry
from agentd.session import parts
from agentd.session.assembly import ALONE, SessionLink, SessionPlan, assemble
from agentd.session.binding import ModelSource, bind_model
from agentd.session.knowledge import session_skills, with_configured_tools
from agentd.session.langservers import available
from agentd.session.mcp_setup import check_mcp_params
from agentd.session.runtime import SessionRuntime
from agentd.session.shared import SharedResources, check_sandbox_root, project_dir
from agentd.store import SessionFile, find_session
from agentd.tools import build_tools

if TYPE_CHECKING:
    from agentd.config.load import Config


async def new_session(
    shared: SharedResources, params: SessionNewParams, link: SessionLink | None = None
) -> SessionRuntime:
    """Create a session file (header written at once) and its runtime; a subagent's settings
    (``link.subagent_of``) are fsynced with its first turn rather than at once (it starts
    running right away)."""
    link = link or ALONE
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
    runtime = assemble(shared, file, plan, link, ([], params.title), None)
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
    source = _model_source(shared, plan)
    return assemble(shared, file, plan, link or ALONE, (messages, title), source)


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
) -> SessionPlan:
    """What a runtime is built from; ``resolve`` False (a loaded session) leaves the provider
    to the first model call and accepts a project directory that is gone."""
    cwd = project_dir(params.cwd) if resolve else Path(params.cwd)
    await shared.start_telemetry()  # decided once; its ConfigError before any file is made
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
    mode, note = parts.permission_mode(
        params, config, sandbox, loaded=not resolve, config_file=shared.config_file
    )
    if sandbox == "workspace":
        await asyncio.to_thread(_probe_sandbox, cwd)
    return SessionPlan(
        cwd, config, binding, provider or "", model or "", params, tools, mode, sandbox,
        [note, *skill_notes] if note else skill_notes, extra_prompt,
        agent_profiles=profiles, project_context=context, skills=skills,
        language_servers=servers,
    )  # fmt: skip


def _record_settings(file: SessionFile, plan: SessionPlan) -> None:
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


def _model_source(shared: SharedResources, plan: SessionPlan) -> ModelSource:
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
