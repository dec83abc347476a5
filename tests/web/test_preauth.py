"""What a connection without a sign-in can cost the daemon, over real sockets: its head is
checked before its body is read, its body is capped, idle ones are dropped for newcomers (never
locking a signed-in user out), a slow head is cut off, and odd digits get a clean 400."""

from __future__ import annotations

import socket
import time

from agentd.web.conns import HEAD_TIMEOUT, MAX_PREAUTH
from tests.harness import scaled
from tests.web.conftest import WebDaemon


def connect(web: WebDaemon) -> socket.socket:
    return socket.create_connection(("127.0.0.1", web.port), timeout=scaled(30))


def answer_head(conn: socket.socket) -> bytes:
    """The response's status line and headers (read until the blank line)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def closed_by_peer(conn: socket.socket, timeout: float) -> bool:
    """True when the daemon closes ``conn`` within ``timeout`` seconds (its answer, if any,
    is read and dropped)."""
    conn.settimeout(timeout)
    try:
        while conn.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def head(web: WebDaemon, first_line: str, *headers: str) -> bytes:
    lines = [first_line, f"Host: 127.0.0.1:{web.port}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_huge_body_without_a_sign_in_is_refused_before_it_is_read(web: WebDaemon) -> None:
    """The head announces 32 MiB and no body follows: the answer comes at once (the daemon
    did not wait for the body), and the connection is closed."""
    with web.signed_in() as client:
        cookie = f"Cookie: agentd_{web.port}={client.cookies[f'agentd_{web.port}']}"
    for extra in ((), (cookie,)):  # no cookie; the cookie without the page key
        with connect(web) as conn:
            conn.sendall(
                head(
                    web,
                    "POST /api/session/new HTTP/1.1",
                    f"Origin: {web.base}",
                    "Content-Type: application/json",
                    f"Content-Length: {32 * 1024 * 1024}",
                    *extra,
                )
            )
            assert answer_head(conn).startswith(b"HTTP/1.1 401 ")
            assert closed_by_peer(conn, 30)


def test_a_body_on_the_sign_in_request_is_capped_at_a_few_kib(web: WebDaemon) -> None:
    link = web.new_link().removeprefix(web.base)
    with connect(web) as conn:
        conn.sendall(head(web, f"GET {link} HTTP/1.1", "Content-Length: 100000"))
        assert answer_head(conn).startswith(b"HTTP/1.1 413 ")
    with connect(web) as conn:  # the refused request did not use the link up
        conn.sendall(head(web, f"GET {link} HTTP/1.1", "Connection: close"))
        assert answer_head(conn).startswith(b"HTTP/1.1 200 ")


def test_idle_connections_cannot_lock_a_signed_in_user_out(web: WebDaemon) -> None:
    """300 idle unauthenticated connections (more than every cap the daemon has): the oldest
    pre-auth ones are dropped for each newcomer, and a signed-in browser's new connections are
    served while the newest idle ones still wait (no head timeout had to free a place)."""
    with web.signed_in() as client:
        idle = [connect(web) for _ in range(300)]
        try:
            for conn in idle[:10]:
                conn.sendall(b"GET / HTTP/1.1\r\n")  # a partial head: still waiting
            for _ in range(5):
                fresh = client.post("/api/session/list", json={}, headers={"Connection": "close"})
                assert fresh.status_code == 200
            kept = [conn for conn in idle[-MAX_PREAUTH + 10 :] if not closed_by_peer(conn, 0.2)]
            assert kept  # the newest were kept (until their head times out)
            dropped = [conn for conn in idle[:-MAX_PREAUTH] if closed_by_peer(conn, 10)]
            assert len(dropped) == len(idle) - MAX_PREAUTH  # the oldest went first
        finally:
            for conn in idle:
                conn.close()


def test_a_head_that_never_ends_is_cut_off(web: WebDaemon) -> None:
    with connect(web) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        while time.monotonic() - started < HEAD_TIMEOUT / 2:
            conn.sendall(b"X-Slow: 1\r\n")  # trickling header lines does not extend the time
            time.sleep(0.5)
        assert closed_by_peer(conn, HEAD_TIMEOUT + 20)
        assert time.monotonic() - started < HEAD_TIMEOUT + 20


def test_unicode_digits_get_a_clean_400_and_no_traceback(web: WebDaemon) -> None:
    with web.signed_in() as client:
        key = client.headers["X-Agentd-Key"]
        cookie = f"Cookie: agentd_{web.port}={client.cookies[f'agentd_{web.port}']}"
        session_id = web.new_session()
        ticket = web.ticket(client)
    with connect(web) as conn:
        conn.sendall(
            head(web, "POST /api/session/list HTTP/1.1", "Content-Length: \u00b2").replace(
                "\u00b2".encode(), "\u00b2".encode("latin-1")
            )
        )
        assert answer_head(conn).startswith(b"HTTP/1.1 400 ")
    with connect(web) as conn:
        request = head(
            web,
            f"GET /api/events?sessionId={session_id}&ticket={ticket} HTTP/1.1",
            cookie,
            f"X-Agentd-Key: {key}",
            "Last-Event-ID: \u00b2",
        )
        conn.sendall(request.replace("\u00b2".encode(), "\u00b2".encode("latin-1")))
        assert answer_head(conn).startswith(b"HTTP/1.1 400 ")
    with web.signed_in() as client:
        url = f"/api/events?sessionId={session_id}&sinceSeq=\u00b2&ticket={web.ticket(client)}"
        assert client.get(url).status_code == 400
        assert client.get("/api/hello").status_code == 200
    log = web.log_path.read_text() + web.home.log.read_text()
    assert "Traceback" not in log
    assert "http request failed" not in log


def read_response(conn: socket.socket) -> bytes:
    """One whole response (head and its Content-Length body); the connection stays open."""
    data = answer_head(conn)
    top, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in top.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return top


def test_the_cookie_alone_cannot_fill_the_signed_in_places(web: WebDaemon) -> None:
    """Every server on 127.0.0.1 receives the cookie: 300 keep-alive ``GET /`` with it (more
    than the signed-in cap) are answered but stay in the pre-auth pool, so the page key's
    requests still find a place."""
    with web.signed_in() as client:
        cookie = f"Cookie: agentd_{web.port}={client.cookies[f'agentd_{web.port}']}"
        held: list[socket.socket] = []
        try:
            for _ in range(300):
                conn = connect(web)
                held.append(conn)
                conn.sendall(head(web, "GET / HTTP/1.1", cookie))
                status = read_response(conn).split(b"\r\n", 1)[0]
                assert status.startswith(b"HTTP/1.1 200 ") or not status  # dropped: pushed out
            for _ in range(5):
                fresh = client.post("/api/session/list", json={}, headers={"Connection": "close"})
                assert fresh.status_code == 200
            pushed_out = [conn for conn in held[:-MAX_PREAUTH] if closed_by_peer(conn, 10)]
            assert len(pushed_out) == len(held) - MAX_PREAUTH
        finally:
            for conn in held:
                conn.close()
