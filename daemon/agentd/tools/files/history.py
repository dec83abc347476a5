"""Per-session undo history for write and edit.

Before each write or edit the previous content of the file (or "did not exist") is pushed;
``undo_edit`` pops the latest. The history lives in ``ctx.state["undo_edit"]`` and is bounded:
at most 20 snapshots per file and 50 MB in total (``ctx.settings``: ``undo_max_per_file``,
``undo_max_bytes``); the oldest snapshots, across all files, are dropped first. A single
snapshot larger than the total bound is not kept.
"""

from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path
from typing import Any

import msgspec

from agentd.tools.base import ToolContext
from agentd.tools.defaults import UNDO_MAX_BYTES, UNDO_MAX_PER_FILE, ToolSettings

HISTORY_KEY = "undo_edit"
DEFAULT_MAX_PER_FILE = UNDO_MAX_PER_FILE
DEFAULT_MAX_BYTES = UNDO_MAX_BYTES


class Snapshot(msgspec.Struct, frozen=True):
    """A file's content before a change; ``content is None`` means it did not exist."""

    content: bytes | None
    seq: int

    @property
    def size(self) -> int:
        return len(self.content) if self.content is not None else 0


class UndoHistory:
    """Bounded stacks of snapshots, one stack per absolute file path."""

    def __init__(
        self, max_per_file: int = DEFAULT_MAX_PER_FILE, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.max_per_file = max_per_file
        self.max_bytes = max_bytes
        self._stacks: dict[str, deque[Snapshot]] = {}
        self._bytes = 0
        self._seq = itertools.count()

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def depth(self, path: Path) -> int:
        """How many undo steps are available for ``path``."""
        return len(self._stacks.get(str(path), ()))

    def push(self, path: Path, previous: bytes | None) -> bool:
        """Record ``previous`` as the content before a change; False if it was too big."""
        snapshot = Snapshot(previous, next(self._seq))
        if snapshot.size > self.max_bytes:
            return False
        stack = self._stacks.setdefault(str(path), deque())
        stack.append(snapshot)
        self._bytes += snapshot.size
        if len(stack) > self.max_per_file:
            self._bytes -= stack.popleft().size
        while self._bytes > self.max_bytes:
            self._evict_oldest()
        return True

    def pop(self, path: Path) -> Snapshot | None:
        """Remove and return the latest snapshot of ``path`` (None when there is none)."""
        stack = self._stacks.get(str(path))
        if not stack:
            return None
        snapshot = stack.pop()
        self._bytes -= snapshot.size
        if not stack:
            del self._stacks[str(path)]
        return snapshot

    def forget(self, path: Path) -> None:
        """Drop every snapshot of ``path`` (its changes were taken back some other way: a
        ``session/rewind``)."""
        stack = self._stacks.pop(str(path), None)
        if stack:
            self._bytes -= sum(snapshot.size for snapshot in stack)

    def _evict_oldest(self) -> None:
        key = min(self._stacks, key=lambda name: self._stacks[name][0].seq)
        stack = self._stacks[key]
        self._bytes -= stack.popleft().size
        if not stack:
            del self._stacks[key]


def history_for(ctx: ToolContext) -> UndoHistory:
    """The session's undo history, created on first use with bounds from ``ctx.settings``."""
    return history_in(ctx.state, ctx.settings)


def history_in(state: dict[str, Any], settings: ToolSettings) -> UndoHistory:
    """The undo history kept in a session's tool ``state`` (created on first use, bounded by
    ``settings``)."""
    history = state.get(HISTORY_KEY)
    if not isinstance(history, UndoHistory):
        history = UndoHistory(
            max_per_file=settings.undo_max_per_file,
            max_bytes=settings.undo_max_bytes,
        )
        state[HISTORY_KEY] = history
    return history
