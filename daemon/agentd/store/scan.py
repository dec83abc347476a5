"""Summarising a session file without parsing it: header, entry count and title.

The entry count is the number of complete lines after the header, counted in 1 MiB blocks.
The title is the latest ``session_info`` entry, found by a byte search for the line prefix
our writer produces while counting; without one, the first user message's text (from the
file's head, shortened; a first prompt longer than the head, a 5 MB paste or a file piped in,
gives its title from its beginning). A file that only grew since its last summary is scanned from
where that summary stopped.
"""

from __future__ import annotations

import os
import re
from io import BufferedReader
from pathlib import Path
from typing import Literal

import msgspec

from agentd.protocol.content import TextContent, UserMessage
from agentd.protocol.session_file import (
    MessageEntry,
    SessionHeader,
    SessionInfoEntry,
    entry_decoder,
)

BLOCK_SIZE = 1 << 20
HEAD_SIZE = 256 * 1024
TITLE_LENGTH = 80
_INFO_MARKER = b'\n{"type":"session_info"'
_HEADER_DECODER = msgspec.json.Decoder(SessionHeader)
_INFO_DECODER = msgspec.json.Decoder(SessionInfoEntry)

TitleSource = Literal["info", "message", "none"]

_USER_TEXT_START = re.compile(
    rb'\{"type":"message",[^\n]{0,512}?"message":\{"role":"user",[^\n]{0,256}?'
    rb'"content":\[\{"type":"text","text":"'
)
_STRING_BODY = re.compile(rb'(?:[^"\\]|\\.)*')


class FileSummary(msgspec.Struct, rename="camel", omit_defaults=True):
    """What the index keeps per file: the stat it was computed from, then the summary.

    ``session_id`` is empty for a file that is not a readable session.
    """

    mtime_ns: int
    size: int
    session_id: str = ""
    cwd: str = ""
    created_at: str = ""
    parent_session: str | None = None
    parent_entry_id: str | None = None
    parent_session_id: str | None = None
    parent_tool_call_id: str | None = None
    entry_count: int = 0
    title: str | None = None
    title_source: TitleSource = "none"


def summarize(path: Path, stat: os.stat_result, previous: FileSummary | None) -> FileSummary:
    """The summary of ``path`` as of ``stat``, reusing ``previous`` if the file only grew."""
    try:
        with path.open("rb") as file:
            header = _read_header(file)
            if header is None:
                return FileSummary(mtime_ns=stat.st_mtime_ns, size=stat.st_size)
            if previous is not None and _only_grew(file, header, previous, stat.st_size):
                return _extend(file, previous, stat)
            return _full(file, header, stat)
    except OSError:
        return FileSummary(mtime_ns=stat.st_mtime_ns, size=stat.st_size)


def _read_header(file: BufferedReader) -> SessionHeader | None:
    line = file.readline(HEAD_SIZE)
    if not line.endswith(b"\n"):
        return None
    try:
        return _HEADER_DECODER.decode(line)
    except msgspec.DecodeError:
        return None


def _only_grew(
    file: BufferedReader, header: SessionHeader, previous: FileSummary, size: int
) -> bool:
    if previous.session_id != header.id or previous.created_at != header.created_at:
        return False
    if not 0 < previous.size < size:
        return False
    file.seek(previous.size - 1)
    return file.read(1) == b"\n"


def _full(file: BufferedReader, header: SessionHeader, stat: os.stat_result) -> FileSummary:
    newlines, info_at = scan_region(file, 0, stat.st_size)
    title, source = _title_at(file, info_at) if info_at is not None else (None, "none")
    if source == "none":
        title, source = _first_user_text(file)
    return FileSummary(
        mtime_ns=stat.st_mtime_ns,
        size=stat.st_size,
        session_id=header.id,
        cwd=header.cwd,
        created_at=header.created_at,
        parent_session=header.parent_session,
        parent_entry_id=header.parent_entry_id,
        parent_session_id=header.parent_session_id,
        parent_tool_call_id=header.parent_tool_call_id,
        entry_count=max(newlines - 1, 0),
        title=title,
        title_source=source,
    )


