"""The output folder on disk: ``results.jsonl``, ``batch.json`` and the artifacts.

``results.jsonl`` is only appended to, one whole line per ``write`` on a file opened with
``O_APPEND`` (and flushed to disk), so a reader never sees half a record from a live batch;
a last line without its newline (a machine that lost power mid-write) is ignored and cut off
when the file is opened again. The latest record of an id is its result. Every other file
is written under a temporary name and renamed into place.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from agentctl.batch.records import BatchFile, ResultRecord, decode_record, encode_record

RESULTS = "results.jsonl"
BATCH_FILE = "batch.json"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as a whole: a temporary file beside it, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("wb") as out:
        out.write(data)
    temporary.replace(path)


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class ResultsFile:
    """``DIR/results.jsonl`` opened for appending (see the module docstring)."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / RESULTS
        out_dir.mkdir(parents=True, exist_ok=True)
        _cut_partial_line(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: ResultRecord) -> None:
        """Add ``record`` as one line, on disk when this returns."""
        line = encode_record(record)
        written = os.write(self._fd, line)
        if written != len(line):  # a full disk: never leave part of a line behind
            raise OSError(f"{self.path}: short write ({written} of {len(line)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def _cut_partial_line(path: Path) -> None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as out:
            out.truncate(data.rfind(b"\n") + 1)


def read_records(out_dir: Path) -> Iterator[ResultRecord]:
    """Every complete, valid record of ``results.jsonl`` in order (none when it is missing)."""
    try:
        handle = (out_dir / RESULTS).open("rb")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            if not line.endswith(b"\n"):
                return
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                yield decode_record(line)


def latest_records(out_dir: Path) -> dict[str, ResultRecord]:
    """The latest record of each task id."""
    latest: dict[str, ResultRecord] = {}
    for record in read_records(out_dir):
        latest[record.id] = record
    return latest


def latest_statuses(out_dir: Path) -> dict[str, tuple[str, int]]:
    """Each task id's latest status and the number of its records (its attempts so far);
    only small values are kept, whatever the size of the file."""
    found: dict[str, tuple[str, int]] = {}
    for record in read_records(out_dir):
        found[record.id] = (record.status, found.get(record.id, ("", 0))[1] + 1)
    return found


def read_batch_file(out_dir: Path) -> BatchFile | None:
    """``DIR/batch.json``, or None when there is none (or it is not one)."""
    try:
        return msgspec.json.decode((out_dir / BATCH_FILE).read_bytes(), type=BatchFile)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def write_batch_file(out_dir: Path, batch: BatchFile) -> None:
    write_atomic(out_dir / BATCH_FILE, msgspec.json.format(msgspec.json.encode(batch)) + b"\n")
