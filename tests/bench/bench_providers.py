"""Provider budgets: per-delta overhead, SSE decoder throughput and linearity, mock server.

``python -m tests.bench.bench_providers`` prints the table. Figures are medians of several
runs on this machine; every measurement runs the real code (the OpenAI provider behind an
``httpx.MockTransport``, the SSE decoder, the mock server over loopback).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import AsyncIterator, Callable

import httpx
import msgspec

from agentd.config.load import ModelChoice
from agentd.mockllm import MockLLMServer
from agentd.protocol.content import TextContent, UserMessage
from agentd.providers import make_provider
from agentd.providers.base import ProviderRequest, StreamEnd
from agentd.providers.sse import SSEDecoder
from agentd.providers.transport import new_http_client
from tests.bench.smoke import size

Row = tuple[str, str, str]
DELTAS = 1000  # the mock's "long reply" has this many
RUNS = size(15)


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + msgspec.json.encode(payload) + b"\n\n"


def transcript(deltas: int = DELTAS) -> list[bytes]:
    """An OpenAI stream of ``deltas`` text chunks, one event per network chunk."""
    events = [_chunk({"role": "assistant", "content": ""})]
    events += [_chunk({"content": f"w{n % 10}rd "}) for n in range(deltas)]
    events += [_chunk({}, "stop"), b"data: [DONE]\n\n"]
    return events


def _request(text: str) -> ProviderRequest:
    user = UserMessage(id="u", content=[TextContent(text=text)], timestamp=0.0)
    return ProviderRequest(model="m", system_prompt="", messages=[user], message_id="b")


async def _drain(http: httpx.AsyncClient, base_url: str, text: str) -> int:
    choice = ModelChoice("bench", "openai", "m", base_url, None, None)
    count = 0
    async for item in make_provider(choice, http).stream(_request(text)):
        if isinstance(item, StreamEnd):
            assert item.message.stop_reason == "stop", item.message.error_message
        else:
            count += 1
    return count


async def _per_delta_us() -> float:
    events = transcript()

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, content=_AsyncChunks(events))

    times = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        for _ in range(RUNS):
            started = time.perf_counter()
            assert await _drain(http, "http://bench.test/v1", "x") == DELTAS
            times.append((time.perf_counter() - started) / DELTAS * 1e6)
    return statistics.median(times)


class _AsyncChunks:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _decode_all(chunks: list[bytes]) -> int:
    decoder = SSEDecoder()
    return sum(len(decoder.feed(chunk)) for chunk in chunks)


def _best_seconds(action: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def _random_chunks(data: bytes, low: int, high: int) -> list[bytes]:
    rng = random.Random(7)
    chunks, position = [], 0
    while position < len(data):
        size = rng.randint(low, high)
        chunks.append(data[position : position + size])
        position += size
    return chunks


def _throughput_mb_s() -> float:
    data = b"".join(transcript(20_000))
    chunks = _random_chunks(data, 200, 4096)
    seconds = _best_seconds(lambda: _decode_all(chunks))
    return len(data) / seconds / 1e6


def _single_event_ms(megabytes: int, chunk: int) -> float:
    data = b"data: " + b"x" * (megabytes << 20) + b"\n\n"
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    return _best_seconds(lambda: _decode_all(chunks)) * 1000


async def _mock_reply_ms() -> float:
    times = []
    async with MockLLMServer() as server, new_http_client() as http:  # the daemon's client
        for _ in range(5):
            started = time.perf_counter()
            assert await _drain(http, server.url, "long reply") == DELTAS
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> list[Row]:
    """Measure every provider budget; returns (measure, value, budget) rows."""
    per_delta = asyncio.run(_per_delta_us())
    one_mb = _single_event_ms(1, 1024)
    four_mb = _single_event_ms(4, 1024)
    return [
        ("provider overhead per streamed delta (median)", f"{per_delta:.1f} µs", "≤ 50 µs"),
        (
            "SSE decoder throughput (random 200-4096 B chunks)",
            f"{_throughput_mb_s():.0f} MB/s",
            "≥ 20 MB/s",
        ),
        ("SSE 1 MB single event in 1 KB chunks", f"{one_mb:.1f} ms", "≤ 50 ms"),
        ("SSE 4 MB / 1 MB single-event time (linearity)", f"{four_mb / one_mb:.2f}×", "≤ 5×"),
        (
            "mock server: 1,000-delta streamed reply, loopback",
            f"{asyncio.run(_mock_reply_ms()):.0f} ms",
            "≤ 500 ms",
        ),
    ]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure:<{width}}  {value:>10}  {budget}")
