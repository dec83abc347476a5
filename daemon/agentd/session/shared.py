"""What sessions of one daemon share: the store root, configuration, HTTP clients (the mock
LLM's in-process one too), credentials, and where tool processes and spill files are kept.

Created once per daemon, on first session use; nothing here is imported on start-up.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from agentd.errors import ConfigError, InvalidParams
from agentd.protocol.lifecycle import LanguageServerInfo
from agentd.protocol.mcp import (
    McpListResult,
    McpLoginParams,
    McpLoginResult,
    McpLogoutParams,
    McpLogoutResult,
    McpServerInfo,
)
from agentd.protocol.methods import ModelsListResult
from agentd.protocol.provider_env import (
    MOCK_SCENARIOS_ENV,
    is_provider_variable,
    provider_variables,
)
from agentd.telemetry import Telemetry

if TYPE_CHECKING:
    from agentd.config.load import Config, ModelChoice
    from agentd.langserver.pool import LspPool
    from agentd.mcp.control import McpLogins
    from agentd.mcp.pool import McpPool
    from agentd.mockllm.transport import MockTransport
    from agentd.providers.http_types import ProviderHttp
    from agentd.providers.transport import ProviderClient

MOCK = "mock"


class ModelDefaults:
    """The provider and model new sessions get when they name none, given on the command line
    (``agentd serve --provider NAME [--model NAME]``): they take the place of the configured
    ``provider``/``model`` keys. A provider given alone keeps the configured model only when
    the configuration names the same provider (else the provider's own default model)."""

    def __init__(self, provider: str | None, model: str | None) -> None:
        self.provider = provider
        self.model = model

    def apply(self, config: Config) -> Config:
        """``config`` with these defaults in place of its ``provider``/``model`` keys."""
        settings = config.settings
        provider = self.provider or settings.provider
        model = self.model
        if model is None and provider == settings.provider:
            model = settings.model
        return replace(config, settings=replace(settings, provider=provider, model=model))


class SharedResources:
    """Daemon-wide things sessions share: the store root, config, one HTTP client, secrets.

    Created once per daemon, on first use; creating it starts a background thread that
    deletes old bash spill files (see :mod:`agentd.tools.process.spill`).
    """

    def __init__(
        self,
        session_dir: Path | None = None,
        config_file: Path | None = None,
        defaults: ModelDefaults | None = None,
    ) -> None:
        from agentd.store import default_root

        self.session_root = Path(session_dir) if session_dir else default_root()
        self.config_file = Path(config_file) if config_file else None
        self.defaults = defaults
        self._http: ProviderClient | None = None
        self._mock_http: dict[str | None, MockTransport] = {}
        self._mcp: McpPool | None = None
        self._lsp: LspPool | None = None
        self._logins: McpLogins | None = None
        self.telemetry = Telemetry()
        """The daemon's counters and, once :meth:`start_telemetry` found it configured, its
        OpenTelemetry export; every session's bus tells it the session's events."""
        threading.Thread(target=prune_session_files, name="spill-prune", daemon=True).start()

    def config(self, cwd: Path) -> Config:
        """The merged configuration for a session in ``cwd`` (read fresh each time)."""
        from agentd.config.load import load_config

        config = load_config(cwd, self.config_file)
        return self.defaults.apply(config) if self.defaults is not None else config

    async def start_telemetry(self) -> None:
        """Decide, once, whether telemetry is exported (your own config file's
        ``[telemetry]``, the ``OTEL_EXPORTER_OTLP_*`` variables), off the event loop;
        ConfigError (what to fix or install) when it is configured but cannot start."""
        if not self.telemetry.decided:
            await asyncio.to_thread(self.telemetry.start, self.config_file)

    def http(self) -> ProviderClient:
        """The shared HTTP client (connection pooling across sessions): plain ``http://`` on
        the providers' own HTTP/1.1 client, ``https://`` verified against certifi's bundle
        through httpx, built on the first https request (:mod:`agentd.providers.transport`)."""
        if self._http is None:
            from agentd.providers.transport import new_http_client

            self._http = new_http_client()
        return self._http

    def secret_names(self) -> set[str]:
        """Names of the daemon's credential env vars (scrubbed from bash's environment)."""
        from agentd.config.credentials import credential_env_names

        return credential_env_names(os.environ)

    def secrets(self, client_env: dict[str, str] | None = None) -> set[str]:
        """Values of the daemon's credential env vars and of the client's provider variables
        (redacted from session files)."""
        values = {os.environ[n] for n in self.secret_names() if os.environ.get(n)}
        values |= {v for n, v in (client_env or {}).items() if n != MOCK_SCENARIOS_ENV}
        return {value for value in values if len(value) >= 8}

    def models(
        self, cwd: str | None = None, client_env: dict[str, str] | None = None
    ) -> ModelsListResult:
        """``models/list`` for the configuration of ``cwd`` (default: the daemon's own)."""
        from agentd.config.models import list_models

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
        from agentd.config.models import MissingCredentials, resolve_model

        if provider == MOCK or (provider is None and config.default_provider == MOCK):
            from agentd.mockllm.transport import ScenarioError, mock_scenarios

            try:  # a bad file fails here, not at a request
                mock_scenarios(_mock_file(client_env))
            except ScenarioError as exc:
                raise ConfigError(f"AGENTD_MOCK_SCENARIOS: {exc}") from None
        try:
            return resolve_model(
                config, provider, model, base_url, provider_environment(client_env)
            )
        except MissingCredentials as exc:
            message = f"{exc.message}\n{_looked_at(client_env)}"
            raise MissingCredentials(message, data=exc.data) from None

    def http_for(
        self, choice: ModelChoice, client_env: dict[str, str] | None = None
    ) -> ProviderHttp:
        """The HTTP client for ``choice``: the in-process mock LLM's for the mock's base URL
        (:mod:`agentd.mockllm.transport`; one per scenarios file the clients named, read
        again at each request once it changed), else the shared one."""
        from agentd.config.load import MOCK_BASE_URL

        if choice.base_url != MOCK_BASE_URL:
            return self.http()
        path = _mock_file(client_env)
        client = self._mock_http.get(path)
        if client is None:
            from agentd.mockllm.transport import MockTransport

            client = MockTransport(path)
            self._mock_http[path] = client
        return client

    def mcp_pool(self) -> McpPool:
        """The daemon's MCP server processes (created when a session first has servers)."""
        if self._mcp is None:
            from agentd.mcp.pool import McpPool

            self._mcp = McpPool()
        return self._mcp

    def lsp_pool_if_any(self) -> LspPool | None:
        """The daemon's language servers when a session has used one, else None."""
        return self._lsp

    def lsp_pool(self) -> LspPool:
        """The daemon's language servers (created when a session first uses one)."""
        if self._lsp is None:
            from agentd.langserver.pool import LspPool

            self._lsp = LspPool()
        return self._lsp

    def lsp_running(self) -> list[LanguageServerInfo]:
        """The language servers the daemon started (``daemon/status``)."""
        return self._lsp.infos() if self._lsp is not None else []

    def mcp_running(self) -> list[McpServerInfo]:
        """The MCP servers the daemon started (``daemon/status``); nothing is imported when
        no session ever had one."""
        return self._mcp.infos() if self._mcp is not None else []

    async def mcp_list(self, cwd: str | None, check: bool = False) -> McpListResult:
        """``mcp/list``: the servers a session in ``cwd`` gets (with their process's state
        when it runs; ``untrusted`` for an untrusted ``.mcp.json``), then the other running
        ones; with ``check``, each configured one checked
        (:func:`agentd.mcp.control.check_servers`)."""
        from agentd.mcp.listing import listing

        folder = project_dir(cwd) if cwd is not None else Path.cwd()
        config = self.config(folder)
        result = listing(config.settings.mcp_servers, folder, self._mcp)
        if check:
            from agentd.mcp.control import checked_listing

            result = await checked_listing(result, config, folder)
        return result

    async def mcp_login(self, params: McpLoginParams) -> McpLoginResult:
        """``mcp/login``: see :class:`agentd.mcp.control.McpLogins`."""
        from agentd.mcp.control import McpLogins, find_server

        folder = project_dir(params.cwd) if params.cwd is not None else Path.cwd()
        definition = find_server(self.config(folder).settings.mcp_servers, folder, params.name)
        if self._logins is None:
            self._logins = McpLogins()
        return await self._logins.start(definition, params.timeout)

    async def mcp_login_finish(self, login_id: str) -> McpLoginResult:
        """``mcp/loginFinish``: the end of a login of :meth:`mcp_login`."""
        if self._logins is None:
            raise InvalidParams(f"no login {login_id!r} in progress (it ended or timed out)")
        return await self._logins.finish(login_id)

    def mcp_logout(self, params: McpLogoutParams) -> McpLogoutResult:
        """``mcp/logout``: the stored credentials of the server forgotten."""
        from agentd.mcp.control import find_server, logout

        folder = project_dir(params.cwd) if params.cwd is not None else Path.cwd()
        return logout(find_server(self.config(folder).settings.mcp_servers, folder, params.name))

    async def close(self) -> None:
        """Stop the MCP servers, close the HTTP clients, if they were created, and end the
        tools' worker threads (:func:`agentd.tools.close_workers`)."""
        tools = sys.modules.get("agentd.tools")
        if tools is not None:  # never imported: no worker to end
            tools.close_workers()
        if self._logins is not None:
            await self._logins.close()
        if self._mcp is not None:
            await self._mcp.close()
        if self._lsp is not None:
            await self._lsp.close()
        for client in (self._http, *self._mock_http.values()):
            if client is not None:
                await client.aclose()
        self._http = None
        self._mock_http = {}
        if self.telemetry.export is not None:  # the last spans and metrics sent
            await asyncio.to_thread(self.telemetry.shutdown)


def provider_environment(client_env: dict[str, str] | None) -> Mapping[str, str]:
    """The environment providers are resolved from: the daemon's, with its provider variables
    replaced by the client's when the client sent them (see :mod:`agentd.protocol.provider_env`)."""
    if client_env is None:
        return os.environ
    own = {name: value for name, value in os.environ.items() if not is_provider_variable(name)}
    return own | provider_variables(client_env)


def _mock_file(client_env: dict[str, str] | None) -> str | None:
    """The mock's scenarios file for a client's session: the one its variables name ("" when
    they name none: the built-in scenarios), None when the client sent no variables (the
    daemon's own ``AGENTD_MOCK_SCENARIOS``, read per request)."""
    return None if client_env is None else client_env.get(MOCK_SCENARIOS_ENV, "")


def _looked_at(client_env: dict[str, str] | None) -> str:
    if client_env is not None:
        return "(provider variables were read from the client's environment, sent with the request)"
    return (
        f"(provider variables were read from the daemon's environment: agentd pid {os.getpid()}, "
        "as it was when the daemon started)"
    )


def project_dir(cwd: str) -> Path:
    """``cwd`` resolved; InvalidParams unless it is an existing absolute directory."""
    path = Path(cwd).expanduser()
    if not path.is_absolute() or not path.is_dir():
        raise InvalidParams(f"`cwd` must be an existing absolute directory, got {cwd!r}")
    return path.resolve()


def check_sandbox_root(cwd: Path) -> None:
    """InvalidParams when ``cwd`` may not be a workspace sandbox's root: the filesystem
    root, the home folder or a folder above it, or a folder anyone may write to
    (:func:`agentd.paths.too_broad`, the folders ``agentctl trust`` refuses too). Every
    front-end's ``cwd`` (JSON-RPC, the web API, an LSP client's ``rootUri``, ``agentd mcp``)
    comes through here."""
    from agentd.paths import too_broad

    reason = too_broad(cwd)
    if reason is not None:
        raise InvalidParams(
            f'refusing sandbox = "workspace" rooted at {cwd}: {reason}, so the sandbox would '
            "cover far more than one project. Start the session in the project's own folder "
            "- at `$.cwd`"
        )


def process_registry() -> Path:
    """Where running bash calls are recorded (:mod:`agentd.tools.process.orphans`)."""
    from agentd.paths import state_dir

    return state_dir() / "procs"


def spill_root() -> Path:
    """Where bash spill files go: ``$XDG_STATE_HOME/agentd/spill/<session-id>/``."""
    from agentd.paths import state_dir

    return state_dir() / "spill"


def prune_session_files() -> None:
    """At daemon start (a thread of its own): delete the spill files and the sandboxed
    commands' temp dirs of sessions untouched for
    :data:`agentd.tools.process.spill.MAX_AGE_DAYS` days."""
    from agentd.tools.process.spill import prune_now_and_then, tmp_root

    prune_now_and_then(spill_root())
    prune_now_and_then(tmp_root())
