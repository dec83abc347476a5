"""Loading a session file: header check, migration, entry decoding, damage reports.

Every line is decoded (so a damaged one is found at load), but a ``message`` entry is then
kept only as its :class:`~agentd.store.refs.MessageRef` (where its line is), so a big file
does not stay decoded in memory. Reading never fails because of one bad entry: a corrupt
line is skipped with a :class:`LoadWarning`, and an incomplete last line (a write cut short
by a crash: no final LF) is skipped and reported so the writer can truncate it away before
its next append. Only a missing or unreadable header makes a file unusable.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.session_file import (
    ENTRY_TYPES,
    SESSION_VERSION,
    MessageEntry,
    SessionHeader,
    entry_decoder,
)
from agentd.redact import Redactor
from agentd.store.migrations import migrate
from agentd.store.refs import ref_of
from agentd.store.tree import LoadWarning, Node, UnknownEntry

_HEADER_DECODER = msgspec.json.Decoder(SessionHeader)
_ENCODER = msgspec.json.Encoder()


class _Probe(msgspec.Struct, rename="camel"):
    """The fields every entry line shares, to tell an unknown type from a corrupt line."""

    type: str
    id: str | None = None
    parent_id: str | None = None


_PROBE_DECODER = msgspec.json.Decoder(_Probe)
_TORN = "skipped an incomplete last line (a write was interrupted)"
CHUNK_SIZE = 8 << 20
"""Bytes read per block while loading."""
HEADER_LIMIT = 1 << 20
"""A first line longer than this is not a session header."""


class LoadedSession(msgspec.Struct):
    """A parsed file: ``valid_size`` is the byte length up to the last complete line."""

    header: SessionHeader
    nodes: list[Node]
    warnings: list[LoadWarning]
    valid_size: int
    size: int


def log_warning(event: str, **fields: object) -> None:
    """Log a store problem: a stdlib record, which :mod:`agentd.log` writes as a JSON line
    with ``fields`` (whether the daemon's log runs on structlog yet or not)."""
    logging.getLogger("agentd.store").warning(event, extra=fields)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a file's entries are built.

    Loading allocates an object graph that stays alive, so the collections that its
    allocations trigger find nothing to free, and each one walks every object of the
    process: with a few big sessions loaded they would cost more than the parsing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_session(path: Path, redactor: Redactor) -> LoadedSession:
    """Load ``path``, migrating (and rewriting) it first if it is an older version.

    The file is read in :data:`CHUNK_SIZE` blocks, so its bytes are never all in memory at
    once. Raises :class:`InvalidParams` when the file has no readable header or a newer
    version, and ``OSError`` when it cannot be read.
    """
    with path.open("rb") as file:
        first = file.readline(HEADER_LIMIT)
        raw_header = _raw_header(path, first)
        if raw_header.get("version", 0) != SESSION_VERSION:
            data, warnings = _migrate_file(path, first + file.read(), raw_header, redactor)
            first = data[: data.index(b"\n") + 1]
            nodes, more = parse_entries(data, len(first))
            parsed = _Parsed(nodes, warnings + more, data.rfind(b"\n") + 1, len(data))
        else:
            parsed = _parse_stream(file, len(first))
    try:
        header = _HEADER_DECODER.decode(first)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"{path}: invalid session header: {exc}") from None
    return LoadedSession(header, parsed.nodes, parsed.warnings, parsed.valid_size, parsed.size)


def _raw_header(path: Path, first: bytes) -> dict[str, Any]:
    if not first.endswith(b"\n"):
        raise InvalidParams(f"{path} is not a session file: it has no complete header line")
    try:
        raw = msgspec.json.decode(first)
    except msgspec.DecodeError as exc:
        raise InvalidParams(f"{path} is not a session file: {exc}") from None
    if not isinstance(raw, dict) or raw.get("type") != "session":
        raise InvalidParams(f"{path} is not a session file: the first line is not a header")
    return raw


class _Parsed(msgspec.Struct):
    nodes: list[Node]
    warnings: list[LoadWarning]
    valid_size: int
    size: int


def _parse_stream(file: BinaryIO, offset: int) -> _Parsed:
    """Decode the entry lines from ``file`` (positioned at byte ``offset``), block by block;
    a line longer than a block is carried over until its LF arrives."""
    parsed = _Parsed([], [], offset, offset)
    line_no, pending = 2, b""
    while chunk := file.read(CHUNK_SIZE):
        data = pending + chunk if pending else chunk
        end = data.rfind(b"\n") + 1
        line_no = _parse_lines(data, 0, end, line_no, parsed, base=parsed.valid_size)
        pending = data[end:]
        parsed.valid_size += end
        parsed.size += len(chunk)
    if pending:
        parsed.warnings.append(LoadWarning(line_no, _TORN))
    return parsed


