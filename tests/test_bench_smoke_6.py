"""Shard 6 of the bench smoke (tests/test_bench_smoke.py): its own file, so xdist runs the
shards on several workers."""

from __future__ import annotations

import pytest

from tests.test_bench_smoke import run_smoke, shard


@pytest.mark.parametrize("name", shard(6))
def test_the_bench_module_runs_and_prints_its_table(name: str) -> None:
    run_smoke(name)
