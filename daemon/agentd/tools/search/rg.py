"""The ripgrep backend of grep: same :class:`SearchResult` as the Python backend.

rg runs with ``--no-config --no-require-git`` (``.gitignore`` files count outside git
repositories too, as in the Python walker); without ``.ignore``/``.rgignore`` files, the
global gitignore and ``.git/info/exclude`` (the Python walker reads none of them); with
``--null`` (paths end with NUL, so any file name parses); and with globs that always skip
``.git`` and ``node_modules``. It first runs in parallel and unsorted; the hits are sorted
into walk order here. When the output is large (a pattern matching nearly everything), that
run is abandoned and rg runs again with ``--sort path``, reading only until the result limit
is reached.

Under ``sandbox = "workspace"`` rg runs in a Landlock domain (:func:`confinement`): it may
read only beneath the workspace, the ``.gitignore`` files above it and the files it needs
to start, and write nowhere. rg opens paths by name, so this is what keeps a folder swapped
for a symlink during the search from leading it outside. :func:`confinable` says whether
that works here (Landlock, and a trial search); grep uses its Python backend otherwise.
rg gets an environment with nothing but ``PATH``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import subprocess
from pathlib import Path

from agentd.tools.base import ToolError
from agentd.tools.search.core import Hit, SearchRequest, SearchResult, limit_hits

MAX_UNSORTED_LINES = 20_000
MAX_UNSORTED_BYTES = 4 * 1024 * 1024
STREAM_LIMIT = 32 * 1024 * 1024
_CONTENT_LINE = re.compile(rb"(\d+)([:-])(.*)", re.DOTALL)


def rg_command(rg: str, request: SearchRequest) -> tuple[list[str], Path]:
    """The rg argv and working directory for ``request`` (unsorted form)."""
    argv = [rg, "--no-config", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude"]
    argv += ["--no-ignore-global", "--color", "never", "--null", "--no-messages"]
    if request.ignore_case:
        argv.append("--ignore-case")
    if request.glob:
        argv += ["--glob", request.glob]
    argv += ["--glob", "!.git/", "--glob", "!node_modules/"]
    if request.mode == "files":
        argv.append("--files-with-matches")
    elif request.mode == "count":
        argv.append("--count")
    else:
        per_file = request.max_results + request.context + 1
        argv += ["--line-number", "--with-filename", "--no-heading", "--max-count", str(per_file)]
        if request.context:
            argv += ["--context", str(request.context)]
    argv += ["--regexp", request.pattern]
    if request.root.is_file():
        return [*argv, "--", request.root.name], request.root.parent
    return argv, request.root


@functools.cache
def confinable(rg: str) -> bool:
    """Whether rg can run confined to a folder here: the kernel has Landlock and a trial
    search in a temporary folder finds its file (blocking, once per rg; a few ms)."""
    import tempfile

    from agentd.tools.process.landlock import confine

    with tempfile.TemporaryDirectory(prefix="agentd-rg-") as folder:
        Path(folder, "probe.txt").write_text("needle\n")
        ruleset = confinement(rg, Path(folder))
        if ruleset is None:
            return False
        try:
            found = subprocess.run(
                [rg, "--no-config", "--files-with-matches", "needle"], cwd=folder,
                capture_output=True, timeout=10, check=False, env=_env(),
                preexec_fn=functools.partial(confine, ruleset),
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return False
        finally:
            os.close(ruleset)
    return found.returncode == 0 and found.stdout.strip() == b"probe.txt"


def confinement(rg: str, workspace: Path) -> int | None:
    """A Landlock ruleset for rg searching ``workspace`` (None without Landlock)."""
    from agentd.tools.process.landlock import search_ruleset

    try:
        return search_ruleset(workspace, _program(rg))
    except OSError as error:
        raise ToolError(f"Cannot confine rg to the workspace: {error}.") from None


@functools.cache
def _program(rg: str) -> list[Path]:
    from agentd.tools.process.landlock import program_files

    return program_files(rg)


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath)}


async def search_rg(rg: str, request: SearchRequest) -> SearchResult:
    """Search with rg (confined to ``request.workspace`` when set). ToolError carries rg's
    message for an invalid pattern."""
    argv, cwd = rg_command(rg, request)
    ruleset = None if request.workspace is None else confinement(rg, request.workspace)
    if request.workspace is not None and ruleset is None:
        raise ToolError("rg cannot be confined to the workspace here (no Landlock).")
    try:
        records, complete = await _run(argv, cwd, None, ruleset)
        if not complete:
            sorted_argv = [*argv[:1], "--sort", "path", *argv[1:]]
            records, _ = await _run(sorted_argv, cwd, request.max_results, ruleset)
    finally:
        if ruleset is not None:
            os.close(ruleset)
    return _result(records, request)


async def _run(
    argv: list[str], cwd: Path, limit: int | None, ruleset: int | None
) -> tuple[list[bytes], bool]:
    """Run rg; return its output records and whether they are complete.

    Unsorted (``limit`` None): incomplete when the output grows past the bounds. Sorted:
    stops once ``limit + 1`` results have been read.
    """
    proc: asyncio.subprocess.Process | _Confined
    if ruleset is None:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, limit=STREAM_LIMIT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=_env(),
        )  # fmt: skip
    else:
        proc = await _Confined.start(argv, cwd, ruleset)
    assert proc.stdout is not None
    assert proc.stderr is not None
    separator = b"\0" if "--files-with-matches" in argv else b"\n"
    records: list[bytes] = []
    size, results, complete, drained = 0, 0, True, False
    try:
        while record := await _read_record(proc.stdout, separator):
            records.append(record)
            size += len(record)
            results += _is_result(record, separator)
            if limit is None and (len(records) > MAX_UNSORTED_LINES or size > MAX_UNSORTED_BYTES):
                complete = False
                break
            if limit is not None and results > limit:
                break
        else:
            drained = True
        errors = b"" if records else await proc.stderr.read()
    finally:
        if not drained:  # stopped early or cancelled: rg may still be running
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
    failed = (proc.returncode == 2 and errors) or (proc.returncode or 0) > 2  # 126: unconfined
    if failed and not records:
        message = errors.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise ToolError(f"rg failed: {message}")
    return records, complete


class _Confined:
    """rg started in its Landlock domain by a thread of its own (no ``preexec_fn``, so
    ``vfork``: :func:`agentd.tools.process.landlock.spawn_confined`), read like asyncio's
    ``Process``: ``stdout``/``stderr`` streams, ``kill()``, ``await wait()``."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self._pipes: list[asyncio.BaseTransport] = []
        self.stdout = asyncio.StreamReader(limit=STREAM_LIMIT)
        self.stderr = asyncio.StreamReader(limit=STREAM_LIMIT)

    @classmethod
    async def start(cls, argv: list[str], cwd: Path, ruleset: int) -> _Confined:
        from agentd.tools.process.landlock import spawn_confined

        devnull = os.open(os.devnull, os.O_RDONLY)  # opened here: the domain cannot read it
        try:
            popen = spawn_confined(
                argv, ruleset, cwd=cwd, env=_env(), stdin=devnull,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        except OSError as error:
            raise ToolError(f"rg could not start confined to the workspace: {error}.") from None
        finally:
            os.close(devnull)
        proc = cls(popen)
        loop = asyncio.get_running_loop()
        for reader, pipe in ((proc.stdout, popen.stdout), (proc.stderr, popen.stderr)):
            protocol = asyncio.StreamReaderProtocol(reader)
            transport, _ = await loop.connect_read_pipe(functools.partial(_same, protocol), pipe)
            proc._pipes.append(transport)
        return proc

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def kill(self) -> None:
        self._popen.kill()

    async def wait(self) -> int:
        """Wait for rg's exit (on a worker thread), then close both pipes."""
        try:
            return await asyncio.to_thread(self._popen.wait)
        finally:
            for transport in self._pipes:
                transport.close()


def _same(protocol: asyncio.StreamReaderProtocol) -> asyncio.StreamReaderProtocol:
    return protocol


async def _read_record(stream: asyncio.StreamReader, separator: bytes) -> bytes:
    """The next record, separator included (b"" at EOF). A record longer than the stream
    limit is dropped: its pieces do not parse and are skipped."""
    try:
        return await stream.readuntil(separator)
    except asyncio.IncompleteReadError as partial:
        return partial.partial
    except asyncio.LimitOverrunError as overrun:
        return await stream.readexactly(overrun.consumed)


def _is_result(record: bytes, separator: bytes) -> bool:
    """True for a file (files/count mode) or a matching line (content mode)."""
    if separator == b"\0" or not record.endswith(b"\n"):
        return bool(record.strip(b"\0"))
    _, found, rest = record.partition(b"\0")
    match = _CONTENT_LINE.match(rest)
    if not found:
        return False
    return match is None or match.group(2) == b":"


def _result(records: list[bytes], request: SearchRequest) -> SearchResult:
    if request.mode == "files":
        paths = sorted((_path(r.rstrip(b"\0")) for r in records if r.strip(b"\0")), key=_key)
        return SearchResult(
            files=[(p, 1) for p in paths[: request.max_results]],
            cut=len(paths) > request.max_results,
        )
    if request.mode == "count":
        counts = []
        for record in records:
            path, _, count = record.rstrip(b"\n").partition(b"\0")
            if count.isdigit():
                counts.append((_path(path), int(count)))
        counts.sort(key=lambda item: _key(item[0]))
        return SearchResult(
            files=counts[: request.max_results], cut=len(counts) > request.max_results
        )
    hits = sorted(_parse_hits(records), key=lambda hit: (_key(hit.path), hit.line))
    kept, cut = limit_hits(hits, request.max_results, request.context)
    return SearchResult(hits=kept, cut=cut)


def _parse_hits(records: list[bytes]) -> list[Hit]:
    hits: list[Hit] = []
    for record in records:
        path, found, rest = record.partition(b"\0")
        match = _CONTENT_LINE.match(rest.rstrip(b"\n")) if found else None
        if match is None:
            continue
        text = match.group(3).decode("utf-8", "replace")
        hits.append(Hit(_path(path), int(match.group(1)), text, match.group(2) == b":"))
    return hits


def _path(raw: bytes) -> str:
    text = raw.decode("utf-8", "surrogateescape")
    return text[2:] if text.startswith("./") else text


def _key(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))
