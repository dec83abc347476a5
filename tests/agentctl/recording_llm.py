"""A recording OpenAI-compatible server on a real port: it answers every Chat Completions
request with one streamed text reply and keeps each request's body and Authorization header."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Hello from the recording server."


@dataclass
class RecordingLLM:
    """The server's base URL (``…/v1``), the request bodies and Authorization headers."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


def _handler(record: RecordingLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            record.requests.append(json.loads(body))
            record.authorizations.append(self.headers.get("Authorization"))
            chunks = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]},
                {
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                },
            ]
            lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
            data = ("".join(lines) + "data: [DONE]\n\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    return Handler


@contextmanager
def recording_llm() -> Iterator[RecordingLLM]:
    """Serve a :class:`RecordingLLM` on 127.0.0.1 for the duration of the block."""
    record = RecordingLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(record))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    record.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
