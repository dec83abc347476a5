"""Builds session runtimes: config, provider, tools, permission policy, prompt and file.

Everything heavy (httpx, the providers, the mock LLM) is imported here, on first session use,
never on the daemon's start-up path.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.errors import ConfigError, InvalidParams, SessionNotFound
from agentd.protocol.methods import ModelsListResult, SessionNewParams
from agentd.protocol.provider_env import is_provider_variable, provider_variables
from agentd.protocol.session_file import SettingsEntry
from agentd.server.approval import DEFAULT_TIMEOUT
from agentd.server.binding import ModelSource, ResolvedModel, UnresolvedProvider
from agentd.server.compaction import CompactionSettings
from agentd.server.runtime import AgentParts, SessionRuntime, Settings
from agentd.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    import httpx

    from agentd.config import Config, ModelChoice
    from agentd.permissions import PermissionPolicy
    from agentd.providers.base import Provider
    from agentd.providers.retry import RetryPolicy
    from agentd.store import SessionFile

MOCK = "mock"


class Services:
    """Daemon-wide things sessions share: the store root, config, one HTTP client, secrets.

    Created once per daemon, on first use; creating it starts a background thread that
    deletes old bash spill files (see :mod:`agentd.tools.spill`).
    """

    def __init__(self, session_dir: Path | None = None, config_file: Path | None = None) -> None:
        from agentd.store import default_root
        from agentd.tools.spill import prune

        self.session_root = Path(session_dir) if session_dir else default_root()
        self.config_file = Path(config_file) if config_file else None
        self._http: httpx.AsyncClient | None = None
        self._mock_http: httpx.AsyncClient | None = None
        args = (spill_root(),)
        threading.Thread(target=prune, args=args, name="spill-prune", daemon=True).start()

    def config(self, cwd: Path) -> Config:
        """The merged configuration for a session in ``cwd`` (read fresh each time)."""
        from agentd.config import load_config

        return load_config(cwd, self.config_file)

    def http(self) -> httpx.AsyncClient:
        """The shared HTTP client (connection pooling across sessions)."""
        if self._http is None:
            import httpx

            timeout = httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=30.0)
            self._http = httpx.AsyncClient(timeout=timeout, trust_env=False)
        return self._http

    def secret_names(self) -> set[str]:
        """Names of the daemon's credential env vars (scrubbed from bash's environment)."""
        from agentd.credentials import credential_env_names

        return credential_env_names(os.environ)

    def secrets(self, client_env: dict[str, str] | None = None) -> set[str]:
        """Values of the daemon's credential env vars and of the client's provider variables
        (redacted from session files)."""
        values = {os.environ[n] for n in self.secret_names() if os.environ.get(n)}
        values |= set((client_env or {}).values())
        return {value for value in values if len(value) >= 8}

    def models(
        self, cwd: str | None = None, client_env: dict[str, str] | None = None
    ) -> ModelsListResult:
        """``models/list`` for the configuration of ``cwd`` (default: the daemon's own)."""
        from agentd.models import list_models

        config = self.config(project_dir(cwd) if cwd is not None else Path.cwd())
        return ModelsListResult(
            models=list_models(config, provider_environment(client_env)),
            default_provider=config.default_provider,
            default_model=config.default_model,
        )

    async def choose_model(
        self,
        config: Config,
        provider: str | None,
        model: str | None,
        base_url: str | None,
        client_env: dict[str, str] | None = None,
    ) -> ModelChoice:
        """Resolve provider/model (starting the in-process mock LLM for ``mock``) from the
        client's provider variables when given, else the daemon's. A missing key or provider
        says which process's environment was looked at."""
        from agentd.models import MissingCredentials, resolve_model

        if provider == MOCK or (provider is None and config.default_provider == MOCK):
            from agentd.mockllm.transport import mock_scenarios

            mock_scenarios()  # a bad scenarios file fails here, not at the first request
        try:
            return resolve_model(
                config, provider, model, base_url, provider_environment(client_env)
            )
        except MissingCredentials as exc:
            raise MissingCredentials(f"{exc.message}\n{_looked_at(client_env)}") from None

    def http_for(self, choice: ModelChoice) -> httpx.AsyncClient:
        """The HTTP client for ``choice``: the in-process mock LLM's for the mock's base URL
        (:mod:`agentd.mockllm.transport`), else the shared one."""
        from agentd.config import MOCK_BASE_URL

        if choice.base_url != MOCK_BASE_URL:
            return self.http()
        if self._mock_http is None:
            import httpx

            from agentd.mockllm.transport import MockTransport

            self._mock_http = httpx.AsyncClient(transport=MockTransport(), trust_env=False)
        return self._mock_http

    async def close(self) -> None:
        """Close the HTTP clients, if they were created."""
        for client in (self._http, self._mock_http):
            if client is not None:
                await client.aclose()
        self._http = self._mock_http = None


def provider_environment(client_env: dict[str, str] | None) -> Mapping[str, str]:
    """The environment providers are resolved from: the daemon's, with its provider variables
    replaced by the client's when the client sent them (see :mod:`agentd.protocol.provider_env`)."""
    if client_env is None:
        return os.environ
    own = {name: value for name, value in os.environ.items() if not is_provider_variable(name)}
    return own | provider_variables(client_env)


def _looked_at(client_env: dict[str, str] | None) -> str:
    if client_env is not None:
        return "(provider variables were read from the client's environment, sent with the request)"
    return (
        f"(provider variables were read from the daemon's environment: agentd pid {os.getpid()}, "
        "as it was when the daemon started)"
    )


@dataclass
class _Parts:
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


async def new_session(services: Services, params: SessionNewParams) -> SessionRuntime:
    """Create a session file (header written at once) and its runtime."""
    from agentd.store import SessionFile

    parts = await _parts(services, params)
    file = await asyncio.to_thread(  # in a thread: creating fsyncs the file and its folder
        SessionFile.create,
        services.session_root,
        cwd=str(parts.cwd),
        session_id=params.session_id,
        secrets=services.secrets(params.provider_env),
        lock=True,
    )
    _record_settings(file, parts, params)
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
    from agentd.server.bus import resumed_seq
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

    config = services.config(Path(runtime.settings.cwd))
    if client_env is not None:
        runtime.settings.provider_env = client_env
        runtime.file.add_secrets(services.secrets(client_env))
    env = runtime.settings.provider_env
    name = provider or runtime.settings.provider
    choice = await services.choose_model(config, name, model, None, env)
    client = make_provider(choice, services.http_for(choice), retry=retry_policy(config))
    runtime.use_model(client, choice.provider, choice.model)


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


def project_dir(cwd: str) -> Path:
    """``cwd`` resolved; InvalidParams unless it is an existing absolute directory."""
    path = Path(cwd).expanduser()
    if not path.is_absolute() or not path.is_dir():
        raise InvalidParams(f"`cwd` must be an existing absolute directory, got {cwd!r}")
    return path.resolve()


async def _parts(services: Services, params: SessionNewParams, *, resolve: bool = True) -> _Parts:
    """What a runtime is built from; ``resolve`` False (a loaded session) leaves the provider
    to the first model call and accepts a project directory that is gone."""
    from agentd.tools import build_tools

    cwd = project_dir(params.cwd) if resolve else Path(params.cwd)
    config = services.config(cwd)
    choice = None
    if resolve:
        choice = await services.choose_model(
            config, params.provider, params.model, params.base_url, params.provider_env
        )
    provider = choice.provider if choice else params.provider or config.default_provider or ""
    model = choice.model if choice else params.model or config.default_model or ""
    try:
        tools = build_tools(params.tools)
    except ValueError as exc:
        raise InvalidParams(f"{exc} - at `$.tools`") from None
    mode = params.permission_mode or config.permission_mode or "auto"
    sandbox = params.sandbox or config.settings.sandbox
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
    )


