"""The providers' HTTP contract: what a provider sends through (:class:`ProviderHttp`), what it
gets back (:class:`ProviderResponse`) and the timeouts it sets (:class:`Timeouts`).

Two clients implement it: :class:`agentd.providers.transport.ProviderClient` (plain HTTP itself,
https through httpx) and :class:`agentd.providers.httpx_client.HttpxClient` (any
``httpx.AsyncClient``). Both raise only :mod:`agentd.providers.http_failures`' exceptions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import NamedTuple, Protocol


class Timeouts(NamedTuple):
    """Seconds allowed to connect, to write the request, and for each read (None: no limit).
    The default allows 15 s to connect and 10 minutes between bytes."""

    connect: float | None = 15.0
    read: float | None = 600.0
    write: float | None = 60.0


class ProviderResponse(Protocol):
    """A response whose head has arrived. ``headers``: names lower-case, a repeated header's
    values joined with ``", "``. Iterate :meth:`aiter_bytes` once; :meth:`aclose` before the
    end drops the connection."""

    status_code: int
    headers: Mapping[str, str]

    @property
    def is_success(self) -> bool: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class ProviderHttp(Protocol):
    """What the providers send through: :class:`~agentd.providers.transport.ProviderClient`,
    or any ``httpx.AsyncClient`` behind :class:`~agentd.providers.httpx_client.HttpxClient`."""

    async def open(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        timeouts: Timeouts | None = None,
    ) -> ProviderResponse: ...

    async def aclose(self) -> None: ...


async def read_all(response: ProviderResponse) -> bytes:
    """The whole body of ``response`` (then closed)."""
    try:
        return b"".join([part async for part in response.aiter_bytes()])
    finally:
        await response.aclose()
