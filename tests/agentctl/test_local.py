"""The in-process hand-off of events: the bus's published objects, the streams that take them.

An in-process subscriber gets the object the session published when redaction changed nothing
in its frame (else None: the redacted frame is the truth), and agentctl's typed streams yield
that object as it is, decoding nothing; a stream of plain JSON values still gets the frame.
"""

from __future__ import annotations

import asyncio

from agentctl.events import EventStream, to_dict, to_event, to_frame
from agentd.api.subscriber import Delivery, QueueSubscriber
from agentd.protocol.events import MessageUpdate, TextDelta
from agentd.session.bus import EventBus


def _published(redact: object) -> Delivery:
    got: list[Delivery] = []
    watcher = QueueSubscriber()
    watcher.deliver = got.append  # type: ignore[method-assign]
    bus = EventBus("s1", redact=redact)  # type: ignore[arg-type]
    bus.subscribe(watcher)
    bus.publish(MessageUpdate(delta=TextDelta(text="token sk-" + "a" * 30)))
    (item,) = got
    return item


def test_an_unredacted_frame_comes_with_its_object() -> None:
    item = _published(lambda frame: frame)
    assert item.published is not None
    assert item.published.event == MessageUpdate(delta=TextDelta(text="token sk-" + "a" * 30))
    assert item.event() == item.published  # the decoded frame says the same


def test_a_redacted_frame_comes_without_the_object() -> None:
    item = _published(lambda frame: frame.replace(b"a" * 30, b"[REDACTED]"))
    assert item.published is None
    assert "[REDACTED]" in item.event().event.delta.text  # type: ignore[union-attr]


def test_typed_streams_yield_the_object_itself() -> None:
    item = _published(lambda frame: frame)
    assert item.published is not None

    async def take(convert: object) -> object:
        stream: EventStream[object] = EventStream("s1", convert)  # type: ignore[arg-type]
        stream.feed_object("s1", item.frame, item.published)  # type: ignore[arg-type]
        (value,) = stream.ready()
        return value

    assert asyncio.run(take(to_event)) is item.published
    data, event = asyncio.run(take(to_frame))  # type: ignore[misc]
    assert (data, event) == (item.frame, item.published)
    assert event is item.published
    assert asyncio.run(take(to_dict))["seq"] == 1  # type: ignore[index]
