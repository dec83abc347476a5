"""The benchmarks' smoke switch: ``AGENTD_BENCH_SMOKE=1`` shrinks every size to a token one.

``make bench-smoke`` (and ``tests/test_bench_smoke.py`` inside ``make test``) runs each bench
module once this way, so a module broken by a changed default or API fails CI; the numbers of a
smoke run mean nothing and no budget is judged. A module reads its sizes through :func:`size`
and puts its generated data under :func:`data_dir`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ENV = "AGENTD_BENCH_SMOKE"


def enabled() -> bool:
    """Whether this run is a smoke run (the variable is set to anything but ``""``/``0``)."""
    return os.environ.get(ENV, "") not in ("", "0")


def size(full: int, smoke: int = 1) -> int:
    """``full`` in a real run, ``smoke`` in a smoke run."""
    return smoke if enabled() else full


def data_dir(name: str) -> Path:
    """Where a module keeps its generated data.

    A real run reuses ``/tmp/agentd-bench-NAME`` (generating it is the slow part). A smoke run
    gets a fresh folder of its own, removed when the process exits, so smoke runs side by side
    (xdist workers, two checkouts' ``make test``) never share or clobber one.
    """
    if not enabled():
        return Path(f"/tmp/agentd-bench-{name}")
    folder = Path(tempfile.mkdtemp(prefix=f"agentd-bench-{name}-smoke-", dir="/tmp"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
