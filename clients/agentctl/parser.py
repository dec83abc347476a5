"""The command-line grammar of ``agentctl`` (argparse; no side effects, no heavy imports)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from agentctl.batch.args import add_batch_parser
from agentctl.run.exitcodes import exit_code_words

DESCRIPTION = "Shell client of agentd, the headless coding-agent daemon."
EPILOG = f"exit codes: {exit_code_words()}"


def _connection_options(parser: argparse.ArgumentParser, *, stdio: bool) -> None:
    parser.add_argument(
        "--socket",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="Unix socket of the shared daemon (default: $AGENTD_SOCKET or the runtime dir)",
    )
    if stdio:
        parser.add_argument(
            "--stdio",
            action="store_true",
            help="run a private daemon (agentd serve --stdio) instead of the shared one",
        )


_VERBOSE_HELP = "show the last lines of every tool call's output (always shown for a failed one)"


def _session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE_HELP)
    parser.add_argument("--provider", help="LLM provider (for example: mock, openai, anthropic)")
    parser.add_argument("--model", help="model name")
    parser.add_argument("--base-url", metavar="URL", help="provider API base URL")
    parser.add_argument("--max-turns", type=_positive_int, metavar="N", help="turn limit")
    parser.add_argument(
        "--permission",
        choices=("auto", "ask", "read-only"),
        help="tool approval: ask (confirm at the terminal; the default), read-only, auto (run "
        "everything: only with --sandbox workspace unless the config opts in)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("workspace", "none"),
        help="workspace: file tools and bash may change only the session's folder "
        "(default: configuration)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="working directory of the session")
    parser.add_argument(
        "--system-prompt", metavar="TEXT|@FILE", help="system prompt, or @FILE to read it"
    )
    parser.add_argument("--title", help="session title")
    parser.add_argument("--session", metavar="ID", help="continue session ID")
    parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session of the working directory",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _add_send(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    send = commands.add_parser(
        "send",
        help="run one prompt and print the result",
        description="Run one prompt (the arguments, or stdin when piped) and stream the result. "
        "The session runs in the shared daemon when one answers on the socket, else in this "
        "process (no daemon is started).",
        epilog=EPILOG,
    )
    send.add_argument("prompt", nargs="*", help="the prompt (default: read stdin)")
    _connection_options(send, stdio=False)
    where = send.add_mutually_exclusive_group()
    where.add_argument(
        "--stdio",
        action="store_true",
        help="run the session privately in this process, even when a shared daemon runs",
    )
    where.add_argument(
        "--daemon-process",
        action="store_true",
        help="run the session in a private daemon process (agentd serve --stdio)",
    )
    where.add_argument(
        "--shared",
        action="store_true",
        help="use the shared daemon, starting it when none runs (also: AGENTCTL_SHARED=1)",
    )
    _session_options(send)
    send.add_argument("--fork", metavar="ID", help="continue in a fork of session ID")
    send.add_argument(
        "--image",
        action="append",
        metavar="FILE",
        help="attach an image (PNG, JPEG, GIF or WebP, at most 5 MB); repeatable",
    )
    send.add_argument(
        "--timeout", type=_positive_float, metavar="SECONDS", help="cancel the run after this"
    )
    send.add_argument(
        "--max-cost",
        type=_positive_float,
        metavar="USD",
        help="stop before a model call that would pass this cost (exit 6)",
    )
    send.add_argument(
        "--max-tokens",
        type=_positive_int,
        metavar="N",
        help="stop before a model call that would pass this many tokens (exit 6)",
    )
    send.add_argument(
        "--result-file", metavar="PATH", help="also write the JSON result line to PATH"
    )
    send.add_argument(
        "--summary-file",
        metavar="PATH",
        help="append a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    )
    send.add_argument(
        "--provider-env-file",
        metavar="PATH",
        help="read provider variables (NAME=VALUE lines, e.g. OPENAI_API_KEY) from PATH, "
        "a pipe such as /dev/fd/3 or a 0600 file, instead of the environment",
    )
    output = send.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print events as JSON lines")
    output.add_argument(
        "-q", "--quiet", action="store_true", help="print only the final assistant text"
    )


def _add_sessions(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sessions = commands.add_parser(
        "sessions", help="list, show, export, fork, rename or delete sessions"
    )
    _connection_options(sessions, stdio=False)
    actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="list sessions (newest first)")
    for parser in (sessions, listing):
        parser.add_argument("--cwd", metavar="DIR", default=None, help="only sessions of DIR")
        parser.add_argument("--limit", type=_positive_int, default=None, metavar="N")
        parser.add_argument("--json", action="store_true", help="print JSON")
    show = actions.add_parser("show", help="print a session's conversation")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print the messages as JSON")
    show.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE_HELP)
    export = actions.add_parser("export", help="export a session as Markdown or HTML")
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--format", choices=("md", "markdown", "html"), default="md")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    fork = actions.add_parser("fork", help="a new session continuing a copy of session ID")
    fork.add_argument("session_id", metavar="ID")
    fork.add_argument("--entry", metavar="ENTRY_ID", help="branch at this entry (default: last)")
    fork.add_argument("--title", help="the fork's title")
    fork.add_argument("--json", action="store_true", help="print the new session as JSON")
    rename = actions.add_parser("rename", help="set a session's title")
    rename.add_argument("session_id", metavar="ID")
    rename.add_argument("title", nargs="+", metavar="TITLE")
    remove = actions.add_parser("rm", help="delete a session")
    remove.add_argument("session_id", metavar="ID")
    remove.add_argument("--force", action="store_true", help="delete even while it runs")


def _add_daemon(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    daemon = commands.add_parser("daemon", help="start, stop or inspect the shared daemon")
    _connection_options(daemon, stdio=False)
    actions = daemon.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("start", help="start the daemon in the background")
    actions.add_parser("stop", help="stop the daemon")
    actions.add_parser("status", help="show whether it runs, its pid, uptime and load")
    metrics = actions.add_parser(
        "metrics",
        help="its load and counts: sessions, runs, queues, loop lag, bytes out, errors, tokens",
    )
    metrics.add_argument("--json", action="store_true", help="the daemon/metrics result as JSON")
    logs = actions.add_parser("logs", help="print the daemon log")
    logs.add_argument("-n", "--lines", type=int, default=50, help="last N lines (default 50)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    logs.add_argument("--json", action="store_true", help="the raw JSON lines, not pretty")


def _add_small_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = commands.add_parser("chat", help="interactive session (REPL)")
    _connection_options(chat, stdio=True)
    _session_options(chat)
    attach = commands.add_parser("attach", help="follow a session's events")
    _connection_options(attach, stdio=False)
    attach.add_argument("session_id", metavar="ID")
    attach.add_argument("--since", type=int, metavar="SEQ", help="replay events after SEQ")
    attach.add_argument("--json", action="store_true", help="print events as JSON lines")
    attach.add_argument(
        "--until-end", action="store_true", help="exit after the next run of the session ends"
    )
    cancel = commands.add_parser("cancel", help="cancel a session's running run")
    _connection_options(cancel, stdio=False)
    cancel.add_argument("session_id", metavar="ID")
    status = commands.add_parser("status", help="daemon status")
    _connection_options(status, stdio=False)
    status.add_argument("--json", action="store_true", help="print JSON")
    rpc = commands.add_parser("rpc", help="send one raw JSON-RPC request")
    _connection_options(rpc, stdio=True)
    rpc.add_argument("method", nargs="?", help="the method (none: list the methods)")
    rpc.add_argument("params", nargs="?", default=None, metavar="JSON", help="params object")
    rpc.add_argument("--events", action="store_true", help="also print session/event lines")
    trust = commands.add_parser(
        "trust",
        help="trust a folder's .agentd.toml (list, revoke)",
        description="Trust DIR (default: the current folder): its .agentd.toml, and those "
        "below it, may then choose providers, allow rules, the permission mode and sandbox. "
        "Until then a project file may only tighten settings.",
    )
    trust.add_argument("dir", nargs="?", default=None, metavar="DIR")
    which = trust.add_mutually_exclusive_group()
    which.add_argument("--list", action="store_true", help="print the trusted folders")
    which.add_argument("--revoke", action="store_true", help="stop trusting DIR")
    trust.add_argument(
        "--force",
        action="store_true",
        help="trust even /, your home folder or a folder anyone can write to (refused otherwise)",
    )
    _mcp_parser(commands)
    _lsp_parser(commands)
    _skills_parser(commands)
    web = commands.add_parser("web", help="open the web chat of the shared daemon")
    _connection_options(web, stdio=False)
    web.add_argument("--app", action="store_true", help="open a Chromium/Chrome app window")
    web.add_argument("--no-open", action="store_true", help="only print the link")
    web.add_argument("--cwd", metavar="DIR", help="where the page starts new sessions")
    web.add_argument(
        "--port", type=int, metavar="N", help="port when the web chat is not running yet"
    )
    bridge = commands.add_parser("bridge", help="pipe stdio to the daemon socket (for editors)")
    bridge.add_argument("bridge_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _mcp_parser(commands: Any) -> None:
    mcp = commands.add_parser("mcp", help="MCP servers: list, add, remove, login, logout")
    which = mcp.add_subparsers(dest="mcp_command", required=True, metavar="ACTION")
    listing = which.add_parser("list", help="servers of this folder: state, tools, source")
    _connection_options(listing, stdio=True)
    listing.add_argument("--cwd", metavar="DIR", help="the project folder (default: here)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "--check", action="store_true", help="connect to each server and list its tools (✓/✗)"
    )
    login = which.add_parser("login", help="sign in to an HTTP server that asks for OAuth")
    _connection_options(login, stdio=True)
    login.add_argument("name", metavar="NAME")
    login.add_argument("--cwd", metavar="DIR", help="the project folder (default: here)")
    login.add_argument(
        "--no-browser", action="store_true", help="print the address only, open no browser"
    )
    login.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="wait this long (300)"
    )
    logout = which.add_parser("logout", help="forget a server's stored OAuth tokens")
    _connection_options(logout, stdio=True)
    logout.add_argument("name", metavar="NAME")
    logout.add_argument("--cwd", metavar="DIR", help="the project folder (default: here)")
    add = which.add_parser(
        "add",
        help="add a server to the user config",
        usage="agentctl mcp add NAME [--env NAME=VALUE]… (-- COMMAND [ARG…] | --url URL)",
    )
    add.add_argument("words", nargs=argparse.REMAINDER, metavar="NAME …")
    remove = which.add_parser("remove", help="remove a server from the user config")
    remove.add_argument("name", metavar="NAME")


def _lsp_parser(commands: Any) -> None:
    lsp = commands.add_parser("lsp", help="language servers the daemon runs: list")
    which = lsp.add_subparsers(dest="lsp_command", required=True, metavar="ACTION")
    listing = which.add_parser("list", help="each server: state, root, pid, documents, error")
    _connection_options(listing, stdio=False)
    listing.add_argument("--json", action="store_true", help="print JSON")


def _skills_parser(commands: Any) -> None:
    skills = commands.add_parser("skills", help="Agent Skills: list, check")
    which = skills.add_subparsers(dest="skills_command", required=True, metavar="ACTION")
    listing = which.add_parser("list", help="the skills sessions here can load, and where from")
    _connection_options(listing, stdio=True)
    listing.add_argument("--cwd", metavar="DIR", help="the project folder (default: here)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    check = which.add_parser("check", help="check a skill folder before sessions use it")
    _connection_options(check, stdio=True)
    check.add_argument("path", metavar="PATH", help="the skill folder (or its SKILL.md)")


def mcp_add_parser() -> argparse.ArgumentParser:
    """The words of ``agentctl mcp add`` before ``--`` (the command follows it)."""
    parser = _Parser(prog="agentctl mcp add")
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("--url", help="a streamable HTTP server's URL")
    parser.add_argument("--env", action="append", metavar="NAME=VALUE", help="a variable for it")
    return parser


def _add_rewind(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rewind = commands.add_parser(
        "rewind",
        help="take a session back to before a prompt, files included",
        description="Go back to before the N-th last prompt of session ID (default: the latest "
        "session of the working directory): the conversation, and the files its runs changed. "
        "A rewind that meets conflicts (files changed outside agentd since, or whose earlier "
        "content was not kept) moves nothing: on a terminal it shows them and asks, else it "
        "exits 9; --force rewinds to before the same prompt anyway.",
    )
    _connection_options(rewind, stdio=False)
    rewind.add_argument("session_id", nargs="?", default=None, metavar="ID")
    rewind.add_argument("--turns", type=_positive_int, metavar="N", help="prompts back (1)")
    rewind.add_argument("--entry", metavar="ENTRY_ID", help="to before this user message")
    rewind.add_argument("--force", action="store_true", help="rewind even when files conflict")
    rewind.add_argument("--no-files", action="store_true", help="move only the conversation")
    rewind.add_argument("--dry-run", action="store_true", help="only say what it would do")
    rewind.add_argument("--cwd", metavar="DIR", help="whose latest session (default: .)")
    rewind.add_argument("--json", action="store_true", help="print the result as JSON")


def _add_processes(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ps = commands.add_parser("ps", help="background processes of a session (or all loaded)")
    _connection_options(ps, stdio=False)
    ps.add_argument("session_id", nargs="?", default=None, metavar="SESSION")
    ps.add_argument("--json", action="store_true", help="print the result as JSON")
    kill = commands.add_parser("kill", help="end a background process of a session")
    _connection_options(kill, stdio=False)
    kill.add_argument("session_id", metavar="SESSION")
    kill.add_argument("process_id", metavar="ID")


def help_width() -> int:
    """The help text's width as argparse computes it (the terminal's columns less 2), without
    the ``shutil`` import argparse makes for it (``shutil`` loads ``bz2`` and ``lzma``)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(1).columns
    except (ValueError, OSError):
        columns = 80
    return max(columns, 1) - 2


