"""The Python grep backend, run in a child process so that no regex can hold the daemon.

Python's ``re`` keeps the interpreter lock while it matches, and a pattern with nested
quantifiers (``(a+)+$`` on a long line of ``a``) can take exponential time. In a thread of
the daemon that would stall every client; in a child process it stalls only the child.

:func:`search_python` starts ``python -I -S`` on :func:`agentd.tools.search.child.child_main`
(without the tools package's ``__init__``, to start fast) with an
environment holding nothing but ``PATH`` (no API keys), killed by the kernel if the daemon
dies (``PR_SET_PDEATHSIG``), and sends it the request. The child walks and searches
(:func:`agentd.tools.search.core.search_files`, beneath the workspace when sandboxed) and writes:

- ``.`` bytes while it works (at most one per 0.25 s, between files);
- then one frame: ``=`` and the results (msgpack), or ``!`` and the text of a tool error.

A child that sends nothing for ``request.time_limit`` seconds is stuck in one file (a
catastrophic regex): it is killed and the call fails with "regex timed out after N s". A
cancelled call kills it too. Starting the child costs a few tens of milliseconds per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from agentd.tools.base import ToolError
from agentd.tools.process.orphans import die_with_parent
from agentd.tools.search.core import FileResult, Hit, SearchRequest, SearchResult, finish

_BOOT = """
import sys, types
sys.path[:0] = sys.argv[1:3]  # without site (-S): agentd's and msgspec's folders
tools = types.ModuleType("agentd.tools")  # the package's __init__ would load every tool
tools.__path__ = [sys.argv[1] + "/agentd/tools"]
sys.modules["agentd.tools"] = tools
from agentd.tools.search.child import child_main
child_main()
"""


async def search_python(request: SearchRequest) -> SearchResult:
    """Search with the Python backend in a child process (see the module docstring).

    Raises ToolError for a regex that ran ``request.time_limit`` seconds in one file, for
    a root that leads outside the workspace, and when the child fails."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", "-c", _BOOT, *_import_paths(),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd="/", env={"PATH": os.defpath},
        preexec_fn=partial(_die_with_parent, os.getpid()),
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    finished = False
    try:
        proc.stdin.write(msgspec.json.encode(_request_fields(request)))
        proc.stdin.close()
        frame = await _read_frame(proc.stdout, request.time_limit)
        errors = await proc.stderr.read() if not frame else b""
        finished = True
    finally:
        if not finished:  # timed out or cancelled: the child may be deep in a regex
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
    return _decode(frame, errors, request)


def _import_paths() -> list[str]:
    return [str(Path(__file__).parents[3]), str(Path(msgspec.__file__).parents[1])]


def _die_with_parent(parent_pid: int) -> None:
    die_with_parent(parent_pid)


def _request_fields(request: SearchRequest) -> dict[str, Any]:
    fields = msgspec.structs.asdict(request)
    fields["root"] = str(request.root)
    fields["workspace"] = None if request.workspace is None else str(request.workspace)
    return fields


async def _read_frame(stream: asyncio.StreamReader, time_limit: float) -> bytes:
    """The child's final frame (b"" when it ended without one); ToolError when it sent
    nothing for ``time_limit`` seconds."""
    chunk = b""
    while not chunk.lstrip(b"."):
        try:
            chunk = await asyncio.wait_for(stream.read(65536), time_limit)
        except TimeoutError:
            raise ToolError(
                f"The regex timed out after {time_limit:g} s on one file and was stopped "
                "(grep_timeout). Nested quantifiers such as `(a+)+` can take exponential "
                "time in Python's `re`: simplify the pattern, or narrow the path or glob."
            ) from None
        if not chunk:
            return b""
    return chunk.lstrip(b".") + await stream.read()


def _decode(frame: bytes, errors: bytes, request: SearchRequest) -> SearchResult:
    if frame[:1] == b"!":
        raise ToolError(frame[1:].decode("utf-8", "replace"))
    if frame[:1] != b"=":
        detail = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"The Python grep backend failed: {detail[0]}")
    raw = msgspec.msgpack.decode(frame[1:])
    results = [
        FileResult(
            os.fsdecode(rel),
            [Hit(os.fsdecode(rel), line, text, is_match) for line, text, is_match in hits],
            matches,
        )
        for rel, hits, matches in raw
    ]
    return finish(results, request)
