"""The mock's Anthropic Messages side: reading requests, writing replies and errors."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from agentd.mockllm.reply import Plan, PlannedCall, cut_for_truncation
from agentd.mockllm.scenarios import Conversation
from agentd.mockllm.search import anthropic_blocks, anthropic_citations, anthropic_offer

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
MOCK_SIGNATURE = "mock-signature"


def parse_request(body: dict[str, Any]) -> Conversation:
    """The conversation facts of a ``/v1/messages`` request body.

    The last user message is the last one with text (not only tool results); every
    ``tool_result`` block after it counts as a tool result.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last_user, text = -1, ""
    for index, message in enumerate(messages):
        if message.get("role") == "user" and _text(message.get("content")):
            last_user, text = index, _text(message.get("content"))
    results = sum(_tool_results(m.get("content")) for m in messages[last_user + 1 :])
    return Conversation(
        last_user_text=text,
        tool_results=results,
        model=str(body.get("model") or "mock-model"),
        stream=bool(body.get("stream")),
        search=anthropic_offer(body),
    )


def stream_frames(plan: Plan, model: str) -> list[bytes]:
    """The SSE frames of a streamed reply (cut short when the plan says truncate)."""
    start = _message(plan, model, content=[], stop_reason=None)
    start["usage"]["output_tokens"] = 1
    head = [_event("message_start", {"message": start})]
    body: list[bytes] = []
    index = 0
    if plan.reasoning:
        body += _block_frames(
            index,
            {"type": "thinking", "thinking": "", "signature": ""},
            [{"type": "thinking_delta", "thinking": piece} for piece in plan.reasoning_pieces]
            + [{"type": "signature_delta", "signature": MOCK_SIGNATURE}],
        )
        index += 1
    body.append(_event("ping", {}))
    for block, given in anthropic_blocks(plan.searches):
        pieces = [{"type": "input_json_delta", "partial_json": given}] if given else []
        body += _block_frames(index, block, pieces)
        index += 1
    if plan.text:
        deltas = [{"type": "text_delta", "text": piece} for piece in plan.text_pieces]
        deltas += anthropic_citations(plan.searches)
        body += _block_frames(index, {"type": "text", "text": ""}, deltas)
        index += 1
    for call in plan.calls:
        body += _block_frames(
            index,
            _tool_use(call, {}),
            [{"type": "input_json_delta", "partial_json": piece} for piece in call.pieces],
        )
        index += 1
    if plan.truncate:
        return head + cut_for_truncation(body)
    stop = {"stop_reason": _stop_reason(plan), "stop_sequence": None}
    usage: dict[str, Any] = {"output_tokens": plan.usage.output_tokens}
    if plan.searches.searches:
        usage["server_tool_use"] = {"web_search_requests": len(plan.searches.searches)}
    closing = [
        _event("message_delta", {"delta": stop, "usage": usage}),
        _event("message_stop", {}),
    ]
    return head + body + closing


def message(plan: Plan, model: str) -> dict[str, Any]:
    """A non-streamed ``message`` object."""
    content: list[dict[str, Any]] = []
    if plan.reasoning:
        content.append(
            {"type": "thinking", "thinking": plan.reasoning, "signature": MOCK_SIGNATURE}
        )
    for block, given in anthropic_blocks(plan.searches):
        content.append({**block, "input": msgspec.json.decode(given)} if given else block)
    if plan.text:
        cited = [delta["citation"] for delta in anthropic_citations(plan.searches)]
        content.append(
            {"type": "text", "text": plan.text, **({"citations": cited} if cited else {})}
        )
    for call in plan.calls:
        try:
            arguments = msgspec.json.decode(call.arguments)
        except msgspec.DecodeError:
            arguments = {}
        content.append(_tool_use(call, arguments if isinstance(arguments, dict) else {}))
    return _message(plan, model, content=content, stop_reason=_stop_reason(plan))


def error_body(status: int, message: str, code: str | None) -> dict[str, Any]:
    """An Anthropic-style error body (``code``, when given, is the error type)."""
    kind = code or _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _message(
    plan: Plan, model: str, *, content: list[dict[str, Any]], stop_reason: str | None
) -> dict[str, Any]:
    usage = plan.usage
    return {
        "id": f"msg_mock_{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
        },
    }


def _block_frames(index: int, block: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    frames = [_event("content_block_start", {"index": index, "content_block": block})]
    frames += [_event("content_block_delta", {"index": index, "delta": d}) for d in deltas]
    frames.append(_event("content_block_stop", {"index": index}))
    return frames


def _tool_use(call: PlannedCall, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def _stop_reason(plan: Plan) -> str:
    if plan.stop is not None:
        return {"length": "max_tokens", "refusal": "refusal"}[plan.stop]
    return "tool_use" if plan.calls else "end_turn"


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    data = msgspec.json.encode({"type": kind, **payload})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _tool_results(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
