"""Logging for the daemon: structlog, JSON lines, to stderr or a file, never to stdout.

A log file is written by its own thread (:class:`BackgroundWriter`), so a busy disk never
holds the event loop; the daemon writes what is queued before it exits.

structlog is not light to import (some 15 ms), and the daemon's first answer must not wait
for it: the daemon's own modules log through :func:`get_logger`, and ``configure(...,
deferred=True)`` keeps their events (with their time and RPC context) in memory until
:func:`ready` imports and configures structlog and writes them, in order. A ``--stdio``
daemon (and agentctl's in-process one-shot) configures it so. One second after start
(``--stdio``), right after a daemon's first ``initialize`` answer, and at exit the events
are settled (:func:`settle`): written, and every later one as it comes, as the same JSON
lines without structlog, so a one-shot run or a private daemon never imports it; a warning
or error before that, or an event with a traceback, sets structlog up (:func:`ready`).

:func:`configure` is called once at start-up (again only in tests). Every line is one JSON
object with ``timestamp``, ``level``, ``event``, the bound context (``conn_id`` and
``request_id`` from :mod:`agentd.rpc.context`, plus anything bound with :func:`bind_context`
or ``structlog.contextvars``) and the call's own fields. Records of stdlib loggers (asyncio, httpx,
``agentd.rpc``) are routed into the same stream, keeping their ``extra`` fields and tracebacks.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
import threading
import time
from collections.abc import MutableMapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from agentd.rpc import context

LEVELS = ("debug", "info", "warning", "error", "critical")
"""Accepted ``--log-level`` values."""

_open_file: Any = None
_RECORD_ATTRS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
_QUIET_LOGGERS = ("pygls", "httpx", "httpcore", "hpack")


def add_rpc_context(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """structlog processor: add ``conn_id`` / ``request_id`` of the current task, if set."""
    for key, value in context.current().items():
        event.setdefault(key, value)
    return event


class _StdlibToStructlog(logging.Handler):
    """Forwards stdlib log records into structlog, so there is one JSON stream."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = {
                key: value
                for key, value in record.__dict__.items()
                if key not in _RECORD_ATTRS and not key.startswith("_") and key != "event"
            }
            if record.exc_info:
                fields["exc_info"] = record.exc_info
            _emit("", _LEVEL_NAMES.get(record.levelno, "info"), record.getMessage(),
                  {"logger": record.name, **fields})  # fmt: skip
        except Exception:
            self.handleError(record)


class BackgroundWriter:
    """A log file written by its own thread, so a busy disk never holds the event loop.

    :meth:`write` queues the line (at most ``limit`` lines wait; beyond that lines are
    dropped and counted, and a ``log lines dropped`` line with the count is written as soon
    as the writer gets going again);
    :meth:`close` writes what is queued and closes the file.
    """

    def __init__(self, file: TextIO, limit: int = 100_000) -> None:
        import queue

        self._file = file
        self._lines: queue.Queue[str | None] = queue.Queue(maxsize=limit)
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, name="log-writer", daemon=True)
        self._thread.start()

    def write(self, text: str) -> int:
        try:
            self._lines.put_nowait(text)
        except Exception:  # queue.Full: the disk is stalled and the queue is full
            self.dropped += 1
        return len(text)

    def flush(self) -> None:
        """Nothing to do: the writer thread flushes every line."""

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (waiting at most ``timeout`` s), then close the file."""
        with contextlib.suppress(Exception):
            self._lines.put(None, timeout=timeout)
        self._thread.join(timeout)
        with contextlib.suppress(OSError, ValueError):
            self._file.close()

    def _drain(self) -> None:
        while (line := self._lines.get()) is not None:
            with contextlib.suppress(OSError, ValueError):
                if self.dropped:
                    dropped, self.dropped = self.dropped, 0
                    self._file.write(f'{{"event": "log lines dropped", "count": {dropped}}}\n')
                self._file.write(line)


def open_log_file(path: Path) -> TextIO:
    """Open ``path`` for appending (mode 0600, parent directory 0700), line-buffered."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return os.fdopen(fd, "a", buffering=1, encoding="utf-8", errors="replace")


_redactor: Any = None


