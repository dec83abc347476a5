"""grep: both backends give the same output on the same tree, ignore rules included."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.tool_details import GrepDetails
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from agentd.tools.search import find_rg
from agentd.tools.search.core import SearchRequest, finish, search_files, walk_files
from agentd.tools.search.proc import search_python
from agentd.tools.search.rg import confinable
from tests.harness import wait_until_async
from tests.tools.conftest import call, text_of

needs_rg = pytest.mark.skipif(find_rg() is None, reason="rg is not on PATH")
"""For the tests that compare the Python backend with rg; the others run without it."""
BACKENDS = ("python", "rg") if find_rg() is not None else ("python",)
needs_confined_rg = pytest.mark.skipif(
    find_rg() is None or not confinable(find_rg() or ""), reason="needs rg and Landlock"
)
CATASTROPHIC = "(a+)+$"
"""Exponential in Python's ``re`` on a line of ``a`` that ends otherwise."""

FILES: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n!keep.log\n/anchored.txt\ndocs/**/*.tmp\n",
    "a.py": "import os\nneedle one\n\ndef needle_two():\n    return 'Needle'\n",
    "b.txt": "nothing here\n",
    "anchored.txt": "needle in a root-anchored ignored file\n",
    "sub/anchored.txt": "needle not ignored here\n",
    "sub/.gitignore": "deep/\n!important.log\n",
    "sub/c.py": "x = 1\nneedle = 2\ny = 3\nz = 4\nw = 5\nneedle += 1\n",
    "sub/deep/d.py": "needle in ignored dir\n",
    "sub/x.log": "needle in ignored log\n",
    "sub/keep.log": "needle kept by negation\n",
    "sub/important.log": "needle re-included by nested rule\n",
    "build/e.py": "needle in build\n",
    ".hidden/f.py": "needle hidden dir\n",
    ".dot.py": "needle hidden file\n",
    "node_modules/x/g.py": "needle vendored\n",
    "docs/a/b.tmp": "needle tmp\n",
    "docs/a/c.md": "a needle in docs\n",
    "bin.dat": b"needle\0binary\n",
    "crlf.txt": b"first\r\nneedle crlf\r\nlast\r\n",
    "a-b/x.py": "needle sorted after a/\n",
    "a/b.py": "needle sorted before a-b/\n",
    "utf8.txt": "naïve needle ✓\n",
    "long.txt": "needle " + "x" * 1000 + "\n",
    "many.txt": "".join(f"needle {n}\n" for n in range(150)),
    "noeol.txt": "tail needle",
}

CASES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "max_results": 7},
    {"pattern": "needle", "output_mode": "files"},
    {"pattern": "needle", "output_mode": "count"},
    {"pattern": "needle", "output_mode": "files", "max_results": 3},
    {"pattern": "needle", "glob": "*.py"},
    {"pattern": "needle", "glob": "*.log"},
    {"pattern": "needle", "glob": "sub/*.py"},
    {"pattern": "needle", "glob": "!*.txt"},
    {"pattern": "NEEDLE", "ignore_case": True, "glob": "*.py"},
    {"pattern": "needle", "context": 1, "path": "sub"},
    {"pattern": "needle", "context": 2, "path": "sub/c.py"},
    {"pattern": r"needle \d+$", "max_results": 5, "context": 1},
    {"pattern": "^needle", "path": "many.txt", "max_results": 3},
    {"pattern": r"def \w+\(\)", "path": "a.py"},
    {"pattern": "no-such-text"},
    {"pattern": "needle", "path": "bin.dat"},
]


def build(root: Path) -> None:
    for name, content in FILES.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)


async def grep_with(ctx: ToolContext, backend: str, **args: Any) -> tuple[str, GrepDetails]:
    ctx.settings.grep_backend = backend
    result = await call("grep", ctx, **args)
    assert not result.is_error, text_of(result)
    assert isinstance(result.details, GrepDetails)
    assert result.details.backend == backend
    return text_of(result), result.details


@needs_rg
@pytest.mark.parametrize("args", CASES, ids=[str(c) for c in CASES])
async def test_backends_agree(work: Path, ctx: ToolContext, args: dict[str, Any]) -> None:
    build(work)
    rg_text, rg_details = await grep_with(ctx, "rg", **args)
    py_text, py_details = await grep_with(ctx, "python", **args)
    assert py_text == rg_text
    assert (py_details.matches, py_details.files, py_details.cut) == (
        rg_details.matches,
        rg_details.files,
        rg_details.cut,
    )


