"""MCP servers on the wire: how a client names servers for one session (``session/new``
``mcpServers``, the ACP shape) and how the daemon reports them (``mcp/list``,
``daemon/status``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from agentd.protocol.base import Params, Result, Wire


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


class McpListParams(Params):
    """``mcp/list``: the MCP servers configured for ``cwd`` (default: the daemon's own cwd)
    and those the daemon runs."""

    cwd: str | None = None


class McpListResult(Result):
    """``mcp/list``: configured servers (with the state of their process for ``cwd``), then
    running ones of other folders and sessions."""

    servers: list[McpServerInfo]