def redact_line(_logger: Any, _method: str, line: Any) -> str:
    """structlog processor, last: the rendered JSON line with credential-shaped values and
    the daemon's own credentials replaced (the same redaction as the session files)."""
    global _redactor
    if _redactor is None:
        from agentd.config.credentials import credential_env_names
        from agentd.redact import Redactor

        _redactor = Redactor({os.environ[n] for n in credential_env_names(os.environ)})
    return str(_redactor.json(str(line).encode()).decode())


class _Setup:
    """What :func:`configure` chose, and the events kept until :func:`ready`."""

    level_no = logging.INFO
    sink: Any = None
    stderr_level: str | None = None
    ready = True
    plain = False
    """Events are written as they come, without structlog (:func:`settle`)."""
    kept: list[tuple[str, str, str, dict[str, Any]]] = []


_LEVEL_NAMES = {10: "debug", 20: "info", 30: "warning", 40: "error", 50: "critical"}
_KEEP_AT_MOST = 2000
"""Events kept before :func:`ready`; one more makes it ready at once."""


class Logger:
    """A named logger with structlog's methods (``debug`` … ``exception``), usable before
    structlog is imported (see the module docstring). Get one with :func:`get_logger`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, event: str, **fields: Any) -> None:
        _emit(self.name, "debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        _emit(self.name, "info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        _emit(self.name, "warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        _emit(self.name, "error", event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """An error with the exception being handled (its traceback goes to the log)."""
        fields.setdefault("exc_info", sys.exc_info())
        _emit(self.name, "error", event, fields)


_bound: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("agentd_log_bound")


def bind_context(**fields: Any) -> None:
    """Add ``fields`` to every event logged from now on in this context (and the tasks it
    starts), as ``structlog.contextvars.bind_contextvars`` does, without importing structlog."""
    _bound.set({**_bound.get({}), **fields})


def _merge_bound(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """structlog processor: the fields of :func:`bind_context` (the call's own win)."""
    for key, value in _bound.get({}).items():
        event.setdefault(key, value)
    return event


def get_logger(name: str) -> Logger:
    """The logger ``name`` (cheap: structlog is imported only when logging is :func:`ready`)."""
    return Logger(name)


def _emit(name: str, level: str, event: str, fields: dict[str, Any]) -> None:
    if _Setup.ready:
        _write(name, level, event, fields)
        return
    if logging.getLevelNamesMapping()[level.upper()] < _Setup.level_no:
        return
    fields = {**context.current(), **_bound.get({}), **fields}
    fields["_recorded_at"] = time.time()
    if _Setup.plain and "exc_info" not in fields:
        _write_plainly(level, event, fields)
        return
    _Setup.kept.append((name, level, event, fields))
    if (
        _Setup.plain
        or level in ("warning", "error", "critical")
        or len(_Setup.kept) > _KEEP_AT_MOST
    ):
        ready()


def _write(name: str, level: str, event: str, fields: dict[str, Any]) -> None:
    import structlog

    logger = structlog.get_logger(name) if name else structlog.get_logger()
    getattr(logger, level)(event, **fields)


def _recorded_time(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """structlog processor (after the time stamper): a kept event keeps the time it had."""
    recorded = event.pop("_recorded_at", None)
    if recorded is not None:
        stamp = datetime.fromtimestamp(recorded, UTC).isoformat()
        event["timestamp"] = stamp.replace("+00:00", "Z")
    return event


def configure(
    level: str = "info",
    log_file: Path | None = None,
    *,
    deferred: bool = False,
    stderr_level: str | None = None,
    background: bool = True,
) -> None:
    """Send every log line, as JSON, to ``log_file`` (appended) or else to ``sys.stderr``.

    ``level`` is one of :data:`LEVELS`; raises ``ValueError`` for anything else. With
    ``deferred``, structlog is set up only when :func:`ready` is called (see the module
    docstring); events logged until then are kept. ``stderr_level`` (with a ``log_file``):
    lines at that level and above also go to ``sys.stderr`` (for a process whose stderr
    nobody may read: a few lines, never a flood). ``background`` False writes the file from
    the logging thread itself (no writer thread: for a short-lived process that logs little).
    """
    if level not in LEVELS or (stderr_level is not None and stderr_level not in LEVELS):
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    global _open_file
    level_no = logging.getLevelNamesMapping()[level.upper()]
    previous = _open_file
    out = open_log_file(log_file) if log_file is not None else None
    _Setup.level_no = level_no
    _Setup.sink = (BackgroundWriter(out) if background else out) if out is not None else sys.stderr
    _Setup.stderr_level = stderr_level if out is not None else None
    _Setup.ready = False
    _Setup.plain = False
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_StdlibToStructlog())
    root.setLevel(level_no)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(level_no, logging.WARNING))
    logging.captureWarnings(True)
    if previous is not None:
        previous.close()
    _open_file = _Setup.sink if out is not None else None
    if not deferred:
        ready()


