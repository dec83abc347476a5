"""A decompression bomb served on loopback to web_fetch through the real daemon: a 2 KiB
``Content-Encoding: gzip, gzip`` body that is 1 GiB once decoded. The daemon refuses it with a
clear error as soon as it passes the 5 MB budget, its peak memory stays far below the bomb, and
another client is served while (and after) it fetches. Plus the codings it refuses outright and
the ordinary encoded pages it still reads."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, new_session, run, scaled, socket_client
from tests.scenarios import tool_call
from tests.tools.webserver import _Server, web_server

pytestmark = pytest.mark.e2e

BOMB_SIZE = 1 << 30


@cache
def bomb() -> bytes:
    """1 GiB of zeros, gzipped twice (about 2 KiB)."""
    inner = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(1 << 20)
    parts = [inner.compress(zeros) for _ in range(BOMB_SIZE >> 20)]
    return gzip.compress(b"".join(parts) + inner.flush(), 9)


@pytest.fixture
def server() -> Iterator[_Server]:
    with web_server() as started:
        started.encoded["/bomb"] = ("gzip, gzip", bomb())
        started.encoded["/triple"] = (
            "gzip, gzip, gzip",
            gzip.compress(gzip.compress(gzip.compress(b"x"))),
        )
        started.encoded["/brotli"] = ("br", b"\x0b\x00\x80hello\x03")
        text = "".join(f"line {i}: gzip twice is fine\n" for i in range(200)).encode()
        started.encoded["/twice"] = ("gzip, gzip", gzip.compress(gzip.compress(text)))
        started.encoded["/deflate"] = ("deflate", zlib.compress(b"deflated text"))
        raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        started.encoded["/raw-deflate"] = ("deflate", raw.compress(b"raw deflate") + raw.flush())
        yield started


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident memory so far (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def fetches(home: Home, base: str, *paths: str) -> None:
    steps: list[dict[str, Any]] = [
        {"response": {"tool_calls": [tool_call("web_fetch", {"url": base + path})]}}
        for path in paths
    ]
    home.use_scenarios(
        [
            {
                "name": "fetch",
                "trigger": "fetch them",
                "steps": [*steps, {"response": {"content": "Done."}}],
            }
        ]
    )
    home.user_config('[tools.web_fetch]\nallow_hosts = ["127.0.0.1"]\n')


def results(events: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    return [(bool(end.get("isError")), end["result"][0]["text"]) for end in ends]


async def test_a_gzip_bomb_is_cut_off_within_the_budget(home: Home, server: _Server) -> None:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    fetches(home, base, "/bomb", "/bomb")
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client, socket_client(home) as other:
            sid = await new_session(client, home)
            before = peak_rss_mib(daemon.pid)
            _, events = await run(client, sid, "fetch them", timeout=120)
            assert await other.call("session/list", {}) is not None  # the other client
            after = peak_rss_mib(daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait(scaled(60))
    assert [error for error, _ in results(events)] == [True, True]
    text = results(events)[0][1]
    assert "larger than 5 MB once decoded" in text
    assert after - before < 100, f"peak memory grew {after - before:.0f} MiB on a 1 GiB bomb"
    assert [path for path, _ in server.seen] == ["/bomb", "/bomb"]


async def test_codings_past_two_or_unknown_are_refused_and_common_ones_read(
    home: Home, server: _Server
) -> None:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    fetches(home, base, "/triple", "/brotli", "/twice", "/deflate", "/raw-deflate")
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _, events = await run(client, sid, "fetch them", timeout=60)
    finally:
        daemon.terminate()
        daemon.wait(scaled(60))
    triple, brotli, twice, deflate, raw = results(events)
    assert triple[0]
    assert "3 content codings (gzip, gzip, gzip); at most 2" in triple[1]
    assert brotli[0]
    assert "content coding 'br' is not supported" in brotli[1]
    assert not twice[0]
    assert "line 199: gzip twice is fine" in twice[1]
    assert not deflate[0]
    assert "deflated text" in deflate[1]
    assert not raw[0]
    assert "raw deflate" in raw[1]
    headers = next(seen for path, seen in server.seen if path == "/twice")
    assert headers["Accept-Encoding"] == "gzip, deflate"
