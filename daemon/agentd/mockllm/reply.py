"""A planned reply, independent of the wire format: the pieces to stream and the usage.

Text, reasoning and tool arguments are cut into small pieces (3 to 8 characters, the same cut
for the same text, or ``chunk_size`` characters when the step sets it), as real servers do.
Token counts are estimated as ``len(text) // 4`` unless the step gives ``usage``.
"""

from __future__ import annotations

import random
import zlib

import msgspec

from agentd.mockllm.scenarios import SearchOffer, StepSpec
from agentd.mockllm.search import PlannedSearches, plan_searches

_MIN_PIECE = 3
_MAX_PIECE = 8


class PlannedCall(msgspec.Struct, frozen=True):
    """A tool call and the pieces of its arguments string."""

    id: str
    name: str
    arguments: str
    pieces: list[str]


class PlannedUsage(msgspec.Struct, frozen=True):
    """Token counts to report."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Plan(msgspec.Struct, frozen=True):
    """Everything a wire renderer needs to answer one request."""

    text: str
    text_pieces: list[str]
    reasoning: str
    reasoning_pieces: list[str]
    calls: list[PlannedCall]
    usage: PlannedUsage
    truncate: bool = False
    delay_ms: int = 0
    chunk_delay_ms: int = 0
    stop: str | None = None
    searches: PlannedSearches = PlannedSearches()

    @property
    def finish(self) -> str:
        """OpenAI's finish reason: ``tool_calls`` when the reply calls tools, else ``stop``
        (``length`` / ``content_filter`` when the step says so)."""
        if self.stop is not None:
            return {"length": "length", "refusal": "content_filter"}[self.stop]
        return "tool_calls" if self.calls else "stop"


def split(text: str, size: int | None = None) -> list[str]:
    """Cut ``text`` into pieces of ``size`` characters, or of 3 to 8 (stable per text)."""
    if size is not None:
        return [text[i : i + size] for i in range(0, len(text), size)]
    rng = random.Random(zlib.crc32(text.encode("utf-8", "surrogatepass")))
    pieces: list[str] = []
    position = 0
    while position < len(text):
        step = rng.randint(_MIN_PIECE, _MAX_PIECE)
        pieces.append(text[position : position + step])
        position += step
    return pieces


def plan_reply(step: StepSpec, request_chars: int, search: SearchOffer | None = None) -> Plan:
    """The reply to stream for ``step``; ``request_chars`` sizes the input token estimate;
    ``search``: the provider-side search the request offers (its scripted searches run)."""
    response = step.response
    text = response.text
    calls = [
        PlannedCall(
            id=call.id,
            name=call.function.name,
            arguments=call.function.arguments,
            pieces=split(call.function.arguments, step.chunk_size),
        )
        for call in response.tool_calls
    ]
    produced = len(text) + len(response.reasoning) + sum(len(c.arguments) for c in calls)
    override = step.usage
    usage = PlannedUsage(
        input_tokens=_pick(override.input_tokens if override else None, request_chars // 4),
        output_tokens=_pick(override.output_tokens if override else None, produced // 4),
        cache_read_tokens=override.cache_read_tokens if override else 0,
        cache_write_tokens=override.cache_write_tokens if override else 0,
    )
    return Plan(
        text=text,
        text_pieces=split(text, step.chunk_size),
        reasoning=response.reasoning,
        reasoning_pieces=split(response.reasoning, step.chunk_size),
        calls=calls,
        usage=usage,
        truncate=step.truncate,
        delay_ms=step.delay_ms,
        chunk_delay_ms=step.chunk_delay_ms,
        stop=response.stop,
        searches=plan_searches(response, search),
    )


def _pick(value: int | None, estimate: int) -> int:
    return estimate if value is None else value


def cut_for_truncation(body: list[bytes]) -> list[bytes]:
    """The first half of the body frames (at least one): a stream cut off mid-reply."""
    return body[: max(len(body) // 2, 1)]
