"""Anthropic Messages, streamed, at ``{base_url}/v1/messages`` (``/messages`` when the base URL
already ends in ``/v1``), with ``x-api-key`` and ``anthropic-version: 2023-06-01``.

Events: ``message_start`` (input usage), ``content_block_start`` / ``content_block_delta``
(``text_delta``, ``thinking_delta``, ``signature_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` (stop reason, output usage), ``message_stop`` (the
reply is complete), ``ping`` and ``error`` (an ``overloaded_error`` before any delta is
retried). Stop reasons map end_turn/stop_sequence/pause_turn→stop, tool_use→tool_use,
max_tokens→length, refusal→error. A ``redacted_thinking`` block is kept as a redacted
:class:`ThinkingContent` (its ``data`` in ``signature``) so that it goes back to the API
unchanged. The provider's web search (a ``server_tool_use`` block and its
``web_search_tool_result``, text citing it with ``citations_delta``) is kept as a
:class:`ServerToolCall` and reported as tool events (:mod:`agentd.providers.anthropic_search`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentd.protocol.content import AssistantMessage, StopReason
from agentd.providers import anthropic_search, server_search
from agentd.providers.anthropic_messages import to_anthropic_messages, to_anthropic_system
from agentd.providers.assemble import MessageBuilder, Parsed
from agentd.providers.base import ProviderRequest
from agentd.providers.errors import ProviderFailure, decode_event_data, failure_from_error_object
from agentd.providers.sse import ServerSentEvent
from agentd.providers.stream import HttpCall, HttpProvider

API_VERSION = "2023-06-01"
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "error",
}
_DELTA_BLOCKS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "input_json_delta": "tool_call",
    "citations_delta": "text",
}
_USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_creation_input_tokens": "cache_write_tokens",
}


class AnthropicProvider(HttpProvider):
    """A provider speaking the Anthropic Messages API (see the module docstring)."""

    def build_call(self, request: ProviderRequest, base_url: str) -> HttpCall:
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": to_anthropic_messages(request.messages),
            "stream": True,
        }
        system = to_anthropic_system(request.system_prompt)
        if system:
            body["system"] = system
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in server_search.function_tools(request.tools)
        ]
        search = server_search.server_search_of(request.tools)
        if search is not None:
            tools.append(anthropic_search.tool_definition(search))
        if tools:
            body["tools"] = tools
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if self.api_key:
            headers["x-api-key"] = self.api_key
        base = base_url.rstrip("/")
        url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        return HttpCall(url=url, headers=headers, body=msgspec.json.encode(body))

    def new_parser(self, builder: MessageBuilder) -> AnthropicParser:
        return AnthropicParser(builder)


class AnthropicParser:
    """Parses one Messages event stream into deltas and the final message."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.complete = False
        self._stop_reason: str | None = None
        self._kinds: dict[int, str] = {}
        self._indices: dict[int, int] = {}
        self._server = anthropic_search.ServerCalls(builder)

    def feed(self, event: ServerSentEvent) -> list[Parsed]:
        data = decode_event_data(event.data)
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event.event
        if kind == "content_block_delta":
            return self._block_delta(data)
        if kind == "content_block_start":
            return self._block_start(data)
        if kind == "content_block_stop" and self._server.is_open(data.get("index", -1)):
            return list(self._server.close(data["index"]))
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict):
                self._take_usage(message.get("usage"))
        elif kind == "message_delta":
            self._take_usage(data.get("usage"))
            delta = data.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self._stop_reason = delta["stop_reason"]
        elif kind == "message_stop":
            self.complete = True
        elif kind == "error":
            raise failure_from_error_object(data.get("error"))
        return []

    def finish(self) -> AssistantMessage:
        if not self.complete:
            raise ProviderFailure("the stream ended unexpectedly (no message_stop)", retryable=True)
        reason = _STOP_REASONS.get(self._stop_reason or "end_turn", "stop")
        if reason == "stop" and self.builder.has_tool_calls():
            reason = "tool_use"
        error = "the model refused to answer" if reason == "error" else None
        return self.builder.build(reason, error)

    def failed(self, error: str) -> AssistantMessage:
        return self.builder.build("error", error)

    def _block_start(self, data: dict[str, Any]) -> list[Parsed]:
        position, block = data.get("index"), data.get("content_block")
        if not isinstance(position, int) or not isinstance(block, dict):
            return []
        kind = block.get("type")
        if kind == "server_tool_use":
            self._server.open(position, block)
            return []
        if kind == "web_search_tool_result":
            return list(self._server.result(block))
        if kind == "tool_use":
            start = self.builder.open_tool_call(str(block.get("id", "")), str(block.get("name")))
            self._kinds[position] = "tool_call"
            self._indices[position] = start.index
            deltas: list[Parsed] = [start]
            if isinstance(block.get("input"), dict) and block["input"]:
                arguments = msgspec.json.encode(block["input"]).decode()
                deltas.append(self.builder.add_arguments(start.index, arguments))
            return deltas
        if kind == "redacted_thinking" and isinstance(block.get("data"), str):
            self.builder.add_redacted(block["data"])
        if kind not in ("text", "thinking"):
            return []
        self._kinds[position] = kind
        initial = block.get(kind)
        if isinstance(block.get("signature"), str) and block["signature"]:
            self.builder.set_signature(self._index(position), block["signature"])
        if isinstance(initial, str) and initial:
            return [self.builder.add_text(self._index(position), initial)]
        return []

    def _block_delta(self, data: dict[str, Any]) -> list[Parsed]:
        position, delta = data.get("index"), data.get("delta")
        if not isinstance(position, int) or not isinstance(delta, dict):
            return []
        kind = delta.get("type")
        if self._server.is_open(position):
            if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                self._server.add_input(position, delta["partial_json"])
            return []
        if not isinstance(kind, str) or self._kinds.get(position) != _DELTA_BLOCKS.get(kind):
            return []
        if kind in ("text_delta", "thinking_delta"):
            text = delta.get("text" if kind == "text_delta" else "thinking")
            if isinstance(text, str) and text:
                return [self.builder.add_text(self._index(position), text)]
        elif kind == "input_json_delta":
            chunk = delta.get("partial_json")
            if isinstance(chunk, str) and chunk:
                return [self.builder.add_arguments(self._index(position), chunk)]
        elif kind == "citations_delta":
            cited = anthropic_search.citation(delta.get("citation"))
            if cited is not None:
                self.builder.add_citation(self._index(position), cited)
        elif isinstance(delta.get("signature"), str):
            self.builder.set_signature(self._index(position), delta["signature"])
        return []

    def _index(self, position: int) -> int:
        """Our block index for the server's block ``position``, opened on first content."""
        index = self._indices.get(position)
        if index is None:
            index = self._indices[position] = self.builder.open(self._kinds[position])
        return index

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for wire_name, field_name in _USAGE_FIELDS.items():
            value = usage.get(wire_name)
            if isinstance(value, int) and value >= 0:
                setattr(self.builder.usage, field_name, value)
