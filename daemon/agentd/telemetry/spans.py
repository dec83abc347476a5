"""Sessions' events as OpenTelemetry spans and metrics, with the GenAI semantic conventions
(imported only when telemetry is on: :mod:`agentd.telemetry.otel` builds it).

One span per run (``invoke_agent agentd``), per turn (``turn N``), per model call
(``chat MODEL``) and per tool call (``execute_tool NAME``), nested in that order; a
subagent's run is a child of the ``task`` call that started it, and a run given a W3C
``traceparent`` (``session/prompt``) is a child of that span. Attributes are listed in
docs/telemetry.md. Text (the prompt, replies, tool arguments and results) goes into spans
only with ``capture_content``, redacted like the session file and cut at
:data:`MAX_CONTENT` characters.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import Meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agentd.log import get_logger
from agentd.protocol.content import AssistantMessage, TextContent, ToolCall, UserMessage
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageStart,
    PermissionRequest,
    PermissionResolved,
    Retry,
    SubagentStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
)
from agentd.telemetry.scope import RunScope

log = get_logger("agentd.telemetry")

MAX_CONTENT = 16_384
"""Characters of one captured text attribute (the rest is cut, ``…`` marking the cut)."""
AGENT = "agentd"
_propagator = TraceContextTextMapPropagator()
_encode = msgspec.json.Encoder().encode


class _Run:
    """The open spans of one session's run."""

    __slots__ = ("approvals", "error", "model", "prompted", "run", "started", "tools", "turn")

    def __init__(self, run: Span) -> None:
        self.run = run
        self.started = time.monotonic()
        self.turn: Span | None = None
        self.model: tuple[Span, float] | None = None
        self.tools: dict[str, tuple[Span, float, str]] = {}
        self.approvals: dict[str, tuple[float, str]] = {}
        self.error: str | None = None
        self.prompted = False


