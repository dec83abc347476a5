"""The document tests use the tool tests' fixtures: a real directory and a session context."""

from tests.tools.conftest import ctx, work

__all__ = ["ctx", "work"]
