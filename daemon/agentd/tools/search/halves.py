"""Grep's Python backend on two CPUs: the child process of :mod:`agentd.tools.search.child`
forks a worker before it walks, and each of the two searches every other file.

Both walk the same tree in the same order (names sorted within each directory), so a file's
walk index is the same in both; the parent searches the even indexes, the worker the odd ones.
The worker sends its results with their indexes down a pipe; the parent merges the two lists in
walk order and cuts them where one process alone would have stopped (``wanted`` units). The
result is the one process's, file for file: a process that skips half the files reaches the
limit no earlier in walk order than one that searches them all, so every file the single
search returns is in one of the two lists.

Progress: the parent writes a tick (``.``, at most one per :data:`TICK` seconds) between its
own files, then passes on the worker's ticks while it waits for the worker's results. A worker
stuck in one file (a catastrophic regex) goes quiet, so the daemon's time limit still stops
the search; the worker dies with its parent (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from typing import IO

import msgspec

from agentd.tools.base import ToolError
from agentd.tools.process.orphans import die_with_parent  # before Landlock confines the child
from agentd.tools.search.core import (
    FileResult,
    Hit,
    Mode,
    SearchRequest,
    search_files,
    units,
    walk_files,
)
from agentd.tools.search.ignore import Entry

TICK = 0.25
"""Seconds between progress ticks, at most."""

Indexed = list[tuple[int, FileResult]]


def search_in_halves(request: SearchRequest, wanted: int, out: IO[bytes]) -> list[FileResult]:
    """The results :func:`search_files` gives for the whole walk (up to ``wanted`` units),
    searched by this process and a forked worker, ticks written to ``out``. Raises ToolError
    (or OSError) as the walk or the search does, in either process."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    worker = os.fork()
    if worker == 0:  # the forked worker
        for standard in (0, 1, 2):  # it holds none of the daemon's pipes (nor writes to them)
            os.dup2(read_end, standard)
        os.close(read_end)
        _work(request, wanted, write_end, parent)
    os.close(write_end)
    ended = False
    try:
        mine = _search_share(request, wanted, 0, out)
        with os.fdopen(read_end, "rb", buffering=0) as channel:
            theirs = _collect(channel, out)
        os.waitpid(worker, 0)
        ended = True
    finally:
        if not ended:
            with contextlib.suppress(OSError):
                os.kill(worker, signal.SIGKILL)
                os.waitpid(worker, 0)
    return _merge(mine + theirs, request.mode, wanted)


def ticking(files: Iterator[Entry], out: IO[bytes]) -> Iterator[Entry]:
    """``files``, writing a progress byte before a file when :data:`TICK` has passed."""
    last = time.monotonic()
    for entry in files:
        now = time.monotonic()
        if now - last >= TICK:
            out.write(b".")
            out.flush()
            last = now
        yield entry


def failure_frame(error: ToolError | OSError, request: SearchRequest) -> bytes:
    """The ``!`` frame reporting ``error``: a tool error's text, or the failed read of the
    search's root."""
    if isinstance(error, ToolError):
        return b"!" + str(error).encode()
    return b"!" + f"Cannot search {request.root}: {error.strerror}.".encode()


def _search_share(request: SearchRequest, wanted: int, share: int, out: IO[bytes]) -> Indexed:
    """Search the files whose walk index is ``share`` modulo 2: (walk index, result) pairs."""
    index_of: dict[str, int] = {}

    def mine() -> Iterator[Entry]:
        for index, entry in enumerate(walk_files(request)):
            if index % 2 == share:
                index_of[entry.rel] = index
                yield entry

    results = search_files(ticking(mine(), out), request, wanted)
    return [(index_of[result.rel], result) for result in results]


def _work(request: SearchRequest, wanted: int, channel: int, parent: int) -> None:
    """The worker: search the odd share, send ticks then one frame (``=`` and the results,
    or ``!`` and a tool error) down ``channel``, and exit without returning (nor running
    the parent's clean-ups), whatever happens."""
    code = 1
    try:
        die_with_parent(parent)
        with os.fdopen(channel, "wb") as out:
            try:
                found = _search_share(request, wanted, 1, out)
                payload = [(index, r.rel, r.hits, r.matches) for index, r in found]
                out.write(b"=" + msgspec.msgpack.encode(payload))
            except (ToolError, OSError) as error:
                out.write(failure_frame(error, request))
        code = 0
    finally:
        os._exit(code)


def _collect(channel: IO[bytes], out: IO[bytes]) -> Indexed:
    """The worker's results, passing its ticks on to ``out`` while they come."""
    data = b""
    while True:
        chunk = channel.read(65536)
        if not chunk:
            break
        if not data:  # still ticks, or the frame's start after them
            chunk = chunk.lstrip(b".")
            if not chunk:
                out.write(b".")
                out.flush()
                continue
        data += chunk
    if data[:1] == b"!":
        raise ToolError(data[1:].decode("utf-8", "replace"))
    if data[:1] != b"=":
        raise ToolError("The Python grep backend's second process failed.")
    return [
        (index, FileResult(rel, [Hit(*hit) for hit in hits], matches))
        for index, rel, hits, matches in msgspec.msgpack.decode(data[1:])
    ]


def _merge(found: Indexed, mode: Mode, wanted: int) -> list[FileResult]:
    """Both shares' results in walk order, cut where one search alone would have stopped."""
    merged: list[FileResult] = []
    count = 0
    for _, result in sorted(found, key=lambda pair: pair[0]):
        merged.append(result)
        count += units(result, mode)
        if count >= wanted:
            break
    return merged
