"""Fake SearXNG, Brave and Tavily servers on 127.0.0.1 (their documented JSON shapes), in a
thread, recording every request (path, headers, body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

KEY = "sk-search-0123456789abcdef"
HITS = [
    ("Python docs", "https://docs.python.org/3/library/json.html", "The <b>json</b> module."),
    ("Blog post", "https://blog.example.com/json", "Parsing JSON quickly."),
    ("Tracker", "https://ads.tracker.net/x", "Buy now."),
    ("Sub docs", "https://dev.docs.python.org/x", "More docs."),
]


class _Server(ThreadingHTTPServer):
    seen: list[dict[str, Any]]
    status: int
    hits: list[tuple[str, str, str]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _record(self, body: bytes) -> dict[str, Any]:
        parts = urlsplit(self.path)
        entry = {"path": parts.path, "query": parse_qs(parts.query), "headers": dict(self.headers)}
        entry["body"] = json.loads(body) if body else None
        self.server.seen.append(entry)
        return entry

    def _send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _failure(self) -> bool:
        if self.server.status == 429:
            self._send(429, {"error": "slow down"}, {"Retry-After": "30"})
            return True
        if self.server.status != 200:
            self._send(self.server.status, {"error": "no"})
            return True
        return False

    def do_GET(self) -> None:
        entry = self._record(b"")
        if self._failure():
            return
        hits = self.server.hits
        if entry["path"] == "/search":  # SearXNG
            results = [{"title": t, "url": u, "content": c, "engine": "x"} for t, u, c in hits]
            self._send(200, {"query": entry["query"]["q"][0], "results": results})
        elif entry["path"] == "/res/v1/web/search":  # Brave
            if entry["headers"].get("X-Subscription-Token") != KEY:
                self._send(401, {"error": "bad token"})
                return
            results = [{"title": t, "url": u, "description": c} for t, u, c in hits]
            self._send(200, {"type": "search", "web": {"type": "search", "results": results}})
        else:
            self._send(404, {"error": "no route"})

    def do_POST(self) -> None:  # Tavily
        length = int(self.headers.get("Content-Length") or 0)
        entry = self._record(self.rfile.read(length))
        if self._failure():
            return
        if entry["path"] != "/search" or (entry["body"] or {}).get("api_key") != KEY:
            self._send(401, {"error": "bad key"})
            return
        results = [
            {"title": t, "url": u, "content": c, "score": 0.5} for t, u, c in self.server.hits
        ]
        self._send(200, {"query": entry["body"]["query"], "results": results})


@contextmanager
def search_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.seen, server.status, server.hits = [], 200, list(HITS)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def url_of(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"
