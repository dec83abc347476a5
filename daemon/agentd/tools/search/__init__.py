"""What grep and find are built on: walks, ignore rules, globs, the search backends; and
:func:`find_rg`, which says whether the ripgrep backend can run (here, so that a session's
grep description, which names the backend's regex dialect, imports no backend)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentd.paths import which


def find_rg() -> str | None:
    """Path of ``rg``: on PATH, else next to the running interpreter (a virtualenv's
    ``bin`` holds the one from PyPI's ``ripgrep`` package), else None."""
    found = which("rg")
    if found is None:
        sibling = Path(sys.executable).parent / "rg"
        found = str(sibling) if os.access(sibling, os.X_OK) else None
    return found