def _record_settings(file: SessionFile, parts: _Parts, params: SessionNewParams) -> None:
    """Title, model and the session's own settings, so a reload behaves the same (the
    effective permission mode and sandbox; the other overrides as given)."""
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
    file.sync()


def _assemble(
    services: Services, file: SessionFile, parts: _Parts, messages: list[Any], title: str | None
) -> SessionRuntime:
    from agentd.prompt import build_system_prompt
    from agentd.tools import run_tool, tool_spec

    policy, timeout = _approval(parts)
    if "bash" in parts.tools:
        from agentd.tools.bashparse import warm_up

        warm_up()  # the bash grammar loads off the event loop, before the first command
    context = _tool_context(services, file, parts, policy)
    specs = [tool_spec(t, context.options) for t in parts.tools.values()]
    agent_parts = AgentParts(
        provider=_provider(services, parts),
        system_prompt=build_system_prompt(
            parts.cwd, specs, override=parts.system_prompt, extra=parts.config.extra_prompt
        ),
        tools=parts.tools,
        tool_specs=specs,
        context=context,
        run_tool=run_tool,
        messages=messages,
        max_turns=parts.max_turns or 50,
    )
    settings = Settings(
        session_id=file.header.id,
        cwd=str(parts.cwd),
        provider=parts.provider,
        model=parts.model,
        permission_mode=parts.mode,  # type: ignore[arg-type]
        title=title,
        provider_env=parts.provider_env,
        config_warnings=list(parts.config.warnings),
        untrusted_config=str(parts.config.untrusted_file) if parts.config.untrusted_file else None,
    )
    _warn_about_config(file, parts.config, parts)
    return SessionRuntime(
        settings,
        file,
        policy,
        agent_parts,
        compaction=compaction_settings(parts.config, parts.choice),
        approval_timeout=timeout,
        model_source=None if parts.choice else _model_source(services, parts),
    )


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
        config = services.config(cwd)
        choice = await services.choose_model(config, provider or None, model or None, base_url, env)
        client = make_provider(choice, services.http_for(choice), retry=retry_policy(config))
        return ResolvedModel(client, choice.provider, choice.model, choice.context_window)

    return resolve


