"""MCP servers on the wire: how a client names servers for one session (``session/new``
``mcpServers``, the ACP shape) and how the daemon reports them (``mcp/list``,
``daemon/status``)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

import msgspec

from agentd.protocol.base import Params, Result, Wire

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an MCP server, or None. Its tools are ``mcp__NAME__TOOL``, and
    a rule such as ``mcp__github__*`` must never reach another server: so a name (with the
    characters tool names cannot hold read as ``_``) is not empty, holds no ``__`` and does
    not end with ``_`` (``github__evil`` and ``github_`` would be read as ``github``)."""
    shown = _NOT_NAME.sub("_", name)
    if not name:
        return "an MCP server needs a name"
    if "__" in shown or shown.endswith("_"):
        return (
            f"MCP server name {name!r} is not allowed: a server name may not contain '__' or "
            "end with '_' (other characters than letters, digits, '_' and '-' count as '_'), "
            f"because its tools are named mcp__<server>__<tool> and a rule for one server "
            "must not match another; rename the server"
        )
    return None


class NameValue(Params):
    """One environment variable or HTTP header."""

    name: str
    value: str


class McpServerParam(Params):
    """An MCP server for one session, as ACP's ``session/new`` writes it: stdio (``command``,
    ``args``, ``env``) or, with ``type: "http"``, streamable HTTP (``url``, ``headers``).
    ``sse`` servers are refused."""

    name: str
    type: Literal["stdio", "http", "sse"] | None = None
    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: list[NameValue] = msgspec.field(default_factory=list)
    url: str | None = None
    headers: list[NameValue] = msgspec.field(default_factory=list)


McpServerState = Literal["stopped", "starting", "running", "failed", "disabled", "untrusted"]


class McpServerCheck(Result):
    """A check of one server (``mcp/list`` with ``check``): a new connection that started it
    (or reached it), ran ``initialize`` and listed its tools, then stopped. ``ok``: it did;
    ``tools``: the names offered to the model; ``error``: why not; ``login``: it wants the
    user to sign in (``agentctl mcp login NAME``); ``seconds``: how long the check took."""

    ok: bool
    tools: list[str]
    error: str | None
    login: bool
    seconds: float


class McpServerInfo(Wire):
    """One MCP server as the daemon sees it. ``source``: ``config`` (the user file),
    ``project`` (a trusted project's ``.agentd.toml``), ``mcp.json`` (the project's
    ``.mcp.json``) or ``session`` (given with ``session/new``). ``target`` is the command line
    or URL; ``tools`` the names offered to the model (``mcp__NAME__TOOL``) once it ran;
    ``error`` why it failed; ``sessions`` how many loaded sessions use it."""

    name: str
    source: str
    state: McpServerState
    target: str
    cwd: str | None = None
    tools: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    sessions: int = 0
    check: McpServerCheck | None = None
    """With ``mcp/list`` ``check``: the check of a configured server."""


class McpListParams(Params):
    """``mcp/list``: the MCP servers configured for ``cwd`` (default: the daemon's own cwd)
    and those the daemon runs; with ``check``, each configured (enabled, trusted) server is
    also checked, all at once, each within its start-up timeout."""

    cwd: str | None = None
    check: bool = False


class McpListResult(Result):
    """``mcp/list``: configured servers (with the state of their process for ``cwd``), then
    running ones of other folders and sessions."""

    servers: list[McpServerInfo]


class McpLoginParams(Params):
    """``mcp/login``: sign in to the streamable HTTP server ``name`` of ``cwd``'s
    configuration (OAuth). The daemon waits on a loopback redirect for at most ``timeout``
    seconds from now."""

    name: str
    cwd: str | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 300.0


class McpLoginFinishParams(Params):
    """``mcp/loginFinish``: wait for the login ``login_id`` (of ``mcp/login``) to end."""

    login_id: str


class McpLoginResult(Result):
    """A login: ``authorization_url`` is the page the user opens to approve (None once
    ``done``, or when the server needed none); ``done``: the tokens are stored (or the server
    let agentd in as it was) and ``tools`` lists the server's tools; ``url``: the server."""

    login_id: str
    name: str
    url: str
    done: bool
    authorization_url: str | None
    tools: list[str]


class McpLogoutParams(Params):
    """``mcp/logout``: forget the stored OAuth credentials of the server ``name`` of
    ``cwd``'s configuration."""

    name: str
    cwd: str | None = None


class McpLogoutResult(Result):
    """``removed``: there were credentials for ``url``."""

    name: str
    url: str
    removed: bool