class SpanObserver:
    """An :class:`~agentd.telemetry.scope.Observer` turning events into spans on ``tracer``
    and measurements on ``meter``; ``capture_content`` adds the texts (see the module
    docstring)."""

    def __init__(self, tracer: Tracer, meter: Meter, *, capture_content: bool = False) -> None:
        self.tracer = tracer
        self.capture = capture_content
        self._runs: dict[str, _Run] = {}
        self._children: dict[str, Context] = {}
        """A subagent's session id -> the context of the ``task`` call that started it."""
        self._failed = False
        self._runs_count = meter.create_counter("agentd.runs", "{run}", "runs ended")
        self._run_duration = meter.create_histogram("agentd.run.duration", "s", "run wall time")
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage", "{token}", "tokens of one model call"
        )
        self._model_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", "s", "model call duration"
        )
        self._cost = meter.create_counter("agentd.cost", "USD", "model calls' cost")
        self._tool_duration = meter.create_histogram("agentd.tool.duration", "s", "tool calls")
        self._approval_wait = meter.create_histogram(
            "agentd.approval.wait", "s", "time tool calls waited for an approval"
        )
        self._errors = meter.create_counter("agentd.errors", "{error}", "errors by type")

    def observe(self, scope: RunScope, event: Event) -> None:
        """Record ``event`` (never raises: a failure is logged once and skipped)."""
        handler = _HANDLERS.get(type(event))
        if handler is None:
            return
        try:
            handler(self, scope, event)
        except Exception:
            if not self._failed:
                self._failed = True
                log.exception("telemetry: recording an event failed", kind=type(event).__name__)

    # --- runs and turns ----------------------------------------------------------------------

    def _agent_start(self, scope: RunScope, event: AgentStart) -> None:
        parent = self._children.pop(scope.session_id, None)
        if parent is None and scope.trace_parent:
            parent = _propagator.extract({"traceparent": scope.trace_parent})
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": scope.session_id,
            "gen_ai.provider.name": scope.provider,
            "gen_ai.request.model": scope.model,
        }
        if scope.parent_session_id:
            attributes["agentd.parent_session_id"] = scope.parent_session_id
        span = self.tracer.start_span(
            f"invoke_agent {AGENT}", parent, SpanKind.INTERNAL, attributes
        )
        self._runs[scope.session_id] = _Run(span)

    def _turn_start(self, scope: RunScope, event: TurnStart) -> None:
        run = self._runs.get(scope.session_id)
        if run is not None:
            _end(run.turn)
            run.turn = self.tracer.start_span(
                f"turn {event.turn}", _inside(run.run), attributes={"agentd.turn": event.turn}
            )

    def _turn_end(self, scope: RunScope, event: TurnEnd) -> None:
        run = self._runs.get(scope.session_id)
        if run is not None and run.turn is not None:
            run.turn.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
            _end(run.turn)
            run.turn = None

    def _agent_end(self, scope: RunScope, event: AgentEnd) -> None:
        run = self._runs.pop(scope.session_id, None)
        if run is None:
            return
        for span, _, _ in run.tools.values():
            _end(span)
        _end(run.model[0] if run.model else None)
        _end(run.turn)
        usage = event.usage
        span = run.run
        span.set_attributes(
            {
                "agentd.stop_reason": event.stop_reason,
                "agentd.turns": event.turns,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "agentd.usage.cost": event.cost,
            }
        )
        if event.stop_reason == "error":
            kind = run.error or "error"
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, _cut(scope.redact(event.error or kind))))
        span.end()
        attributes = {"agentd.stop_reason": event.stop_reason}
        self._runs_count.add(1, attributes)
        self._run_duration.record(time.monotonic() - run.started, attributes)

    def _error(self, scope: RunScope, event: ErrorEvent) -> None:
        self._errors.add(1, {"error.type": event.code})
        run = self._runs.get(scope.session_id)
        if run is not None:
            run.error = event.code

    # --- model calls -------------------------------------------------------------------------

    def _message_start(self, scope: RunScope, event: MessageStart) -> None:
        run = self._runs.get(scope.session_id)
        if run is None or event.role != "assistant":
            return
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": scope.provider,
            "gen_ai.request.model": scope.model,
        }
        span = self.tracer.start_span(
            f"chat {scope.model}", _inside(run.turn or run.run), SpanKind.CLIENT, attributes
        )
        run.model = (span, time.monotonic())

    def _message_end(self, scope: RunScope, event: MessageEnd) -> None:
        run = self._runs.get(scope.session_id)
        message = event.message
        if run is None:
            return
        if isinstance(message, UserMessage) and self.capture and not run.prompted:
            run.prompted = True  # the prompt; steering messages are not repeated
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            parts = [{"type": "text", "content": _cut(scope.redact(text))}]
            run.run.set_attribute(
                "gen_ai.input.messages", _json([{"role": "user", "parts": parts}])
            )
        if isinstance(message, AssistantMessage) and run.model is not None:
            self._model_done(scope, run, message)

    def _model_done(self, scope: RunScope, run: _Run, message: AssistantMessage) -> None:
        span, started = run.model or (None, 0.0)
        assert span is not None
        run.model = None
        usage = message.usage
        span.set_attributes(
            {
                "gen_ai.response.model": message.model,
                "gen_ai.response.id": message.id,
                "gen_ai.response.finish_reasons": [message.stop_reason],
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
                "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
                "agentd.usage.cost": usage.cost,
            }
        )
        error = message.stop_reason == "error"
        if error:
            span.set_attribute("error.type", "provider_error")
            text = scope.redact(message.error_message or "provider error")
            span.set_status(Status(StatusCode.ERROR, _cut(text)))
        if self.capture:
            span.set_attribute("gen_ai.output.messages", _json([_reply(scope, message)]))
        span.end()
        base = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": scope.provider,
            "gen_ai.request.model": scope.model,
            "gen_ai.response.model": message.model,
        }
        timing = {**base, "error.type": "provider_error"} if error else base
        self._model_duration.record(time.monotonic() - started, timing)
        self._tokens.record(usage.input_tokens, {**base, "gen_ai.token.type": "input"})
        self._tokens.record(usage.output_tokens, {**base, "gen_ai.token.type": "output"})
        if usage.cost:
            self._cost.add(usage.cost, {"gen_ai.request.model": scope.model})

    def _retry(self, scope: RunScope, event: Retry) -> None:
        run = self._runs.get(scope.session_id)
        if run is not None and run.model is not None:
            run.model[0].add_event(
                "retry",
                {"agentd.retry.attempt": event.attempt, "agentd.retry.delay_ms": event.delay_ms},
            )

    # --- tool calls --------------------------------------------------------------------------

    def _tool_start(self, scope: RunScope, event: ToolExecutionStart) -> None:
        run = self._runs.get(scope.session_id)
        if run is None:
            return
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.tool_call_id,
            "gen_ai.tool.type": "function",
        }
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _cut(scope.redact(_json(event.args)))
        span = self.tracer.start_span(
            f"execute_tool {event.name}", _inside(run.turn or run.run), attributes=attributes
        )
        run.tools[event.tool_call_id] = (span, time.monotonic(), event.name)

    def _tool_end(self, scope: RunScope, event: ToolExecutionEnd) -> None:
        run = self._runs.get(scope.session_id)
        opened = None if run is None else run.tools.pop(event.tool_call_id, None)
        if opened is None:
            return
        span, started, name = opened
        if event.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        if self.capture:
            text = "".join(b.text for b in event.result if isinstance(b, TextContent))
            span.set_attribute("gen_ai.tool.call.result", _cut(scope.redact(text)))
        span.end()
        attributes = {"gen_ai.tool.name": name}
        if event.is_error:
            attributes["error.type"] = "tool_error"
        self._tool_duration.record(time.monotonic() - started, attributes)

    def _subagent_start(self, scope: RunScope, event: SubagentStart) -> None:
        run = self._runs.get(scope.session_id)
        opened = None if run is None else run.tools.get(event.tool_call_id)
        if opened is not None:
            self._children[event.child_session_id] = _inside(opened[0])

    def _permission_request(self, scope: RunScope, event: PermissionRequest) -> None:
        run = self._runs.get(scope.session_id)
        if run is not None:
            run.approvals[event.tool_call_id] = (time.monotonic(), event.tool)

    def _permission_resolved(self, scope: RunScope, event: PermissionResolved) -> None:
        run = self._runs.get(scope.session_id)
        asked = None if run is None else run.approvals.pop(event.tool_call_id, None)
        if asked is None or run is None:
            return
        waited = time.monotonic() - asked[0]
        attributes = {"gen_ai.tool.name": asked[1], "agentd.approval.outcome": event.outcome}
        self._approval_wait.record(waited, attributes)
        (run.turn or run.run).add_event(
            "approval",
            {
                **attributes,
                "gen_ai.tool.call.id": event.tool_call_id,
                "agentd.approval.wait_s": waited,
            },
        )


