"""Tool budgets: bash overhead, grep over a 100 MB tree, edit of a 10 MB file, late read.

Run: ``python -m tests.bench.bench_tools``. Test data is generated once under
``/tmp/agentd-bench-tools`` (a 10,000-file, 100 MB source-like tree, a 200 MB text file and
a 10 MB file; about 310 MB) and reused while the generator version matches. The late read
runs in a fresh interpreter so its peak-RSS growth is the read's alone.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from agentd.tools.base import ToolContext
from agentd.tools.bash import BashParams, BashTool
from agentd.tools.defaults import ToolSettings
from agentd.tools.edit import EditParams, EditTool
from agentd.tools.grep import GrepParams, GrepTool
from agentd.tools.search import find_rg
from agentd.tools.search.rg import confinable
from tests.bench import smoke
from tests.bench.smoke import size

DATA = smoke.data_dir("tools")
TREE_FILES = size(10_000, 300)  # of 5-15 KB each
TREE = DATA / "tree"
BIG_TEXT = DATA / "big-200mb.txt"
TEN_MB = DATA / "ten-mb.py"
GENERATOR_VERSION = "1"
RARE = r"needle_[0-9]+"
HARD = r"\w+_\d{3}\b"

Row = tuple[str, str, str]

_VOCABULARY = (
    "def return self value index result config handler request response session error "
    "import class async await for in if else None True buffer stream token parse write "
    "read path item count total name data event queue worker thread lock cache"
)
_WORDS = _VOCABULARY.split()


# --- data -----------------------------------------------------------------------------------


def _line_pool(rng: random.Random) -> list[str]:
    pool = []
    for _ in range(50_000):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 14)))
        call = f"({rng.choice(_WORDS)})" if rng.random() < 0.3 else ""
        pool.append("    " * rng.randint(0, 3) + words + call)
    return pool


def _make_tree(rng: random.Random) -> None:
    """10,000 files of 5-15 KB (100 MB) in 100 directories; 20 hold a rare marker."""
    pool = _line_pool(rng)
    for index in range(TREE_FILES):
        directory = TREE / f"pkg{index // 1000:02d}" / f"mod{(index // 100) % 10:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        lines, size, cursor = [], 0, rng.randrange(len(pool))
        target = rng.randint(5000, 15000)
        while size < target:
            line = pool[cursor % len(pool)]
            cursor += rng.randint(1, 7)
            lines.append(line)
            size += len(line) + 1
        if index % 500 == 0:
            lines.insert(len(lines) // 2, f"    marker = needle_{index}  # the rare one")
        (directory / f"file{index % 100:03d}.py").write_text("\n".join(lines) + "\n")


def _make_big_text() -> None:
    """200 MB, 2.5 million numbered lines of 80 bytes."""
    with BIG_TEXT.open("w") as file:
        for block in range(2_500):
            start = block * 1000
            file.write("".join(f"{n:>12} " + "x" * 66 + "\n" for n in range(start, start + 1000)))


def _make_ten_mb(rng: random.Random) -> None:
    pool = _line_pool(rng)
    lines = [pool[n % len(pool)] for n in range(200_000)]
    lines[100_000] = "UNIQUE_MARKER = 0"
    TEN_MB.write_text("\n".join(lines)[: 10 * 2**20 - 20] + "\n")


def ensure_data() -> None:
    """Generate the data once; regenerate when the generator version changed."""
    stamp = DATA / ".version"
    if stamp.exists() and stamp.read_text() == GENERATOR_VERSION:
        return
    shutil.rmtree(DATA, ignore_errors=True)
    DATA.mkdir(parents=True)
    rng = random.Random(7)
    _make_tree(rng)
    _make_big_text()
    _make_ten_mb(rng)
    stamp.write_text(GENERATOR_VERSION)


# --- measurements ---------------------------------------------------------------------------


async def _median_ms(action: Callable[[], Awaitable[object]], runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        await action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def _spawn(*argv: str, cwd: Path | None = None) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    await proc.communicate()


async def bench_bash() -> list[Row]:
    ctx = ToolContext(cwd=DATA)
    tool = BashTool()
    bare = await _median_ms(lambda: _spawn("bash", "-c", "true"), runs=size(60, 3))
    full = await _median_ms(lambda: tool.run(BashParams("true"), ctx), runs=size(60, 3))
    return [
        ("bare `bash -c true` (asyncio spawn, median)", f"{bare:.2f} ms", "-"),
        ("bash tool running `true` (median)", f"{full:.2f} ms", "-"),
        ("bash tool overhead", f"{full - bare:.2f} ms", "<= 5 ms"),
    ]


async def _paired_ms(
    first: Callable[[], Awaitable[object]], second: Callable[[], Awaitable[object]], runs: int
) -> tuple[float, float]:
    """Medians of two actions run alternately, so both see the same machine load."""
    await first()
    await second()
    a, b = [], []
    for _ in range(runs):
        a.append(await _median_ms(first, runs=1, warmup=0))
        b.append(await _median_ms(second, runs=1, warmup=0))
    return statistics.median(a), statistics.median(b)


async def bench_grep() -> list[Row]:
    rg = find_rg()
    tool = GrepTool()
    rows: list[Row] = []
    if rg is not None:
        ctx = ToolContext(cwd=TREE, settings=ToolSettings(grep_backend="rg"))
        bare, ours = await _paired_ms(
            lambda: _spawn(rg, "-n", RARE, cwd=TREE), lambda: tool.run(GrepParams(RARE), ctx), 21
        )
        rows += [
            (f"bare `rg -n {RARE}` over 10k files / 100 MB", f"{bare:.1f} ms", "-"),
            ("grep tool, rg backend", f"{ours:.1f} ms", "-"),
            ("grep tool rg backend / bare rg", f"{ours / bare:.2f}x", "<= 1.2x"),
        ]
        rows += await _sandbox_rows(rg, tool, ctx)
    ctx = ToolContext(cwd=TREE, settings=ToolSettings(grep_backend="python"))
    rare = await _median_ms(lambda: tool.run(GrepParams(RARE), ctx), runs=3, warmup=1)
    hard = await _median_ms(lambda: tool.run(GrepParams(HARD), ctx), runs=3, warmup=1)
    rows += [
        (f"grep tool, Python backend, {RARE}", f"{rare / 1000:.2f} s", "<= 3 s"),
        (f"grep tool, Python backend, {HARD} (no literal)", f"{hard / 1000:.2f} s", "<= 3 s"),
    ]
    small = _small_tree()
    ctx = ToolContext(cwd=small, settings=ToolSettings(grep_backend="python"))
    start = await _median_ms(lambda: tool.run(GrepParams(RARE), ctx), runs=21)
    rows.append(("grep tool, Python backend, 1-file tree (child process)", f"{start:.1f} ms", "-"))
    return rows


def _small_tree() -> Path:
    small = DATA / "small"
    small.mkdir(exist_ok=True)
    (small / "a.txt").write_text("needle_1\n")
    return small


async def _sandbox_rows(rg: str, tool: GrepTool, ctx: ToolContext) -> list[Row]:
    """What confining rg with Landlock (``sandbox = "workspace"``) costs: the ruleset (~0.1
    ms), a thread that restricts itself and starts rg (with vfork: no ``preexec_fn``), and
    Landlock's checks during the walk, barely visible."""
    if not confinable(rg):
        return [("grep tool, rg backend, sandboxed", "no Landlock: Python backend", "-")]
    boxed = ToolContext(cwd=TREE, workspace=TREE, settings=ToolSettings(grep_backend="rg"))
    plain, confined = await _paired_ms(
        lambda: tool.run(GrepParams(RARE), ctx), lambda: tool.run(GrepParams(RARE), boxed), 21
    )
    small = _small_tree()
    tiny = ToolContext(cwd=small, settings=ToolSettings(grep_backend="rg"))
    tiny_boxed = ToolContext(cwd=small, workspace=small, settings=ToolSettings(grep_backend="rg"))
    tiny_plain, tiny_confined = await _paired_ms(
        lambda: tool.run(GrepParams(RARE), tiny), lambda: tool.run(GrepParams(RARE), tiny_boxed), 41
    )
    return [
        ("grep tool, rg backend, sandboxed (Landlock), 100 MB", f"{confined:.1f} ms", "-"),
        ("  sandboxed / unsandboxed rg, 100 MB", f"{confined / plain:.2f}x", "<= 1.2x"),
        ("  grep tool, rg backend, 1-file tree", f"{tiny_plain:.2f} ms", "-"),
        (
            "  Landlock cost per rg call (1-file tree; vfork from a confined thread)",
            f"{tiny_confined - tiny_plain:.2f} ms",
            "<= 5 ms",
        ),
    ]


