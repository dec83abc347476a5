"""Every benchmark module still runs: ``python -m tests.bench NAME`` with ``AGENTD_BENCH_SMOKE=1``.

Each module runs once on a token size in its own interpreter (as ``make bench-smoke`` runs
them); the test asserts only that it exits 0 and prints its table with at least one row of its
own and no ``failed`` row. No timing is judged: a smoke run's numbers mean nothing. The modules
that drive a browser, VS Code or Neovim are serial (as the other browser tests are); each skips
with a named row where its tool is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.__main__ import module_names
from tests.harness import scaled

REPO = Path(__file__).resolve().parents[1]
BROWSER_OR_EDITOR = {"bench_nvim", "bench_vscode", "bench_web", "bench_web_highlight"}


def _param(name: str) -> object:
    marks = [pytest.mark.serial] if name in BROWSER_OR_EDITOR else []
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_param(name) for name in module_names()])
def test_the_bench_module_runs_and_prints_its_table(name: str) -> None:
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
