"""Session methods (``session/*``, ``models/list``) and the registry of loaded sessions."""

from __future__ import annotations

from typing import Any


class SessionManager:
    """Owns every loaded session of the daemon, independent of connections."""

    def __init__(self, daemon: Any) -> None:
        self.daemon = daemon

    def loaded_ids(self) -> list[str]:
        """Ids of the sessions loaded in this daemon."""
        return []

    async def close(self) -> None:
        """Cancel running runs and flush every session file (daemon shutdown)."""


def register_sessions(router: Any, daemon: Any) -> None:
    """Register the session methods on ``router``."""
