"""The bundled webview (editors/vscode/dist/webview.js) in Chromium, outside VS Code.

`serve_harness()` serves ``harness.html`` (a stand-in for the extension side of the webview's
postMessage protocol) and ``editors/vscode/dist/`` over loopback HTTP; `record()` records the
events of one run on the real daemon with ``editors/vscode/test/record.mjs``.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.harness import scaled
from tests.vscode.codeserver import EXTENSION

HERE = Path(__file__).parent


HARNESS_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "script-src 'self' 'unsafe-inline' 'unsafe-eval'"
)
"""The extension's webview policy for styles, images and fonts (src/chatView.ts); scripts
also inline, for the harness's own stand-in code, and evaluated, for Playwright's
``wait_for_function`` (a string predicate not true at once is polled through ``eval`` in the
page: refused, the wait fails on a slow machine)."""


class _Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", HARNESS_CSP)
        super().end_headers()

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0]
        if clean.startswith("/dist/"):
            return str(EXTENSION / clean.lstrip("/"))
        return str(HERE / "harness.html")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@contextmanager
def serve_harness() -> Iterator[str]:
    """The harness page's URL while a loopback server serves it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/harness.html"
    finally:
        server.shutdown()
        server.server_close()


def record(
    prompt: str, out: Path, mode: str = "auto", scenarios: Path | None = None
) -> list[dict[str, Any]]:
    """The session/event params of one run of ``prompt`` on the real daemon (mock LLM; its
    built-in scenarios, or the ``scenarios`` file instead)."""
    node = shutil.which("node") or "node"
    env = dict(os.environ)
    if scenarios is not None:
        env["AGENTD_MOCK_SCENARIOS"] = str(scenarios)
    subprocess.run(
        [node, "test/record.mjs", prompt, str(out), mode],
        cwd=EXTENSION,
        check=True,
        capture_output=True,
        timeout=scaled(60),
        env=env,
    )
    return [json.loads(line) for line in out.read_text().splitlines() if line]


def as_session(events: list[dict[str, Any]], session_id: str = "S") -> list[dict[str, Any]]:
    """The events re-addressed to the harness's session."""
    return [{**event, "sessionId": session_id} for event in events]
