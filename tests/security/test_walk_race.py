"""The walking tools (grep with either backend, find, ls) under the swap race: a folder of
the workspace and a symlink to the outside are exchanged (renameat2 RENAME_EXCHANGE) as fast
as possible while they walk. Nothing outside may be listed, read or matched."""

from __future__ import annotations

import asyncio
import ctypes
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.hardening import landlock_abi
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext, ToolError
from agentd.tools.defaults import ToolSettings
from agentd.tools.process.landlock import spawn_confined
from agentd.tools.search import find_rg
from agentd.tools.search.core import SearchRequest, search_files, walk_files
from agentd.tools.search.rg import confinable, search_rg

AT_FDCWD = -100
RENAME_EXCHANGE = 2
ROUNDS = 300
TOOLS = build_tools()
OUTSIDE_MARKS = ("OUTSIDE", "outside_only")


@pytest.fixture
def swapped(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    """ws/d (a folder tree) and ws/l (a symlink to ../outside, a similar tree) swapped in a
    loop; every file outside holds OUTSIDE and is named outside_only*."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        pytest.skip("the C library has no renameat2")
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    trees = ((workspace / "d", "INSIDE", "inside"), (outside, "OUTSIDE", "outside_only"))
    for top, word, name in trees:
        for sub in ("", "a", "a/b", "c"):
            (top / sub).mkdir(parents=True, exist_ok=True)
            (top / sub / f"{name}.txt").write_text(f"{word} secret\n")
    (workspace / "l").symlink_to(outside)
    stop, swaps = threading.Event(), [0]
    first, second = bytes(workspace / "d"), bytes(workspace / "l")

    def swap() -> None:
        while not stop.is_set():
            libc.renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE)
            swaps[0] += 1

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield workspace, swaps
    finally:
        stop.set()
        thread.join()


def _clean(text: str) -> bool:
    return not any(mark in text for mark in OUTSIDE_MARKS)


def _tool_rounds(ctx: ToolContext, calls: list[tuple[str, dict[str, str]]], rounds: int) -> int:
    """Run the calls ``rounds`` times; assert no output shows the outside; returns how many
    outputs showed the inside."""

    async def run() -> int:
        inside = 0
        for _ in range(rounds):
            for name, args in calls:
                result = await run_tool(TOOLS[name], args, ctx)
                assert _clean(str(result.output)), result.output
                inside += "inside" in str(result.output) or "INSIDE" in str(result.output)
        return inside

    return asyncio.run(run())


@pytest.mark.parametrize("walk", [False, True], ids=["openat2", "nofollow-walk"])
def test_find_and_ls_list_nothing_outside(
    swapped: tuple[Path, list[int]], walk: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of opening the start folder: openat2 and the O_NOFOLLOW walk."""
    workspace, swaps = swapped
    if walk:
        monkeypatch.setattr("agentd.hardening.openat2_available", lambda: False)
    ctx = ToolContext(cwd=workspace, workspace=workspace)
    calls = [
        ("find", {"pattern": "*.txt"}),
        ("find", {"pattern": "*", "path": "d"}),
        ("ls", {"path": "d"}),
        ("ls", {"path": "d/a"}),
    ]
    assert _tool_rounds(ctx, calls, ROUNDS) > 0  # the tools still worked between swaps
    assert swaps[0] > ROUNDS  # the race really ran


def test_python_grep_walk_reads_nothing_outside(swapped: tuple[Path, list[int]]) -> None:
    """The walk and search the Python backend's child process runs, in-process for many
    rounds, then a few rounds through the tool (child processes)."""
    workspace, swaps = swapped
    found = 0
    for _ in range(ROUNDS):
        for root in (workspace, workspace / "d"):
            request = SearchRequest("secret", root, workspace=workspace)
            try:
                results = search_files(walk_files(request), request, 1000)
            except ToolError:
                continue  # the root itself was a symlink at the open: refused
            texts = [hit.text for result in results for hit in result.hits]
            assert all(_clean(f"{r.rel} {t}") for r in results for t in texts)
            found += bool(results)
    assert found > 0
    ctx = ToolContext(
        cwd=workspace, workspace=workspace, settings=ToolSettings(grep_backend="python")
    )
    calls = [("grep", {"pattern": "secret"}), ("grep", {"pattern": "secret", "path": "d"})]
    assert _tool_rounds(ctx, calls, 15) > 0
    assert swaps[0] > ROUNDS


needs_confined_rg = pytest.mark.skipif(
    landlock_abi() == 0 or find_rg() is None or not confinable(find_rg() or ""),
    reason="needs rg and Landlock",
)


@needs_confined_rg
def test_rg_grep_matches_nothing_outside(swapped: tuple[Path, list[int]]) -> None:
    workspace, swaps = swapped
    ctx = ToolContext(cwd=workspace, workspace=workspace, settings=ToolSettings(grep_backend="rg"))
    calls = [("grep", {"pattern": "secret"}), ("grep", {"pattern": "secret", "path": "d"})]
    assert _tool_rounds(ctx, calls, ROUNDS // 2) > 0
    assert swaps[0] > ROUNDS


@needs_confined_rg
def test_confined_rg_cannot_read_outside_the_workspace(tmp_path: Path) -> None:
    """Without any race: rg told to search a folder outside the workspace finds nothing
    when confined, and finds the file unconfined (the confinement is what stops it)."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "in.txt").write_text("needle inside\n")
    (outside / "out.txt").write_text("needle outside\n")
    rg = find_rg() or ""

    def search(root: Path, sandbox: Path | None) -> list[str]:
        request = SearchRequest("needle", root, mode="files", workspace=sandbox)
        return [path for path, _ in asyncio.run(search_rg(rg, request)).files]

    assert search(outside, None) == ["out.txt"]
    assert search(outside, workspace) == []
    assert search(workspace, workspace) == ["in.txt"]


@needs_confined_rg
def test_a_confined_rg_leaves_the_daemons_own_threads_free(tmp_path: Path) -> None:
    """rg is confined by a thread of its own (no preexec_fn): after confined searches the
    calling thread, a worker thread and the next unconfined rg still read outside."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "in.txt").write_text("needle inside\n")
    (outside / "out.txt").write_text("needle outside\n")
    rg = find_rg() or ""

    async def searches() -> list[list[str]]:
        found = []
        for root, sandbox in ((outside, workspace), (workspace, workspace), (outside, None)):
            result = await search_rg(
                rg, SearchRequest("needle", root, mode="files", workspace=sandbox)
            )
            found.append([path for path, _ in result.files])
        found.append([await asyncio.to_thread((outside / "out.txt").read_text)])
        return found

    assert asyncio.run(searches()) == [[], ["in.txt"], ["out.txt"], ["needle outside\n"]]
    assert (outside / "out.txt").read_text() == "needle outside\n"


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_a_thread_that_cannot_be_confined_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(OSError, match="Landlock"):
        spawn_confined(["touch", str(marker)], -1)  # not a ruleset: restricting fails
    assert not marker.exists()


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_the_python_search_process_reads_only_the_workspace(tmp_path: Path) -> None:
    """The second guard of the Python backend: its search process, once confined, can read
    the workspace and the .gitignore above it, nothing else (run in a fresh interpreter: the
    confinement is for good)."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "in.txt").write_text("inside\n")
    (outside / "out.txt").write_text("outside\n")
    (tmp_path / ".gitignore").write_text("skipped\n")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agentd.tools.search.child import _confine\n"
        "_confine(Path(sys.argv[1]))\n"
        "for path in sys.argv[2:]:\n"
        "    try:\n"
        "        print(Path(path).read_text().strip())\n"
        "    except PermissionError:\n"
        "        print('denied')\n"
    )
    paths = [workspace / "in.txt", tmp_path / ".gitignore", outside / "out.txt"]
    done = subprocess.run(
        [sys.executable, "-c", script, str(workspace), *map(str, paths)],
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode().split("\n")[:3] == ["inside", "skipped", "denied"]