def parse_entries(data: bytes, start: int) -> tuple[list[Node], list[LoadWarning]]:
    """Decode the entry lines of ``data`` from byte ``start`` (the line after the header).

    Returns the nodes in file order (message entries as references to their lines in
    ``data``) and the warnings (corrupt lines, a torn last line).
    """
    parsed = _Parsed([], [], 0, 0)
    end = data.rfind(b"\n") + 1
    line_no = _parse_lines(data, start, end, 2, parsed)
    if end < len(data):
        parsed.warnings.append(LoadWarning(line_no, _TORN))
    return parsed.nodes, parsed.warnings


def _parse_lines(
    data: bytes, pos: int, end: int, line_no: int, parsed: _Parsed, *, base: int = 0
) -> int:
    """Decode the complete lines in ``data[pos:end]`` into ``parsed`` (``data`` begins at
    byte ``base`` of the file); return the next line number."""
    view = memoryview(data)
    decode = entry_decoder().decode
    nodes, warnings = parsed.nodes, parsed.warnings
    while pos < end:
        newline = data.find(b"\n", pos, end)
        if newline > pos:
            line = view[pos:newline]
            try:
                entry = decode(line)
            except msgspec.DecodeError as exc:  # ValidationError is a subclass
                node = _unknown_or_none(line, line_no, exc, warnings)
                if node is not None:
                    nodes.append(node)
            else:
                if isinstance(entry, MessageEntry) and entry.id:
                    nodes.append(ref_of(entry, base + pos, newline - pos))
                elif entry.id:
                    nodes.append(entry)
                else:
                    warnings.append(LoadWarning(line_no, "skipped an entry without an id"))
        pos, line_no = newline + 1, line_no + 1
    return line_no


def _unknown_or_none(
    line: memoryview, line_no: int, error: Exception, warnings: list[LoadWarning]
) -> UnknownEntry | None:
    """An :class:`UnknownEntry` for a line of an unknown type; else a warning and ``None``."""
    try:
        probe = _PROBE_DECODER.decode(line)
    except msgspec.DecodeError:
        probe = None
    if probe is not None and probe.type not in ENTRY_TYPES:
        return UnknownEntry(
            type=probe.type, raw=bytes(line), id=probe.id, parent_id=probe.parent_id
        )
    warnings.append(LoadWarning(line_no, f"skipped a corrupt entry: {error}"))
    return None


def _migrate_file(
    path: Path, data: bytes, raw_header: dict[str, Any], redactor: Redactor
) -> tuple[bytes, list[LoadWarning]]:
    """Migrate a whole older file to the current version and replace it atomically."""
    entries, warnings = _raw_entries(data, data.index(b"\n") + 1)
    try:
        header, entries = migrate(raw_header, entries)
        msgspec.convert(header, SessionHeader)
    except (ValueError, msgspec.ValidationError) as exc:
        raise InvalidParams(f"{path}: cannot migrate: {exc}") from None
    lines = [_ENCODER.encode(header), *(redactor.json(_ENCODER.encode(e)) for e in entries)]
    migrated = b"\n".join(lines) + b"\n"
    replace_atomically(path, migrated)
    warnings.append(LoadWarning(None, f"migrated the file to format version {SESSION_VERSION}"))
    return migrated, warnings


def _raw_entries(data: bytes, start: int) -> tuple[list[dict[str, Any]], list[LoadWarning]]:
    """The entry lines as plain JSON objects (for migrations), skipping damaged lines."""
    entries: list[dict[str, Any]] = []
    warnings: list[LoadWarning] = []
    lines = data[start:].split(b"\n")
    for offset, line in enumerate(lines[:-1]):
        try:
            value = msgspec.json.decode(line) if line.strip() else None
        except msgspec.DecodeError as exc:
            warnings.append(LoadWarning(offset + 2, f"skipped a corrupt entry: {exc}"))
            continue
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            entries.append(value)
        elif value is not None:
            warnings.append(LoadWarning(offset + 2, "skipped a line that is not an entry"))
    if lines[-1]:
        warnings.append(LoadWarning(len(lines) + 1, _TORN))
    return entries, warnings


def replace_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``path``, fsync it and rename it over
    ``path``; the directory is fsynced too. Readers see the old or the new file, never a
    mix."""
    temporary = path.with_name(path.name + ".tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    temporary.replace(path)
    fsync_directory(path.parent)


def fsync_directory(folder: Path) -> None:
    """Make a created, renamed or removed name in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