async def test_default_filters_and_order(work: Path, ctx: ToolContext) -> None:
    build(work)
    out, _ = await grep_with(ctx, "python", pattern="needle", output_mode="files")
    assert out.splitlines() == [
        "a/b.py",
        "a-b/x.py",
        "a.py",
        "crlf.txt",
        "docs/a/c.md",
        "long.txt",
        "many.txt",
        "noeol.txt",
        "sub/anchored.txt",
        "sub/c.py",
        "sub/important.log",
        "sub/keep.log",
        "utf8.txt",
    ]


async def test_content_format_context_and_cut(work: Path, ctx: ToolContext) -> None:
    build(work)
    out, details = await grep_with(ctx, "python", pattern="needle", path="sub/c.py", context=1)
    assert (
        out == "c.py-1-x = 1\nc.py:2:needle = 2\nc.py-3-y = 3\n--\nc.py-5-w = 5\nc.py:6:needle += 1"
    )
    assert details.matches == 2
    out, details = await grep_with(ctx, "python", pattern="needle", path="many.txt")
    assert out.count("\n") == 100
    assert "[Results cut at 100 matches." in out
    assert details.cut is True


@pytest.mark.parametrize("backend", BACKENDS)
async def test_long_lines_cut_and_crlf_stripped(work: Path, ctx: ToolContext, backend: str) -> None:
    build(work)
    out, _ = await grep_with(ctx, backend, pattern="needle", glob="{long,crlf}.txt")
    long_line = next(line for line in out.splitlines() if line.startswith("long.txt"))
    assert long_line.endswith("[line cut: 507 more chars]")
    assert "crlf.txt:2:needle crlf" in out.splitlines()


async def test_ancestor_gitignore_applies(work: Path, ctx: ToolContext) -> None:
    """Also above the workspace of a sandboxed session (confined rg may read it)."""
    (work / "outer/inner").mkdir(parents=True)
    (work / "outer/.gitignore").write_text("skipme.txt\n")
    (work / "outer/inner/skipme.txt").write_text("needle\n")
    (work / "outer/inner/found.txt").write_text("needle\n")
    for backend in BACKENDS:
        out, _ = await grep_with(ctx, backend, pattern="needle", path="outer/inner")
        assert out == "found.txt:1:needle"
    inner = work / "outer/inner"
    sandboxed = ToolContext(cwd=inner, workspace=inner)
    for backend in BACKENDS:
        ctx.settings.grep_backend = backend
        result = await call("grep", sandboxed, pattern="needle")
        assert text_of(result) == "found.txt:1:needle"


@needs_confined_rg
@pytest.mark.parametrize("args", CASES[::2], ids=[str(c) for c in CASES[::2]])
async def test_sandboxed_backends_agree(work: Path, ctx: ToolContext, args: dict[str, Any]) -> None:
    """Under the sandbox (rg confined by Landlock, Python walking by descriptors) the output
    is the unsandboxed one."""
    build(work)
    expected, _ = await grep_with(ctx, "rg", **args)
    sandboxed = ToolContext(cwd=work, workspace=work)
    for backend in ("rg", "python"):
        assert (await grep_with(sandboxed, backend, **args))[0] == expected


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time process ``pid`` has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _search_children() -> list[int]:
    """Pids of this process's children running the Python grep backend."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except OSError:
            continue
        if b"agentd.tools.search.child" in cmdline and int(ppid) == os.getpid():
            found.append(int(pid))
    return found


async def test_python_backend_stops_a_catastrophic_regex(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text("a" * 40 + "b\n")
    ctx.settings.grep_backend = "python"
    ctx.settings.grep_timeout = 0.5
    result = await call("grep", ctx, pattern=CATASTROPHIC)
    assert result.is_error
    assert "regex timed out after 0.5 s" in text_of(result)
    assert _search_children() == []


def _search_workers(parents: list[int]) -> list[int]:
    """Pids of the processes the search children ``parents`` forked (their second halves)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError):
            ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            if int(ppid) in parents:
                found.append(int(pid))
    return found


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: the search is not split")
async def test_a_catastrophic_regex_in_the_second_half_is_stopped_too(
    work: Path, ctx: ToolContext
) -> None:
    """The second file (walk index 1) is the forked worker's: stuck in it, the worker goes
    quiet, the time limit stops the search, and the worker dies with its parent."""
    (work / "a.txt").write_text("a line with nothing in it\n")
    (work / "b.txt").write_text("a" * 40 + "b\n")
    ctx.settings.grep_backend = "python"
    ctx.settings.grep_timeout = 2  # the worker lives this long: long enough to be seen under load
    call_task = asyncio.ensure_future(call("grep", ctx, pattern=CATASTROPHIC))
    workers = await wait_until_async(lambda: _search_workers(_search_children()), what="worker")
    result = await call_task
    assert result.is_error
    assert "regex timed out after 2 s" in text_of(result)
    await wait_until_async(lambda: not any(_alive(pid) for pid in workers), what="worker gone")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(
    "limits",
    [
        {"max_results": 7, "context": 1},
        {"max_results": 1000},
        {"max_results": 5, "mode": "files"},
        {"max_results": 3, "mode": "count"},
        {"max_results": 1},
    ],
)
async def test_two_search_processes_give_what_one_gives(work: Path, limits: dict[str, Any]) -> None:
    """The search split over two processes (where two CPUs are there) returns, hit for hit and
    cut for cut, what one process walking and searching everything returns."""
    for n in range(41):
        folder = work / f"d{n % 4}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n:02d}.txt").write_text("".join(f"x\nhit {n} {k}\n" for k in range(n % 5)))
    request = SearchRequest(pattern="hit", root=work, **limits)
    alone = finish(search_files(walk_files(request), request, request.max_results + 1), request)
    split = await search_python(request)
    assert split == alone
    assert split.hits or split.files


