"""Retries, HTTP failures and their messages, context overflow, and connect errors."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from agentd.providers import RetryPolicy
from agentd.providers.errors import is_context_overflow, parse_retry_after
from tests.providers.replay import FAST, Replay, collect, error, fixture, provider_for, sse

OK = {"openai": "text_many_chunks", "anthropic": "text_reply"}
RATE_LIMIT = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_429_then_success(api: str) -> None:
    """A 429 is retried after its Retry-After; the Retry event comes before the reply."""
    transport = Replay(
        [error(429, RATE_LIMIT, {"retry-after": "0.02"}), sse(fixture(api, OK[api]))]
    )
    async with transport.client() as http:
        outcome = await collect(provider_for(api, http))
    assert outcome.order[0] == "Retry"
    retry = outcome.retries[0]
    assert (retry.attempt, retry.max_attempts, retry.delay_ms) == (1, 4, 20)
    assert "Rate limit reached" in retry.error
    assert outcome.end.message.stop_reason == "stop"
    assert len(transport.requests) == 2


async def test_retry_after_is_capped() -> None:
    """A server asking for an hour waits at most ``max_retry_after``."""
    policy = RetryPolicy(max_attempts=2, max_retry_after=0.01)
    transport = Replay(
        [error(503, b"busy", {"retry-after": "3600"}), sse(fixture("openai", OK["openai"]))]
    )
    async with transport.client() as http:
        outcome = await collect(provider_for("openai", http, retry=policy))
    assert outcome.retries[0].delay_ms == 10
    assert outcome.end.message.stop_reason == "stop"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_server_error_forever_gives_up(api: str) -> None:
    """500 on every attempt: max_attempts requests, one Retry fewer, then an error message."""
    transport = Replay([error(500, {"error": {"message": "boom", "type": "server_error"}})])
    async with transport.client() as http:
        outcome = await collect(provider_for(api, http))
    assert len(transport.requests) == 4
    assert [r.attempt for r in outcome.retries] == [1, 2, 3]
    message = outcome.end.message
    assert message.stop_reason == "error"
    assert message.error_message == "500 server_error: boom"


def test_backoff_grows_exponentially_within_the_cap() -> None:
    """Without Retry-After, delays double per attempt (plus jitter) up to max_delay."""
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    jittery = RetryPolicy(base_delay=1.0, jitter=0.5)
    assert all(1.0 <= jittery.delay(1) <= 1.5 for _ in range(50))


@pytest.mark.parametrize(
    ("api", "payload", "expected"),
    [
        (
            "openai",
            {
                "error": {
                    "message": "Invalid 'messages[1]'",
                    "type": "invalid_request_error",
                    "code": None,
                }
            },
            "400 invalid_request_error: Invalid 'messages[1]'",
        ),
        (
            "anthropic",
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "max_tokens: too big"},
            },
            "400 invalid_request_error: max_tokens: too big",
        ),
        ("openai", {"error": "model 'llama9' not found"}, "400: model 'llama9' not found"),
        ("openai", {"detail": "Not allowed"}, "400: Not allowed"),
        ("openai", b"<html>Bad gateway config</html>", "400: <html>Bad gateway config</html>"),
    ],
)
async def test_client_errors_fail_at_once_with_the_providers_message(
    api: str, payload: object, expected: str
) -> None:
    """A 4xx other than 429 is not retried; the message comes from the error body."""
    transport = Replay([error(400, payload)])
    async with transport.client() as http:
        outcome = await collect(provider_for(api, http))
    assert len(transport.requests) == 1
    assert outcome.retries == []
    assert outcome.end.message.error_message == expected
    assert outcome.end.context_overflow is False


@pytest.mark.parametrize(
    ("api", "payload"),
    [
        (
            "openai",
            {
                "error": {
                    "message": "too long",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        ),
        ("openai", {"error": {"message": "This model's maximum context length is 8192 tokens."}}),
        (
            "anthropic",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
        ),
        (
            "anthropic",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "input length and `max_tokens` exceed context limit: "
                    "198000 + 8192 > 200000",
                },
            },
        ),
    ],
)
async def test_context_overflow_is_flagged(api: str, payload: object) -> None:
    """Overflow errors set ``context_overflow`` on the StreamEnd."""
    transport = Replay([error(400, payload)])
    async with transport.client() as http:
        outcome = await collect(provider_for(api, http))
    assert outcome.end.context_overflow is True
    assert outcome.end.message.stop_reason == "error"


def test_overflow_patterns_do_not_fire_on_other_errors() -> None:
    """Ordinary errors are not overflow."""
    assert not is_context_overflow("invalid_api_key", "Incorrect API key provided")
    assert is_context_overflow(None, "Request exceeds the context window of this model")


async def test_anthropic_overloaded_529_is_retried() -> None:
    """Anthropic's 529 overloaded_error is transient."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    transport = Replay([error(529, body), sse(fixture("anthropic", "text_reply"))])
    async with transport.client() as http:
        outcome = await collect(provider_for("anthropic", http))
    assert outcome.retries[0].error == "529 overloaded_error: Overloaded"
    assert outcome.end.message.stop_reason == "stop"


async def test_empty_reply_before_any_delta_is_retried() -> None:
    """A 200 that ends without a finish reason and without content is retried."""
    transport = Replay([sse(b""), sse(fixture("openai", OK["openai"]))])
    async with transport.client() as http:
        outcome = await collect(provider_for("openai", http))
    assert len(outcome.retries) == 1
    assert outcome.end.message.stop_reason == "stop"


async def test_json_error_with_status_200() -> None:
    """A JSON body instead of an event stream is read for its error."""
    response = httpx.Response(
        200, json={"error": {"message": "quota exhausted", "type": "insufficient_quota"}}
    )
    transport = Replay([response])
    async with transport.client() as http:
        outcome = await collect(provider_for("openai", http))
    assert outcome.end.message.error_message == "insufficient_quota: quota exhausted"


async def test_single_attempt_policy_does_not_retry() -> None:
    """max_attempts=1 turns retries off."""
    transport = Replay([error(503, b"")])
    async with transport.client() as http:
        outcome = await collect(provider_for("openai", http, retry=RetryPolicy(max_attempts=1)))
    assert outcome.retries == []
    assert outcome.end.message.error_message == "503: Service Unavailable"


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_connect_error_is_retried_then_reported(api: str) -> None:
    """Nothing listening on the port: every attempt fails to connect, then one error message."""
    url = f"http://127.0.0.1:{unused_port()}/v1"
    async with httpx.AsyncClient() as http:
        outcome = await collect(provider_for(api, http, base_url=url, retry=FAST))
    assert len(outcome.retries) == 3
    message = outcome.end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith("cannot connect to http://127.0.0.1:")


async def test_unsupported_url_is_not_retried() -> None:
    """A base URL with a scheme httpx cannot speak fails at once with a clear message."""
    async with httpx.AsyncClient() as http:
        outcome = await collect(provider_for("openai", http, base_url="ftp://llm.test/v1"))
    assert outcome.retries == []
    assert outcome.end.message.error_message is not None
    assert "unsupported URL" in outcome.end.message.error_message


def test_retry_after_forms() -> None:
    """Seconds, milliseconds and HTTP dates are understood; garbage is ignored."""
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    now = datetime(2030, 1, 1, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"retry-after": later}, now=now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
