"""Deferred logging (``agentd.log``): events kept until structlog is set up, then written
in order with the time and RPC context they had."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd import log
from agentd.rpc import context


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "agentd.log"
    log.configure("info", path, deferred=True)
    try:
        yield path
    finally:
        log.close()


def _lines(path: Path) -> list[dict[str, Any]]:
    log.close()  # the writer thread writes what it holds
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_events_are_kept_until_ready_with_their_time_and_context(log_file: Path) -> None:
    logger = log.get_logger("agentd.test")
    token = context.conn_id.set(7)
    try:
        logger.info("first", n=1)
    finally:
        context.conn_id.reset(token)
    logger.debug("below the level")
    time.sleep(0.01)  # so that a time stamped at write time would differ
    before_ready = time.time()
    assert log_file.read_text() == ""
    log.ready()
    logger.info("second", n=2)
    first, second = _lines(log_file)
    assert (first["event"], first["n"], first["conn_id"], first["level"]) == ("first", 1, 7, "info")
    assert "conn_id" not in second
    stamp = first["timestamp"].removesuffix("Z")
    from datetime import UTC, datetime

    assert datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp() < before_ready
    assert second["event"] == "second"


def test_a_warning_makes_logging_ready_at_once(log_file: Path) -> None:
    logger = log.get_logger("agentd.test")
    logger.info("kept")
    logger.warning("disk full", free=0)
    events = [line["event"] for line in _lines(log_file)]
    assert events == ["kept", "disk full"]


def test_an_exception_keeps_its_traceback(log_file: Path) -> None:
    logger = log.get_logger("agentd.test")
    try:
        raise ValueError("broken thing")
    except ValueError:
        logger.exception("it failed")
    (line,) = _lines(log_file)
    assert line["level"] == "error"
    assert "ValueError: broken thing" in line["exception"]


def test_stdlib_records_are_kept_too(log_file: Path) -> None:
    import logging

    logging.getLogger("asyncio").info("from the stdlib")
    log.ready()
    (line,) = _lines(log_file)
    assert (line["event"], line["logger"]) == ("from the stdlib", "asyncio")


def test_events_wait_when_structlog_cannot_be_imported_yet(
    log_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of file descriptors, the import fails: the warning stays kept, nothing is lost."""
    import sys

    monkeypatch.setitem(sys.modules, "structlog", None)  # makes ``import structlog`` fail
    log.get_logger("agentd.test").warning("out of file descriptors")
    assert log_file.read_text() == ""
    monkeypatch.undo()
    log.ready()
    assert [line["event"] for line in _lines(log_file)] == ["out of file descriptors"]


def test_settled_events_are_written_plainly_without_structlog(tmp_path: Path) -> None:
    """``settle`` writes the kept events, and every later one as it comes, as the same JSON
    lines (context, level, the time they had, secrets redacted), structlog never imported."""
    import subprocess
    import sys

    path = tmp_path / "agentd.log"
    code = f"""
import sys
from pathlib import Path
from agentd import log
log.configure("info", Path({str(path)!r}), deferred=True, background=False)
log.bind_context(session_id="s1")
log.get_logger("agentd.test").info("kept", token="Bearer abcdefghijklmnop")
log.settle()
log.get_logger("agentd.test").warning("later", n=2)
log.close()
print("structlog" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
    kept, later = (json.loads(line) for line in path.read_text().splitlines())
    assert (kept["event"], kept["level"], kept["session_id"]) == ("kept", "info", "s1")
    assert "abcdefghijklmnop" not in kept["token"]
    assert kept["timestamp"].endswith("Z")
    assert (later["event"], later["level"], later["n"]) == ("later", "warning", 2)
