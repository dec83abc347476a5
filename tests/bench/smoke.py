"""The benchmarks' smoke switch: ``AGENTD_BENCH_SMOKE=1`` shrinks every size to a token one.

``make bench-smoke`` (and ``tests/test_bench_smoke.py`` inside ``make test``) runs each bench
module once this way, so a module broken by a changed default or API fails CI; the numbers of a
smoke run mean nothing and no budget is judged. A module reads its sizes through :func:`size`.
"""

from __future__ import annotations

import os

ENV = "AGENTD_BENCH_SMOKE"


def enabled() -> bool:
    """Whether this run is a smoke run (the variable is set to anything but ``""``/``0``)."""
    return os.environ.get(ENV, "") not in ("", "0")


def size(full: int, smoke: int = 1) -> int:
    """``full`` in a real run, ``smoke`` in a smoke run."""
    return smoke if enabled() else full
