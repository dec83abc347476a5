"""Fixtures of the agentctl tests: an isolated sandbox per end-to-end test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """Temp XDG directories and a project dir; the sandbox's daemon is stopped afterwards."""
    box = Sandbox()
    try:
        yield box
    finally:
        box.close()
