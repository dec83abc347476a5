"""Streamed deltas are released only where no secret can be cut in two, then flushed."""

from __future__ import annotations

import random

import pytest

from agentd.protocol.content import AssistantMessage, TextContent
from agentd.protocol.events import (
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionUpdate,
)
from agentd.redact import Redactor
from agentd.session.stream_redact import CONTEXT, StreamRedactor

SECRETS = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAQ\n"
    "-----END OPENSSH PRIVATE KEY----- DB_PASSWORD=abcdef12 password: hunter22 "
    "postgres://u:pass1234@h/x "
    "sk-abcdefghijklmnopqrstuvwxyz0123 the known-value-123456 end"
)
FRAGMENTS = ("b3BlbnNzaC1rZXkt", "abcdef12", "hunter22", "pass1234", "sk-abcdefghij", "known-value")


def _stream_redactor(redactor: Redactor) -> StreamRedactor:
    return StreamRedactor(redactor.text, redactor.held_from)


def _published(redactor: StreamRedactor, events: list[Event]) -> list[Event]:
    return [out for event in events for out in redactor.events(event)]


@pytest.mark.parametrize("size", [1, 2, 5, 13, 64])
def test_assistant_text_in_any_chunking(size: int) -> None:
    redactor = _stream_redactor(Redactor({"known-value-123456"}))
    chunks = [SECRETS[i : i + size] for i in range(0, len(SECRETS), size)]
    content = [TextContent(text=SECRETS)]
    message = AssistantMessage(id="m", content=content, provider="mock", model="mock")
    stream = [MessageStart(message_id="m", role="assistant")]
    stream += [MessageUpdate(delta=TextDelta(text=chunk)) for chunk in chunks]
    published = _published(redactor, [*stream, MessageEnd(message=message)])
    joined = "".join(e.delta.text for e in published if isinstance(e, MessageUpdate))
    assert not [fragment for fragment in FRAGMENTS if fragment in joined]
    assert joined.endswith(" end")  # flushed before message_end
    assert isinstance(published[-1], MessageEnd)


def test_tool_output_is_flushed_before_the_end() -> None:
    redactor = _stream_redactor(Redactor(()))
    updates = [
        ToolExecutionUpdate(tool_call_id="c", output=SECRETS[i : i + 7])
        for i in range(0, len(SECRETS), 7)
    ]
    end = ToolExecutionEnd(tool_call_id="c", name="bash", result=[])
    published = _published(redactor, [*updates, end])
    joined = "".join(e.output for e in published if isinstance(e, ToolExecutionUpdate))
    assert not [fragment for fragment in FRAGMENTS[:5] if fragment in joined]
    assert joined.endswith("end")


def test_a_long_stream_keeps_only_a_bounded_context() -> None:
    """1 MB of output in 4 KB deltas: what is kept back never grows with the stream."""
    redactor = _stream_redactor(Redactor(()))
    line = "lorem ipsum dolor sit amet 12345\n" * 128
    released = 0
    for _ in range(256):
        for event in redactor.events(ToolExecutionUpdate(tool_call_id="c", output=line)):
            assert isinstance(event, ToolExecutionUpdate)
            released += len(event.output)
        kept = redactor._streams[("t", "c")].text
        assert len(kept) <= CONTEXT + len(line)
    assert released == 256 * len(line)