async def bench_edit() -> list[Row]:
    ctx = ToolContext(cwd=DATA)
    tool = EditTool()
    found = re.search(r"UNIQUE_MARKER = (\d+)", TEN_MB.read_text())
    assert found is not None
    state = {"value": int(found.group(1))}

    async def one_edit() -> None:
        old, new = f"UNIQUE_MARKER = {state['value']}", f"UNIQUE_MARKER = {state['value'] + 1}"
        result = await tool.run(EditParams(str(TEN_MB), old, new), ctx)
        assert "1 replacement" in str(result.output), result.output
        state["value"] += 1

    took = await _median_ms(one_edit, runs=9)
    return [("edit of a 10 MB file (one replacement, median)", f"{took:.1f} ms", "<= 100 ms")]


_READ_PROBE = """
import asyncio, resource, sys, time, tracemalloc
from pathlib import Path
from agentd.tools.base import ToolContext
from agentd.tools.read import ReadParams, ReadTool
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
started = time.perf_counter()
call = ReadTool().run(ReadParams(sys.argv[1], offset=1_000_000), ToolContext(cwd=Path("/")))
result = asyncio.run(call)
took = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert result.output.startswith("1000000"), result.output[:80]
print(took, (after - before) / 1024, peak / 2**20)
"""


def bench_read() -> list[Row]:
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", _READ_PROBE, str(BIG_TEXT)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        runs.append((float(out[0]), float(out[1]), float(out[2])))
    took = statistics.median(run[0] for run in runs)
    growth = max(run[1] for run in runs)
    allocated = max(run[2] for run in runs)
    return [
        ("read offset=1,000,000 of a 200 MB file (median)", f"{took:.2f} s", "<= 1 s"),
        ("  peak RSS growth of that read", f"{growth:.1f} MB", "no whole-file load"),
        ("  peak Python allocations of that read", f"{allocated:.1f} MB", "no whole-file load"),
    ]


def main() -> list[Row]:
    """Measure every tool budget; returns (measure, value, budget) rows."""
    ensure_data()
    rows = asyncio.run(bench_bash())
    rows += asyncio.run(bench_grep())
    rows += asyncio.run(bench_edit())
    rows += bench_read()
    return rows


if __name__ == "__main__":
    table = main()
    width = max(len(row[0]) for row in table)
    for measure, value, budget in table:
        print(f"{measure:<{width}}  {value:>10}  {budget}")
