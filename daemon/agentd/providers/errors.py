"""Provider failures: how HTTP statuses, error bodies, error events and failed requests
(:mod:`agentd.providers.http_failures`) become one :class:`ProviderFailure`, and which of them
are worth retrying (:func:`translating_http_errors`).
``ProviderFailure`` never leaves the providers package: the stream driver turns it into a final
``StreamEnd`` whose message has ``stop_reason="error"``.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from agentd.providers.http_failures import (
    ConnectFailed,
    ConnectionBroken,
    HttpFailure,
    RequestRefused,
    TimedOut,
    UnsupportedUrl,
)

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
"""Statuses retried with backoff: timeouts, rate limits, server errors, Anthropic's 529."""

_OVERFLOW_PATTERNS = "|".join(
    (
        r"context[_ ]length[_ ]exceeded",
        r"maximum context length",
        r"prompt is too long",
        r"input length and `?max_tokens`? exceed context limit",
        r"exceeds? (the )?(model'?s? )?context (window|length|limit)",
        r"context window (is )?exceeded",
        r"too many (input )?tokens",
        r"reduce the length of the (messages|prompt)",
    )
)
"""What a context overflow's error says (case ignored): compiled by ``re`` on the first error
looked at, not when the module is imported."""
_RETRYABLE_ERROR_TYPES = frozenset(
    {"overloaded_error", "rate_limit_error", "api_error", "server_error", "timeout_error"}
)
_MAX_BODY_SHOWN = 500


class ProviderFailure(Exception):
    """One failed attempt. ``message`` is shown to users; ``retryable`` allows another try;
    ``retry_after`` the seconds the provider asked for; ``status`` the HTTP status, if any."""

    def __init__(
        self,
        message: str,
        retryable: bool = False,
        context_overflow: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.context_overflow = context_overflow
        self.retry_after = retry_after
        self.status = status

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"ProviderFailure({self.message!r}, retryable={self.retryable})"


def is_context_overflow(*texts: str | None) -> bool:
    """Whether an error code or message says the prompt did not fit the model's context."""
    return any(text and re.search(_OVERFLOW_PATTERNS, text, re.IGNORECASE) for text in texts)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # an HTTP date: rare, and email is heavy

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def failure_from_error_object(error: Any, *, status: int | None = None) -> ProviderFailure:
    """A failure from an error object: OpenAI ``{"message","type","code"}``, Anthropic
    ``{"type","message"}``, or a bare string. Used for bodies and mid-stream error events."""
    if isinstance(error, str):
        error = {"message": error}
    if not isinstance(error, dict):
        error = {}
    message = str(error.get("message") or "") or "the provider returned an error"
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    code = error.get("code") if isinstance(error.get("code"), str | int) else None
    label = " ".join(str(part) for part in (status, kind or code) if part)
    retryable = (status in RETRYABLE_STATUSES) if status else (kind in _RETRYABLE_ERROR_TYPES)
    return ProviderFailure(
        message=f"{label}: {message}" if label else message,
        retryable=retryable or kind == "overloaded_error",
        context_overflow=is_context_overflow(str(code or ""), message),
        status=status,
    )


def failure_from_response(status: int, headers: Mapping[str, str], body: bytes) -> ProviderFailure:
    """A failure for a non-2xx HTTP response, with the provider's own message when it sent one."""
    error: Any = None
    try:
        decoded = msgspec.json.decode(body) if body else None
    except msgspec.DecodeError:
        decoded = None
    if isinstance(decoded, dict):
        error = decoded.get("error")
        if error is None:
            detail = decoded.get("detail")
            error = detail if isinstance(detail, str) else decoded
    if error is None or (isinstance(error, dict) and not error.get("message")):
        text = body.decode("utf-8", "replace").strip()[:_MAX_BODY_SHOWN]
        error = {**(error if isinstance(error, dict) else {}), "message": text or _reason(status)}
    failure = failure_from_error_object(error, status=status)
    failure.retry_after = parse_retry_after(headers)
    return failure


def failure_from_exception(exc: HttpFailure, url: str) -> ProviderFailure:
    """Translate a failed request: connection and transport failures are retryable, the rest
    are not."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, UnsupportedUrl):
        return ProviderFailure(f"unsupported URL {url!r}: {detail}")
    if isinstance(exc, ConnectFailed):
        return ProviderFailure(f"cannot connect to {url}: {detail}", retryable=True)
    if isinstance(exc, TimedOut):
        return ProviderFailure(f"the provider did not answer in time ({detail})", retryable=True)
    if isinstance(exc, ConnectionBroken):
        return ProviderFailure(f"connection to the provider failed: {detail}", retryable=True)
    if isinstance(exc, RequestRefused):
        return ProviderFailure(f"the request to the provider cannot be sent: {detail}")
    return ProviderFailure(f"HTTP request failed: {detail}")


@asynccontextmanager
async def translating_http_errors(url: str) -> AsyncIterator[None]:
    """Run a block, re-raising a failed request (:class:`HttpFailure`) as a ProviderFailure."""
    try:
        yield
    except HttpFailure as exc:
        raise failure_from_exception(exc, url) from exc


def decode_event_data(data: str) -> Any:
    """The JSON payload of an SSE event; malformed JSON is a (non-retryable) failure."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise ProviderFailure(f"malformed data in the event stream ({exc}): {data[:200]}") from exc


def _reason(status: int) -> str:
    from http import HTTPStatus  # an enum of 60 members: built only for an error without a body

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"
