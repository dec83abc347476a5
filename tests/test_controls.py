"""Control characters escaped in every string of a value (:func:`agentd.protocol.controls.scrub`),
also through its fast path: a value whose JSON shows none is returned as it is."""

from __future__ import annotations

import msgspec

from agentd.protocol.controls import _UNSAFE, scrub
from agentd.protocol.events import MessageUpdate, SessionEvent, TextDelta, ToolExecutionStart

UNSAFE = [chr(code) for code in range(0x3000) if _UNSAFE.match(chr(code))]


def test_every_unsafe_character_is_escaped_wherever_it_is() -> None:
    """In a Struct's string, a list item, a dict value and a dict key: each character the
    escaping knows is seen through the JSON pre-check, none slips past it."""
    assert len(UNSAFE) > 60  # the C0 and C1 controls, DEL, bidi marks, separators
    for char in UNSAFE:
        delta = MessageUpdate(delta=TextDelta(text=f"a{char}b"))
        event = SessionEvent(session_id="s", seq=1, event=delta)
        scrubbed = scrub(event)
        assert isinstance(scrubbed.event, MessageUpdate)
        assert isinstance(scrubbed.event.delta, TextDelta)
        assert char not in scrubbed.event.delta.text, hex(ord(char))
        assert char not in scrub([f"x{char}"])[0]
        assert char not in next(iter(scrub({f"k{char}": 1})))
        start = ToolExecutionStart(tool_call_id="c", name="bash", args={"command": f"ls{char}"})
        assert char not in str(scrub(start).args), hex(ord(char))


def test_a_value_without_controls_is_returned_itself() -> None:
    event = MessageUpdate(delta=TextDelta(text='line one\n\ttab "quoted" \\r'))
    assert scrub(event) is event
    mapping = {"path": "/tmp/é ü", "lines": ["a", "b\n"]}
    assert scrub(mapping) is mapping


def test_a_value_json_cannot_hold_is_walked() -> None:
    class Opaque:
        pass

    thing = Opaque()
    value = {"text": "a\x1bb", "object": thing}
    scrubbed = scrub(value)
    assert scrubbed["text"] == "a\\x1bb"
    assert scrubbed["object"] is thing
    assert msgspec.json.encode(scrub(["\r\n"])) == b'["\\n"]'  # a CRLF line end is a newline
