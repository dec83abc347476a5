"""A real ``agentd serve --socket --http`` per test, and browsers for the page tests."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import Home, scaled, start_daemon, stop

MOCK_CONFIG = 'provider = "mock"\nmodel = "mock-model"\n'
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


class WebDaemon:
    """One daemon serving a Unix socket and the web chat on a free port of ``http`` (loopback
    unless told otherwise)."""

    def __init__(
        self, home: Home, *extra: str, http: str = "127.0.0.1:0", config: str = MOCK_CONFIG
    ) -> None:
        self.home = home
        if config:
            home.project_config(top=config)  # top-level keys before any table
        self.log_path = home.stderr
        self._log_from = home.stderr.stat().st_size if home.stderr.exists() else 0
        argv = home.agentd("serve", "--socket", str(home.socket), "--http", http, *extra)
        self.process = start_daemon(argv, home.env, home.stderr, self._link, cwd=home.project)
        self.link = str(self._link())
        self.base = self.link.split("/?", 1)[0]
        self.port = int(self.base.rsplit(":", 1)[1])

    def _link(self) -> str | None:
        """The link this daemon logged ("web chat at …"), once it has (the log may hold an
        earlier daemon's of the same home before it)."""
        with self.log_path.open("rb") as log:
            log.seek(self._log_from)
            found = re.search(rb"web chat at (\S+)", log.read())
        return found.group(1).decode() if found else None

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """One JSON-RPC call over the daemon's socket (after initialize)."""
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(self.home.socket))
            call = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params or {}}
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
            conn.sendall(f"{json.dumps(init)}\n{json.dumps(call)}\n".encode())
            reader = conn.makefile("rb")
            reader.readline()
            answer = json.loads(reader.readline())
            while answer.get("id") != 2:  # notifications (a prompt's events) come first
                answer = json.loads(reader.readline())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]

    def new_link(self, cwd: str | None = None) -> str:
        """A fresh one-time link from ``daemon/web``."""
        return str(self.rpc("daemon/web", {"cwd": cwd} if cwd else {})["url"])

    @contextmanager
    def signed_in(self) -> Iterator[httpx.Client]:
        """An HTTP client signed in as a page is: holding the cookie, sending the page key and
        the page's Origin."""
        with httpx.Client(
            base_url=self.base, headers={"Origin": self.base}, timeout=scaled(30)
        ) as client:
            client.headers["X-Agentd-Key"] = sign_in(client, self.new_link())
            yield client

    def ticket(self, client: httpx.Client) -> str:
        """A one-time event-stream ticket for a signed-in ``client``."""
        answer = client.post("/api/ticket", json={})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["ticket"])

    def new_session(self, **params: Any) -> str:
        info = self.rpc("session/new", {"cwd": str(self.home.project), **params})
        return str(info["sessionId"])

    def close(self) -> None:
        stop(self.process)


def sign_in(client: httpx.Client, link: str) -> str:
    """Exchange ``link`` as a browser does (the answer sets the cookie and sends the page on to
    ``/#key=K``); the page key."""
    answer = client.get(link)
    assert answer.status_code == 200, answer.text
    found = re.search(r'url=/[^"#]*#key=([A-Za-z0-9_-]+)"', answer.text)
    assert found, answer.text
    return found.group(1)


def sign_in_browser(context: Any, web: WebDaemon) -> None:
    """Sign a Playwright browser context in to ``web``: the link exchanged for the cookie, and
    the page key put in every tab's sessionStorage (as the sign-in page's ``#key=`` does for
    its own tab; ``test_auth.py`` follows that path itself)."""
    answer = context.request.get(web.new_link(cwd=str(web.home.project)), max_redirects=0)
    assert answer.status == 200
    found = re.search(r"#key=([A-Za-z0-9_-]+)", answer.text())
    assert found
    context.add_init_script(f"sessionStorage.setItem('agentd-key', '{found.group(1)}')")


@contextmanager
def web_daemon(
    scenarios: Sequence[dict[str, Any]] = (), user_config: str | None = None
) -> Iterator[WebDaemon]:
    """A web daemon in a fresh home, its mock LLM also playing ``scenarios`` and the user's
    config.toml holding ``user_config`` (with the tests' run mode); closed and cleaned up
    after."""
    home = Home()
    if scenarios:
        home.use_scenarios(scenarios)
    if user_config is not None:
        home.user_config(user_config)
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon() as daemon:
        yield daemon


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots are kept (gitignored; CI may upload it)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
