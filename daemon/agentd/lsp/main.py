"""``agentd lsp``: agentd as a language server on stdin/stdout (pygls).

stdout carries LSP messages only. Logging never fills an unread stderr pipe (pygls' own
client, among others, never reads it): warnings and errors go to stderr, everything at the
chosen level to the log file (``--log-file``, default ``$XDG_STATE_HOME/agentd/lsp.log``);
pygls' own loggers are held at WARNING. The process gets the daemon's hardening. When the
editor sends ``shutdown``/``exit`` or closes stdin, the runs are cancelled and the session
files flushed; the exit code is 0 after a ``shutdown``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentd.frontend import FrontEndOptions


READY_AFTER = 1.0
"""Seconds after start when the kept log events are written (a warning writes them at once)."""


class _Writer:
    """pygls' writer interface over an asyncio stream: writes never block the loop."""

    def __init__(self, stream: asyncio.StreamWriter) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        if not self._stream.is_closing():
            self._stream.write(data)

    def close(self) -> None:
        self._stream.close()


class _Reader:
    """pygls' reader interface over an asyncio stream (a cut message reads as the end)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        try:
            return await self._stream.readline()
        except ValueError:  # a header line over the stream's limit: not LSP
            return b""

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def _pygls_records(record: Any) -> bool:
    """pygls' own records, kept off stderr: its traceback of an error it answered to the
    editor (a bad command, a cancelled request) is dropped (the editor has it), and its
    warnings go to the log file only (a ``$/cancelRequest`` of a finished request, an unknown
    notification: editors send those all day, and an unread stderr pipe would fill). Its
    errors and every other record pass unchanged."""
    import logging

    if not record.name.startswith("pygls"):
        return True
    from pygls.exceptions import JsonRpcException

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, JsonRpcException) and exc.code != -32603:
        return False
    if str(record.msg).startswith("Unable to deserialize message"):
        record.exc_info = None  # answered -32602 (AgentdProtocol): no traceback on stderr
        record.levelno = logging.WARNING
    if record.levelno < logging.ERROR:
        record.levelno, record.levelname = logging.INFO, "INFO"
    return True


def default_log_file() -> Path:
    """``$XDG_STATE_HOME/agentd/lsp.log``."""
    from agentd.paths import state_dir

    return state_dir() / "lsp.log"


def run(options: FrontEndOptions, log_file: Path | None, log_level: str) -> int:
    """Serve LSP on this process's stdio; return the exit code."""
    import logging

    from agentd import log as logging_setup
    from agentd.hardening import make_undumpable
    from agentd.stdio import detach_stdio

    fds = detach_stdio()
    make_undumpable()  # like the daemon: the commands bash runs cannot read our memory (keys)
    try:
        logging_setup.configure(log_level, log_file or default_log_file(), stderr_level="warning")
    except (ValueError, OSError) as exc:
        print(f"agentd lsp: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("pygls").setLevel(logging.WARNING)  # it logs every message at INFO
    for handler in logging.getLogger().handlers:  # agentd's: every stdlib record goes there
        handler.addFilter(_pygls_records)
    try:
        return asyncio.run(_serve(options, fds))
    except KeyboardInterrupt:
        return 130


async def _serve(options: FrontEndOptions, fds: tuple[int, int]) -> int:
    import threading

    from pygls.io_ import run_async

    from agentd import log as logging_setup
    from agentd.housekeeping import loop_exception, start_orphan_sweep
    from agentd.log import get_logger
    from agentd.lsp.server import build_server
    from agentd.stdio import open_stdio

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(loop_exception)
    loop.call_later(READY_AFTER, logging_setup.ready)
    if not options.shared:  # a daemon starts here: what killed daemons left running goes
        start_orphan_sweep()
    reader, writer = await open_stdio(*fds)
    server = build_server(options)
    server.protocol.set_writer(_Writer(writer))
    stop = threading.Event()
    code = 0
    try:
        await run_async(
            stop_event=stop,
            reader=_Reader(reader),
            protocol=server.protocol,
            logger=_quiet_logger(),
            error_handler=server.report_server_error,
        )
    except SystemExit as exc:  # the editor's ``exit``
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        try:
            await server.front.close()
        except Exception:
            get_logger("agentd.lsp").exception("closing the sessions failed")
        writer.close()
        logging_setup.ready()
    return code


def _quiet_logger() -> Any:
    """The message loop's logger, silenced: a message it cannot handle is reported (one
    warning, no traceback) by the server's ``report_server_error``."""
    import logging

    logger = logging.getLogger("agentd.lsp.messages")
    logger.setLevel(logging.CRITICAL)
    return logger
