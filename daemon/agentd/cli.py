"""The ``agentd`` command line.

::

    agentd serve [--stdio | --socket [PATH] | --tcp HOST:PORT] [--http [HOST:PORT]] [options]
                 [--provider NAME] [--model NAME]    (new sessions' default provider and model)
    agentd --stdio                       (alias of: agentd serve --stdio)
    agentd acp [--shared [--socket PATH]] [options]   (Agent Client Protocol on stdio)
    agentd mcp [--shared [--socket PATH]] [--http [HOST:PORT]] [options]
                                         (MCP server on stdio or HTTP: agentd_run…)
    agentd schema [--check] [--out DIR]
    agentd mock-llm ...                  (the scripted LLM server used by demos and tests)
    agentd --version

``serve`` without a transport flag means ``--socket``; ``--http`` alone serves only the browser
front-end, and beside a transport flag it serves both. Usage errors print one line and exit 2.
Start-up is kept lean: only ``argparse`` is imported here; each branch imports what it needs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from agentd import __version__

if TYPE_CHECKING:
    from agentd.frontend import FrontEndOptions

SERVE_FLAGS = ("--stdio", "--socket", "--tcp", "--http")
DEFAULT_HTTP = ("127.0.0.1", 8765)
DEFAULT_MCP_HTTP = ("127.0.0.1", 8766)


def help_width() -> int:
    """The help text's width as argparse computes it (the terminal's columns less 2), without
    the ``shutil`` import argparse makes for it (``shutil`` loads ``bz2`` and ``lzma``)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(1).columns
    except (ValueError, OSError):
        columns = 80
    return max(columns, 1) - 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are a single line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        """The formatter with an explicit width: argparse's default imports ``shutil``."""
        formatter: Any = self.formatter_class  # typeshed's protocol has no width
        return formatter(prog=self.prog, width=help_width())  # type: ignore[no-any-return]


