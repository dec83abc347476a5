"""Message entries kept as references into their file, decoded when asked for.

A loaded session's tree holds, per ``message`` entry, a :class:`MessageRef`: its ids, where
its line is (byte offset and length) and the few facts the tree's queries need without the
body (the role, the usage and model of a reply, the tool-call ids a reply made or a result
answers). Bodies are read back with ``pread`` and decoded by :class:`LineReader` when a query
needs them; a small LRU (:data:`CACHE_BYTES` of lines) keeps the recent ones. What stays
decoded for a long time is what its users hold: the model's context (the agent's messages)
and a client's current page, never the whole file.

The file is the daemon's alone while loaded (its ``flock``), and lines are only ever
appended, so an offset stays valid for the life of the load. A line that no longer reads back
as the entry it was (the file was changed under the daemon) is a :class:`StoreReadFailed`
naming the file, the entry and the byte offset; nothing is guessed.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from agentd.errors import StoreReadFailed
from agentd.protocol.content import AssistantMessage, ToolResultMessage, Usage
from agentd.protocol.session_file import MessageEntry, entry_decoder
from agentd.store import blobs

CACHE_BYTES = 4 << 20
"""The decoded entries kept, counted by the length of their lines."""
CACHE_ENTRIES = 2048
"""At most this many decoded entries kept."""


class MessageRef(msgspec.Struct, frozen=True, gc=False):
    """A ``message`` entry of the tree, its body left in the file (see the module docstring).

    ``offset`` is -1 for an entry that has no line (a tree built in memory); ``parent_id`` is
    the tree's (a damaged file's entry may have been attached elsewhere than its line says).
    """

    id: str
    parent_id: str | None
    offset: int
    length: int
    role: str
    message_id: str
    usage: Usage | None = None
    provider: str = ""
    model: str = ""
    call_ids: tuple[str, ...] = ()
    answers: str | None = None


def ref_of(entry: MessageEntry, offset: int = -1, length: int = 0) -> MessageRef:
    """The reference of ``entry``, whose line is ``length`` bytes at ``offset``."""
    message = entry.message
    if isinstance(message, AssistantMessage):
        return MessageRef(
            entry.id, entry.parent_id, offset, length, "assistant", message.id,
            usage=message.usage, provider=message.provider, model=message.model,
            call_ids=tuple(call.id for call in message.tool_calls()),
        )  # fmt: skip
    answers = message.tool_call_id if isinstance(message, ToolResultMessage) else None
    role = "tool_result" if answers is not None else "user"
    return MessageRef(entry.id, entry.parent_id, offset, length, role, message.id, answers=answers)


class LineReader:
    """Reads and decodes the entries of one session file by reference (thread-safe).

    With ``keep_open`` (a file the daemon holds loaded) it keeps one read-only descriptor,
    opened on first use, until :meth:`close`; otherwise (and after :meth:`close`) each read,
    or each bulk read of :meth:`entries`, opens the file for itself.
    """

    def __init__(self, path: Path, *, keep_open: bool = False) -> None:
        self.path = path
        self._fd: int | None = None
        self._closed = not keep_open
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, tuple[MessageEntry, int]] = OrderedDict()
        self._cached_bytes = 0

    def entry(self, ref: MessageRef, *, cache: bool = True, fd: int | None = None) -> MessageEntry:
        """The entry ``ref`` points at, decoded (kept in the LRU when ``cache``; read from
        ``fd`` when given). Raises :class:`StoreReadFailed` when its line is not that entry
        any more, ``OSError`` when the file cannot be read."""
        with self._lock:
            found = self._cache.get(ref.offset)
            if found is not None:
                self._cache.move_to_end(ref.offset)
                return _placed(found[0], ref)
        if fd is None:
            with self._descriptor() as own:
                line = self._read(own, ref)
        else:
            line = self._read(fd, ref)
        entry = self._decode(ref, line)
        if cache:
            self.remember(ref, entry)
        return _placed(entry, ref)

    def entries(self, refs: list[MessageRef]) -> list[MessageEntry]:
        """The entries of ``refs`` (in order) without filling the LRU: a bulk read, e.g. the
        model's context, whose caller keeps what it needs."""
        with self._descriptor() as fd:
            return [self.entry(ref, cache=False, fd=fd) for ref in refs]

    def remember(self, ref: MessageRef, entry: MessageEntry) -> None:
        """Keep ``entry`` (just decoded or just written) as the body of ``ref``."""
        if ref.length > CACHE_BYTES // 4:
            return
        with self._lock:
            if ref.offset in self._cache:
                return
            self._cache[ref.offset] = (entry, ref.length)
            self._cached_bytes += ref.length
            while self._cached_bytes > CACHE_BYTES or len(self._cache) > CACHE_ENTRIES:
                _, (_, length) = self._cache.popitem(last=False)
                self._cached_bytes -= length

    def cached(self) -> int:
        """How many decoded entries the LRU holds (for tests and benchmarks)."""
        return len(self._cache)

    def close(self) -> None:
        """Close the descriptor; later reads open the file for each read."""
        with self._lock:
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @contextmanager
    def _descriptor(self) -> Iterator[int]:
        """The kept descriptor (opened now if need be), or one of its own for this read."""
        with self._lock:
            if not self._closed and self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            kept = self._fd
        if kept is not None:
            yield kept
            return
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            yield fd
        finally:
            os.close(fd)

    def _read(self, fd: int, ref: MessageRef) -> bytes:
        if ref.offset < 0:
            raise StoreReadFailed(f"{self.path}: entry {ref.id!r} has no line in the file")
        data = os.pread(fd, ref.length, ref.offset)
        if len(data) != ref.length:
            raise self._failed(ref, f"the file ends before its {ref.length} bytes")
        return data

    def _decode(self, ref: MessageRef, line: bytes) -> MessageEntry:
        try:
            entry = entry_decoder().decode(line)
        except msgspec.DecodeError as exc:
            raise self._failed(ref, f"its line no longer decodes ({exc})") from None
        if not isinstance(entry, MessageEntry) or entry.id != ref.id:
            raise self._failed(ref, "another entry is at its place")
        return blobs.resolved(entry, self.path)

    def _failed(self, ref: MessageRef, problem: str) -> StoreReadFailed:
        return StoreReadFailed(
            f"could not read entry {ref.id!r} back from the session file {self.path} at byte "
            f"{ref.offset}: {problem}; the file was changed while the session was loaded "
            "(unload it with session/close and load it again)",
            {"path": str(self.path), "entryId": ref.id, "offset": ref.offset},
        )


def _placed(entry: MessageEntry, ref: MessageRef) -> MessageEntry:
    """``entry`` with the tree's ``parent_id`` (see :class:`MessageRef`)."""
    if entry.parent_id == ref.parent_id:
        return entry
    return msgspec.structs.replace(entry, parent_id=ref.parent_id)