def _extend(file: BufferedReader, previous: FileSummary, stat: os.stat_result) -> FileSummary:
    newlines, info_at = scan_region(file, previous.size, stat.st_size)
    title, source = previous.title, previous.title_source
    if info_at is not None:
        title, source = _title_at(file, info_at)
    if source == "none":
        title, source = _first_user_text(file)
    return msgspec.structs.replace(
        previous,
        mtime_ns=stat.st_mtime_ns,
        size=stat.st_size,
        entry_count=previous.entry_count + newlines,
        title=title,
        title_source=source,
    )


def scan_region(file: BufferedReader, start: int, end: int) -> tuple[int, int | None]:
    """Count LFs in bytes ``[start, end)`` and find the start of the last ``session_info``
    line beginning in that range. ``start`` is 0 or just after an LF."""
    buffer = bytearray(BLOCK_SIZE)
    view = memoryview(buffer)
    carry = b"\n" if start > 0 else b""
    newlines, last, pos = 0, None, start
    file.seek(start)
    while pos < end:
        got = file.readinto(view[: min(BLOCK_SIZE, end - pos)])
        if not got:
            break
        newlines += buffer.count(b"\n", 0, got)
        found = buffer.rfind(_INFO_MARKER, 0, got)
        if found >= 0:
            last = pos + found + 1
        else:
            edge = carry + bytes(view[: min(got, len(_INFO_MARKER) - 1)])
            found = edge.rfind(_INFO_MARKER)
            if found >= 0:
                last = pos - len(carry) + found + 1
        carry = bytes(view[max(got - len(_INFO_MARKER) + 1, 0) : got])
        pos += got
    return newlines, last


def _title_at(file: BufferedReader, offset: int) -> tuple[str | None, TitleSource]:
    file.seek(offset)
    line = file.readline()
    try:
        info = _INFO_DECODER.decode(line)
    except msgspec.DecodeError:
        return None, "none"
    return (info.title, "info") if info.title else (None, "none")


def _first_user_text(file: BufferedReader) -> tuple[str | None, TitleSource]:
    """The first user message's text (from the first :data:`HEAD_SIZE` bytes), shortened."""
    file.seek(0)
    head = file.read(HEAD_SIZE)
    for line in head.split(b"\n")[1:-1]:
        if not line.startswith(b'{"type":"message"'):
            continue
        try:
            entry = entry_decoder().decode(line)
        except msgspec.DecodeError:
            continue
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            return shorten(_text_of(entry.message)), "message"
    title = _cut_user_text(head)
    return (title, "message") if title else (None, "none")


def _cut_user_text(head: bytes) -> str | None:
    """The beginning of the first prompt when its line does not end within ``head`` (the head
    holds no complete user message): the start of its first text block, shortened."""
    last = head.rfind(b"\n") + 1
    start = _USER_TEXT_START.match(head, last)
    if start is None:
        return None
    raw = head[start.end() : start.end() + 8 * TITLE_LENGTH]
    body = _STRING_BODY.match(raw)
    raw = raw[: body.end()] if body else b""
    for cut in range(len(raw), max(len(raw) - 12, -1), -1):  # a cut escape or UTF-8 sequence
        try:
            return shorten(msgspec.json.decode(b'"' + raw[:cut] + b'"', type=str))
        except (msgspec.DecodeError, UnicodeDecodeError):
            continue
    return None


def _text_of(message: UserMessage) -> str:
    """What the user wrote: the custom command as typed, else the text blocks."""
    if message.command is not None:
        return message.command
    return " ".join(block.text for block in message.content if isinstance(block, TextContent))


def shorten(text: str, limit: int = TITLE_LENGTH) -> str | None:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis; ``None`` if blank."""
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