def _tcp_address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand except ``mock-llm`` (which has its own)."""
    parser = _Parser(prog="agentd", description="A headless coding-agent daemon (JSON-RPC 2.0).")
    parser.add_argument("--version", action="version", version=f"agentd {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    serve = commands.add_parser("serve", help="run the daemon")
    where = serve.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true", help="one client on stdin/stdout")
    where.add_argument(
        "--socket", nargs="?", const="", metavar="PATH", help="Unix socket (default: XDG path)"
    )
    where.add_argument("--tcp", type=_tcp_address, metavar="HOST:PORT", help="TCP with a token")
    serve.add_argument(
        "--http",
        nargs="?",
        const=DEFAULT_HTTP,
        type=_tcp_address,
        metavar="HOST:PORT",
        help="also serve the web chat (default 127.0.0.1:8765)",
    )
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --tcp or --http"
    )
    serve.add_argument(
        "--tls-cert", type=Path, metavar="FILE", help="serve --http over HTTPS: PEM certificate"
    )
    serve.add_argument("--tls-key", type=Path, metavar="FILE", help="the --tls-cert's private key")
    serve.add_argument(
        "--insecure-http",
        action="store_true",
        help="allow a remote --http without TLS (links and cookies in cleartext)",
    )
    serve.add_argument("--token-file", type=Path, metavar="FILE", help="TCP token file")
    serve.add_argument("--session-dir", type=Path, metavar="DIR", help="where sessions live")
    serve.add_argument("--config", type=Path, metavar="FILE", help="configuration file")
    serve.add_argument("--log-file", type=Path, metavar="FILE", help="append JSON logs here")
    serve.add_argument(
        "--provider", help="provider of new sessions that name none (default: configuration)"
    )
    serve.add_argument(
        "--model", help="model of new sessions that name none (default: configuration)"
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error", "critical"),
        help="minimum level logged (default: info)",
    )
    serve.add_argument(
        "--stall-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="grace period for a client that stops reading (default: 10)",
    )
    serve.add_argument(
        "--auth-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time a TCP client has to send initialize with the token (default: 10)",
    )
    serve.add_argument(
        "--max-unauthenticated",
        type=int,
        default=64,
        metavar="N",
        help="TCP connections allowed to wait for authentication at once (default: 64)",
    )
    serve.add_argument(
        "--idle-unload",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="unload a session without a run unused this long (default: 300; 0: never)",
    )
    serve.add_argument(
        "--max-loaded-sessions",
        type=int,
        default=256,
        metavar="N",
        help="unload the least recently used idle sessions beyond N (default: 256)",
    )
    _add_acp(commands)
    _add_mcp(commands)
    _add_lsp(commands)
    schema = commands.add_parser("schema", help="write schemas/*.json and the protocol tables")
    schema.add_argument("--check", action="store_true", help="only report drift (exit 1)")
    schema.add_argument("--out", type=Path, metavar="DIR", help="schemas directory")
    commands.add_parser("mock-llm", help="run the scripted LLM server (see: mock-llm --help)")
    return parser


def _add_acp(commands: argparse._SubParsersAction[_Parser]) -> None:
    acp = commands.add_parser(
        "acp", help="serve an Agent Client Protocol editor on stdin/stdout (Zed, JetBrains…)"
    )
    _add_front_end_options(acp, "mode of new sessions (default: configuration)")


def _add_mcp(commands: argparse._SubParsersAction[_Parser]) -> None:
    mcp = commands.add_parser(
        "mcp", help="serve MCP on stdin/stdout: tools agentd_run and agentd_reply (Claude…)"
    )
    _add_front_end_options(
        mcp, "mode of new sessions when the caller names none (default: configuration)"
    )
    mcp.add_argument(
        "--root",
        type=Path,
        action="append",
        metavar="DIR",
        help="a folder agentd_run may work in, with its subfolders (repeatable; default: the "
        "folder agentd mcp was started in)",
    )
    mcp.add_argument(
        "--http",
        nargs="?",
        const=DEFAULT_MCP_HTTP,
        type=_tcp_address,
        metavar="HOST:PORT",
        help="serve streamable HTTP at /mcp instead of stdio (default 127.0.0.1:8766); "
        "requests need the token file's token as Authorization: Bearer TOKEN",
    )
    mcp.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --http address"
    )
    mcp.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="--http's token (default: $XDG_RUNTIME_DIR/agentd/mcp.token, created 0600)",
    )


def _add_lsp(commands: argparse._SubParsersAction[_Parser]) -> None:
    lsp = commands.add_parser(
        "lsp", help="serve a language server on stdin/stdout: the agent in any LSP editor"
    )
    _add_front_end_options(lsp, "mode of new sessions (default: configuration)")


def _add_front_end_options(parser: _Parser, mode_help: str) -> None:
    """The options ``agentd acp``, ``agentd mcp`` and ``agentd lsp`` share (all of them:
    :class:`agentd.frontend.FrontEndOptions` and logging): the shared daemon or an in-process
    one and its session folder, the configuration, new sessions' provider, model, mode and
    sandbox."""
    parser.add_argument(
        "--shared",
        action="store_true",
        help="use the shared socket daemon (started if needed), so sessions are shared",
    )
    parser.add_argument("--socket", type=Path, metavar="PATH", help="shared daemon socket")
    parser.add_argument(
        "--session-dir", type=Path, metavar="DIR", help="where sessions live (without --shared)"
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="configuration file")
    parser.add_argument("--provider", help="provider of new sessions (default: configuration)")
    parser.add_argument("--model", help="model of new sessions (default: configuration)")
    parser.add_argument("--permission-mode", choices=("auto", "ask", "read-only"), help=mode_help)
    parser.add_argument(
        "--sandbox",
        choices=("workspace", "none"),
        help="sandbox of new sessions: workspace confines file tools and bash to the session's "
        "folder (what --permission-mode auto needs; default: configuration)",
    )
    parser.add_argument("--log-file", type=Path, metavar="FILE", help="append JSON logs here")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error", "critical"),
        help="minimum level logged (default: info)",
    )


def _front_end_options(ns: argparse.Namespace, command: str) -> FrontEndOptions | None:
    """What every front-end (``agentd acp``, ``lsp``, ``mcp``) was told, as its one options
    Struct; None (after saying why on stderr) when the options do not fit."""
    from agentd.frontend import FrontEndOptions

    if ns.socket is not None and not ns.shared:
        print(f"agentd {command}: --socket needs --shared", file=sys.stderr)
        return None
    if ns.session_dir is not None and ns.shared:
        print(f"agentd {command}: --session-dir is the shared daemon's own", file=sys.stderr)
        return None
    return FrontEndOptions(
        shared=ns.shared,
        socket_path=ns.socket.absolute() if ns.socket else None,
        session_dir=ns.session_dir,
        config_file=ns.config,
        provider=ns.provider,
        model=ns.model,
        permission_mode=ns.permission_mode,
        sandbox=ns.sandbox,
    )


def _mcp(ns: argparse.Namespace) -> int:
    from agentd.mcp_server.main import HttpOptions, run

    options = _front_end_options(ns, "mcp")
    if options is None:
        return 2
    if ns.http is None and (ns.allow_remote or ns.token_file is not None):
        print("agentd mcp: --allow-remote and --token-file go with --http", file=sys.stderr)
        return 2
    http = None
    if ns.http is not None:
        host, port = ns.http
        http = HttpOptions(
            host=host, port=port, allow_remote=ns.allow_remote, token_file=ns.token_file
        )
    roots = [Path(os.path.realpath(root)) for root in ns.root or [Path.cwd()]]
    return run(options, roots, ns.log_file, ns.log_level, http)


def _lsp(ns: argparse.Namespace) -> int:
    from agentd.lsp.main import run

    options = _front_end_options(ns, "lsp")
    return 2 if options is None else run(options, ns.log_file, ns.log_level)


def _normalise(argv: list[str]) -> list[str]:
    """``agentd --stdio ...`` (a transport flag first) means ``agentd serve --stdio ...``."""
    if argv and argv[0].split("=", 1)[0] in SERVE_FLAGS:
        return ["serve", *argv]
    return argv


def run() -> NoReturn:
    """The ``agentd`` command: :func:`main`, then a fast exit.

    Once :func:`main` returns, every frame has been written and the session files are closed;
    the interpreter's teardown (module and object cleanup) would only add time between the
    last frame and the exit that a client waits for, so the process waits for its non-daemon
    threads, flushes its streams and ends at once.
    """
    import logging

    code = main()
    threading = sys.modules.get("threading")
    if threading is not None:  # what the interpreter would wait for: non-daemon threads
        for thread in threading.enumerate():  # (the stdio relay of a file or /dev/null)
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    log_setup = sys.modules.get("agentd.log")
    if log_setup is not None:  # the log file's writer thread writes what it holds
        log_setup.close()
    logging.shutdown()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        print(f"agentd {__version__}")
        return 0
    if args[:1] == ["mock-llm"]:
        return _mock_llm(args[1:])
    parser = build_parser()
    ns = parser.parse_args(_normalise(args))
    if ns.command in ("serve", "acp", "lsp"):
        _without_terminal_extras()
    if ns.command == "serve":
        if (ns.tls_cert is None) != (ns.tls_key is None):
            parser.error("--tls-cert and --tls-key go together")
        return _serve(ns)
    if ns.command == "schema":
        return _schema(ns)
    if ns.command == "acp":
        return _acp(ns)
    if ns.command == "mcp":
        return _mcp(ns)
    if ns.command == "lsp":
        return _lsp(ns)
    parser.error("a command is required: serve, acp, mcp, lsp, schema or mock-llm")
    return 2  # not reached: error() exits


def _without_terminal_extras() -> None:
    """Keep the terminal libraries out of the daemon: it writes JSON logs and renders nothing.

    structlog imports ``rich`` (when installed, as it is for agentctl's Markdown) for pretty
    tracebacks, and ``import httpx`` imports its command-line tool, which imports ``click`` and
    ``pygments``, and structlog's thread-local module tries ``greenlet``: together some 100 ms
    of start-up. A None entry in ``sys.modules`` makes those optional imports fail fast;
    structlog falls back to plain tracebacks and threads, httpx to a stub ``main``. None of
    these packages is used by the daemon itself."""
    for name in ("rich", "click", "greenlet"):
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def _serve(ns: argparse.Namespace) -> int:
    from agentd.daemon import DaemonOptions
    from agentd.listen import serve

    options = DaemonOptions(
        token_file=ns.token_file,
        allow_remote=ns.allow_remote,
        tls_cert=ns.tls_cert,
        tls_key=ns.tls_key,
        insecure_http=ns.insecure_http,
        session_dir=ns.session_dir,
        config_file=ns.config,
        log_file=ns.log_file,
        log_level=ns.log_level,
        stall_timeout=ns.stall_timeout,
        auth_timeout=ns.auth_timeout,
        max_unauthenticated=ns.max_unauthenticated,
        idle_unload=ns.idle_unload,
        max_loaded_sessions=ns.max_loaded_sessions,
        provider=ns.provider,
        model=ns.model,
    )
    options.http = ns.http
    if ns.stdio:
        options.transport = "stdio"
    elif ns.tcp is not None:
        options.transport = "tcp"
        options.tcp_host, options.tcp_port = ns.tcp
    elif ns.http is not None and ns.socket is None:
        options.transport = "none"
    else:
        options.transport = "socket"
        options.socket_path = Path(ns.socket).absolute() if ns.socket else None
    return serve(options)


def _acp(ns: argparse.Namespace) -> int:
    from agentd.acp.main import run

    options = _front_end_options(ns, "acp")
    return 2 if options is None else run(options, ns.log_file, ns.log_level)


def _schema(ns: argparse.Namespace) -> int:
    from agentd import schema

    out = ns.out or schema.default_schema_dir()
    try:
        if ns.check:
            drifted = schema.check(out)
            for name in drifted:
                print(f"agentd: {out / name} is out of date; run `agentd schema`", file=sys.stderr)
            return 1 if drifted else 0
        for path in schema.write(out):
            print(f"wrote {path}", file=sys.stderr)
    except (ValueError, OSError) as exc:
        print(f"agentd: cannot generate {out}: {exc}", file=sys.stderr)
        return 1
    return 0


def _mock_llm(argv: list[str]) -> int:
    try:
        from agentd.mockllm.server import main as mock_main
    except ImportError as exc:
        print(f"agentd: mock-llm is not available: {exc}", file=sys.stderr)
        return 1
    return int(mock_main(argv) or 0)
