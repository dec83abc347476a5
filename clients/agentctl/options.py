"""The command line's options as typed values: one Struct per command, built once from
argparse's result (:func:`typed_options`), which the commands take instead of a namespace.

Each Struct lists exactly the destinations its parser (:mod:`agentctl.parser`) fills, with
their types; a destination the Struct does not declare, or a value of the wrong type, is a
``msgspec.ValidationError`` when it is built — the parser and the Structs cannot drift apart
silently. The values are frozen: a step that refines one (a session id prefix expanded) makes
a new value with :func:`msgspec.structs.replace`.
"""

from __future__ import annotations

import argparse
from typing import Literal, TypeAlias

import msgspec


class CommandOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What every command's options have: the command's name, ``--version`` (answered before
    parsing), ``--socket`` (given before or after the command) and ``--stdio`` (a private
    daemon: only the commands whose parser offers it can set it)."""

    command: str
    version: bool = False
    socket: str | None = None
    stdio: bool = False


class SessionOptions(CommandOptions, frozen=True, kw_only=True):
    """The session options ``send`` and ``chat`` share (:func:`agentctl.parser`'s
    ``_session_options``): which session, its LLM and settings."""

    verbose: bool = False
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_turns: int | None = None
    permission: Literal["auto", "ask", "read-only"] | None = None
    sandbox: Literal["workspace", "none"] | None = None
    cwd: str | None = None
    system_prompt: str | None = None
    title: str | None = None
    session: str | None = None
    continue_: bool = False
    fork: str | None = None
    """``send --fork ID`` (``chat`` has no such flag: always None)."""


class SendOptions(SessionOptions, frozen=True, kw_only=True):
    """``agentctl send``."""

    prompt: list[str] = []
    image: list[str] | None = None
    timeout: float | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    result_file: str | None = None
    summary_file: str | None = None
    provider_env_file: str | None = None
    json: bool = False
    quiet: bool = False
    daemon_process: bool = False
    """``--daemon-process``: the session in a private ``agentd serve --stdio`` child."""
    shared: bool = False
    """``--shared``: the shared daemon, started when none runs."""


class ChatOptions(SessionOptions, frozen=True, kw_only=True):
    """``agentctl chat``."""


class AttachOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl attach ID``."""

    session_id: str
    since: int | None = None
    json: bool = False
    until_end: bool = False


class CancelOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl cancel ID``."""

    session_id: str


class StatusOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl status`` (and ``daemon status``)."""

    json: bool = False


class SessionsOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl sessions [ACTION]``: the options of the ``sessions`` parser itself, which
    every action's namespace carries (their defaults, when the action has its own)."""

    action: str | None = None
    cwd: str | None = None
    limit: int | None = None
    json: bool = False


class SessionsList(SessionsOptions, frozen=True, kw_only=True):
    """``sessions`` and ``sessions list``."""


class SessionsShow(SessionsOptions, frozen=True, kw_only=True):
    """``sessions show ID``."""

    session_id: str
    verbose: bool = False


class SessionsExport(SessionsOptions, frozen=True, kw_only=True):
    """``sessions export ID``."""

    session_id: str
    format: Literal["md", "markdown", "html"] = "md"
    output: str | None = None


class SessionsFork(SessionsOptions, frozen=True, kw_only=True):
    """``sessions fork ID``."""

    session_id: str
    entry: str | None = None
    title: str | None = None


class SessionsRename(SessionsOptions, frozen=True, kw_only=True):
    """``sessions rename ID TITLE…``: the title's words."""

    session_id: str
    title: list[str]


class SessionsRemove(SessionsOptions, frozen=True, kw_only=True):
    """``sessions rm ID``."""

    session_id: str
    force: bool = False


class DaemonOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl daemon start|stop|status|metrics|logs``."""

    action: Literal["start", "stop", "status", "metrics", "logs"]
    lines: int = 50
    follow: bool = False
    json: bool = False


class RpcOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl rpc [METHOD [JSON]]``."""

    method: str | None = None
    params: str | None = None
    events: bool = False


class TrustOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl trust [DIR]``."""

    dir: str | None = None
    list: bool = False
    revoke: bool = False
    force: bool = False


class McpOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl mcp ACTION``."""

    mcp_command: str


class McpList(McpOptions, frozen=True, kw_only=True):
    """``mcp list``."""

    cwd: str | None = None
    json: bool = False
    check: bool = False


class McpLogin(McpOptions, frozen=True, kw_only=True):
    """``mcp login NAME``: sign in to an HTTP server that asks for OAuth."""

    name: str
    cwd: str | None = None
    no_browser: bool = False
    timeout: float = 300.0


class McpLogout(McpOptions, frozen=True, kw_only=True):
    """``mcp logout NAME``: forget the server's stored OAuth tokens."""

    name: str
    cwd: str | None = None


class McpAdd(McpOptions, frozen=True, kw_only=True):
    """``mcp add``: its words (parsed again, into :class:`McpAddOptions`)."""

    words: list[str] = []


class McpRemove(McpOptions, frozen=True, kw_only=True):
    """``mcp remove NAME``."""

    name: str


class McpAddOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The words of ``agentctl mcp add``: before ``--`` the flags, after it the command."""

    name: str
    url: str | None = None
    env: list[str] | None = None
    server_command: list[str] = []


class SkillsOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl skills ACTION``."""

    skills_command: str


class SkillsList(SkillsOptions, frozen=True, kw_only=True):
    """``skills list``."""

    cwd: str | None = None
    json: bool = False


class SkillsCheck(SkillsOptions, frozen=True, kw_only=True):
    """``skills check PATH``."""

    path: str


class LspOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl lsp ACTION``."""

    lsp_command: str


class LspList(LspOptions, frozen=True, kw_only=True):
    """``lsp list``."""

    json: bool = False


class WebOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl web``."""

    app: bool = False
    no_open: bool = False
    cwd: str | None = None
    port: int | None = None


class RewindOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl rewind [ID]``."""

    session_id: str | None = None
    turns: int | None = None
    entry: str | None = None
    force: bool = False
    no_files: bool = False
    dry_run: bool = False
    cwd: str | None = None
    json: bool = False


class PsOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl ps [SESSION]``."""

    session_id: str | None = None
    json: bool = False


class KillOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl kill SESSION ID``."""

    session_id: str
    process_id: str


class BridgeOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl bridge`` reached through the parser (the fast path skips it)."""

    bridge_args: list[str] = []


class BatchOptions(CommandOptions, frozen=True, kw_only=True):
    """``agentctl batch TASKS --out DIR …`` and ``agentctl batch report DIR``."""

    words: list[str]
    out: str | None = None
    concurrency: int | None = None
    strict: bool = False
    retry_failed: bool = False
    max_cost: float | None = None
    max_tokens: int | None = None
    rate: float | None = None
    shard: tuple[int, int] | None = None
    engine: Literal["local", "ray"] = "local"
    address: str | None = None
    ray_num_cpus: float | None = None
    ray_resources: dict[str, float] | None = None
    max_retries: int | None = None
    ray_work_dir: str | None = None
    provider: str | None = None
    model: str | None = None
    permission: Literal["auto", "ask", "read-only"] | None = None
    env: list[str] | None = None
    check_timeout: float | None = None
    json: bool = False
    markdown: str | None = None
    html: str | None = None


AnyOptions: TypeAlias = (
    SendOptions
    | ChatOptions
    | AttachOptions
    | CancelOptions
    | StatusOptions
    | SessionsList
    | SessionsShow
    | SessionsExport
    | SessionsFork
    | SessionsRename
    | SessionsRemove
    | DaemonOptions
    | RpcOptions
    | TrustOptions
    | McpList
    | McpLogin
    | McpLogout
    | McpAdd
    | McpRemove
    | SkillsList
    | SkillsCheck
    | LspList
    | WebOptions
    | RewindOptions
    | PsOptions
    | KillOptions
    | BridgeOptions
    | BatchOptions
)

OPTIONS_OF: dict[str, type[AnyOptions]] = {
    "send": SendOptions,
    "chat": ChatOptions,
    "attach": AttachOptions,
    "cancel": CancelOptions,
    "status": StatusOptions,
    "sessions": SessionsList,
    "sessions list": SessionsList,
    "sessions show": SessionsShow,
    "sessions export": SessionsExport,
    "sessions fork": SessionsFork,
    "sessions rename": SessionsRename,
    "sessions rm": SessionsRemove,
    "daemon": DaemonOptions,
    "rpc": RpcOptions,
    "trust": TrustOptions,
    "mcp list": McpList,
    "mcp login": McpLogin,
    "mcp logout": McpLogout,
    "mcp add": McpAdd,
    "mcp remove": McpRemove,
    "skills list": SkillsList,
    "skills check": SkillsCheck,
    "lsp list": LspList,
    "web": WebOptions,
    "rewind": RewindOptions,
    "ps": PsOptions,
    "kill": KillOptions,
    "bridge": BridgeOptions,
    "batch": BatchOptions,
}
"""The options Struct of each command (and action) of :func:`agentctl.parser.build_parser`."""

_ACTION_DEST = {
    "sessions": "action", "mcp": "mcp_command", "skills": "skills_command", "lsp": "lsp_command",
}  # fmt: skip
"""The destination naming the action, for the commands with one Struct per action."""


def command_key(namespace: argparse.Namespace) -> str:
    """The key of :data:`OPTIONS_OF` for ``namespace``: the command, with its action for the
    commands that have one Struct per action."""
    dest = _ACTION_DEST.get(namespace.command)
    action = getattr(namespace, dest, None) if dest else None
    return f"{namespace.command} {action}" if action else namespace.command


def typed_options(namespace: argparse.Namespace) -> AnyOptions:
    """The Struct of ``namespace.command`` holding every value argparse gave; a destination
    the Struct lacks or a value of another type is a ``msgspec.ValidationError`` (a parser
    and Struct out of step: a bug, never a user's mistake)."""
    return msgspec.convert(vars(namespace), OPTIONS_OF[command_key(namespace)])


def mcp_add_options(namespace: argparse.Namespace, server_command: list[str]) -> McpAddOptions:
    """``mcp add``'s flags (its own small parser) and the command after ``--``."""
    return msgspec.convert({**vars(namespace), "server_command": server_command}, McpAddOptions)
