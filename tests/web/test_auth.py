"""The cookie is not enough: another local server receives it and gets nothing with it.

Browsers send a host's cookies to every port of it, so a second HTTP server on 127.0.0.1 (any
local dev server the user visits) receives ``agentd_<port>``. These tests run that attack
against a real daemon: with a real Chromium (the page signs in through its link and still works
end to end, then visits the other server) and with raw HTTP.
"""

from __future__ import annotations

import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.harness import scaled
from tests.web.conftest import WebDaemon
from tests.web.test_http import sse_events

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
READY = "() => document.documentElement.dataset.ready === 'true'"


class CookieCatcher:
    """A second local HTTP server on another port that keeps the Cookie headers it receives."""

    def __init__(self) -> None:
        self.cookies: list[str] = []
        catcher = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                catcher.cookies.append(self.headers.get("Cookie") or "")
                body = b"<!doctype html><title>some dev server</title><p>hello"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stolen(self, port: int) -> str:
        """The agentd cookie value this server received."""
        for header in self.cookies:
            found = re.search(rf"agentd_{port}=([^;\s]+)", header)
            if found:
                return found.group(1)
        raise AssertionError(f"no agentd cookie reached the other server: {self.cookies}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def catcher() -> Iterator[CookieCatcher]:
    server = CookieCatcher()
    yield server
    server.close()


def attack(web: WebDaemon, cookie: str, session_id: str) -> dict[str, int]:
    """What the other server can do with the cookie (forging Host and Origin as it likes):
    ``{request: status}``."""
    headers = {"Cookie": f"agentd_{web.port}={cookie}", "Origin": web.base}
    new = {"cwd": str(web.home.project), "permissionMode": "auto"}
    with httpx.Client(base_url=web.base, headers=headers, timeout=scaled(30)) as client:
        return {
            "new session": client.post("/api/session/new", json=new).status_code,
            "prompt": client.post(
                "/api/session/prompt", json={"sessionId": session_id, "text": "hello world"}
            ).status_code,
            "ticket": client.post("/api/ticket", json={}).status_code,
            "events": client.get(f"/api/events?sessionId={session_id}").status_code,
            "hello": client.get("/api/hello").status_code,
            "seed chat": client.post("/chat", json={"message": "hello world"}).status_code,
            "guessed key": client.post(
                "/api/session/list", json={}, headers={"X-Agentd-Key": cookie}
            ).status_code,
        }


REFUSED = {
    "new session": 401,
    "prompt": 401,
    "ticket": 401,
    "events": 401,
    "hello": 401,
    "seed chat": 401,
    "guessed key": 401,
}


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_signed_in_browser_leaks_its_cookie_to_another_port_and_the_cookie_opens_nothing(
    web: WebDaemon, catcher: CookieCatcher, artifacts: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    session_id = web.new_session()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 700})
            context.set_default_timeout(scaled(20) * 1000)
            page = context.new_page()
            page.goto(web.new_link(cwd=str(web.home.project)))  # the real sign-in path
            page.wait_for_function(READY)
            assert "#key=" not in page.url
            page.get_by_role("textbox", name="Message").fill("hello world")
            page.get_by_role("textbox", name="Message").press("Enter")
            expect(page.locator(".item--tool")).to_have_count(2)
            expect(page.locator(".item--assistant").last).to_contain_text("Done!")
            key = page.evaluate("() => sessionStorage.getItem('agentd-key')")

            other = context.new_page()
            other.goto(catcher.url)  # a local dev server the user opens
            cookie = catcher.stolen(web.port)
            sessions_before = len(web.rpc("session/list")["sessions"])
            assert attack(web, cookie, session_id) == REFUSED
            assert len(web.rpc("session/list")["sessions"]) == sessions_before
            with web.signed_in():  # a legitimate page still works beside the attack
                pass
            fresh_tab = context.new_page()  # the cookie, but not this tab's key: no access
            fresh_tab.goto(f"{web.base}/")
            fresh_tab.wait_for_function("() => document.documentElement.dataset.ready")
            assert fresh_tab.evaluate("() => document.documentElement.dataset.ready") == (
                "signed-out"
            )
            expect(fresh_tab.locator("#app")).to_contain_text("not signed in")

            page.get_by_role("button", name="Sign out").click()
            expect(page.locator(".banner")).to_contain_text("Signed out")
            expect(page.locator(".chat-status")).to_have_text("Signed out")
            page.screenshot(path=str(artifacts / "signed-out.png"))
            headers = {"Cookie": f"agentd_{web.port}={cookie}", "X-Agentd-Key": key}
            after = httpx.post(f"{web.base}/api/hello", headers=headers)
            assert after.status_code == 401
            page.reload()  # the cookie is gone too: the daemon says how to sign in
            expect(page.locator("body")).to_contain_text("not signed in")
        finally:
            browser.close()


def test_the_cookie_alone_keys_tickets_and_sign_out_over_http(web: WebDaemon) -> None:
    session_id = web.new_session()
    with web.signed_in() as client:
        cookie = client.cookies[f"agentd_{web.port}"]
        assert attack(web, cookie, session_id) == REFUSED
        # the page and its files need only the cookie (they hold no secret)
        plain = httpx.get(f"{web.base}/", headers={"Cookie": f"agentd_{web.port}={cookie}"})
        assert plain.status_code == 200
        assert "X-Agentd-Key" not in plain.text
        # the key is taken from the header only, and needs a cookie beside it
        key = client.headers["X-Agentd-Key"]
        no_cookie = httpx.get(f"{web.base}/api/hello", headers={"X-Agentd-Key": key})
        assert no_cookie.status_code == 401
        assert client.get(f"/api/hello?key={key}", headers={"X-Agentd-Key": ""}).status_code == 401
        # a ticket opens one stream once
        ticket = web.ticket(client)
        url = f"/api/events?sessionId={session_id}&ticket={ticket}"
        with client.stream("GET", url) as stream:
            assert stream.status_code == 200
        assert client.get(url).status_code == 401
        assert client.get(f"/api/events?sessionId={session_id}").status_code == 401


def test_sign_out_ends_every_sign_in_and_closes_their_streams(web: WebDaemon) -> None:
    session_id = web.new_session()
    with web.signed_in() as first, web.signed_in() as second, ThreadPoolExecutor(1) as pool:
        spare = web.ticket(second)
        url = f"/api/events?sessionId={session_id}&ticket={web.ticket(first)}"
        with first.stream("GET", url) as stream:
            lines = stream.iter_lines()
            sse_events(lines, until="subscribed")
            drained = pool.submit(lambda: list(lines))
            answer = second.post("/api/signout", json={})
            assert answer.json() == {"ok": True}
            assert "Max-Age=0" in answer.headers["set-cookie"]
            drained.result(timeout=scaled(30))  # the stream ended
        for client in (first, second):
            assert client.post("/api/session/list", json={}).status_code == 401
        assert second.get(f"/api/events?sessionId={session_id}&ticket={spare}").status_code == 401
    with web.signed_in() as again:  # a new link signs in again
        assert again.post("/api/session/list", json={}).status_code == 200