PLANTS = {
    "api key": "key sk-ant-abcdefghijklmnopqrstuvwxyz012345 here",
    "github token": "tok ghp_abcdefghijklmnopqrstuvwxyz0123456789 x",
    "aws key id": "id AKIAABCDEFGHIJKLMNOP y",
    "jwt": "jwt eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl z",
    "private key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nqwertyuiop\n"
        "-----END RSA PRIVATE KEY-----\nafter"
    ),
    "bearer": "Authorization: Bearer abcdefgh12345678 done",
    "url password": "db postgres://user:s3cretpass@db.example/x ok",
    "dsn": "dsn https://0123456789abcdef0123456789abcdef@sentry.example/1 ok",
    "password assignment": 'DB_PASSWORD="hunter2hunter2" and',
    "credentials": "AWS_CREDS=abcd1234efgh more",
    "known value": "the daemon-known-secret-42 value",
    "known value with blanks": "say two word secret now",
}
LEAKS = {
    "api key": "abcdefghijklmnop",
    "github token": "abcdefghijklmnop",
    "aws key id": "ABCDEFGHIJKLMNOP",
    "jwt": "c2lnbmF0dXJl",
    "private key": "MIIEowIBAAKCAQEA",
    "bearer": "abcdefgh12345678",
    "url password": "s3cretpass",
    "dsn": "0123456789abcdef0123456789abcdef",
    "password assignment": "hunter2hunter2",
    "credentials": "abcd1234efgh",
    "known value": "daemon-known-secret",
    "known value with blanks": "two word",
}


def _random_chunks(text: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 12))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_joined_deltas_are_the_redacted_text_in_every_split(kind: str) -> None:
    """For each detector, in 300 random splits and in one-character deltas, the deltas a
    client joins are exactly the redaction of the whole text and never show the secret."""
    redactor = Redactor({"daemon-known-secret-42", "two word secret"})
    redact = redactor.text
    text = f"Here it is: {PLANTS[kind]} and the end."
    expected = redact(text)
    assert LEAKS[kind] not in expected
    rng = random.Random(kind)
    splits = [list(text), *(_random_chunks(text, rng) for _ in range(300))]
    for chunks in splits:
        message = AssistantMessage(
            id="m", content=[TextContent(text=text)], provider="mock", model="mock"
        )
        stream: list[Event] = [MessageStart(message_id="m", role="assistant")]
        stream += [MessageUpdate(delta=TextDelta(text=chunk)) for chunk in chunks]
        published = _published(_stream_redactor(redactor), [*stream, MessageEnd(message=message)])
        joined = "".join(e.delta.text for e in published if isinstance(e, MessageUpdate))
        assert joined == expected, chunks
        outputs = [ToolExecutionUpdate(tool_call_id="c", output=chunk) for chunk in chunks]
        end = ToolExecutionEnd(tool_call_id="c", name="bash", result=[])
        published = _published(_stream_redactor(redactor), [*outputs, end])
        joined = "".join(e.output for e in published if isinstance(e, ToolExecutionUpdate))
        assert joined == expected, chunks


def test_prose_streams_word_by_word() -> None:
    """Text without secrets is held back only to the end of the word being written."""
    redactor = _stream_redactor(Redactor(()))
    released = ""
    for word in ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]:
        for event in redactor.events(MessageUpdate(delta=TextDelta(text=word + " "))):
            assert isinstance(event, MessageUpdate)
            released += event.delta.text  # type: ignore[union-attr]
        assert released.endswith(word + " ")


def test_a_new_block_releases_the_previous_blocks_tail_first() -> None:
    """Reasoning, then text: the reasoning's held tail goes out before the text starts."""
    redactor = _stream_redactor(Redactor(()))
    events: list[Event] = [
        MessageStart(message_id="m", role="assistant"),
        MessageUpdate(delta=ThinkingDelta(text="I think ")),
        MessageUpdate(delta=ThinkingDelta(text="carefully.")),
        MessageUpdate(delta=TextDelta(text="The answer ")),
        MessageUpdate(delta=TextDelta(text="is 42.")),
    ]
    published = _published(redactor, events)
    kinds = [
        (type(e.delta).__name__, e.delta.text)  # type: ignore[union-attr]
        for e in published
        if isinstance(e, MessageUpdate) and e.delta.text  # type: ignore[union-attr]
    ]
    assert kinds == [
        ("ThinkingDelta", "I think "),
        ("ThinkingDelta", "carefully."),
        ("TextDelta", "The answer "),
        ("TextDelta", "is "),
    ]
