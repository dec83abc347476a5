"""The HTTP front-end over real sockets: security checks, the JSON API, SSE, the seed's /chat."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.harness import Home, scaled, wait_until
from tests.web.conftest import WebDaemon


def sse_events(lines: Any, until: str) -> list[tuple[str, dict[str, Any]]]:
    """``(event name, data)`` pairs of an SSE body (a data array: one pair per element), up to
    the first data whose type (or event name) is ``until``."""
    events: list[tuple[str, dict[str, Any]]] = []
    name = "message"
    for line in lines:
        if line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            data = json.loads(line[len("data: ") :])
            for item in data if isinstance(data, list) else [data]:  # a step's events together
                events.append((name, item))
                kind = item.get("event", {}).get("type") if name == "message" else name
                if kind == until:
                    return events
            name = "message"
    raise AssertionError(f"stream ended before {until}: {events}")


# --- security --------------------------------------------------------------------------------


def test_no_cookie_is_401_everywhere(web: WebDaemon) -> None:
    with httpx.Client(base_url=web.base) as client:
        for path in ("/", "/ui/chat.js", "/api/hello", "/api/events?sessionId=x"):
            assert client.get(path).status_code == 401, path
        answer = client.post("/api/session/list", json={}, headers={"Origin": web.base})
        assert answer.status_code == 401
        assert "agentctl web" in answer.json()["error"]["message"]


def test_the_link_is_exchanged_once_for_an_httponly_strict_cookie(web: WebDaemon) -> None:
    with httpx.Client(base_url=web.base) as client:
        answer = client.get(web.link.removeprefix(web.base))
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "no-store"
        assert re.search(r'content="0;url=/#key=[A-Za-z0-9_-]{40,}"', answer.text)
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith(f"agentd_{web.port}=")
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert "Secure" not in cookie  # plain HTTP on loopback
        page = client.get("/")
        assert page.status_code == 200
        assert "default-src 'none'" in page.headers["content-security-policy"]
    with httpx.Client(base_url=web.base) as stranger:
        reused = stranger.get(web.link.removeprefix(web.base))
        assert reused.status_code == 401
        assert "set-cookie" not in reused.headers


def test_a_link_keeps_its_cwd_for_the_page(web: WebDaemon) -> None:
    link = web.new_link(cwd="/some/dir")
    with httpx.Client(base_url=web.base) as client:
        answer = client.get(link.removeprefix(web.base))
        assert "url=/?cwd=%2Fsome%2Fdir#key=" in answer.text


def test_wrong_host_is_403(web: WebDaemon) -> None:
    with web.signed_in() as client:
        assert client.get("/api/hello").status_code == 200
        for host in ("evil.example", f"evil.example:{web.port}", "127.0.0.1:1"):
            assert client.get("/api/hello", headers={"Host": host}).status_code == 403, host
        assert client.get("/api/hello", headers={"Host": f"localhost:{web.port}"}).is_success


def test_cross_origin_posts_are_403(web: WebDaemon) -> None:
    with web.signed_in() as client:
        assert client.post("/api/session/list", json={}).status_code == 200
        evil = client.post("/api/session/list", json={}, headers={"Origin": "http://evil.example"})
        assert evil.status_code == 403
        del client.headers["Origin"]
        assert client.post("/api/session/list", json={}).status_code == 403
        site = {"Origin": web.base, "Sec-Fetch-Site": "cross-site"}
        assert client.post("/api/session/list", json={}, headers=site).status_code == 403


def test_no_cors_headers_and_no_preflight(web: WebDaemon) -> None:
    with web.signed_in() as client:
        headers = {"Access-Control-Request-Method": "POST", "Origin": "http://evil.example"}
        preflight = client.options("/api/session/list", headers=headers)
        assert preflight.status_code in (403, 405)
        answer = client.post("/api/session/list", json={})
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")]


def test_a_remote_bind_is_refused_without_allow_remote() -> None:
    home = Home()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "agentd", "serve", "--http", "0.0.0.0:0"],
            env=home.env,
            capture_output=True,
            text=True,
            timeout=scaled(30),
            check=False,
        )
        assert done.returncode == 1
        assert "not a loopback address" in done.stderr
        assert "--allow-remote" in done.stderr
    finally:
        home.cleanup()


def test_a_remote_bind_with_allow_remote_and_insecure_http_serves() -> None:
    home = Home()
    daemon = WebDaemon.__new__(WebDaemon)
    try:
        WebDaemon.__init__(daemon, home, "--allow-remote", "--insecure-http")
    except RuntimeError:
        pytest.fail("the daemon did not start")
    try:
        with daemon.signed_in() as client:
            assert client.get("/api/hello").status_code == 200
    finally:
        daemon.close()
        home.cleanup()


# --- robustness ------------------------------------------------------------------------------


def raw(web: WebDaemon, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", web.port), timeout=scaled(10)) as conn:
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_malformed_requests_get_4xx_and_the_daemon_stays_up(web: WebDaemon) -> None:
    assert raw(web, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    big = b"GET / HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n"
    assert raw(web, big).startswith(b"HTTP/1.1 431 ")
    chunked = f"POST /api/x HTTP/1.1\r\nHost: 127.0.0.1:{web.port}\r\n"
    chunked += "Transfer-Encoding: chunked\r\n\r\n"
    assert raw(web, chunked.encode()).startswith(b"HTTP/1.1 411 ")
    twice = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{web.port}\r\nHost: evil\r\n\r\n"
    assert raw(web, twice.encode()).startswith(b"HTTP/1.1 400 ")
    with web.signed_in() as client:
        assert client.get("/api/hello").status_code == 200


def test_api_errors_are_json_rpc_errors_with_fitting_statuses(web: WebDaemon) -> None:
    with web.signed_in() as client:
        unknown = client.post("/api/no/such", json={})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == -32601
        bad = client.post("/api/session/new", json={"cwd": 5})
        assert bad.status_code == 400
        assert "cwd" in bad.json()["error"]["message"]
        missing = client.post("/api/session/state", json={"sessionId": "nope"})
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == -32003
        assert client.get("/api/session/list").status_code == 405
        text = client.post("/api/session/list", content=b"{}")
        assert text.status_code == 415
        assert client.get("/ui/../../etc/passwd").status_code == 404


def test_local_only_fields_are_refused_like_over_tcp(web: WebDaemon) -> None:
    """``providerEnv`` (API keys) is refused by every API method that takes it, with the error
    JSON-RPC gives over TCP (400, -32602), before anything happens: no session is created."""
    from agentd.protocol.table import METHODS

    calls = {
        "session/new": {"cwd": str(web.home.project)},
        "session/load": {"sessionId": "nope"},
        "session/setModel": {"sessionId": "nope", "model": "m"},
        "models/list": {},
    }
    assert {m for m, s in METHODS.items() if s.local_only and s.http} == set(calls)
    env = {"OPENAI_API_KEY": "sk-must-not-travel-1234"}
    with web.signed_in() as client:
        for method, params in calls.items():
            answer = client.post(f"/api/{method}", json=params | {"providerEnv": env})
            assert answer.status_code == 400, method
            assert answer.json()["error"] == {
                "code": -32602,
                "message": "`providerEnv` is accepted over the Unix socket or stdio only",
            }
        listed = client.post("/api/session/list", json={}).json()
        assert listed["sessions"] == []


# --- the API and events ----------------------------------------------------------------------


def test_prompt_over_the_api_streams_events_with_seq_ids(web: WebDaemon) -> None:
    session_id = web.new_session()
    with web.signed_in() as client:
        url = f"/api/events?sessionId={session_id}&ticket={web.ticket(client)}"
        with client.stream("GET", url) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            first = sse_events(lines, until="subscribed")
            assert first[0][0] == "subscribed"
            result = client.post(
                "/api/session/prompt", json={"sessionId": session_id, "text": "hello world"}
            )
            assert result.json()["stopReason"] == "end_turn"
            events = sse_events(lines, until="agent_end")
        kinds = [data["event"]["type"] for _, data in events]
        assert "tool_execution_start" in kinds
        seqs = [data["seq"] for _, data in events]
        assert seqs == sorted(seqs)
        assert len(set(seqs)) == len(seqs)
        messages = client.post("/api/session/messages", json={"sessionId": session_id}).json()
        assert len(messages["messages"]) >= 4
        assert (messages["start"], messages["total"]) == (0, len(messages["messages"]))
        page = {"sessionId": session_id, "limit": 2, "before": 3}
        older = client.post("/api/session/messages", json=page).json()
        assert older["start"] == 1
        assert older["messages"] == messages["messages"][1:3]


def test_last_event_id_resumes_after_a_reconnect(web: WebDaemon) -> None:
    session_id = web.new_session()
    with web.signed_in() as client:
        client.post("/api/session/prompt", json={"sessionId": session_id, "text": "how are you"})
        url = f"/api/events?sessionId={session_id}&sinceSeq=0"
        with client.stream("GET", f"{url}&ticket={web.ticket(client)}") as stream:
            everything = sse_events(stream.iter_lines(), until="agent_end")
        seqs = [data["seq"] for name, data in everything if name == "message"]
        middle = seqs[len(seqs) // 2]
        headers = {"Last-Event-ID": str(middle)}
        with client.stream("GET", f"{url}&ticket={web.ticket(client)}", headers=headers) as stream:
            resumed = sse_events(stream.iter_lines(), until="agent_end")
        assert [data["seq"] for name, data in resumed if name == "message"] == [
            s for s in seqs if s > middle
        ]


def test_permission_answers_through_the_api(web: WebDaemon) -> None:
    session_id = web.new_session(permissionMode="ask")
    with web.signed_in() as client, ThreadPoolExecutor(1) as pool:
        url = f"/api/events?sessionId={session_id}&ticket={web.ticket(client)}"
        with client.stream("GET", url) as stream:
            lines = stream.iter_lines()
            sse_events(lines, until="subscribed")
            body = {"sessionId": session_id, "text": "write a note"}
            prompt = pool.submit(client.post, "/api/session/prompt", json=body)
            asked = sse_events(lines, until="permission_request")[-1][1]["event"]
            answer = {
                "sessionId": session_id,
                "toolCallId": asked["toolCallId"],
                "outcome": "allow_once",
            }
            assert client.post("/api/permission/answer", json=answer).json() == {"ok": True}
            resolved = sse_events(lines, until="permission_resolved")[-1][1]["event"]
            assert resolved["outcome"] == "allow_once"
            assert prompt.result(timeout=scaled(30)).json()["stopReason"] == "end_turn"
            again = client.post("/api/permission/answer", json=answer).json()
            assert again == {"ok": False}
        assert (web.home.project / "note.txt").read_text() == "noted\n"
        # once the server has seen the stream end, the page no longer watches the session
        closed = wait_until(
            lambda: (
                (r := client.post("/api/permission/answer", json=answer)).status_code == 400 and r
            ),
            what="the answer of a page without the session's stream is refused",
        )
        assert "has not opened session" in closed.json()["error"]["message"]


def test_seed_chat_and_clear(web: WebDaemon) -> None:
    with web.signed_in() as client:
        with client.stream("POST", "/chat", json={"message": "hello world"}) as stream:
            events = sse_events(stream.iter_lines(), until="done")
        names = [name for name, _ in events]
        assert names[-1] == "done"
        text = "".join(data["content"] for name, data in events if name == "text")
        assert "Hello, World!" in text
        tools = [data for name, data in events if name == "tool"]
        assert [t["name"] for t in tools] == ["write", "bash"]
        assert tools[0]["input"]["path"] == "hello.py"
        sessions = client.post("/api/session/list", json={}).json()["sessions"]
        assert len(sessions) == 1
        assert client.post("/clear").json() == {"status": "ok"}
        with client.stream("POST", "/chat", json={"message": "how are you"}) as stream:
            sse_events(stream.iter_lines(), until="done")
        assert len(client.post("/api/session/list", json={}).json()["sessions"]) == 2
        assert client.post("/chat", json={"text": "wrong field"}).status_code == 400
