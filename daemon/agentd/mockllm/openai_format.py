"""The mock's OpenAI Chat Completions side: reading requests, writing replies and errors."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from agentd.mockllm.reply import Plan, PlannedUsage, cut_for_truncation
from agentd.mockllm.scenarios import Conversation

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}


def parse_request(body: dict[str, Any]) -> Conversation:
    """The conversation facts of a ``/chat/completions`` request body."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    text = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    results = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "tool")
    return Conversation(
        last_user_text=text,
        tool_results=results,
        model=str(body.get("model") or "mock-model"),
        stream=bool(body.get("stream")),
    )


def wants_usage(body: dict[str, Any]) -> bool:
    """Whether a streaming request asked for the final usage chunk."""
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def stream_frames(plan: Plan, model: str, *, include_usage: bool) -> list[bytes]:
    """The SSE frames of a streamed reply (cut short when the plan says truncate)."""
    chunk = _Chunker(model)
    head = [chunk({"role": "assistant", "content": ""})]
    body = [chunk({"reasoning_content": piece}) for piece in plan.reasoning_pieces]
    body += [chunk({"content": piece}) for piece in plan.text_pieces]
    for index, call in enumerate(plan.calls):
        function = {"name": call.name, "arguments": ""}
        start = {"index": index, "id": call.id, "type": "function", "function": function}
        body.append(chunk({"tool_calls": [start]}))
        for piece in call.pieces:
            body.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if plan.truncate:
        return head + cut_for_truncation(body)
    closing = [chunk({}, finish_reason=plan.finish)]
    if include_usage:
        closing.append(chunk.usage(_usage(plan.usage)))
    closing.append(b"data: [DONE]\n\n")
    return head + body + closing


def completion(plan: Plan, model: str) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": plan.text or None}
    if plan.reasoning:
        message["reasoning_content"] = plan.reasoning
    if plan.calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in plan.calls
        ]
    return {
        "id": f"chatcmpl-mock-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": plan.finish}],
        "usage": _usage(plan.usage),
    }


def error_body(status: int, message: str, code: str | None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code}}


def _usage(usage: PlannedUsage) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


class _Chunker:
    """Builds ``chat.completion.chunk`` frames sharing one id."""

    def __init__(self, model: str) -> None:
        self.base = {
            "id": f"chatcmpl-mock-{time.monotonic_ns()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

    def __call__(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return _frame({**self.base, "choices": [choice]})

    def usage(self, usage: dict[str, Any]) -> bytes:
        return _frame({**self.base, "choices": [], "usage": usage})


def _frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + msgspec.json.encode(payload) + b"\n\n"