async def test_python_backend_search_dies_with_a_cancel(
    work: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search process, which never sees the daemon's environment, dies on a cancel."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-in-the-child")
    (work / "a.txt").write_text("a" * 40 + "b\n")
    ctx.settings.grep_backend = "python"
    task = asyncio.create_task(call("grep", ctx, pattern=CATASTROPHIC))
    [child] = await wait_until_async(_search_children, 5, "the search process")
    clean = f"PATH={os.defpath}\0".encode()
    try:
        environ = Path(f"/proc/{child}/environ").read_bytes()
    except PermissionError:  # the child is non-dumpable: only root reads it
        environ = clean
    assert environ == clean
    # 0.2 s of CPU is far past the child's start-up: it is inside the regex
    await wait_until_async(lambda: _cpu_seconds(child) >= 0.2, 10, "the search in the regex")
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _search_children() == []


async def test_invalid_regex_is_an_error_for_both(work: Path, ctx: ToolContext) -> None:
    build(work)
    for backend in BACKENDS:
        ctx.settings.grep_backend = backend
        result = await call("grep", ctx, pattern="a(")
        assert result.is_error
        assert "a(" in text_of(result) or "regex" in text_of(result)


async def test_missing_path_and_bad_backend(work: Path, ctx: ToolContext) -> None:
    result = await call("grep", ctx, pattern="x", path="nope")
    assert result.is_error
    ctx.settings.grep_backend = "grep"
    result = await call("grep", ctx, pattern="x")
    assert result.is_error
    assert "grep_backend" in text_of(result)


@needs_rg
async def test_rg_falls_back_to_sorted_run_on_huge_output(work: Path, ctx: ToolContext) -> None:
    for n in range(30):
        (work / f"f{n:02d}.txt").write_text("hit\n" * 1000)
    out, details = await grep_with(ctx, "rg", pattern="hit", max_results=1000)
    assert details.cut is True
    assert out.splitlines()[0] == "f00.txt:1:hit"
    assert out.splitlines()[999] == "f00.txt:1000:hit"
    py_out, _ = await grep_with(ctx, "python", pattern="hit", max_results=1000)
    assert py_out == out


@needs_rg
async def test_sandboxed_grep_without_landlock_uses_the_python_walk(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where rg cannot be confined (a kernel without Landlock), a sandboxed session's grep
    runs the descriptor-walking Python backend, even with ``grep_backend = "rg"``."""
    build(work)
    monkeypatch.setattr("agentd.tools.process.landlock.landlock_abi", lambda: 0)
    confinable.cache_clear()
    try:
        settings = ToolSettings(grep_backend="rg")
        sandboxed = ToolContext(cwd=work, workspace=work, settings=settings)
        result = await call("grep", sandboxed, pattern="needle", output_mode="files")
        assert result.details.backend == "python"
        assert "sub/c.py" in text_of(result).splitlines()
        unsandboxed = await call("grep", ToolContext(cwd=work, settings=settings), pattern="x")
        assert unsandboxed.details.backend == "rg"
    finally:
        confinable.cache_clear()
