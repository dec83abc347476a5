"""Logging setup (JSON lines, stdlib routed, context fields) and the XDG path helpers."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import structlog

from agentd import log, paths
from agentd.rpc import context
from tests.harness import scaled, wait_until


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)
        structlog.reset_defaults()
        log.close()


@pytest.mark.usefixtures("restore_logging")
def test_every_log_line_is_json_with_context_and_stdlib_records(short_tmp: Path) -> None:
    """structlog and stdlib loggers share one JSON stream carrying conn/request ids."""
    path = short_tmp / "logs" / "agentd.log"
    log.configure("info", path)
    token_conn, token_req = context.conn_id.set(3), context.request_id.set("r1")
    try:
        structlog.get_logger("agentd.test").info("hello", answer=42)
        structlog.get_logger("agentd.test").debug("filtered out")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("asyncio").exception("task failed", extra={"task": "t1"})
    finally:
        context.conn_id.reset(token_conn)
        context.request_id.reset(token_req)
    log.close()  # the writer thread writes what it holds
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["event"] for line in lines] == ["hello", "task failed"]
    first, second = lines
    assert first["answer"] == 42
    assert first["level"] == "info"
    assert first["conn_id"] == 3
    assert first["request_id"] == "r1"
    assert second["logger"] == "asyncio"
    assert second["request_id"] == "r1"
    assert second["task"] == "t1"
    assert second["level"] == "error"
    assert "RuntimeError: boom" in second["exception"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert oct(path.parent.stat().st_mode & 0o777) == oct(0o700)


@pytest.mark.usefixtures("restore_logging")
def test_unknown_level_is_refused() -> None:
    """A typo in the level is a clear error, not silence."""
    with pytest.raises(ValueError, match="unknown log level"):
        log.configure("loud")


def test_paths_follow_xdg_variables_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each helper reads its variable when called; relative values are ignored."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/7")
    monkeypatch.setenv("XDG_STATE_HOME", "/s")
    monkeypatch.setenv("XDG_DATA_HOME", "/d")
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", "/home/u")
    assert paths.default_socket_path() == Path("/run/user/7/agentd/agentd.sock")
    assert paths.default_token_file() == Path("/run/user/7/agentd/tcp.token")
    assert paths.default_log_file() == Path("/s/agentd/agentd.log")
    assert paths.data_dir() == Path("/d/agentd")
    assert paths.config_dir() == Path("/home/u/.config/agentd")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert paths.runtime_dir() == Path(f"/tmp/agentd-{os.getuid()}")
    assert paths.state_dir() == Path("/home/u/.local/state/agentd")


def test_the_writer_thread_keeps_order_and_close_writes_everything(short_tmp: Path) -> None:
    path = short_tmp / "w.log"
    writer = log.BackgroundWriter(log.open_log_file(path))
    for n in range(5000):
        writer.write(f"line {n}\n")
    writer.close()
    assert path.read_text().splitlines() == [f"line {n}" for n in range(5000)]


class _StuckFile:
    """A log file whose first write blocks until released (a stalled disk)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.release.wait(scaled(10))
        self.lines.append(text)
        return len(text)

    def close(self) -> None:
        """Nothing to close."""


def test_a_full_queue_drops_lines_and_says_how_many() -> None:
    """With the disk stalled, lines past the queue's limit are counted, not kept; the count
    is written as soon as the writer gets going again."""
    stuck = _StuckFile()
    writer = log.BackgroundWriter(cast(Any, stuck), limit=2)
    writer.write("first\n")  # taken by the thread, which blocks writing it
    wait_until(lambda: writer._lines.qsize() == 0, 5, "the thread to take the line", 0.001)
    for n in range(10):
        writer.write(f"line {n}\n")  # two are queued, eight dropped
    assert writer.dropped == 8
    stuck.release.set()
    wait_until(lambda: writer._lines.qsize() == 0, 5, "the queue to drain", 0.001)
    writer.write("after\n")
    writer.close()
    dropped = json.loads(stuck.lines[1])
    assert dropped == {"event": "log lines dropped", "count": 8}
    assert [stuck.lines[0], *stuck.lines[2:]] == ["first\n", "line 0\n", "line 1\n", "after\n"]
