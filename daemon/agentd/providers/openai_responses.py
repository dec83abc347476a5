"""OpenAI Responses API, streamed and stateless, at ``{base_url}/responses``
(``api = "openai-responses"``).

Requests send ``store: false``, the system prompt as ``instructions`` and the conversation as
``input`` items (:mod:`agentd.providers.responses_messages`). Reasoning models (``o1``…,
``gpt-5``…, ``codex``…) are asked for a reasoning summary and the encrypted reasoning, which
goes back with the next request so the model keeps its chain of thought across tool calls.

Events: ``response.output_item.added`` opens a function call (a message or reasoning item
opens its block on first content); ``response.output_text.delta`` / ``response.refusal.delta``
is text; ``response.reasoning_summary_text.delta`` / ``response.reasoning_text.delta`` is
thinking; ``response.function_call_arguments.delta`` is tool arguments (``…done`` fills in
arguments that were not streamed); ``response.output_item.done`` keeps a reasoning item's id
and encrypted content; ``response.completed`` / ``response.incomplete`` end the reply with its
usage (``incomplete`` for ``max_output_tokens`` is ``length``, for ``content_filter`` an
error); ``response.failed`` and ``error`` are failures (rate limits and server errors retried
while nothing has streamed). A refusal ends the reply as an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from agentd.protocol.content import AssistantMessage, Citation, StopReason
from agentd.protocol.events import Delta
from agentd.providers import server_search
from agentd.providers.assemble import MessageBuilder, Parsed
from agentd.providers.base import ProviderRequest
from agentd.providers.errors import ProviderFailure, decode_event_data, failure_from_error_object
from agentd.providers.responses_messages import encode_reasoning_token, to_responses_input
from agentd.providers.sse import ServerSentEvent
from agentd.providers.stream import HttpCall, HttpProvider
from agentd.toolspec import ServerSearch

_REASONING_MODEL = re.compile(r"^(o\d|gpt-5|codex)", re.IGNORECASE)
_RETRYABLE_CODES = frozenset({"rate_limit_exceeded", "server_error", "overloaded"})
_INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "length", "content_filter": "error"}


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` takes the ``reasoning`` option (by its name)."""
    return bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1]))


class OpenAIResponsesProvider(HttpProvider):
    """A provider speaking the Responses API (see the module docstring)."""

    def build_call(self, request: ProviderRequest, base_url: str) -> HttpCall:
        body: dict[str, Any] = {
            "model": request.model,
            "input": to_responses_input(request.messages),
            "stream": True,
            "store": False,
            "max_output_tokens": request.max_tokens,
        }
        if request.system_prompt:
            body["instructions"] = request.system_prompt
        if is_reasoning_model(request.model):
            body["reasoning"] = {"summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        tools: list[dict[str, Any]] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in server_search.function_tools(request.tools)
        ]
        search = server_search.server_search_of(request.tools)
        if search is not None and not search.blocked_domains:
            tools.append(_search_tool(search))
            body["include"] = [*body.get("include", []), "web_search_call.action.sources"]
            if search.max_uses is not None:
                body["max_tool_calls"] = search.max_uses
        if tools:
            body["tools"] = tools
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        url = base_url.rstrip("/") + "/responses"
        return HttpCall(url=url, headers=headers, body=msgspec.json.encode(body))

    def new_parser(self, builder: MessageBuilder) -> ResponsesParser:
        return ResponsesParser(builder)


def _search_tool(search: ServerSearch) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "web_search"}
    if search.allowed_domains:
        tool["filters"] = {"allowed_domains": list(search.allowed_domains)}
    return tool


