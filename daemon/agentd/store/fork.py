"""Copying one branch of a session into another file (``SessionFile.fork``).

The copy is written in batches of about :data:`BATCH_BYTES`, each entry decoded from the
source's file as it is copied (never the whole branch at once), so forking a big session
costs a bounded amount of memory.
"""

from __future__ import annotations

from collections.abc import Callable

from agentd.store.tree import Node

BATCH_BYTES = 1 << 20
"""Bytes of lines written per ``write()`` while copying."""


def copy_branch(
    chain: list[Node],
    body: Callable[[Node], Node],
    line_of: Callable[[Node], bytes],
    write: Callable[[bytes], int],
    insert: Callable[[Node, tuple[int, int]], None],
) -> None:
    """Append ``chain`` (root first) to another file: each node decoded by ``body``, turned
    into that file's line by ``line_of``, batches appended by ``write`` (which returns the
    offset a batch begins at) and each node then added to that file's tree by ``insert``
    with its line's offset and length."""
    batch: list[tuple[Node, bytes]] = []
    size = 0
    for node in chain:
        copied = body(node)
        line = line_of(copied)
        batch.append((copied, line))
        size += len(line) + 1
        if size >= BATCH_BYTES:
            _flush(batch, write, insert)
            batch, size = [], 0
    if batch:
        _flush(batch, write, insert)


def _flush(
    batch: list[tuple[Node, bytes]],
    write: Callable[[bytes], int],
    insert: Callable[[Node, tuple[int, int]], None],
) -> None:
    offset = write(b"".join(line + b"\n" for _, line in batch))
    for node, line in batch:
        insert(node, (offset, len(line)))
        offset += len(line) + 1
