"""Fixtures of the rewind tests: an e2e home whose mock LLM also plays :data:`SCENARIOS`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import Home
from tests.rewind.scenarios import SCENARIOS


@pytest.fixture
def home() -> Iterator[Home]:
    """A trusted project, the rewind scenarios first, the socket at ``run/agentd.sock``."""
    with Home() as box:
        box.use_scenarios(SCENARIOS)
        yield box
