"""What ``agentctl mcp list --check``, ``mcp login`` and ``mcp logout`` ask the daemon to do
with a project's servers (``mcp/list`` ``check``, ``mcp/login``, ``mcp/loginFinish``,
``mcp/logout``).

* :func:`check_servers`: a new connection to each server (a process for a stdio one, with
  the environment a session's would get), ``initialize`` and ``tools/list``, then stopped,
  all at once, each within its start-up timeout; the pool's own servers are not touched.
* :class:`McpLogins`: sign-ins in progress (:mod:`agentd.mcp.login`), each ended by its
  timeout at the latest; ``mcp/login`` answers as soon as the authorization URL is known.
* :func:`logout`: the stored credentials of a server forgotten.

A server is named as the project's configuration names it (:func:`find_server`); its
credentials are the ones stored for its URL. Nothing here imports the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from agentd.errors import InvalidParams
from agentd.mcp.connection import Connection, LoginRequired, StartFailed, pre_registered
from agentd.mcp.credentials import CredentialStore
from agentd.mcp.servers import ServerDef, gather, qualified_name
from agentd.protocol.mcp import McpListResult, McpLoginResult, McpLogoutResult, McpServerCheck
from agentd.tools.process.environment import child_env
from agentd.tools.settings import tool_settings

if TYPE_CHECKING:
    from agentd.config.load import Config
    from agentd.config.schema import McpServerSection

EnvFor = Callable[[ServerDef], dict[str, str]]
MAX_LOGINS = 8


def find_server(configured: Mapping[str, McpServerSection], cwd: Path, name: str) -> ServerDef:
    """The server ``name`` a session in ``cwd`` would get; InvalidParams when there is none
    or it is not an HTTP server."""
    found = gather(configured, cwd, None)
    for definition in found.servers:
        if definition.name == name:
            if not definition.url:
                raise InvalidParams(
                    f"MCP server {name!r} is a stdio server ({definition.target}): only HTTP "
                    "servers sign in"
                )
            return definition
    known = ", ".join(d.name for d in found.servers) or "none"
    raise InvalidParams(f"no MCP server {name!r} for {cwd} (its servers: {known})")


async def check_server(definition: ServerDef, cwd: Path, env: dict[str, str]) -> McpServerCheck:
    """Connect to ``definition`` anew, list its tools, stop it (see the module docstring)."""
    began = time.monotonic()
    connection = Connection(definition, cwd, env, lambda: None, lambda: None)
    try:
        await connection.start()
    except StartFailed as exc:
        login = isinstance(exc, LoginRequired)
        return McpServerCheck(
            ok=False, tools=[], error=str(exc), login=login, seconds=_since(began)
        )
    tools = [
        qualified_name(definition.name, tool["name"])
        for tool in connection.tools
        if definition.offers(tool["name"])
    ]
    await connection.stop()
    return McpServerCheck(ok=True, tools=tools, error=None, login=False, seconds=_since(began))


async def check_servers(
    servers: list[ServerDef], cwd: Path, env_for: EnvFor
) -> dict[str, McpServerCheck]:
    """:func:`check_server` of every server, concurrently; by name."""
    checks = await asyncio.gather(*(check_server(d, cwd, env_for(d)) for d in servers))
    return {d.name: check for d, check in zip(servers, checks, strict=True)}


async def checked_listing(listed: McpListResult, config: Config, cwd: Path) -> McpListResult:
    """``listed`` with a check of each server a session in ``cwd`` would start (the
    disabled, untrusted and other folders' ones are left as they are)."""
    settings = config.settings
    servers = gather(settings.mcp_servers, cwd, None, startup_timeout=settings.mcp_startup_timeout)
    tools = tool_settings(settings.tools)
    checks = await check_servers(
        servers.servers, cwd, lambda d: child_env(None, tools) | dict(d.env)
    )
    checked = []
    for info in listed.servers:
        check = checks.pop(info.name, None) if info.cwd in (None, str(cwd)) else None
        checked.append(replace(info, check=check) if check is not None else info)
    return McpListResult(servers=checked)


def logout(definition: ServerDef, store: CredentialStore | None = None) -> McpLogoutResult:
    assert definition.url is not None
    removed = (store or CredentialStore()).forget(definition.url)
    return McpLogoutResult(name=definition.name, url=definition.url, removed=removed)


class _Login:
    def __init__(self, definition: ServerDef) -> None:
        self.id = secrets.token_urlsafe(12)
        self.definition = definition
        self.url_known: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[list[str]] | None = None

    def result(self, done: bool, tools: list[str]) -> McpLoginResult:
        url = self.url_known.result() if self.url_known.done() and not done else None
        assert self.definition.url is not None
        return McpLoginResult(
            login_id=self.id,
            name=self.definition.name,
            url=self.definition.url,
            done=done,
            authorization_url=url,
            tools=tools,
        )


class McpLogins:
    """The daemon's sign-ins in progress (at most :data:`MAX_LOGINS`; the oldest goes)."""

    def __init__(self, store: CredentialStore | None = None) -> None:
        self.store = store
        self._logins: dict[str, _Login] = {}

    async def start(self, definition: ServerDef, timeout: float) -> McpLoginResult:
        """Begin a login to ``definition``: the authorization URL once known (or the end,
        when the server needed no sign-in). InvalidParams when it failed."""
        from agentd.mcp.login import run_login

        assert definition.url is not None
        login = _Login(definition)

        async def on_url(authorization_url: str) -> None:
            if not login.url_known.done():
                login.url_known.set_result(authorization_url)

        store = self.store or CredentialStore()
        headers, client = dict(definition.headers), pre_registered(definition)
        run = run_login(definition.url, headers, store, on_url, timeout, client)
        login.task = asyncio.create_task(asyncio.wait_for(run, timeout + 30))
        self._keep(login)
        pending: list[asyncio.Future[Any]] = [login.task, login.url_known]
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if login.task.done():
            return await self.finish(login.id)
        return login.result(False, [])

    async def finish(self, login_id: str) -> McpLoginResult:
        """Wait for the login to end; InvalidParams (with why) when it failed."""
        from agentd.mcp.login import LoginFailed

        login = self._logins.get(login_id)
        if login is None or login.task is None:
            raise InvalidParams(f"no login {login_id!r} in progress (it ended or timed out)")
        try:
            tools = await asyncio.shield(login.task)
        except (LoginFailed, TimeoutError) as exc:
            self._logins.pop(login_id, None)
            why = str(exc) or "it timed out"
            raise InvalidParams(f"signing in to {login.definition.name} failed: {why}") from None
        self._logins.pop(login_id, None)
        return login.result(True, [qualified_name(login.definition.name, t) for t in tools])

    def _keep(self, login: _Login) -> None:
        self._logins[login.id] = login
        while len(self._logins) > MAX_LOGINS:
            oldest = self._logins.pop(next(iter(self._logins)))
            if oldest.task is not None:
                oldest.task.cancel()

    async def close(self) -> None:
        for login in self._logins.values():
            if login.task is not None:
                login.task.cancel()
        for login in list(self._logins.values()):
            if login.task is not None:
                with contextlib.suppress(BaseException):
                    await login.task
        self._logins.clear()


def _since(began: float) -> float:
    return round(time.monotonic() - began, 3)
