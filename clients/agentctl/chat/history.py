"""The chat's line history: readline's, kept in the agentd state directory (0700), read when
the chat starts and written when it ends. readline is imported only here and in the
completion, on first use (a terminal without it has no history)."""

from __future__ import annotations

import contextlib
from pathlib import Path

HISTORY_LENGTH = 1000


def history_path() -> Path:
    """Where the REPL keeps its line history."""
    from agentd.paths import state_dir

    return state_dir() / "chat_history"


def load_history() -> Path | None:
    """Read the line history into readline (capped at :data:`HISTORY_LENGTH` lines); its file,
    or None without readline."""
    try:
        import readline
    except ImportError:
        return None
    path = history_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists():
            readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)
    return path


def save_history(path: Path | None) -> None:
    """Write readline's history back to ``path`` (from :func:`load_history`)."""
    if path is None:
        return
    import readline

    with contextlib.suppress(OSError):
        readline.write_history_file(path)
