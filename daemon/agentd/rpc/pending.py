"""The calls a connection has made to its peer and not yet seen answered."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any

import msgspec

from agentd.errors import PeerTimeout
from agentd.rpc import envelope

log = logging.getLogger("agentd.rpc")


class PendingCalls:
    """Request ids (1, 2, …) and the futures their answers settle."""

    def __init__(self) -> None:
        self._futures: dict[int, asyncio.Future[msgspec.Raw]] = {}
        self._ids = itertools.count(1)

    def open(self) -> tuple[int, asyncio.Future[msgspec.Raw]]:
        """A new request id and the future its answer will settle."""
        request_id = next(self._ids)
        future: asyncio.Future[msgspec.Raw] = asyncio.get_running_loop().create_future()
        self._futures[request_id] = future
        return request_id, future

    def forget(self, request_id: int) -> None:
        self._futures.pop(request_id, None)

    async def call(
        self,
        method: str,
        send: Callable[[int], None],
        send_cancel: Callable[[int], None],
        *,
        result_type: Any,
        timeout: float | None,
    ) -> Any:
        """Send a request (``send`` gets its id) and return its answer's result decoded as
        ``result_type``. After ``timeout`` seconds, or when the calling task is cancelled,
        ``send_cancel`` tells the peer and :class:`PeerTimeout` (or the cancel) is raised."""
        request_id, future = self.open()
        send(request_id)
        try:
            async with asyncio.timeout(timeout):
                raw = await future
        except TimeoutError:
            send_cancel(request_id)
            raise PeerTimeout(f"no answer to {method} within {timeout:g} s") from None
        except asyncio.CancelledError:
            send_cancel(request_id)
            raise
        finally:
            self.forget(request_id)
        return envelope.decode_result(method, raw, result_type)

    def settle(self, response: envelope.Response) -> None:
        """Settle the call ``response`` answers (its result, or its error as an exception);
        an answer to no pending call is ignored."""
        request_id = response.id
        future = self._futures.get(request_id) if isinstance(request_id, int) else None
        if future is None or future.done():
            log.debug("response to unknown request ignored", extra={"id": request_id})
            return
        if response.error is not None:
            future.set_exception(envelope.to_exception(response.error))
        else:
            future.set_result(response.result)

    def fail_all(self, error: Exception) -> None:
        """End every call still waiting with ``error`` (the connection closed)."""
        for future in self._futures.values():
            if not future.done():
                future.set_exception(error)
