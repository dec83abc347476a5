"""Fixtures of the end-to-end tests: an isolated home per test (:mod:`tests.harness`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import Home, IsolatedHome


@pytest.fixture
def home() -> Iterator[Home]:
    """A trusted project, the e2e mock scenarios, the socket at ``run/agentd.sock``."""
    with Home() as box:
        yield box


@pytest.fixture
def sandbox() -> Iterator[IsolatedHome]:
    """Bare isolated XDG directories; a started daemon logs to ``sandbox.log``."""
    with IsolatedHome() as box:
        yield box
