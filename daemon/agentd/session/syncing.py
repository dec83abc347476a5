"""The fsyncs of one session file, off the event loop and in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from agentd.errors import StoreWriteFailed


class SyncQueue:
    """Runs ``sync`` (a session file's fsync) in a worker thread each time :meth:`request`
    is called, one at a time and in the order asked, so a slow disk never holds the event
    loop. A failed sync (:class:`StoreWriteFailed`) goes to ``on_failure``."""

    def __init__(
        self, sync: Callable[[], None], on_failure: Callable[[StoreWriteFailed], None]
    ) -> None:
        self._sync = sync
        self._on_failure = on_failure
        self._last: asyncio.Future[None] | None = None

    def request(self) -> None:
        """Sync after the syncs already asked for (returns at once)."""
        self._last = asyncio.ensure_future(self._after(self._last))

    async def flush(self) -> None:
        """Sync after the syncs already asked for and wait for it: what was written is on
        disk when this returns; a failure (:class:`StoreWriteFailed`) is raised here, to the
        caller, instead of going to ``on_failure``."""
        last = self._last = asyncio.ensure_future(self._after(self._last, report=False))
        await last

    async def wait(self) -> None:
        """Until every requested sync has run."""
        if self._last is not None:
            await asyncio.gather(self._last, return_exceptions=True)

    async def _after(self, previous: asyncio.Future[None] | None, *, report: bool = True) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        try:
            await asyncio.to_thread(self._sync)
        except StoreWriteFailed as exc:
            if not report:
                raise
            self._on_failure(exc)
