"""Fixtures of the LSP editor tests: an isolated home whose mock LLM edits ``notes.txt``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import Home
from tests.lsp_editors.harness import make_home


@pytest.fixture
def home() -> Iterator[Home]:
    box = make_home()
    try:
        yield box
    finally:
        box.cleanup()
