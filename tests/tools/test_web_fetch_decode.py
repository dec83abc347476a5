"""The body decoder of web_fetch on its own, and the fetch's cap on the body as sent:
codings undone within the budget, the ways a server legitimately encodes (several gzip
members, padding, raw deflate, data split anywhere) and the refusals (past the budget, three
codings, an unknown coding, a corrupt stream)."""

from __future__ import annotations

import gzip
import os
import zlib

import pytest

from agentd.tools.base import ToolError
from agentd.tools.net.decode import BodyDecoder
from agentd.tools.net.fetch import fetch
from tests.tools.webserver import web_server

TEXT = b"".join(b"line %d of the page\n" % n for n in range(5000))


def decoded(coding: str, body: bytes, max_bytes: int = 1 << 20, step: int = 7) -> bytes:
    """``body`` fed in ``step``-byte pieces (split across every boundary)."""
    decoder = BodyDecoder(coding, max_bytes)
    return b"".join(decoder.feed(body[i : i + step]) for i in range(0, len(body), step))


def test_the_codings_servers_send_are_undone_whatever_the_chunking() -> None:
    assert decoded("gzip", gzip.compress(TEXT)) == TEXT
    assert decoded("x-gzip", gzip.compress(TEXT), step=1) == TEXT
    assert decoded("gzip, gzip", gzip.compress(gzip.compress(TEXT))) == TEXT
    assert decoded("deflate", zlib.compress(TEXT)) == TEXT
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    assert decoded("deflate", raw.compress(TEXT) + raw.flush(), step=1) == TEXT
    assert decoded("identity", TEXT) == TEXT
    assert decoded("", TEXT) == TEXT


def test_gzip_members_are_joined_and_padding_after_them_ignored() -> None:
    body = gzip.compress(TEXT[:100]) + gzip.compress(TEXT[100:]) + b"\0" * 16
    assert decoded("gzip", body, step=3) == TEXT


def test_a_body_past_the_budget_stops_at_the_budget() -> None:
    bomb = gzip.compress(bytes(64 << 20))  # 64 MiB of zeros, about 64 KiB sent
    decoder = BodyDecoder("gzip", 1 << 20)
    with pytest.raises(ToolError, match="larger than 1 MB once decoded"):
        decoder.feed(bomb)
    assert decoded("gzip", gzip.compress(bytes(1 << 20)), max_bytes=1 << 20) == bytes(1 << 20)


@pytest.mark.parametrize(
    ("coding", "message"),
    [
        ("gzip, gzip, gzip", "3 content codings"),
        ("br", "'br' is not supported"),
        ("gzip, zstd", "'zstd' is not supported"),
    ],
)
def test_codings_it_does_not_undo_are_refused(coding: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        BodyDecoder(coding, 1 << 20)


def test_a_corrupt_stream_is_a_clear_error() -> None:
    with pytest.raises(ToolError, match="content coding is corrupt"):
        decoded("gzip", b"\x1f\x8bnot really gzip at all")


async def test_the_body_as_sent_is_capped_too_without_a_length() -> None:
    """6 MB of incompressible gzip with no ``Content-Length``, through the real fetch from a
    loopback server: refused at 5 MB as sent, before any decoding could count it."""
    with web_server() as server:
        server.encoded["/noise"] = ("gzip", gzip.compress(os.urandom(6 << 20), 1))
        server.unsized.add("/noise")
        url = f"http://127.0.0.1:{server.server_address[1]}/noise"
        with pytest.raises(ToolError, match=r"larger than 5 MB; it was not read"):
            await fetch(url, allow_hosts=["127.0.0.1"])
