"""The mock's OpenAI Responses side: reading requests, writing replies and errors."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from agentd.mockllm.reply import Plan, PlannedCall, PlannedUsage, cut_for_truncation
from agentd.mockllm.scenarios import Conversation
from agentd.mockllm.search import responses_annotations, responses_items, responses_offer

_ERROR_CODES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}
MOCK_ENCRYPTED = "mock-encrypted-reasoning"


def parse_request(body: dict[str, Any]) -> Conversation:
    """The conversation facts of a ``/v1/responses`` request body.

    The last user message is the last ``user`` item with text; every
    ``function_call_output`` item after it counts as a tool result.
    """
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = [i for i in items or [] if isinstance(i, dict)]
    last_user, text = -1, ""
    for index, item in enumerate(items):
        if item.get("role") == "user" and _text(item.get("content")):
            last_user, text = index, _text(item.get("content"))
    results = sum(1 for i in items[last_user + 1 :] if i.get("type") == "function_call_output")
    return Conversation(
        last_user_text=text,
        tool_results=results,
        model=str(body.get("model") or "mock-model"),
        stream=bool(body.get("stream")),
        search=responses_offer(body),
    )


def stream_frames(plan: Plan, model: str) -> list[bytes]:
    """The SSE frames of a streamed reply (cut short when the plan says truncate)."""
    created = _response(plan, model, status="in_progress", output=[])
    head = [_event("response.created", {"response": created})]
    body: list[bytes] = []
    for position, item in enumerate(_items(plan)):
        body += _item_frames(position, item, plan)
    if plan.truncate:
        return head + cut_for_truncation(body)
    done = _response(plan, model, status="completed", output=_items(plan))
    return head + body + [_event("response.completed", {"response": done})]


def response(plan: Plan, model: str) -> dict[str, Any]:
    """A non-streamed ``response`` object."""
    return _response(plan, model, status="completed", output=_items(plan))


def error_body(status: int, message: str, code: str | None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    kind = _ERROR_CODES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code}}


def _items(plan: Plan) -> list[dict[str, Any]]:
    """The reply's output items, complete: reasoning, message, function calls."""
    items: list[dict[str, Any]] = []
    if plan.reasoning:
        summary = [{"type": "summary_text", "text": plan.reasoning}]
        items.append(
            {
                "type": "reasoning",
                "id": "rs_mock_0",
                "summary": summary,
                "encrypted_content": MOCK_ENCRYPTED,
            }
        )
    items += responses_items(plan.searches)
    if plan.text:
        notes = responses_annotations(plan.searches, plan.text)
        content = [{"type": "output_text", "text": plan.text, "annotations": notes}]
        message = {
            "type": "message",
            "id": "msg_mock_1",
            "role": "assistant",
            "status": "completed",
        }
        items.append({**message, "content": content})
    items += [_function_call(position, call) for position, call in enumerate(plan.calls)]
    return items


def _function_call(position: int, call: PlannedCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_mock_{position}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }


def _item_frames(position: int, item: dict[str, Any], plan: Plan) -> list[bytes]:
    """``output_item.added``, the item's deltas, ``output_item.done``."""
    where = {"output_index": position, "item_id": item["id"]}
    kind = item["type"]
    if kind == "reasoning":
        added = {**item, "summary": [], "encrypted_content": None}
        deltas = [
            _event(
                "response.reasoning_summary_text.delta", {**where, "summary_index": 0, "delta": p}
            )
            for p in plan.reasoning_pieces
        ]
    elif kind == "message":
        added = {**item, "content": [], "status": "in_progress"}
        deltas = [
            _event("response.output_text.delta", {**where, "content_index": 0, "delta": p})
            for p in plan.text_pieces
        ]
        deltas += [
            _event(
                "response.output_text.annotation.added",
                {**where, "content_index": 0, "annotation_index": n, "annotation": note},
            )
            for n, note in enumerate(item["content"][0]["annotations"])
        ]
    elif kind == "web_search_call":
        added = {"type": kind, "id": item["id"], "status": "in_progress"}
        steps = ("in_progress", "searching", "completed" if item["status"] != "failed" else None)
        deltas = [_event(f"response.web_search_call.{s}", where) for s in steps if s]
    else:
        added = {**item, "arguments": "", "status": "in_progress"}
        pieces = next(c.pieces for c in plan.calls if c.id == item["call_id"])
        deltas = [
            _event("response.function_call_arguments.delta", {**where, "delta": p}) for p in pieces
        ]
        done = {**where, "arguments": item["arguments"]}
        deltas.append(_event("response.function_call_arguments.done", done))
    return [
        _event("response.output_item.added", {"output_index": position, "item": added}),
        *deltas,
        _event("response.output_item.done", {"output_index": position, "item": item}),
    ]


def _response(plan: Plan, model: str, *, status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": f"resp_mock_{time.monotonic_ns()}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": _usage(plan.usage) if status == "completed" else None,
    }


def _usage(usage: PlannedUsage) -> dict[str, Any]:
    total_input = usage.input_tokens + usage.cache_read_tokens
    return {
        "input_tokens": total_input,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total_input + usage.output_tokens,
    }


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    data = msgspec.json.encode({"type": kind, **payload})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, dict) and p.get("type") in ("input_text", "text")
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""
