"""The pure-Python grep backend, spread over worker processes for big trees.

Python's ``re`` holds the GIL, so threads do not help. For trees over 16 MB a 4 MB head is
searched here first: a common pattern stops early there, and a fast one (a literal prefix
scans at hundreds of MB/s) goes on here when the rest would take under 0.5 s at the head's
speed. Otherwise the remaining files are split into contiguous, byte-balanced ranges, one per
worker process (:mod:`agentd.tools.search_worker`, at most 4, one per CPU). Each worker stops
at the number of results still wanted; the per-file results are joined in walk order and cut
exactly as the single-process search does, so the output is identical. A worker that fails
is replaced by searching its range here; cancelling kills the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

import agentd
from agentd.tools.search import (
    FileResult,
    SearchRequest,
    SearchResult,
    finish,
    search_files,
    units,
    walk_files,
)
from agentd.tools.search_worker import Job

MIN_PARALLEL_BYTES = 16 * 2**20
HEAD_BYTES = 4 * 2**20
MAX_WORKERS = 4
WORTH_PARALLEL_SECONDS = 0.5

Sized = tuple[str, str, int]


@dataclass(frozen=True)
class Tuning:
    """When to go parallel (``ctx.options``: ``grep_parallel_min_bytes``,
    ``grep_parallel_head_bytes``, ``grep_parallel_worth_seconds``)."""

    min_bytes: int = MIN_PARALLEL_BYTES
    head_bytes: int = HEAD_BYTES
    worth_seconds: float = WORTH_PARALLEL_SECONDS

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Tuning:
        return cls(
            min_bytes=int(options.get("grep_parallel_min_bytes", MIN_PARALLEL_BYTES)),
            head_bytes=int(options.get("grep_parallel_head_bytes", HEAD_BYTES)),
            worth_seconds=float(options.get("grep_parallel_worth_seconds", WORTH_PARALLEL_SECONDS)),
        )


async def search_python_parallel(request: SearchRequest, tuning: Tuning = Tuning()) -> SearchResult:
    """The Python backend: :func:`agentd.tools.search.search_files` over the walk, in worker
    processes when it pays (see the module docstring)."""
    files = await asyncio.to_thread(_sized_files, request)
    wanted = request.max_results + 1
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if workers < 2 or sum(size for _, _, size in files) < tuning.min_bytes:
        results = await asyncio.to_thread(search_files, _pairs(files), request, wanted)
        return finish(results, request)
    head, rest = _split_head(files, tuning.head_bytes)
    started = time.perf_counter()
    results = await asyncio.to_thread(search_files, _pairs(head), request, wanted)
    found = sum(units(result, request.mode) for result in results)
    if found >= wanted or not rest:
        return finish(results, request)
    head_bytes = sum(size for _, _, size in head)
    rest_bytes = sum(size for _, _, size in rest)
    estimate = (time.perf_counter() - started) * rest_bytes / max(head_bytes, 1)
    if estimate < tuning.worth_seconds:
        more = await asyncio.to_thread(search_files, _pairs(rest), request, wanted - found)
        return finish(results + more, request)
    jobs = [_job(part, request, wanted - found) for part in _ranges(rest, workers)]
    for output in await asyncio.gather(*(_run_worker(job, request) for job in jobs)):
        results.extend(output)
    return finish(results, request)


def _sized_files(request: SearchRequest) -> list[Sized]:
    sized = []
    for path, rel in walk_files(request):
        try:
            sized.append((path, rel, Path(path).stat().st_size))
        except OSError:
            continue
    return sized


def _pairs(files: list[Sized]) -> list[tuple[str, str]]:
    return [(path, rel) for path, rel, _ in files]


def _split_head(files: list[Sized], head_bytes: int) -> tuple[list[Sized], list[Sized]]:
    total = 0
    for index, (_, _, size) in enumerate(files):
        total += size
        if total >= head_bytes:
            return files[: index + 1], files[index + 1 :]
    return files, []


def _ranges(files: list[Sized], count: int) -> list[list[Sized]]:
    """``files`` cut into at most ``count`` contiguous ranges of about equal bytes."""
    share = sum(size for _, _, size in files) / count
    ranges: list[list[Sized]] = [[]]
    filled = 0
    for item in files:
        if filled >= share * len(ranges) and len(ranges) < count:
            ranges.append([])
        ranges[-1].append(item)
        filled += item[2]
    return [part for part in ranges if part]


def _job(part: list[Sized], request: SearchRequest, wanted: int) -> Job:
    return Job(
        pattern=request.pattern,
        ignore_case=request.ignore_case,
        mode=request.mode,
        context=request.context,
        wanted=wanted,
        files=_pairs(part),
    )


def _worker_env() -> dict[str, str]:
    package_root = str(Path(agentd.__file__).resolve().parents[1])
    extra = os.environ.get("PYTHONPATH")
    path = package_root if not extra else f"{package_root}{os.pathsep}{extra}"
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": path}


async def _run_worker(job: Job, request: SearchRequest) -> list[FileResult]:
    """Run one worker; on failure search its files in this process instead."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentd.tools.search_worker",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=_worker_env(),
    )  # fmt: skip
    finished = False
    try:
        output, _ = await proc.communicate(msgspec.json.encode(job))
        finished = True
    finally:
        if not finished:  # cancelled: the worker may still be running
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if proc.returncode == 0:
        with contextlib.suppress(msgspec.DecodeError):
            return msgspec.json.decode(output, type=list[FileResult])
    return await asyncio.to_thread(search_files, job.files, request, job.wanted)