class _Parser(argparse.ArgumentParser):
    """argparse's parser, formatting help without importing ``shutil`` (every sub-parser is
    one too: ``add_subparsers`` makes its parsers of the parent's class)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        """The formatter with an explicit width: argparse's default imports ``shutil``."""
        formatter: Any = self.formatter_class  # typeshed's protocol has no width
        return formatter(prog=self.prog, width=help_width())  # type: ignore[no-any-return]


Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _add_batch(commands: Commands) -> None:
    add_batch_parser(commands, _positive_int, _positive_float)


_SMALL_COMMANDS = frozenset(
    ("chat", "attach", "cancel", "status", "rpc", "trust", "mcp", "lsp", "skills", "web", "bridge")
)
_GRAMMARS: tuple[tuple[frozenset[str], Callable[[Commands], None]], ...] = (
    (frozenset({"send"}), _add_send),
    (_SMALL_COMMANDS, _add_small_commands),
    (frozenset({"sessions"}), _add_sessions),
    (frozenset({"daemon"}), _add_daemon),
    (frozenset({"rewind"}), _add_rewind),
    (frozenset({"ps", "kill"}), _add_processes),
    (frozenset({"batch"}), _add_batch),
)
"""Each part of the grammar and the commands it adds, in the order ``--help`` lists them."""


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The ``agentctl`` parser; ``options.command`` names the chosen command.

    With no ``argv``, or one that does not start with a command's name, it is the full
    grammar. When ``argv[0]`` names a command, only the part of the grammar holding that
    command is built (argparse hands every argument after the command's name to its
    sub-parser, so ``parse_args(argv)`` gives the same namespace, errors and help): building
    all some 110 sub-parsers costs several milliseconds, mostly argparse's ``gettext``
    look-ups, on every ``agentctl send``.
    """
    parser = _Parser(prog="agentctl", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("-V", "--version", action="store_true", help="print the version")
    parser.add_argument("--socket", metavar="PATH", default=None, help=argparse.SUPPRESS)
    commands: Commands = parser.add_subparsers(  # type: ignore[assignment]
        dest="command", metavar="COMMAND", required=True
    )
    chosen = [add for names, add in _GRAMMARS if argv[:1] and argv[0] in names]
    for add in chosen or [add for _, add in _GRAMMARS]:
        add(commands)
    return parser
