"""Fixtures of the subagent tests: an e2e home whose mock LLM scripts parents and children."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import Home
from tests.subagents.scenarios import SUBAGENT_SCENARIOS


@pytest.fixture
def home() -> Iterator[Home]:
    """A trusted project with the subagent scenarios first (then the e2e and built-in ones)."""
    with Home() as box:
        box.use_scenarios(SUBAGENT_SCENARIOS)
        yield box
