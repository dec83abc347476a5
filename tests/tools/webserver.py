"""A real local HTTP server for the web_fetch tests: fixed routes, and a record of the
requests it got (path and headers), on 127.0.0.1 in a thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.harness import scaled

PAGE = """<!doctype html><html><head><title>Guide</title>
<style>body { color: red }</style><script>document.write("tracking")</script></head>
<body><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<main><h1>Install guide</h1><p>Run <code>pip install agentd</code>, then read
<a href="https://example.com/docs">the docs</a>.</p>
<ul><li>first step</li><li>second step</li></ul>
<pre><code>agentd serve --stdio
</code></pre>
<table><tr><th>key</th><th>value</th></tr><tr><td>port</td><td>8080</td></tr></table>
</main></body></html>"""

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers.items())))
        route = self.path.split("?", 1)[0]
        port = self.server.server_address[1]
        if route in self.server.pages:
            self._send(200, "text/html; charset=utf-8", self.server.pages[route])
        elif route in self.server.encoded:
            coding, body = self.server.encoded[route]
            self._send(200, "text/plain", body, coding, sized=route not in self.server.unsized)
        elif route == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE.encode())
        elif route == "/json":
            self._send(200, "application/json", b'{"name": "agentd", "ok": true}')
        elif route == "/png":
            self._send(200, "image/png", PNG)
        elif route == "/missing":
            self._send(404, "text/plain", b"no such page")
        elif route == "/big":
            self._send(200, "text/plain", b"x" * (6 * 1024 * 1024))
        elif route == "/long":
            self._send(200, "text/plain", "".join(f"line {i}\n" for i in range(5000)).encode())
        elif route == "/slow":
            time.sleep(5)
            self._send(200, "text/plain", b"late")
        elif route.startswith("/hop/"):
            left = int(route.rsplit("/", 1)[1])
            target = "/page" if left == 0 else f"/hop/{left - 1}"
            self._redirect(target)
        elif route == "/to-loopback":
            self._redirect(f"http://127.0.0.1:{port}/page")
        elif route == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif route == "/set-cookie":
            self.send_response(302)
            self.send_header("Set-Cookie", "session=abc123; Path=/")
            self.send_header("Location", "/page")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._send(404, "text/plain", b"unknown route")

    def _redirect(self, target: str) -> None:
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(
        self, status: int, kind: str, body: bytes, coding: str = "", *, sized: bool = True
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if coding:
            self.send_header("Content-Encoding", coding)
        if sized:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")  # the body ends when the connection does
            self.close_connection = True
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, dict[str, str]]]
    pages: dict[str, bytes]
    """Extra HTML pages by path (benchmarks)."""
    encoded: dict[str, tuple[str, bytes]]
    """Extra text bodies by path, sent as they are with their ``Content-Encoding``."""
    unsized: set[str]
    """Paths of :attr:`encoded` sent without ``Content-Length`` (read until the close)."""


@contextmanager
def web_server(host: str = "127.0.0.1", port: int = 0) -> Iterator[_Server]:
    """A started server on ``host`` (an ephemeral port unless ``port``); ``seen`` lists its
    requests."""
    server = _Server((host, port), _Handler)
    server.seen = []
    server.pages = {}
    server.encoded = {}
    server.unsized = set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(scaled(10))
