"""Fixtures of the end-to-end tests: an isolated home per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.daemon import Home


@pytest.fixture
def home() -> Iterator[Home]:
    box = Home()
    try:
        yield box
    finally:
        box.cleanup()