def _warn_about_config(file: SessionFile, config: Config, parts: _Parts) -> None:
    """Config warnings, and an unconfined bash under a workspace sandbox, become
    ``session_warning`` events for every client that watches."""
    from agentd.hardening import landlock_abi
    from agentd.store.tree import LoadWarning
    from agentd.tools.landlock import unconfined_warning

    texts = list(config.warnings)
    if parts.sandbox == "workspace" and "bash" in parts.tools:
        texts += [text for text in [unconfined_warning(landlock_abi())] if text]
    file.warnings.extend(LoadWarning(line=None, message=text) for text in texts)


def _approval(parts: _Parts) -> tuple[PermissionPolicy, float]:
    """The ``[permissions]`` policy (plus ``timeout``) and ``sandbox``: ``"workspace"`` confines
    the file tools to the session's cwd, ``"none"`` (the default) does not."""
    from agentd.permissions import PermissionPolicy

    permissions = dict(parts.config.raw.get("permissions") or {})
    timeout = permissions.pop("timeout", DEFAULT_TIMEOUT)
    sandboxed = parts.sandbox == "workspace"
    policy = PermissionPolicy.from_config(
        parts.mode, permissions, workspace=parts.cwd if sandboxed else None, cwd=parts.cwd
    )
    return policy, float(timeout)


def process_registry() -> Path:
    """Where running bash calls are recorded (:mod:`agentd.tools.orphans`)."""
    from agentd.paths import state_dir

    return state_dir() / "procs"


def spill_root() -> Path:
    """Where bash spill files go: ``$XDG_STATE_HOME/agentd/spill/<session-id>/``."""
    from agentd.paths import state_dir

    return state_dir() / "spill"


def _tool_context(
    services: Services, file: SessionFile, parts: _Parts, policy: PermissionPolicy
) -> ToolContext:
    """The ``[tools]`` options, the credential names bash must not see, the spill dir."""
    from agentd.tools.settings import tool_options

    try:
        options = tool_options(parts.config.raw.get("tools"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    secret = {*services.secret_names(), *options.get("secret_env", ())}
    options |= {"secret_env": sorted(secret), "permission_policy": policy}
    options["process_registry"] = process_registry()
    return ToolContext(
        cwd=parts.cwd,
        session_id=file.header.id,
        workspace=policy.workspace,
        spill_dir=spill_root() / file.header.id,
        redact=file.redact_text,
        options=options,
    )
