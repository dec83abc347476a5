"""FrameDecoder: both framings, detection, limits and resynchronisation."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agentd.rpc.framing import (
    CONTENT_LENGTH,
    NDJSON,
    FrameDecoder,
    FrameError,
    detect,
    encode_frame,
)


def feed_all(decoder: FrameDecoder, *chunks: bytes) -> list[bytes | FrameError]:
    out: list[bytes | FrameError] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


def test_detects_ndjson_from_a_brace_and_content_length_from_a_header() -> None:
    """The first non-blank byte decides; a header line means Content-Length."""
    assert detect(b'\r\n  {"a":1}') == NDJSON
    assert detect(b"[1]\n") == NDJSON
    assert detect(b"content-length: 3\r\n") == CONTENT_LENGTH
    assert detect(b"Content-Length") is None
    assert detect(b"   ") is None
    assert detect(b"garbage line\n") == NDJSON


def test_ndjson_splits_on_lf_only_and_keeps_unicode_separators() -> None:
    """U+2028/U+2029 inside a line never split it; CR before LF is dropped; blanks skipped."""
    line = json.dumps({"t": "a\u2028b\u2029c\x85d"}, ensure_ascii=False).encode()
    frames = FrameDecoder(NDJSON).feed(line + b"\r\n\n   \n" + b"[2]\n")
    assert frames == [line, b"[2]"]


def test_content_length_headers_are_case_insensitive_and_other_headers_ignored() -> None:
    """Header names in any case, optional spaces, a Content-Type, LF-only line ends."""
    body = b'{"x":"\xc3\xa9"}'
    wire = (
        b"content-type: application/json\r\nCONTENT-LENGTH:%d\r\n\r\n%b"
        b"Content-Length:   %d  \n\n%b" % (len(body), body, len(body), body)
    )
    assert FrameDecoder().feed(wire) == [body, body]


@given(
    bodies=st.lists(
        st.binary(min_size=1, max_size=50).map(lambda b: b.replace(b"\n", b"x")), max_size=8
    ),
    framing=st.sampled_from([NDJSON, CONTENT_LENGTH]),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=10),
)
@settings(max_examples=100, deadline=None)
def test_any_chunking_yields_the_same_frames(
    bodies: list[bytes], framing: str, cuts: list[int]
) -> None:
    """However the stream is cut into reads, the same frames come out."""
    bodies = [b"{" + body for body in bodies if body.strip(b" \t\r")]
    if framing == NDJSON:
        bodies = [body.rstrip(b"\r") for body in bodies]
    wire = b"".join(encode_frame(body, framing) for body in bodies)  # type: ignore[arg-type]
    points = sorted({min(cut, len(wire)) for cut in cuts})
    chunks = [wire[a:b] for a, b in zip([0, *points], [*points, len(wire)], strict=True)]
    assert feed_all(FrameDecoder(framing), *chunks) == bodies  # type: ignore[arg-type]


def test_oversized_ndjson_line_is_reported_once_and_skipped() -> None:
    """A line over the limit gives one error; the next line is read normally."""
    decoder = FrameDecoder(NDJSON, max_frame=10)
    out = feed_all(decoder, b"x" * 8, b"y" * 8, b"z" * 8, b"tail\n{}\n")
    assert len(out) == 2
    assert isinstance(out[0], FrameError)
    assert out[0].too_large
    assert not out[0].fatal
    assert out[1] == b"{}"


def test_oversized_content_length_body_is_skipped_without_buffering() -> None:
    """The announced body is discarded as it streams in; the following frame is read."""
    decoder = FrameDecoder(CONTENT_LENGTH, max_frame=10)
    out = decoder.feed(b"Content-Length: 30\r\n\r\n")
    assert len(out) == 1
    assert isinstance(out[0], FrameError)
    assert out[0].too_large
    assert decoder.feed(b"a" * 20) == []
    assert decoder.feed(b"b" * 10 + encode_frame(b"{}", CONTENT_LENGTH)) == [b"{}"]


def test_bad_header_blocks_are_errors_and_reading_goes_on() -> None:
    """Missing or invalid Content-Length: one error per header block, then the next frame."""
    decoder = FrameDecoder(CONTENT_LENGTH)
    out = decoder.feed(b"Content-Length: abc\r\n\r\nX-Other: 1\r\n\r\nno colon\r\n\r\n")
    assert [type(item) for item in out] == [FrameError, FrameError, FrameError]
    assert decoder.feed(encode_frame(b"[]", CONTENT_LENGTH)) == [b"[]"]


def test_endless_header_section_is_fatal() -> None:
    """More than 64 KiB without the blank line cannot be resynchronised."""
    decoder = FrameDecoder(CONTENT_LENGTH)
    out = decoder.feed(b"Content-Length: 5\r\n" + b"X-Pad: " + b"p" * 70_000)
    assert len(out) == 1
    assert isinstance(out[0], FrameError)
    assert out[0].fatal
    assert decoder.dead
    assert decoder.feed(b"\r\n\r\n{}") == []


def test_encode_frame_counts_bytes_not_characters() -> None:
    """Content-Length is the UTF-8 byte length."""
    body = "é".encode()
    assert encode_frame(body, CONTENT_LENGTH) == b"Content-Length: 2\r\n\r\n\xc3\xa9"
    assert encode_frame(b"{}", NDJSON) == b"{}\n"