class ResponsesParser:
    """Parses one Responses event stream into deltas and the final message."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.complete = False
        self._stop: StopReason = "stop"
        self._error: str | None = None
        self._blocks: dict[tuple[int, str], int] = {}
        self._streamed_arguments: set[int] = set()
        self._summary_part: dict[int, int] = {}

    def feed(self, event: ServerSentEvent) -> Sequence[Parsed]:
        data = decode_event_data(event.data)
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event.event
        handler = _HANDLERS.get(str(kind))
        return handler(self, data) if handler is not None else []

    def finish(self) -> AssistantMessage:
        if not self.complete:
            message = "the stream ended unexpectedly (no response.completed)"
            raise ProviderFailure(message, retryable=True)
        reason = self._stop
        if reason == "stop" and self.builder.has_tool_calls():
            reason = "tool_use"
        return self.builder.build(reason, self._error)

    def failed(self, error: str) -> AssistantMessage:
        return self.builder.build("error", error)

    def _text(self, data: dict[str, Any]) -> list[Delta]:
        return self._append(data, "text", data.get("delta"))

    def _refusal(self, data: dict[str, Any]) -> list[Delta]:
        self._stop, self._error = "error", "the model refused to answer"
        return self._append(data, "text", data.get("delta"))

    def _summary(self, data: dict[str, Any]) -> list[Delta]:
        text = data.get("delta")
        position, part = data.get("output_index"), data.get("summary_index")
        is_new_part = (
            isinstance(position, int)
            and isinstance(part, int)
            and self._summary_part.setdefault(position, part) != part
        )
        if is_new_part and isinstance(text, str):
            self._summary_part[position] = part  # type: ignore[index,assignment]
            text = "\n\n" + text
        return self._append(data, "thinking", text)

    def _reasoning_text(self, data: dict[str, Any]) -> list[Delta]:
        return self._append(data, "thinking", data.get("delta"))

    def _append(self, data: dict[str, Any], kind: str, text: Any) -> list[Delta]:
        position = data.get("output_index")
        if not isinstance(position, int) or not isinstance(text, str) or not text:
            return []
        return [self.builder.add_text(self._block(position, kind), text)]

    def _block(self, position: int, kind: str) -> int:
        """Our block for the server's output item ``position``, opened on first content."""
        index = self._blocks.get((position, kind))
        if index is None:
            index = self._blocks[(position, kind)] = self.builder.open(kind)
        return index

    def _item_added(self, data: dict[str, Any]) -> list[Delta]:
        position, item = data.get("output_index"), data.get("item")
        if not isinstance(position, int) or not isinstance(item, dict):
            return []
        if item.get("type") != "function_call":
            return []
        call_id = str(item.get("call_id") or item.get("id") or f"call_{position}")
        start = self.builder.open_tool_call(call_id, str(item.get("name") or ""))
        self._blocks[(position, "tool_call")] = start.index
        return [start]

    def _arguments(self, data: dict[str, Any]) -> list[Delta]:
        index = self._blocks.get((data.get("output_index"), "tool_call"))  # type: ignore[arg-type]
        chunk = data.get("delta")
        if index is None or not isinstance(chunk, str) or not chunk:
            return []
        self._streamed_arguments.add(index)
        return [self.builder.add_arguments(index, chunk)]

    def _arguments_done(self, data: dict[str, Any]) -> list[Delta]:
        index = self._blocks.get((data.get("output_index"), "tool_call"))  # type: ignore[arg-type]
        whole = data.get("arguments")
        if index is None or index in self._streamed_arguments or not isinstance(whole, str):
            return []
        self._streamed_arguments.add(index)
        return [self.builder.add_arguments(index, whole)] if whole else []

    def _item_done(self, data: dict[str, Any]) -> Sequence[Parsed]:
        position, item = data.get("output_index"), data.get("item")
        if not isinstance(position, int) or not isinstance(item, dict):
            return []
        if item.get("type") == "web_search_call":
            return self._search_done(item)
        if item.get("type") == "function_call":
            done = {"output_index": position, "arguments": item.get("arguments")}
            return self._arguments_done(done)
        if item.get("type") == "reasoning" and isinstance(item.get("id"), str):
            encrypted = item.get("encrypted_content")
            token = encode_reasoning_token(item["id"], encrypted if encrypted else None)
            self.builder.set_signature(self._block(position, "thinking"), token)
        return []

    def _search_done(self, item: dict[str, Any]) -> list[Parsed]:
        """A finished ``web_search_call``: its start and end, kept in the reply."""
        given = item.get("action")
        action: dict[str, Any] = given if isinstance(given, dict) else {}
        arguments = {k: v for k, v in action.items() if k not in ("type", "sources")}
        listed = action.get("sources")
        sources: list[Any] = listed if isinstance(listed, list) else []
        found = [
            server_search.hit(s.get("url"), s.get("title")) for s in sources if isinstance(s, dict)
        ]
        failed = item.get("status") == "failed"
        call_id = str(item.get("id") or f"ws_{self.builder.block_count}")
        call, end = server_search.finished(
            call_id,
            arguments,
            [hit for hit in found if hit is not None],
            backend=self.builder.provider,
            api="openai-responses",
            raw=[item],
            error="the provider reported the search as failed" if failed else None,
        )
        self.builder.add_server_call(call)
        return [server_search.started(call_id, arguments), end]

    def _annotation(self, data: dict[str, Any]) -> list[Delta]:
        """A ``url_citation`` on the text of output item ``output_index``."""
        position, note = data.get("output_index"), data.get("annotation")
        if not isinstance(position, int) or not isinstance(note, dict):
            return []
        if note.get("type") != "url_citation" or not isinstance(note.get("url"), str):
            return []
        start, end = note.get("start_index"), note.get("end_index")
        span = (start, end) if isinstance(start, int) and isinstance(end, int) else None
        cited = Citation(url=note["url"], title=str(note.get("title") or ""))
        self.builder.add_citation(self._block(position, "text"), cited, span)
        return []

    def _completed(self, data: dict[str, Any]) -> list[Delta]:
        response = data.get("response")
        if isinstance(response, dict):
            self._take_usage(response.get("usage"))
            if response.get("status") == "incomplete":
                self._incomplete(response)
        self.complete = True
        return []

    def _incomplete(self, response: dict[str, Any]) -> None:
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        self._stop = _INCOMPLETE.get(str(reason), "length")
        if self._stop == "error":
            self._error = "the provider's content filter stopped the reply"

    def _failed(self, data: dict[str, Any]) -> list[Delta]:
        response = data.get("response")
        error = response.get("error") if isinstance(response, dict) else None
        raise _failure(error)

    def _error_event(self, data: dict[str, Any]) -> list[Delta]:
        raise _failure(data.get("error") if isinstance(data.get("error"), dict) else data)

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        details = usage.get("input_tokens_details")
        cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
        self.builder.usage.input_tokens = max(_count(usage.get("input_tokens")) - cached, 0)
        self.builder.usage.cache_read_tokens = cached
        self.builder.usage.output_tokens = _count(usage.get("output_tokens"))


def _failure(error: Any) -> ProviderFailure:
    """A failure for an error object; rate limits and server errors may be retried."""
    failure = failure_from_error_object(error)
    code = error.get("code") if isinstance(error, dict) else None
    failure.retryable = failure.retryable or code in _RETRYABLE_CODES
    return failure


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


_HANDLERS: dict[str, Callable[[ResponsesParser, dict[str, Any]], Sequence[Parsed]]] = {
    "response.output_text.delta": ResponsesParser._text,
    "response.refusal.delta": ResponsesParser._refusal,
    "response.reasoning_summary_text.delta": ResponsesParser._summary,
    "response.reasoning_text.delta": ResponsesParser._reasoning_text,
    "response.output_item.added": ResponsesParser._item_added,
    "response.function_call_arguments.delta": ResponsesParser._arguments,
    "response.function_call_arguments.done": ResponsesParser._arguments_done,
    "response.output_item.done": ResponsesParser._item_done,
    "response.output_text.annotation.added": ResponsesParser._annotation,
    "response.completed": ResponsesParser._completed,
    "response.incomplete": ResponsesParser._completed,
    "response.failed": ResponsesParser._failed,
    "error": ResponsesParser._error_event,
}
