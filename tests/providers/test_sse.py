"""The SSE decoder against the WHATWG event-stream rules, and chunking invariance."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentd.providers.sse import ServerSentEvent, SSEDecoder


def decode(*chunks: bytes) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    decoder.close()
    return events


def test_data_lines_are_joined_with_newlines() -> None:
    """Several data lines form one event; the final newline is not part of the data."""
    assert decode(b"data: a\ndata: b\n\n") == [ServerSentEvent("a\nb")]


def test_event_type_id_and_retry() -> None:
    """``event`` sets the type (reset per event); ``id`` persists; ``retry`` is parsed."""
    stream = b"event: add\nid: 7\nretry: 1500\ndata: x\n\ndata: y\n\n"
    decoder = SSEDecoder()
    assert decoder.feed(stream) == [
        ServerSentEvent("x", "add", "7", 1500),
        ServerSentEvent("y", "message", "7", None),
    ]
    assert decoder.reconnection_ms == 1500


def test_line_endings_cr_lf_crlf() -> None:
    """Lines may end in CR, LF or CRLF, mixed in one stream."""
    assert decode(b"data: a\r\rdata: b\r\n\r\ndata: c\n\n") == [
        ServerSentEvent("a"),
        ServerSentEvent("b"),
        ServerSentEvent("c"),
    ]


def test_crlf_split_between_chunks() -> None:
    """A CR at the end of a chunk and the LF starting the next are one line end."""
    assert decode(b"data: a\r", b"\n\r", b"\ndata: b\n\n") == [
        ServerSentEvent("a"),
        ServerSentEvent("b"),
    ]


def test_only_one_leading_space_is_stripped() -> None:
    """``data:  x`` keeps one space; ``data:x`` needs none."""
    assert decode(b"data:  x\n\ndata:y\n\n") == [ServerSentEvent(" x"), ServerSentEvent("y")]


def test_field_without_colon_has_empty_value() -> None:
    """A bare ``data`` line adds an empty line to the data."""
    assert decode(b"data\ndata\n\n") == [ServerSentEvent("\n")]
    assert decode(b"data\n\n") == [ServerSentEvent("")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    """Lines starting with a colon and unknown fields change nothing."""
    assert decode(b": keep-alive\nfoo: bar\ndata: z\n\n") == [ServerSentEvent("z")]


def test_no_data_no_event() -> None:
    """A block without data lines is not dispatched, and its event type does not leak."""
    assert decode(b"event: ping\n\ndata: z\n\n") == [ServerSentEvent("z")]


def test_id_with_nul_is_ignored_and_bad_retry_too() -> None:
    """An id containing NUL keeps the previous id; a non-digit retry is ignored."""
    events = decode(b"id: 1\ndata: a\n\nid: 2\x003\nretry: 1x\ndata: b\n\n")
    assert [(e.id, e.retry) for e in events] == [("1", None), ("1", None)]


def test_retry_needs_ascii_digits() -> None:
    """Unicode digits are not a valid retry value."""
    assert decode("retry: ²\ndata: a\n\n".encode())[0].retry is None


def test_bom_is_dropped_once() -> None:
    """A leading byte-order mark is removed; a later one is data."""
    events = decode(b"\xef\xbb", b"\xbfdata: \xef\xbb\xbfa\n\n")
    assert events == [ServerSentEvent("\ufeffa")]


def test_unfinished_event_is_discarded_at_close() -> None:
    """At end of stream, an event without its blank line is dropped and reported."""
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == [ServerSentEvent("a")]
    assert decoder.close() is True
    clean = SSEDecoder()
    clean.feed(b"data: a\n\n")
    assert clean.close() is False


def test_utf8_split_inside_a_character() -> None:
    """Multi-byte characters cut between chunks are decoded whole."""
    data = "data: héllo ✓\n\n".encode()
    assert decode(*[data[i : i + 1] for i in range(len(data))]) == [ServerSentEvent("héllo ✓")]


def test_a_large_event_fed_in_small_chunks() -> None:
    """A 1 MB single event arrives intact through 1 KB chunks."""
    payload = "x" * (1 << 20)
    data = f"data: {payload}\n\n".encode()
    chunks = [data[i : i + 1024] for i in range(0, len(data), 1024)]
    events = decode(*chunks)
    assert len(events) == 1
    assert events[0].data == payload


_values = st.text(
    alphabet=st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)), max_size=20
)
_fields = st.sampled_from(["data", "event", "id", "retry", "other", ""])
_line = st.one_of(
    st.tuples(_fields, st.sampled_from([":", ": ", ""]), _values).map("".join),
    st.just(""),
)
_ending = st.sampled_from(["\n", "\r", "\r\n"])
_stream = st.lists(st.tuples(_line, _ending).map("".join), max_size=30).map("".join)


@settings(deadline=None)
@given(_stream, st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_events(text: str, cuts: list[int]) -> None:
    """Splitting the byte stream anywhere (even inside CRLF or a character) changes nothing."""
    data = text.encode()
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    whole = SSEDecoder()
    expected = whole.feed(data)
    split = SSEDecoder()
    got = [event for chunk in chunks for event in split.feed(chunk)]
    assert got == expected
    assert split.close() == whole.close()


_event = st.builds(
    ServerSentEvent,
    data=st.lists(_values, min_size=1, max_size=3).map("\n".join),
    event=st.sampled_from(["message", "delta", "ping"]),
)


@settings(deadline=None)
@given(st.lists(_event, max_size=10), _ending)
def test_encoded_events_decode_back(events: list[ServerSentEvent], ending: str) -> None:
    """Events written as ``event:``/``data:`` lines come back unchanged."""
    text = ""
    for event in events:
        text += f"event: {event.event}{ending}"
        text += "".join(f"data: {line}{ending}" for line in event.data.split("\n"))
        text += ending
    assert decode(text.encode()) == events
