"""A worker of the parallel Python search: ``python -m agentd.tools.search_worker``.

Reads one JSON :class:`Job` from stdin, searches its files in order with
:func:`agentd.tools.search.search_files`, and writes the list of per-file results as JSON to
stdout. It touches nothing but the files it is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from agentd.tools.search import FileResult, Mode, SearchRequest, search_files


class Job(msgspec.Struct, frozen=True):
    """One worker's share of a search."""

    pattern: str
    ignore_case: bool
    mode: Mode
    context: int
    wanted: int
    files: list[tuple[str, str]]


def run_job(job: Job) -> list[FileResult]:
    """Search the job's files until ``wanted`` results are found."""
    request = SearchRequest(
        pattern=job.pattern,
        root=Path(),
        ignore_case=job.ignore_case,
        context=job.context,
        mode=job.mode,
        max_results=max(job.wanted - 1, 1),
    )
    return search_files(job.files, request, job.wanted)


def main() -> None:
    """Entry point: a Job on stdin, results on stdout."""
    job = msgspec.json.decode(sys.stdin.buffer.read(), type=Job)
    sys.stdout.buffer.write(msgspec.json.encode(run_job(job)))


if __name__ == "__main__":
    main()
