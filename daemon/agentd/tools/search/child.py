"""The child process of grep's Python backend (see :mod:`agentd.tools.search.proc`).

Reads the request (JSON) from stdin, walks and searches (a folder with a forked worker where
two CPUs are there, :mod:`agentd.tools.search.halves`), and writes to stdout progress bytes
(``.``, at most one per ``halves.TICK`` seconds, between files) and then one frame: ``=`` and the
per-file results (msgpack), or ``!`` and the text of a tool error. It imports neither asyncio
nor the tools package's ``__init__``, so it starts in a few tens of milliseconds. Under the
sandbox it walks by descriptors (:class:`agentd.tools.search.ignore.Walker`) and, where the
kernel has Landlock, first restricts itself to reading beneath the workspace (a second guard;
the worker, forked after, inherits it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

import msgspec

from agentd.hardening import landlock_abi, make_undumpable
from agentd.tools.base import ToolError
from agentd.tools.search.core import FileResult, SearchRequest, search_files, walk_files
from agentd.tools.search.halves import failure_frame, search_in_halves, ticking


def child_main() -> None:
    """The child: read the request from stdin, search, write ticks and the final frame."""
    make_undumpable()  # processes of the same user cannot ptrace it to change results
    out = sys.stdout.buffer
    fields = msgspec.json.decode(sys.stdin.buffer.read())
    fields["root"] = Path(fields["root"])
    fields["workspace"] = Path(fields["workspace"]) if fields["workspace"] else None
    request = SearchRequest(**fields)
    try:
        if request.workspace is not None:
            _confine(request.workspace)
        results = _search(request, out)
    except (ToolError, OSError) as error:
        out.write(failure_frame(error, request))
        return
    payload = [
        (os.fsencode(r.rel), [(h.line, h.text, h.is_match) for h in r.hits], r.matches)
        for r in results
    ]
    out.write(b"=" + msgspec.msgpack.encode(payload))
    out.flush()


def _search(request: SearchRequest, out: IO[bytes]) -> list[FileResult]:
    """The per-file results, searched by two processes where the tree is a directory and
    two CPUs are there (see :mod:`agentd.tools.search.halves`), else by this one."""
    wanted = request.max_results + 1
    if request.root.is_dir() and len(os.sched_getaffinity(0)) > 1:
        return search_in_halves(request, wanted, out)
    return search_files(ticking(walk_files(request), out), request, wanted)


def _confine(workspace: Path) -> None:
    """Where the kernel has Landlock, let this process read nothing outside the workspace
    (and the ``.gitignore`` files above it): a second guard behind the descriptor walk."""
    from agentd.tools.process.landlock import restrict_self, search_ruleset

    if landlock_abi() == 0:
        return
    ruleset = search_ruleset(workspace, [])
    try:
        if ruleset is None or not restrict_self(ruleset):
            raise ToolError("Cannot confine the search to the workspace (Landlock failed).")
    finally:
        if ruleset is not None:
            os.close(ruleset)
