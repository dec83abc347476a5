"""Fixtures of the batch tests: a :class:`~tests.batch.harness.BatchBox` per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.batch.harness import BatchBox


@pytest.fixture
def box() -> Iterator[BatchBox]:
    sandbox = BatchBox()
    try:
        yield sandbox
    finally:
        sandbox.close()
