"""The mock LLM server: scripted replies over HTTP in the OpenAI Chat Completions, OpenAI
Responses and Anthropic Messages formats.

Routes: ``POST /v1/chat/completions`` (also ``/chat/completions``), ``POST /v1/responses``
(also ``/responses``), ``POST /v1/messages`` (also ``/messages``), streamed or not as the
request asks; ``GET /v1/models``. It runs on the caller's event loop (tests, the daemon's
``--provider mock``) or standalone through :func:`main` (``agentd mock-llm``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from agentd.mockllm import anthropic_format, openai_format, responses_format
from agentd.mockllm.http import MAX_HEADER_BYTES, Request, Responder, serve_connection
from agentd.mockllm.reply import Plan, plan_reply
from agentd.mockllm.scenarios import (
    Conversation,
    FailureSpec,
    Scenario,
    ScenarioError,
    Scenarios,
    StepSpec,
    load_scenarios,
    match,
    step_for,
)

MOCK_MODEL = "mock-model"
_DEFAULT_MESSAGES = {
    429: "Rate limit reached (mock). Please retry.",
    529: "Overloaded (mock).",
}


class _Format(msgspec.Struct, frozen=True):
    parse: Callable[[dict[str, Any]], Conversation]
    frames: Callable[[Plan, str, dict[str, Any]], list[bytes]]
    complete: Callable[[Plan, str], dict[str, Any]]
    error: Callable[[int, str, str | None], dict[str, Any]]
    read: msgspec.json.Decoder[Any] | None = None
    """Decodes only the keys ``parse`` and ``frames`` read (None: they read the tools too),
    for a server that keeps no request: the tool definitions are most of a body."""


class _OpenAIKeys(msgspec.Struct):
    """What the Chat Completions side reads of a request (a missing key reads as None)."""

    model: Any = None
    messages: Any = None
    stream: Any = None
    stream_options: Any = None


_OPENAI = _Format(
    openai_format.parse_request,
    lambda plan, model, body: openai_format.stream_frames(
        plan, model, include_usage=openai_format.wants_usage(body)
    ),
    openai_format.completion,
    openai_format.error_body,
    msgspec.json.Decoder(_OpenAIKeys),
)
_ANTHROPIC = _Format(
    anthropic_format.parse_request,
    lambda plan, model, body: anthropic_format.stream_frames(plan, model),
    anthropic_format.message,
    anthropic_format.error_body,
)
_RESPONSES = _Format(
    responses_format.parse_request,
    lambda plan, model, body: responses_format.stream_frames(plan, model),
    responses_format.response,
    responses_format.error_body,
)
_ROUTES = {
    "/v1/chat/completions": _OPENAI,
    "/chat/completions": _OPENAI,
    "/v1/messages": _ANTHROPIC,
    "/messages": _ANTHROPIC,
    "/v1/responses": _RESPONSES,
    "/responses": _RESPONSES,
}


class MockLLMServer:
    """An HTTP server answering from :class:`Scenarios` (the shipped file by default).

    ``requests`` keeps the last ``keep_requests`` decoded request bodies (newest last) for
    tests, and ``request_headers`` their headers (lower-case names). Each body holds the whole
    conversation, so a server nobody inspects keeps none (``keep_requests=0``: the daemon's
    in-process mock, ``agentd mock-llm``): 100 bodies of a long session held 24 MiB;
    ``active_streams`` counts streamed replies in progress. Failure counters (``fail``) are
    per server and keyed by scenario name; :meth:`reset` clears them.
    """

    def __init__(
        self,
        scenarios: Scenarios | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: int = 100,
    ) -> None:
        self.scenarios = scenarios if scenarios is not None else load_scenarios(None)
        self.host = host
        self.port = port
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep_requests)
        self.request_headers: collections.deque[dict[str, str]] = collections.deque(
            maxlen=keep_requests
        )
        self.active_streams = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._failures: dict[str, int] = {}

    @property
    def url(self) -> str:
        """The base URL of the OpenAI-style API, e.g. ``http://127.0.0.1:PORT/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    async def start(self) -> None:
        """Listen (``port`` 0 picks a free port, readable from ``port`` and ``url`` after)."""
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self.port, limit=MAX_HEADER_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and drop every open connection."""
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> MockLLMServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def reset(self) -> None:
        """Forget how many requests failed (scenarios with ``fail`` fail again)."""
        self._failures.clear()

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await serve_connection(reader, writer, self.handle)
        except asyncio.CancelledError:
            pass  # stop() cancels connections; ending quietly keeps asyncio from logging it
        finally:
            self._connections.discard(task)

    async def handle(self, request: Request, respond: Responder) -> None:
        """Answer one request (over HTTP, or in process through ``MockTransport``)."""
        path = request.path.split("?", 1)[0].rstrip("/")
        wire = _ROUTES.get(path)
        if request.method == "GET" and path in ("/v1/models", "/models"):
            model = {"id": MOCK_MODEL, "object": "model", "created": 0, "owned_by": "agentd"}
            await _send_json(respond, 200, {"object": "list", "data": [model]})
        elif wire is not None and request.method == "POST":
            await self._answer(request, respond, wire)
        else:
            body = _OPENAI.error(404, f"no route for {request.method} {path}", "not_found")
            await _send_json(respond, 404, body)

    async def _answer(self, request: Request, respond: Responder, wire: _Format) -> None:
        body = _decode_body(request.body, None if self.requests.maxlen else wire.read)
        if isinstance(body, str):
            await _send_json(respond, 400, wire.error(400, body, None))
            return
        self.requests.append(body)
        self.request_headers.append(dict(request.headers))
        conversation = wire.parse(body)
        scenario = match(self.scenarios, conversation)
        failure = self._next_failure(scenario)
        if failure is not None:
            await _send_failure(respond, wire, failure)
            return
        if scenario is None:
            step = StepSpec(response=self.scenarios.default_response)
        else:
            step = step_for(scenario, conversation.tool_results)
        plan = plan_reply(step, len(request.body), conversation.search)
        if plan.delay_ms:
            await asyncio.sleep(plan.delay_ms / 1000)
        if conversation.stream:
            await self._stream(respond, plan, wire.frames(plan, conversation.model, body))
        else:
            await _send_json(respond, 200, wire.complete(plan, conversation.model))

    def _next_failure(self, scenario: Scenario | None) -> FailureSpec | None:
        if scenario is None or not scenario.fail:
            return None
        count = self._failures.get(scenario.name, 0)
        self._failures[scenario.name] = count + 1
        for index, failure in enumerate(scenario.fail):
            if failure.forever and count >= index:
                return failure
        return scenario.fail[count] if count < len(scenario.fail) else None

    async def _stream(self, respond: Responder, plan: Plan, frames: list[bytes]) -> None:
        self.active_streams += 1
        try:
            await respond.start_stream()
            pause = plan.chunk_delay_ms / 1000
            for number, frame in enumerate(frames):
                if pause and number:
                    await asyncio.sleep(pause)
                await respond.write(frame)
            await respond.end()
        finally:
            self.active_streams -= 1


def _decode_body(raw: bytes, read: msgspec.json.Decoder[Any] | None = None) -> dict[str, Any] | str:
    """The JSON object of a request body (only the keys ``read`` decodes, when given), or
    what is wrong with it."""
    try:
        body = msgspec.json.decode(raw) if read is None else read.decode(raw)
    except msgspec.ValidationError:  # valid JSON, but not an object
        return "the request body must be a JSON object"
    except msgspec.DecodeError as exc:
        return f"the request body is not JSON: {exc}"
    if read is not None:
        return msgspec.structs.asdict(body)
    return body if isinstance(body, dict) else "the request body must be a JSON object"


async def _send_json(respond: Responder, status: int, payload: dict[str, Any]) -> None:
    await respond.send(status, msgspec.json.encode(payload))


async def _send_failure(respond: Responder, wire: _Format, failure: FailureSpec) -> None:
    status = failure.status
    default = "Internal server error (mock)." if status >= 500 else "Bad request (mock)."
    message = failure.message or _DEFAULT_MESSAGES.get(status, default)
    headers = {}
    if failure.retry_after is not None:
        headers["retry-after"] = f"{failure.retry_after:g}"
    body = msgspec.json.encode(wire.error(status, message, failure.code))
    await respond.send(status, body, headers=headers)


def main(argv: list[str] | None = None) -> int:
    """``agentd mock-llm``: serve until SIGINT or SIGTERM; the URL is printed to stderr."""
    parser = argparse.ArgumentParser(
        prog="agentd mock-llm",
        description="Serve scripted LLM replies (OpenAI and Anthropic formats) for tests/demos.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    parser.add_argument("--scenarios", type=Path, help="scenarios JSON file (default: built-in)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        scenarios = load_scenarios(args.scenarios)
    except ScenarioError as exc:
        print(f"mock-llm: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(scenarios, args.host, args.port))
    except OSError as exc:
        print(f"mock-llm: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


async def _serve(scenarios: Scenarios, host: str, port: int) -> None:
    server = MockLLMServer(scenarios, host, port, keep_requests=0)  # nobody reads them
    await server.start()
    print(f"mock-llm listening on {server.url}", file=sys.stderr, flush=True)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await stopping.wait()
    finally:
        await server.stop()