def ready() -> None:
    """Import and configure structlog (once per :func:`configure`), then write the events
    kept until now, in order. Cheap when already done. If structlog cannot be imported now
    (no file descriptor left), the events stay kept for the next call."""
    if _Setup.ready:
        return
    try:
        import structlog
    except (ImportError, OSError):  # out of file descriptors, say: kept until the next call
        return
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            _merge_bound,
            add_rpc_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _recorded_time,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(default=str),
            redact_line,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_Setup.level_no),
        logger_factory=_logger_factory(structlog),
        cache_logger_on_first_use=False,
    )
    _Setup.ready = True
    _Setup.plain = False
    kept, _Setup.kept = _Setup.kept, []
    if kept:  # each kept event carries its own context: none from the caller's is added
        contextvars.Context().run(_write_kept, kept)


def _logger_factory(structlog: Any) -> Any:
    """structlog's writer to the sink, or (``stderr_level``) a :class:`_SplitLogger`."""
    if _Setup.stderr_level is None:
        return structlog.WriteLoggerFactory(file=_Setup.sink)
    threshold = logging.getLevelNamesMapping()[_Setup.stderr_level.upper()]
    return lambda *_args: _SplitLogger(_Setup.sink, threshold)


class _SplitLogger:
    """Writes every line to the sink, and those at ``threshold`` and above to stderr too."""

    def __init__(self, sink: Any, threshold: int) -> None:
        self._sink = sink
        self._threshold = threshold

    def _line(self, level: int, message: str) -> None:
        self._sink.write(message + "\n")
        self._sink.flush()
        if level >= self._threshold:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()

    def debug(self, message: str) -> None:
        self._line(logging.DEBUG, message)

    def info(self, message: str) -> None:
        self._line(logging.INFO, message)

    msg = info

    def warning(self, message: str) -> None:
        self._line(logging.WARNING, message)

    warn = warning

    def error(self, message: str) -> None:
        self._line(logging.ERROR, message)

    exception = error

    def critical(self, message: str) -> None:
        self._line(logging.CRITICAL, message)

    fatal = critical


def _write_kept(kept: list[tuple[str, str, str, dict[str, Any]]]) -> None:
    for name, level, event, fields in kept:
        _write(name, level, event, fields)


def settle() -> None:
    """Stop keeping events: write them, and every later one, plainly (:func:`_go_plain`), or
    else set structlog up (:func:`ready`). The ``--stdio`` daemon calls it one second after
    start; :func:`close` at exit."""
    if not _Setup.ready and not _Setup.plain and not _go_plain():
        ready()


def _go_plain() -> bool:
    """Write the kept events, and from now on each event as it comes, as :func:`ready`'s
    processors would (the same JSON line, redacted), without importing structlog: a process
    that logs only plain lines (a one-shot run, a private daemon) never needs it. An event
    with a traceback still sets structlog up. False when structlog is loaded anyway, lines
    also go to stderr (``stderr_level``), or a kept event holds a traceback."""
    if "structlog" in sys.modules or _Setup.stderr_level is not None or _Setup.sink is None:
        return False
    if any("exc_info" in fields for *_, fields in _Setup.kept):
        return False
    kept, _Setup.kept = _Setup.kept, []
    for _name, level, event, fields in kept:
        _write_plainly(level, event, fields)
    _Setup.plain = True
    return True


def _write_plainly(level: str, event: str, fields: dict[str, Any]) -> None:
    import json

    line = {k: v for k, v in fields.items() if k != "_recorded_at"}
    line.update(event=event, level=level)
    line.update(_recorded_time(None, "", {"_recorded_at": fields["_recorded_at"]}))
    _Setup.sink.write(redact_line(None, "", json.dumps(line, default=str)) + "\n")
    _Setup.sink.flush()


def close() -> None:
    """Write the kept events (without structlog when it was never needed:
    :func:`_write_kept_plainly`) and what the log file's writer holds, and close the file
    opened by :func:`configure` (logging then goes nowhere useful)."""
    global _open_file
    settle()
    if _open_file is not None:
        _open_file.close()
        _open_file = None
