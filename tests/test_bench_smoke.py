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
HELPERS = {"__init__", "__main__", "smoke", "sse_clients"}
"""The modules of tests/bench/ that are not benchmarks (the runner and what benches share)."""


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


def test_every_module_under_tests_bench_is_a_bench_the_smoke_runs() -> None:
    """A benchmark named other than ``bench_*.py`` would escape the runner and the smoke."""
    assert not list(BENCH.glob("*/*.py")), (
        "tests/bench/ keeps its modules flat (python -m tests.bench)"
    )
    stems = {path.stem for path in BENCH.glob("*.py")}
    assert stems - HELPERS == set(module_names()), "name a benchmark bench_*.py"
    for name in module_names():
        tree = ast.parse((BENCH / f"{name}.py").read_text())
        mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
        assert mains, f"{name} has no main() returning its rows"
