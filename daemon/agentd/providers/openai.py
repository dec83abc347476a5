"""OpenAI Chat Completions, streamed: OpenAI itself and compatible servers (LiteLLM, Ollama,
vLLM, llama.cpp…) at ``{base_url}/chat/completions``.

Requests ask for ``stream: true`` with ``stream_options.include_usage``. Replies are assembled
from ``choices[0].delta``: ``content`` is text, ``reasoning_content`` / ``reasoning`` /
``reasoning_text`` is thinking, ``tool_calls`` entries are grouped by their ``index`` (id and
name arrive first, arguments in pieces). A change of kind opens a new content block. Finish
reasons map stop→stop, tool_calls→tool_use, length→length, content_filter→error; a ``stop``
that comes with tool calls (as some local servers send) counts as tool_use.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from agentd.protocol.content import AssistantMessage, StopReason
from agentd.protocol.events import Delta
from agentd.providers.assemble import MessageBuilder
from agentd.providers.base import ProviderRequest
from agentd.providers.errors import ProviderFailure, decode_event_data, failure_from_error_object
from agentd.providers.openai_messages import to_openai_messages
from agentd.providers.sse import ServerSentEvent
from agentd.providers.stream import HttpCall, HttpProvider

_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "error",
}


class OpenAIProvider(HttpProvider):
    """A provider speaking the Chat Completions API (see the module docstring)."""

    def build_call(self, request: ProviderRequest, base_url: str) -> HttpCall:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": to_openai_messages(request.system_prompt, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        limit_field = "max_completion_tokens" if "api.openai.com" in base_url else "max_tokens"
        body[limit_field] = request.max_tokens
        functions = [tool for tool in request.tools if tool.server_search is None]
        if functions:  # a provider-side search is not a thing this format has: left out
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in functions
            ]
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        url = base_url.rstrip("/") + "/chat/completions"
        return HttpCall(url=url, headers=headers, body=msgspec.json.encode(body))

    def new_parser(self, builder: MessageBuilder) -> OpenAIParser:
        return OpenAIParser(builder)


class OpenAIParser:
    """Parses one Chat Completions event stream into deltas and the final message."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.complete = False
        self._finish_reason: str | None = None
        self._current: int | None = None
        self._calls: dict[object, int] = {}
        self._last_call_key: object = 0

    def feed(self, event: ServerSentEvent) -> list[Delta]:
        if event.data.strip() == "[DONE]":
            self.complete = True
            return []
        chunk = decode_event_data(event.data)
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            raise failure_from_error_object(chunk["error"])
        if isinstance(chunk.get("usage"), dict):
            self._take_usage(chunk["usage"])
        deltas: list[Delta] = []
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            choice = choices[0]
            if isinstance(choice.get("delta"), dict):
                self._take_delta(choice["delta"], deltas)
            if isinstance(choice.get("finish_reason"), str):
                self._finish_reason = choice["finish_reason"]
        return deltas

    def finish(self) -> AssistantMessage:
        if self._finish_reason is None:
            message = "the stream ended unexpectedly (no finish reason)"
            raise ProviderFailure(message, retryable=True)
        has_calls = self.builder.has_tool_calls()
        reason = _FINISH_REASONS.get(self._finish_reason, "stop")
        if reason == "stop" and has_calls:
            reason = "tool_use"
        error = "the provider's content filter stopped the reply" if reason == "error" else None
        return self.builder.build(reason, error)

    def failed(self, error: str) -> AssistantMessage:
        return self.builder.build("error", error)

    def _take_delta(self, delta: dict[str, Any], deltas: list[Delta]) -> None:
        reasoning = next((delta[f] for f in _REASONING_FIELDS if delta.get(f)), None)
        if isinstance(reasoning, str):
            deltas.append(self._add_text("thinking", reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            deltas.append(self._add_text("text", content))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._take_tool_call(call, deltas)

    def _add_text(self, kind: str, text: str) -> Delta:
        if self._current is None or self.builder.kind_of(self._current) != kind:
            self._current = self.builder.open(kind)
        return self.builder.add_text(self._current, text)

    def _take_tool_call(self, call: dict[str, Any], deltas: list[Delta]) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        key = self._call_key(call)
        index = self._calls.get(key)
        if index is None:
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            name = function.get("name")
            name = name if isinstance(name, str) else ""
            start = self.builder.open_tool_call(call_id or f"call_{uuid.uuid4().hex[:24]}", name)
            deltas.append(start)
            index = self._calls[key] = start.index
            self._current = None
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = msgspec.json.encode(arguments).decode()
        if isinstance(arguments, str) and arguments:
            deltas.append(self.builder.add_arguments(index, arguments))

    def _call_key(self, call: dict[str, Any]) -> object:
        """The call's ``index``; servers that omit it are grouped by id, else the last call."""
        key = call.get("index")
        if not isinstance(key, int):
            call_id = call.get("id")
            key = call_id if isinstance(call_id, str) else self._last_call_key
        self._last_call_key = key
        return key

    def _take_usage(self, usage: dict[str, Any]) -> None:
        prompt = _count(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
        self.builder.usage.input_tokens = max(prompt - cached, 0)
        self.builder.usage.cache_read_tokens = cached
        self.builder.usage.output_tokens = _count(usage.get("completion_tokens"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
