"""Params and results of the lifecycle methods: ``initialize``, ``daemon/status``,
``web/open`` (re-exported by :mod:`agentd.protocol.methods`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from agentd.protocol.base import Params, Result, Wire
from agentd.protocol.mcp import McpServerInfo

PROTOCOL_VERSION = 1


class ClientInfo(Result):
    """Who the client is (for logs and ``daemon/status``)."""

    name: str
    version: str | None = None


class FileAccessCapabilities(Result):
    """The client serves ``fs/readTextFile`` / ``fs/writeTextFile`` (an editor: its buffers)."""

    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(Result):
    """What the client can do. ``permissions``: it answers ``session/requestPermission``;
    ``questions``: it shows ``session/askQuestion`` to a user who can answer (leave it false
    when nobody is there: the ``ask_user`` tool then returns at once);
    ``fs``: the file tools of its sessions read and write through it (see ``fs/readTextFile``)."""

    permissions: bool = False
    questions: bool = False
    fs: FileAccessCapabilities = msgspec.field(default_factory=FileAccessCapabilities)


class InitializeParams(Params):
    """First call on every connection (``daemon/status`` is the only call allowed before it).

    ``token`` is required on TCP connections; Unix-socket and stdio peers are trusted.
    """

    protocol_version: int = PROTOCOL_VERSION
    client_info: ClientInfo | None = None
    capabilities: ClientCapabilities = msgspec.field(default_factory=ClientCapabilities)
    token: str | None = None


class ServerInfo(Result):
    """The daemon's name and version."""

    name: str
    version: str


class ServerCapabilities(Result):
    """What this daemon offers."""

    framings: list[str] = msgspec.field(default_factory=lambda: ["content-length", "ndjson"])
    events: bool = True
    permissions: bool = True
    questions: bool = True
    images: bool = True


class InitializeResult(Result):
    """The daemon's answer to ``initialize``."""

    protocol_version: int
    server_info: ServerInfo
    capabilities: ServerCapabilities


class SecurityStatus(Result):
    """What protects this daemon and its tools on this machine.

    ``dumpable``: false when same-uid processes cannot read the daemon's memory or
    environment (``prctl(PR_SET_DUMPABLE, 0)``). ``openat2``: file tools open paths with
    ``RESOLVE_BENEATH`` (else a symlink-refusing walk). ``landlock_abi``: the kernel's
    Landlock version, 0 when bash cannot be confined under ``sandbox = "workspace"``.
    """

    dumpable: bool
    openat2: bool
    landlock_abi: int


LanguageServerState = Literal["not_started", "starting", "indexing", "ready", "crashed", "stopped"]


class LanguageServerInfo(Wire):
    """One language server process the daemon runs for the ``lsp`` tool and the diagnostics
    after edits: its definition ``name`` and ``command``, the project ``root`` it serves, its
    ``state``, ``pid`` while it runs, ``open_documents``, how often it was ``restarts``ed and
    its ``last_error`` (why it crashed or could not start)."""

    name: str
    command: str
    root: str
    state: LanguageServerState
    pid: int | None = None
    open_documents: int = 0
    restarts: int = 0
    last_error: str | None = None


class DaemonStatusResult(Result):
    """``daemon/status``: liveness, load, the protections in force, the MCP servers."""

    version: str
    pid: int
    uptime_s: float
    connections: int
    sessions: list[str]
    transport: str
    security: SecurityStatus | None = None
    mcp_servers: list[McpServerInfo] = msgspec.field(default_factory=list)
    """The MCP servers the daemon started (``mcp/list`` tells the configured ones too)."""
    language_servers: list[LanguageServerInfo] = msgspec.field(default_factory=list)
    """The language servers the daemon started (``agentctl lsp list``)."""


class WebOpenParams(Params):
    """``daemon/web``: start the daemon's web chat (``agentd serve --http``) unless it runs,
    and get a link to it.

    ``host``/``port`` apply only when it is not running yet (default 127.0.0.1:8765; when that
    default port is taken, any free port). ``cwd``: where the page starts new sessions.
    """

    cwd: str | None = None
    host: str = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] | None = None


class WebOpenResult(Result):
    """The page's URL, carrying a new one-time token (exchanged for a cookie on first use)."""

    url: str
    host: str
    port: int
