"""When and how long to wait before another attempt at a failed LLM call."""

from __future__ import annotations

import os

import msgspec


class RetryPolicy(msgspec.Struct, frozen=True):
    """Retry settings of a provider.

    ``max_attempts`` counts every attempt, the first included (1 disables retries). The n-th
    retry waits ``base_delay * 2**(n-1)`` seconds, plus up to ``jitter`` of it at random,
    capped at ``max_delay``. A server's ``Retry-After`` replaces that delay, capped at
    ``max_retry_after``. ``connect_timeout`` bounds connecting; ``read_timeout`` bounds the
    silence between two received bytes of a reply (a stalled stream fails, and is retried only
    if nothing was streamed yet).
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    jitter: float = 0.25
    connect_timeout: float = 15.0
    read_timeout: float = 300.0

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after attempt number ``failed_attempt`` (1-based) failed."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        backoff = self.base_delay * (2.0 ** (failed_attempt - 1))
        backoff *= 1.0 + self.jitter * _unit_random()
        return min(backoff, self.max_delay)


def _unit_random() -> float:
    """A random float in [0, 1), from the OS (the ``random`` module is not worth its import
    here)."""
    return int.from_bytes(os.urandom(7), "big") / 2**56