_HANDLERS: dict[type, Any] = {
    AgentStart: SpanObserver._agent_start,
    TurnStart: SpanObserver._turn_start,
    TurnEnd: SpanObserver._turn_end,
    AgentEnd: SpanObserver._agent_end,
    ErrorEvent: SpanObserver._error,
    MessageStart: SpanObserver._message_start,
    MessageEnd: SpanObserver._message_end,
    Retry: SpanObserver._retry,
    ToolExecutionStart: SpanObserver._tool_start,
    ToolExecutionEnd: SpanObserver._tool_end,
    SubagentStart: SpanObserver._subagent_start,
    PermissionRequest: SpanObserver._permission_request,
    PermissionResolved: SpanObserver._permission_resolved,
}
"""The events that make or change a span; the others (deltas, queue updates…) cost one
dict lookup."""


def _inside(span: Span) -> Context:
    return trace.set_span_in_context(span)


def _end(span: Span | None) -> None:
    if span is not None:
        span.end()


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CONTENT else text[: MAX_CONTENT - 1] + "…"


def _json(value: Any) -> str:
    return _encode(value).decode()


def _reply(scope: RunScope, message: AssistantMessage) -> dict[str, Any]:
    """The reply as a ``gen_ai.output.messages`` item: its text and tool calls."""
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "content": _cut(scope.redact(block.text))})
        elif isinstance(block, ToolCall):
            arguments = _cut(scope.redact(_json(block.arguments)))
            parts.append(
                {"type": "tool_call", "id": block.id, "name": block.name, "arguments": arguments}
            )
    return {"role": "assistant", "parts": parts, "finish_reason": message.stop_reason}
