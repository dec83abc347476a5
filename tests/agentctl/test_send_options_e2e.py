"""``send``'s session options reach the daemon and the LLM: a recording OpenAI-compatible
server on a real port stands in for the provider, so what the model was sent can be checked."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox, json_lines

pytestmark = pytest.mark.e2e

REPLY = "Hello from the recording server."


class RecordingHandler(BaseHTTPRequestHandler):
    """Answers every Chat Completions request with one streamed text reply; keeps the bodies."""

    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append(json.loads(body))
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]},
            {
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        ]
        data = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data.encode())))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def llm() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The server's base URL and the request bodies it received."""
    handler = type("Handler", (RecordingHandler,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.requests
    finally:
        server.shutdown()
        server.server_close()


def test_session_options_reach_the_session_and_the_model(
    sandbox: Sandbox, llm: tuple[str, list[dict[str, Any]]]
) -> None:
    """--provider --base-url --model --cwd --system-prompt @FILE --permission --title."""
    base_url, requests = llm
    other = sandbox.root / "elsewhere"
    other.mkdir()
    prompt_file = sandbox.root / "system.txt"
    prompt_file.write_text("You are a terse reviewer. Marker 7731.")
    result = sandbox.run(
        "send",
        "--stdio",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        base_url,
        "--model",
        "fake-1",
        "--cwd",
        str(other),
        "--system-prompt",
        f"@{prompt_file}",
        "--permission",
        "read-only",
        "--title",
        "review",
        "how are you",
    )
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    head, final = lines[0], lines[-1]
    assert (head["cwd"], head["provider"], head["model"]) == (str(other), "openai", "fake-1")
    assert head["permissionMode"] == "read-only"
    assert final["stopReason"] == "end_turn"
    (request,) = requests
    assert request["model"] == "fake-1"
    assert request["messages"][0]["role"] == "system"
    assert "Marker 7731" in request["messages"][0]["content"]
    assert request["messages"][-1]["content"] in (
        "how are you",
        [{"type": "text", "text": "how are you"}],
    )
    listing = json.loads(sandbox.run("sessions", "list", "--json", "--cwd", str(other)).stdout)
    assert [item.get("title") for item in listing["sessions"]] == ["review"]
