"""Every benchmark module still runs: ``python -m tests.bench NAME`` with ``AGENTD_BENCH_SMOKE=1``.

Each module runs once on a token size in its own interpreter (as ``make bench-smoke`` runs
them); :func:`run_smoke` asserts only that it exits 0 and prints its table with at least one row
of its own and no ``failed`` row. No timing is judged: a smoke run's numbers mean nothing.

The modules are dealt round-robin into :data:`SHARDS` test files (``test_bench_smoke_N.py``), so
xdist's ``--dist loadfile`` runs them on several workers at once; each module keeps its data in
a folder of its own (:func:`tests.bench.smoke.data_dir`). A module that drives a browser, VS
Code or Neovim skips with a named row where its tool is missing. The tests here check that the
shards cover every module under ``tests/bench/`` exactly once, so a new one cannot escape.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from tests.bench.__main__ import module_names
from tests.harness import scaled

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "tests" / "bench"
SHARDS = 8
RUNNER = {"__init__", "__main__", "smoke"}
"""The modules of tests/bench/ that run the benchmarks rather than measure."""


def shard(index: int) -> list[str]:
    """The bench modules of shard ``index`` (of :data:`SHARDS`)."""
    return [name for i, name in enumerate(module_names()) if i % SHARDS == index]


def run_smoke(name: str) -> None:
    """Run one bench module as ``make bench-smoke`` does; fail unless it printed its rows."""
    env = {**os.environ, "AGENTD_BENCH_SMOKE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.bench", name],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    lines = result.stdout.splitlines()
    header = ["measure", "value", "budget"]
    starts = [
        i for i, line in enumerate(lines) if [c.strip() for c in line.split(" | ")][:3] == header
    ]
    assert starts, result.stdout  # the table (a module may print its rows as it goes first)
    rows = [line for line in lines[starts[-1] + 2 :] if line.rstrip().endswith(name)]
    assert rows, result.stdout
    assert not [row for row in rows if " | failed " in row], result.stdout


def test_every_bench_module_is_in_exactly_one_shard() -> None:
    dealt = [name for index in range(SHARDS) for name in shard(index)]
    assert sorted(dealt) == module_names()
    files = sorted(REPO.glob("tests/test_bench_smoke_*.py"))
    assert [f.stem for f in files] == [f"test_bench_smoke_{i}" for i in range(SHARDS)]
    for index, file in enumerate(files):
        assert f"shard({index})" in file.read_text(), f"{file.name} runs another shard"


def _bench_imports(tree: ast.Module) -> set[str]:
    """The tests/bench modules a module imports (``from tests.bench import x``, ``from
    tests.bench.x import …``, ``import tests.bench.x``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "tests.bench":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.bench."):
            found.add((node.module or "").split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("tests.bench.")}
    return found


def test_every_module_under_tests_bench_is_a_bench_the_smoke_runs() -> None:
    """A benchmark named other than ``bench_*.py`` would escape the runner and the smoke: every
    other module there is the runner or a helper a bench module imports or runs as a script."""
    assert not list(BENCH.glob("*/*.py")), "tests/bench/ keeps its modules flat"
    others = {path.stem for path in BENCH.glob("*.py")} - set(module_names()) - RUNNER
    used: set[str] = set()
    for name in module_names():
        source = (BENCH / f"{name}.py").read_text()
        tree = ast.parse(source)
        mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
        assert mains, f"{name} has no main() returning its rows"
        used |= _bench_imports(tree) | {o for o in others if f'"{o}.py"' in source}  # a script
    assert others <= used, f"not bench_*.py and used by no bench: {others - used}"
