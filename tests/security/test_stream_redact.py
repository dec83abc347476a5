"""Streamed deltas are released only where no secret can be cut in two, then flushed."""

from __future__ import annotations

import pytest

from agentd.protocol.content import AssistantMessage, TextContent
from agentd.protocol.events import (
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TextDelta,
    ToolExecutionEnd,
    ToolExecutionUpdate,
)
from agentd.server.stream_redact import CONTEXT, StreamRedactor
from agentd.store.redact import Redactor

SECRETS = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAQ\n"
    "-----END OPENSSH PRIVATE KEY----- DB_PASSWORD=abcdef12 password: hunter22 "
    "postgres://u:pass1234@h/x "
    "sk-abcdefghijklmnopqrstuvwxyz0123 the known-value-123456 end"
)
FRAGMENTS = ("b3BlbnNzaC1rZXkt", "abcdef12", "hunter22", "pass1234", "sk-abcdefghij", "known-value")


def _published(redactor: StreamRedactor, events: list[Event]) -> list[Event]:
    return [out for event in events for out in redactor.events(event)]


@pytest.mark.parametrize("size", [1, 2, 5, 13, 64])
def test_assistant_text_in_any_chunking(size: int) -> None:
    redactor = StreamRedactor(Redactor({"known-value-123456"}).text)
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
    redactor = StreamRedactor(Redactor(()).text)
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
    redactor = StreamRedactor(Redactor(()).text)
    line = "lorem ipsum dolor sit amet 12345\n" * 128
    released = 0
    for _ in range(256):
        for event in redactor.events(ToolExecutionUpdate(tool_call_id="c", output=line)):
            assert isinstance(event, ToolExecutionUpdate)
            released += len(event.output)
        kept = redactor._streams[("t", "c")].text
        assert len(kept) <= CONTEXT + len(line)
    assert released == 256 * len(line)
