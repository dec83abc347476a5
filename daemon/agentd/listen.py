"""Running the daemon: :func:`serve` picks the transports (:mod:`agentd.transports`) from
the options, sets up logging and hardening, and runs until shutdown."""

from __future__ import annotations

import asyncio
import sys

from agentd import log as logging_setup
from agentd import paths
from agentd.daemon import DaemonOptions, Listener, build_daemon
from agentd.housekeeping import end_processes, loop_exception, start_orphan_sweep
from agentd.log import get_logger, settle
from agentd.stdio import detach_stdio
from agentd.transports import (
    HttpListener,
    ListenError,
    Listeners,
    StdioListener,
    TcpListener,
    UnixListener,
    refuse_tcp_tool_peer,
)

log = get_logger("agentd.listen")

LOGGING_READY_AFTER = 1.0
"""Seconds after start by which logging is set up even if no client has initialized."""

__all__ = [
    "HttpListener",
    "ListenError",
    "Listeners",
    "StdioListener",
    "TcpListener",
    "UnixListener",
    "detach_stdio",
    "serve",
]


# --- running ----------------------------------------------------------------------------


def make_listener(options: DaemonOptions, stdio: tuple[int, int] | None = None) -> Listener:
    """The listener for ``options.transport`` and ``options.http`` (``stdio`` needs the
    detached descriptors)."""
    if options.http is None:
        return _transport_listener(options, stdio)
    web = HttpListener(*options.http, allow_remote=options.allow_remote)
    if options.transport == "none":
        return web
    return Listeners(_transport_listener(options, stdio), web)


def _transport_listener(options: DaemonOptions, stdio: tuple[int, int] | None) -> Listener:
    if options.transport == "stdio":
        if stdio is None:
            raise ValueError("the stdio transport needs the descriptors from detach_stdio()")
        return StdioListener(*stdio)
    if options.transport == "tcp":
        token_file = options.token_file or paths.default_token_file()
        return TcpListener(
            options.tcp_host,
            options.tcp_port,
            token_file=token_file,
            allow_remote=options.allow_remote,
        )
    return UnixListener(options.socket_path or paths.default_socket_path())


def serve(options: DaemonOptions) -> int:
    """Run the daemon in this process until it is shut down; return the exit code.

    0 after a graceful stop; 1 when the transport cannot start or an operating system error
    stops the daemon (one line to stderr; details in the log).
    """
    stdio = detach_stdio() if options.transport == "stdio" else None
    from agentd.hardening import make_undumpable

    make_undumpable()  # same-uid processes (the commands bash runs) cannot read our memory

    log_file = options.log_file
    if log_file is None and options.transport != "stdio":
        log_file = paths.default_log_file()
    # A private --stdio daemon answers its client before setting up structlog (agentd.log);
    # a shared daemon sets it up first: it may soon be short of descriptors to import it.
    logging_setup.configure(options.log_level, log_file, deferred=options.transport == "stdio")
    if log_file is not None:
        paths.add_masked_file(log_file)  # sandboxed commands do not read it
    listener = make_listener(options, stdio)
    try:
        return asyncio.run(_run(options, listener))
    except ListenError as exc:
        log.error("cannot start", reason=str(exc))
        print(f"agentd: {exc}", file=sys.stderr)
    except OSError as exc:
        log.exception("stopped by an operating system error")
        print(f"agentd: {exc}", file=sys.stderr)
    return 1


async def _run(options: DaemonOptions, listener: Listener) -> int:
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(loop_exception)
    loop.call_later(LOGGING_READY_AFTER, settle)  # at the latest (see agentd.log)
    start_orphan_sweep()
    daemon = build_daemon(options, refuse_tcp_tool_peer)  # the web front-end's peer check
    try:
        return await daemon.run(listener)
    finally:
        await asyncio.to_thread(end_processes)
